"""The session gate: what the agent's own session says about the work.

It is judged when the door hands over the agent's last message (``Request.claim``) or its
transcript (``Request.transcript``), and not otherwise: a plain ``agentgate verify`` has no
session. Its signals:

- deferral language in the final message ("follow-up PR", "remaining work", ...): an error under
  ``deferral: block`` (strict), a warning under ``warn`` (standard, relaxed);
- a success claim that another gate disproves ("all tests pass" beside a failing test gate): see
  :func:`check_claims`, which the engine applies once every gate is judged;
- tool calls that failed after the last successful test or build run (a warning: a ``grep``
  that finds nothing fails too);
- budgets (``budget: {max_tool_calls, max_tokens, max_context_percent}``), a loop (the same call
  with the same input repeated ``loop_repeats`` times with no file edited between) and file
  thrash (one file edited more than ``max_file_edits`` times): a human is needed, so the gate
  fails and asks the ledger to escalate (``GateResult.escalate``);
- how full the context window is: above 80% the agent is told to compact, above 95% to start a
  fresh session.

A missing or unreadable transcript turns its signals off with a warning finding; it never fails
the gate.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any

from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import CollectContext, Evidence, Option
from pytest_agentgate.gates.judging import count, new_result, skipped
from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.reports.transcripts.model import Session, ToolCall
from pytest_agentgate.verdict import Finding, GateResult, Severity

DEFERRAL_CHOICES = ("warn", "block")
COMPACT_PERCENT = 80.0
FRESH_PERCENT = 95.0
# Harness names a door may give (``hook:claude``) and the readers know.
HARNESSES = ("claude", "codex", "gemini", "copilot")

# Commands that run tests or a build: a failure after the last success of one is reported.
CHECK_COMMAND = re.compile(
    r"(?:^|[\s;&|(/])(?:pytest|py\.test|tox|nox|unittest|compileall|jest|vitest|mocha|"
    r"(?:npm|pnpm|yarn|bun)(?:\s+run)?\s+(?:test|build)|go\s+(?:test|build|vet)|"
    r"cargo\s+(?:test|build|check)|make|ninja|mvn|gradle|gradlew|tsc|dotnet\s+(?:test|build)|"
    r"agentgate\s+verify|test_\w+\.py)\b"
)

# Deferral: the agent leaves part of the task for later. One alternative per phrase family.
DEFERRAL = re.compile(
    r"\b(?:"
    r"follow[- ]?up (?:pr|pull request|task|ticket|issue|change|commit)s?|"
    r"in a (?:follow[- ]?up|later|future|separate|subsequent) (?:pr|pull request|task|change|"
    r"commit|iteration|session|step)|"
    r"(?:as|for|in) a follow[- ]?up|(?:in|for) the next (?:pr|pull request|iteration|session)|"
    r"address(?:ed|ing)? (?:\w+ ){0,3}incrementally|incremental(?:ly)? (?:fix|approach)|"
    r"remaining (?:work|issues|failures|failing tests|errors|items|tasks|todos)|"
    r"out of scope(?: for now| for this (?:pr|change|task))?|"
    r"(?:left|leave|leaving) (?:\w+ ){0,3}(?:as a todo|for (?:later|now|another))|"
    r"(?:fix|address|handle|tackle|clean up) (?:\w+ ){0,3}later|"
    r"(?:skip(?:ped)?|disabled?|xfail(?:ed)?|commented out|stubbed(?: out)?|hard-?coded|"
    r"mocked(?: out)?) (?:\w+ ){0,3}for now|"
    r"(?:left|leaving|added) (?:\w+ ){0,2}todos?\b|"
    r"(?:can|could|should|will) be (?:addressed|fixed|handled|done) (?:later|separately)|"
    r"defer(?:red|ring)?"
    r")\b",
    re.IGNORECASE,
)
# A deferral phrase negated in its own clause is honest: "there is no remaining work".
NEGATION = re.compile(
    r"\b(?:no|not|nothing|none|never|without|zero|nor|n't)\b|n't\b", re.IGNORECASE
)
NEGATION_WORDS = 5

# Success claims, by what they are about: the gate kinds that can disprove them.
CLAIMS: tuple[tuple[re.Pattern[str], tuple[str, ...] | None], ...] = (
    (
        re.compile(
            r"\b(?:all (?:the )?tests?|tests?|test suite|suite)(?: are| is| now)* "
            r"(?:all )?(?:pass(?:es|ing|ed)?|green|succeed(?:s|ed)?)\b|"
            r"\ball (?:\d+ )?tests? (?:now )?pass",
            re.IGNORECASE,
        ),
        ("test",),
    ),
    (
        re.compile(
            r"\blint(?:ing|er)?(?: is| now)* (?:clean|pass(?:es|ing)?|green)\b|"
            r"\bno (?:lint|ruff|eslint) (?:errors|warnings|issues)\b",
            re.IGNORECASE,
        ),
        ("lint",),
    ),
    (
        re.compile(
            r"\b(?:the )?(?:build|compil\w*)(?: is| now)* (?:succeeds?|pass(?:es)?|green|"
            r"works|clean|successful)\b|\bbuilds (?:cleanly|successfully)\b",
            re.IGNORECASE,
        ),
        ("build",),
    ),
    (
        re.compile(
            r"\bcoverage (?:is )?(?:now )?(?:above|over|at|meets|exceeds|sufficient)\b|"
            r"\b(?:fully|100%) covered\b",
            re.IGNORECASE,
        ),
        ("coverage",),
    ),
    (
        re.compile(
            r"^(?:all )?done\b|"
            r"\b(?:everything|it|all|the (?:task|work|fix))(?: is| now)* "
            r"(?:done|complete|completed|working|fixed|finished)\b|"
            r"\btask (?:is )?(?:done|complete)\b|\ball (?:checks|gates) pass(?:ed)?\b|"
            r"\bready (?:for|to) (?:review|merge)\b|"
            r"\bsuccessfully (?:completed|fixed|implemented)\b",
            re.IGNORECASE,
        ),
        None,  # about the whole task: any failing gate disproves it
    ),
)


@dataclass
class SessionEvidence(Evidence):
    # The event's last message (the Request's claim): the final text when given.
    claim: str | None = None
    transcript: str | None = None  # as shown (relative to the project when inside it)
    session: Session | None = None
    transcript_error: str | None = None
    # Indexes of the calls that ran tests or a build.
    checks: frozenset[int] = field(default_factory=frozenset)
    # Edited files, shown relative to the project, per call index.
    edited: dict[int, tuple[str, ...]] = field(default_factory=dict)


class SessionGate:
    name = "session"
    options: tuple[Option, ...] = (
        Option("enabled", "bool", "false: the session is never judged"),
        Option("blocking", "bool", "false reports the session without failing the verdict"),
        Option(
            "deferral",
            "choice",
            "deferral language in the final message: block (an error) or warn",
            choices=DEFERRAL_CHOICES,
            threshold=True,
        ),
        Option(
            "loop_repeats",
            "int",
            "the same tool call repeated this many times with no file edited between is a loop",
            threshold=True,
        ),
        Option("max_file_edits", "int", "edits of one file before it is thrash", threshold=True),
        Option("max_tool_calls", "int", "tool calls in the session (budget)", threshold=True),
        Option("max_tokens", "int", "tokens of the session (budget)", threshold=True),
        Option(
            "max_context_percent",
            "percent",
            "how full the context window may get (budget)",
            threshold=True,
        ),
        Option("context_window", "int", "the model's context window, in tokens"),
    )
    stdout_report = False
    # Its evidence needs no command: collected while the commands run.
    independent = True

    def collect(self, context: CollectContext) -> SessionEvidence:
        evidence = SessionEvidence(context.root, claim=context.claim)
        path = context.transcript
        if path is None:
            if context.claim is None:
                evidence.missing = "no session: the door gave no transcript and no message"
            return evidence
        evidence.transcript = _shown(path, context.root)
        from pytest_agentgate.reports.transcripts.read import read_transcript

        try:
            session = read_transcript(
                path, harness=_harness(context.door), source=evidence.transcript
            )
        except ReportError as exc:
            evidence.transcript_error = str(exc)
            return evidence
        evidence.session = session
        configured = _check_commands(context)
        evidence.checks = frozenset(
            i for i, call in enumerate(session.calls) if _is_check(call, configured)
        )
        evidence.edited = {  # each file once per call, however the call spells it
            i: tuple(dict.fromkeys(_shown(Path(p), context.root) for p in call.paths))
            for i, call in enumerate(session.calls)
            if call.paths
        }
        return evidence

    def judge(self, config: GateConfig, evidence: SessionEvidence) -> GateResult:
        if evidence.missing is not None:
            return skipped(config, evidence, evidence.missing)
        thresholds = config.thresholds
        session = evidence.session
        result = new_result(config, evidence, "pass", "")
        findings: list[Finding] = []
        escalate: list[str] = []
        if evidence.transcript_error is not None:
            # A warning, so that every rendering shows it; the gate never fails for it.
            findings.append(
                Finding(
                    f"the transcript's signals are off: {evidence.transcript_error}",
                    code="transcript",
                    severity="warning",
                )
            )
        elif session is not None:
            findings.extend(
                Finding(n, code="transcript", severity="warning") for n in session.notes
            )
        message, said_by = _final_message(evidence)
        severity: Severity = "error" if thresholds.get("deferral") == "block" else "warning"
        for sentence in deferrals(message or ""):
            findings.append(
                Finding(
                    f'{said_by} defers work: "{sentence}"; finish it now instead',
                    code="deferral",
                    severity=severity,
                )
            )
        actual: dict[str, Any] = {"transcript": evidence.transcript, "message": said_by}
        if session is not None:
            findings.extend(_failed_after_checks(session, evidence.checks))
            escalate.extend(_budget(config, session, actual, findings))
            escalate.extend(_loops(session, thresholds.get("loop_repeats"), findings))
            escalate.extend(_thrash(evidence, thresholds.get("max_file_edits"), findings))
        errors = [f for f in findings if f.severity == "error"]
        warnings = len(findings) - len(errors)
        result.findings = errors + [f for f in findings if f.severity != "error"]
        result.actual = actual
        if escalate and config.blocking:
            result.escalate = escalate
        if errors:
            result.status = "fail"
            result.summary = f"the session shows {_kinds(errors)}"
        elif warnings:
            result.summary = f"the session shows {count(warnings, 'warning')}"
        else:
            result.summary = "the session shows nothing wrong"
        return result


# -- language -----------------------------------------------------------------------------------


def deferrals(message: str) -> list[str]:
    """The sentences of ``message`` that defer work, quoted text and negated phrases left out."""
    found = []
    for sentence in _sentences(_unquoted(message)):
        for match in DEFERRAL.finditer(sentence):
            if not _negated(sentence, match.start()):
                found.append(_clip(sentence))
                break
    return found


def claims(message: str) -> list[tuple[str, tuple[str, ...] | None]]:
    """Each sentence of ``message`` that claims success, with what it is about: gate kinds, or
    None for the whole task ("all tests pass and the work is complete" is about both)."""
    out = []
    for sentence in _sentences(_unquoted(message)):
        about: list[str] = []
        whole = False
        for pattern, kinds in CLAIMS:
            match = pattern.search(sentence)
            if match and not _negated(sentence, match.start()):
                if kinds is None:
                    whole = True
                else:
                    about.extend(kinds)
        if whole or about:
            out.append((_clip(sentence), None if whole else tuple(about)))
    return out


def _unquoted(text: str) -> str:
    """``text`` without what it quotes: code blocks, inline code, quotations, quoted lines."""
    text = re.sub(r"```.*?(```|\Z)", " ", text, flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"^\s*>.*$", " ", text, flags=re.MULTILINE)
    return re.sub(r"\"[^\"\n]{0,300}\"|“[^”\n]{0,300}”", " ", text)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def _negated(sentence: str, start: int) -> bool:
    """A negation among the few words before ``start``, in the same clause."""
    clause = re.split(r"[;:,()]|\bbut\b|\bhowever\b", sentence[:start])[-1]
    words = clause.split()[-NEGATION_WORDS:]
    return bool(NEGATION.search(" ".join(words)))


def _clip(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the transcript's signals -----------------------------------------------------------------


def _final_message(evidence: SessionEvidence) -> tuple[str | None, str]:
    """The final text: the event's (the transcript can lag behind it), else the transcript's."""
    if evidence.claim is not None:
        return evidence.claim, "the final message"
    if evidence.session is not None and evidence.session.final_message is not None:
        return evidence.session.final_message, "the transcript's last message"
    return None, "no message"


def _failed_after_checks(session: Session, checks: frozenset[int]) -> list[Finding]:
    """Calls that failed after the last test or build run that succeeded."""
    last_ok = max((i for i in checks if session.calls[i].failed is False), default=None)
    if last_ok is None:
        return []
    return [
        Finding(
            f"failed after the last successful test or build run ({session.calls[last_ok].summary})"
            + ("" if call.exit_code is None else f": exit code {call.exit_code}"),
            name=call.summary,
            code="failed-after-check",
            severity="warning",
        )
        for call in session.calls[last_ok + 1 :]
        if call.failed
    ]


def _budget(
    config: GateConfig, session: Session, actual: dict[str, Any], findings: list[Finding]
) -> list[str]:
    thresholds = config.thresholds
    window = config.options.get("context_window") or session.context_window
    percent = (
        None
        if not window or session.context_tokens is None
        else session.context_tokens * 100.0 / window
    )
    actual.update(
        {
            "tool_calls": len(session.calls),
            "tokens": session.tokens,
            "context_percent": None if percent is None else round(percent, 2),
            "harness": session.harness,
            "model": session.model,
            "duration_s": None if session.duration_s is None else round(session.duration_s, 3),
        }
    )
    reasons = []
    for key, value, noun in (
        ("max_tool_calls", len(session.calls), "tool calls"),
        ("max_tokens", session.tokens, "tokens"),
        ("max_context_percent", percent, "% of the context window"),
    ):
        limit = thresholds.get(key)
        if limit is None or value is None or value <= limit:
            continue
        shown = f"{value:.2f}" if isinstance(value, float) else f"{value:,}"
        text = f"the session used {shown} {noun}, over budget.{key} ({limit:g})".replace(" %", "%")
        reasons.append(f"Budget spent: {text}.")
        findings.append(Finding(text, code="budget", severity="error"))
    if percent is not None and percent > FRESH_PERCENT:
        findings.append(
            Finding(
                f"the context window is {percent:.0f}% full: start a fresh session for the rest "
                "of the work, with a summary of where it stands",
                code="context-full",
                severity="warning",
            )
        )
    elif percent is not None and percent > COMPACT_PERCENT:
        findings.append(
            Finding(
                f"the context window is {percent:.0f}% full: compact it (summarise what is done "
                "and what is left) before going on",
                code="context-full",
                severity="warning",
            )
        )
    return reasons


def _loops(session: Session, repeats: Any, findings: list[Finding]) -> list[str]:
    """The same call made again and again, with no file edited by another call between."""
    if not isinstance(repeats, int) or repeats < 1:
        return []
    seen: Counter[int] = Counter()
    worst: dict[int, tuple[int, ToolCall]] = {}
    for call in session.calls:
        if call.paths and call.key not in seen:
            seen.clear()  # an edit is progress: what was repeated before it starts again
        seen[call.key] += 1
        if seen[call.key] > repeats:
            worst[call.key] = (seen[call.key], call)
    reasons = []
    for times, call in sorted(worst.values(), key=lambda item: -item[0]):
        text = f"`{call.summary}` was made {times} times with no file edited between"
        findings.append(Finding(f"loop: {text}", code="loop", severity="error"))
        reasons.append(f"The agent is looping: {text}.")
    return reasons


def _thrash(evidence: SessionEvidence, limit: Any, findings: list[Finding]) -> list[str]:
    if not isinstance(limit, int):
        return []
    edits: Counter[str] = Counter(p for paths in evidence.edited.values() for p in paths)
    reasons = []
    for path, times in edits.most_common():
        if times <= limit:
            break
        text = f"{path} was edited {times} times (max_file_edits {limit})"
        findings.append(Finding(f"file thrash: {text}", path=path, code="thrash", severity="error"))
        reasons.append(f"The agent is thrashing: {text}.")
    return reasons


def _kinds(errors: list[Finding]) -> str:
    names = {
        "deferral": "deferral",
        "claim-disproved": "a claim the gates disprove",
        "budget": "a budget spent",
        "loop": "a loop",
        "thrash": "file thrash",
    }
    kinds = list(dict.fromkeys(names.get(f.code or "", f.code or "a problem") for f in errors))
    return ", ".join(kinds)


# -- claims against the other gates -----------------------------------------------------------


def check_claims(gates: list[GateResult], claim: str | None) -> list[GateResult]:
    """The gates, with each success claim of ``claim`` that a failed gate disproves added to
    the session gate's findings, quoted beside the fact. Pure: the engine calls it once every
    gate is judged, as it concludes the verdict. Without a session gate, the gates as they are.
    """
    index = next((i for i, g in enumerate(gates) if g.kind == "session"), None)
    if index is None or not claim:
        return gates
    session = gates[index]
    if session.status == "skipped":
        return gates
    failed = [g for g in gates if g.failed and g.kind != "session"]
    found = []
    for sentence, kinds in claims(claim):
        against = [g for g in failed if kinds is None or _about(g, kinds)]
        if not against:
            continue
        facts = "; ".join(f"{g.name}: {g.summary}" for g in against)
        found.append(
            Finding(
                f'You said: "{sentence}" The gate measured otherwise: {facts}.',
                code="claim-disproved",
                severity="error",
            )
        )
    if not found:
        return gates
    updated = replace(
        session,
        findings=[*found, *session.findings],
        status="fail",
        summary=_with_claims(session.summary),
    )
    return [*gates[:index], updated, *gates[index + 1 :]]


def _about(gate: GateResult, kinds: tuple[str, ...]) -> bool:
    """A gate a claim about ``kinds`` speaks of: of that kind, or named for it (a custom gate
    called ``unit-tests`` is about tests)."""
    return gate.kind in kinds or any(kind in gate.name.lower() for kind in kinds)


def _with_claims(summary: str) -> str:
    if summary.startswith("the session shows ") and "nothing wrong" not in summary:
        return summary + ", a claim the gates disprove"
    return "the session shows a claim the gates disprove"


# -- helpers ------------------------------------------------------------------------------------


def _harness(door: str | None) -> str | None:
    """``hook:claude`` -> ``claude``: the door's harness, a hint for reading its transcript."""
    if door and door.startswith("hook:") and door[5:] in HARNESSES:
        return door[5:]
    return None


def _check_commands(context: CollectContext) -> tuple[str, ...]:
    project = context.project
    if project is None:
        return ()
    return tuple(
        g.command.strip()
        for g in project.gates
        if g.command and g.kind in ("test", "build") and g.command.strip()
    )


def _is_check(call: ToolCall, configured: tuple[str, ...]) -> bool:
    command = call.command
    if command is None:
        return False
    return any(c in command for c in configured) or bool(CHECK_COMMAND.search(command))


def _shown(path: Path, root: Path) -> str:
    """A path relative to the project when it is inside it (``./a/../n.txt`` is ``n.txt``)."""
    path = Path(os.path.normpath(root / path))  # a relative path is the project's
    try:
        return PurePath(path).relative_to(root).as_posix()
    except ValueError:
        try:
            return Path(path).resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            return str(path)
