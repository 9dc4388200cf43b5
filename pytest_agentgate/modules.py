"""How Python names what it imports from a folder on ``sys.path``: any file whose name ends in
one of the import system's suffixes (``.py``, a sourceless ``.pyc``, an extension module's
``.cpython-311-x86_64-linux-gnu.so``, ``.abi3.so``, ``.pyd``), and a package's ``__init__`` of
any of them (red team 31: a `pytest/` folder whose `__init__` was an extension module ran the
agent's code before the real pytest)."""

from __future__ import annotations

import importlib.machinery

# Longest first: `x.cpython-311-x86_64-linux-gnu.so` is not named by `.so`.
SUFFIXES = tuple(sorted(importlib.machinery.all_suffixes(), key=len, reverse=True))


def module_stem(filename: str) -> str | None:
    """The module name the file ``filename`` (a name, no folder) is imported as, or None when
    Python imports no module from it."""
    for suffix in SUFFIXES:
        if filename.endswith(suffix) and len(filename) > len(suffix):
            stem = filename[: -len(suffix)]
            return stem if stem.isidentifier() else None
    return None


def is_package_init(filename: str) -> bool:
    """Whether ``filename`` makes its folder a package: an ``__init__`` Python imports."""
    return module_stem(filename) == "__init__"
