"""The pytest plugin: ``pytest --agentgate[=PROFILE]``.

Most runs are in-process (pytester.runpytest), so coverage measures the plugin. Runs that need
real pytest-cov or pytest-xdist are subprocesses (runpytest_subprocess); they check the
contract's "must hold" items: the same verdict numbers as `agentgate verify` for each profile,
and the same verdict with and without ``-n 2``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _helpers import DATA, git

from pytest_agentgate.commands import runs_pytest
from pytest_agentgate.config.resolve import resolve_config
from pytest_agentgate.pytest_plugin import gate_process as plugin_helper
from pytest_agentgate.pytest_plugin import session as plugin_session
from pytest_agentgate.pytest_plugin.supervisor import VERDICT_EXIT
from pytest_agentgate.reports.junit import read_junit
from pytest_agentgate.reports.model import CoverageReport, ReportError

pytest_plugins = ["pytester"]

PY = sys.executable

OUTCOMES = """
import pytest

def test_pass():
    pass

def test_fail():
    assert 1 == 2

@pytest.mark.skip(reason="not today")
def test_skip():
    pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert 0

@pytest.mark.xfail(reason="fixed")
def test_xpass():
    pass

@pytest.mark.xfail(strict=True, reason="must fail")
def test_xpass_strict():
    pass

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup boom")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown boom")

def test_setup_error(broken_setup):
    pass

def test_teardown_error(broken_teardown):
    pass
"""

ONLY_TESTS = "gates:\n  test: {command: pytest}\n"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # This suite may itself run under agentgate (AGENTGATE_RUNNING=1): the runs below must gate.
    monkeypatch.delenv("AGENTGATE_RUNNING", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def command(code: str) -> str:
    """A YAML string: a shell command that runs ``raise``/evaluates ``code`` in Python."""
    statement = f"raise {code}" if code.startswith("SystemExit") else code
    return json.dumps(f"{PY} -c '{statement}'")


def gated(
    pytester: pytest.Pytester, *args: str, config: str | None = ONLY_TESTS, **kwargs: Any
) -> tuple[pytest.RunResult, dict[str, Any] | None]:
    """Run pytest in-process with the verdict written to v.json; the result and the verdict."""
    if config is not None and not (pytester.path / "agentgate.yml").exists():
        pytester.makefile(".yml", agentgate=config)
    out = pytester.path / "v.json"
    out.unlink(missing_ok=True)
    result = pytester.runpytest(f"--agentgate-json={out}", *args, **kwargs)
    return result, json.loads(out.read_text()) if out.exists() else None


def gate(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in verdict["gates"] if g["name"] == name)


def check_schema(verdict: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator

    from pytest_agentgate.cli.schema import schema_text

    Draft202012Validator(json.loads(schema_text())).validate(verdict)


# -- switching it on and off ------------------------------------------------------------------


def test_without_the_option_the_plugin_does_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "= agentgate =" not in result.stdout.str()
    assert result.ret == 0


RECORD_OFF = """
import sys

def pytest_unconfigure(config):
    pm = config.pluginmanager
    hooks = sorted(caller.name for caller in pm.get_hookcallers(pm.get_plugin("agentgate")))
    modules = sorted(name for name in sys.modules if name.startswith("pytest_agentgate"))
    with open("off.txt", "w") as f:
        f.write(f"hooks: {hooks}\\nmodules: {modules}\\n")
        f.write(f"session: {pm.get_plugin('agentgate-session')}\\n")
"""


def test_without_the_option_the_plugin_has_no_per_test_cost(pytester: pytest.Pytester) -> None:
    # What the plugin costs when it is not asked for is fixed per session (the benchmark counts
    # it): no hook that runs per test, none of the gated session's or the engine's modules.
    pytester.makeconftest(RECORD_OFF)
    pytester.makepyfile("def test_ok():\n    pass\n")
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
    assert (pytester.path / "off.txt").read_text().splitlines() == [
        "hooks: ['pytest_addoption', 'pytest_configure', 'pytest_load_initial_conftests']",
        "modules: ['pytest_agentgate', 'pytest_agentgate.commands', 'pytest_agentgate.profiles', "
        "'pytest_agentgate.pytest_plugin', 'pytest_agentgate.pytest_plugin.entry', "
        "'pytest_agentgate.pytest_plugin.start']",
        "session: None",
    ]


def test_options_are_in_the_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help", "--agentgate=nonsense")
    result.stdout.fnmatch_lines(["*--agentgate=[[]PROFILE[]]*", "*--agentgate-json=PATH*"])
    assert result.ret == 0


def test_unknown_profile_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest("--agentgate", "tests")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agentgate=tests: not a profile*--agentgate=strict tests/*"])


def test_bad_configuration_is_a_usage_error_before_any_test_runs(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_ok():\n    open('ran', 'w').close()\n")
    result, verdict = gated(pytester, "--agentgate", config="profil: strict\n")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agentgate.yml*profil*did you mean 'profile'*"])
    assert verdict is None
    assert not (pytester.path / "ran").exists()
    assert "= agentgate =" not in result.stdout.str()


def test_ini_option_gates_every_run_and_o_turns_it_off(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nagentgate = strict\n")
    pytester.makepyfile(
        "import pytest\n\ndef test_ok():\n    pass\n\n@pytest.mark.skip\ndef test_s():\n    pass\n"
    )
    result, verdict = gated(pytester)
    assert verdict is not None and verdict["profile"] == "strict"
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["*= agentgate =*", "agentgate: PASS (profile strict)", "  PASS  test *"]
    )
    result, verdict = gated(pytester, "-o", "agentgate=off")
    assert verdict is None and "= agentgate =" not in result.stdout.str()


def test_ini_config_uses_the_configurations_profile(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nagentgate = config\n")
    pytester.makepyfile("def test_ok():\n    pass\n")
    _, verdict = gated(pytester, config="profile: relaxed\n" + ONLY_TESTS)
    assert verdict is not None and verdict["profile"] == "relaxed"
    assert gate(verdict, "test")["expected"]["min_pass_rate"] == 90


def test_a_bare_agentgate_running_does_not_stop_the_gate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the value an agentgate process gives its commands, naming it, means "nested"
    # (test_integrity_doors.py runs the real nesting).
    monkeypatch.setenv("AGENTGATE_RUNNING", "1")
    pytester.makepyfile("def test_ok():\n    pass\n")
    result, verdict = gated(pytester, "--agentgate=strict", config="gates: {bogus: 1}\n")
    assert verdict is None
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # the configuration was read: gated
    assert "not gating this run" not in result.stdout.str()
    assert "AGENTGATE_RUNNING is set but no agentgate process started this run" in (
        result.stdout.str()
    )


@pytest.mark.parametrize("option", ["--collect-only", "--co", "--fixtures", "--markers"])
def test_a_run_of_no_test_the_caller_asks_for_is_not_gated(
    pytester: pytest.Pytester, option: str
) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    result, verdict = gated(pytester, "--agentgate", option)
    assert verdict is None and result.ret == 0
    result.stdout.fnmatch_lines([f"*not gating a {option} run*"])


@pytest.mark.parametrize(
    "option", ["--co", "--fixtures", "--fixtures-per-test", "--markers", "--help", "--version"]
)
def test_a_run_of_no_test_from_addopts_is_a_usage_error(
    pytester: pytest.Pytester, option: str
) -> None:
    # The caller asked for a gated test run; addopts would end it with 0 and no test run.
    pytester.makepyfile("def test_ok():\n    assert False\n")
    pytester.makeini(f"[pytest]\naddopts = {option}\n")
    result, verdict = gated(pytester, "--agentgate=strict")
    assert verdict is None and result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*{option} in addopts (tox.ini): the gate's options are the caller's*remove it*"]
    )


def test_a_run_of_no_test_from_pytest_addopts_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_ok():\n    assert False\n")
    monkeypatch.setenv("PYTEST_ADDOPTS", "--collect-only")
    result, verdict = gated(pytester, "--agentgate=strict")
    assert verdict is None and result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--collect-only in PYTEST_ADDOPTS: the gate's options are the caller's*"]
    )


def test_p_pytest_agentgate_with_autoload_disabled(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile("def test_ok():\n    pass\n")
    result, verdict = gated(pytester, "-p", "pytest_agentgate", "--agentgate=standard")
    assert result.ret == 0 and verdict is not None and verdict["status"] == "pass"
    # ...and with autoload on, -p pytest_agentgate does not register the plugin twice.
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    result, verdict = gated(pytester, "-p", "pytest_agentgate", "--agentgate=standard")
    assert result.ret == 0 and verdict is not None


RECORD_LOADERS = """
import sys

def pytest_unconfigure(config):
    loaders = {
        name: type(module.__loader__).__name__
        for name, module in sys.modules.items()
        if name.startswith("pytest_agentgate.") and module.__loader__ is not None
    }
    hook = config.pluginmanager.rewrite_hook
    with open("loaders.txt", "w") as f:
        f.write(f"hook in meta_path: {hook in sys.meta_path}\\n")
        for name in (
            "pytest_agentgate.pytest_plugin.session",
            "pytest_agentgate.reports.outcomes",
            "pytest_agentgate.engine",
        ):
            f.write(f"{name}: {loaders.get(name)}\\n")
"""


def test_the_engine_stays_out_of_pytest_and_tests_are_still_rewritten(
    pytester: pytest.Pytester,
) -> None:
    # The engine runs in the gate process, so its start-up never delays the tests; the gated
    # session's own module is imported plainly (pytest marks a pytest11 plugin's whole
    # distribution for assertion rewriting), while the tests' asserts keep their introspection.
    pytester.makeconftest(RECORD_LOADERS)
    pytester.makepyfile("def test_wrong():\n    x = 2\n    assert x == 3\n")
    result = pytester.runpytest_subprocess("--agentgate=relaxed", "--agentgate-no-run")
    result.stdout.fnmatch_lines(["*assert 2 == 3*", "agentgate: FAIL (profile relaxed)"])
    lines = (pytester.path / "loaders.txt").read_text().splitlines()
    assert lines == [
        "hook in meta_path: True",
        "pytest_agentgate.pytest_plugin.session: SourceFileLoader",
        "pytest_agentgate.reports.outcomes: SourceFileLoader",  # the fold rules, plainly too
        "pytest_agentgate.engine: None",
    ]


# -- the test gate from in-process reports ----------------------------------------------------


def test_outcomes_count_like_the_junit_report_of_the_same_run(pytester: pytest.Pytester) -> None:
    # Not test_outcomes: in-process, it would clash with tests/test_outcomes.py's module.
    pytester.makepyfile(test_mixed=OUTCOMES, test_broken="import not_a_module\n")
    junit = pytester.path / "junit.xml"
    result, verdict = gated(
        pytester, "--agentgate=standard", "--continue-on-collection-errors", f"--junitxml={junit}"
    )
    assert verdict is not None
    check_schema(verdict)
    actual = gate(verdict, "test")["actual"]
    # xfail is not run (told apart from skips), a non-strict XPASS a pass (told apart), strict
    # XPASS a failure, setup/teardown/collection errors are errors.
    assert actual == {
        "total": 9,
        "passed": 2,
        "failed": 2,
        "errors": 3,
        "skipped": 1,
        "xfailed": 1,
        "xpassed": 1,
        "flaky": 0,
        "pass_rate": pytest.approx(200 / 7),
    }
    # Exactly what the same session's JUnit report says under the test gate's reading of it
    # (a pass of an xfail-marked test is a plain pass in JUnit written outside agentgate).
    run = read_junit([junit])
    assert (run.total, run.passed, run.failed, run.errors, run.skipped) == (9, 2, 2, 3, 2)
    assert (run.xfailed, run.xpassed) == (1, 0)
    findings = {f["name"]: f for f in gate(verdict, "test")["findings"]}
    assert findings["test_mixed.py::test_fail"]["message"] == "assert 1 == 2"
    assert findings["test_mixed.py::test_fail"]["path"] == "test_mixed.py"
    assert findings["test_mixed.py::test_setup_error"]["message"].startswith(
        "error in setup: RuntimeError: setup boom"
    )
    assert "error in teardown" in findings["test_mixed.py::test_teardown_error"]["message"]
    assert findings["test_broken.py"]["message"].startswith("collection error: ")
    assert "[XPASS(strict)]" in findings["test_mixed.py::test_xpass_strict"]["message"]
    assert verdict["status"] == "fail" and result.ret == 1
    assert "COMPLETION REJECTED" in result.stdout.str()


def test_collection_error_keeps_pytests_status(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n", test_broken="import nope\n")
    result, verdict = gated(pytester, "--agentgate")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert verdict is not None and gate(verdict, "test")["actual"]["errors"] == 1
    # Why the run stopped is pytest's own reason, not a guess at -x or --maxfail.
    summary = gate(verdict, "test")["summary"]
    assert "(1 error during collection)" in summary and "--maxfail" not in summary


def test_a_passing_run_keeps_exit_status_0(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    result, verdict = gated(pytester, "--agentgate=strict")
    assert result.ret == 0
    assert verdict is not None and verdict["status"] == "pass"
    check_schema(verdict)
    test = gate(verdict, "test")
    assert test["command"].startswith("pytest ") and "--agentgate=strict" in test["command"]
    assert test["exit_code"] == 0


def test_failing_verdict_makes_status_1_when_every_test_passed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    config = ONLY_TESTS + f"  custom:\n    - {{name: audit, command: {command('SystemExit(3)')}}}\n"
    result, verdict = gated(pytester, "--agentgate=relaxed", config=config)
    assert verdict is not None and verdict["status"] == "fail"
    assert gate(verdict, "test")["status"] == "pass"
    assert gate(verdict, "audit")["status"] == "fail"
    result.assert_outcomes(passed=1)
    assert result.ret == 1


def test_zero_executed_tests_fail_and_pytests_status_is_kept(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("import pytest\n\n@pytest.mark.skip\ndef test_s():\n    pass\n")
    result, verdict = gated(pytester, "--agentgate=relaxed")
    assert verdict is not None and gate(verdict, "test")["status"] == "fail"
    assert "no tests executed" in gate(verdict, "test")["summary"]
    assert result.ret == 1
    pytester.makepyfile("")  # no tests at all: pytest's own 5 stays
    result, verdict = gated(pytester, "--agentgate=relaxed")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_nonzero_pytest_status_with_nothing_failing_fails_the_gate(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest("def pytest_sessionfinish(session):\n    session.exitstatus = 1\n")
    pytester.makepyfile("def test_ok():\n    pass\n")
    _, verdict = gated(pytester, "--agentgate=relaxed")
    assert verdict is not None
    test = gate(verdict, "test")
    assert test["status"] == "fail"
    assert "exited with code 1 but its report shows nothing wrong" in test["problems"][0]


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux scheduling classes")
def test_the_other_gates_run_at_a_lower_priority_than_the_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    probe = (
        'import os, time; time.sleep(0.2); open("prio.txt", "w").write('
        'f"{os.getpriority(os.PRIO_PROCESS, 0)} {os.sched_getscheduler(0)}")'
    )
    config = ONLY_TESTS + f"  build: {{command: {command(probe)}}}\n"
    result, verdict = gated(pytester, "--agentgate=standard", config=config)
    assert result.ret == 0 and verdict is not None
    nice, policy = (pytester.path / "prio.txt").read_text().split()
    assert int(nice) == min(os.getpriority(os.PRIO_PROCESS, 0) + 10, 19)
    assert int(policy) == os.SCHED_IDLE


def test_bad_configuration_stops_an_xdist_run_before_its_workers_start(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_ok():\n    open('ran', 'w').close()\n")
    pytester.makefile(".yml", agentgate="profil: strict\n")
    result = pytester.runpytest_subprocess("--agentgate", "-p", "xdist", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agentgate.yml*profil*did you mean 'profile'*"])
    assert "created: 2/2 workers" not in result.stdout.str()
    assert not (pytester.path / "ran").exists()


def test_keyboard_interrupt_gives_no_verdict_and_cancels_the_gates(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_stop():\n    raise KeyboardInterrupt\n")
    sleep = command("import time; time.sleep(30)")
    config = ONLY_TESTS + f"  build: {{command: {sleep}}}\n"
    result, verdict = gated(pytester, "--agentgate", config=config, no_reraise_ctrlc=True)
    assert verdict is None
    result.stdout.fnmatch_lines(["*no verdict: the run was interrupted*"])
    assert result.duration < 20


def test_unwritable_json_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    pytester.makefile(".yml", agentgate=ONLY_TESTS)
    (pytester.path / "file").write_text("")
    result = pytester.runpytest("--agentgate", "--agentgate-json=file/v.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*--agentgate-json*cannot write the verdict*"])


# -- partial runs -----------------------------------------------------------------------------

TWO_FILES = {
    "test_one": "def test_a():\n    pass\n\ndef test_b():\n    assert 0\n",
    "test_two": "def test_c():\n    pass\n",
}


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["-k", "test_a or test_c"], "1 tests deselected"),
        (["-x"], "stopped after 2 of 3 tests (stopping after 1 failures)"),
        (["test_two.py"], "only the tests in test_two.py ran"),
        (["test_one.py::test_a"], "only test_one.py::test_a ran"),
        # Red team 57: --pyargs made any path the whole suite.
        (["--pyargs", "test_two.py"], "only the tests in test_two.py ran"),
    ],
)
def test_a_partial_run_says_so_and_cannot_pass_strict(
    pytester: pytest.Pytester, args: list[str], reason: str
) -> None:
    pytester.makepyfile(**TWO_FILES)
    _, strict = gated(pytester, "--agentgate=strict", *args)
    assert strict is not None
    test = gate(strict, "test")
    assert reason in test["summary"]
    assert test["status"] == "fail"
    assert any("cannot pass this profile" in p for p in test["problems"])
    _, relaxed = gated(pytester, "--agentgate=relaxed", *args)
    assert relaxed is not None and reason in gate(relaxed, "test")["summary"]
    assert not any("cannot pass" in p for p in gate(relaxed, "test")["problems"])


@pytest.mark.parametrize(
    ("extra", "whole"),
    [
        ({}, True),  # every test file is in tests/
        ({"other/test_more.py": "def test_d():\n    pass\n"}, False),
        ({"other/more_test.py": "def test_d():\n    pass\n"}, False),
        ({"docs/testing.txt": ">>> 1 + 1\n2\n"}, False),  # pytest collects test*.txt doctests
        ({"build/test_copy.py": "def test_d():\n    pass\n"}, True),  # norecursedirs
        ({"other/helpers.py": "X = 1\n"}, True),
    ],
    ids=[
        "all-in-tests",
        "test-file-outside",
        "suffix-test-file-outside",
        "doctest-file",
        "in-norecursedirs",
        "a-module-outside",
    ],
)
def test_naming_the_folder_that_holds_every_test_is_the_whole_suite(
    pytester: pytest.Pytester, extra: dict[str, str], whole: bool
) -> None:
    # Review 34: `pytest tests --agentgate=strict` in cachetools (no testpaths, every test in
    # tests/) collected the whole suite and was called a partial run.
    for name, text in {"tests/test_one.py": "def test_a():\n    pass\n", **extra}.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text(text)
    _, verdict = gated(pytester, "--agentgate=strict", "tests")
    assert verdict is not None
    test = gate(verdict, "test")
    assert ("only the tests in tests ran" not in test["summary"]) == whole, test["summary"]
    assert (test["status"] == "pass") == whole, test


@pytest.mark.parametrize(
    ("extra", "config", "whole"),
    [
        # A conftest at the top that collects files of its own (red team 58).
        (
            {"conftest.py": "def pytest_collect_file(parent, file_path):\n    return None\n"},
            None,
            False,
        ),
        # The test gate the session stands for runs --doctest-modules: every module counts.
        (
            {"pkg/mod.py": "def f():\n    return 1\n"},
            "gates:\n  test: {command: pytest --doctest-modules}\n",
            False,
        ),
        ({"pkg/mod.py": "def f():\n    return 1\n"}, None, True),
    ],
    ids=["top-conftest-collects", "gate-runs-doctest-modules", "plain-module"],
)
def test_what_else_pytest_would_collect_outside_the_named_folder(
    pytester: pytest.Pytester, extra: dict[str, str], config: str | None, whole: bool
) -> None:
    for name, text in {"tests/test_one.py": "def test_a():\n    pass\n", **extra}.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text(text)
    if config is not None:
        pytester.makefile(".yml", agentgate=config)
    _, verdict = gated(pytester, "--agentgate=strict", "tests")
    assert verdict is not None
    summary = gate(verdict, "test")["summary"]
    assert ("only the tests in tests ran" not in summary) == whole, summary


def test_a_rootdir_of_the_callers_is_no_whole_suite(pytester: pytest.Pytester) -> None:
    # Red team 57: `pytest tests --rootdir=tests` made tests/ the project, and its tests the
    # whole suite, while integration/ held a failing one.
    for name in ("tests/test_one.py", "integration/test_int.py"):
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text("def test_a():\n    pass\n")
    _, verdict = gated(pytester, "--agentgate=strict", "tests", "--rootdir=tests")
    assert verdict is not None
    assert "only the tests in tests ran" in gate(verdict, "test")["summary"]


@pytest.mark.parametrize(("outside", "whole"), [(False, True), (True, False)])
def test_pyargs_naming_the_package_that_holds_every_test(
    pytester: pytest.Pytester, outside: bool, whole: bool
) -> None:
    (pytester.path / "mypkg").mkdir()
    (pytester.path / "mypkg" / "__init__.py").write_text("")
    (pytester.path / "mypkg" / "test_in.py").write_text("def test_a():\n    pass\n")
    if outside:
        (pytester.path / "test_out.py").write_text("def test_b():\n    pass\n")
    pytester.syspathinsert()
    _, verdict = gated(pytester, "--agentgate=strict", "--pyargs", "mypkg")
    assert verdict is not None
    partial = "only the tests in mypkg ran" in gate(verdict, "test")["summary"]
    assert partial != whole
    _, verdict = gated(pytester, "--agentgate=strict", "--pyargs", "no_such_package.tests")
    assert verdict is not None
    assert "only the tests in no_such_package.tests ran" in gate(verdict, "test")["summary"]


PROJECT_SELECTS = """\
[pytest]
addopts = -m "not slow"
markers =
    slow: takes long
"""
MARKED = {
    "test_marked": "import pytest\n\ndef test_a():\n    pass\n\n"
    "@pytest.mark.slow\ndef test_slow():\n    pass\n"
}


def verify_test_gate(pytester: pytest.Pytester) -> dict[str, Any]:
    """The test gate of `agentgate verify --profile=strict` running the same pytest, with a
    JUnit report."""
    pytester.makefile(
        ".yml",
        agentgate="gates:\n  test:\n    command: pytest --junitxml=j.xml\n    report: j.xml\n",
    )
    proc = subprocess.run(
        [PY, "-m", "pytest_agentgate", "verify", "--format=json", "--profile=strict"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        check=False,
    )
    return gate(json.loads(proc.stdout), "test")


def test_the_projects_own_selection_is_the_suite_for_both_doors(pytester: pytest.Pytester) -> None:
    """``addopts = -m "not slow"`` in the project's ini is its suite: not a partial run for
    ``pytest --agentgate``, as for ``agentgate verify`` running the same pytest."""
    pytester.makeini(PROJECT_SELECTS)
    pytester.makepyfile(**MARKED)
    _, verdict = gated(pytester, "--agentgate=strict")
    assert verdict is not None
    test = gate(verdict, "test")
    assert test["status"] == "pass", test
    assert "deselected" not in test["summary"]
    verify_test = verify_test_gate(pytester)
    assert verify_test["status"] == "pass"
    assert verify_test["actual"]["total"] == test["actual"]["total"] == 1


@pytest.mark.parametrize(
    "how", ["command-line", "PYTEST_ADDOPTS"], ids=["command-line", "environment"]
)
def test_selection_the_caller_adds_is_partial(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    pytester.makeini(PROJECT_SELECTS)
    pytester.makepyfile(**MARKED)
    args = ["--agentgate=strict"]
    if how == "command-line":
        args += ["-k", "not test_a"]
    else:
        monkeypatch.setenv("PYTEST_ADDOPTS", "-knot_test_a")
    _, verdict = gated(pytester, *args)
    assert verdict is not None
    test = gate(verdict, "test")
    assert "2 tests deselected (-k)" in test["summary"], test["summary"]
    assert test["status"] == "fail"


XFAILS = {
    "test_marks": """\
import pytest

def test_pass():
    pass

@pytest.mark.skip(reason="later")
def test_skip():
    pass

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert 0

@pytest.mark.xfail(reason="fixed already")
def test_xpass():
    pass
"""
}


def pytest_summary_counts(text: str) -> dict[str, int]:
    """pytest's own final line ("1 passed, 1 skipped, 1 xfailed, 1 xpassed in 0.01s")."""
    line = text.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|skipped|xfailed|xpassed)", line)}


def test_counts_read_like_pytests_own_summary_in_both_doors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**XFAILS)
    oracle = pytest_summary_counts(pytester.runpytest_subprocess("-p", "no:agentgate").stdout.str())
    assert oracle == {"passed": 1, "skipped": 1, "xfailed": 1, "xpassed": 1}
    _, verdict = gated(pytester, "--agentgate=strict")
    assert verdict is not None
    plugin_side = gate(verdict, "test")
    assert (
        "2 of 2 tests passed (100.00%, need 100.00%; 1 of them xpassed), 1 skipped, 1 xfailed"
        in (plugin_side["summary"])
    )
    verify_side = verify_test_gate(pytester)
    for actual in (plugin_side["actual"], verify_side["actual"]):
        assert actual["passed"] - actual["xpassed"] == oracle["passed"]
        for word in ("skipped", "xfailed", "xpassed"):
            assert actual[word] == oracle[word], (word, actual)


def test_last_failed_is_partial_and_judges_what_ran(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**TWO_FILES)
    pytester.runpytest()  # records test_b as failed
    _, verdict = gated(pytester, "--agentgate=relaxed", "--lf")
    assert verdict is not None
    test = gate(verdict, "test")
    assert "--lf ran only the tests that failed last time" in test["summary"]
    assert test["actual"]["total"] == 1


def test_whole_suite_paths_are_not_partial(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    tests = pytester.mkdir("tests")
    (tests / "test_x.py").write_text("def test_x():\n    pass\n")
    for args in ([], ["tests"], ["."]):
        _, verdict = gated(pytester, "--agentgate=strict", *args)
        assert verdict is not None, args
        assert gate(verdict, "test")["status"] == "pass", (args, gate(verdict, "test"))


# -- configuration ----------------------------------------------------------------------------


def test_zero_config_runs_build_and_lint_in_the_background(pytester: pytest.Pytester) -> None:
    pytester.mkpydir("pkg").joinpath("__init__.py").write_text('"""P."""\n\nVALUE = 1\n')
    pytester.makepyfile(
        test_ok='"""Tests."""\n\nimport pkg\n\n\ndef test_ok():\n    """Passes."""\n'
        "    assert pkg.VALUE == 1\n"
    )
    out = pytester.path / "v.json"
    # A subprocess: the session measures coverage itself, as the detected `coverage run` would.
    result = pytester.runpytest_subprocess("--agentgate=standard", f"--agentgate-json={out}")
    verdict = json.loads(out.read_text())
    assert [g["name"] for g in verdict["gates"]] == ["build", "lint", "test", "coverage"]
    assert gate(verdict, "build")["status"] == "pass"
    assert gate(verdict, "lint")["actual"] == {"errors": 0, "warnings": 0}
    assert gate(verdict, "test")["actual"]["passed"] == 1
    assert gate(verdict, "coverage")["actual"]["lines"] == 100.0
    assert result.ret == 0


def init_project(root: Path) -> None:
    """A src-layout project with one branch its tests never take, after `agentgate init`."""
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text(
        "def sign(x):\n    if x < 0:\n        return -1\n    return 1\n"
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        "from calc import sign\n\n\ndef test_sign():\n    assert sign(2) == 1\n"
    )
    (root / "pyproject.toml").write_text(
        '[project]\nname = "calc"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
        'testpaths = ["tests"]\npythonpath = ["src"]\n'
    )
    (root / ".gitignore").write_text(".agentgate/\n.coverage\n")
    git(root, "init", "-q", "-b", "main")
    init = [PY, "-m", "pytest_agentgate", "init"]
    subprocess.run(init, cwd=root, check=True, capture_output=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


def test_no_run_skips_the_other_gates(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    config = ONLY_TESTS + f"  build: {{command: {command('SystemExit(1)')}}}\n"
    result, verdict = gated(pytester, "--agentgate", "--agentgate-no-run", config=config)
    assert verdict is not None and verdict["status"] == "pass"
    assert gate(verdict, "build")["status"] == "skipped"
    assert result.ret == 0


def test_a_configuration_without_a_test_gate_gets_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    config = f"gates:\n  build: {{command: {PY} -c pass}}\n"
    _, verdict = gated(pytester, "--agentgate=strict", config=config)
    assert verdict is not None
    assert [g["name"] for g in verdict["gates"]] == ["build", "test"]
    assert gate(verdict, "test")["expected"]["min_pass_rate"] == 100


def adapt(tmp_path: Path, text: str | None, cov_active: bool) -> tuple[Any, list[str], list[str]]:
    tmp_path.joinpath(".git").mkdir(exist_ok=True)
    tmp_path.joinpath("test_x.py").write_text("def test_x():\n    pass\n")
    if text is not None:
        tmp_path.joinpath("agentgate.yml").write_text(text)
    settings = resolve_config(tmp_path)
    adapted = plugin_helper.adapt_settings(settings, "pytest -q", cov_active)
    return settings, adapted.test_gates, adapted.coverage_gates


def test_adapt_settings_picks_the_pytest_gate_and_coverage(tmp_path: Path) -> None:
    text = (
        "gates:\n"
        "  test: {command: npm test, report: junit.xml}\n"
        "  pytest: {kind: test, command: python -m pytest -q}\n"
        "  coverage: {report: cov.json}\n"
        "  js-coverage: {kind: coverage, report: coverage/coverage-summary.json}\n"
    )
    settings, tests, covs = adapt(tmp_path, text, cov_active=True)
    assert tests == ["pytest"] and covs == ["coverage"]
    assert settings.gate("pytest").command == "pytest -q"
    assert settings.gate("test").command == "npm test"  # another tool's tests still run
    assert settings.gate("coverage").reports == []
    assert settings.gate("js-coverage").reports == ["coverage/coverage-summary.json"]
    # Without pytest-cov, a configured coverage report is read as configured.
    settings, _, covs = adapt(tmp_path, text, cov_active=False)
    assert covs == [] and settings.gate("coverage").reports == ["cov.json"]


def test_a_coverage_report_the_replaced_test_command_writes_is_not_trusted(
    pytester: pytest.Pytester,
) -> None:
    # The configured test command writes cov.json; this session replaces that command, so the
    # cov.json on disk is the last run's. Without pytest-cov it must not pass the gate.
    pytester.makepyfile("def test_ok():\n    pass\n")
    shutil.copy(DATA / "python" / "coverage-branches.json", pytester.path / "cov.json")
    config = (
        "gates:\n"
        "  test: {command: 'pytest --cov=. --cov-report=json:cov.json'}\n"
        "  coverage: {report: cov.json, branches: null}\n"
    )
    pytester.makefile(".yml", agentgate=config)
    result = pytester.runpytest_subprocess(
        "--agentgate=standard", f"--agentgate-json={pytester.path / 'v.json'}"
    )
    verdict = json.loads((pytester.path / "v.json").read_text())
    cov = gate(verdict, "coverage")
    # Measured in this session (test_ok.py, all of it run), as the command would have.
    assert cov["status"] == "pass" and cov["actual"]["lines"] == 100.0, cov
    stale = json.loads((pytester.path / "cov.json").read_text())["totals"]["percent_covered"]
    assert stale != 100.0
    assert any("measured as the test command measures it" in n for n in verdict["notices"])
    assert result.ret == 0
    # A report nothing in this run writes (an earlier CI step's) is still read as configured.
    config = "gates:\n  test: {command: pytest}\n  coverage: {report: cov.json, branches: null}\n"
    (pytester.path / "agentgate.yml").write_text(config)
    _, verdict = gated(pytester, "--agentgate=standard")
    assert verdict is not None and gate(verdict, "coverage")["status"] == "pass"


def test_coverage_settings_that_remap_paths_are_measured_in_the_session(
    pytester: pytest.Pytester,
) -> None:
    # coverage.py's [paths] (the Pallets projects' setting) remaps files as it reports, from a
    # copy of the data: a copy taken before the tracer handed its data over was empty, and
    # the door said "no usable coverage data" where `agentgate verify` measured 100%.
    pytester.makepyfile(
        calc="def add(a, b):\n    return a + b\n",
        test_calc="from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    )
    (pytester.path / ".coveragerc").write_text(
        "[run]\nbranch = true\nsource = .\n\n[paths]\nsource =\n    .\n    */site-packages\n"
    )
    config = "gates:\n  test: {command: 'pytest --cov --cov-report=json:cov.json'}\n"
    pytester.makefile(".yml", agentgate=config + "  coverage: {report: cov.json}\n")
    result = pytester.runpytest_subprocess(
        "--agentgate=strict", f"--agentgate-json={pytester.path / 'v.json'}"
    )
    verdict = json.loads((pytester.path / "v.json").read_text())
    cov = gate(verdict, "coverage")
    assert cov["status"] == "pass" and cov["actual"]["lines"] == 100.0, cov
    assert result.ret == 0


def test_adapt_settings_zero_config(tmp_path: Path) -> None:
    settings, tests, covs = adapt(tmp_path, None, cov_active=True)
    assert (tests, covs) == (["test"], ["coverage"])
    # Without pytest-cov the session measures itself, as the detected `coverage run` would.
    settings, tests, covs = adapt(tmp_path, None, cov_active=False)
    assert (tests, covs) == (["test"], ["coverage"])
    settings = resolve_config(tmp_path)
    adapted = plugin_helper.adapt_settings(settings, "pytest -q", False)
    assert adapted.measure is not None and adapted.measure["branch"] is True


def test_a_test_command_that_measures_nothing_leaves_zero_config_coverage_ungated(
    tmp_path: Path,
) -> None:
    tmp_path.joinpath(".git").mkdir()
    tmp_path.joinpath("test_x.py").write_text("def test_x():\n    pass\n")
    settings = resolve_config(tmp_path)
    test_gate = settings.gate("test")
    assert test_gate is not None
    test_gate.command = "python -m pytest -q"
    adapted = plugin_helper.adapt_settings(settings, "pytest -q", False)
    assert adapted.coverage_gates == [] and adapted.measure is None
    assert settings.gate("coverage") is None
    assert any("coverage is not gated" in n for n in settings.notices)


# -- units: the ledger, workers, coverage, the background --------------------------------------


def report_of(nodeid: str, when: str, outcome: str, longrepr: object = None, **extra: Any) -> Any:
    return SimpleNamespace(
        nodeid=nodeid,
        when=when,
        outcome=outcome,
        location=(nodeid.split("::")[0], 4, nodeid),
        longrepr=longrepr,
        **extra,
    )


def attempt(ledger: plugin_session.OutcomeLedger, nodeid: str, call: str) -> None:
    for when, outcome in (("setup", "passed"), ("call", call), ("teardown", "passed")):
        ledger.test_report(report_of(nodeid, when, outcome, longrepr="AssertionError: no\nmore"))


def test_ledger_reruns_count_once_with_their_last_outcome(tmp_path: Path) -> None:
    ledger = plugin_session.OutcomeLedger(tmp_path)
    attempt(ledger, "t.py::flaky", "rerun")  # pytest-rerunfailures' failed attempt
    attempt(ledger, "t.py::flaky", "passed")
    attempt(ledger, "t.py::broken", "rerun")
    attempt(ledger, "t.py::broken", "failed")
    attempt(ledger, "t.py::fixed", "failed")  # the same id run twice: the last run counts
    attempt(ledger, "t.py::fixed", "passed")
    ledger.test_report(report_of("t.py::skip", "setup", "skipped", longrepr=("t.py", 1, "Skipped")))
    ledger.test_report(report_of("t.py::skip", "teardown", "passed"))
    ledger.test_report(report_of("t.py::late", "call", "passed"))  # no setup report seen
    run = plugin_helper.tests_evidence(ledger.summary())
    assert (run.total, run.passed, run.failed, run.errors, run.skipped) == (5, 3, 1, 0, 1)
    assert run.flaky == 2
    assert {t.name for t in run.flaky_tests} == {"t.py::flaky", "t.py::fixed"}
    (failure,) = run.failures
    assert failure.name == "t.py::broken" and failure.message == "AssertionError: no"
    assert failure.line == 5 and failure.file == str(tmp_path / "t.py")


def test_ledger_worker_crashes(tmp_path: Path) -> None:
    ledger = plugin_session.OutcomeLedger(tmp_path)
    gw0 = SimpleNamespace(gateway=SimpleNamespace(id="gw0"))
    crash = "worker 'gw0' crashed while running 't.py::a'"
    ledger.test_report(report_of("t.py::a", "setup", "passed"))
    ledger.test_report(report_of("t.py::a", "???", "failed", longrepr=crash, node=gw0))
    ledger.worker_down("gw0", "Not properly terminated")
    ledger.worker_down("gw1", "segfault\nat 0x0")  # crashed between tests: an error of its own
    ledger.worker_down("gw2", None)  # finished normally
    run = plugin_helper.tests_evidence(ledger.summary())
    assert (run.total, run.errors) == (2, 2)
    assert [(t.name, t.message) for t in run.failures] == [
        ("t.py::a", crash),
        ("xdist worker gw1", "the worker crashed: segfault"),
    ]


def test_ledger_collection_skips_and_long_messages(tmp_path: Path) -> None:
    ledger = plugin_session.OutcomeLedger(tmp_path)
    skipped = SimpleNamespace(
        nodeid="t.py", failed=False, skipped=True, location=("t.py", None, "t.py")
    )
    ledger.collect_report(skipped)
    ledger.test_report(report_of("u.py::x", "call", "failed", longrepr="\n  " + "x" * 900))
    ledger.test_report(report_of("u.py::y", "call", "failed", longrepr=None))
    run = plugin_helper.tests_evidence(ledger.summary())
    assert (run.total, run.skipped, run.failed) == (3, 1, 2)
    messages = [t.message for t in run.failures]
    assert len(messages[0] or "") == plugin_session.MAX_MESSAGE and messages[0].endswith("...")
    assert messages[1] is None


def test_worker_agent_and_controller_share_the_deselected_count(
    pytester: pytest.Pytester,
) -> None:
    config = pytester.parseconfig()
    config.workeroutput = {}  # type: ignore[attr-defined]
    agent = plugin_session.WorkerAgent(config)
    items: list[Any] = [
        SimpleNamespace(nodeid="t.py::test_a[1]", callspec=object(), originalname="test_a"),
        SimpleNamespace(nodeid="t.py::test_b[x]"),  # named so, not parametrized
    ]
    agent.pytest_deselected(items)
    assert config.workeroutput == {plugin_session.WORKER_OUTPUT_KEY: 2}  # type: ignore[attr-defined]
    assert agent.tests.deselected == {}  # not test functions: no names kept


class FakeCoverage:
    def __init__(self, document: object | Exception) -> None:
        self.document = document
        self.cwd = ""

    def json_report(self, outfile: str, ignore_errors: bool) -> float:
        import os
        import warnings

        self.cwd = os.getcwd()
        if isinstance(self.document, Exception):
            raise self.document
        warnings.warn("Module pkg.extra was never imported. (module-not-imported)", stacklevel=1)
        Path(outfile).write_text(json.dumps(self.document))
        return 0.0


COVERAGE_JSON = {
    "meta": {"branch_coverage": True, "format": 3},
    "totals": {"covered_lines": 3, "num_statements": 4, "covered_branches": 1, "num_branches": 2},
    "files": {
        "pkg/m.py": {
            "summary": {"covered_lines": 3, "num_statements": 4},
            "missing_lines": [7],
            "functions": {
                "f": {"summary": {"covered_lines": 2, "num_statements": 2}},
                "g": {"summary": {"covered_lines": 0, "num_statements": 1}},
            },
        }
    },
}


def fake_config(cov_plugin: object) -> Any:
    return SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=lambda name: cov_plugin))


def read_pytest_cov(tmp_path: Path, cov_plugin: object) -> CoverageReport | ReportError:
    """What the two processes make of pytest-cov's data: exported here, read by the gate."""
    payload = plugin_session.export_pytest_cov(fake_config(cov_plugin), tmp_path)
    evidence = plugin_helper.coverage_evidence(payload, cov_active=True, root=tmp_path)
    assert evidence.measured_as == "data"
    found = evidence.report or evidence.error
    assert found is not None
    return found


def test_pytest_cov_data_gives_every_metric_from_covered_and_total(tmp_path: Path) -> None:
    cov = FakeCoverage(COVERAGE_JSON)
    workers = [SimpleNamespace(gateway=SimpleNamespace(id="gw3"))]
    controller = SimpleNamespace(cov=cov, topdir=str(tmp_path), failed_workers=workers)
    report = read_pytest_cov(tmp_path, SimpleNamespace(cov_controller=controller))
    assert isinstance(report, CoverageReport)
    assert cov.cwd == str(tmp_path)  # reported from where pytest-cov started
    assert (report.lines.covered, report.lines.total) == (3, 4)  # type: ignore[union-attr]
    assert report.branches.percent == 50.0  # type: ignore[union-attr]
    assert report.functions.percent == 50.0  # type: ignore[union-attr]
    assert report.statements == report.lines
    assert any("never imported" in n for n in report.notes)
    assert any("gw3 returned no coverage data" in n for n in report.notes)


def test_pytest_cov_problems_are_report_errors(tmp_path: Path) -> None:
    def read(cov: object) -> object:
        controller = SimpleNamespace(cov=cov, topdir=None)
        return read_pytest_cov(tmp_path, SimpleNamespace(cov_controller=controller))

    error = read(FakeCoverage(RuntimeError("No data to report.")))
    assert isinstance(error, ReportError) and "No data to report" in str(error)
    assert "names your package" in str(error)
    error = read(FakeCoverage({"meta": {}, "totals": {"covered_lines": 0, "num_statements": 0}}))
    assert isinstance(error, ReportError) and "measured no files" in str(error)
    error = read(None)
    assert isinstance(error, ReportError) and "measured nothing" in str(error)
    error = read_pytest_cov(tmp_path, None)
    assert isinstance(error, ReportError) and "sent no coverage data" in str(error)
    inactive = plugin_helper.coverage_evidence(None, cov_active=False, root=tmp_path).error
    assert isinstance(inactive, ReportError) and "not active in this run" in str(inactive)
    assert not plugin_session.cov_plugin_active(fake_config(SimpleNamespace(_disabled=True)))
    assert not plugin_session.cov_plugin_active(fake_config(None))


def test_background_reports_an_engine_failure_as_start_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate.process import CommandSpec

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("read-only file system")

    spec = CommandSpec(key="build", command="true", cwd=tmp_path)
    pipeline = SimpleNamespace(plan=SimpleNamespace(commands=[spec]), run_commands=broken)
    background = plugin_helper.Background(pipeline)  # type: ignore[arg-type]
    background.start()
    results = background.collect()
    assert "read-only file system" in (results["build"].start_error or "")
    assert not background.running
    background.stop()  # idempotent after the end
    assert isinstance(background.cancel, threading.Event)


def test_controller_hooks_for_xdist_and_coverage(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the subprocess runs exercise, in-process: worker counts, crashes, coverage."""
    pytester.makefile(".yml", agentgate="gates:\n  coverage: {report: cov.json}\n")
    config = pytester.parseconfigure("--agentgate-json=v.json", "-k", "a")
    request = {
        "cwd": str(pytester.path),
        "profile": "strict",
        "command": "pytest -k a",
        "cov_active": True,  # as if pytest-cov were active
        "run": True,
    }
    session = plugin_session.GateSession(config, plugin_session.GateProcess(request))
    controller = SimpleNamespace(cov=FakeCoverage(COVERAGE_JSON), topdir=str(pytester.path))
    cov_config = fake_config(SimpleNamespace(cov_controller=controller))
    export = plugin_session.export_pytest_cov
    monkeypatch.setattr(
        plugin_session, "export_pytest_cov", lambda config, directory: export(cov_config, directory)
    )
    session.pytest_xdist_node_collection_finished(None, ["t.py::a", "t.py::b"])
    node = SimpleNamespace(gateway=SimpleNamespace(id="gw0"), workeroutput={"x": 1})
    session.pytest_testnodedown(node, "crashed")
    worker = SimpleNamespace(gateway=SimpleNamespace(id="gw1"))
    worker.workeroutput = {plugin_session.WORKER_OUTPUT_KEY: 4}
    session.pytest_testnodedown(worker, None)
    session.ledger.test_report(report_of("t.py::a", "setup", "passed"))
    session.ledger.test_report(report_of("t.py::a", "call", "passed"))
    fake = SimpleNamespace(exitstatus=1, shouldfail=False, shouldstop=False)
    answer = session.ask_verdict(fake)  # type: ignore[arg-type]
    assert answer is not None and answer["status"] == "fail"
    assert "FAIL  coverage" in answer["text"]
    verdict = json.loads((pytester.path / "v.json").read_text())
    test = gate(verdict, "test")
    assert test["actual"]["errors"] == 1 and test["actual"]["passed"] == 1
    assert "4 tests deselected (-k)" in test["summary"]
    assert "stopped after 1 of 2 tests (-x, --maxfail or an abort)" in test["summary"]
    coverage = gate(verdict, "coverage")
    assert coverage["actual"]["functions"] == 50.0 and coverage["status"] == "fail"


# -- the gate process -------------------------------------------------------------------------


def converse(
    messages: list[dict[str, Any] | None], cancel: threading.Event | None = None
) -> list[dict[str, Any]]:
    """Run the gate process's protocol in-process over these input lines; its answers."""
    import io

    lines = "".join(json.dumps(m) + "\n" if m is not None else "\n" for m in messages)
    outgoing = io.StringIO()
    channel = plugin_helper.Channel(io.StringIO(lines), outgoing)
    status = plugin_helper.serve(channel, cancel)
    answers = [json.loads(line) for line in outgoing.getvalue().splitlines()]
    # It exits with its verdict's status (the waiting process reads it: supervisor.py), else 0.
    verdicts = [a["status"] for a in answers if "status" in a]
    assert status == (VERDICT_EXIT[verdicts[-1]] if verdicts else 0)
    return answers


def test_the_gate_process_judges_the_evidence_it_is_sent(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agentgate.yml").write_text(
        f"gates:\n  test: {{command: pytest}}\n  build: {{command: {command('pass')}}}\n"
    )
    request = {"cwd": str(tmp_path), "profile": "", "command": "pytest -x", "run": True}
    case = {"name": "t.py::b", "outcome": "failed", "file": "t.py", "line": 3, "message": "no"}
    tests = {"counts": [1, 0, 1, 0], "cases": [case], "partial": ["stopped after 2 of 3 tests"]}
    evidence = {"tests": tests, "exitstatus": 1, "duration": 0.5, "json": None, "colour": False}
    ready, answer = converse([request, evidence])
    assert ready == {
        "ready": True,
        "coverage": False,
        "measure": None,
        "doctest_modules": False,
        "early": {"status": "pass", "failed": []},
    }
    assert answer["status"] == "fail" and answer["json_error"] is None
    assert "PASS  build" in answer["text"]
    assert "FAIL  test   1 of 2 tests passed" in answer["text"]
    assert "t.py::b: no" in answer["text"]
    assert "partial run: stopped after 2 of 3 tests" in answer["text"]


def test_the_gate_process_refuses_a_bad_configuration_and_stops_without_evidence(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agentgate.yml").write_text("gates:\n  test: {comand: pytest}\n")
    request = {"cwd": str(tmp_path), "profile": "", "command": "pytest", "run": True}
    (answer,) = converse([request])
    assert "agentgate.yml" in answer["error"] and "comand" in answer["error"]
    assert converse([]) == []  # the pytest process went away before asking anything
    (tmp_path / "agentgate.yml").write_text(
        "gates:\n  test: {command: pytest}\n"
        f"  build: {{command: {command('import time; time.sleep(30)')}}}\n"
    )
    # Interrupted: the input ends instead of the evidence, and the build is stopped.
    (ready,) = converse([request])
    assert ready["ready"] is True


def test_the_gate_process_fits_the_configuration_to_the_session(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    request = {"cwd": str(tmp_path), "profile": "strict", "command": "pytest", "run": False}
    tests = {"counts": [2, 0, 0, 0], "cases": []}
    out = tmp_path / "out" / "v.json"
    evidence = {"tests": tests, "exitstatus": 0, "duration": 0.1, "json": str(out)}
    # Zero-config without pytest-cov: the session is to measure coverage itself, as the
    # detected `coverage run --branch` would; evidence without it is a failure that says so.
    ready, answer = converse([request, evidence])
    assert ready["coverage"] is True and answer["json_error"] is None
    assert ready["measure"]["branch"] is True and ready["measure"]["root"] == str(tmp_path)
    verdict = json.loads(out.read_text())
    assert "sent no coverage data" in gate(verdict, "coverage")["problems"][0]
    # A configuration without a test gate gets one; with pytest-cov the coverage gate reads
    # the session's exported data.
    (tmp_path / "agentgate.yml").write_text("gates:\n  coverage: {report: cov.json}\n")
    report = tmp_path / "session-coverage.json"
    report.write_text(json.dumps(COVERAGE_JSON))
    evidence["coverage"] = {"json": str(report), "warnings": [], "topdir": str(tmp_path)}
    evidence["json"] = str(tmp_path / "agentgate.yml" / "v.json")  # not a directory
    ready, answer = converse([{**request, "cov_active": True}, evidence])
    assert ready["coverage"] is True
    assert "cannot write the verdict" in answer["json_error"]
    assert "FAIL  coverage  lines 75.00%" in answer["text"]
    assert "PASS  test" in answer["text"]
    assert "gating this run as 'test'" in answer["text"]


def test_ctrl_c_stops_the_gate_process_commands_even_at_the_end(tmp_path: Path) -> None:
    # Ctrl-C while pytest waits for the verdict: the gate process's SIGINT handler sets the
    # event, the slow build is stopped, and the answer comes at once instead of in 30 s.
    (tmp_path / ".git").mkdir()
    sleep = command("import time; time.sleep(30)")
    (tmp_path / "agentgate.yml").write_text(
        f"gates:\n  test: {{command: pytest}}\n  build: {{command: {sleep}}}\n"
    )
    request = {"cwd": str(tmp_path), "profile": "", "command": "pytest", "run": True}
    tests = {"counts": [1, 0, 0, 0], "cases": []}
    evidence = {"tests": tests, "exitstatus": 0, "duration": 0.1, "json": None, "colour": False}
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    ready, answer = converse([request, evidence], cancel)
    assert ready["ready"] is True
    assert answer["status"] == "fail"
    assert "FAIL  build" in answer["text"] and "PASS  test" in answer["text"]


def test_ctrl_c_while_pytest_waits_for_the_verdict_is_an_interrupted_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")

    def interrupted(self: object, evidence: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(plugin_session.GateProcess, "verdict", interrupted)
    result, verdict = gated(pytester, "--agentgate=standard")
    assert verdict is None and result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*agentgate: no verdict: the run was interrupted*"])


def test_a_gate_process_that_fails_is_never_a_pass(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    monkeypatch.setattr(
        plugin_session,
        "HELPER_CODE",
        "import sys; sys.stdin.readline(); sys.exit('agentgate internal: broken')",
    )
    result, verdict = gated(pytester, "--agentgate=standard")
    assert verdict is None
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(
        [
            "*agentgate: no verdict: agentgate's gate process ended before it was ready "
            "(exit status 1):",
            "agentgate internal: broken",
        ]
    )
    # Nothing judged the change, so none of the project's code ran: no test either.
    assert "test_ok" not in result.stdout.str() and "1 passed" not in result.stdout.str()
    # It can also fail after answering, while judging; a failing run keeps pytest's status.
    pytester.makepyfile("def test_ok():\n    assert 0\n")
    ready = json.dumps({"ready": True, "coverage": False, "early": {"status": "pass"}})
    monkeypatch.setattr(
        plugin_session,
        "HELPER_CODE",
        f"import sys; sys.stdin.readline(); print({ready!r}, flush=True); "
        "sys.stdin.readline(); sys.exit(7)",
    )
    result, verdict = gated(pytester, "--agentgate=standard")
    assert verdict is None and result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*gate process ended without a verdict (exit status 7)"])


def test_output_before_the_gate_process_starts_is_not_a_message(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python can print before the gate process takes stdout (a noisy .pth file, sitecustomize).
    pytester.makepyfile("def test_ok():\n    pass\n")
    noisy = "print('hello from sitecustomize'); print('{}'[:1]); " + plugin_session.HELPER_CODE
    monkeypatch.setattr(plugin_session, "HELPER_CODE", noisy)
    result, verdict = gated(pytester, "--agentgate=standard")
    assert result.ret == 0 and verdict is not None and verdict["status"] == "pass"
    # ...and shown when no message follows.
    monkeypatch.setattr(
        plugin_session, "HELPER_CODE", "import os; print('only noise'); os.kill(os.getpid(), 9)"
    )
    result, verdict = gated(pytester, "--agentgate=standard")
    assert verdict is None and result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["*before it was ready (killed by signal 9):", "only noise"])


def test_the_projects_own_modules_do_not_shadow_the_gate_processs(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        yaml="raise ImportError('the project has a yaml.py of its own')",
        test_ok="def test_ok():\n    pass\n",
    )
    result, verdict = gated(pytester, "--agentgate=standard")
    assert result.ret == 0 and verdict is not None and verdict["status"] == "pass"


def test_a_python_that_cannot_start_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_ok():\n    pass\n")
    monkeypatch.setattr(sys, "executable", str(pytester.path / "no-such-python"))
    result, verdict = gated(pytester, "--agentgate=standard")
    assert verdict is None and result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot start its gate process (*no-such-python)*"])


def test_engine_judges_evidence_the_door_measured(tmp_path: Path) -> None:
    from pytest_agentgate.engine import Pipeline, Request
    from pytest_agentgate.gates.coverage import CoverageEvidence
    from pytest_agentgate.gates.test import SuiteEvidence
    from pytest_agentgate.registry import get_registry
    from pytest_agentgate.reports.model import Ratio, TestRun

    (tmp_path / ".git").mkdir()
    (tmp_path / "agentgate.yml").write_text(
        "gates:\n  test: {report: j.xml}\n  coverage: {report: c.json, lines: 50, branches: null, "
        "functions: null, statements: null}\n"
    )
    settings = resolve_config(tmp_path, profile="relaxed")
    run = SuiteEvidence(tmp_path, run=TestRun(total=2, passed=2, partial=["-k picked 2"]))
    report = CoverageReport("pytest-cov", "pytest-cov", lines=Ratio(1, 2))
    cov = CoverageEvidence(tmp_path, report=report, measured_as="data")
    request = Request(settings, door="pytest", run=False, door_evidence=("test", "coverage"))
    verdict = Pipeline(request, get_registry()).verdict({"test": run, "coverage": cov})
    assert [g.status for g in verdict.gates] == ["pass", "pass"]
    assert verdict.gates[0].notes == ["judged only the tests that ran: -k picked 2"]
    error = ReportError("pytest-cov", "measured nothing")
    missing = CoverageEvidence(tmp_path, error=error, measured_as="data")
    verdict = Pipeline(request, get_registry()).verdict({"test": run, "coverage": missing})
    assert verdict.gates[1].status == "fail"
    assert "measured nothing" in verdict.gates[1].problems[-1]


def test_runs_pytest_reads_unbalanced_quotes() -> None:
    assert runs_pytest("pytest -k 'unbalanced")
    assert runs_pytest("python -m pytest -q") and runs_pytest("/opt/venv/bin/py.test")
    assert not runs_pytest("npm test") and not runs_pytest(None)


# -- subprocess runs: real pytest-cov and pytest-xdist -----------------------------------------

PACKAGE = """
def classify(x):
    if x > 0:
        return "positive"
    return "other"


def unused():
    return 1
"""

PROJECT_TESTS = """
import pytest
from pkg import classify

def test_positive():
    assert classify(1) == "positive"

def test_wrong():
    assert classify(1) == "negative"

@pytest.mark.skip
def test_skipped():
    pass

@pytest.mark.xfail(strict=True)
def test_strict_xpass():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("boom")

def test_setup_error(broken):
    pass

@pytest.mark.parametrize("n", range(6))
def test_many(n):
    assert classify(n + 1) == "positive"
"""

COV_ARGS = ("-p", "no:cacheprovider", "--cov=pkg", "--cov-branch", "--cov-report=")


@pytest.fixture
def cov_project(pytester: pytest.Pytester) -> pytest.Pytester:
    return make_cov_project(pytester)


def make_cov_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A package, its tests and an ``agentgate.yml`` gating coverage under pytest-cov."""
    pytester.mkpydir("pkg").joinpath("__init__.py").write_text(PACKAGE)
    pytester.makepyfile(test_project=PROJECT_TESTS)
    pytester.makefile(
        ".yml",
        agentgate=(
            "profile: standard\n"
            "gates:\n"
            f"  test: {{command: '{PY} -m pytest {' '.join(COV_ARGS[:-1])} "
            "--cov-report=json:.agentgate/coverage.json'}\n"
            "  coverage: {report: .agentgate/coverage.json}\n"
        ),
    )
    (pytester.path / ".git").mkdir()
    return pytester


def numbers(verdict: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": verdict["status"],
        **{g["name"]: (g["status"], g["actual"]) for g in verdict["gates"]},
    }


def plugin_verdict(project: pytest.Pytester, *args: str) -> dict[str, Any]:
    out = project.path / "plugin.json"
    out.unlink(missing_ok=True)
    result = project.runpytest_subprocess(*COV_ARGS, f"--agentgate-json={out}", *args)
    assert out.exists(), result.stdout.str() + result.stderr.str()
    return json.loads(out.read_text())
