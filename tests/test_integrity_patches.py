"""Code that patches the test tools themselves (integrity/patches.py), and the files pytest loads
from folders the project's own .gitignore hides (git.pytest_loads_in)."""

from __future__ import annotations

import ast
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

from pytest_agentgate.integrity.patches import TOOLS, own_packages, patched


def targets(code: str, tools: frozenset[str] = TOOLS) -> list[str]:
    return [target for target, _ in patched(ast.parse(code), tools)]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "import _pytest.reports\n"
            "_pytest.reports.TestReport.from_item_and_call = classmethod(f)\n",
            ["_pytest.reports.TestReport.from_item_and_call"],
        ),
        (
            "from _pytest.reports import TestReport as R\nR.outcome = 'passed'\n",
            ["_pytest.reports.TestReport.outcome"],
        ),
        (
            "import _pytest.runner as runner\ndel runner.call_and_report\n",
            ["_pytest.runner.call_and_report"],
        ),
        (
            "from _pytest import junitxml\n"
            "setattr(junitxml.LogXML, 'pytest_runtest_logreport', f)\n",
            ["_pytest.junitxml.LogXML.pytest_runtest_logreport"],
        ),
        (
            "def test_x(monkeypatch):\n"
            "    monkeypatch.setattr('_pytest.reports.TestReport.from_item_and_call', f)\n",
            ["_pytest.reports.TestReport.from_item_and_call"],
        ),
        (
            "from unittest import mock\n@mock.patch('coverage.Coverage.report')\ndef test_x(m):\n"
            "    pass\n",
            ["coverage.Coverage.report"],
        ),
        (
            "from unittest.mock import patch\nimport pluggy\n"
            "with patch.object(pluggy.PluginManager, 'hook'):\n    pass\n",
            ["pluggy.PluginManager.hook"],
        ),
        (
            "import pytest_agentgate.pytest_plugin.witness as w\nw.COUNTS, x = (), 1\n",
            ["pytest_agentgate.pytest_plugin.witness.COUNTS"],
        ),
        ("import xdist\nxdist.plugin.x += 1\n", ["xdist.plugin.x"]),
        (
            "from unittest import TestCase\nTestCase.assertEqual = lambda *a, **k: None\n",
            ["unittest.TestCase.assertEqual"],
        ),
        ("import pytest\npytest.skip.Exception = AssertionError\n", ["pytest.skip.Exception"]),
    ],
)
def test_patches_of_the_tools_are_found(code: str, expected: list[str]) -> None:
    assert targets(code) == expected


@pytest.mark.parametrize(
    "code",
    [
        "from _pytest.fixtures import FixtureRequest\n\ndef f(request: FixtureRequest): ...\n",
        "import pytest\n\nx = pytest.approx(1)\npytest_plugins = ['a']\n",
        "import calc\n\ndef test_x(monkeypatch):\n    monkeypatch.setattr(calc, 'add', f)\n",
        "def test_x(monkeypatch):\n    monkeypatch.setattr('calc.add', f)\n",
        "import pytest\n\nclass T:\n    def setup_method(self):\n        self.mark = pytest.mark\n",
        "import _pytest\n_pytest = None\n",  # rebinding a name patches nothing
        "from unittest import mock\n@mock.patch('os.getcwd')\ndef test_x(m): ...\n",
        "import coverage\nsetattr(obj, 'coverage', 1)\n",
        "from unittest import mock\n\ndef test_x():\n    m = mock.Mock()\n    m.return_value = 1\n",
        "from unittest import TestCase\n\nclass T(TestCase):\n    maxDiff = None\n",
    ],
)
def test_using_the_tools_is_not_patching_them(code: str) -> None:
    assert targets(code) == []


def test_a_projects_own_package_is_not_a_tool(tmp_path: Path) -> None:
    assert own_packages(tmp_path) == frozenset()
    (tmp_path / "src" / "pluggy").mkdir(parents=True)
    (tmp_path / "src" / "pluggy" / "__init__.py").write_text("")
    (tmp_path / "coverage").mkdir()
    (tmp_path / "coverage" / "__init__.py").write_text("")
    assert own_packages(tmp_path) == {"pluggy", "coverage"}
    assert targets("import pluggy\npluggy.x = 1\n", TOOLS - own_packages(tmp_path)) == []


# -- through the doors, on a real repository -----------------------------------------------------

PATCHER = REPORT_PATCHER
FAILING = "def test_add():\n    assert 1 + 1 == 3\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("AGENTGATE_RUNNING", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    files = {"tests/test_calc.py": FAILING, ".gitignore": "generated/\nscratch_*.py\n"}
    return gated_project(tmp_path / "proj", STRICT_TESTS, files)


def findings(verdict: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["code"], f["path"]) for f in only_gate(verdict, "integrity")["findings"]]


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
    assert any("code of the test tools was replaced" in p for p in test["problems"])


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


# -- the same at run time: the witness sees what reading the source cannot ------------------------

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


def test_replaced_names_what_the_project_wrote_over_a_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    import _pytest.junitxml
    import _pytest.reports

    from pytest_agentgate.pytest_plugin.tampering import replaced

    assert replaced() == []

    def passed(cls: Any, item: Any, call: Any) -> None: ...

    # A method of its own beside pytest's: this test's own report is still made by pytest.
    with monkeypatch.context() as patch:
        patch.setattr(_pytest.reports.TestReport, "probe", classmethod(passed), raising=False)
        found = replaced()
    assert len(found) == 1 and found[0].startswith("_pytest.reports.TestReport.probe (")
    assert f"{Path(__file__)}:" in found[0]
    assert replaced() == []
    # A tool's plugin object, patched on the object itself.
    writer = _pytest.junitxml.LogXML.__new__(_pytest.junitxml.LogXML)
    writer.pytest_runtest_logreport = passed  # type: ignore[method-assign]
    (found,) = replaced([writer, object()])
    assert found.startswith("_pytest.junitxml.LogXML().pytest_runtest_logreport (")


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
    assert "code of the test tools was replaced" in door.stdout


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


def test_generated_code_is_replaced_unless_a_class_made_its_own_dunder() -> None:
    import _pytest.reports

    from pytest_agentgate.pytest_plugin.tampering import replaced

    space: dict[str, Any] = {}
    exec("def __init__(self, *a, **k):\n    pass\n", space)
    fake = space["__init__"]
    fake.__qualname__ = "TestReport.__init__"  # named as a dataclass names its own
    original = _pytest.reports.TestReport.__init__
    try:
        _pytest.reports.TestReport.__init__ = fake  # type: ignore[method-assign]
        found = replaced()
    finally:
        _pytest.reports.TestReport.__init__ = original  # type: ignore[method-assign]
    # TestReport is no dataclass: no generated __init__ is its own.
    assert [f.split(" (")[0] for f in found] == ["_pytest.reports.TestReport.__init__"]
    assert replaced() == []


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


def test_a_tool_module_loaded_from_the_project_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    from pytest_agentgate.pytest_plugin.tampering import replaced

    planted = tmp_path / ".agentgate" / "pytest_cov.py"
    planted.parent.mkdir()
    planted.write_text("")
    fake = types.ModuleType("pytest_cov")
    fake.__file__ = str(planted)
    monkeypatch.setitem(sys.modules, "pytest_cov", fake)
    assert f"pytest_cov (loaded from {planted}, in place of the installed one)" in replaced(
        (), str(tmp_path)
    )
    # The project's own package of that name is its own.
    own = tmp_path / "src" / "pytest_cov" / "__init__.py"
    own.parent.mkdir(parents=True)
    own.write_text("")
    fake.__file__ = str(own)
    assert not [entry for entry in replaced((), str(tmp_path)) if "in place of" in entry]
