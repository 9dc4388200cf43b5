"""``pytest --agentgate`` never exits 0 without a passing verdict.

Each project is a real git repository: its base commit on ``main`` has a failing test (which
leaves a marker file when it runs) and the change adds a conftest.py with one way of ending the
run early. Every run is the real ``pytest --agentgate=strict`` in a process of its own.

1. The integrity gate is judged before pytest imports the project's conftest.py files: a change
   it rejects is stopped before collection with status 1, its findings at file:line, and none of
   its code runs (not even a module-level ``os._exit(0)``, which nothing in-process can catch).
2. An early exit the integrity gate lets through (a human allowed it in the base's
   configuration) is "no verdict", never a pass: pytest's 0 becomes 3, and the output says what
   ended the run and where.
3. Honest work is not blocked: a conftest.py of plain fixtures and a passing suite exits 0.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from _helpers import change, git

from pytest_agentgate.pytest_plugin import gate_process

pytest_plugins = ["pytester"]

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")

CONFIG = "gates:\n  test: {command: pytest}\n"
# The base's failing test: it leaves a marker when it runs.
FAILING_TEST = """\
from pathlib import Path


def test_fails():
    Path(__file__).with_name("test-ran").write_text("ran")
    assert 0
"""
# The honest fix: the same test, now asserting what the code really does.
PASSING_TEST = """\
def test_fails(answer):
    assert answer == 42
"""
# Every trick's conftest.py leaves a marker when it is imported (its line 1).
IMPORTED = 'open("conftest-imported", "w").close()\n'


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # This suite may itself run under agentgate, whose guard and options must not leak in.
    for name in ("AGENTGATE_RUNNING", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def project(root: Path, config: str = CONFIG, **base: str) -> Path:
    """``root`` as a git repository whose ``main`` has one commit: ``agentgate.yml``, the
    failing test and ``base`` (name -> text)."""
    git(root, "init", "-q", "-b", "main")
    assert Path(git(root, "rev-parse", "--show-toplevel").strip()) == root.resolve()
    files = {"agentgate.yml": config, "test_a.py": FAILING_TEST, **base}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def gated(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any] | None]:
    """The real ``pytest --agentgate=strict`` in its own process; the verdict, if written."""
    out = pytester.path / "v.json"
    out.unlink(missing_ok=True)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--agentgate=strict", f"--agentgate-json={out}", *args
    )
    return result, json.loads(out.read_text()) if out.exists() else None


def gate(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in verdict["gates"] if g["name"] == name)


def ran(root: Path, marker: str = "test-ran") -> bool:
    return (root / marker).exists()


# -- 1. the integrity gate, before any of the change's code runs ------------------------------

TRICKS = {
    "pytest.exit-in-collection_modifyitems": (
        """\
        import pytest


        def pytest_collection_modifyitems(items):
            pytest.exit("done", returncode=0)
        """,
        6,
        "pytest.exit() in pytest_collection_modifyitems()",
    ),
    "os._exit-in-collection_modifyitems": (
        """\
        import os


        def pytest_collection_modifyitems(items):
            os._exit(0)
        """,
        6,
        "os._exit() in pytest_collection_modifyitems()",
    ),
    "os._exit-in-runtest_setup": (
        """\
        from os import _exit as leave


        def pytest_runtest_setup(item):
            leave(0)
        """,
        6,
        "os._exit() in pytest_runtest_setup()",
    ),
    "sys.exit-in-sessionstart": (
        """\
        import sys as system


        def pytest_sessionstart(session):
            system.exit(0)
        """,
        6,
        "sys.exit() in pytest_sessionstart()",
    ),
    "os._exit-at-import": (
        """\
        import os

        os._exit(0)
        """,
        4,
        "os._exit() at import",
    ),
}


def test_an_inherited_xdist_worker_id_does_not_skip_the_judgment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pytest started by a test that runs on an xdist worker inherits its worker id; only
    # xdist's own worker is one.
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")
    root = project(pytester.path)
    change(root, **{"conftest.py": IMPORTED + "import os\nos._exit(0)\n"})
    result, verdict = gated(pytester)
    assert result.ret == 1 and verdict is not None and verdict["status"] == "fail"
    assert not ran(root, "conftest-imported")


def test_the_rejection_is_a_verdict_counted_like_any_other(pytester: pytest.Pytester) -> None:
    root = project(pytester.path, CONFIG + "attempts: {per_branch: true}\n")
    change(root, **{"conftest.py": "import os\n\n\ndef pytest_sessionfinish():\n    os._exit(0)\n"})
    result, verdict = gated(pytester)
    assert result.ret == 1 and verdict is not None
    assert verdict["attempt"]["number"] == 1
    result.stdout.fnmatch_lines(["agentgate: FAIL (profile strict, attempt 1 of 3)"])
    result, verdict = gated(pytester)
    assert verdict is not None and verdict["attempt"]["number"] == 2
    history = (root / ".agentgate" / "history.jsonl").read_text().splitlines()
    assert len(history) == 2


def test_workers_never_start_for_a_rejected_change(pytester: pytest.Pytester) -> None:
    root = project(pytester.path)
    change(root, **{"conftest.py": TRICKS["os._exit-in-runtest_setup"][0]})
    result, verdict = gated(pytester, "-p", "xdist", "-n", "2")
    assert result.ret == 1 and verdict is not None and verdict["status"] == "fail"
    assert "conftest.py:5 exit-forced" in result.stdout.str()
    assert "bringing up nodes" not in result.stdout.str() and not ran(root)


def test_an_option_of_the_rejected_conftest_is_not_an_escape(pytester: pytest.Pytester) -> None:
    # The rejected conftest.py is not imported, so an option only it adds is unknown: pytest
    # stops on it (a usage error), after the verdict is shown and recorded.
    root = project(pytester.path)
    conftest = """\
        import os


        def pytest_addoption(parser):
            parser.addoption("--slow", action="store_true")


        def pytest_collection_modifyitems(items):
            os._exit(0)
        """
    change(root, **{"conftest.py": conftest})
    result, verdict = gated(pytester, "--slow")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "conftest.py:9 exit-forced" in result.stdout.str()
    assert verdict is not None and verdict["status"] == "fail" and not ran(root)


def test_a_broken_configuration_does_not_let_the_conftest_run(pytester: pytest.Pytester) -> None:
    # The change broke agentgate.yml: the base's configuration judges it (and reports the
    # broken file) before any of the change's code runs.
    root = project(pytester.path)
    change(
        root,
        **{
            "agentgate.yml": "gates: {bogus: 1}\n",
            "conftest.py": IMPORTED + "import os\nos._exit(0)\n",
        },
    )
    result, verdict = gated(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert verdict is not None and verdict["status"] == "fail"
    integrity = next(g for g in verdict["gates"] if g["name"] == "integrity")
    assert {f["code"] for f in integrity["findings"]} == {"exit-forced", "gate-config-loosened"}
    assert not ran(root) and not ran(root, "conftest-imported")


def test_a_configuration_broken_at_the_base_too_stops_before_the_conftest(
    pytester: pytest.Pytester,
) -> None:
    # Nothing can judge the change: none of its code runs either.
    root = project(pytester.path)
    change(root, **{"agentgate.yml": "gates: {bogus: 1}\n"})
    git(root, "commit", "-qam", "broken on the base branch")
    change(root, **{"conftest.py": IMPORTED + "import os\nos._exit(0)\n"})
    result, verdict = gated(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and verdict is None
    assert "agentgate.yml" in result.stderr.str()
    assert not ran(root) and not ran(root, "conftest-imported")


# -- 2. an early exit is no verdict -----------------------------------------------------------

# The base's configuration allows what the conftest.py does (a human approved it, say for a
# database check that ends the run): the integrity gate reports it and lets the run go on.
ALLOWED = (
    CONFIG
    + "integrity:\n  allow:\n"
    + '    - {rule: "*", path: conftest.py, reason: "the suite ends itself without a database"}\n'
    + '    - {rule: "*", path: "test_*.py", reason: "reviewed"}\n'
)


@pytest.mark.parametrize(
    ("hook", "line"),
    [("pytest_collection_modifyitems", 5), ("pytest_sessionstart", 5)],
)
def test_pytest_exit_0_from_a_hook_is_no_verdict(
    pytester: pytest.Pytester, hook: str, line: int
) -> None:
    # pytest.exit in pytest_sessionstart: pytest skips pytest_sessionfinish altogether.
    root = project(pytester.path, ALLOWED)
    change(
        root,
        **{"conftest.py": f'import pytest\n\n\ndef {hook}():\n    pytest.exit("done", 0)\n'},
    )
    result, verdict = gated(pytester)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "agentgate: no verdict: the run was ended early by pytest.exit('done') in "
            f"conftest.py:{line}"
        ]
    )
    assert verdict is None and not ran(root)


def test_a_test_that_ends_the_run_is_no_verdict(pytester: pytest.Pytester) -> None:
    root = project(pytester.path, ALLOWED)
    change(
        root,
        **{
            "test_0.py": 'import pytest\n\n\ndef test_first():\n    pytest.exit("bye", 0)\n',
        },
    )
    result, verdict = gated(pytester)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(
        ["agentgate: no verdict: the run was ended early by pytest.exit('bye') in test_0.py:5"]
    )
    assert verdict is None and not ran(root)


def test_a_keyboard_interrupt_from_a_hook_is_no_verdict(pytester: pytest.Pytester) -> None:
    root = project(pytester.path, ALLOWED)
    change(
        root, **{"conftest.py": "def pytest_runtest_setup(item):\n    raise KeyboardInterrupt\n"}
    )
    result, verdict = gated(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["agentgate: no verdict: the run was interrupted (KeyboardInterrupt in conftest.py:2)"]
    )
    assert verdict is None and not ran(root)


def test_a_system_exit_from_a_hook_is_judged_and_fails(pytester: pytest.Pytester) -> None:
    # pytest makes a SystemExit from a hook an internal error (3); the run is judged anyway.
    root = project(pytester.path, ALLOWED)
    change(
        root,
        **{"conftest.py": "def pytest_collection_modifyitems(items):\n    raise SystemExit(0)\n"},
    )
    result, verdict = gated(pytester)
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(
        [
            "agentgate: the run was ended early by SystemExit(0) in conftest.py:2",
            "agentgate: FAIL (profile strict)",
        ]
    )
    assert verdict is not None and verdict["status"] == "fail" and not ran(root)
    assert (
        "stopped after 0 of 1 tests (SystemExit(0) in conftest.py:2)"
        in gate(verdict, "test")["summary"]
    )


def test_a_session_stopped_by_project_code_fails(pytester: pytest.Pytester) -> None:
    root = project(pytester.path, ALLOWED)
    change(
        root,
        **{
            "test_0.py": "def test_first():\n    pass\n",
            "conftest.py": """\
                def pytest_runtest_teardown(item):
                    item.session.shouldstop = "enough"
                """,
        },
    )
    result, verdict = gated(pytester)
    assert result.ret != 0
    assert verdict is not None and verdict["status"] == "fail" and not ran(root)
    assert "stopped after 1 of 2 tests (enough)" in gate(verdict, "test")["summary"]


def test_exit_0_after_a_failing_verdict_keeps_the_failure(pytester: pytest.Pytester) -> None:
    root = project(pytester.path, ALLOWED)
    change(
        root,
        **{
            "conftest.py": """\
                import pytest


                @pytest.hookimpl(trylast=True)
                def pytest_terminal_summary():
                    pytest.exit("never mind", returncode=0)
                """
        },
    )
    result, verdict = gated(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert verdict is not None and verdict["status"] == "fail" and ran(root)


# Ends no code in the run's own process could see or print after: the parent that waits for the
# run (pytest_plugin/supervisor.py) gives the exit status, and a 0 needs a passing verdict.
HARD_ENDS = {
    "os._exit-by-a-built-name-in-a-session-teardown": """\
        import os

        import pytest


        @pytest.fixture(scope="session", autouse=True)
        def _bye():
            yield
            getattr(os, "_ex" + "it")(0)
        """,
    "exec-of-a-program-that-exits-0-in-a-hook": """\
        import os
        import sys


        def pytest_sessionfinish(session):
            os.execv(sys.executable, [sys.executable, "-c", "pass"])
        """,
}


@pytest.mark.parametrize("conftest", HARD_ENDS.values(), ids=list(HARD_ENDS))
def test_a_process_ended_with_0_by_the_project_code_is_no_verdict(
    pytester: pytest.Pytester, conftest: str
) -> None:
    root = project(pytester.path, ALLOWED)
    change(root, **{"conftest.py": conftest})
    result, verdict = gated(pytester)
    assert result.ret == 3, result.stdout.str()
    assert verdict is None and ran(root)
    assert "no verdict: the pytest process ended with status 0" in result.stderr.str()


def test_a_process_ended_with_0_after_a_failing_verdict_exits_1(pytester: pytest.Pytester) -> None:
    root = project(pytester.path, ALLOWED)
    conftest = """\
        import os

        import pytest


        @pytest.hookimpl(trylast=True)
        def pytest_unconfigure(config):
            getattr(os, "_ex" + "it")(0)
        """
    change(root, **{"conftest.py": conftest})
    result, verdict = gated(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    assert verdict is not None and verdict["status"] == "fail"
    assert "status 0 after a verdict of fail" in result.stderr.str()


def test_sigterm_to_pytest_ends_the_run_it_waits_for(pytester: pytest.Pytester) -> None:
    slow = """\
        import os
        import time
        from pathlib import Path


        def test_slow():
            Path("run-pid").write_text(str(os.getpid()))
            time.sleep(60)
        """
    root = project(pytester.path, **{"test_slow.py": textwrap.dedent(slow)})
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--agentgate=strict"]
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL)
    try:
        run = wait_for(root / "run-pid")
        assert run != process.pid  # the run is the waiting process's child
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == -signal.SIGTERM
    finally:
        process.kill()
        process.wait()
    with pytest.raises(ProcessLookupError):
        os.kill(run, 0)


def wait_for(path: Path, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline, f"{path.name} never written"
        time.sleep(0.05)
    return int(path.read_text())


# -- 3. honest work -----------------------------------------------------------------------------


def test_a_conftest_of_plain_fixtures_and_a_passing_suite_pass(pytester: pytest.Pytester) -> None:
    root = project(pytester.path)
    conftest = """\
        import pytest


        @pytest.fixture
        def answer():
            return 42
        """
    change(root, **{"conftest.py": conftest, "test_a.py": PASSING_TEST})
    result, verdict = gated(pytester)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["agentgate: PASS (profile strict)", "  PASS  integrity  the change weakens nothing*"]
    )
    assert verdict is not None and verdict["status"] == "pass"
    assert gate(verdict, "test")["actual"]["passed"] == 1


def test_an_allowed_exit_is_reported_and_an_honest_run_passes(pytester: pytest.Pytester) -> None:
    # A conftest.py that may end the run (the base allows it) and does not: the run is judged.
    root = project(pytester.path, ALLOWED)
    conftest = """\
        import os

        import pytest


        @pytest.fixture
        def answer():
            return 42


        def pytest_sessionstart(session):
            if os.environ.get("NO_DATABASE"):
                pytest.exit("no database", returncode=3)
        """
    change(root, **{"conftest.py": conftest, "test_a.py": PASSING_TEST})
    result, verdict = gated(pytester)
    assert result.ret == 0, result.stdout.str()
    assert verdict is not None and verdict["status"] == "pass"
    assert "1 findings reported, none blocking" in gate(verdict, "integrity")["summary"]


# -- in-process runs: the same paths, measured by coverage (no os._exit here) ---------------------


def inline(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any] | None]:
    out = pytester.path / "v.json"
    out.unlink(missing_ok=True)
    result = pytester.runpytest(
        "--agentgate=strict", f"--agentgate-json={out}", *args, no_reraise_ctrlc=True
    )
    return result, json.loads(out.read_text()) if out.exists() else None


def test_in_process_a_rejected_conftest_is_never_imported(pytester: pytest.Pytester) -> None:
    root = project(pytester.path)
    trick = textwrap.dedent(TRICKS["pytest.exit-in-collection_modifyitems"][0])
    change(root, **{"conftest.py": IMPORTED + trick})
    for args in [(), ("--color=yes",), ("-p", "no:terminal")]:
        result, verdict = inline(pytester, *args)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        assert verdict is not None and verdict["status"] == "fail"
        assert not ran(root) and not ran(root, "conftest-imported")
    assert "conftest.py:6 exit-forced" in result.stdout.str()


def test_in_process_judged_after_the_conftests_still_stops_before_collection(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # When the gate process could not be started before the conftest.py files were imported,
    # the session judges the change when it starts: the collection hooks never run.
    from pytest_agentgate.pytest_plugin import session

    monkeypatch.setattr(session, "start_early", lambda config, profile, verdict_pipe: None)
    root = project(pytester.path)
    trick = textwrap.dedent(TRICKS["pytest.exit-in-collection_modifyitems"][0])
    change(root, **{"conftest.py": IMPORTED + trick})
    result, verdict = inline(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["agentgate: the integrity gate rejected the change, so no test ran", "agentgate: FAIL*"]
    )
    assert verdict is not None and verdict["status"] == "fail" and not ran(root)
    assert ran(root, "conftest-imported")  # what judging before the import prevents


ENDED_BY_EXIT = "no verdict: the run was ended early by pytest.exit('done') in conftest.py:5"


@pytest.mark.parametrize(
    ("conftest", "status", "says"),
    [
        (
            'import pytest\n\n\ndef pytest_collection_modifyitems():\n    pytest.exit("done", 0)\n',
            pytest.ExitCode.INTERNAL_ERROR,
            ENDED_BY_EXIT,
        ),
        (
            'import pytest\n\n\ndef pytest_sessionstart():\n    pytest.exit("done", 0)\n',
            pytest.ExitCode.INTERNAL_ERROR,
            ENDED_BY_EXIT,
        ),
        (
            "def pytest_runtest_setup(item):\n    raise KeyboardInterrupt\n",
            pytest.ExitCode.INTERRUPTED,
            "agentgate: no verdict: the run was interrupted (KeyboardInterrupt in conftest.py:2)",
        ),
        (
            "def pytest_collection_modifyitems(items):\n    raise SystemExit(0)\n",
            pytest.ExitCode.INTERNAL_ERROR,
            "agentgate: the run was ended early by SystemExit(0) in conftest.py:2",
        ),
    ],
    ids=["exit-in-collection", "exit-in-sessionstart", "keyboard-interrupt", "system-exit"],
)
def test_in_process_an_early_exit_is_never_0(
    pytester: pytest.Pytester, conftest: str, status: int, says: str
) -> None:
    root = project(pytester.path, ALLOWED)
    change(root, **{"conftest.py": conftest})
    result, _ = inline(pytester)
    assert result.ret == status
    assert says in result.stdout.str()
    assert not ran(root)


def test_in_process_exit_0_after_a_failing_verdict_keeps_1(pytester: pytest.Pytester) -> None:
    root = project(pytester.path, ALLOWED)
    change(
        root,
        **{
            "conftest.py": "import pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
            "def pytest_terminal_summary():\n    pytest.exit('never mind', returncode=0)\n"
        },
    )
    result, verdict = inline(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED and ran(root)
    assert verdict is not None and verdict["status"] == "fail"


def test_the_evidence_of_a_run_stopped_before_its_tests(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from pytest_agentgate.pytest_plugin import session

    class Cov:
        _disabled = False

    def config(cov: object) -> Any:
        plugins = SimpleNamespace(get_plugin=lambda name: cov if name == "_cov" else None)
        return SimpleNamespace(
            pluginmanager=plugins, invocation_params=SimpleNamespace(dir=tmp_path)
        )

    gate = SimpleNamespace(ready=lambda: {"coverage": True})
    measured = session.not_run_evidence(config(Cov()), gate, False, "v.json")  # type: ignore[arg-type]
    assert measured["coverage"]["error"] == [
        "pytest-cov",
        "nothing was measured: no test ran (stopped before the first test by the integrity gate)",
        "resolve the integrity findings, then run the suite again",
    ]
    assert measured["json"] == str(tmp_path / "v.json")
    assert measured["tests"]["partial"] == [session.NOT_RUN]
    unmeasured = session.not_run_evidence(config(None), gate, False, None)  # type: ignore[arg-type]
    # Measured by agentgate itself (no pytest-cov): said the same way, never "sent no data"
    # (review 27), which asked for a bug report.
    assert unmeasured["coverage"]["error"][0] == "pytest session" and unmeasured["json"] is None
    ungated: Any = SimpleNamespace(ready=lambda: {"coverage": False})
    assert session.not_run_evidence(config(None), ungated, False, None)["coverage"] is None


# -- the protocol -------------------------------------------------------------------------------


def test_the_gate_process_answers_ready_with_the_early_judgment(tmp_path: Path) -> None:
    root = project(tmp_path)
    request = {"cwd": str(root), "profile": "strict", "command": "pytest", "run": True}

    def ready() -> dict[str, Any]:
        outgoing = io.StringIO()
        channel = gate_process.Channel(io.StringIO(json.dumps(request) + "\n"), outgoing)
        assert gate_process.serve(channel) == 0
        answer: dict[str, Any] = json.loads(outgoing.getvalue().splitlines()[0])
        return answer

    assert ready()["early"] == {"status": "pass", "failed": []}
    change(root, **{"conftest.py": "import os\nos._exit(0)\n"})
    assert ready()["early"] == {"status": "fail", "failed": ["integrity"]}
