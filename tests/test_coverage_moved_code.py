"""Changed code moved out of what coverage measures, and called from what it measures, fails
patch coverage under a profile that gates it (gates/patch.py ``imported_unmeasured``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentgate.gates.patch import PatchCoverage, imported_unmeasured, module_names


@pytest.mark.parametrize(
    ("path", "names"),
    [
        ("pricing.py", ["pricing"]),
        ("src/shop/tax.py", ["src.shop.tax", "shop.tax"]),
        ("tools/__init__.py", ["tools"]),
        ("README.md", []),
    ],
)
def test_module_names(path: str, names: list[str]) -> None:
    assert module_names(path) == names


def test_imports_are_read_by_absolute_name() -> None:
    patch = PatchCoverage(unmeasured=[("pricing.py", 4), ("shop/tax.py", 2), ("other.py", 1)])
    texts = {
        "pkg/a.py": "import os, pricing\n",
        "pkg/b.py": "from shop.tax import rate\n",
        "pkg/c.py": "# import other\nx = 'from other import y'\n",
    }
    assert imported_unmeasured(patch, texts) == [
        ("pricing.py", "pkg/a.py"),
        ("shop/tax.py", "pkg/b.py"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "from \\\n    pricing import pct\n",
        "x = 1; from pricing import pct\n",
        "def f():\n    from pricing import pct\n    return pct\n",
        "import importlib\n\nrates = importlib.import_module('pricing')\n",
        "import pricing.rates\n",
    ],
    ids=["backslash", "after-a-semicolon", "in-a-function", "import-module", "a-submodule"],
)
def test_an_import_however_it_is_written_is_found(text: str) -> None:
    # Red team 35: `from \` with the name on the next line hid the import from a pattern.
    patch = PatchCoverage(unmeasured=[("pricing.py", 4)])
    assert imported_unmeasured(patch, {"pkg/tax.py": text}) == [("pricing.py", "pkg/tax.py")]


def test_a_relative_import_or_a_text_that_does_not_parse_imports_nothing() -> None:
    patch = PatchCoverage(unmeasured=[("pricing.py", 4)])
    texts = {"pkg/a.py": "from .pricing import pct\n", "pkg/b.py": "from pricing import (\n"}
    assert imported_unmeasured(patch, texts) == []


def test_a_file_coverage_omits_on_purpose_is_read_from_the_projects_settings(
    tmp_path: Path,
) -> None:
    # Review 22: `from pkg import _compat` of a file the project's `[run] omit` leaves out.
    from pytest_agentgate.gates.coverage import _coverage_omit, _is_omitted

    (tmp_path / "pyproject.toml").write_text(
        '[tool.coverage.run]\nomit = ["pkg/_compat.py", "*/generated/*"]\n'
    )
    omit = _coverage_omit(tmp_path)
    assert omit == ["pkg/_compat.py", "*/generated/*"]
    assert _is_omitted(tmp_path / "pkg" / "_compat.py", omit, tmp_path)
    assert _is_omitted(tmp_path / "pkg" / "generated" / "a.py", omit, tmp_path)
    assert not _is_omitted(tmp_path / "pkg" / "core.py", omit, tmp_path)
    (tmp_path / ".coveragerc").write_text("[run]\nbranch = true\n")
    assert _coverage_omit(tmp_path) == []  # coverage.py reads the first file that has settings
