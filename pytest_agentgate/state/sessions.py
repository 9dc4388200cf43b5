"""Where a harness session started: the project its stops are gated in.

A harness's stop event names the folder the agent's shell is in now (Claude Code's ``cwd``
follows the agent's ``cd``). An agent that ends its turn in a scratch repository with one
passing test, or in a subfolder it gave a ``pyproject.toml`` of its own, would have that gated
instead of the project it was asked to work on. So the folder of the session's first event (its
start, with the session-start hook; else its first stop) is kept in the user's state directory,
under the session's id, and every later stop of the session is gated there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from pytest_agentgate.state import seal
from pytest_agentgate.state.storage import user_state_home, write_atomic

SESSIONS_DIR = "sessions"
MAX_BYTES = 8192


def _path(harness: str, session: str) -> Path:
    name = hashlib.sha256(f"{harness}\0{session}".encode(errors="surrogateescape")).hexdigest()
    return user_state_home() / SESSIONS_DIR / f"{name[:32]}.json"


def started_in(harness: str, session: str) -> Path | None:
    """The folder the session's first event named; None when none was kept."""
    try:
        with _path(harness, session).open("rb") as handle:
            doc = json.loads(handle.read(MAX_BYTES))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not seal.intact(doc):
        return None  # edited after agentgate wrote it (state/seal.py): not trusted
    folder = doc.get("cwd")
    return Path(folder) if isinstance(folder, str) and os.path.isabs(folder) else None


def _inside(folder: Path, repository: Path) -> bool:
    return folder == repository or repository in folder.parents


def remember_start(harness: str, session: str, cwd: Path) -> Path:
    """Keep ``cwd`` as where the session started, unless a folder is kept already; the folder
    the session's stops are gated in. Best effort: a state directory that cannot be written
    leaves each stop gated where its event says."""
    kept = started_in(harness, session)
    if kept is not None:
        return kept
    folder = Path(os.path.realpath(cwd))
    path = _path(harness, session)
    # No record, or one agentgate did not write as it is: where the session's task had its
    # base pinned first, if anywhere, is where it began (red team 16 pointed the record at a
    # scratch copy of the project, or deleted it, then ended its turn in that copy).
    from pytest_agentgate.state.task_base import pinned_in

    first = next(iter(pinned_in(session)), None)
    if first is not None and first.is_dir() and not _inside(folder, first):
        folder = first
    if path.exists() and not path.is_symlink():
        with contextlib.suppress(OSError):
            path.unlink()  # not agentgate's: written again, sealed, below
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            write_atomic(path, json.dumps(seal.sealed({"cwd": str(folder)})) + "\n", mode=0o600)
    return started_in(harness, session) or folder
