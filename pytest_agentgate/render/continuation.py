"""Continuation text: written to the agent, not to a human.

First line: the completion is rejected. Then, per failed gate in order of importance, expected
versus actual and the specifics. It names the attempt, forbids deferral, stays within a character
budget and says how many items it left out.
"""

from __future__ import annotations

import re

from pytest_agentgate.render import attempt_words
from pytest_agentgate.verdict import Finding, GateResult, Verdict

# Build errors hide everything else; then tests, lint, coverage, then anything custom.
KIND_ORDER = {"build": 0, "test": 1, "lint": 2, "coverage": 3}
MAX_LINE = 300
INTEGRITY_LINE = 700
# The session gate's finding for a success claim another gate disproves (quoted in the head).
CLAIM_DISPROVED = "claim-disproved"

CLAIM_PATTERN = re.compile(
    r"\b(all (the )?tests (now )?pass(ing|ed)?|tests (are )?(all )?(now )?passing|"
    r"(everything|it) (is )?(done|complete|working|fixed)|task (is )?(done|complete)|"
    r"lint(ing)? (is )?clean|no (lint )?errors|ready (for|to) (review|merge)|"
    r"successfully (completed|fixed|implemented)|all (checks|gates) pass(ed)?)\b",
    re.IGNORECASE,
)

RULES = (
    "Fix every item above, then run the checks again. The gate passes only when every gate "
    "passes. Do not stop, do not defer any of it to a follow-up PR or a later task, do not "
    "address it incrementally, and do not weaken tests, thresholds, lint rules or coverage "
    "settings to get there."
)

# What is left of RULES when the budget is tiny.
SHORT_RULES = (
    "Fix every item now: no deferral to a follow-up PR or a later task, no incremental fixes, "
    "no weakened checks."
)


def find_claim(message: str | None) -> str | None:
    """The sentence of the agent's final message that claims success, if any."""
    if not message:
        return None
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", message):
        if CLAIM_PATTERN.search(sentence):
            return _clip(sentence.strip(), 200)
    return None


def _clip(text: str, limit: int = MAX_LINE) -> str:
    """One line of at most ``limit`` characters; leading indentation is kept."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    text = indent + " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _finding_line(f: Finding, limit: int = MAX_LINE) -> str:
    parts = []
    if f.name:
        parts.append(f.name)
    if f.location() and (not f.name or (f.path or "") not in f.name):
        parts.append(f"({f.location()})" if f.name else f.location())
    if f.code and f.code not in ("error", "flaky"):
        parts.append(f.code)
    head = " ".join(parts)
    return _clip(f"  - {head}: {f.message}" if head else f"  - {f.message}", limit)


def _gate_header(gate: GateResult) -> str:
    label = gate.name if gate.name == gate.kind else f"{gate.name} ({gate.kind})"
    return _clip(f"{label} FAILED: {gate.summary}", 600)


def _gate_problems(gate: GateResult) -> list[str]:
    """A gate's problems: what is wrong with its run and how to fix it (the hints)."""
    lines = []
    for problem in gate.problems:
        first, *rest = problem.splitlines() or [""]
        lines.append(_clip(f"  ! {first}", 600))
        lines.extend(_clip(f"    {r}") for r in rest[-15:] if r.strip())
    return lines


def _gate_details(gate: GateResult) -> list[str]:
    """Its notes and findings, after the problems."""
    lines: list[str] = []
    for note in gate.notes:
        first, *rest = note.splitlines() or [""]
        lines.append(_clip(f"  * {first}", 600))
        lines.extend(_clip(f"    {r}") for r in rest[-15:] if r.strip())
    # An integrity finding says what went wrong and what to do in one line, past the
    # length of a linter's (review 31: the way a person approves a plugin was cut off).
    limit = INTEGRITY_LINE if gate.kind == "integrity" else MAX_LINE
    lines.extend(_finding_line(f, limit) for f in gate.findings if f.code != CLAIM_DISPROVED)
    return lines


def render_continuation(
    verdict: Verdict,
    *,
    max_chars: int = 4000,
    claim: str | None = None,
    instruction: str | None = None,
) -> str:
    """The text that sends the agent back to work. Never longer than ``max_chars``.

    ``instruction`` is one extra short paragraph from the ledger (a ``transient`` or
    ``insufficient_context`` blocker: retry, gather the context), shown right after the head.
    """
    failed = sorted(
        verdict.failed_gates,
        key=lambda g: (not g.blocking, KIND_ORDER.get(g.kind, 4)),
    )
    attempt = ""
    if verdict.attempt is not None:
        attempt = f" ({attempt_words(verdict.attempt)})"
    if failed:
        names = ", ".join(g.name for g in failed)
        first = (
            f"COMPLETION REJECTED{attempt}: the work is not done. "
            f"{len(failed)} of {len(verdict.gates)} gates failed under the {verdict.profile} "
            f"profile: {names}."
        )
    else:  # nothing failed, yet no pass: nothing was measured (the notices say why)
        first = (
            f"COMPLETION REJECTED{attempt}: the work is not verified. No gate measured anything "
            f"under the {verdict.profile} profile."
        )
    head = [first]
    # The session gate quotes each claim beside the gate that disproves it; those go first.
    disproved = [f.message for g in failed for f in g.findings if f.code == CLAIM_DISPROVED]
    head.extend(_clip(text, 800) for text in disproved)
    said = None if disproved else find_claim(claim)
    others = [g for g in failed if g.kind != "session"]
    if said and others:
        facts = "; ".join(f"{g.name}: {g.summary}" for g in others)
        head.append(_clip(f'You said: "{said}" The gate measured otherwise: {facts}.', 800))
    head.extend(_clip(n, 600) for n in verdict.notices if not failed)
    if instruction:
        head.append(_clip(instruction, 600))
    tail = [RULES]
    # Every failed gate's header is always shown; details fill what budget remains. Every
    # gate's problems (how to fix its run: the hints) before any gate's findings, so that one
    # gate's long list of findings never pushes another gate's hint out; and within each, a
    # line of every gate before a second of any (review 12: thirteen failing tests of the
    # base left out the one integrity finding the change made).
    headers = [_gate_header(g) for g in failed]
    problems = [_gate_problems(g) for g in failed]
    details = [_gate_details(g) for g in failed]
    budget = max_chars - _size(head) - _size(tail) - _size(headers) - 2 * (len(failed) + 2) - 80
    left_out = 0
    kept: list[list[str]] = [[] for _ in failed]
    for phase in (problems, details):
        for depth in range(max((len(lines) for lines in phase), default=0)):
            for index, lines in enumerate(phase):
                if depth >= len(lines):
                    continue
                cost = len(lines[depth]) + 1
                if cost <= budget:
                    kept[index].append(lines[depth])
                    budget -= cost
                else:
                    left_out += 1
    body: list[str] = []
    for header, lines in zip(headers, kept, strict=True):
        body.append("")
        body.append(header)
        body.extend(lines)
    if left_out:
        tail.insert(0, _left_out_line(left_out))
    text = "\n".join([*head, *body, "", *tail])
    if len(text) > max_chars:  # small budgets: the headers alone did not fit
        text = _squeeze(head, body, left_out, max_chars, headers)
    return text


def _left_out_line(count: int) -> str:
    return f"({count} more items left out for length; the JSON verdict lists them all.)"


def _squeeze(
    head: list[str], body: list[str], left_out: int, max_chars: int, headers_of: list[str]
) -> str:
    """The text for a budget too small for every header: the first line and the rules stay
    whole (what is rejected, and that deferring is not allowed); whole lines fill between."""
    first = head[0]
    middle = [line for line in [*head[1:], *body] if line]
    worst = _left_out_line(left_out + len(middle))
    rules = RULES
    if len(first) + len(rules) + len(worst) + 2 > max_chars:
        rules = SHORT_RULES
    room = max_chars - len(first) - len(rules) - len(worst) - 2
    if room < 0:  # the tiniest budgets: the first line, clipped, and the short rules
        text = _clip(first, max(40, max_chars - len(rules) - 1)) + "\n" + rules
        return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
    # The gates' headers (which gate failed, and its summary) before anything else; then the
    # rest in order. Lines are shown in their own order.
    headers = set(headers_of)
    chosen: set[int] = set()
    for wanted in (True, False):
        for index, line in enumerate(middle):
            if (line in headers) != wanted or index in chosen:
                continue
            if len(line) + 1 <= room:
                chosen.add(index)
                room -= len(line) + 1
            else:
                left_out += 1
    kept = [line for index, line in enumerate(middle) if index in chosen]
    tail = [_left_out_line(left_out), rules] if left_out else [rules]
    return "\n".join([first, *kept, *tail])


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)
