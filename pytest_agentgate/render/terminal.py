"""Plain text for a terminal or a log: one line per gate, then the continuation text."""

from __future__ import annotations

import os
from typing import TextIO

from pytest_agentgate.render import attempt_words
from pytest_agentgate.verdict import GateResult, Verdict

_COLOURS = {"pass": "32", "fail": "31", "skipped": "33", "escalate": "35"}
_LABELS = {"pass": "PASS", "fail": "FAIL", "skipped": "SKIP", "escalate": "ESCALATE"}


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _label(status: str, colour: bool) -> str:
    text = _LABELS.get(status, status.upper())
    return f"\x1b[{_COLOURS[status]}m{text}\x1b[0m" if colour and status in _COLOURS else text


def _gate_line(gate: GateResult, colour: bool, width: int) -> str:
    label = _label(gate.status, colour)
    pad = " " * (4 - len(_LABELS.get(gate.status, gate.status)))
    duration = "" if gate.duration_s is None else f"  ({gate.duration_s:.2f}s)"
    advisory = "" if gate.blocking else " [advisory]"
    summary = " ".join(gate.summary.split())  # one line per gate, whatever a gate kind wrote
    return f"  {label}{pad}  {gate.name:<{width}}  {summary}{_origin(gate)}{advisory}{duration}"


# Failed tests listed under a test gate that passed anyway (its threshold allows them).
SHOWN_FAILED_TESTS = 10


def _failed_tests_of_a_pass(gate: GateResult) -> list[str]:
    """A failing test is never quiet: under a profile that lets some fail, a passing test gate
    still names them (a failing gate's are in the continuation text)."""
    if gate.kind != "test" or gate.failed:
        return []
    failed = [f for f in gate.findings if f.severity == "error"]
    lines = []
    for finding in failed[:SHOWN_FAILED_TESTS]:
        name = finding.name or finding.location() or "a test"
        first = finding.message.splitlines()[0] if finding.message else ""
        lines.append(f"        failed: {name}" + (f": {first}" if first else ""))
    if len(failed) > SHOWN_FAILED_TESTS:
        more = len(failed) - SHOWN_FAILED_TESTS
        lines.append(f"        … and {more} more failed (the JSON verdict lists them)")
    return lines


def _origin(gate: GateResult) -> str:
    """`` (thresholds: base agentgate.yml)`` when a threshold does not come from the profile."""
    shown: list[str] = []
    for source in gate.threshold_sources.values():
        if source.startswith("profile "):
            continue
        if " at " in source:  # "agentgate.yml at main (abc123)": the base's file
            source = "base " + source.split(" at ", 1)[0]
        elif "(this change" in source:
            source = "this change, tightened"
        if source not in shown:
            shown.append(source)
    return f" (thresholds: {', '.join(shown)})" if shown else ""


def render_text(verdict: Verdict, *, colour: bool = False) -> str:
    width = max((len(g.name) for g in verdict.gates), default=4)
    attempt = ""
    if verdict.attempt is not None:
        attempt = f", {attempt_words(verdict.attempt)}"
    lines = [f"agentgate: {_label(verdict.status, colour)} (profile {verdict.profile}{attempt})"]
    for gate in verdict.gates:
        lines.append(_gate_line(gate, colour, width))
        lines.extend(_failed_tests_of_a_pass(gate))
    lines.extend(f"  note: {n}" for n in verdict.notices)
    if verdict.continuation:
        lines.extend(["", verdict.continuation])
    if verdict.escalation:
        lines.extend(["", verdict.escalation])
    return "\n".join(lines) + "\n"
