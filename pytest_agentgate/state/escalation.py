"""The escalation report: what a human reads when the agent's attempts are used up."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from pytest_agentgate.reports.model import METRICS
from pytest_agentgate.state.task import Limits, TaskRef


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
        keys = METRICS
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


def stalled(attempts: list[dict[str, Any]]) -> list[str]:
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
