"""The lint gate: errors and warnings from one or more JSON reports (or the command's stdout).

With ``scope: changed`` only the findings on lines the change adds or modifies (and ``context``
lines around them) are counted, so that a codebase with old findings can adopt the gate today.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    REPORT_OPTIONS,
    CollectContext,
    Evidence,
    Option,
)
from pytest_agentgate.gates.changed import ChangedFiles, NoBase
from pytest_agentgate.gates.collect import read_report_text, report_files
from pytest_agentgate.gates.judging import (
    command_problem,
    count,
    exit_disagrees,
    new_result,
    skipped,
    unreadable,
)
from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.model import LintReport, ReportError
from pytest_agentgate.verdict import Finding, GateResult

NOT_MEASURED = {"errors": None, "warnings": None}
SCOPES = ("all", "changed")
DEFAULT_CONTEXT = 3


@dataclass
class LintEvidence(Evidence):
    reports: list[LintReport] = field(default_factory=list)
    # scope: changed: the findings left out of ``reports`` because they are outside the change,
    # or why every finding is counted (no base).
    outside: list[Finding] = field(default_factory=list)
    scope_unknown: str | None = None


class LintGate:
    name = "lint"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        *REPORT_OPTIONS,
        Option("max_errors", "int", "findings of error severity tolerated", threshold=True),
        Option("max_warnings", "int", "findings of warning severity tolerated", threshold=True),
        Option(
            "scope",
            "choice",
            "all: every finding counts; changed: only findings on lines the change adds or "
            "modifies (and `context` lines around them)",
            choices=SCOPES,
        ),
        Option(
            "context",
            "int",
            f"with scope: changed, lines around a changed line that count too "
            f"(default {DEFAULT_CONTEXT})",
        ),
    )
    stdout_report = True

    def collect(self, context: CollectContext) -> LintEvidence:
        evidence = LintEvidence(context.root, command=context.result)
        cfg = context.config
        res = context.result
        if res is not None and (res.cut_short or res.start_error):
            return evidence  # the judge says why the command's run cannot be trusted
        try:
            if cfg.reports:
                files = report_files(
                    context,
                    "lint report",
                    "the lint command must write it, or fix the `report` path",
                )
                evidence.reports = [
                    context.registry.parse_lint(
                        read_report_text(p, "lint report"),
                        display_path(str(p), context.root),
                        cfg.format,
                    )
                    for p in files
                ]
            elif res is None:
                evidence.missing = "not run (--no-run) and no lint report configured"
            elif res.stdout_dropped:
                raise ReportError(
                    f"stdout of `{cfg.command}`",
                    f"the report was larger than the capture limit ({res.stdout_dropped} "
                    "bytes dropped)",
                    "write the report to a file and set `report:`",
                )
            else:
                source = f"stdout of `{cfg.command}`"
                evidence.reports = [context.registry.parse_lint(res.stdout, source, cfg.format)]
        except ReportError as exc:
            evidence.error = exc
            return evidence
        if cfg.options.get("scope") == "changed":
            changed = ChangedFiles.of(context.change, context.root)
            if isinstance(changed, NoBase):
                evidence.scope_unknown = changed.reason
            else:
                context_lines = cfg.options.get("context", DEFAULT_CONTEXT)
                for report in evidence.reports:
                    kept, dropped = _in_change(report.findings, changed, context_lines)
                    report.findings = kept
                    evidence.outside.extend(dropped)
        return evidence

    def judge(self, config: GateConfig, evidence: LintEvidence) -> GateResult:
        problem = command_problem(config, evidence)
        if problem is not None:
            result = new_result(config, evidence, "fail", "lint did not finish")
            result.problems.append(problem)
            result.actual = dict(NOT_MEASURED)
            return result
        if evidence.error is not None:
            return unreadable(
                config, evidence, "lint report could not be read", evidence.error, NOT_MEASURED
            )
        if evidence.missing is not None:
            return skipped(config, evidence, evidence.missing)
        reports = evidence.reports
        findings = [f for report in reports for f in report.findings]
        errors = sum(r.errors for r in reports)
        warnings = sum(r.warnings for r in reports)
        max_errors = config.thresholds.get("max_errors")
        max_warnings = config.thresholds.get("max_warnings")
        over = (max_errors is not None and errors > max_errors) or (
            max_warnings is not None and warnings > max_warnings
        )
        summary = f"{count(errors, 'error')} (max {_limit(max_errors)}), " + (
            f"{count(warnings, 'warning')} (max {_limit(max_warnings)})"
        )
        scoped = config.options.get("scope") == "changed"
        if scoped and evidence.scope_unknown is None:
            summary += " in the change"
        result = new_result(config, evidence, "fail" if over else "pass", summary)
        if evidence.outside:
            result.notes.append(
                f"{count(len(evidence.outside), 'finding')} outside the change not counted "
                "(scope: changed)"
            )
        if scoped and evidence.scope_unknown is not None:
            result.notes.append(
                f"scope: changed, but {evidence.scope_unknown}: every finding is counted"
            )
        result.actual = {"errors": errors, "warnings": warnings}
        # Errors first: they are what blocks; warnings follow in report order.
        result.findings = sorted(findings, key=lambda f: f.severity != "error")
        # A linter exits non-zero for the findings scope: changed left out: that is no mystery.
        clean = errors == 0 and warnings == 0 and not evidence.outside
        if not over and clean and (msg := exit_disagrees(config, evidence)):
            code = evidence.command.exit_code if evidence.command else ""
            result.status = "fail"
            result.summary = f"lint command exited {code}"
            result.problems.append(msg)
        return result


def _in_change(
    findings: list[Finding], changed: ChangedFiles, context: int
) -> tuple[list[Finding], list[Finding]]:
    """The findings within ``context`` lines of a line the change adds or modifies, and the
    others. A finding without a line counts when its file is changed; one without a file (a
    tool's own error) always counts."""
    kept: list[Finding] = []
    dropped: list[Finding] = []
    lines_of: dict[str, list[int]] = {}
    for finding in findings:
        if finding.path is None:
            kept.append(finding)
            continue
        entry = changed.find(finding.path)
        if entry is None:
            dropped.append(finding)
            continue
        if finding.line is None:
            kept.append(finding)
            continue
        lines = lines_of.get(entry.path)
        if lines is None:
            lines = lines_of[entry.path] = sorted(entry.lines)
        at = bisect.bisect_left(lines, finding.line - context)
        near = at < len(lines) and lines[at] <= finding.line + context
        (kept if near else dropped).append(finding)
    return kept, dropped


def _limit(value: int | None) -> str:
    return "none" if value is None else str(value)
