"""The build gate: the command's exit code, and the error lines of its output."""

from __future__ import annotations

from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    GateInput,
    Option,
    command_problem,
    new_result,
    skipped,
)
from pytest_agentgate.verdict import Finding, GateResult


class BuildGate:
    name = "build"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        Option("max_errors", "int", "error lines tolerated in the build output", threshold=True),
    )
    stdout_report = False

    def judge(self, gate: GateInput) -> GateResult:
        cfg = gate.config
        res = gate.result
        if cfg.command is None:
            return skipped(gate, "no build command configured")
        if res is None:
            return skipped(gate, "not run (--no-run): a build gate has no report to read")
        output = "\n".join(part for part in (res.stdout, res.stderr) if part)
        findings = _error_lines(output)
        errors = len(findings)
        actual = {"exit_code": res.exit_code, "errors": errors}
        max_errors = cfg.thresholds.get("max_errors")
        problem = command_problem(gate)
        if problem is not None:
            result = new_result(gate, "fail", "build did not finish")
            result.problems.append(problem)
        elif res.exit_code != 0:
            noun = "error line" if errors == 1 else "error lines"
            result = new_result(
                gate, "fail", f"build failed: exit code {res.exit_code}, {errors} {noun}"
            )
        elif max_errors is not None and errors > max_errors:
            result = new_result(
                gate, "fail", f"build exited 0 but printed {errors} errors (max {max_errors})"
            )
        else:
            return _with_dropped(gate, _passed(gate, actual, findings))
        if not findings:
            # No recognisable error shape: the last lines are the most useful thing to show.
            from pytest_agentgate.reports.build import tail_lines

            findings = [Finding(line) for line in tail_lines(output)]
            if not findings:
                result.problems.append("the command printed nothing")
        result.actual = actual
        result.findings = findings
        return _with_dropped(gate, result)


def _error_lines(output: str) -> list[Finding]:
    if not output:  # a quiet success: the parsers are not even imported
        return []
    from pytest_agentgate.reports.build import extract_errors

    return extract_errors(output)


def _with_dropped(gate: GateInput, result: GateResult) -> GateResult:
    """Say when the bounded capture dropped output: its error lines were not seen."""
    res = gate.result
    dropped = 0 if res is None else res.stdout_dropped + res.stderr_dropped
    if dropped:
        if result.status == "pass":  # a passing gate shows only its summary
            result.summary += f" (first {dropped} bytes of output dropped)"
        result.notes.append(
            f"the first {dropped} bytes of the output were dropped (capture limit); "
            "only error lines in the rest were found"
        )
    return result


def _passed(gate: GateInput, actual: dict[str, object], findings: list[Finding]) -> GateResult:
    errors = actual["errors"]
    summary = "build succeeded" if not errors else f"build succeeded with {errors} error lines"
    result = new_result(gate, "pass", summary)
    result.actual = actual
    result.findings = findings
    return result
