"""pytest 9's own settings files (``pytest.toml``, ``.pytest.toml``) and pyproject's native
``[tool.pytest]`` table are read wherever pytest's other settings files are: what they add
to ``addopts``, ``testpaths`` or ``pythonpath`` is judged as it is in ``pytest.ini``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _helpers import STRICT_TESTS, change, gated_project, only_gate, verify_json

BASE = {
    "pkg/__init__.py": "",
    "pkg/tax.py": "def apply_tax(amount, rate):\n    return amount * (1 + rate)\n",
    "tests/test_tax.py": (
        "from pkg.tax import apply_tax\n\n\n"
        "def test_tax_zero():\n    assert apply_tax(100, 0) == 100\n\n\n"
        "def test_tax_half():\n    assert apply_tax(100, 0.5) == 150\n"
    ),
    "pyproject.toml": (
        '[project]\nname = "pkg"\nversion = "0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n'
    ),
}
DESELECT = 'addopts = ["--deselect", "tests/test_tax.py::test_tax_zero"]\n'


def findings(root: Path) -> list[tuple[str, str | None, int | None]]:
    _, verdict = verify_json(root)
    gate: dict[str, Any] = only_gate(verdict, "integrity")
    return sorted((f["code"], f["path"], f["line"]) for f in gate["findings"])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return gated_project(tmp_path / "proj", STRICT_TESTS, dict(BASE))


@pytest.mark.parametrize("name", ["pytest.toml", ".pytest.toml"])
def test_a_deselect_in_a_new_pytest_toml(root: Path, name: str) -> None:
    change(root, **{name: '[pytest]\ntestpaths = ["tests"]\npythonpath = ["."]\n' + DESELECT})
    assert ("selection-narrowed", name, 4) in findings(root)


def test_a_deselect_in_pyprojects_native_table(root: Path) -> None:
    text = (root / "pyproject.toml").read_text()
    change(
        root,
        **{"pyproject.toml": text.replace("[tool.pytest.ini_options]", "[tool.pytest]") + DESELECT},
    )
    assert ("selection-narrowed", "pyproject.toml", 8) in findings(root)


def test_a_plugin_from_outside_the_project_in_pytest_toml(root: Path) -> None:
    change(
        root,
        **{
            "pytest.toml": (
                '[pytest]\ntestpaths = ["tests"]\npythonpath = [".", "../.shared"]\n'
                'addopts = ["-p", "known_issues"]\n'
            )
        },
    )
    found = findings(root)
    assert ("result-rewritten", "pytest.toml", 4) in found
    assert ("tool-config-loosened", "pytest.toml", 3) in found


def test_pytest_toml_comes_before_pyproject(root: Path) -> None:
    """pytest reads ``pytest.toml`` and ignores pyproject's table: the base's ``testpaths``
    there, narrowed here, is a file no longer collected."""
    change(root, **{"pytest.toml": '[pytest]\ntestpaths = ["tests/unit"]\npythonpath = ["."]\n'})
    assert ("tool-config-loosened", "pytest.toml", 2) in findings(root)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.toml", '[pytest]\ntestpaths = ["tests"]\npythonpath = ["."]\naddopts = ["-ra"]\n'),
        (
            "pyproject.toml",
            '[project]\nname = "pkg"\nversion = "0"\n\n'
            '[tool.pytest]\ntestpaths = ["tests"]\npythonpath = ["."]\naddopts = ["-ra", "-q"]\n',
        ),
    ],
    ids=["pytest-toml", "native-table"],
)
def test_the_same_settings_moved_to_pytest_9s_files_pass(root: Path, name: str, text: str) -> None:
    change(root, **{name: text})
    status, verdict = verify_json(root)
    assert only_gate(verdict, "integrity")["findings"] == [], verdict
    assert status == 0, verdict
