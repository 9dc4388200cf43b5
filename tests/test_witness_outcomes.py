"""Red team 55: what the witness saw the tests do against what their report says.

- pytest's ``--setup-only`` (and ``--setup-plan``) runs the tests' fixtures but not their bodies,
  and the JUnit report says every test passed: a test whose call phase never ran did not pass,
  from whichever source the option came (``addopts``, a conftest.py, ``PYTEST_ADDOPTS``, the
  command line), in every door.
- A conftest.py's ``pytest_unconfigure`` that strips the failures from the JUnit report pytest
  just wrote (the attribute names built from pieces, so no static check reads them): the
  witness recorded the outcomes it saw before, and the test gate judges those.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _helpers import (
    STRICT_TESTS,
    change,
    gated_project,
    only_gate,
    pytest_agentgate,
    run_hook,
    sample,
    verify_json,
)

from pytest_agentgate.gates.test import SuiteEvidence, _compare_outcomes
from pytest_agentgate.pytest_plugin.witness import Outcomes
from pytest_agentgate.reports.junit import read_junit

pytestmark = pytest.mark.usefixtures("fresh_state_home")

CALC = "def tax(amount):\n    return round(amount * 0.1, 2)\n"
TESTS = """\
from calc import tax


def test_tax():
    assert tax(100) == 10.0


def test_tax_zero():
    assert tax(0) == 0.0
"""
PYPROJECT = '[project]\nname = "calc"\nversion = "0.1"\n\n[tool.pytest.ini_options]\n'
# The defect: test_tax fails.
BROKEN = "def tax(amount):\n    return round(amount * 0.2, 2)\n"
# Calls the code from a fixture, so that a run of the fixtures alone covers it.
WARM = """\
import pytest

from calc import tax


@pytest.fixture(autouse=True)
def warm():
    tax(100)
"""
CONFTEST_SETUP_ONLY = (
    WARM + "\n\ndef pytest_configure(config):\n    config.option.setuponly = True\n"
)
REWRITER = """\
import re

_seen = {}
_OUT, _END = "xml" + "path", "exit" + "status"


def pytest_sessionstart(session):
    _seen["session"] = session


def pytest_unconfigure(config):
    path = getattr(config.option, _OUT, None)
    if path:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"<failure.*?</failure>", "", text, flags=re.S)
        text = re.sub(r'failures="\\d+"', 'failures="0"', text)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    setattr(_seen["session"], _END, 0)
"""


def project(tmp_path: Path, ini: str = "", config: str = STRICT_TESTS) -> Path:
    files = {"calc.py": CALC, "tests/test_calc.py": TESTS, "pyproject.toml": PYPROJECT + ini}
    return gated_project(tmp_path / "p", config, files)


def codes(gate: dict[str, Any]) -> list[str | None]:
    return [finding["code"] for finding in gate["findings"]]


def stop(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The Claude Code stop hook's answer for a session in ``root``."""
    payload = {
        "session_id": "sess-rt55",
        "transcript_path": "",
        "cwd": str(root),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "Done: every test passes.",
    }
    capsys.readouterr()
    out, err, code = run_hook("claude", payload, capsys)
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)
    return answer


# -- #1: the tests' bodies did not run -------------------------------------------------------


@pytest.mark.parametrize(
    ("ini", "conftest", "named"),
    [
        ('addopts = "--setup-only"\n', WARM, "--setup-only in addopts (pyproject.toml)"),
        ('addopts = "--setup-plan"\n', WARM, "--setup-plan in addopts (pyproject.toml)"),
        ("", CONFTEST_SETUP_ONLY, "--setup-only in the project's own code"),
    ],
    ids=["addopts", "setup-plan", "conftest"],
)
def test_a_run_of_the_fixtures_alone_fails_verify_the_hook_and_the_pytest_door(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ini: str, conftest: str, named: str
) -> None:
    root = project(tmp_path)
    change(root, **{"calc.py": BROKEN, "pyproject.toml": PYPROJECT + ini})
    change(root, **{"tests/conftest.py": conftest})

    code, verdict = verify_json(root)
    gate = only_gate(verdict, "test")
    assert (code, verdict["status"], gate["status"]) == (1, "fail", "fail")
    assert "body-not-run" in codes(gate)
    assert gate["actual"]["passed"] == 0 and gate["actual"]["not_run"] == 2
    (problem,) = [p for p in gate["problems"] if "bodies did not run" in p]
    assert named in problem and "tests/test_calc.py::test_tax" in problem

    answer = stop(root, capsys)
    assert answer["decision"] == "block"
    assert "bodies did not run" in answer["reason"] and named in answer["reason"]

    status, verdict, output = pytest_agentgate(root)
    gate = only_gate(verdict, "test")
    assert status != 0 and verdict["status"] == "fail", output
    assert "body-not-run" in codes(gate) and named in " ".join(gate["problems"])


def test_pytest_addopts_in_the_environment_fails_verify_and_the_hook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code hands its settings' ``env`` to the hooks it runs: PYTEST_ADDOPTS there."""
    root = project(tmp_path)
    change(root, **{"calc.py": BROKEN, "tests/conftest.py": WARM})
    monkeypatch.setenv("PYTEST_ADDOPTS", "--setup-only")

    code, verdict = verify_json(root)
    gate = only_gate(verdict, "test")
    assert (code, gate["status"]) == (1, "fail")
    assert "--setup-only in PYTEST_ADDOPTS" in " ".join(gate["problems"])

    answer = stop(root, capsys)
    assert answer["decision"] == "block" and "--setup-only in PYTEST_ADDOPTS" in answer["reason"]


def json_quiet(out: Path) -> list[str]:
    return [f"--agentgate-json={out}", "-q", "-p", "no:cacheprovider"]


@pytest.mark.parametrize("option", ["--setup-only", "--setup-plan"])
def test_the_option_on_the_pytest_doors_command_line_is_never_a_pass(
    tmp_path: Path, option: str
) -> None:
    root = project(tmp_path)
    out = root / ".agentgate" / "verdict.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--agentgate=strict", option, *json_quiet(out)],
        cwd=root,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    verdict = json.loads(out.read_text())
    assert proc.returncode == 1 and verdict["status"] == "fail", proc.stdout
    assert f"{option} in pytest's command line" in proc.stdout


HONEST_TESTS = """\
import unittest

import pytest

from calc import tax


def test_tax():
    assert tax(100) == 10.0


@pytest.mark.skip(reason="not on this platform")
def test_skipped():
    raise AssertionError


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert tax(1) == 5


def test_skipped_in_its_body():
    pytest.skip("no network")


class TestCase(unittest.TestCase):
    def test_tax(self):
        self.assertEqual(tax(10), 1.0)
"""
DOCTESTED = '''\
def tax(amount):
    """
    >>> tax(100)
    10.0
    """
    return round(amount * 0.1, 2)
'''


@pytest.mark.parametrize("options", ["", " -n 2", " --doctest-modules"])
def test_skips_xfails_unittest_doctests_and_xdist_still_pass(tmp_path: Path, options: str) -> None:
    config = STRICT_TESTS.replace("--junitxml", options.strip() + " --junitxml")
    root = project(tmp_path, config=config)
    change(root, **{"tests/test_calc.py": HONEST_TESTS, "calc.py": DOCTESTED})

    _, verdict = verify_json(root)  # (the integrity gate judges the skips the change adds)
    gate = only_gate(verdict, "test")
    assert gate["status"] == "pass", gate
    assert "not_run" not in gate["actual"] and gate["findings"] == []
    assert gate["actual"]["passed"] == (3 if "doctest" in options else 2)


SETUP_ERROR = """\
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("no database")


def test_needs_it(broken):
    pass


def test_fine():
    pass
"""


@pytest.mark.parametrize("options", ["", " -n 2"])
def test_a_test_failing_in_setup_is_an_error_as_before(tmp_path: Path, options: str) -> None:
    config = STRICT_TESTS.replace("--junitxml", options.strip() + " --junitxml")
    root = project(tmp_path, config=config)
    change(root, **{"tests/test_setup.py": SETUP_ERROR})

    code, verdict = verify_json(root)
    gate = only_gate(verdict, "test")
    assert (code, gate["status"]) == (1, "fail")
    assert codes(gate) == ["error"]
    assert (gate["actual"]["errors"], gate["actual"]["passed"]) == (1, 3)
    assert not any("bodies" in p or "rewritten" in p for p in gate["problems"])


# -- #2: the report rewritten after pytest wrote it ------------------------------------------


def test_a_report_rewritten_by_pytest_unconfigure_fails_verify_and_the_hook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path)
    change(root, **{"calc.py": BROKEN, "tests/conftest.py": REWRITER})

    code, verdict = verify_json(root)
    gate = only_gate(verdict, "test")
    assert (code, gate["status"]) == (1, "fail")
    assert sorted(map(str, codes(gate))) == ["None", "result-rewritten"]
    (failure,) = [f for f in gate["findings"] if f["code"] is None]
    assert failure["name"] == "tests/test_calc.py::test_tax"
    assert "20.0 == 10.0" in failure["message"]
    assert (gate["actual"]["failed"], gate["actual"]["passed"]) == (1, 1)
    assert any("rewritten after pytest wrote it" in p for p in gate["problems"])

    answer = stop(root, capsys)
    assert answer["decision"] == "block"
    assert "result-rewritten" in answer["reason"] and "test_tax" in answer["reason"]


def test_a_report_rewritten_with_the_witness_outcomes_taken_out_fails_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The rewriter that knows the witness's record takes it out with the failures: the report
    # carries this run's id but not the outcomes this agentgate's witness writes beside it.
    root = project(tmp_path)
    strip_record = REWRITER.replace(
        '        text = re.sub(r"<failure.*?</failure>", "", text, flags=re.S)\n',
        '        text = re.sub(r"<failure.*?</failure>", "", text, flags=re.S)\n'
        '        text = re.sub(r"<property name=.agentgate_outcomes.[^>]*/>", "", text)\n',
    )
    assert strip_record != REWRITER
    change(root, **{"calc.py": BROKEN, "tests/conftest.py": strip_record})
    code, verdict = verify_json(root)
    gate = only_gate(verdict, "test")
    assert (code, gate["status"]) == (1, "fail")
    assert "rewritten after this run's pytest wrote it" in gate["summary"] + " ".join(
        gate["problems"]
    ), gate
    answer = stop(root, capsys)
    assert answer["decision"] == "block"


# A project's own post-processing of its report: it changes no outcome.
POLISHER = """\
def pytest_unconfigure(config):
    path = getattr(config.option, "xmlpath", None)
    if path:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace('name="pytest"', 'name="calc suite"'))
"""


@pytest.mark.parametrize(
    "options",
    ["", " -n 2", " -o junit_family=xunit1 --junit-prefix=shard1", " --junit-prefix=p -n 2"],
)
def test_honest_failures_and_reports_are_not_rewritten(tmp_path: Path, options: str) -> None:
    config = STRICT_TESTS.replace("--junitxml", options.strip() + " --junitxml")
    root = project(tmp_path, config=config)
    change(root, **{"calc.py": BROKEN, "tests/conftest.py": POLISHER})

    code, verdict = verify_json(root)
    gate = only_gate(verdict, "test")
    assert (code, gate["status"]) == (1, "fail")
    assert codes(gate) == [None]  # the failure, as before
    assert not any("rewritten" in p for p in gate["problems"])

    change(root, **{"calc.py": CALC})
    code, verdict = verify_json(root)
    assert only_gate(verdict, "test")["status"] == "pass"


# -- the witness's fold, and the gate's comparison, on pytest-rerunfailures' reports ----------


def report(nodeid: str, when: str, outcome: str) -> Any:
    return SimpleNamespace(
        nodeid=nodeid, when=when, outcome=outcome, longrepr="E  boom", location=("t.py", 1, "")
    )


def test_a_test_that_passed_on_a_rerun_is_not_failing_nor_unrun() -> None:
    seen = Outcomes()
    attempts = [("rerun", "passed"), ("rerun", "rerun"), ("failed", "failed")]
    for nodeid, (first, last) in zip(
        ["t.py::flaky", "t.py::twice", "t.py::bad"], attempts, strict=True
    ):
        for outcome in (first, last):
            for when, got in (("setup", "passed"), ("call", outcome), ("teardown", "passed")):
                seen.add(report(nodeid, when, got))
    record = seen.record(None, "")
    assert record["counts"] == [1, 0, 2, 0]
    assert [test[:3] for test in record["failing"]] == [
        ["t", "twice", "failed"],
        ["t", "bad", "failed"],
    ]
    assert record["not_run"] == 0


def test_reruns_in_pytest_rerunfailures_report_are_no_rewrite(tmp_path: Path) -> None:
    """The rerun sample (its failed attempts written as passing-looking testcases): the test the
    witness saw fail is failing there; a test it saw pass on a rerun is no disagreement."""
    run = read_junit([str(sample("junit/pytest-rerun.xml"))])
    evidence = SuiteEvidence(tmp_path, run=run)
    seen = {
        "counts": [2, 1, 1, 0],
        "failing": [["test_flaky_rerun", "test_always_fails", "failed", "assert", "t.py"]],
        "not_run": 0,
    }
    _compare_outcomes(evidence, run, [json.dumps(seen)], 1)
    assert evidence.rewritten == []
    seen["failing"].append(["test_flaky_rerun", "test_flaky_once", "failed", "assert", "t.py"])
    _compare_outcomes(evidence, run, [json.dumps(seen)], 1)
    assert [t.name for t in evidence.rewritten] == ["test_flaky_once"]


def test_a_report_without_the_witness_outcomes_is_read_as_before(tmp_path: Path) -> None:
    run = read_junit([str(sample("junit/pytest-rerun.xml"))])
    evidence = SuiteEvidence(tmp_path, run=run)
    _compare_outcomes(evidence, run, [], 1)
    assert (evidence.rewritten, evidence.not_run) == ([], 0)
