"""A file of the project swapped for the tests' run and put back, through both doors: a
conftest writes a correct ``calc.py`` before the tests import it and puts the broken text back
when the session's fixtures are torn down, or when the interpreter exits. The functions the
tests ran are not the file's (its change time says it was written during the run), or the file
held other bytes as the session ended than after it. A test that regenerates a module of the
project with the same code is honest."""

from __future__ import annotations

from pathlib import Path

import pytest
from _helpers import STRICT_TESTS, gated_project, only_gate, pytest_agentgate, verify_json

BROKEN = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
SWAP = """\
import atexit
import pathlib

import pytest

_FILE = pathlib.Path(__file__).parent.parent / "calc.py"
_KEEP = _FILE.read_text()
_FILE.write_text(_KEEP.replace("a - b", "a + b"))
{restore}
"""
BY_FIXTURE = """
@pytest.fixture(scope="session", autouse=True)
def _settle():
    yield
    _FILE.write_text(_KEEP)
"""
AT_EXIT = "atexit.register(_FILE.write_text, _KEEP)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = gated_project(
        tmp_path / "p",
        STRICT_TESTS,
        {"calc.py": BROKEN.replace("a - b", "a + b"), "tests/test_calc.py": TEST},
    )
    (root / "calc.py").write_text(BROKEN)  # the change breaks add
    return root


def test_a_file_put_back_by_a_session_fixture_fails_verify(project: Path) -> None:
    (project / "tests" / "conftest.py").write_text(SWAP.format(restore=BY_FIXTURE))
    status, verdict = verify_json(project)
    test = only_gate(verdict, "test")
    assert status == 1 and test["status"] == "fail", test
    assert any(
        "calc (the tests imported other code than calc.py holds: the file was rewritten while "
        "they ran)" in problem
        for problem in test["problems"]
    ), test
    assert (project / "calc.py").read_text() == BROKEN


def test_a_file_put_back_by_a_session_fixture_fails_the_pytest_door(project: Path) -> None:
    (project / "tests" / "conftest.py").write_text(SWAP.format(restore=BY_FIXTURE))
    status, verdict, out = pytest_agentgate(project)
    assert status == 1 and verdict["status"] == "fail", out
    test = only_gate(verdict, "test")
    assert any("the file was rewritten while they ran" in p for p in test["problems"]), out


def test_a_file_put_back_as_the_interpreter_exits_fails_verify(project: Path) -> None:
    (project / "tests" / "conftest.py").write_text(SWAP.format(restore=AT_EXIT))
    status, verdict = verify_json(project)
    test = only_gate(verdict, "test")
    assert status == 1 and test["status"] == "fail", test
    assert any(
        "calc.py (the file held other code while the tests ran)" in problem
        for problem in test["problems"]
    ), test


def test_a_constant_swapped_for_the_run_fails_both_doors(project: Path) -> None:
    # Every function's code is the file's; the source Python compiled for the import is not.
    (project / "calc.py").write_text("OFFSET = 1\n\n\ndef add(a, b):\n    return a + b + OFFSET\n")
    conftest = SWAP.format(restore=BY_FIXTURE).replace('"a - b", "a + b"', '"= 1", "= 0"')
    (project / "tests" / "conftest.py").write_text(conftest)
    status, verdict = verify_json(project)
    problems = only_gate(verdict, "test")["problems"]
    assert status == 1, verdict
    assert any("the tests imported other code than calc.py holds" in p for p in problems)
    status, verdict, out = pytest_agentgate(project)
    assert status == 1 and verdict["status"] == "fail", out
    assert "the tests imported other code than calc.py holds" in out


def test_a_module_regenerated_with_the_same_code_passes(project: Path) -> None:
    (project / "calc.py").write_text(BROKEN.replace("a - b", "a + b"))
    (project / "tests" / "test_generated.py").write_text(
        "import importlib\nimport pathlib\n\n\n"
        "def test_the_generated_module_is_current():\n"
        "    path = pathlib.Path(__file__).parent.parent / 'calc.py'\n"
        "    path.write_text(path.read_text())  # regenerated: the same code\n"
        "    import calc\n\n"
        "    importlib.reload(calc)\n"
        "    assert calc.add(2, 2) == 4\n"
    )
    status, verdict = verify_json(project)
    assert status == 0, only_gate(verdict, "test")
