"""``agentgate hook HARNESS``: may the agent stop? Asked by the harness, answered in its protocol.

The door translates: the event becomes a :class:`~pytest_agentgate.engine.Request` (door
``hook:<harness>``, task = the harness session, claim = the agent's final message, the
transcript), the one pipeline judges, and the Verdict becomes the harness's answer:

- fail: block, with the continuation text as the agent's next instruction;
- pass: allow;
- escalate: allow, and tell the user, in the harness's channel, where the report is;
- agentgate's own trouble (a broken configuration, a bug, the time budget run out): allow, and
  tell the user loudly what broke. The gate never traps an agent for a fault of its own.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pytest_agentgate.config.model import DEFAULT_HOOK_BUDGET_S
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.harness.protocols import Answer, EventError, Harness, HookEvent
from pytest_agentgate.state.stops import StopRecord, session_stops, stop_key

if TYPE_CHECKING:
    from pytest_agentgate.config.model import Config
    from pytest_agentgate.verdict import Verdict

# Kept back from the budget for judging and answering once the commands have stopped.
ANSWER_RESERVE_S = 5.0

OutcomeKind = Literal["pass", "block", "escalate", "trouble", "skip"]


@dataclass
class Deadline:
    """When the hook must have answered: its budget, from the moment it started. The default
    budget holds until the project's configuration names one (``hook: {budget: N}``)."""

    budget_s: float = DEFAULT_HOOK_BUDGET_S
    started: float = field(default_factory=time.monotonic)
    # Set to stop the gate commands: by the budget's timer, or when agentgate itself must end.
    cancel: threading.Event = field(default_factory=threading.Event)

    def remaining(self) -> float:
        return self.started + self.budget_s - time.monotonic()

    def out_of_time(self) -> Outcome:
        """The answer when the budget ran out before the verdict was ready."""
        return trouble(
            f"its time budget of {self.budget_s:g} s ran out before it could judge the gates' "
            "evidence (reading the reports or the change took too long); what it had started "
            "was stopped. Raise `hook: {budget: N}` in agentgate.yml (and the harness's hook "
            "timeout, which `agentgate install-hook` sets above it)."
        )


@dataclass(frozen=True)
class Outcome:
    """The door's answer before a harness's protocol shapes it."""

    kind: OutcomeKind
    # block: the continuation text (for the model); otherwise the message for the user.
    text: str = ""
    # block: one line for the user beside the block (harnesses that show one).
    status_line: str | None = None


def answer(harness: Harness, outcome: Outcome) -> Answer:
    if outcome.kind == "block":
        return harness.block(outcome.text, outcome.status_line)
    if outcome.kind == "skip" or (outcome.kind == "pass" and harness.name in ("copilot", "cursor")):
        # Copilot shows a message only as a warning, Cursor not at all: a pass stays quiet.
        return harness.allow(None)
    return harness.allow(outcome.text)


def trouble(what: str) -> Outcome:
    return Outcome(
        "trouble",
        f"agentgate could not gate this stop: {what} The agent was allowed to stop, and its work "
        "was NOT verified.",
    )


def handle(
    harness: Harness, raw: bytes, deadline: Deadline | None = None, *, managed: bool = False
) -> Answer:
    """The whole hook: the event's bytes in, the harness's answer out. Raises only for bugs
    (the CLI turns those into an allowing answer too). ``deadline``: when the answer is due
    (the CLI answers for this call when it is not back by then). ``managed``: the hook of
    Claude Code's managed settings, which every session on the machine runs: it gates only a
    project that runs agentgate's own Stop hook, or a session seen in one, and says nothing
    elsewhere (harness/managed.py)."""
    try:
        event = harness.parse(raw)
    except EventError as exc:
        if managed:  # every session's hook: never a word where agentgate may not be wanted
            return answer(harness, Outcome("skip"))
        return answer(harness, trouble(f"{exc}. Is the hook installed for {harness.title}?"))
    if not event.judge:
        return answer(harness, Outcome("skip"))
    seen: Path | None = None
    if managed:
        armed, seen = _armed_session(harness, event)
        if not armed:
            return answer(harness, Outcome("skip"))
    outcome = gate_stop(harness, event, deadline or Deadline(), managed=managed, seen=seen)
    return answer(harness, outcome)


# Where Claude Code reads a project's settings, from the project's folder.
_PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")


def _armed_session(harness: Harness, event: HookEvent) -> tuple[bool, Path | None]:
    """Whether the managed hook gates this stop: the event's folder is in a project that runs
    agentgate's Stop hook (:func:`_armed`), or the session was seen in one before. Red team 56:
    an agent that took agentgate's entry out of the project's settings, then stopped with its
    shell in a nested ``git init`` of its own, in a link that leads out of the project, or in a
    folder it had deleted, was answered ``{}``. Where the session started is kept in the user's
    state directory (state/sessions.py, with its pinned base as the fallback); the project's
    ``.agentgate/task-bases.json`` names the session too, so deleting or moving the user's
    records (a project's settings can set ``AGENTGATE_STATE_HOME`` for every hook it runs)
    leaves the project that recorded it above the event's folder. Where it is found there, or
    from the pin alone, that folder is kept as the session's start and given with the answer:
    gate_stop gates it, whether the record could be written or not. Nothing is written for a
    session no armed project has seen. (armed, the folder to gate where no record names it)."""
    cwd = Path(event.cwd)
    if cwd.is_dir() and _armed(cwd, event.session):
        return True, None
    from pytest_agentgate.state.sessions import remember_start, started_in
    from pytest_agentgate.state.task_base import pinned_in

    start = started_in(harness.name, event.session)
    if start is not None and start.is_dir() and _armed(start, event.session):
        return True, None
    for found in (*pinned_in(event.session)[:1], _seen_above(cwd, event.session)):
        if found is not None and found.is_dir() and _armed(found, event.session):
            if start is None:  # the record of its start is gone: this is where it began
                remember_start(harness.name, event.session, found)
            return True, found
    return False, None


def _seen_above(cwd: Path, session: str) -> Path | None:
    """The nearest folder at or above ``cwd`` (as written, and as its links resolve) whose
    ``.agentgate/`` names ``session``'s pinned base: a project the session met the gate in."""
    from pytest_agentgate.state.storage import Anchors
    from pytest_agentgate.state.task_base import ANCHORS, task_key

    if not cwd.is_absolute():
        return None
    written = Path(os.path.normpath(cwd))
    places = [written, *written.parents]
    with contextlib.suppress(OSError, RuntimeError):
        resolved = cwd.resolve()
        places += [resolved, *resolved.parents]
    key = task_key(session)
    for place in dict.fromkeys(places):
        if Anchors(place, ANCHORS).get(key) is not None and place.is_dir():
            return place
    return None


def _armed(cwd: Path, session: str) -> bool:
    """Whether the project a Claude Code session works in runs agentgate's Stop hook: its
    ``.claude/settings.json`` (or ``settings.local.json``), in the session's folder or one
    above it up to the repository's top level, names ``agentgate hook claude`` on disk, at
    the base pinned for the session's task, at the merge-base with the default branch, or at
    HEAD. Nothing is written: the managed hook runs in every session on the machine."""
    from pytest_agentgate.git import Base, GitError, Repo
    from pytest_agentgate.harness.install import our_entries
    from pytest_agentgate.harness.protocols import HARNESSES
    from pytest_agentgate.state.task_base import pinned
    from pytest_agentgate.texts import read_regular_text

    claude = HARNESSES["claude"]
    try:
        folder = cwd.resolve()
    except OSError:
        return False
    repo = Repo.find(folder)
    top = repo.toplevel if repo is not None else None
    folders = [folder]
    if top is not None and top != folder and top in folder.parents:
        folders += [p for p in folder.parents if p == top or top in p.parents]
    for place in folders:
        for name in _PROJECT_SETTINGS:
            try:
                text = read_regular_text(place / name)
            except (OSError, UnicodeDecodeError):
                continue
            if our_entries(claude, text):
                return True
    if repo is None or top is None:
        return False
    paths = [(p / name).relative_to(top).as_posix() for p in folders for name in _PROJECT_SETTINGS]
    shas: list[str | None] = [pinned(top, session)]
    try:
        base = repo.resolve_base()
        shas.append(base.sha if isinstance(base, Base) else None)
        shas.append(repo.commit("HEAD"))
        for sha in dict.fromkeys(s for s in shas if s):
            texts = repo.read_at(Base("", sha, ""), paths)
            if any(our_entries(claude, text) for text in texts.values()):
                return True
    except (GitError, OSError):
        return True  # git cannot tell: gate (the project hook, if it runs, gates the same stop)
    return False


def gate_stop(
    harness: Harness,
    event: HookEvent,
    deadline: Deadline,
    *,
    managed: bool = False,
    seen: Path | None = None,
) -> Outcome:
    """Gate the stop ``event`` reports, in the project the session started in. ``seen``: the
    project the managed hook found the session in where no record of its start names one
    (:func:`_armed_session`): gated, wherever the event's folder is."""
    from pytest_agentgate.config.resolve import resolve_config
    from pytest_agentgate.registry import get_registry
    from pytest_agentgate.state.sessions import remember_start

    cwd = Path(event.cwd)
    moved = None
    if seen is not None:
        if seen != Path(os.path.realpath(cwd)):
            moved = (
                f"the agent's shell is in {cwd}, but its session was seen in {seen}: that "
                "project is gated"
            )
            cwd = seen
    elif cwd.is_dir():
        origin = remember_start(harness.name, event.session, cwd)
        if harness.start_event is None and origin != Path(os.path.realpath(cwd)):
            # No session start to record the folder before the agent can act: the folder its
            # first stop named may be one the agent piped in itself (red team 38: a scratch
            # copy that passes). The harness names its workspace, which no `cd` moves: that
            # is gated.
            moved = (
                f"the session was first seen in {origin}, but {harness.title} names {cwd} as "
                "its workspace: the workspace is gated"
            )
        elif origin != Path(os.path.realpath(cwd)) and origin.is_dir():
            moved = (
                f"the agent's shell is in {cwd}, but its session started in {origin}: the "
                "project the session started in is gated"
            )
            cwd = origin
    else:
        kept = None
        with contextlib.suppress(Exception):
            from pytest_agentgate.state.sessions import started_in

            kept = started_in(harness.name, event.session)
        if kept is None or not kept.is_dir():
            return trouble(f"the event's cwd {event.cwd!r} is not a folder.")
        moved = f"the event's folder {event.cwd} is gone; the session started in {kept}"
        cwd = kept
    registry = get_registry()
    try:
        config = resolve_config(cwd, registry=registry, task=event.session)
    except AgentgateError as exc:
        return trouble(f"its configuration is broken: {exc}. Fix it, and the next stop is gated.")
    deadline.budget_s = float(config.hook_budget_s)
    if managed:  # its timeout in the managed settings is set above the default budget
        deadline.budget_s = min(deadline.budget_s, float(DEFAULT_HOOK_BUDGET_S))
    notice = _within_harness_cap(harness, config)
    if moved is not None:
        config.notices.append(moved)
    with session_stops(config.root, event.session) as book:
        words = event.message if event.replies is None else event.replies
        key = stop_key(event.session, words, event.stamp)
        last = book.read() if book is not None else None
        started = time.time()
        if (
            last is not None
            and last.same_stop(key, started)
            and last.outcome.get("kind") == "block"
        ):
            # Only a block is answered again: a record of a pass in the user's folder, kept
            # fresh by a process of the agent's (red team 16), must not let a stop go ungated.
            # A repeat of a passing stop is gated again; the verdict cache makes it quick.
            return Outcome(**last.outcome)
        claim = event.message
        if event.replies is not None:
            claim = _new_replies(event.replies, last.replies if last else None)
        outcome = _judge(harness, event, config, claim, notice, deadline)
        if book is not None:
            book.write(StopRecord(key, time.time(), asdict(outcome), event.replies))
        return outcome


def _within_harness_cap(harness: Harness, config: Config) -> str | None:
    """Escalate before the harness's own cap on consecutive blocks ends the loop silently."""
    cap = harness.block_cap
    if cap is None:
        return None
    most = cap - 1
    notices = []
    if config.attempts_max > most:
        notices.append(f"attempts.max {config.attempts_max}")
        config.attempts_max = most
    if config.attempts_global_max > most:
        if not notices:
            notices.append(f"attempts.global_max {config.attempts_global_max}")
        config.attempts_global_max = most
    if not notices:
        return None
    return (
        f"{notices[0]} is more than {harness.title} allows: it lets the agent stop after {cap} "
        f"blocks in a row, so agentgate escalates after {most}"
    )


def _new_replies(replies: str, seen: str | None) -> str:
    """Gemini CLI's ``prompt_response`` holds every reply so far: the new one is what follows
    the part the previous stop saw."""
    if seen and replies.startswith(seen) and len(replies) > len(seen):
        return replies[len(seen) :].strip() or replies
    return replies


def _judge(
    harness: Harness,
    event: HookEvent,
    config: Config,
    claim: str | None,
    notice: str | None,
    deadline: Deadline,
) -> Outcome:
    from pytest_agentgate.engine import Pipeline, Request
    from pytest_agentgate.state.history import finished_within

    if notice:
        config.notices.append(notice)
    transcript = Path(event.transcript) if event.transcript else None
    request = Request(
        config,
        door=f"hook:{harness.name}",
        task=event.session,
        claim=claim,
        transcript=transcript,
        run=True,
        record=True,
        cache=True,
    )
    budget = deadline.budget_s
    pipeline = Pipeline(request)
    verdict = pipeline.reuse()
    if verdict is not None:
        return _outcome(verdict, config, event)
    timer = threading.Timer(max(1.0, deadline.remaining() - ANSWER_RESERVE_S), deadline.cancel.set)
    timer.daemon = True
    timer.start()
    try:
        results = pipeline.run_commands(cancel=deadline.cancel)
    finally:
        timer.cancel()
    unfinished = sorted(name for name, result in results.items() if result.cancelled)
    before = finished_within(config.root, unfinished, budget) if unfinished else {}
    if unfinished and len(before) == len(unfinished):
        # Each gate still running at the budget finished within it at an earlier verdict of
        # the project: the change made it slow (red team 55: a new test that sleeps past the
        # budget was agentgate's trouble, which let every stop go). Judged, and counted.
        for name in unfinished:
            results[name] = replace(
                results[name], cancelled=False, over_budget=(budget, before[name])
            )
        return _outcome(pipeline.verdict(), config, event)
    if unfinished:
        for name in unfinished:
            results[name] = replace(results[name], cancelled=False, stopped_at_budget=budget)
        gates = pipeline.judged()
        if any(
            g.failed and g.blocking and g.name in results and g.name not in unfinished
            for g in gates
        ):
            # A gate that finished failed: the work is not done whatever the others would have
            # said (red team 56 added a slow gate of its own beside a failing test, and every
            # stop was agentgate's trouble). Judged, counted; those stopped say so.
            return _outcome(pipeline.concluded(gates), config, event)
        request.record = False  # nothing was judged: no attempt is counted
        return trouble(
            f"its time budget of {budget:g} s ran out before {', '.join(unfinished)} finished; "
            "they were stopped. Make them faster, or raise `hook: {budget: N}` in agentgate.yml "
            "(and the harness's hook timeout, which `agentgate install-hook` sets above it)."
        )
    return _outcome(pipeline.verdict(), config, event)


def _for_review(verdict: Verdict) -> str:
    """What a passing verdict's integrity gate reported without blocking, for the user to see
    beside the pass (red team 33: a test's expectation changed to agree with the code, a
    notice only in the verdict's JSON)."""
    notes = [
        f"{f.code} at {f.path}{f':{f.line}' if f.line else ''}" if f.path else str(f.code)
        for gate in verdict.gates
        if gate.kind == "integrity"
        for f in gate.findings
        if f.severity != "error"
    ]
    if not notes:
        return ""
    more = f" and {len(notes) - 3} more" if len(notes) > 3 else ""
    return f"; for a reviewer: {', '.join(notes[:3])}{more} (`agentgate verify` shows why)"


def _outcome(verdict: Verdict, config: Config, event: HookEvent) -> Outcome:
    from pytest_agentgate.state.ledger import NOT_RECORDED
    from pytest_agentgate.state.storage import default_storage

    failed = ", ".join(g.name for g in verdict.failed_gates if g.blocking) or "none"
    attempt = (
        f", attempt {verdict.attempt.number} of {verdict.attempt.max}" if verdict.attempt else ""
    )
    if verdict.status == "pass":
        return Outcome("pass", f"agentgate: PASS (profile {verdict.profile}){_for_review(verdict)}")
    if verdict.status == "escalate":
        where = default_storage(config.root).escalation_location(event.session)
        return Outcome(
            "escalate",
            f"agentgate: a human is needed. The gate still fails ({failed}) and the agent has "
            f"used its attempts, or hit something only a person can fix. The agent was allowed "
            f"to stop. Report: {config.root / where}",
        )
    status = f"agentgate: FAIL{attempt} (failed: {failed})"
    unrecorded = [n for n in verdict.notices if n.startswith(NOT_RECORDED)]
    if unrecorded:  # the ledger's lock held by another process: the stop is blocked all the same
        status += f"; {unrecorded[0]}"
    return Outcome(
        "block",
        verdict.continuation or f"agentgate: the gate failed ({failed}).",
        status,
    )
