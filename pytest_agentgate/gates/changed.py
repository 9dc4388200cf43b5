"""The lines a change adds or modifies, looked up by the paths reports use.

Reports name a file in many ways: relative to the project root (coverage.py, mypy), relative to
the directory agentgate runs in, absolute (ruff, eslint, Cobertura with a ``<source>``).
:class:`ChangedFiles` turns each of them into the change's file with string operations (an
absolute path it does not know is resolved once, in case it goes through a symlink).
Collectors use it; the judges only see what it found.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pytest_agentgate.git import Base, BaseMissing, Change, FileChange, Repo

# The suffixes of the code that coverage tools measure (Python, JavaScript, TypeScript).
CODE_SUFFIXES = (".py", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
_TEST_DIRS = frozenset(("test", "tests", "testing", "__tests__", "__test__", "spec", "specs"))
# JavaScript's: a Python file in `specs/` is a test by its name only (red team 40: product
# code put in `invoice/specs/`, imported by the package, read as a test and left unmeasured).
_JS_TEST_DIRS = frozenset(("spec", "specs", "__tests__", "__test__"))


def is_test_file(path: str) -> bool:
    """A test file by the usual conventions: under a ``tests``-like folder, or named like a test
    (``test_*.py``, ``*_test.py``, ``conftest.py``, ``*.test.js``, ``*.spec.ts``, ...)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    folders = _TEST_DIRS - _JS_TEST_DIRS if name.endswith((".py", ".pyi")) else _TEST_DIRS
    if any(part in folders for part in parts[:-1]):
        return True
    stem = name.rsplit(".", 1)[0]
    return (
        name == "conftest.py"
        or name.startswith("test_")
        or stem.endswith(("_test", "_tests"))
        or ".test." in name
        or ".spec." in name
    )


def is_code(path: str) -> bool:
    """Python, JavaScript or TypeScript source: what a coverage report is expected to measure."""
    return path.endswith(CODE_SUFFIXES) and not path.endswith(".d.ts")


@dataclass(frozen=True)
class NoBase:
    """Why the change is not known: not a repository, or no base."""

    reason: str


class ChangedFiles:
    """The files of a change (deleted ones left out), found by any spelling of their path."""

    def __init__(self, repo: Repo, change: Change, root: Path, cwd: Path | None = None) -> None:
        self.base: Base = change.base
        self.change = change
        self.root = root
        self._root = os.path.realpath(root)
        self._cwd = os.path.abspath(cwd) if cwd is not None else _working_directory()
        toplevel = str(repo.toplevel)  # resolved by git, as the doors resolve the root
        self._files: dict[str, FileChange] = {}
        for path, entry in change.files.items():
            if entry.status != "deleted":
                self._files[os.path.normpath(os.path.join(toplevel, path))] = entry

    @classmethod
    def of(
        cls, found: tuple[Repo, Change] | BaseMissing | None, root: Path, cwd: Path | None = None
    ) -> ChangedFiles | NoBase:
        """The change a collector was given (``CollectContext.change``), or why there is none."""
        if found is None:
            return NoBase("not a git repository")
        if isinstance(found, BaseMissing):
            return NoBase(f"no base to compare with: {found}")
        repo, change = found
        return cls(repo, change, root, cwd)

    def files(self) -> list[FileChange]:
        """The changed files that still exist, in the change's order."""
        return [f for f in self.change.files.values() if f.status != "deleted"]

    def find(self, path: str) -> FileChange | None:
        """The changed file a report's ``path`` names (absolute, or relative to the project
        root or to the working directory), or None when the change does not touch it."""
        if not path:
            return None
        if os.sep != "/":  # pragma: no cover - Windows
            path = path.replace("/", os.sep)
        if os.path.isabs(path):  # a tool's own spelling may go through a symlink
            found = self._files.get(os.path.normpath(path))
            return found if found is not None else self._files.get(os.path.realpath(path))
        entry = self._files.get(os.path.normpath(os.path.join(self._root, path)))
        if entry is None and self._cwd is not None and self._cwd != self._root:
            entry = self._files.get(os.path.normpath(os.path.join(self._cwd, path)))
        return entry


def _working_directory() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # it was deleted under us
        return None
