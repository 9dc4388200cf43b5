"""Markdown for a pull request comment or a job summary."""

from __future__ import annotations

import re

from pytest_agentgate.render import attempt_words
from pytest_agentgate.verdict import Finding, GateResult, Verdict

_ICONS = {"pass": "✅", "fail": "❌", "skipped": "⏭️", "escalate": "🛑"}
MAX_FINDINGS = 50


# Markdown's own characters, escaped in text that comes from a report (a test name, a message):
# a test called `test_[click](https://example.com)` must not become a link in a PR comment.
# Backticks stay: a code span only makes text inert, and agentgate's messages quote commands.
_MARKDOWN = re.compile(r"([\\*_\[\]~!#])")


def _cell(text: str) -> str:
    # HTML is escaped: a test message such as `assert "</details>" in page` must not end the
    # details block, or swallow the rest of a PR comment.
    text = _MARKDOWN.sub(r"\\\1", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(text.replace("|", "\\|").split())


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``, so it cannot be closed early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _finding(f: Finding) -> str:
    where = f"`{f.location()}` " if f.location() else ""
    name = f"**{_cell(f.name)}** " if f.name else ""
    code = f"`{f.code}` " if f.code and f.code not in ("error",) else ""
    return f"- {where}{name}{code}{_cell(f.message)}"


def _details(gate: GateResult) -> list[str]:
    items = [f"- ⚠️ {_cell(p.splitlines()[0] if p else p)}" for p in gate.problems]
    notes = [n for n in gate.notes if n.strip()]
    items += [f"- {_cell(n.splitlines()[0])}" for n in notes]
    items += [_finding(f) for f in gate.findings[:MAX_FINDINGS]]
    if len(gate.findings) > MAX_FINDINGS:
        items.append(f"- … and {len(gate.findings) - MAX_FINDINGS} more (see the JSON verdict)")
    if not items:
        return []
    counted = ((gate.problems, "problem"), (notes, "note"), (gate.findings, "finding"))
    what = ", ".join(_count(len(group), word) for group, word in counted if group)
    return [
        "<details>",
        f"<summary>{_cell(gate.name)}: {what}</summary>",
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
        attempt = f", {attempt_words(verdict.attempt)}"
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
        fence = _fence(verdict.continuation)
        lines.extend(
            ["### What the agent is told", "", f"{fence}text", verdict.continuation, fence, ""]
        )
    if verdict.escalation:
        lines.extend(["### Escalated to a human", "", verdict.escalation, ""])
    return "\n".join(lines)
