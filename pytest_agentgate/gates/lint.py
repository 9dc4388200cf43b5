"""The lint gate: errors and warnings from one or more JSON reports (or the command's stdout)."""

from __future__ import annotations

from pathlib import Path

from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    REPORT_OPTIONS,
    GateInput,
    Option,
    command_problem,
    display_path,
    exit_disagrees,
    new_result,
    report_files,
    skipped,
    unreadable,
)
from pytest_agentgate.reports.model import LintReport, ReportError
from pytest_agentgate.verdict import GateResult


class LintGate:
    name = "lint"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        *REPORT_OPTIONS,
        Option("max_errors", "int", "findings of error severity tolerated", threshold=True),
        Option("max_warnings", "int", "findings of warning severity tolerated", threshold=True),
    )
    stdout_report = True

    def judge(self, gate: GateInput) -> GateResult:
        cfg = gate.config
        problem = command_problem(gate)
        if problem is not None:
            result = new_result(gate, "fail", "lint did not finish")
            result.problems.append(problem)
            result.actual = {"errors": None, "warnings": None}
            return result
        try:
            reports = self._read(gate)
        except ReportError as exc:
            return unreadable(
                gate, "lint report could not be read", exc, {"errors": None, "warnings": None}
            )
        if reports is None:
            return skipped(gate, "not run (--no-run) and no lint report configured")
        findings = [f for report in reports for f in report.findings]
        errors = sum(r.errors for r in reports)
        warnings = sum(r.warnings for r in reports)
        max_errors = cfg.thresholds.get("max_errors")
        max_warnings = cfg.thresholds.get("max_warnings")
        over = (max_errors is not None and errors > max_errors) or (
            max_warnings is not None and warnings > max_warnings
        )
        summary = f"{_count(errors, 'error')} (max {_limit(max_errors)}), " + (
            f"{_count(warnings, 'warning')} (max {_limit(max_warnings)})"
        )
        result = new_result(gate, "fail" if over else "pass", summary)
        result.actual = {"errors": errors, "warnings": warnings}
        # Errors first: they are what blocks; warnings follow in report order.
        result.findings = sorted(findings, key=lambda f: f.severity != "error")
        if not over and errors == 0 and warnings == 0 and (msg := exit_disagrees(gate)):
            result.status = "fail"
            result.summary = f"lint command exited {gate.result.exit_code if gate.result else ''}"
            result.problems.append(msg)
        return result

    def _read(self, gate: GateInput) -> list[LintReport] | None:
        cfg = gate.config
        fmt = cfg.format
        if cfg.reports:
            files = report_files(
                gate, "lint report", "the lint command must write it, or fix the `report` path"
            )
            return [
                gate.registry.parse_lint(_read_text(p), display_path(p, gate.root), fmt)
                for p in files
            ]
        if gate.result is None:
            return None
        if gate.result.stdout_dropped:
            raise ReportError(
                f"stdout of `{cfg.command}`",
                f"the report was larger than the capture limit ({gate.result.stdout_dropped} "
                "bytes dropped)",
                "write the report to a file and set `report:`",
            )
        return [gate.registry.parse_lint(gate.result.stdout, f"stdout of `{cfg.command}`", fmt)]


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except IsADirectoryError:
        raise ReportError(str(path), "is a directory, not a lint report") from None
    except OSError as exc:
        raise ReportError(str(path), f"cannot be read: {exc.strerror}") from None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _limit(value: int | None) -> str:
    return "none" if value is None else str(value)
