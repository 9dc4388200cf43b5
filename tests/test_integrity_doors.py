"""The gate cannot be gamed through its doors.

Each test plays an agent's cheap way past the gate on a real project (a git repository in
tmp_path, real pytest and agentgate processes), shows that it does not get past any more, and
checks that honest use still works:

1. the re-entrancy guard (``AGENTGATE_RUNNING``) cannot be forged from a shell or a conftest.py;
2. the options that weaken the gate cannot come from the project's own configuration (addopts);
3. a ``*.dist-info`` folder in the project cannot register a plugin that rewrites the verdict;
4. attempts survive deleting ``.agentgate/``, and ``agentgate reset`` is never silent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import PY, REWRITER, CliRun, egg_info

from pytest_agentgate.pytest_plugin import entry, session
from pytest_agentgate.pytest_plugin.session import (
    HELPER_CODE,
    agentgate_ancestor,
    is_agentgate_command,
)

pytest_plugins = ["pytester"]

Agentgate = Callable[..., CliRun]
GIT = shutil.which("git")
SCRIPT = Path(sys.executable).with_name("agentgate")
MODULE = [sys.executable, "-m", "pytest_agentgate"]
# RUFF_NO_CACHE: agentgate sets it for the commands it runs, this suite's own included; the
# agent's shell, which these tests play, has ruff's cache on.
NOT_INHERITED = (
    "AGENTGATE_RUNNING",
    "PYTEST_ADDOPTS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "RUFF_NO_CACHE",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # This suite may itself run under agentgate, whose guard would be honoured here.
    for name in NOT_INHERITED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def shell(command: str) -> str:
    """A YAML string: ``command`` run with this interpreter (``{py}``)."""
    return json.dumps(command.replace("{py}", PY))


def repository(root: Path, config: str, **files: str) -> Path:
    """A real git repository at ``root`` with ``agentgate.yml`` and ``files``."""
    root.mkdir(parents=True)
    if GIT:
        subprocess.run([GIT, "init", "-q", str(root)], check=True)
    else:  # pragma: no cover - git is on every machine the suite runs on
        (root / ".git").mkdir()
    (root / "agentgate.yml").write_text(config, encoding="utf-8")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run(
    root: Path, *command: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    full_env.update(env or {})
    return subprocess.run(
        list(command), cwd=root, env=full_env, capture_output=True, text=True, timeout=120
    )


def pytest_in(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run(root, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, env=env)


def verdict_in(root: Path, name: str = "v.json") -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((root / name).read_text(encoding="utf-8"))
    return doc


# The tests pass, a custom gate fails: only a run that is not gated (or runs no command) passes.
EXIT_1 = shell("{py} -c 'raise SystemExit(1)'")
FAILING_GATE = f"""\
gates:
  test: {{command: pytest}}
  custom:
    - {{name: must-fail, command: {EXIT_1}}}
"""
PASSING_TEST = "def test_ok():\n    pass\n"


# -- 1. the re-entrancy guard -----------------------------------------------------------------

# A value of the guard's shape naming a real ancestor of the pytest run (the process that starts
# it) which is not agentgate: only its command line tells it apart.
ANCESTOR_NOT_AGENTGATE = f"{os.getpid()}:{'0' * 16}"


@pytest.mark.parametrize("value", ["1", ANCESTOR_NOT_AGENTGATE], ids=["one", "an-ancestor"])
def test_a_guard_set_in_the_shell_does_not_disarm_the_gate(tmp_path: Path, value: str) -> None:
    # The trick: `AGENTGATE_RUNNING=1 pytest --agentgate=strict` made the plugin believe an
    # outer agentgate judged the run, so nothing did, and pytest exited 0.
    root = repository(tmp_path / "proj", FAILING_GATE, **{"test_a.py": PASSING_TEST})
    proc = pytest_in(
        root, "--agentgate=strict", "--agentgate-json=v.json", env={"AGENTGATE_RUNNING": value}
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert verdict_in(root)["status"] == "fail"
    assert entry.FORGED_GUARD_NOTICE in proc.stdout
    assert "not gating this run" not in proc.stdout


FORGING_CONFTEST = """\
import os

os.environ["AGENTGATE_RUNNING"] = "1"
"""


def test_a_guard_set_by_a_conftest_does_not_disarm_the_gate(tmp_path: Path) -> None:
    # The trick: a conftest.py sets the variable at import time, before the plugin looks. (The
    # value pytest started with is the one read; any value would also have to name an ancestor.)
    root = repository(
        tmp_path / "proj",
        FAILING_GATE,
        **{"test_a.py": PASSING_TEST, "conftest.py": FORGING_CONFTEST},
    )
    proc = pytest_in(root, "--agentgate=strict", "--agentgate-json=v.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # Caught twice over: the integrity gate rejects the conftest that sets the variable before
    # it is even imported; were it allowed, the forged value would still disarm nothing.
    assert "guard-forged" in proc.stdout and "conftest.py:" in proc.stdout
    allowed = FAILING_GATE + (
        "integrity:\n  allow:\n    - {rule: guard-forged, path: conftest.py, reason: test}\n"
    )
    root = repository(tmp_path / "allowed", allowed, **{"test_a.py": PASSING_TEST})
    git = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([GIT or "git", "add", "-A"], cwd=root, check=True)
    subprocess.run([GIT or "git", *git, "commit", "-qm", "base"], cwd=root, check=True)
    (root / "conftest.py").write_text(FORGING_CONFTEST)  # the change, approved by the base
    proc = pytest_in(root, "--agentgate=strict", "--agentgate-json=v.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert verdict_in(root)["status"] == "fail"
    assert entry.FORGED_GUARD_NOTICE in proc.stdout


@pytest.mark.parametrize(
    "command",
    [
        pytest.param([str(SCRIPT)], id="console-script"),
        pytest.param(MODULE, id="python-m"),
    ],
)
def test_agentgate_running_a_gated_pytest_does_not_gate_it_twice(
    tmp_path: Path, command: list[str]
) -> None:
    # Honest nesting: the project's addopts gate every pytest run, and agentgate's own test
    # command is such a run (under a shell that stays, so the guard's process is a grandparent).
    if command[0] == str(SCRIPT) and not SCRIPT.exists():  # pragma: no cover
        pytest.skip("no agentgate console script next to this interpreter")
    root = repository(
        tmp_path / "proj",
        f"gates:\n  test: {{command: {shell('cd . && {py} -m pytest -p no:cacheprovider')}}}\n",
        **{
            "test_a.py": PASSING_TEST,
            "pytest.ini": "[pytest]\naddopts = --agentgate=strict --agentgate-json=nested.json\n",
        },
    )
    proc = run(root, *command, "verify", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["status"] == "pass"
    assert not (root / "nested.json").exists()  # the inner pytest made no verdict of its own


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="walks /proc")
def test_the_guard_names_a_running_agentgate_ancestor() -> None:
    def named(pid: int) -> str | None:
        return f"{pid}:{'0' * 16}"

    assert agentgate_ancestor(None) is None
    assert agentgate_ancestor("1") is None
    assert agentgate_ancestor(f"{os.getppid()}:short") is None
    assert agentgate_ancestor(named(os.getpid())) is None  # this process: not its own ancestor
    assert agentgate_ancestor(named(os.getppid())) is None  # an ancestor, not agentgate
    grandparent = session._linux_parent(os.getppid())
    assert grandparent is not None and agentgate_ancestor(named(grandparent)) is None
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as child:
        try:  # a running process that is no ancestor: the walk ends at the top
            assert agentgate_ancestor(named(child.pid)) is None
        finally:
            child.kill()
    gone = child.pid  # reaped: nothing to read
    assert session._linux_parent(gone) is None and not session.runs_agentgate(gone)
    assert not session.runs_agentgate(os.getpid())  # pytest


def test_what_counts_as_an_agentgate_command_line(tmp_path: Path) -> None:
    here = tmp_path
    assert is_agentgate_command([sys.executable, "-m", "pytest_agentgate", "verify"], here)
    assert is_agentgate_command(["python3", "-I", "-X", "dev", "-m", "pytest_agentgate"], here)
    assert is_agentgate_command(["python3.12", "-Bmpytest_agentgate"], here)
    assert is_agentgate_command(["python", "-c", HELPER_CODE, "/site"], here)  # the gate process
    # Not agentgate: the module named after a program's own arguments, other code, other
    # programs, a script named agentgate that is not agentgate's.
    assert not is_agentgate_command(["python", "-c", "print(1)", "-m", "pytest_agentgate"], here)
    assert not is_agentgate_command(["python", "-m", "pytest", "-m", "pytest_agentgate"], here)
    assert not is_agentgate_command(["bash", "-c", "agentgate verify"], here)
    assert not is_agentgate_command(["/bin/sh", "./agentgate"], here)
    assert not is_agentgate_command([], here)
    (here / "agentgate").write_text("import os\nos.system('pytest')\n")
    assert not is_agentgate_command(["python3", "./agentgate", "verify"], here)
    (here / "agentgate").write_text(
        "import sys\nfrom pytest_agentgate.cli.main import main\nsys.exit(main())\n"
    )
    assert is_agentgate_command(["/venv/bin/python", str(here / "agentgate"), "verify"], here)


def test_the_plugin_and_the_process_runner_name_the_same_variable() -> None:
    from pytest_agentgate.process import RUNNING_ENV

    assert entry.RUNNING_ENV == RUNNING_ENV


# -- 2. the gate's options are the caller's ---------------------------------------------------


def gated_run(
    pytester: pytest.Pytester, *args: str, config: str = FAILING_GATE
) -> tuple[pytest.RunResult, dict[str, Any] | None]:
    """pytest in-process in a real project; the result and the verdict, if one was written."""
    (pytester.path / "agentgate.yml").write_text(config, encoding="utf-8")
    pytester.makepyfile(test_a=PASSING_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--agentgate-json=v.json", *args)
    written = pytester.path / "v.json"
    return result, json.loads(written.read_text()) if written.exists() else None


NO_RUN_IN = {
    "pytest.ini": "[pytest]\naddopts = --agentgate-no-run\n",
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-q --agentgate-no-run"\n',
    "setup.cfg": "[tool:pytest]\naddopts = --agentgate-no-run\n",
    "tox.ini": "[pytest]\naddopts =\n    -ra\n    --agentgate-no-run\n",
}


@pytest.mark.parametrize("where", [*NO_RUN_IN, "PYTEST_ADDOPTS"])
def test_no_run_from_the_projects_configuration_is_refused(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    # The trick: `addopts = --agentgate-no-run` skips every build, lint and custom command of
    # the caller's `pytest --agentgate=strict`: those gates are skipped and the verdict passes.
    if where == "PYTEST_ADDOPTS":
        monkeypatch.setenv("PYTEST_ADDOPTS", "--agentgate-no-run")
    else:
        (pytester.path / where).write_text(NO_RUN_IN[where], encoding="utf-8")
    result, verdict = gated_run(pytester, "--agentgate=strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and verdict is None
    source = where if where == "PYTEST_ADDOPTS" else f"addopts ({where})"
    result.stderr.fnmatch_lines(
        [f"ERROR: --agentgate-no-run in {source}: the gate's options are the caller's; remove it*"]
    )
    assert "Traceback" not in result.stderr.str()


def test_no_run_set_by_a_conftest_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("def pytest_configure(config):\n    config.option.agentgate_no_run = 1\n")
    result, verdict = gated_run(pytester, "--agentgate=strict")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and verdict is None
    result.stderr.fnmatch_lines(["ERROR: --agentgate-no-run in the project's own code*"])


def test_the_callers_no_run_still_works(pytester: pytest.Pytester) -> None:
    # Honest: the caller asks for it on the command line (the addopts may say it too).
    result, verdict = gated_run(pytester, "--agentgate=strict", "--agentgate-no-run")
    assert result.ret == 0 and verdict is not None and verdict["status"] == "pass"
    (pytester.path / "pytest.ini").write_text(NO_RUN_IN["pytest.ini"], encoding="utf-8")
    result, verdict = gated_run(pytester, "--agentgate=strict", "--agentgate-no-run")
    assert result.ret == 0 and verdict is not None and verdict["status"] == "pass"


def test_a_profile_from_addopts_may_only_be_strict(pytester: pytest.Pytester) -> None:
    # The trick: `addopts = --agentgate=relaxed` under a configuration whose profile is strict.
    tests_only = "gates:\n  test: {command: pytest}\n"
    config = "profile: strict\n" + tests_only
    (pytester.path / "pytest.ini").write_text("[pytest]\naddopts = --agentgate=relaxed\n")
    result, verdict = gated_run(pytester, config=config)
    assert verdict is not None and verdict["profile"] == "strict"
    result.stdout.fnmatch_lines(
        ["agentgate: --agentgate=relaxed in addopts (pytest.ini) ignored: the gate's options*"]
    )
    # The caller's command line chooses; strict from addopts is honoured (nothing is stricter).
    result, verdict = gated_run(pytester, "--agentgate=relaxed", config=config)
    assert verdict is not None and verdict["profile"] == "relaxed"
    assert "ignored" not in result.stdout.str()
    (pytester.path / "pytest.ini").write_text("[pytest]\naddopts = --agentgate=strict\n")
    result, verdict = gated_run(pytester, config="profile: relaxed\n" + tests_only)
    assert verdict is not None and verdict["profile"] == "strict"
    assert "ignored" not in result.stdout.str()


def test_a_conftest_cannot_switch_the_callers_gate_off(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("def pytest_configure(config):\n    config.option.agentgate = None\n")
    result, verdict = gated_run(pytester, "--agentgate=strict")
    assert result.ret == 1 and verdict is not None and verdict["status"] == "fail"


def test_reading_the_gates_options_from_arguments() -> None:
    read = entry.agentgate_options
    assert read(["--agentgate", "-q"]) == [("profile", "")]
    assert read(["--agentgate", "tests/"]) == [("profile", "tests/")]
    assert read(["--agentgate=strict", "--agentgate-no-run", "--agentgate-json", "v.json"]) == [
        ("profile", "strict"),
        ("no_run", ""),
    ]
    assert read(["--", "--agentgate-no-run"]) == []
    assert read(["--agentgate"]) == [("profile", "")]


# -- 3. plugins from the project's own folder -------------------------------------------------

# What an attacker's plugin would really do: its import-time code turns every gate into a pass
# (the registry refuses a second `test` kind or `ruff` format, so it patches the engine).
EVIL_PLUGIN = """\
from pathlib import Path

import pytest_agentgate.engine as engine

Path("evil-loaded").write_text("the project's plugin ran inside the gate")
_conclude = engine.conclude


def conclude(config, gates, **kwargs):
    for gate in gates:
        gate.status = "pass"
    return _conclude(config, gates, **kwargs)


engine.conclude = conclude
"""
FAILING_BUILD = f"gates:\n  build: {{command: {EXIT_1}}}\n"


def dist_info(folder: Path, name: str, module: str) -> Path:
    """A ``*.dist-info`` folder, as pip writes it, with one ``agentgate`` entry point."""
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[agentgate]\n{name} = {module}\n")
    (info / "RECORD").write_text("")
    return info


@pytest.mark.parametrize(
    ("command", "pythonpath"),
    [
        pytest.param([*MODULE, "verify"], None, id="python-m"),
        pytest.param([str(SCRIPT), "verify"], ".", id="console-script-PYTHONPATH=."),
        pytest.param([sys.executable, "-m", "pytest", "--agentgate"], ".", id="pytest-door"),
    ],
)
def test_a_dist_info_in_the_project_cannot_rewrite_the_verdict(
    tmp_path: Path, command: list[str], pythonpath: str | None
) -> None:
    # The trick: the current directory is on sys.path (`python -m`, PYTHONPATH=.), and
    # importlib.metadata reads the project's own `evil-1.0.dist-info` as an installed
    # distribution: its `agentgate` entry point imported the module that passes every gate.
    if command[0] == str(SCRIPT) and not SCRIPT.exists():  # pragma: no cover
        pytest.skip("no agentgate console script next to this interpreter")
    root = repository(
        tmp_path / "proj",
        FAILING_BUILD,
        **{"evil_plugin.py": EVIL_PLUGIN, "test_a.py": PASSING_TEST},
    )
    info = dist_info(root, "evil", "evil_plugin")
    env = {"PYTHONPATH": pythonpath} if pythonpath else {}
    if "pytest" in command:
        command = [*command, "-p", "no:cacheprovider", "--agentgate-json=v.json"]
    proc = run(root, *command, env=env)
    assert not (root / "evil-loaded").exists(), proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr
    if "pytest" in command:
        assert verdict_in(root)["status"] == "fail"
    else:
        assert "FAIL  build" in proc.stdout
    if command[0] == str(SCRIPT):  # the folder was on sys.path and is named
        assert f"ignored the agentgate plugin 'evil' of {info}" in proc.stderr
        assert "install it into the environment" in proc.stderr
    assert "Traceback" not in proc.stderr


MINE_PLUGIN = """\
from pytest_agentgate.plugin_api import LintFormat, LintReport, hookimpl


@hookimpl
def agentgate_lint_formats():
    return [LintFormat("mine", lambda text, source: LintReport("mine", source))]
"""


def test_the_registry_ignores_the_projects_dist_info_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pluggy

    from pytest_agentgate import plugin_api
    from pytest_agentgate.registry import load_entry_points

    root = repository(tmp_path / "proj", FAILING_BUILD)
    # Never imported: the module does not exist, so loading it would fail the test loudly.
    info = dist_info(root, "evil", "agentgate_no_such_module")
    dist_info(root, "pytest-agentgate", "agentgate_no_such_module")  # `pip install -e` leftovers
    site = tmp_path / "site"  # a PYTHONPATH folder outside the project: installed
    dist_info(site, "outside", "agentgate_outside_plugin")
    (site / "agentgate_outside_plugin.py").write_text("")
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "agentgate_outside_plugin", raising=False)
    pm = pluggy.PluginManager(plugin_api.PROJECT)
    pm.add_hookspecs(plugin_api)
    pm.set_blocked("builtin")
    assert load_entry_points(pm, plugin_api.PROJECT) == 1
    assert pm.has_plugin("outside") and not pm.has_plugin("evil")
    assert load_entry_points(pm, plugin_api.PROJECT) == 0  # one registration per name
    err = capsys.readouterr().err
    assert err.count("ignored the agentgate plugin") == 2  # once per call, for evil only
    assert f"ignored the agentgate plugin 'evil' of {info}: it is in the project's own" in err


def test_the_projects_own_plugin_installed_in_the_environment_still_loads(
    tmp_path: Path,
) -> None:
    # Honest: the project is an agentgate plugin itself, installed (pip install -e) into an
    # environment outside it: the metadata there, its module in the project.
    root = repository(
        tmp_path / "proj",
        "gates:\n  lint: {report: lint.txt, format: mine}\n",
        **{"mine_plugin.py": MINE_PLUGIN, "lint.txt": "nothing found\n"},
    )
    site = tmp_path / "site"
    dist_info(site, "mine", "mine_plugin")
    proc = run(root, *MODULE, "verify", env={"PYTHONPATH": os.pathsep.join([str(site), str(root)])})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS  lint" in proc.stdout and "warning" not in proc.stderr


# -- 4. attempts survive the agent ------------------------------------------------------------


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-state"
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(home))
    monkeypatch.delenv("AGENTGATE_ACTOR", raising=False)
    return home


@pytest.fixture
def failing_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_home: Path) -> Path:
    root = repository(tmp_path / "proj", FAILING_BUILD)
    monkeypatch.chdir(root)
    return root


def verify(agentgate: Agentgate, task: str = "T") -> dict[str, Any]:
    result = agentgate("verify", "--task", task, "--format", "json")
    verdict = result.verdict()
    assert result.code == {"fail": 1, "escalate": 3, "pass": 0}[verdict["status"]], result.err
    return verdict


def attempt(verdict: dict[str, Any]) -> tuple[int, int]:
    return verdict["attempt"]["number"], verdict["attempt"]["max"]


def copy_of(home: Path) -> Path:
    (path,) = home.glob("projects/*/state.json")
    return path


def test_deleting_the_state_folder_does_not_give_a_fresh_attempt(
    failing_repo: Path, state_home: Path, agentgate: Agentgate
) -> None:
    # The trick: two rejections, `rm -rf .agentgate`, and the next verdict was attempt 1 of 3.
    assert attempt(verify(agentgate)) == (1, 3)
    assert attempt(verify(agentgate)) == (2, 3)
    shutil.rmtree(failing_repo / ".agentgate")
    verdict = verify(agentgate)
    assert attempt(verdict) == (3, 3)
    assert (
        "the project's attempt state was missing; restored task T's 2 rejections from "
        f"{copy_of(state_home)}"
    ) in verdict["notices"]
    assert json.loads(copy_of(state_home).read_text())["root"] == str(failing_repo.resolve())
    # Said once; and the attempts go on to the escalation they were heading for.
    verdict = verify(agentgate)
    assert verdict["status"] == "escalate"
    assert not any("restored" in n for n in verdict["notices"])


def test_a_verdict_that_counts_no_task_leaves_the_user_state_alone(
    failing_repo: Path, state_home: Path, agentgate: Agentgate
) -> None:
    assert agentgate("verify").code == 1
    assert (failing_repo / ".agentgate" / "history.jsonl").exists() and not state_home.exists()


def test_a_state_file_edited_to_fewer_rejections_is_restored(
    failing_repo: Path, state_home: Path, agentgate: Agentgate
) -> None:
    verify(agentgate)
    verify(agentgate)
    state = failing_repo / ".agentgate" / "state.json"
    doc = json.loads(state.read_text())
    doc["tasks"]["T"].update(total=0, sources={})
    state.write_text(json.dumps(doc))
    verdict = verify(agentgate)
    assert attempt(verdict) == (3, 3)
    assert any("showed task T with 0 rejections, fewer than" in n for n in verdict["notices"])


def test_a_reset_is_recorded_and_said_by_the_next_verdict(
    failing_repo: Path,
    state_home: Path,
    agentgate: Agentgate,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import getpass

    verify(agentgate)
    verify(agentgate)
    monkeypatch.setenv("AGENTGATE_ACTOR", "reviewer-bot")
    reset = agentgate("reset", "--task", "T")
    assert reset.code == 0 and "cleared task T" in reset.out
    verdict = verify(agentgate)
    assert attempt(verdict) == (1, 3)  # the counts were cleared ...
    (notice,) = [n for n in verdict["notices"] if "reset" in n]  # ... and it is said
    user = getpass.getuser()
    assert notice.startswith(f"attempts were reset by {user} (AGENTGATE_ACTOR=reviewer-bot) at ")
    assert notice.endswith(" UTC (agentgate reset)")
    (entry_,) = json.loads(copy_of(state_home).read_text())["resets"]
    assert entry_["task"] == "T" and entry_["user"] == user and entry_["actor"] == "reviewer-bot"
    # Said once, and the task counts again from there.
    verdict = verify(agentgate)
    assert attempt(verdict) == (2, 3) and not any("reset" in n for n in verdict["notices"])


def test_a_reset_after_deleting_the_state_folder_clears_the_copy_too(
    failing_repo: Path, state_home: Path, agentgate: Agentgate
) -> None:
    verify(agentgate, "A")
    verify(agentgate, "B")
    shutil.rmtree(failing_repo / ".agentgate")
    reset = agentgate("reset")
    assert reset.code == 0 and "cleared 2 tasks" in reset.out
    verdict = verify(agentgate, "A")
    assert attempt(verdict) == (1, 3)
    assert any(n.startswith("attempts were reset by ") for n in verdict["notices"])
    assert not any("restored" in n for n in verdict["notices"])


def test_a_pass_closes_the_task_in_the_copy_too(
    failing_repo: Path, state_home: Path, agentgate: Agentgate
) -> None:
    verify(agentgate)
    (failing_repo / "agentgate.yml").write_text(f"gates:\n  build: {{command: {shell('true')}}}\n")
    assert verify(agentgate)["status"] == "pass"
    assert json.loads(copy_of(state_home).read_text())["tasks"] == {}
    (failing_repo / "agentgate.yml").write_text(FAILING_BUILD)
    shutil.rmtree(failing_repo / ".agentgate")
    verdict = verify(agentgate)
    assert attempt(verdict) == (1, 3) and not any("restored" in n for n in verdict["notices"])


def test_an_unwritable_state_home_is_a_warning(
    failing_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(blocked / "agentgate"))  # not a folder
    verdict = verify(agentgate)
    assert attempt(verdict) == (1, 3)
    result = agentgate("verify", "--task", "T")
    assert result.code == 1 and "attempt 2 of 3" in result.out
    assert "warning: could not keep the attempts outside the project in" in result.err
    assert "AGENTGATE_STATE_HOME" in result.err and "Traceback" not in result.err
    reset = agentgate("reset", "--task", "T")
    assert reset.code == 0 and "the reset is recorded in the project only" in reset.err


def test_a_copy_that_belongs_to_another_project_is_not_used(
    failing_repo: Path, state_home: Path, agentgate: Agentgate
) -> None:
    verify(agentgate)
    copy = copy_of(state_home)
    doc = json.loads(copy.read_text())
    doc["root"] = "/somewhere/else"
    copy.write_text(json.dumps(doc))
    shutil.rmtree(failing_repo / ".agentgate")
    result = agentgate("verify", "--task", "T")
    assert "attempt 1 of 3" in result.out
    assert f"belongs to /somewhere/else, not to {failing_repo.resolve()}" in result.err
    assert "Traceback" not in result.err


def test_the_user_state_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pytest_agentgate.state.storage import user_state_home

    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "x"))
    assert user_state_home() == tmp_path / "x"
    monkeypatch.delenv("AGENTGATE_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
        assert user_state_home() == tmp_path / "xdg" / "agentgate"
        monkeypatch.setenv("XDG_STATE_HOME", "relative/is/ignored")
        assert user_state_home() == tmp_path / "home" / ".local" / "state" / "agentgate"


def test_no_test_writes_to_the_real_user_state_directory(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # tests/conftest.py points it at a folder of the session's own, for every process it starts.
    home = Path(os.environ["AGENTGATE_STATE_HOME"])
    assert home.is_relative_to(tmp_path_factory.getbasetemp())


def test_a_plugin_planted_in_the_project_folder_fails_the_pytest_door(tmp_path: Path) -> None:
    # `python -m pytest` finds an egg-info in the project folder and loads its pytest11 plugin;
    # build/ and *.egg-info/ are ignored by the project itself, so git shows nothing.
    root = repository(
        tmp_path / "proj",
        "gates:\n  test: {command: pytest}\n",
        **{
            ".gitignore": "build/\n*.egg-info/\n.agentgate/\n",
            "test_a.py": "def test_a():\n    assert 1 == 2\n",
        },
    )
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "base"],
        cwd=root,
        check=True,
    )
    (root / "build").mkdir()
    (root / "build" / "zz_helper.py").write_text(REWRITER)
    egg_info(root, "zz-helper", "[pytest11]\nzz = build.zz_helper\n")
    proc = pytest_in(root, "--agentgate=strict", "--agentgate-json=v.json")
    assert proc.returncode != 0, proc.stdout + proc.stderr
    test_gate = next(g for g in verdict_in(root)["gates"] if g["kind"] == "test")
    assert test_gate["status"] == "fail"
    assert any("zz (zz_helper.egg-info)" in p for p in test_gate["problems"]), test_gate


# -- 5. settings from the environment ----------------------------------------------------------

CALC = (
    "def add(a, b):\n    return a + b\n\n\n"
    "def unused(x):\n    if x:\n        return 1\n    return 2\n"
)
CALC_TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_bad():\n    assert add(1, 1) == 3\n"
)
ENV_GATES = f"""\
profile: strict
gates:
  test:
    command: {shell("{py} -m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml")}
    report: .agentgate/junit.xml
"""


def committed(root: Path) -> Path:
    subprocess.run([GIT or "git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        [GIT or "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
        cwd=root,
        check=True,
    )
    return root


@pytest.fixture
def env_repo(tmp_path: Path, state_home: Path) -> Path:
    return committed(
        repository(
            tmp_path / "proj",
            ENV_GATES,
            **{"calc.py": CALC, "tests/test_calc.py": CALC_TESTS},
        )
    )


def verify_under(root: Path, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    proc = run(root, str(SCRIPT), "verify", "--format", "json", env=env)
    return proc.returncode, json.loads(proc.stdout)


def environment_findings(verdict: dict[str, Any]) -> list[str]:
    (gate,) = [g for g in verdict["gates"] if g["name"] == "integrity"]
    return [f["message"] for f in gate["findings"] if f["code"] == "environment-loosened"]


@pytest.mark.skipif(GIT is None, reason="needs git")
@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"PYTEST_ADDOPTS": "-k 'not bad'"}, "PYTEST_ADDOPTS in the environment has -k"),
        ({"PYTEST_ADDOPTS": "--deselect=tests/test_calc.py::test_bad"}, "has --deselect"),
        ({"PYTEST_ADDOPTS": "-o python_functions=test_add"}, "has -o: pytest reads settings"),
    ],
    ids=["-k", "--deselect", "-o"],
)
def test_a_selection_from_the_environment_fails_the_gate(
    env_repo: Path, env: dict[str, str], said: str
) -> None:
    # The trick: the failing test left out through PYTEST_ADDOPTS, which the base's count,
    # collected under the same environment, followed. The tests then "all pass".
    code, verdict = verify_under(env_repo, env)
    assert code == 1 and verdict["status"] == "fail"
    assert any(said in message for message in environment_findings(verdict))


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_a_plugin_from_the_environment_fails_the_gate(env_repo: Path, tmp_path: Path) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "rewrite.py").write_text(REWRITER, encoding="utf-8")
    env = {"PYTEST_PLUGINS": "rewrite", "PYTHONPATH": str(tmp_path / "plugins")}
    code, verdict = verify_under(env_repo, env)
    assert code == 1
    (test,) = [g for g in verdict["gates"] if g["name"] == "test"]
    assert test["status"] == "pass"  # the plugin did rewrite the failure...
    assert environment_findings(verdict) == [  # ...and the gate says where it came from
        "PYTEST_PLUGINS=rewrite in the environment loads plugins the project does not: a "
        "plugin can rewrite any test's result"
    ]
    # The pytest door: the same plugin, the same finding.
    proc = pytest_in(env_repo, "--agentgate=strict", env=env)
    assert proc.returncode != 0 and "environment-loosened: PYTEST_PLUGINS=rewrite" in proc.stdout


COVERED = (
    "{py} -m coverage run --branch --source=calc --data-file=.agentgate/.coverage "
    "-m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml"
)


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_coverage_settings_from_outside_the_project_fail_the_gate(
    tmp_path: Path, state_home: Path
) -> None:
    config = f"""\
profile: strict
gates:
  test:
    command: {shell(COVERED)}
    report: .agentgate/junit.xml
  coverage:
    report: .agentgate/.coverage
    format: coverage-data
"""
    tests = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    root = committed(
        repository(tmp_path / "proj", config, **{"calc.py": CALC, "tests/test_calc.py": tests})
    )
    outside = tmp_path / "cov.rc"
    outside.write_text("[report]\nexclude_lines =\n    def unused\n", encoding="utf-8")
    code, verdict = verify_under(root, {"COVERAGE_RCFILE": str(outside)})
    assert code == 1
    (coverage,) = [g for g in verdict["gates"] if g["name"] == "coverage"]
    assert coverage["status"] == "pass"  # unused() excluded: 100% of what is left...
    shown = str(outside) if len(str(outside)) <= 80 else str(outside)[:79] + "…"
    assert environment_findings(verdict) == [
        f"COVERAGE_RCFILE={shown} in the environment: coverage.py reads its settings from "
        "that file, not from the project's"
    ]
    # The project's own settings file, named in the variable, is the project's.
    (root / ".coveragerc").write_text("[run]\nbranch = true\n", encoding="utf-8")
    committed(root)
    code, verdict = verify_under(root, {"COVERAGE_RCFILE": ".coveragerc"})
    assert environment_findings(verdict) == []
    assert code == 1  # unused() is not covered: the honest verdict


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_reporting_options_from_the_environment_are_fine(env_repo: Path) -> None:
    (env_repo / "tests" / "test_calc.py").write_text(
        CALC_TESTS.replace("== 3\n", "== 2\n").replace("add(1, 2) == 2", "add(1, 2) == 3"),
        encoding="utf-8",
    )
    committed(env_repo)
    code, verdict = verify_under(env_repo, {"PYTEST_ADDOPTS": "--color=yes -v -rA"})
    assert environment_findings(verdict) == []
    assert (code, verdict["status"]) == (0, "pass")


# -- 6. tool caches keyed by a file's time ------------------------------------------------------


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_a_lint_error_restored_with_its_clean_time_is_still_found(
    tmp_path: Path, state_home: Path
) -> None:
    # The trick: lint the clean file once (ruff caches "no findings" for its modification
    # time), put the error back and give the file that time again. ruff's cache answers for it.
    config = (
        "gates:\n  lint:\n"
        f"    command: {shell('{py} -m ruff check --output-format json --select F .')}\n"
        "    format: ruff\n"
    )
    root = committed(repository(tmp_path / "proj", config, **{"calc.py": "import os\n"}))
    ruff = (sys.executable, "-m", "ruff", "check", "--select", "F", ".")
    (root / "calc.py").write_text("x = 1\n", encoding="utf-8")
    assert run(root, *ruff).returncode == 0
    stamp = (root / "calc.py").stat()
    (root / "calc.py").write_text("import os\n", encoding="utf-8")
    os.utime(root / "calc.py", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    # The cache answers as the trick needs when ruff is run as the agent runs it...
    assert run(root, *ruff).returncode == 0
    # ...and not in the gate's commands.
    gated = run(root, str(SCRIPT), "verify", "--no-cache")
    assert gated.returncode == 1 and "FAIL  lint" in gated.stdout
