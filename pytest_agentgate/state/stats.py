"""The gate's own dashboard: numbers computed from ``.agentgate/history.jsonl`` only.

Every number is computed once, in :func:`compute`, and every format (text, JSON, markdown, SVG)
renders the same dictionary. Definitions:

- tasks: distinct non-null task ids; verdicts without a task count only in the totals, the
  per-gate numbers and the per-day chart.
- first-try pass rate: tasks whose first verdict in the window passed, over tasks.
- rejections per task: failing verdicts (``fail`` and ``escalate``) per task, bucketed 0, 1, 2, 3+.
- escalation rate: tasks with at least one ``escalate`` verdict, over tasks.
- per gate: pass rate over the runs that were judged (skipped runs left out), mean duration.
- gate time as a share of task time: over the tasks whose time is known, the wall time of their
  verifies (what the agent waited for the gate) over the task's time. A task's time is the
  longest of its session's transcript (first timestamp to last, as the hook door reads it) and
  the span of its verdicts (the first verify's start to the last verdict); a task with one
  verdict and no transcript, or a verdict without its wall time, has no known time.
- tokens per task: the mean, over tasks whose transcript was read, of the tokens the session had
  spent at its last verdict.
- top failure reasons: the normalised reason of every failed gate (``test: failing tests``).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta, timezone
from typing import Any
from xml.sax.saxutils import escape

from pytest_agentgate.state.task import LedgerError

STATS_SCHEMA = "agentgate.stats/1"
TOP_REASONS = 5
SVG_DAYS = 60
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str) -> float:
    """``7d``, ``24h``, ``30m``, ``2w``, ``90s`` -> seconds."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text or "")
    if not found or float(found.group(1)) <= 0:
        raise LedgerError(
            f"--since expects a positive duration such as 7d, 24h or 30m, got {text!r}"
        )
    return float(found.group(1)) * _UNITS[found.group(2)]


def _rate(part: int, whole: int) -> float | None:
    return None if whole == 0 else part * 100.0 / whole


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).date().isoformat()


def compute(
    records: Iterable[Mapping[str, Any]],
    *,
    since: str | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """Every statistic of the history lines in the window."""
    now = datetime.now(timezone.utc).timestamp() if now is None else now
    start = None if since is None else now - parse_since(since)
    rows = sorted((r for r in records if start is None or r["ts"] >= start), key=lambda r: r["ts"])
    status_counts = Counter(str(r.get("status")) for r in rows)
    return {
        "schema": STATS_SCHEMA,
        "since": since,
        "from": None if start is None else _iso(start),
        "to": _iso(now),
        "verdicts": len(rows),
        "passed": status_counts["pass"],
        "failed": status_counts["fail"],
        "escalated": status_counts["escalate"],
        **_task_stats(rows),
        **_gate_stats(rows),
        **_task_cost(rows),
        "top_failure_reasons": _top_reasons(rows),
        "days": _days(rows),
    }


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds")


def _task_stats(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    by_task: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("task") is not None:
            by_task[str(row["task"])].append(row)
    buckets = {"0": 0, "1": 0, "2": 0, "3+": 0}
    first_try = escalated = 0
    for verdicts in by_task.values():
        if verdicts[0].get("status") == "pass":
            first_try += 1
        if any(v.get("status") == "escalate" for v in verdicts):
            escalated += 1
        rejections = sum(v.get("status") in ("fail", "escalate") for v in verdicts)
        buckets[str(rejections) if rejections < 3 else "3+"] += 1
    tasks = len(by_task)
    return {
        "tasks": tasks,
        "first_try_passes": first_try,
        "first_try_pass_rate": _rate(first_try, tasks),
        "rejections_per_task": buckets,
        "escalated_tasks": escalated,
        "escalation_rate": _rate(escalated, tasks),
    }


def _task_cost(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The gate's time as a share of the tasks' own time, and the tokens a task takes."""
    by_task: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("task") is not None:
            by_task[str(row["task"])].append(row)
    gate_time = task_time = 0.0
    timed = 0
    tokens: list[float] = []
    for verdicts in by_task.values():
        sessions = [s for v in verdicts if isinstance(s := v.get("session"), Mapping)]
        walls = [_number(v.get("wall_s")) for v in verdicts]
        if None not in walls and (len(verdicts) > 1 or sessions):
            waited = [w or 0.0 for w in walls]
            span = verdicts[-1]["ts"] - (verdicts[0]["ts"] - waited[0])
            spent = max([span, *(_number(s.get("duration_s")) or 0.0 for s in sessions)])
            if spent > 0:
                timed += 1
                task_time += spent
                gate_time += sum(waited)
        counted = [n for s in sessions if (n := _number(s.get("tokens"))) is not None]
        if counted:
            tokens.append(max(counted))
    return {
        "tasks_timed": timed,
        "gate_time_s": round(gate_time, 3),
        "task_time_s": round(task_time, 3),
        "gate_share_of_task_time": None if task_time == 0 else gate_time * 100.0 / task_time,
        "tasks_with_tokens": len(tokens),
        "tokens_per_task": None if not tokens else sum(tokens) / len(tokens),
    }


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _gate_stats(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    runs: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        gates = [g for g in row.get("gates") or [] if isinstance(g, Mapping)]
        for gate in gates:
            if gate.get("status") in ("pass", "fail"):
                runs[str(gate.get("name"))].append(gate)
    per_gate = []
    for name, items in runs.items():
        passed = sum(g.get("status") == "pass" for g in items)
        durations = [d for g in items if (d := _duration(g)) is not None]
        per_gate.append(
            {
                "name": name,
                "runs": len(items),
                "passed": passed,
                "pass_rate": _rate(passed, len(items)),
                "mean_duration_s": sum(durations) / len(durations) if durations else None,
            }
        )
    return {"gates": per_gate}


def _duration(gate: Mapping[str, Any]) -> float | None:
    value = gate.get("duration_s")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _top_reasons(rows: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    reasons: Counter[str] = Counter()
    for row in rows:
        for gate in row.get("gates") or []:
            if isinstance(gate, Mapping) and gate.get("status") == "fail":
                reasons[str(gate.get("reason") or f"{gate.get('name')}: failed")] += 1
    return [{"reason": r, "count": n} for r, n in reasons.most_common(TOP_REASONS)]


def _days(rows: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per calendar day (UTC) from the first verdict to the last, gaps included."""
    if not rows:
        return []
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        counts[_day(row["ts"])][str(row.get("status"))] += 1
    first = date.fromisoformat(_day(rows[0]["ts"]))
    last = date.fromisoformat(_day(rows[-1]["ts"]))
    out = []
    day = first
    while day <= last:
        c = counts.get(day.isoformat(), Counter())
        total = sum(c.values())
        out.append(
            {
                "date": day.isoformat(),
                "verdicts": total,
                "passed": c["pass"],
                "rejected": c["fail"],
                "escalated": c["escalate"],
                "pass_rate": _rate(c["pass"], total),
                "rejection_rate": _rate(c["fail"] + c["escalate"], total),
            }
        )
        day += timedelta(days=1)
    return out


# -- renderers ------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}%"


def _secs(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def _share(stats: Mapping[str, Any]) -> str:
    if stats["gate_share_of_task_time"] is None:
        return "n/a (no task's time is known yet: a hook gives the transcript)"
    timed = stats["tasks_timed"]
    return (
        f"{_pct(stats['gate_share_of_task_time'])} of task time ({stats['gate_time_s']:.2f} s "
        f"of verifies in {stats['task_time_s']:.2f} s of {timed} task{'s' * (timed != 1)})"
    )


def _tokens(stats: Mapping[str, Any]) -> str:
    if stats["tokens_per_task"] is None:
        return "n/a (no transcript read yet)"
    n = stats["tasks_with_tokens"]
    return f"{stats['tokens_per_task']:,.0f} (mean of {n} task{'s' * (n != 1)} with a transcript)"


def _window(stats: Mapping[str, Any]) -> str:
    return f"the last {stats['since']}" if stats["since"] else "all recorded history"


def render_json(stats: Mapping[str, Any]) -> str:
    return json.dumps(stats, indent=2) + "\n"


def render_text(stats: Mapping[str, Any]) -> str:
    lines = [
        f"agentgate stats, {_window(stats)}: {stats['verdicts']} verdicts "
        f"({stats['passed']} pass, {stats['failed']} fail, {stats['escalated']} escalate), "
        f"{stats['tasks']} tasks"
    ]
    if not stats["verdicts"]:
        lines.append("  no verdicts recorded yet: run `agentgate verify --task ID`")
        return "\n".join(lines) + "\n"
    buckets = "  ".join(f"{k}: {v}" for k, v in stats["rejections_per_task"].items())
    lines += [
        f"  first-try pass rate  {_pct(stats['first_try_pass_rate'])} "
        f"({stats['first_try_passes']} of {stats['tasks']} tasks)",
        f"  rejections per task  {buckets}",
        f"  escalation rate      {_pct(stats['escalation_rate'])} "
        f"({stats['escalated_tasks']} of {stats['tasks']} tasks)",
        f"  gate time            {_share(stats)}",
        f"  tokens per task      {_tokens(stats)}",
    ]
    if stats["gates"]:
        width = max(len(g["name"]) for g in stats["gates"])
        lines.append("gates:")
        lines += [
            f"  {g['name']:<{width}}  pass {_pct(g['pass_rate'])} ({g['passed']} of {g['runs']})"
            f"  mean {_secs(g['mean_duration_s'])}"
            for g in stats["gates"]
        ]
    if stats["top_failure_reasons"]:
        lines.append("top failure reasons:")
        lines += [f"  {r['count']:>4}  {r['reason']}" for r in stats["top_failure_reasons"]]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).replace("|", "\\|").split())


def render_markdown(stats: Mapping[str, Any]) -> str:
    lines = [f"## agentgate stats ({_window(stats)})", ""]
    if not stats["verdicts"]:
        return "\n".join([*lines, "No verdicts recorded yet.", ""])
    buckets = ", ".join(f"{k}: {v}" for k, v in stats["rejections_per_task"].items())
    lines += [
        "| Metric | Value |",
        "| --- | --- |",
        f"| Verdicts | {stats['verdicts']} ({stats['passed']} pass, {stats['failed']} fail, "
        f"{stats['escalated']} escalate) |",
        f"| Tasks | {stats['tasks']} |",
        f"| First-try pass rate | {_pct(stats['first_try_pass_rate'])} |",
        f"| Rejections per task | {buckets} |",
        f"| Escalation rate | {_pct(stats['escalation_rate'])} |",
        f"| Gate time | {_share(stats)} |",
        f"| Tokens per task | {_tokens(stats)} |",
        "",
    ]
    if stats["gates"]:
        lines += ["| Gate | Pass rate | Runs | Mean duration |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {_cell(g['name'])} | {_pct(g['pass_rate'])} | {g['runs']} | "
            f"{_secs(g['mean_duration_s'])} |"
            for g in stats["gates"]
        ]
        lines.append("")
    if stats["top_failure_reasons"]:
        lines += ["**Top failure reasons**", ""]
        lines += [f"1. {_cell(r['reason'])} ({r['count']})" for r in stats["top_failure_reasons"]]
        lines.append("")
    return "\n".join(lines)


def render_svg(stats: Mapping[str, Any]) -> str:
    """A small bar chart of the pass and rejection rates per day, hand-written SVG."""
    days = list(stats["days"])[-SVG_DAYS:]
    left, top, plot_h, step = 36, 28, 100, 22
    width = max(240, left + 12 + step * len(days))
    height = top + plot_h + 34
    base = top + plot_h
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="10">',
        f"<title>agentgate: pass and rejection rate per day ({escape(_window(stats))})</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="12" font-size="11">agentgate: pass and rejection rate per day</text>',
        f'<rect x="{left}" y="16" width="8" height="8" fill="#2da44e"/>',
        f'<text x="{left + 11}" y="24">pass</text>',
        f'<rect x="{left + 44}" y="16" width="8" height="8" fill="#cf222e"/>',
        f'<text x="{left + 55}" y="24">rejected</text>',
    ]
    for pct in (0, 50, 100):
        y = base - pct * plot_h / 100
        out.append(f'<line x1="{left}" y1="{y:g}" x2="{width - 6}" y2="{y:g}" stroke="#d0d7de"/>')
        out.append(f'<text x="{left - 4}" y="{y + 3:g}" text-anchor="end">{pct}%</text>')
    if not days:
        out.append(f'<text x="{left + 8}" y="{base - 40}">no verdicts recorded</text>')
    for index, day in enumerate(days):
        x = left + 6 + index * step
        for offset, key, colour in ((0, "pass_rate", "#2da44e"), (9, "rejection_rate", "#cf222e")):
            value = day[key] or 0.0
            h = value * plot_h / 100
            label = escape(f"{day['date']}: {key.replace('_', ' ')} {_pct(day[key])}")
            out.append(
                f'<rect x="{x + offset}" y="{base - h:.2f}" width="8" height="{h:.2f}" '
                f'fill="{colour}"><title>{label}</title></rect>'
            )
        if index % 7 == 0 or index == len(days) - 1:
            out.append(f'<text x="{x}" y="{base + 14}">{escape(day["date"][5:])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


RENDERERS = {
    "text": render_text,
    "json": render_json,
    "markdown": render_markdown,
    "svg": render_svg,
}
