"""Changed code moved out of what coverage measures, and called from what it measures, fails
patch coverage under a profile that gates it (gates/patch.py ``imported_unmeasured``)."""

from __future__ import annotations

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
