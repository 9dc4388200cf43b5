"""What a step tells the GitHub runner: annotations, the job summary, and step outputs.

Workflow commands are escaped as the runner unescapes them (``%`` first, then CR and LF, and
``:`` and ``,`` too in properties), or a message could end its own command and start another.
GitHub shows at most 10 error and 10 warning annotations of a step (50 of a job): errors come
first, and what is not shown is counted in the summary, never dropped silently.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_agentgate.verdict import Finding, Verdict

MAX_ERRORS = 10
MAX_WARNINGS = 10
# GitHub refuses a step summary over 1 MiB; the rest is cut with a line that says so.
MAX_SUMMARY_BYTES = 1024 * 1024 - 4096


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotations:
    lines: list[str]
    shown_errors: int
    shown_warnings: int
    hidden_errors: int
    hidden_warnings: int


def annotation(level: str, finding: Finding, title: str) -> str:
    props = [f"title={escape_property(title)}"]
    if finding.path:
        props.insert(0, f"file={escape_property(finding.path)}")
        if finding.line:
            props.insert(1, f"line={finding.line}")
            if finding.column:
                props.insert(2, f"col={finding.column}")
    text = finding.message if not finding.code else f"{finding.code} {finding.message}"
    if finding.name:
        text = f"{finding.name}: {text}"
    return f"::{level} {','.join(props)}::{escape_data(text)}"


def annotations_of(verdict: Verdict) -> Annotations:
    """Errors of the blocking failed gates first, then warnings, within the per-step caps."""
    errors: list[str] = []
    warnings: list[str] = []
    for gate in verdict.gates:
        level = "error" if gate.failed and gate.blocking else "warning"
        for finding in gate.findings:
            kind = "error" if level == "error" and finding.severity == "error" else "warning"
            title = f"agentgate {gate.name}"
            (errors if kind == "error" else warnings).append(annotation(kind, finding, title))
        if gate.failed and not gate.findings:
            problem = gate.problems[0] if gate.problems else gate.summary
            first = problem.splitlines()[0] if problem else gate.status
            line = annotation(level, Finding(first), f"agentgate {gate.name}")
            (errors if level == "error" else warnings).append(line)
    shown_e, shown_w = errors[:MAX_ERRORS], warnings[:MAX_WARNINGS]
    return Annotations(
        shown_e + shown_w,
        len(shown_e),
        len(shown_w),
        len(errors) - len(shown_e),
        len(warnings) - len(shown_w),
    )


def bounded_summary(text: str) -> str:
    data = text.encode()
    if len(data) <= MAX_SUMMARY_BYTES:
        return text
    cut = data[:MAX_SUMMARY_BYTES].decode(errors="ignore")
    return cut + "\n\n… the summary was cut at GitHub's 1 MiB limit: the JSON verdict has it all.\n"


def output_lines(outputs: Iterable[tuple[str, str]]) -> str:
    """``$GITHUB_OUTPUT`` text: every value in a heredoc with a delimiter it cannot contain."""
    chunks = []
    for name, value in outputs:
        delimiter = f"agentgate_{secrets.token_hex(16)}"
        while delimiter in value:  # pragma: no cover - 128 random bits
            delimiter = f"agentgate_{secrets.token_hex(16)}"
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(chunks)
