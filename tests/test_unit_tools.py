"""The pinned-tool runner (``python -m pytest_agentgate.tools``) in process, with no network.

Pins down which tools and versions it accepts (and the messages for the rest), where its cache
is, that a version installed once is reused, what a failed install says and leaves behind, and
the command and environment it runs each tool with. pip is never run: a cached install is
written by the test, and a failed one is pip's answer given to the installer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate import tools
from pytest_agentgate.tools import ToolError, cache_home, command, installed, main, parse_spec

PY = f"py{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def cached(cache: Path, name: str, version: str) -> Path:
    """A finished install of ``name==version`` in the cache, as the installer leaves it."""
    target = cache / "tools" / f"{name}-{version}-{PY}"
    (target / "bin").mkdir(parents=True)
    (target / ".complete").write_text(f"{name}=={version}\n", encoding="utf-8")
    return target


def test_cache_home_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTGATE_CACHE_HOME", str(tmp_path / "own"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_home() == tmp_path / "own"
    monkeypatch.delenv("AGENTGATE_CACHE_HOME")
    assert cache_home() == tmp_path / "xdg" / "agentgate"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_home() == tmp_path / "home" / ".cache" / "agentgate"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ruff", ("ruff", None)),
        ("ruff==0.15.6", ("ruff", "0.15.6")),
        ("flake8==7.1.1", ("flake8", "7.1.1")),
        ("pylint==3.3.0rc1", ("pylint", "3.3.0rc1")),
        ("pycodestyle==", ("pycodestyle", None)),
    ],
)
def test_parse_spec_accepts_known_tools(spec: str, expected: tuple[str, str | None]) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("requests==2.0", "unknown tool 'requests': agentgate runs ruff, flake8, pycodestyle"),
        ("Ruff", "unknown tool 'Ruff'"),
        ("ruff==latest", "'ruff==latest': 'latest' is not a version"),
        ("ruff==1.0 ; evil", "is not a version"),
        ("ruff==--index-url=http://x", "is not a version"),
    ],
)
def test_parse_spec_refuses_what_would_install_anything_else(spec: str, message: str) -> None:
    with pytest.raises(ToolError) as info:
        parse_spec(spec)
    assert message in str(info.value)


def test_a_version_installed_once_is_reused(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = cached(cache, "ruff", "0.15.6")

    def no_pip(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("pip ran for a version already installed")

    monkeypatch.setattr(tools.subprocess, "run", no_pip)
    assert installed("ruff", "0.15.6") == target


def test_an_install_pip_refuses_leaves_nothing_and_says_why(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def pip(line: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(line)
        err = "Collecting\nLooking in indexes\nERROR: Could not find a version\nERROR: No dist\n"
        return subprocess.CompletedProcess(line, 1, "", err)

    monkeypatch.setattr(tools.subprocess, "run", pip)
    with pytest.raises(ToolError) as info:
        installed("flake8", "99.0")
    message = str(info.value)
    assert message.startswith("could not install flake8 99.0, the version the project pins")
    assert "pip said: Looking in indexes ERROR: Could not find a version ERROR: No dist." in message
    assert "set the lint gate's command in agentgate.yml" in message
    assert calls[0][-1] == "flake8==99.0" and "--target" in calls[0]
    # No staging folder and no install left behind; the next run tries again.
    left = [p.name for p in (cache / "tools").iterdir() if not p.name.endswith(".lock")]
    assert left == []


def test_an_install_that_cannot_start_says_so(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def pip(line: list[str], **kwargs: Any) -> Any:
        raise subprocess.TimeoutExpired(line, 600)

    monkeypatch.setattr(tools.subprocess, "run", pip)
    with pytest.raises(ToolError, match=r"^could not install ruff 0\.1\.0: .*timed out"):
        installed("ruff", "0.1.0")
    assert [p for p in (cache / "tools").iterdir() if not p.name.endswith(".lock")] == []


def test_a_successful_install_is_marked_complete_and_replaces_a_half_one(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    half = cache / "tools" / f"pylint-3.0.0-{PY}"
    (half / "stale").mkdir(parents=True)  # an earlier install that never completed

    def pip(line: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        staging = Path(line[line.index("--target") + 1])
        (staging / "pylint").mkdir()
        return subprocess.CompletedProcess(line, 0, "", "")

    monkeypatch.setattr(tools.subprocess, "run", pip)
    target = installed("pylint", "3.0.0")
    assert target == half
    assert (target / ".complete").read_text(encoding="utf-8") == "pylint==3.0.0\n"
    assert (target / "pylint").is_dir() and not (target / "stale").exists()


def test_command_of_a_pinned_tool(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ruff = cached(cache, "ruff", "0.15.6")
    flake8 = cached(cache, "flake8", "7.1.1")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    line, _ = command("ruff", "0.15.6", ["check", "."])
    assert line == [str(ruff / "bin" / "ruff"), "check", "."]
    line, env = command("flake8", "7.1.1", ["."])
    assert line == [sys.executable, "-m", "flake8", "."]
    assert env["PYTHONPATH"].split(":") == [str(flake8), "/elsewhere"]


def test_command_of_an_unpinned_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONPATH", raising=False)
    line, env = command("pylint", None, ["pkg"])
    assert line == [sys.executable, "-m", "pylint", "pkg"]
    assert "PYTHONPATH" not in env  # the tool installed beside agentgate, found as it is
    line, _ = command("ruff", None, ["check"])
    beside = Path(sys.executable).with_name("ruff")
    assert line == [str(beside) if beside.exists() else "ruff", "check"]


def test_an_unpinned_tool_that_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ToolError, match=r"^pycodestyle is not installed in the environment of"):
        command("pycodestyle", None, [])


def test_main_usage_and_refusals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: python -m pytest_agentgate.tools NAME[==VERSION]" in capsys.readouterr().err
    assert main(["pip", "install", "x"]) == 2
    assert capsys.readouterr().err.startswith("agentgate: unknown tool 'pip'")


def test_main_reports_a_tool_it_cannot_start(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = cached(cache, "ruff", "0.2.0")  # installed, but its script is gone
    assert main(["ruff==0.2.0", "check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agentgate: cannot run {target / 'bin' / 'ruff'}: ")


def test_an_environment_without_pip_installs_with_the_pip_python_carries(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A third review: uv makes environments with no pip ("No module named pip"). The pip
    # wheel the standard library carries for ensurepip runs as pip; else uv's pip; else say so.
    import importlib.util

    real = importlib.util.find_spec

    def without(*missing: str) -> Any:
        return lambda name, *a: None if name in missing else real(name, *a)

    monkeypatch.setattr(tools.importlib.util, "find_spec", without("pip"))
    line = tools._installer()
    if line is not None and line[0] == sys.executable:  # this Python carries the wheel
        assert line[1].endswith(".whl/pip") and "pip-" in line[1] and line[2] == "install"
    monkeypatch.setattr(tools.importlib.util, "find_spec", without("pip", "ensurepip"))
    monkeypatch.setattr(
        tools.shutil, "which", lambda name: "/opt/uv/bin/uv" if name == "uv" else None
    )
    assert tools._installer() == [
        "/opt/uv/bin/uv",
        "pip",
        "install",
        "--quiet",
        "--python",
        sys.executable,
    ]
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)
    with pytest.raises(
        ToolError, match=r"has no pip \(uv makes such environments\) and uv is not on PATH"
    ):
        installed("ruff", "0.1.0")
    assert [p for p in (cache / "tools").iterdir() if not p.name.endswith(".lock")] == []


def test_flake8_leaves_out_the_folders_git_ignores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A review on real projects: termcolor's `flake8 .` read 43,226 errors in a git-ignored
    # `.venv` inside the project; the project's own `exclude` must still hold (sqlparse's).
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    (tmp_path / ".gitignore").write_text(".venv/\nbuild/\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "bad.py").write_text("import os,sys\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "x.py").write_text("import os,sys\n")
    assert tools._ignored_folders() == [".venv", "build"]
    (tmp_path / ".git").rename(tmp_path / "not-git")
    assert tools._ignored_folders() == []  # outside git: the folder as it is


def environment(folder: Path, *, package: bool = False) -> None:
    """A virtual environment's files at ``folder``, with a module that flake8 would fault."""
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").symlink_to(sys.executable)
    (folder / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    (folder / "lib").mkdir()
    (folder / "lib" / "bad.py").write_text("import os,sys\n")
    if package:
        (folder / "__init__.py").write_text("")


@pytest.mark.parametrize("in_git", [True, False])
def test_flake8_leaves_out_virtual_environments_git_does_not_ignore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], in_git: bool
) -> None:
    # Review 17: cachetools has no .gitignore; the `.venv` its README makes held 14,571 of
    # flake8's findings.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "mod.py").write_text("import json\n")
    if in_git:
        subprocess.run(["git", "init", "-q"], check=True)
        subprocess.run(["git", "add", "-A"], check=True)
    environment(tmp_path / ".venv")
    environment(tmp_path / "env-3.11")
    # A change cannot hide code so: not the project's folders (a pyvenv.cfg added to one, in
    # git), not a package, not a folder with no interpreter.
    environment(tmp_path / "newpkg", package=True)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "notes" / "bad.py").write_text("import os,sys\n")
    if in_git:
        environment(tmp_path / "code")
    assert tools._environments() == [".venv", "env-3.11"]
    assert main(["flake8", "."]) == 1
    out = capfd.readouterr().out
    assert "code/mod.py:1:1: F401" in out
    assert ".venv" not in out and "env-3.11" not in out
    assert "newpkg/lib/bad.py" in out and "notes/bad.py" in out
    assert ("code/lib/bad.py" in out) is in_git


def test_pylint_is_given_the_projects_top_but_its_environments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Red team 34: `pylint --recursive=y .` linted the project's `.venv` until the gate's time
    # ran out. Its own `ignore` options still apply to what it walks.
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "mod.py").write_text('"""M."""\n\nimport json\n')
    (tmp_path / "setup.py").write_text('"""S."""\n\nimport os\n')
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text("import os,sys\n")
    environment(tmp_path / ".venv")
    assert tools._tops({".venv", "build"}) == ["code", "setup.py"]
    main(["pylint", "--disable=all", "--enable=unused-import", "--recursive=y", "."])
    out = capfd.readouterr().out
    assert "code/mod.py" in out and "setup.py" in out
    assert ".venv" not in out and "build/gen.py" not in out


def test_a_linter_reads_no_configuration_from_above_a_project_that_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Red team 34: a `setup.cfg` in the repository's parent folder (flake8 looks up to the home
    # folder, pycodestyle to the root) or a `~/.pylintrc` or `~/.config/pycodestyle` ignored
    # what the project's own rules report.
    project = tmp_path / "home" / "src" / "project"
    project.mkdir(parents=True)
    (project / "mod.py").write_text('"""M."""\n\nimport json\nimport os, sys\n')
    (tmp_path / "home" / "src" / "setup.cfg").write_text(
        "[flake8]\nextend-ignore = F401\n\n[pycodestyle]\nignore = E401\n"
    )
    (tmp_path / "home" / ".pylintrc").write_text("[MESSAGES CONTROL]\ndisable = all\n")
    (tmp_path / "home" / ".config").mkdir()
    (tmp_path / "home" / ".config" / "pycodestyle").write_text("[pycodestyle]\nignore = E401\n")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PYLINTRC", raising=False)
    monkeypatch.chdir(project)
    assert main(["flake8", "."]) == 1
    assert "mod.py:3:1: F401" in capfd.readouterr().out
    assert main(["pylint", "--recursive=y", "."]) != 0
    assert "W0611" in capfd.readouterr().out
    assert main(["pycodestyle", "."]) == 1
    assert "mod.py:4:10: E401" in capfd.readouterr().out
    # The project's own configuration is read as ever (the user's is not pycodestyle's).
    (project / "setup.cfg").write_text(
        "[flake8]\nextend-ignore = F401,E401\n\n[pycodestyle]\nignore = E401\n"
    )
    (project / ".pylintrc").write_text("[MESSAGES CONTROL]\ndisable = W0611,C0410\n")
    assert main(["flake8", "."]) == 0
    assert main(["pylint", "--recursive=y", "."]) == 0
    assert main(["pycodestyle", "."]) == 0
    capfd.readouterr()


def test_pycodestyle_reads_the_projects_configuration_not_one_in_a_folder_it_lints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Red team 56: the project lints `pycodestyle calc`; pycodestyle reads the first setup.cfg
    # or tox.ini from calc/ up, so a `calc/setup.cfg` saying `select = E9` replaced the
    # project's settings and its errors went unreported.
    (tmp_path / "setup.cfg").write_text("[pycodestyle]\nmax-line-length = 100\n")
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "core.py").write_text(
        "def add(a,b):\n    return a + b  # " + "x" * 70 + "\n"
    )
    (tmp_path / "calc" / "setup.cfg").write_text("[pycodestyle]\nselect = E9\n")
    monkeypatch.chdir(tmp_path)
    assert main(["pycodestyle", "calc"]) == 1
    out = capfd.readouterr().out
    assert "calc/core.py:1:10: E231" in out
    assert "E501" not in out  # the project's max-line-length, read from its top folder


def test_a_monorepos_configuration_at_its_top_is_the_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # Review 21: the repository's top holds `.flake8`; the project is `svc/`, with none of its
    # own. flake8 reads the top's, as the project's own `flake8` run does.
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    (tmp_path / ".flake8").write_text("[flake8]\nmax-line-length = 120\n")
    (tmp_path / "pyproject.toml").write_text("[tool.pylint.format]\nmax-line-length = 120\n")
    project = tmp_path / "svc"
    project.mkdir()
    (project / "core.py").write_text('"""C."""\n\nNAME = "' + "x" * 90 + '"\n')
    monkeypatch.chdir(project)
    assert tools._isolated("flake8", ["."]) == ["."]
    assert tools._isolated("pylint", ["."]) == ["."]
    assert main(["flake8", "."]) == 0
    (tmp_path / ".flake8").unlink()
    assert tools._isolated("flake8", ["."]) == ["--isolated", "."]
    assert main(["flake8", "."]) == 1
    assert "E501" in capfd.readouterr().out


def test_only_what_flake8_takes_for_its_configuration_keeps_it_from_isolation(
    tmp_path: Path,
) -> None:
    # Red team 36: a `[flake8.tox]` section, or a `.flake8` configparser cannot read, turned
    # the isolation off while flake8 itself looked further up.
    (tmp_path / "tox.ini").write_text("[flake8.tox]\nx = 1\n")
    (tmp_path / ".flake8").write_text("[flake8\nbroken")
    assert not tools._own_config("flake8", tmp_path)
    (tmp_path / "setup.cfg").write_text("[flake8:local-plugins]\npaths = .\n")
    assert tools._own_config("flake8", tmp_path)
    (tmp_path / "setup.cfg").write_text("[pylint.messages_control]\ndisable = all\n")
    assert tools._own_config("pylint", tmp_path) and not tools._own_config("flake8", tmp_path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".flake8", "[flake8]\nextend-exclude =\n    invoice/_vendor,\n    build\n"),
        ("setup.cfg", "[flake8]\nextend_exclude = invoice/_vendor build\n"),
        ("pyproject.toml", "[tool.flake8]\nextend-exclude = ['invoice/_vendor']\n"),
    ],
)
def test_flake8_keeps_its_configurations_extend_exclude(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    name: str,
    text: str,
) -> None:
    # Review 18: the runner's --extend-exclude (a git-ignored .venv) replaced the project's
    # own, and its vendored code was linted.
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    (tmp_path / ".gitignore").write_text(".venv/\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / name).write_text(text)
    (tmp_path / "invoice" / "_vendor").mkdir(parents=True)
    (tmp_path / "invoice" / "_vendor" / "upstream.py").write_text("import os,sys\n")
    (tmp_path / "invoice" / "tax.py").write_text("import json\n")
    assert tools._flake8_extend_exclude()[:1] == ["invoice/_vendor"]
    main(["flake8", "."])
    out = capfd.readouterr().out
    assert "invoice/tax.py:1:1: F401" in out and "_vendor" not in out


BROKEN_ON_PURPOSE = "import os,sys\nif True:\n\tx = 1\n"


@pytest.fixture
def fixtures_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose test inputs are wrong on purpose (pycodestyle's `testing/data/`), one
    of them beside a file of its own, and whose code has one finding."""
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    for name in ("testing/data/E10.py", "testing/data/deep/W19.py", "docs/conf.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(BROKEN_ON_PURPOSE)
    (tmp_path / "testing" / "support.py").write_text("import os\n")
    (tmp_path / "code.py").write_text("import json\n")
    (tmp_path / "odd,name.py").write_text("import os\n")
    subprocess.run(["git", "add", "-A"], check=True)
    (tmp_path / "testing" / "data" / "new.py").write_text(BROKEN_ON_PURPOSE)  # not yet added
    return tmp_path


def test_what_pre_commit_excludes_is_listed_by_folder(fixtures_repo: Path) -> None:
    assert tools.excluded([]) == []
    assert tools.excluded(["^testing/data/"]) == ["testing/data"]
    assert tools.excluded(["^testing/data/E10", "^docs/"]) == ["docs", "testing/data/E10.py"]
    # pre-commit searches the path: an expression that is not anchored matches inside it.
    assert tools.excluded(["W19"]) == ["testing/data/deep"]
    assert tools.excluded(["name"]) == []  # a comma cannot be said in the list: linted


@pytest.mark.parametrize("tool", ["flake8", "ruff"])
def test_the_real_linters_leave_out_what_pre_commit_excludes(
    fixtures_repo: Path, tool: str, capfd: pytest.CaptureFixture[str]
) -> None:
    args = ["check", "--output-format", "concise", "--isolated"] if tool == "ruff" else []
    code = main(
        [tool, "--exclude-regex", "^testing/data/", "--exclude-regex", "^docs/", *args, "."]
    )
    out = capfd.readouterr().out
    assert code == 1
    assert "code.py:1:" in out and "support.py:1:" in out
    assert "testing/data" not in out and "docs" not in out
    main([tool, *args, "."])
    assert "testing/data/deep/W19.py" in capfd.readouterr().out  # without: linted


def test_an_exclude_that_is_not_a_regular_expression_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["flake8", "--exclude-regex", "^(testing", "."]) == 2
    assert "--exclude-regex '^(testing': not a regular expression" in capsys.readouterr().err
    assert main(["pylint", "--exclude-regex", "^docs/", "."]) == 2
    assert "pylint is not given files to leave out" in capsys.readouterr().err


def test_an_install_lock_held_for_too_long_is_an_error_naming_its_holder(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 38: a `flock` of the agent's on the install lock ran the lint command out of the
    # hook's time, which lets the agent stop.
    monkeypatch.setattr(tools, "_LOCK_WAIT_S", 0.3)
    folder = f"ruff-0.0.1-py{sys.version_info[0]}.{sys.version_info[1]}"
    lock = cache / "tools" / f".{folder}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    code = (
        "import fcntl, sys, time\nf = open(sys.argv[1], 'a+b')\nfcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\ntime.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        with pytest.raises(ToolError, match=rf"(?s)is held by process {holder.pid} .* for longer"):
            installed("ruff", "0.0.1")
    finally:
        holder.kill()
        holder.wait()
