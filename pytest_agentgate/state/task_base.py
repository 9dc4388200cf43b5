"""In git, a task's base is pinned where the task first met the gate.

The base of a change is found from refs (the merge-base of HEAD with the default branch, git.py),
and refs move: an agent can commit on the default branch, or point it (or ``origin/main``) at
its own commit, and the change it is judged on shrinks to nothing. So the first verdict of a
task (a harness session, ``agentgate verify --task``) keeps the base it found, and every later
verdict of the task is judged against that commit, whatever the refs say since.

The pin lives in the user's state directory (``task-bases/``), keyed by repository and task,
never in the project: deleting ``.agentgate/`` does not move it. ``agentgate reset --task ID``
removes it with the task's attempts (recorded, as every reset); the next verdict pins again.
A pin that cannot be read, or that names no commit of the repository, leaves the task without
a base (the integrity gate fails and says how to reset it), never silently replaced.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from pathlib import Path

from pytest_agentgate.git import EMPTY_TREE, Base, BaseMissing, Repo
from pytest_agentgate.state.storage import user_state_home, write_atomic

PIN_DIR = "task-bases"
HOW = "where the task first met the gate"
_SHA = re.compile(r"[0-9a-f]{40,64}")
MAX_BYTES = 4096


def _path(toplevel: Path, task: str) -> Path:
    repo = hashlib.sha256(str(toplevel).encode(errors="surrogateescape")).hexdigest()[:32]
    name = hashlib.sha256(task.encode(errors="surrogateescape")).hexdigest()[:32]
    return user_state_home() / PIN_DIR / repo / f"{name}.json"


def pinned(toplevel: Path, task: str) -> str | None:
    """The commit the task's first verdict was judged against; None when there is none yet, or
    it cannot be read (:func:`resolve` tells the two apart)."""
    try:
        with _path(toplevel, task).open("rb") as handle:
            doc = json.loads(handle.read(MAX_BYTES))
    except (OSError, ValueError):
        return None
    sha = doc.get("sha") if isinstance(doc, dict) else None
    return sha if isinstance(sha, str) and _SHA.fullmatch(sha) else None


def pin(toplevel: Path, task: str, sha: str, described: str) -> None:
    """Keep ``sha`` as the task's base, unless it already has one; best effort (a state
    directory that cannot be written leaves the task judged from the refs, as before)."""
    path = _path(toplevel, task)
    if path.exists() or not _SHA.fullmatch(sha):
        return
    doc = {"sha": sha, "found": described, "at": time.time(), "repository": str(toplevel)}
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(path, json.dumps(doc) + "\n", mode=0o600)


def forget(toplevel: Path, task: str) -> bool:
    """Remove the task's pin (``agentgate reset``); whether there was one."""
    try:
        _path(toplevel, task).unlink()
    except OSError:
        return False
    return True


def resolve(repo: Repo, task: str | None, explicit: str | None = None) -> Base | BaseMissing:
    """The base of a task's change: ``explicit`` (``--base``) first; else the task's pin;
    else the base the refs give (git.py), pinned for the task's later verdicts."""
    if task is None or explicit:
        return repo.resolve_base(explicit=explicit)
    kept = pinned(repo.toplevel, task)
    if kept is None and _path(repo.toplevel, task).exists():
        return BaseMissing(
            f"the task's pinned base ({_path(repo.toplevel, task)}) cannot be read",
            f"a person can run `agentgate reset --task {task}` to judge the task from the "
            "default branch again",
        )
    if kept is not None:
        if repo.commit(kept) is None:
            return BaseMissing(
                f"the commit where the task first met the gate ({kept[:12]}) is not in the "
                "repository any more",
                f"a person can run `agentgate reset --task {task}` to judge the task from the "
                "default branch again",
            )
        pinned_base = repo.resolve_base(task_start=kept)
        now = repo.resolve_base()
        moved = isinstance(now, Base) and now.sha != kept and repo.is_ancestor(kept, now.sha)
        if isinstance(pinned_base, Base) and isinstance(now, Base) and moved:
            # The default branch moved on (a pull, or the agent moving it): the pin holds, and
            # a person who knows the work now follows it can move the pin.
            return Base(
                pinned_base.ref,
                pinned_base.sha,
                f"{HOW}; {now.ref} has moved on to {now.sha[:12]} since, and the change is "
                f"judged from the pin: if the work was rebased or merged onto it, "
                f"`agentgate reset --task {task}` judges it from there",
            )
        return pinned_base
    base = repo.resolve_base()
    if isinstance(base, Base) and base.sha != EMPTY_TREE:
        pin(repo.toplevel, task, base.sha, base.describe())
    return base
