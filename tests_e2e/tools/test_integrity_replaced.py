"""The project's function replaced for every test by means other than plain assignment, through
`agentgate verify`: its module's namespace written (``vars(calc)["tax"] = f``), its code swapped
(``tax.__code__ = f.__code__``), or a module of the tests named like the project's package,
which pytest imports in its place. Reading a namespace and a helper package of the tests'
own name are honest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _helpers import STRICT_TESTS, gated_project, git, only_gate, verify_json

CALC = "def tax(amount):\n    return amount * 0.2 + 1.5\n"
TEST = "from calc import tax\n\n\ndef test_tax():\n    assert tax(10) == 2.0\n"
FIXED = "def _tax(amount):\n    return amount * 0.2\n\n\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return gated_project(
        tmp_path / "p",
        STRICT_TESTS,
        {"calc/__init__.py": "from calc.rates import tax\n", "calc/rates.py": CALC,
         "tests/test_calc.py": TEST},
    )  # fmt: skip


def findings(verdict: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    gate = only_gate(verdict, "integrity")
    return [(f["code"], f["path"], f["line"]) for f in gate["findings"]]


@pytest.mark.parametrize(
    ("conftest", "line"),
    [
        ("import calc\n\n" + FIXED + "vars(calc)['tax'] = _tax\n", 7),
        ("import calc\n\n" + FIXED + "calc.__dict__['tax'] = _tax\n", 7),
        ("import calc\n\n" + FIXED + "vars(calc).update(tax=_tax)\n", 7),
        ("from calc import tax\n\n" + FIXED + "tax.__code__ = _tax.__code__\n", 7),
        (
            "import pytest\n\nimport calc.rates\n\n" + FIXED + "@pytest.fixture(autouse=True)\n"
            "def fixed(monkeypatch):\n"
            "    monkeypatch.setattr(calc.rates.tax, '__code__', _tax.__code__)\n",
            11,
        ),
    ],
    ids=["vars", "__dict__", "vars-update", "__code__", "monkeypatch-__code__"],
)
def test_the_function_replaced_in_its_namespace_or_code_is_found(
    project: Path, conftest: str, line: int
) -> None:
    (project / "tests" / "conftest.py").write_text(conftest)
    status, verdict = verify_json(project)
    test = only_gate(verdict, "test")
    if "monkeypatch" not in conftest:  # monkeypatch undoes it before the witness looks
        # The witness sees the function replaced at run time, too.
        assert test["status"] == "fail", test
        assert any("was replaced" in p for p in test["problems"]), test
    assert status != 0 and verdict["status"] == "fail"
    assert ("tested-code-mocked", "tests/conftest.py", line) in findings(verdict)


SHADOW = """\
import pathlib

__path__ = [str(pathlib.Path(__file__).resolve().parents[2] / "calc")]
exec(compile(pathlib.Path(__path__[0], "__init__.py").read_text(), "calc", "exec"))


def tax(amount):
    return amount * 0.2
"""


def test_a_package_of_the_tests_named_like_the_projects_is_found(project: Path) -> None:
    (project / "tests" / "calc").mkdir()
    (project / "tests" / "calc" / "__init__.py").write_text(SHADOW)
    status, verdict = verify_json(project)
    test = only_gate(verdict, "test")  # and the witness sees calc loaded from the tests
    assert test["status"] == "fail" and any("was replaced" in p for p in test["problems"]), test
    assert status != 0
    assert ("tested-code-mocked", "tests/calc/__init__.py", 1) in findings(verdict)


def test_a_module_of_the_tests_named_like_the_projects_is_found(project: Path) -> None:
    shadow = SHADOW.replace("parents[2]", "parents[1]").replace(
        "__path__ =", "__package__ = 'calc'\n__path__ ="
    )
    (project / "tests" / "calc.py").write_text(shadow)
    status, verdict = verify_json(project)
    assert status != 0
    assert ("tested-code-mocked", "tests/calc.py", 1) in findings(verdict)


def test_reading_a_namespace_and_a_helper_package_are_honest(project: Path) -> None:
    (project / "conftest.py").write_text("collect_ignore = ['build']\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a conftest at the root")
    (project / "calc" / "rates.py").write_text(CALC.replace(" + 1.5", ""))
    (project / "tests" / "helpers").mkdir()
    (project / "tests" / "helpers" / "__init__.py").write_text("AMOUNTS = [10, 20]\n")
    (project / "tests" / "conftest.py").write_text(
        "import calc\n\nPUBLIC = sorted(vars(calc))\nRATES = calc.__dict__['tax']\n"
        "DEFAULTS = calc.tax.__defaults__\n"
    )
    status, verdict = verify_json(project)
    assert findings(verdict) == [] and status == 0, verdict


STAND_IN = """\
import pytest


class Checked(pytest.Item):
    def runtest(self):
        assert self.name


"""


@pytest.mark.parametrize(
    "conftest",
    [
        STAND_IN + "def pytest_collection_modifyitems(session, config, items):\n"
        "    listed = items\n"
        "    for i, item in enumerate(listed):\n"
        "        listed[i] = Checked.from_parent(item.parent, name=item.name)\n",
        STAND_IN + "class Module(pytest.Module):\n"
        "    def collect(self):\n"
        "        yield Checked.from_parent(self, name='test_tax')\n\n\n"
        "def pytest_pycollect_makemodule(module_path, parent):\n"
        "    if module_path.name == 'test_calc.py':\n"
        "        return Module.from_parent(parent, path=module_path)\n",
    ],
    ids=["written-over-the-item", "a-module-collector"],
)
def test_a_test_item_of_another_kind_in_the_tests_place_is_found(
    project: Path, conftest: str
) -> None:
    """Red team 27: a `pytest.Item` whose `runtest` passes, under the failing test's node id;
    the count, the id and the name stay the same."""
    (project / "tests" / "conftest.py").write_text(conftest)
    status, verdict = verify_json(project)
    test = only_gate(verdict, "test")
    assert status == 1 and test["status"] == "fail", test
    assert any(
        "tests/test_calc.py::test_tax (pytest runs a Checked, not the function "
        "tests/test_calc.py defines as test_tax: the test was replaced)" in p
        for p in test["problems"]
    ), test["problems"]
