"""Patch coverage under `pytest --agentgate`: the session measures coverage itself (pytest-cov)
and the gate process, which knows the change, measures the change's lines in it (red team 5:
an untested function added to a file whose other lines are all tested passed the pytest door
at 91% lines, while `agentgate verify` failed it on patch coverage)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _helpers import gated_project, only_gate, pytest_agentgate

CONFIG = """\
profile: strict
gates:
  test:
    command: >-
      {py} -m pytest -q -p no:cacheprovider --cov=calc --cov-branch
      --cov-report=json:.agentgate/coverage.json --junitxml=.agentgate/junit.xml
    report: .agentgate/junit.xml
  coverage:
    report: .agentgate/coverage.json
"""
FUNCTIONS = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(20))
TESTS = "import calc\n\n\n" + "".join(
    f"def test_f{i}():\n    assert calc.f{i}(1) == {i + 1}\n\n\n" for i in range(20)
)
SCALE = "def scale(x, k):\n    y = x * k\n    z = y + 1\n    w = z - 1\n    return w\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return gated_project(
        tmp_path / "p",
        CONFIG,
        {
            "calc.py": FUNCTIONS,
            "tests/test_calc.py": TESTS,
            "tests/conftest.py": "import sys\n\nsys.path.insert(0, '.')\n",
            ".gitignore": ".agentgate/\n__pycache__/\n.coverage\n",
        },
    )


def test_an_untested_function_fails_the_pytest_door_on_patch_coverage(project: Path) -> None:
    (project / "calc.py").write_text(FUNCTIONS + SCALE)
    status, verdict, out = pytest_agentgate(project)
    coverage = only_gate(verdict, "coverage")
    assert status == 1 and coverage["status"] == "fail", out
    assert coverage["actual"]["patch"] == 20.0
    assert "patch 20.00% of 5 changed lines (need 90.00%)" in out


def test_the_same_function_tested_passes(project: Path) -> None:
    (project / "calc.py").write_text(FUNCTIONS + SCALE)
    with (project / "tests" / "test_calc.py").open("a") as tests:
        tests.write("def test_scale():\n    assert calc.scale(2, 3) == 6\n")
    status, verdict, out = pytest_agentgate(project)
    assert status == 0, out
    assert only_gate(verdict, "coverage")["actual"]["patch"] == 100.0
