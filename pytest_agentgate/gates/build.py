"""The build gate: the command's exit code, and the error lines of its output."""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import COMMON_OPTIONS, CollectContext, Evidence, Option
from pytest_agentgate.gates.judging import command_problem, new_result, skipped
from pytest_agentgate.verdict import Finding, GateResult


@dataclass
class BuildEvidence(Evidence):
    # Error lines recognised in the output; when none were, the output's last lines.
    error_lines: list[Finding] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)


class BuildGate:
    name = "build"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        Option("max_errors", "int", "error lines tolerated in the build output", threshold=True),
    )
    stdout_report = False

    def collect(self, context: CollectContext) -> BuildEvidence:
        res = context.result
        evidence = BuildEvidence(context.root, command=res)
        if context.config.command is None:
            evidence.missing = "no build command configured"
        elif res is None:
            evidence.missing = "not run (--no-run): a build gate has no report to read"
        else:
            output = "\n".join(part for part in (res.stdout, res.stderr) if part)
            if output:  # a quiet success: the parsers are not even imported
                from pytest_agentgate.reports.build import extract_errors, tail_lines

                evidence.error_lines = extract_errors(output)
                if res.exit_code != 0 and not evidence.error_lines:
                    evidence.tail = tail_lines(output)
        return evidence

    def judge(self, config: GateConfig, evidence: BuildEvidence) -> GateResult:
        res = evidence.command
        if evidence.missing is not None or res is None:
            return skipped(config, evidence, evidence.missing or "not run")
        findings = list(evidence.error_lines)
        errors = len(findings)
        actual = {"exit_code": res.exit_code, "errors": errors}
        max_errors = config.thresholds.get("max_errors")
        problem = command_problem(config, evidence)
        if problem is not None:
            result = new_result(config, evidence, "fail", "build did not finish")
            result.problems.append(problem)
        elif res.exit_code != 0:
            noun = "error line" if errors == 1 else "error lines"
            result = new_result(
                config,
                evidence,
                "fail",
                f"build failed: exit code {res.exit_code}, {errors} {noun}",
            )
        elif max_errors is not None and errors > max_errors:
            result = new_result(
                config,
                evidence,
                "fail",
                f"build exited 0 but printed {errors} errors (max {max_errors})",
            )
        else:
            summary = (
                "build succeeded" if not errors else f"build succeeded with {errors} error lines"
            )
            result = new_result(config, evidence, "pass", summary)
            result.actual = actual
            result.findings = findings
            return _with_dropped(evidence, result)
        if not findings:
            # No recognisable error shape: the last lines are the most useful thing to show.
            findings = [Finding(line) for line in evidence.tail]
            if not findings:
                result.problems.append("the command printed nothing")
        result.actual = actual
        result.findings = findings
        return _with_dropped(evidence, result)


def _with_dropped(evidence: BuildEvidence, result: GateResult) -> GateResult:
    """Say when the bounded capture dropped output: its error lines were not seen."""
    res = evidence.command
    dropped = 0 if res is None else res.stdout_dropped + res.stderr_dropped
    if dropped:
        if result.status == "pass":  # a passing gate shows only its summary
            result.summary += f" (first {dropped} bytes of output dropped)"
        result.notes.append(
            f"the first {dropped} bytes of the output were dropped (capture limit); "
            "only error lines in the rest were found"
        )
    return result
