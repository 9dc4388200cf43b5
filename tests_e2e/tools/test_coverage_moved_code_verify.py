"""Changed code coverage.py never measured, through `agentgate verify`: moved out of the measured
package, or in a folder of it without `__init__.py`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _helpers import gated_project, only_gate, verify_json

CONFIG = """\
profile: strict
gates:
  test:
    command: >-
      {py} -m coverage run --branch --source=pkg --data-file=.agentgate/.coverage
      -m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml
    report: .agentgate/junit.xml
  coverage:
    report: .agentgate/.coverage
    format: coverage-data
"""


CALC = "def total(x):\n    return x * 2\n"


DISCOUNT = "def discount(x):\n    if x > 100:\n        return x - 10\n    return x\n"


TESTS = "from pkg.calc import total\n\n\ndef test_total():\n    assert total(2) == 4\n"


def coverage_gate(root: Path) -> tuple[int, dict[str, Any]]:
    code, verdict = verify_json(root)
    return code, only_gate(verdict, "coverage")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("AGENTGATE_RUNNING", raising=False)
    files = {
        "pkg/__init__.py": "",
        "pkg/calc.py": CALC,
        "tests/test_calc.py": TESTS,
        "tests/conftest.py": "import sys\nsys.path.insert(0, '.')\n",
        ".gitignore": ".agentgate/\n__pycache__/\n",
    }
    return gated_project(tmp_path / "proj", CONFIG, files)


def test_untested_code_in_the_package_fails(project: Path) -> None:
    (project / "pkg" / "calc.py").write_text(CALC + "\n\n" + DISCOUNT)
    code, gate = coverage_gate(project)
    assert code == 1 and gate["status"] == "fail"


def test_the_same_code_moved_outside_the_measured_package_still_fails(project: Path) -> None:
    # The trick: the untested function in a root-level module, re-exported by the package.
    (project / "pricing.py").write_text(DISCOUNT)
    (project / "pkg" / "calc.py").write_text("from pricing import discount  # noqa: F401\n" + CALC)
    code, gate = coverage_gate(project)
    assert code == 1 and gate["status"] == "fail"
    (problem,) = [p for p in gate["problems"] if "outside what coverage measures" in p]
    assert "pricing.py (imported by pkg/calc.py)" in problem


def test_changed_code_outside_the_package_that_nothing_measured_imports_passes(
    project: Path,
) -> None:
    (project / "scripts").mkdir()
    (project / "scripts" / "release.py").write_text("print('release')\n")
    code, gate = coverage_gate(project)
    assert code == 0 and gate["status"] == "pass"
    assert "outside what coverage measures" not in json.dumps(gate)


def test_untested_code_in_a_folder_of_the_package_without_init_fails(project: Path) -> None:
    # A namespace folder inside the measured package: coverage.py reports no file of it that no
    # test imported (include_namespace_packages is off by default), so the new module's lines
    # were in no figure. They are the package's code, and no test ran them.
    (project / "pkg" / "export").mkdir()
    (project / "pkg" / "export" / "rows.py").write_text(DISCOUNT + "\n\n" + CALC)
    code, gate = coverage_gate(project)
    assert code == 1 and gate["status"] == "fail"
    assert "patch 0.00% of 6 changed lines" in gate["summary"], gate["summary"]
    assert any(f["path"] == "pkg/export/rows.py" for f in gate["findings"]), gate["findings"]


def test_tested_code_in_a_folder_of_the_package_without_init_passes(project: Path) -> None:
    (project / "pkg" / "export").mkdir()
    (project / "pkg" / "export" / "rows.py").write_text(DISCOUNT)
    test = "from pkg.export.rows import discount\n\n\ndef test_discount():\n"
    test += "    assert discount(200) == 190\n    assert discount(5) == 5\n"
    (project / "tests" / "test_rows.py").write_text(test)
    code, gate = coverage_gate(project)
    assert code == 0 and gate["status"] == "pass", gate
