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
- A blocker with a human-only reason (``needs_credentials``, ...) makes the next verify escalate
  at once, whatever the gates say, and stays until ``agentgate reset``: the agent declared it
  cannot finish, and gates do not measure that. ``transient`` and ``insufficient_context``
  are used once: the next failing verdict tells the agent to retry or to gather the context.

Files under ``.agentgate/`` (git-ignored): ``state.json`` (counters, replaced atomically),
``history.jsonl`` (one line per verdict, appended), ``escalations/<task>.md`` and
``ledger.lock``. Every read-modify-write holds an OS lock on ``ledger.lock``, so concurrent
verifies of one project neither lose nor duplicate an attempt.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_agentgate.config import STATE_DIR, Config
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.verdict import Attempt, GateResult, Verdict

STATE_FILE = "state.json"
HISTORY_FILE = "history.jsonl"
LOCK_FILE = "ledger.lock"
ESCALATIONS_DIR = "escalations"
STATE_SCHEMA = "agentgate.state/1"
HISTORY_VERSION = 1
DEFAULT_GLOBAL_MAX = 6
# Attempts kept per task for the escalation report; older ones are counted, not described.
KEPT_ATTEMPTS = 12
MAX_TASK_ID = 200

# The one list of blocker reasons: reason -> what it means, for the report and for `--help`.
HUMAN_ONLY_REASONS: dict[str, str] = {
    "needs_credentials": "needs credentials or secrets the agent does not have",
    "needs_permissions": "needs permissions the agent does not have",
    "needs_human_decision": "needs a decision only a human can make",
    "unsafe": "the agent judged the next step unsafe to take on its own",
}
RETRY_REASONS: dict[str, str] = {
    "transient": (
        "You reported a transient problem{detail}. Transient failures are not a reason to "
        "stop: retry the failing step now, and work around the problem if it persists."
    ),
    "insufficient_context": (
        "You reported missing context{detail}. Missing context is not a reason to stop: "
        "gather it yourself from the code, the tests, the documentation and the error output, "
        "then fix the failures."
    ),
}
BLOCK_REASONS: tuple[str, ...] = (*HUMAN_ONLY_REASONS, *RETRY_REASONS)


class LedgerError(AgentgateError, ValueError):
    """A usage mistake: an empty task id, an unknown blocker reason, a bad --since."""


def warn(message: str) -> None:
    """Ledger trouble is reported, never raised: a verdict must not die on its bookkeeping."""
    print(f"agentgate: warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class TaskRef:
    """Which task a verdict belongs to, and through which door it came."""

    id: str
    source: str = "cli"

    def __post_init__(self) -> None:
        check_task_id(self.id)


def check_task_id(task_id: str) -> str:
    if not task_id or not task_id.strip():
        raise LedgerError("a task id cannot be empty")
    if len(task_id) > MAX_TASK_ID or any(ch in task_id for ch in "\r\n\0"):
        raise LedgerError(f"a task id is one line of at most {MAX_TASK_ID} characters")
    return task_id


@dataclass(frozen=True)
class Limits:
    max: int = 3
    global_max: int = DEFAULT_GLOBAL_MAX

    @classmethod
    def of(cls, config: Config) -> Limits:
        return cls(
            max=config.attempts_max,
            global_max=getattr(config, "attempts_global_max", DEFAULT_GLOBAL_MAX),
        )


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


# -- files, locks and atomic writes ---------------------------------------------------------


def state_dir(root: Path) -> Path:
    from pytest_agentgate.engine import (
        ensure_state_dir,  # the engine owns the directory and its .gitignore
    )

    return ensure_state_dir(root)


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """An exclusive OS lock on ``directory/ledger.lock`` for one read-modify-write."""
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _lock(fd)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for ~10 s, then raises
                return
            except OSError:
                continue

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def write_atomic(path: Path, text: str) -> None:
    """Write a temp file next to ``path`` and rename it over: a reader sees old or new, whole."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; these files are for the team to read
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def append_line(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line with a single ``write()`` on an O_APPEND descriptor.

    Called under the lock. A line torn by a killed process is ended first, so the new line
    never glues onto it.
    """
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = "\n" + line
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def empty_state() -> dict[str, Any]:
    return {"schema": STATE_SCHEMA, "tasks": {}}


def read_state(directory: Path) -> dict[str, Any]:
    """The state, or an empty one; a corrupt file is set aside and reported, never raised."""
    path = directory / STATE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return empty_state()
    try:
        data = json.loads(text)
        problem = _state_problem(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problem = f"invalid JSON ({exc})"
    if problem is None:
        return data  # type: ignore[no-any-return]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = directory / f"{STATE_FILE}.corrupt-{stamp}"
    counter = 1
    while aside.exists():
        counter += 1
        aside = directory / f"{STATE_FILE}.corrupt-{stamp}-{counter}"
    os.replace(path, aside)
    warn(
        f"{path} is corrupt: {problem}; set aside as {aside.name}, "
        "starting with no recorded attempts"
    )
    return empty_state()


def _state_problem(data: Any) -> str | None:
    if not isinstance(data, dict) or data.get("schema") != STATE_SCHEMA:
        return f"not an {STATE_SCHEMA} document"
    tasks = data.get("tasks")
    if not isinstance(tasks, dict):
        return "'tasks' is not a mapping"
    for name, entry in tasks.items():
        if not (
            isinstance(entry, dict)
            and _is_count(entry.get("total"))
            and _is_count(entry.get("verifies"))
            and isinstance(entry.get("sources"), dict)
            and all(_is_count(v) for v in entry["sources"].values())
            and isinstance(entry.get("attempts"), list)
            and all(isinstance(a, dict) for a in entry["attempts"])
            and isinstance(entry.get("blockers"), list)
            and all(isinstance(b, dict) for b in entry["blockers"])
        ):
            return f"task {name!r} is malformed"
    return None


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def write_state(directory: Path, state: Mapping[str, Any]) -> None:
    write_atomic(directory / STATE_FILE, json.dumps(state, indent=1, ensure_ascii=False) + "\n")


def _new_entry() -> dict[str, Any]:
    return {"total": 0, "verifies": 0, "sources": {}, "attempts": [], "blockers": []}


@contextlib.contextmanager
def transaction(root: Path) -> Iterator[dict[str, Any]]:
    """Lock, read the state, let the caller change it, write it back atomically."""
    directory = state_dir(root)
    with locked(directory):
        state = read_state(directory)
        yield state
        write_state(directory, state)


# -- numbers and changes, for history and the escalation report -----------------------------

_COVERAGE = ("lines", "branches", "functions", "statements")


def key_numbers(gate: GateResult) -> dict[str, float | int]:
    """The few numbers that say how far a gate is from passing."""
    actual = gate.actual
    if gate.kind == "test":
        keys: tuple[str, ...] = ("passed", "failed", "errors", "skipped", "pass_rate")
    elif gate.kind == "lint":
        keys = ("errors", "warnings")
    elif gate.kind == "build":
        keys = ("errors", "exit_code")
    elif gate.kind == "coverage":
        keys = _COVERAGE
    else:
        keys = tuple(actual)
    out: dict[str, float | int] = {}
    for key in keys:
        value = actual.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = round(value, 4) if isinstance(value, float) else value
    if gate.kind == "test" and {"passed", "failed", "errors"} <= out.keys():
        out["executed"] = int(out["passed"] + out["failed"] + out["errors"])
    return out


def failure_reason(gate: GateResult) -> str:
    """A failing gate's kind of problem, normalised so that repeats can be counted."""
    return f"{gate.name}: {_problem_kind(gate)}"


def _problem_kind(gate: GateResult) -> str:
    numbers = key_numbers(gate)
    expected = gate.expected
    if gate.problems:
        text = gate.problems[0].lower()
        for needle, kind in (
            ("timed out", "command timed out"),
            ("timeout", "command timed out"),
            ("not found", "command or report not found"),
            ("no such", "command or report not found"),
            ("no report", "report missing"),
            ("missing", "report missing"),
            ("exited", "command failed"),
        ):
            if needle in text:
                return kind
    if gate.kind == "test":
        if numbers.get("executed") == 0:
            return "no tests executed"
        if numbers.get("failed", 0) or numbers.get("errors", 0):
            return "failing tests"
    if gate.kind in ("lint", "build"):
        errors, limit = numbers.get("errors"), expected.get("max_errors")
        if errors is not None and limit is not None and errors > limit:
            return f"{gate.kind} errors"
        warnings, wlimit = numbers.get("warnings"), expected.get("max_warnings")
        if warnings is not None and wlimit is not None and warnings > wlimit:
            return "too many warnings"
    if gate.kind == "coverage":
        below = [
            m
            for m in _COVERAGE
            if isinstance(expected.get(m), (int, float))
            and (m not in numbers or numbers[m] < expected[m])
        ]
        if below:
            return f"{'/'.join(below)} coverage below threshold"
    # Anything else: the summary with its numbers taken out.
    return re.sub(r"\d+(\.\d+)?", "N", gate.summary)[:80] or "failed"


def _fmt(value: float | int | None, percent: bool = False) -> str:
    if value is None:
        return "?"
    if percent:
        return f"{value:.2f}%"
    return f"{value:g}" if isinstance(value, float) else str(value)


def describe_change(
    name: str, kind: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> str:
    """One gate between two attempts: ``test: 15 -> 17 of 20 passed``, ``lint: 4 errors,
    unchanged``."""
    old, new = before.get("numbers") or {}, after.get("numbers") or {}
    flip = ""
    if before.get("status") != after.get("status"):
        flip = " (now passing)" if after.get("status") == "pass" else " (now failing)"
    if kind == "test" and "executed" in old and "executed" in new:
        p1, e1, p2, e2 = old["passed"], old["executed"], new["passed"], new["executed"]
        if (p1, e1) == (p2, e2):
            return f"{name}: {p2} of {e2} passed, unchanged{flip}"
        if e1 == e2:
            return f"{name}: {p1} -> {p2} of {e2} passed{flip}"
        return f"{name}: {p1} of {e1} -> {p2} of {e2} passed{flip}"
    parts, moved = _metric_parts(kind, old, new)
    if not parts:
        if before.get("summary") == after.get("summary"):
            return f"{name}: unchanged ({after.get('summary')}){flip}"
        return f"{name}: {after.get('summary')}{flip}"
    tail = "" if moved else ", unchanged"
    return f"{name}: {', '.join(parts)}{tail}{flip}"


def _metric_parts(
    kind: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[list[str], bool]:
    if kind in ("lint", "build"):
        keys: tuple[str, ...] = ("errors", "warnings")
    elif kind == "coverage":
        keys = _COVERAGE
    else:
        keys = tuple(dict.fromkeys([*old, *new]))
    parts: list[str] = []
    moved = False
    for key in keys:
        a, b = old.get(key), new.get(key)
        if a is None and b is None:
            continue
        if kind in ("lint", "build") and key != "errors" and not a and not b:
            continue  # "4 errors" reads better than "4 errors, 0 warnings"
        percent = kind == "coverage"
        if a == b:
            value = _fmt(b, percent)
        else:
            moved = True
            value = f"{_fmt(a, percent)} -> {_fmt(b, percent)}"
        label_first = percent or kind not in ("lint", "build")
        if not label_first and a == b == 1:
            key = key.removesuffix("s")  # "1 error", not "1 errors"
        parts.append(f"{key} {value}" if label_first else f"{value} {key}")
    return parts, moved


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
    report_path: Path | None = None


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
    state: dict[str, Any], verdict: Verdict, task: TaskRef, limits: Limits, now: float
) -> Decision:
    """Count this verdict against the task in ``state`` (changed in place)."""
    tasks: dict[str, Any] = state["tasks"]
    entry = tasks.get(task.id) or _new_entry()
    decision = Decision(task)
    human = [b for b in entry["blockers"] if b.get("reason") in HUMAN_ONLY_REASONS]
    retry = [b for b in entry["blockers"] if b.get("reason") in RETRY_REASONS]
    failing = verdict.status != "pass"
    sources: dict[str, int] = entry["sources"]
    n_source = sources.get(task.source, 0) + 1
    n_total = entry["total"] + 1
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
        decision.reasons.extend(_stalled(entry["attempts"]))
        entry["escalated_at"] = now
        decision.report = escalation_report(task, entry, decision.reasons, limits)
    tasks[task.id] = entry
    return decision


def _stalled(attempts: list[dict[str, Any]]) -> list[str]:
    """Failing gates whose numbers did not move over the last attempts."""
    if len(attempts) < 2:
        return []
    last = {g["name"]: g for g in attempts[-1]["gates"] if g["status"] == "fail"}
    out = []
    for name, gate in last.items():
        streak = 1
        for earlier in reversed(attempts[:-1]):
            same = next((g for g in earlier["gates"] if g["name"] == name), None)
            if same is None or same["numbers"] != gate["numbers"] or not gate["numbers"]:
                break
            streak += 1
        if streak >= 2:
            out.append(f"{name} has not moved over the last {streak} attempts.")
    return out


# -- the escalation report ------------------------------------------------------------------


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def escalation_report(
    task: TaskRef, entry: Mapping[str, Any], reasons: list[str], limits: Limits
) -> str:
    """Markdown for a human: why, what failed on each attempt, what changed between them."""
    attempts: list[dict[str, Any]] = entry["attempts"]
    lines = [
        f"# agentgate: task {task.id} needs a human",
        "",
        f"{entry['total']} rejections so far (limits: {limits.max} per source, "
        f"{limits.global_max} across sources).",
        "",
        "## Why",
        "",
        *(f"- {r}" for r in reasons),
        "",
        "## What failed on each attempt",
        "",
    ]
    if attempts and attempts[0]["n"] > 1:
        lines.append(f"({attempts[0]['n'] - 1} earlier attempts not shown.)")
    for attempt in attempts:
        failed = [g for g in attempt["gates"] if g["status"] == "fail"]
        what = "; ".join(f"{g['name']}: {g['summary']}" for g in failed) or "every gate passed"
        lines.append(f"{attempt['n']}. {_when(attempt['time'])}, via {attempt['source']}: {what}")
    changes = _changes(attempts)
    if changes:
        lines.extend(["", "## What changed between attempts", "", *changes])
    lines.extend(
        [
            "",
            f"When you have taken over or removed the blocker, `agentgate reset --task "
            f"{task.id}` gives the agent a fresh count.",
        ]
    )
    return "\n".join(lines) + "\n"


def _changes(attempts: list[dict[str, Any]]) -> list[str]:
    out = []
    for before, after in itertools.pairwise(attempts):
        old = {g["name"]: g for g in before["gates"]}
        parts = [
            describe_change(g["name"], g["kind"], old[g["name"]], g)
            for g in after["gates"]
            if g["name"] in old and "fail" in (g["status"], old[g["name"]]["status"])
        ]
        if parts:
            out.append(f"- {before['n']} -> {after['n']}: " + "; ".join(parts))
    return out


def report_name(task_id: str) -> str:
    """A safe file name for a task id; ids that had to be altered get a hash to stay unique."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id).strip("._")[:80]
    if safe != task_id:
        digest = hashlib.sha1(task_id.encode("utf-8")).hexdigest()[:8]
        safe = f"{safe}-{digest}" if safe else digest
    return f"{safe}.md"


# -- the one entry point of the engine -----------------------------------------------------


def history_record(
    verdict: Verdict,
    task: TaskRef | None,
    wall_s: float | None,
    now: float,
    blocker: str | None,
) -> dict[str, Any]:
    gates = []
    for g in verdict.gates:
        item: dict[str, Any] = {
            "name": g.name,
            "kind": g.kind,
            "status": g.status,
            "duration_s": None if g.duration_s is None else round(g.duration_s, 3),
            "numbers": key_numbers(g),
        }
        if g.failed:
            item["reason"] = failure_reason(g)
        gates.append(item)
    return {
        "v": HISTORY_VERSION,
        "time": datetime.fromtimestamp(now, timezone.utc).isoformat(timespec="seconds"),
        "ts": round(now, 3),
        "task": None if task is None else task.id,
        "source": None if task is None else task.source,
        "status": verdict.status,
        "attempt": None if verdict.attempt is None else verdict.attempt.to_dict(),
        "profile": verdict.profile,
        "wall_s": None if wall_s is None else round(wall_s, 3),
        "blocker": blocker,
        "gates": gates,
    }


def settle(
    verdict: Verdict,
    config: Config,
    task: TaskRef | None,
    *,
    wall_s: float | None = None,
    now: float | None = None,
) -> str | None:
    """Decide the attempt and the escalation of ``verdict`` once, and record it.

    Sets ``verdict.attempt``, and on escalation ``verdict.status = "escalate"`` and
    ``verdict.escalation``; writes the escalation report; appends the history line. Returns an
    extra instruction for the continuation text (a ``transient`` or ``insufficient_context``
    blocker), or None. Trouble with the files is a warning, never an exception.
    """
    now = time.time() if now is None else now
    task = resolve_task(config, task)
    decision = Decision(task)
    try:
        directory = state_dir(config.root)
        with locked(directory):
            if task is not None:
                state = read_state(directory)
                decision = decide(state, verdict, task, Limits.of(config), now)
                write_state(directory, state)
                _apply(decision, verdict, directory)
            record = history_record(verdict, task, wall_s, now, decision.blocker)
            append_line(directory / HISTORY_FILE, record)
    except OSError as exc:
        warn(f"could not record the verdict under {STATE_DIR}/: {exc}")
    return decision.instruction if verdict.status == "fail" else None


def _apply(decision: Decision, verdict: Verdict, directory: Path) -> None:
    verdict.attempt = decision.attempt
    if not decision.escalate or decision.task is None:
        return
    verdict.status = "escalate"
    verdict.escalation = decision.report
    path = directory / ESCALATIONS_DIR / report_name(decision.task.id)
    path.parent.mkdir(exist_ok=True)
    write_atomic(path, decision.report or "")
    decision.report_path = path
    verdict.notices.append(
        f"escalated to a human: the report is in {STATE_DIR}/{ESCALATIONS_DIR}/{path.name}"
    )


# -- blockers and reset ---------------------------------------------------------------------


def block(
    root: Path, task: TaskRef, reason: str, detail: str = "", now: float | None = None
) -> bool:
    """Record a blocker for ``task``. True when it is human-only (the next verify escalates)."""
    if reason not in BLOCK_REASONS:
        raise LedgerError(f"unknown reason {reason!r}; valid reasons: " + ", ".join(BLOCK_REASONS))
    now = time.time() if now is None else now
    with transaction(root) as state:
        entry = state["tasks"].setdefault(task.id, _new_entry())
        entry["blockers"].append(
            {"reason": reason, "detail": detail.strip(), "time": now, "source": task.source}
        )
    return reason in HUMAN_ONLY_REASONS


def reset(root: Path, task_id: str | None = None) -> int:
    """Forget the attempts and blockers of one task, or of every task. How many were cleared."""
    if not (root / STATE_DIR / STATE_FILE).exists():
        return 0
    with transaction(root) as state:
        tasks: dict[str, Any] = state["tasks"]
        if task_id is None:
            count = len(tasks)
            tasks.clear()
            return count
        return 1 if tasks.pop(task_id, None) is not None else 0


def task_state(root: Path, task_id: str) -> dict[str, Any] | None:
    """The recorded state of one task (for tests and tools), read under the lock."""
    directory = state_dir(root)
    with locked(directory):
        entry = read_state(directory)["tasks"].get(task_id)
    return entry if isinstance(entry, dict) else None


# -- reading the history --------------------------------------------------------------------


def read_history(root: Path) -> list[dict[str, Any]]:
    """Every readable history line. A torn or corrupt line is skipped with a warning."""
    path = root / STATE_DIR / HISTORY_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    records = []
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            record = None
        if isinstance(record, dict) and isinstance(record.get("ts"), (int, float)):
            records.append(record)
            continue
        where = "its last line is torn" if index == last else f"line {index + 1} is unreadable"
        warn(f"{path}: {where} (an interrupted write?); skipped it")
    return records
