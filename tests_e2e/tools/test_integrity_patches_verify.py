"""Patches of pytest and the tools it loads, wherever pytest loads them, through
`agentgate verify`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import (
    REPORT_PATCHER,
    REWRITER,
    STRICT_TESTS,
    gated_project,
    git,
    only_gate,
    verify_json,
)

PATCHER = REPORT_PATCHER


FAILING = "def test_add():\n    assert 1 + 1 == 3\n"


def findings(verdict: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["path"]) for f in only_gate(verdict, "integrity")["findings"]]


INDIRECT = """\
import importlib

_module = importlib.import_module("_py" + "test.reports")
_class = getattr(_module, "Test" + "Report")
_made = _class.from_item_and_call.__func__


def _passed(cls, item, call):
    report = _made(cls, item, call)
    if report.failed:
        report.outcome = "passed"
    return report


setattr(_class, "from_item" + "_and_call", classmethod(_passed))
"""


GENERATED = """\
import importlib

_module = importlib.import_module("_py" + "test.reports")
_class = getattr(_module, "Test" + "Report")
_space = {"_made": _class.from_item_and_call.__func__}
exec(
    "def _passed(cls, item, call):\\n"
    "    report = _made(cls, item, call)\\n"
    "    report.outcome = 'passed'\\n"
    "    return report\\n",
    _space,
)
setattr(_class, "from_item" + "_and_call", classmethod(_space["_passed"]))
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("AGENTGATE_RUNNING", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    files = {"tests/test_calc.py": FAILING, ".gitignore": "generated/\nscratch_*.py\n"}
    return gated_project(tmp_path / "proj", STRICT_TESTS, files)


def test_the_failing_project_fails(project: Path) -> None:
    code, verdict = verify_json(project)
    assert code == 1 and findings(verdict) == []


@pytest.mark.parametrize(
    "where",
    ["conftest.py", "tests/test_zz_setup.py", "generated/conftest.py", "generated/a/test_x.py"],
)
def test_a_patch_of_pytest_fails_the_gate_wherever_pytest_loads_it(
    project: Path, where: str
) -> None:
    # The trick: one file that replaces pytest's report maker as pytest imports it; every
    # failure after it is a pass. `generated/` is a folder the project's .gitignore hides.
    path = project / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PATCHER)
    code, verdict = verify_json(project)
    assert code == 1 and ("result-rewritten", where) in findings(verdict)  # read in the source
    test = only_gate(verdict, "test")
    assert test["status"] == "fail"  # and seen at run time (below)
    replaced = "code of the test tools or of the project under test was replaced"
    assert any(replaced in p for p in test["problems"])


def test_a_hook_in_a_conftest_the_gitignore_hides_is_seen(project: Path) -> None:
    (project / "generated").mkdir()
    (project / "generated" / "conftest.py").write_text(REWRITER)
    code, verdict = verify_json(project)
    assert code == 1 and ("result-rewritten", "generated/conftest.py") in findings(verdict)


def test_what_pytest_does_not_load_in_ignored_folders_is_not_read(project: Path) -> None:
    # Fixed code, and ignored files pytest never imports (data, a virtualenv, a dot-folder).
    (project / "tests" / "test_calc.py").write_text("def test_add():\n    assert 1 + 1 == 2\n")
    git(project, "commit", "-qam", "fix")
    for where in (
        "generated/helpers.py",
        "generated/venv/lib/test_x.py",
        "generated/.x/conftest.py",
    ):
        path = project / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PATCHER)
    (project / "generated" / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    code, verdict = verify_json(project)
    assert findings(verdict) == []
    assert code == 0, verdict


@pytest.mark.parametrize(
    ("where", "workers"),
    [("conftest.py", None), ("tests/test_zz_setup.py", "2")],
    ids=["conftest-serial", "test-module-xdist"],
)
def test_a_tool_replaced_out_of_sight_fails_the_test_gate(
    project: Path, where: str, workers: str | None
) -> None:
    # The trick: the patch of the report maker, with names computed so that no reading of the
    # source finds it. Both doors see it when the tests have been imported.
    (project / where).write_text(INDIRECT)
    if workers:
        config = (project / "agentgate.yml").read_text().replace(" -q ", f" -q -n {workers} ")
        (project / "agentgate.yml").write_text(config)
        git(project, "commit", "-qam", "xdist")
    code, verdict = verify_json(project)
    test = only_gate(verdict, "test")
    assert code == 1 and test["status"] == "fail"
    assert findings(verdict) == []  # nothing to read in the source...
    (problem,) = [p for p in test["problems"] if "replaced" in p]
    assert "_pytest.reports.TestReport.from_item_and_call (" in problem  # ...seen at run time
    assert f"{where}:8)" in problem
    door = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--agentgate=strict"]
        + (["-n", workers] if workers else []),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert door.returncode != 0
    assert "code of the test tools or of the project under test was replaced" in door.stdout


def test_a_tool_replaced_by_code_made_at_run_time_fails_the_test_gate(project: Path) -> None:
    # The same trick with the stand-in compiled by exec: its code has no file ("<string>"), as
    # the methods dataclasses and namedtuple make have none. Those stay fine (pytest's own
    # dataclasses are all through this run); a tool's function made so is replaced.
    (project / "conftest.py").write_text(GENERATED)
    code, verdict = verify_json(project)
    test = only_gate(verdict, "test")
    assert code == 1 and test["status"] == "fail"
    (problem,) = [p for p in test["problems"] if "replaced" in p]
    assert "_pytest.reports.TestReport.from_item_and_call (code made at run time" in problem


def test_a_tool_patched_by_monkeypatch_in_a_test_and_undone_is_fine(project: Path) -> None:
    (project / "tests" / "test_calc.py").write_text(
        "import _pytest.reports\n\n\n"
        "def test_add(monkeypatch):\n"
        "    monkeypatch.setattr(_pytest.reports.TestReport, 'extra', 1, raising=False)\n"
        "    assert 1 + 1 == 2\n"
    )
    git(project, "commit", "-qam", "fix")
    code, verdict = verify_json(project)
    assert code == 0, verdict
