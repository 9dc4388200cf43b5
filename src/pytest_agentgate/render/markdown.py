"""Markdown for a pull request comment or a job summary."""

from __future__ import annotations

from ..verdict import Finding, GateResult, Verdict

_ICONS = {"pass": "✅", "fail": "❌", "skipped": "⏭️", "escalate": "🛑"}
MAX_FINDINGS = 50


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _finding(f: Finding) -> str:
    where = f"`{f.location()}` " if f.location() else ""
    name = f"**{_cell(f.name)}** " if f.name else ""
    code = f"`{f.code}` " if f.code and f.code not in ("error",) else ""
    return f"- {where}{name}{code}{_cell(f.message)}"


def _details(gate: GateResult) -> list[str]:
    items = [f"- ⚠️ {_cell(p.splitlines()[0] if p else p)}" for p in gate.problems]
    items += [f"- {_cell(n.splitlines()[0] if n else n)}" for n in gate.notes]
    items += [_finding(f) for f in gate.findings[:MAX_FINDINGS]]
    if len(gate.findings) > MAX_FINDINGS:
        items.append(f"- … and {len(gate.findings) - MAX_FINDINGS} more (see the JSON verdict)")
    if not items:
        return []
    return [
        "<details>",
        f"<summary>{gate.name}: {len(gate.findings)} findings</summary>",
        "",
        *items,
        "",
        "</details>",
        "",
    ]


def render_markdown(verdict: Verdict) -> str:
    icon = _ICONS.get(verdict.status, "")
    attempt = ""
    if verdict.attempt is not None:
        attempt = f", attempt {verdict.attempt.number} of {verdict.attempt.max}"
    lines = [
        f"## agentgate: {icon} {verdict.status} ({verdict.profile} profile{attempt})",
        "",
        "| Gate | Status | Summary | Time |",
        "| --- | --- | --- | --- |",
    ]
    for gate in verdict.gates:
        time = "" if gate.duration_s is None else f"{gate.duration_s:.2f} s"
        status = f"{_ICONS.get(gate.status, '')} {gate.status}"
        lines.append(f"| {gate.name} | {status} | {_cell(gate.summary)} | {time} |")
    lines.append("")
    lines.extend(f"> {n}" for n in verdict.notices)
    if verdict.notices:
        lines.append("")
    for gate in verdict.gates:
        if gate.failed or gate.findings:
            lines.extend(_details(gate))
    if verdict.continuation:
        lines.extend(["### What the agent is told", "", "```text", verdict.continuation, "```", ""])
    if verdict.escalation:
        lines.extend(["### Escalated to a human", "", verdict.escalation, ""])
    return "\n".join(lines)
