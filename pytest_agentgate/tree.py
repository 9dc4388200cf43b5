"""A project's files, read where they are: on the disk, or at a commit (the change's base).

Zero-config detection (project.py, linters.py) reads a project through :class:`Files`, so that
what it finds at the base can be the law the change is held to: the change may add a linter or
a package to measure, never take away what the base's files declared (config/resolve.py).
Paths are relative to the project's folder, with ``/``; ``""`` is the folder itself.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Protocol

from pytest_agentgate.git import Base, GitError, Repo
from pytest_agentgate.texts import decode, is_python, universal_newlines

MAX_BYTES = 1024 * 1024  # a file larger than this is not read (None)


class Files(Protocol):
    """The files of a project."""

    def read(self, path: str) -> str | None:
        """The text of a regular file (None: no such file, or too large to read)."""
        ...

    def is_file(self, path: str) -> bool: ...

    def is_dir(self, path: str) -> bool: ...

    def entries(self, path: str) -> list[tuple[str, bool]]:
        """What a folder holds: (name, is a folder), in name order."""
        ...


class OnDisk:
    """The project's files as they are now."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, path: str) -> str | None:
        target = self.root / path
        try:
            if not target.is_file() or target.stat().st_size > MAX_BYTES:
                return None
            data = target.read_bytes()
        except OSError:
            return None
        text = decode(path, data) if is_python(path) else None
        if text is None:
            text = data.decode("utf-8", errors="replace")
        return universal_newlines(text)

    def is_file(self, path: str) -> bool:
        return (self.root / path).is_file()

    def is_dir(self, path: str) -> bool:
        return (self.root / path).is_dir()

    def entries(self, path: str) -> list[tuple[str, bool]]:
        try:
            found = sorted((self.root / path).iterdir())
        except OSError:
            return []
        return [(entry.name, entry.is_dir()) for entry in found]


class AtCommit:
    """A project's files in a commit: the names from its tree, each text read when asked."""

    def __init__(
        self, paths: Iterable[str], read: Callable[[list[str]], Mapping[str, str | None]]
    ) -> None:
        self._read = read
        self._texts: dict[str, str | None] = {}
        self._files: set[str] = set()
        self._folders: dict[str, dict[str, bool]] = {"": {}}
        for path in paths:
            parts = path.strip("/").split("/")
            if not all(parts):
                continue
            self._files.add("/".join(parts))
            for depth, name in enumerate(parts):
                folder = "/".join(parts[:depth])
                self._folders.setdefault(folder, {})[name] = depth < len(parts) - 1

    def read(self, path: str) -> str | None:
        path = _clean(path)
        if path not in self._files:
            return None
        if path not in self._texts:
            text = self._read([path]).get(path)
            self._texts[path] = text if text is None or len(text) <= MAX_BYTES else None
        return self._texts[path]

    def is_file(self, path: str) -> bool:
        return _clean(path) in self._files

    def is_dir(self, path: str) -> bool:
        return _clean(path) in self._folders

    def entries(self, path: str) -> list[tuple[str, bool]]:
        return sorted(self._folders.get(_clean(path), {}).items())


def _clean(path: str) -> str:
    path = path.strip("/")
    return "" if path == "." else path.removeprefix("./")


def at_base(repo: Repo, base: Base, root: Path) -> AtCommit | None:
    """The files of the project at ``root`` as they are at ``base`` (None: git cannot say, the
    project is not in the repository, or it has no file at the base)."""
    try:
        inside = root.resolve().relative_to(repo.toplevel).as_posix()
    except ValueError:
        return None
    prefix = "" if inside == "." else inside + "/"
    try:
        tracked = repo.tracked_at(base)
    except (GitError, OSError):
        return None

    def read(names: list[str]) -> dict[str, str | None]:
        try:
            texts = repo.read_at(base, [prefix + name for name in names])
        except (GitError, OSError, subprocess.SubprocessError):
            return {}
        return {name: texts.get(prefix + name) for name in names}

    inside_paths = [p[len(prefix) :] for p in tracked if p.startswith(prefix)]
    if not inside_paths:
        return None  # no commit yet, or a project new in the change: nothing to hold it to
    return AtCommit(inside_paths, read)
