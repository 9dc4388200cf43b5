"""Without git, a task's change is judged against a snapshot of its first verdict.

A project outside any git repository has no commit to compare a change with. For a task (a
harness session, ``agentgate verify --task``), the first verdict keeps the text of the project's
source and configuration files; each later verdict of the task compares the files now with it,
and the integrity gate judges that change as it judges a commit's: tests removed, skips and
suppressions added, configuration loosened, hooks that rewrite results. A harness session takes
it when it starts (:func:`take_first`, harness/start.py), before its agent has edited anything.

The snapshot lives in the user's state directory (``snapshots/``), keyed by project and task,
never in the project: deleting ``.agentgate/`` does not reset it. The project's ``.agentgate/``
keeps its digest: deleting or replacing the snapshot does not reset the base either, it leaves
the task without one (the integrity gate fails and says so) until a person resets the task.
:class:`SnapshotRepo` reads it through :class:`~pytest_agentgate.git.Repo`'s interface, so the
gates that look at a change do not know whether git or a snapshot made it.

What is kept: text files under the project with a source or configuration suffix (and the
configuration files named without one), except virtualenvs, caches, build output and other
tools' folders; each at most :data:`MAX_FILE_BYTES`, all together at most :data:`MAX_BYTES` and
:data:`MAX_FILES` files. What does not fit is left out and said in the gate's notes.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pytest_agentgate.git import Base, BaseMissing, Change, FileChange, GitError, Repo
from pytest_agentgate.state.storage import (
    Anchors,
    locked,
    user_state_home,
    write_atomic,
)
from pytest_agentgate.texts import decode, universal_newlines
from pytest_agentgate.venvs import an_environment
from pytest_agentgate.verdict import json_text

# How long a verdict waits for another's snapshot of the same project to be taken.
LOCK_WAIT_S = 20.0

SNAPSHOT_DIR = "snapshots"
# In the project's .agentgate/: each task's snapshot digest, so that a snapshot deleted or
# replaced in the user's state directory is found (both gone together cannot be told from a new
# task).
ANCHORS = "snapshots.json"
MAX_FILE_BYTES = 1024 * 1024
MAX_BYTES = 32 * 1024 * 1024
MAX_FILES = 20_000
SUFFIXES = frozenset(
    {
        ".py", ".pyi", ".pyx", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts",
        ".toml", ".cfg", ".ini", ".yml", ".yaml", ".json",
    }
)  # fmt: skip
NAMES = frozenset({".coveragerc", ".flake8", ".pylintrc", "pylintrc", "setup.cfg", "tox.ini"})
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".agentgate", "__pycache__", ".venv", "venv", "node_modules",
        ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "build",
        "dist", "site-packages", ".eggs", "htmlcov", ".idea", ".vscode",
    }
)  # fmt: skip
# How the base of a snapshot's change is named in the verdict.
BASE_HOW = "the snapshot of the task's first verdict"


def _wanted(name: str) -> bool:
    return name in NAMES or os.path.splitext(name)[1] in SUFFIXES


def project_files(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative path with ``/``, path) of every file a snapshot keeps, in a stable order;
    symbolic links are not followed."""
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_DIRS
            and not d.endswith(".egg-info")
            and not an_environment(here / d)
            and not (here / d).is_symlink()
        )
        for name in sorted(files):
            path = here / name
            if _wanted(name) and not path.is_symlink():
                yield path.relative_to(root).as_posix(), path


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        text = decode(path.name, path.read_bytes())
    except OSError:
        return None
    return None if text is None else universal_newlines(text)


def take(root: Path) -> tuple[dict[str, str], list[str]]:
    """The texts a snapshot keeps of ``root``, and what it had to leave out (and why)."""
    kept: dict[str, str] = {}
    left_out: list[str] = []
    total = 0
    for relative, path in project_files(root):
        text = _read(path)
        if text is None:
            continue  # not text, or too large for any analyzer to read
        if len(kept) >= MAX_FILES or total + len(text) > MAX_BYTES:
            left_out.append(relative)
            continue
        kept[relative] = text
        total += len(text)
    return kept, left_out


def _path(root: Path, task: str) -> Path:
    project = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:32]
    name = hashlib.sha256(task.encode(errors="surrogateescape")).hexdigest()[:32]
    return user_state_home() / SNAPSHOT_DIR / project / f"{name}.json"


def load_or_take(root: Path, task: str) -> dict[str, Any] | BaseMissing | None:
    """The task's snapshot, taken now if this is its first verdict; None when it can be neither
    read nor written (the gate then says there is no base).

    The project's ``.agentgate/`` keeps each snapshot's digest (:data:`ANCHORS`): a snapshot
    that is gone, or is not the one the task's first verdict took, is no base (BaseMissing),
    never silently replaced by one of the changed tree.

    Two calls at once for one task (a harness that runs two hooks of one session side by side)
    take one snapshot: the project's snapshots are taken under a lock, so a second snapshot can
    never replace the first while the project's digest names the first. The lock is waited
    for as long as taking a snapshot may take (:data:`LOCK_WAIT_S`), not longer (red team 38:
    a `flock` of the agent's on it held the hook until its time ran out): past that the
    snapshot is read, or taken, without it, and the digest still decides."""
    path = _path(root, task)
    with contextlib.ExitStack() as stack:
        with contextlib.suppress(OSError):  # unwritable, or held: nothing raced in time
            path.parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(locked(path.parent, wait_s=LOCK_WAIT_S))
        return _load_or_take(root, task, path)


def take_first(root: Path, task: str) -> None:
    """Take the task's snapshot now unless it has one (the session's start: before the agent
    has changed anything, harness/start.py); an existing one is left for the verdicts to read
    and check."""
    if not _path(root, task).exists():
        load_or_take(root, task)


def _load_or_take(root: Path, task: str, path: Path) -> dict[str, Any] | BaseMissing | None:
    anchors = Anchors(root, ANCHORS)
    key = _task_key(task)
    kept = anchors.get(key)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = None
    except OSError:
        return None  # unreadable: never silently replaced by a fresh one
    if raw is not None:
        try:
            data = json.loads(raw)
        except ValueError:
            return None
        if not (isinstance(data, dict) and isinstance(data.get("files"), dict)):
            return None
        digest = hashlib.sha256(raw).hexdigest()
        if kept is not None and kept != digest:
            return _tampered(task, path, "is not the one the task's first verdict took")
        if kept is None:
            anchors.put(key, digest)  # .agentgate/ was deleted: the snapshot stands
        return data
    if kept is not None:
        return _tampered(task, path, "is gone")
    files, left_out = take(root)
    data = {"root": str(root), "made_at": time.time(), "files": files, "left_out": left_out}
    text = json_text(data)  # a file name that is not UTF-8 as the escape the file holds
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text, mode=0o600)
    except OSError:
        return None
    anchors.put(key, hashlib.sha256(text.encode("utf-8")).hexdigest())
    return data


def forget(root: Path, task: str) -> bool:
    """A person's reset: the task's snapshot and its digest are dropped, and its next verdict
    takes a new one. Whether there was one."""
    path = _path(root, task)
    had = Anchors(root, ANCHORS).drop(_task_key(task))
    try:
        had = path.exists() or had
        path.unlink(missing_ok=True)
    except OSError:
        pass  # an unusable state directory holds no snapshot: the ledger says why
    return had


def _tampered(task: str, path: Path, what: str) -> BaseMissing:
    return BaseMissing(
        f"the snapshot of task {task}'s first verdict ({path}) {what}: its change cannot be "
        "judged without it",
        f"restore it; a person who decides the task starts over runs `agentgate reset --task "
        f"{task}` (recorded, and the next verdict says who reset it)",
    )


def _task_key(task: str) -> str:
    return hashlib.sha256(task.encode(errors="surrogateescape")).hexdigest()[:32]


class SnapshotRepo(Repo):
    """A project without git, read as if its snapshot were the base commit."""

    def __init__(self, root: Path, snapshot: dict[str, Any]) -> None:
        super().__init__(root.resolve())
        self.files: dict[str, str] = snapshot["files"]
        self.left_out: list[str] = list(snapshot.get("left_out") or [])
        made_at = float(snapshot.get("made_at") or 0.0)
        digest = hashlib.sha256(
            json.dumps(self.files, sort_keys=True).encode(errors="surrogateescape")
        ).hexdigest()
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(made_at))
        self.base = Base(f"the task's first verdict at {stamp}", digest, BASE_HOW)

    def git(self, *args: str, check: bool = True) -> str:
        raise GitError("not a git repository: the change is read from a snapshot")

    def change(self, base: Base) -> Change:
        change = Change(base, self.toplevel)
        now = dict(take(self.toplevel)[0])
        added = [p for p in now if p not in self.files]
        deleted = [p for p in self.files if p not in now]
        for path in sorted(set(now) & set(self.files)):
            if now[path] != self.files[path]:
                lines = _new_lines(self.files[path], now[path])
                change.files[path] = FileChange(path, "modified", lines=lines)
        moved = _renames(deleted, added, self.files, now)
        for new, old in moved.items():
            lines = _new_lines(self.files[old], now[new])
            change.files[new] = FileChange(new, "renamed", old_path=old, lines=lines)
        for path in added:
            if path not in moved:
                count = len(now[path].splitlines())
                change.files[path] = FileChange(path, "added", lines=set(range(1, count + 1)))
        gone = set(moved.values())
        for path in deleted:
            if path not in gone:
                change.files[path] = FileChange(path, "deleted")
        return change

    def read_at(self, base: Base, paths: Iterable[str]) -> dict[str, str | None]:
        return {p: self.files.get(p) for p in dict.fromkeys(paths)}

    def tracked_at(self, base: Base) -> list[str]:
        return sorted(self.files)


def _new_lines(old: str, new: str) -> set[int]:
    """The lines of ``new`` (1-based) that are not in ``old``: what a diff adds or modifies."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    lines: set[int] = set()
    for tag, _, _, start, end in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            lines.update(range(start + 1, end + 1))
    return lines


def _renames(
    deleted: list[str], added: list[str], before: dict[str, str], now: dict[str, str]
) -> dict[str, str]:
    """new path -> old path, for files moved with at least half their text kept (git's -M
    default); each deleted file pairs with its most similar added one of the same suffix."""
    pairs: dict[str, str] = {}
    taken: set[str] = set()
    for old in deleted:
        best, score = None, 0.5
        for new in added:
            if new in taken or os.path.splitext(new)[1] != os.path.splitext(old)[1]:
                continue
            ratio = difflib.SequenceMatcher(None, before[old], now[new]).quick_ratio()
            if ratio >= score:
                best, score = new, ratio
        if best is not None:
            pairs[best] = old
            taken.add(best)
    return pairs
