"""The history: one line per verdict, for ``agentgate stats`` and the escalation report."""

from __future__ import annotations

import contextlib
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_agentgate.reports.model import METRICS
from pytest_agentgate.state.task import TaskRef
from pytest_agentgate.verdict import GateResult, Verdict

HISTORY_VERSION = 1


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
        keys = METRICS
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
            for m in METRICS
            if isinstance(expected.get(m), (int, float))
            and (m not in numbers or numbers[m] < expected[m])
        ]
        if below:
            return f"{'/'.join(below)} coverage below threshold"
    # Anything else: the summary with its numbers taken out.
    return re.sub(r"\d+(\.\d+)?", "N", gate.summary)[:80] or "failed"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


def history_record(
    verdict: Verdict,
    task: TaskRef | None,
    wall_s: float | None,
    now: float,
    blocker: str | None,
    *,
    reused_at: float | None = None,
) -> dict[str, Any]:
    """The verdict's history line; ``reused_at``: when the run whose judged gates the verdict
    reused (the verdict cache) was made."""
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
    record = {
        "v": HISTORY_VERSION,
        "time": _iso(now),
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
    if reused_at is not None:
        record["reused"] = _iso(reused_at)
    if session := session_numbers(verdict):
        record["session"] = session
    return record


def session_numbers(verdict: Verdict) -> dict[str, Any] | None:
    """What the agent's session cost so far, from the session gate's transcript: its time
    (first to last timestamp), tokens and tool calls. None without a transcript."""
    for gate in verdict.gates:
        if gate.kind == "session" and gate.actual.get("transcript") is not None:
            numbers = {k: gate.actual.get(k) for k in ("duration_s", "tokens", "tool_calls")}
            if any(isinstance(v, (int, float)) for v in numbers.values()):
                return numbers
    return None


def finished_within(root: Path, names: list[str], budget: float) -> dict[str, float]:
    """Of the gates ``names``, those an earlier verdict of the project (its history, or the
    verdict kept for reuse in the user's state) saw finish within ``budget``: the latest time
    each took. A gate never seen to finish is not there: a suite that has always been slower
    than the budget is the configuration's trouble, not the change's."""
    from pytest_agentgate.state.cache import read_entry
    from pytest_agentgate.state.storage import LocalStorage

    records: list[Any] = []
    with contextlib.suppress(OSError, ValueError):
        records.extend(LocalStorage(root).read_history())
    entry = read_entry(root)
    if entry is not None:
        records.append(entry)
    seen: dict[str, float] = {}
    for record in records:
        gates = record.get("gates") if isinstance(record, dict) else None
        for gate in gates if isinstance(gates, list) else []:
            if not isinstance(gate, dict) or gate.get("name") not in names:
                continue
            took = gate.get("duration_s")
            if gate.get("status") not in ("pass", "fail") or isinstance(took, bool):
                continue
            if isinstance(took, (int, float)) and 0 <= took < budget:
                seen[str(gate["name"])] = float(took)
    return seen
