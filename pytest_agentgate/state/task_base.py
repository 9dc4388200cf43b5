"""In git, a task's base is pinned where the task first met the gate.

The base of a change is found from refs (the merge-base of HEAD with the default branch, git.py),
and refs move: an agent can commit on the default branch, or point it (or ``origin/main``) at
its own commit, and the change it is judged on shrinks to nothing. So the first verdict of a
task (a harness session, ``agentgate verify --task``) keeps the base it found, and every later
verdict of the task is judged against that commit, whatever the refs say since. A harness
session pins it earlier, when it starts (``agentgate hook NAME --session-start``,
harness/start.py, through :func:`resolve` too): an agent that commits on the default branch
before its first stop, in a repository without a remote, would otherwise have its own commit
pinned as the base.

The pin lives in the user's state directory (``task-bases/``), keyed by repository and task:
deleting ``.agentgate/`` does not move it. The project's ``.agentgate/task-bases.json`` keeps
the pinned commit too (:class:`~pytest_agentgate.state.storage.Anchors`), so deleting the pin
alone does not move it either. ``agentgate reset --task ID`` removes both with the task's
attempts (recorded, as every reset); the next verdict pins again. A pin that cannot be read,
that is gone while the project's record holds it, that the record contradicts, or that names no
commit of the repository, leaves the task without a base (the integrity gate fails and says how
to reset it), never silently replaced.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

from pytest_agentgate.git import EMPTY_TREE, Base, BaseMissing, Repo
from pytest_agentgate.state import seal
from pytest_agentgate.state.storage import Anchors, user_state_home, write_atomic

PIN_DIR = "task-bases"
# In the project's .agentgate/: each task's pinned commit.
ANCHORS = "task-bases.json"
HOW = "where the task first met the gate"
_SHA = re.compile(r"[0-9a-f]{40,64}")
MAX_BYTES = 4096


def task_key(task: str) -> str:
    """The task's key: its pin file's name, and its key in the project's record."""
    return hashlib.sha256(task.encode(errors="surrogateescape")).hexdigest()[:32]


def _path(toplevel: Path, task: str) -> Path:
    repo = hashlib.sha256(str(toplevel).encode(errors="surrogateescape")).hexdigest()[:32]
    return user_state_home() / PIN_DIR / repo / f"{task_key(task)}.json"


def pinned(toplevel: Path, task: str) -> str | None:
    """The commit the task's first verdict was judged against; None when there is none yet, or
    it cannot be read (:func:`resolve` tells the two apart)."""
    try:
        with _path(toplevel, task).open("rb") as handle:
            doc = json.loads(handle.read(MAX_BYTES))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not seal.intact(doc):
        return None  # edited after agentgate wrote it (state/seal.py): not trusted
    sha = doc.get("sha")
    return sha if isinstance(sha, str) and _SHA.fullmatch(sha) else None


def pinned_in(task: str) -> list[Path]:
    """The repositories where ``task`` has its base pinned (sealed pins only), the first pinned
    first: where a harness session whose record of its start is gone or was edited began."""
    found: list[tuple[float, Path]] = []
    for path in (user_state_home() / PIN_DIR).glob(f"*/{task_key(task)}.json"):
        try:
            with path.open("rb") as handle:
                doc = json.loads(handle.read(MAX_BYTES))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and seal.intact(doc) and isinstance(doc.get("repository"), str):
            at = doc.get("at")
            found.append((at if isinstance(at, (int, float)) else 0.0, Path(doc["repository"])))
    return [repository for _, repository in sorted(found)]


def pin(toplevel: Path, task: str, sha: str, described: str, root: Path | None = None) -> None:
    """Keep ``sha`` as the task's base, unless it already has one, and its record in the
    project at ``root`` (the repository's top level when None); best effort (a state directory
    that cannot be written leaves the task judged from the refs, as before)."""
    path = _path(toplevel, task)
    if path.exists() or not _SHA.fullmatch(sha):
        return
    doc = {"sha": sha, "found": described, "at": time.time(), "repository": str(toplevel)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(path, json.dumps(seal.sealed(doc)) + "\n", mode=0o600)
    except OSError:
        return
    Anchors(root or toplevel, ANCHORS).put(task_key(task), sha)


def forget(toplevel: Path, task: str, root: Path | None = None) -> bool:
    """Remove the task's pin and the project's record of it (``agentgate reset``); whether
    there was either."""
    had = Anchors(root or toplevel, ANCHORS).drop(task_key(task))
    try:
        _path(toplevel, task).unlink()
    except OSError:
        return had
    return True


def resolve(
    repo: Repo, task: str | None, explicit: str | None = None, root: Path | None = None
) -> Base | BaseMissing:
    """The base of a task's change: ``explicit`` (``--base``) first; else the task's pin;
    else the base the refs give (git.py), pinned for the task's later verdicts. ``root`` is
    the project, whose ``.agentgate/`` keeps a record of the pin (the top level when None)."""
    if task is None or explicit:
        return repo.resolve_base(explicit=explicit)
    path = _path(repo.toplevel, task)
    kept = pinned(repo.toplevel, task)
    reset = (
        f"a person can run `agentgate reset --task {task}` to judge the task from the "
        "default branch again"
    )
    if kept is None and path.exists():
        return BaseMissing(
            f"the task's pinned base ({path}) cannot be read, or was changed after agentgate "
            "wrote it (or an agentgate older than its seal wrote it, before an upgrade)",
            reset,
        )
    anchors = Anchors(root or repo.toplevel, ANCHORS)
    key = task_key(task)
    recorded = anchors.get(key)
    if kept is None and recorded is not None:
        return BaseMissing(
            f"the task's pinned base ({path}) is gone, while the project's "
            f"{anchors.path.parent.name}/{ANCHORS} says the task first met the gate at "
            f"{recorded[:12]}: its change cannot be judged without it",
            f"restore the pin; {reset}",
        )
    if kept is not None and recorded is not None and recorded != kept:
        return BaseMissing(
            f"the task's pinned base ({path}) is {kept[:12]}, while the project's "
            f"{anchors.path.parent.name}/{ANCHORS} says the task first met the gate at "
            f"{recorded[:12]}: one of them was changed",
            reset,
        )
    if kept is not None:
        if recorded is None:
            anchors.put(key, kept)  # .agentgate/ was deleted: the pin stands
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
        pin(repo.toplevel, task, base.sha, base.describe(), root)
    return base
