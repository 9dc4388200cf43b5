"""Which files of a project are its tests: one answer for the integrity analyzers and the
witness inside the tests' own pytest (a module light enough to import there)."""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = ["is_test_code"]


def is_test_code(path: str) -> bool:
    """A test, a conftest, or a helper of the tests: in a folder named ``test*``
    (``tests/``, ``tests_e2e/``, ``testing/``), or a module named ``testing``, ``tests``
    (Django's ``app/tests.py``), ``test_*`` or ``*_test``."""
    pure = PurePosixPath(path)
    return (
        pure.name == "conftest.py"
        or pure.name.startswith("test_")
        or pure.name.endswith("_test.py")
        or pure.stem in ("testing", "tests")
        or any(part.startswith("test") for part in pure.parent.parts)
    )
