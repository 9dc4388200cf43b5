"""Which files of a project are its tests: one answer for the integrity analyzers and the
witness inside the tests' own pytest (a module light enough to import there)."""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = ["TEST_TOOLS", "is_test_code"]

# The test tools whose code decides what a run reports (their top-level packages): the code
# the integrity gate forbids the change to patch (integrity/patches.py), and the code the
# witness checks is as installed.
TEST_TOOLS = frozenset(
    {
        "_pytest", "pytest", "pluggy", "xdist", "coverage", "pytest_cov", "pytest_agentgate",
        "unittest",  # TestCase's assertions: `TestCase.assertEqual = lambda *a: None`
    }
)  # fmt: skip


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
