"""Attempts, escalation and history: what agentgate remembers between verdicts.

A gate that rejects forever is as broken as one that never rejects. The ledger counts the
rejections of each task, and hands the task to a human, with a report, when sending the agent
back is no longer useful.

How attempts are counted (the interpretation of ``attempts.max``):

- A task is named by a :class:`TaskRef`: an id (``--task``, the harness session id, the pull
  request, or the git branch with ``attempts: {per_branch: true}``) and the source it came
  through (``"cli"``, ``"hook:claude"``, ``"action"``, ``"pytest"``). No task, nothing counted;
  the verdict is still appended to the history.
- Every failing verdict is one rejection. With ``max: 3`` the failing verdicts 1, 2 and 3 of a
  source are ``fail`` with attempt 1/3, 2/3 and 3/3; the 4th is ``escalate``. So ``max`` is the
  number of rejections the agent gets before a human does.
- ``global_max`` (default 6) caps the rejections of the task across every source the same way:
  the 7th failing verdict through any door escalates. The attempt the verdict shows is whichever
  budget is closer to running out.
- A passing verdict closes the task: its counters, attempts and blockers are forgotten, and the
  next failing verdict is attempt 1 again. Once escalated, every further failing verdict
  escalates until a pass or ``agentgate reset``.
- A blocking gate that names a reason only a human can act on (``GateResult.escalate``: the
  session gate's budgets, loops and file thrash) escalates the task at once.
- A blocker with a human-only reason (``needs_credentials``, ...) makes the next verify escalate
  at once, whatever the gates say, and stays until ``agentgate reset``: the agent declared it
  cannot finish, and gates do not measure that. ``transient`` and ``insufficient_context``
  are used once: the next failing verdict tells the agent to retry or to gather the context.

Where the state is kept: :mod:`pytest_agentgate.state.storage`. Every task's entry is also kept
outside the project (:func:`~pytest_agentgate.state.storage.default_storage`): deleting
``.agentgate/`` restores it with a notice, and a reset is recorded and stated by the task's next
verdict.
"""

from __future__ import annotations

import secrets
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_agentgate.config.model import Config
from pytest_agentgate.state.escalation import escalation_report, stalled
from pytest_agentgate.state.history import history_record, key_numbers
from pytest_agentgate.state.reasons import BLOCK_REASONS, HUMAN_ONLY_REASONS, RETRY_REASONS
from pytest_agentgate.state.storage import (
    STATE_DIR,
    LocalStorage,
    LockBusy,
    Storage,
    default_storage,
    warn,
)
from pytest_agentgate.state.task import LedgerError, Limits, TaskRef
from pytest_agentgate.verdict import Attempt, Verdict, human_needed

# Attempts kept per task for the escalation report; older ones are counted, not described.
KEPT_ATTEMPTS = 12


# -- the task of a run ----------------------------------------------------------------------


def branch_task(root: Path, source: str = "cli") -> TaskRef | None:
    """The current git branch as a task (``per_branch``); None when detached or not a repo."""
    try:
        proc = subprocess.run(
            ["git", "symbolic-ref", "--short", "-q", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    name = proc.stdout.strip()
    if proc.returncode != 0 or not name:
        return None
    return TaskRef(name, source)


def resolve_task(config: Config, task: TaskRef | None, source: str = "cli") -> TaskRef | None:
    """The task a verdict counts against: the one given, else the branch with ``per_branch``."""
    if task is not None:
        return task
    if getattr(config, "attempts_per_branch", False):
        return branch_task(config.root, source)
    return None


def new_entry() -> dict[str, Any]:
    return {"total": 0, "verifies": 0, "sources": {}, "attempts": [], "blockers": []}


# -- deciding the attempt -------------------------------------------------------------------


@dataclass
class Decision:
    """What the ledger decided for one verdict."""

    task: TaskRef | None
    attempt: Attempt | None = None
    escalate: bool = False
    reasons: list[str] = field(default_factory=list)
    instruction: str | None = None
    blocker: str | None = None
    report: str | None = None
    report_location: str | None = None
    # What the verdict must say about the task's recorded state (restored, reset by a person).
    notices: list[str] = field(default_factory=list)


def _snapshot(verdict: Verdict, source: str, number: int, now: float) -> dict[str, Any]:
    return {
        "n": number,
        "time": now,
        "source": source,
        "status": verdict.status,
        "gates": [
            {
                "name": g.name,
                "kind": g.kind,
                "status": g.status,
                "summary": g.summary[:300],
                "numbers": key_numbers(g),
            }
            for g in verdict.gates
            if g.status != "skipped"
        ],
    }


def _attempt(n_source: int, n_total: int, limits: Limits) -> Attempt:
    """The budget closer to running out: this source's ``max`` or the task's ``global_max``."""
    if limits.global_max - n_total < limits.max - n_source:
        return Attempt(max(n_total, 1), limits.global_max)
    return Attempt(max(n_source, 1), limits.max)


def decide(
    state: dict[str, Any],
    verdict: Verdict,
    task: TaskRef,
    limits: Limits,
    now: float,
    reused_at: float | None = None,
) -> Decision:
    """Count this verdict against the task in ``state`` (changed in place). ``reused_at``: the
    verdict reuses the judged gates of a run made then (nothing changed since)."""
    tasks: dict[str, Any] = state["tasks"]
    entry = tasks.get(task.id) or new_entry()
    decision = Decision(task)
    human = [b for b in entry["blockers"] if b.get("reason") in HUMAN_ONLY_REASONS]
    retry = [b for b in entry["blockers"] if b.get("reason") in RETRY_REASONS]
    failing = verdict.status != "pass"
    sources: dict[str, int] = entry["sources"]
    # The agent asking again about a tree it already asked about (its own `agentgate verify`,
    # answered from the run it made) is no new try at the work: one unchanged tree, one
    # attempt (red team 16 spent the whole budget so, and the first stop escalated). A stop
    # of a harness always counts: an agent saying "done" again must reach the escalation.
    again = (
        failing
        and reused_at is not None
        and task.source == "cli"
        and bool(entry["attempts"])
        and float(entry["attempts"][-1].get("time", 0)) >= reused_at
    )
    n_source = sources.get(task.source, 0) + (0 if again else 1)
    n_total = entry["total"] + (0 if again else 1)
    decision.attempt = _attempt(n_source, n_total, limits)
    if not failing and not human:
        tasks.pop(task.id, None)  # a pass closes the task
        return decision
    entry["verifies"] += 1
    if failing:
        sources[task.source] = n_source
        entry["total"] = n_total
    entry["attempts"] = [
        *entry["attempts"],
        _snapshot(verdict, task.source, entry["verifies"], now),
    ][-KEPT_ATTEMPTS:]
    for blocker in human:
        detail = f": {blocker['detail']}" if blocker.get("detail") else ""
        decision.reasons.append(
            f"The agent reported a blocker it cannot fix, {blocker['reason']} "
            f"({HUMAN_ONLY_REASONS[blocker['reason']]}){detail}"
        )
    if failing and n_source > limits.max:
        decision.reasons.append(
            f"The work failed the gate {n_source} times through {task.source}, more than "
            f"attempts.max ({limits.max}): agentgate stops sending the agent back."
        )
    # A gate that says only a human can take it from here (a budget spent, a loop).
    decision.reasons.extend(human_needed(verdict.gates))
    if failing and n_total > limits.global_max:
        doors = ", ".join(f"{k} {v}" for k, v in sorted(sources.items()))
        decision.reasons.append(
            f"The task was rejected {n_total} times across every source ({doors}); "
            f"the cap is {limits.global_max}."
        )
    if retry:
        blocker = retry[-1]
        decision.blocker = blocker["reason"]
        if failing:
            detail = f" ({blocker['detail']})" if blocker.get("detail") else ""
            decision.instruction = RETRY_REASONS[blocker["reason"]].format(detail=detail)
        entry["blockers"] = [b for b in entry["blockers"] if b not in retry]
    if human:
        decision.blocker = human[-1]["reason"]
    decision.escalate = bool(decision.reasons)
    if decision.escalate:
        decision.reasons.extend(stalled(entry["attempts"]))
        entry["escalated_at"] = now
        decision.report = escalation_report(task, entry, decision.reasons, limits)
    tasks[task.id] = entry
    return decision


# -- recording a verdict --------------------------------------------------------------------


def record(
    config: Config,
    task: TaskRef | None,
    judged: Verdict,
    conclude: Callable[[Decision | None], Verdict],
    *,
    wall_s: float | None = None,
    now: float | None = None,
    storage: Storage | None = None,
    source: str = "cli",
    reused_at: float | None = None,
) -> Verdict:
    """Count ``judged`` against its task, let ``conclude`` make the final Verdict, and keep it.

    Under the storage's lock: read the task's state, decide the attempt and any escalation
    (:func:`decide`), call ``conclude(decision)`` (pure: it applies the decision and writes the
    continuation text), then write the state, the escalation report and the history line.
    Trouble with the storage never raises, and never fails open: the verdict says attempts
    could not be recorded, and a failing verdict of a task escalates (without a count, sending
    the agent back could go on forever). A lock held past ``LEDGER_LOCK_WAIT_S`` by another
    process is not the storage failing: the verdict stands as judged, unrecorded, and says so.
    """
    now = time.time() if now is None else now
    task = resolve_task(config, task, source)
    store = storage or default_storage(config.root)
    try:
        with store.locked():
            decision: Decision | None = None
            state: dict[str, Any] = {}
            if task is not None:
                state = store.read_state()
                decision = decide(state, judged, task, Limits.of(config), now, reused_at)
                decision.notices = store.take_notices(task.id)
                _say_unwritable(decision, getattr(store, "trouble", None))
                if decision.escalate:
                    decision.report_location = store.escalation_location(task.id)
            verdict = conclude(decision)
            blocker = decision.blocker if decision else None
            line = history_record(verdict, task, wall_s, now, blocker, reused_at=reused_at)
            if task is not None and decision is not None:
                tail = getattr(store, "history_tail", None)
                if tail is not None:
                    # The history line goes into the state first (one atomic write): a process
                    # killed before it appends the line leaves it for the next record.
                    _append_pending(store, state, tail)
                    line["id"] = secrets.token_hex(8)
                    state[PENDING_KEY] = line
                store.write_state(state)
                if decision.escalate and decision.report is not None:
                    store.write_escalation(task.id, decision.report)
            store.append_history(line)
            return verdict
    except LockBusy as exc:
        # Not a verdict being recorded: something else holds the ledger. The verdict stands as
        # judged (a failing one still fails, never escalates to a stop) and says it was not
        # counted; the next verdict counts again once the lock is free.
        warn(f"could not record the verdict: {exc}")
        return conclude(Decision(task, notices=[f"{NOT_RECORDED}: {exc}"]))
    except OSError as exc:
        where = getattr(store, "directory", "its storage")
        warn(f"could not record the verdict under {where}: {exc}")
        return conclude(unrecorded(task, judged, f"{where}", exc))
    return conclude(None)  # pragma: no cover - the `with` returns or raises


# How a verdict that the ledger's lock kept from being counted says so.
NOT_RECORDED = "this attempt was not recorded"

# The state's copy of the last task verdict's history line, until a later record sees it in
# the history (appended) or appends it (the process that made it was killed first).
PENDING_KEY = "history_pending"
# How far back from the history's end the pending line is looked for: it is the last task line.
PENDING_TAIL_BYTES = 256 * 1024


def _append_pending(store: Storage, state: dict[str, Any], tail: Callable[[int], str]) -> None:
    """Append the previous task verdict's history line if its process died before it did."""
    pending = state.pop(PENDING_KEY, None)
    if not isinstance(pending, dict) or not isinstance(pending.get("id"), str):
        return
    if f'"id":"{pending["id"]}"' not in tail(PENDING_TAIL_BYTES):
        store.append_history(pending)


def _say_unwritable(decision: Decision, trouble: object) -> None:
    """The project's state folder could not be written (the copy outside counted the attempt):
    the agent is told, for the gates' reports are written there too."""
    if isinstance(trouble, LockBusy):
        text = (
            f"{trouble.strerror or trouble}: the attempt was counted outside the project; end "
            "that process."
        )
    elif isinstance(trouble, OSError):
        why = trouble.strerror or str(trouble)
        text = (
            f"agentgate's folder {STATE_DIR}/ in the project cannot be written ({why}), and the "
            "gates write their reports there: make it writable again."
        )
    else:
        return
    decision.instruction = f"{decision.instruction} {text}" if decision.instruction else text


def unrecorded(task: TaskRef | None, judged: Verdict, where: str, exc: OSError) -> Decision:
    """The decision when the state cannot be written: say so; a failing task goes to a human."""
    why = f"attempts could not be recorded in {where} ({exc.strerror or exc})"
    decision = Decision(task, notices=[why])
    if task is not None and judged.status != "pass":
        decision.escalate = True
        decision.reasons.append(
            f"agentgate {why}: without a count of the attempts, sending the agent back could go "
            "on forever, so a human takes over. Make the folder writable (or free the disk), "
            f"then `agentgate reset --task {task.id}`."
        )
        decision.report = (
            "\n".join(
                [
                    f"# agentgate: task {task.id} needs a human",
                    "",
                    "## Why",
                    "",
                    *(f"- {r}" for r in decision.reasons),
                ]
            )
            + "\n"
        )
    return decision


# -- blockers and reset ---------------------------------------------------------------------


def block(
    root: Path, task: TaskRef, reason: str, detail: str = "", now: float | None = None
) -> bool:
    """Record a blocker for ``task``. True when it is human-only (the next verify escalates)."""
    if reason not in BLOCK_REASONS:
        raise LedgerError(f"unknown reason {reason!r}; valid reasons: " + ", ".join(BLOCK_REASONS))
    now = time.time() if now is None else now
    with default_storage(root).transaction() as state:
        entry = state["tasks"].setdefault(task.id, new_entry())
        entry["blockers"].append(
            {"reason": reason, "detail": detail.strip(), "time": now, "source": task.source}
        )
    return reason in HUMAN_ONLY_REASONS


def reset(root: Path, task_id: str | None = None, now: float | None = None) -> int:
    """Forget the attempts and blockers of one task, or of every task. How many were cleared.

    The reset is recorded outside the project (who, when, which task), and the task's next
    verdict says so: a reset is never silent.
    """
    from pytest_agentgate.git import Repo
    from pytest_agentgate.state import snapshot, task_base, task_env

    now = time.time() if now is None else now
    storage = default_storage(root)
    # The task's base (in git, where it first met the gate; outside git, the snapshot of its
    # first verdict) is reset with it, and so is the test environment it began with.
    new_base = task_id is not None and snapshot.forget(root, task_id)
    if task_id is not None:
        repo = Repo.find(root)
        new_base = (repo is not None and task_base.forget(repo.toplevel, task_id, root)) or new_base
        # ...and the test environment it began with (state/task_env.py).
        new_base = task_env.forget(root, task_id) or new_base
    if not storage.has_state() and not new_base:
        return 0
    with storage.locked():
        state = storage.read_state()
        tasks: dict[str, Any] = state["tasks"]
        cleared = list(tasks) if task_id is None else [t for t in (task_id,) if t in tasks]
        for name in cleared:
            del tasks[name]
        if new_base and task_id is not None and task_id not in cleared:
            cleared.append(task_id)
        if cleared:
            storage.note_reset(cleared, now)
            storage.write_state(state)
    return len(cleared)


def task_state(root: Path, task_id: str) -> dict[str, Any] | None:
    """The recorded state of one task (for tests and tools), read under the lock."""
    storage = default_storage(root)
    with storage.locked():
        entry = storage.read_state()["tasks"].get(task_id)
    return entry if isinstance(entry, dict) else None


def read_history(root: Path) -> list[dict[str, Any]]:
    """Every readable history line of the project at ``root``."""
    return LocalStorage(root).read_history()
