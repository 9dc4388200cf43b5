"""One stop, one attempt: what the hook door remembers of a harness session's last stop.

A harness may call the stop hook more than once for the same stop: Copilot CLI runs both a
``.claude/settings.json`` Stop hook and its own ``agentStop`` hook, and Codex and Copilot run an
entry listed twice twice, sometimes at the same moment. Each call must not count an attempt.
The door holds a lock per session while it gates a stop; a call for the same stop that comes
while the first is running, or within :data:`SAME_STOP_S` of its answer, gets that answer again.

A stop is "the same" when the session, the agent's final words and, where the harness gives
one, the instant of the stop are the same (Copilot CLI's two calls for one stop carry one
timestamp; its stops a fraction of a second apart do not). An agent that
stops again with the same words after it was sent back is counted again once the window has
passed, so a repeated "done" can never loop forever without escalating.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_agentgate.state.storage import LockBusy, locked, user_state_home, write_atomic

STOPS_DIR = "stops"
# A repeat of the same stop arrives back to back (the harness runs its hooks one after the
# other, or at once); an agent sent back needs a model turn before it can stop again.
SAME_STOP_S = 5.0
# How long a stop waits for the session's lock before it asks who holds it: a call of the
# same stop gating it is waited for, however long that takes (the hook's budget bounds it);
# any other process is not waited for (red team 16: a process of the agent's held the lock
# until the hook's time ran out, which lets the agent stop).
STOP_LOCK_PATIENCE_S = 2.0


@dataclass(frozen=True)
class StopRecord:
    """The last stop of a session and the answer it got, in the door's terms."""

    key: str
    answered_at: float
    outcome: dict[str, Any]
    # Gemini CLI sends every reply so far: the part already seen, to find the new one.
    replies: str | None = None

    def same_stop(self, key: str, now: float) -> bool:
        return self.key == key and 0 <= now - self.answered_at < SAME_STOP_S


class StopBook:
    """The record of one session's last stop, read and written under that session's lock."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> StopRecord | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return StopRecord(
                key=str(data["key"]),
                answered_at=float(data["answered_at"]),
                outcome=dict(data["outcome"]),
                replies=data.get("replies") if isinstance(data.get("replies"), str) else None,
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None  # no record, or one that cannot be trusted: gate the stop afresh

    def write(self, record: StopRecord) -> None:
        document = {
            "key": record.key,
            "answered_at": record.answered_at,
            "outcome": record.outcome,
            "replies": record.replies,
        }
        with contextlib.suppress(OSError):  # a lost record costs a duplicate attempt, no more
            write_atomic(self.path, json.dumps(document, ensure_ascii=False))


def _a_stop_being_gated(holder: str | None) -> bool:
    """Whether the process holding a session's stop lock is agentgate gating a stop (or the
    system does not say who it is): this interpreter running this agentgate's ``hook``
    command. Words in a command line are not enough (red team 18 named its own lock holder
    `agentgate hook`, and the stop waited until the hook's time ran out)."""
    if holder is None:
        return True
    pid = holder.split()[1] if holder.startswith("process ") else ""
    if not pid.isdigit():
        return False
    try:
        exe = os.path.realpath(f"/proc/{pid}/exe")
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = [os.fsdecode(a) for a in handle.read().split(b"\0") if a]
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return False
    if state in ([b"T"], [b"t"]):
        return False  # stopped (red team 38: `kill -STOP` on a hook of its own): not gating
    if exe != os.path.realpath(sys.executable):
        return False
    ours = os.path.realpath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    for at, word in enumerate(argv[:-1]):
        entry = word == "pytest_agentgate" and at > 0 and argv[at - 1] == "-m"
        if (entry or (ours and os.path.realpath(word) == ours)) and argv[at + 1] == "hook":
            return True
    return False


def stop_key(session: str, words: str | None, stamp: int | None = None) -> str:
    """What makes two calls the same stop: the session, the agent's final words, and the
    instant of the stop when the harness gives one."""
    text = f"{session}\0{words or ''}\0{'' if stamp is None else stamp}"
    return hashlib.sha256(text.encode()).hexdigest()


@contextlib.contextmanager
def session_stops(root: Path, session: str) -> Iterator[StopBook | None]:
    """Hold ``session``'s stop lock; None when the state folder cannot be written (then every
    call is gated, and counted, on its own). The record lives in the user's state directory,
    not in the project: an agent that writes a record of a passing stop into the project's
    folder must not be let go by it."""
    project = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:32]
    name = hashlib.sha256(session.encode()).hexdigest()[:32]
    with contextlib.ExitStack() as stack:
        try:
            folder = user_state_home() / STOPS_DIR / project / name
            folder.mkdir(parents=True, exist_ok=True)
            stack.enter_context(
                locked(folder, wait_s=STOP_LOCK_PATIENCE_S, wait_for=_a_stop_being_gated)
            )
        except LockBusy:
            book = None  # not a call of agentgate's: this stop is gated, and counted, alone
        except OSError:
            book = None
        else:
            book = StopBook(folder / "last-stop.json")
        yield book
