"""The verdict: the one object every surface renders.

The engine computes a :class:`Verdict` once; the terminal, JSON, markdown, hook and GitHub
renderers only read it. ``to_dict`` is the ``agentgate.verdict/1`` wire format, validated by
``schema/verdict.schema.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

SCHEMA_ID = "agentgate.verdict/1"

VerdictStatus = Literal["pass", "fail", "escalate"]
GateStatus = Literal["pass", "fail", "skipped"]
Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One thing wrong: a lint message, a failing test, an uncovered file, a build error."""

    message: str
    path: str | None = None
    line: int | None = None
    code: str | None = None
    name: str | None = None
    severity: Severity = "error"
    tool: str | None = None
    column: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
        }
        if self.column is not None:
            data["column"] = self.column
        if self.tool is not None:
            data["tool"] = self.tool
        return data

    def location(self) -> str:
        """``path:line`` (or just the path, or nothing) for one-line renderings."""
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass
class GateResult:
    """The judged outcome of one gate."""

    name: str
    kind: str
    status: GateStatus
    summary: str
    blocking: bool = True
    expected: dict[str, Any] = field(default_factory=dict)
    actual: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    command: str | None = None
    exit_code: int | None = None
    duration_s: float | None = None
    # Why the gate could not be measured or what went wrong around the evidence (missing report,
    # timeout, a command that failed while its report looked clean). Rendered before findings.
    problems: list[str] = field(default_factory=list)
    # Extra lines for the continuation text that are not findings (coverage gaps, output tail).
    notes: list[str] = field(default_factory=list)
    # Where each threshold came from: "profile strict", "agentgate.yml at main (abc123)",
    # "agentgate.yml (this change, tightened)", "raised to strict's" (config/base.py).
    threshold_sources: dict[str, str] = field(default_factory=dict)
    # Why only a human can take it from here (a budget spent, a loop): the ledger escalates the
    # task when a blocking gate says so (state/ledger.py).
    escalate: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "status": self.status,
            "blocking": self.blocking,
            "summary": self.summary,
            "expected": dict(self.expected),
            "actual": dict(self.actual),
            "findings": [f.to_dict() for f in self.findings],
            "problems": list(self.problems),
            "command": self.command,
            "exit_code": self.exit_code,
            "duration_s": None if self.duration_s is None else round(self.duration_s, 3),
        }
        if self.threshold_sources:
            data["threshold_sources"] = dict(self.threshold_sources)
        if self.escalate:
            data["escalate"] = list(self.escalate)
        return data


@dataclass(frozen=True)
class Attempt:
    number: int
    max: int

    def to_dict(self) -> dict[str, int]:
        return {"number": self.number, "max": self.max}


@dataclass
class Verdict:
    status: VerdictStatus
    profile: str
    gates: list[GateResult]
    attempt: Attempt | None = None
    continuation: str | None = None
    escalation: str | None = None
    # What the run detected or assumed (zero-config detection, report-only mode); shown to humans.
    notices: list[str] = field(default_factory=list)

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gates if g.failed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_ID,
            "status": self.status,
            "profile": self.profile,
            "gates": [g.to_dict() for g in self.gates],
            "attempt": None if self.attempt is None else self.attempt.to_dict(),
            "continuation": self.continuation,
            "escalation": self.escalation,
            "notices": list(self.notices),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        return json_text(self.to_dict(), indent=indent)


def json_text(data: Any, *, indent: int | None = None) -> str:
    """``data`` as JSON that any UTF-8 stream can carry: readable Unicode, and a path that is
    not UTF-8 (its lone surrogates, as Python decodes such a name) as JSON's ``\\udcXX``
    escape, which reads back as the same path (a verdict naming one could not be printed)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def human_needed(gates: list[GateResult]) -> list[str]:
    """Why only a human can take it from here: the escalation reasons of the blocking gates."""
    return [reason for g in gates if g.blocking and g.failed for reason in g.escalate]


def overall_status(gates: list[GateResult]) -> VerdictStatus:
    """A verdict passes only when no blocking gate failed."""
    return "fail" if any(g.failed and g.blocking for g in gates) else "pass"
