"""What may leave agentgate: every text of the verdict, with secrets masked, control characters
made visible and each message bounded, before anything is stored, printed or posted.

A gate command's output ends up in the verdict (build errors, crash tails); a command can print
``GITHUB_TOKEN``; a report can carry terminal escapes that set the window title or erase a line
and print a fake "PASS"; a lint message can be 200 MB, a report a million findings (a gate
lists at most :data:`MAX_FINDINGS`, its counts still whole). The verdict is cleaned once, in the
engine, so the terminal, the JSON file, the history, the escalation report and a PR comment all
get the same clean text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from pytest_agentgate.verdict import Finding, GateResult

MASK = "***"
# The most characters one message keeps; longer ones end with how much was cut.
MAX_TEXT = 2000
# The most findings one gate lists (errors first); its counts still include every one.
MAX_FINDINGS = 1000
# Environment variables whose values are secrets, by their names.
SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?"
    r"|AUTH|SESSION_?KEY|SIGNING_?KEY|DSN|WEBHOOK)",
    re.IGNORECASE,
)
# A value this short is not worth masking (and would mask ordinary words).
MIN_SECRET_LEN = 8
# Shapes of well-known tokens, masked wherever they appear.
TOKEN_SHAPES = re.compile(
    r"gh[pousr]_[A-Za-z0-9]{30,255}"
    r"|github_pat_[A-Za-z0-9_]{22,255}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
# C0 controls but tab and newline, DEL, and C1 controls: a terminal acts on them.
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """The values of the environment variables whose names say they are secret, longest first
    (so a secret that contains another is masked whole)."""
    values = {
        value
        for name, value in environ.items()
        if SECRET_NAME.search(name) and len(value) >= MIN_SECRET_LEN
    }
    return sorted(values, key=len, reverse=True)


class Cleaner:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = [s for s in secrets if s]

    def text(self, value: str, limit: int = MAX_TEXT) -> str:
        if len(value) > 4 * limit:  # never scan 200 MB for secrets: cut first, with margin
            value = value[: 4 * limit]
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        value = TOKEN_SHAPES.sub(MASK, value)
        value = CONTROLS.sub(_visible, value)
        if len(value) > limit:
            value = value[:limit] + f"… ({len(value) - limit} more characters cut)"
        return value

    def maybe(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)

    def finding(self, finding: Finding) -> Finding:
        return replace(
            finding,
            message=self.text(finding.message),
            path=self.maybe(finding.path),
            name=self.maybe(finding.name),
            code=self.maybe(finding.code),
        )

    def gate(self, gate: GateResult) -> GateResult:
        findings = gate.findings
        summary = gate.summary
        if len(findings) > MAX_FINDINGS:
            # Errors first, each side in the report's order; the rest are counted, not listed.
            findings = sorted(findings, key=lambda f: f.severity != "error")[:MAX_FINDINGS]
            summary += (
                f"; the verdict lists the first {MAX_FINDINGS:,} of {len(gate.findings):,} "
                "findings (errors first)"
            )
        return replace(
            gate,
            summary=self.text(summary),
            command=self.maybe(gate.command),
            findings=[self.finding(f) for f in findings],
            problems=[self.text(p) for p in gate.problems],
            notes=[self.text(n) for n in gate.notes],
            escalate=[self.text(r) for r in gate.escalate],
        )


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"
