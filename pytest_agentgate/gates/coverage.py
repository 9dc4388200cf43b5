"""The coverage gate: lines, branches, functions, statements from covered/total counts."""

from __future__ import annotations

from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    REPORT_OPTIONS,
    SHARD_OPTIONS,
    GateInput,
    Option,
    command_problem,
    display_path,
    exit_disagrees,
    needed_to_reach,
    new_result,
    pct,
    report_files,
    unreadable,
)
from pytest_agentgate.reports.model import CoverageReport, FileCoverage, ReportError
from pytest_agentgate.verdict import Finding, GateResult

METRICS: tuple[str, ...] = ("lines", "branches", "functions", "statements")

# How to produce each metric when the report lacks it.
HOW_TO_MEASURE = {
    "lines": "write a coverage report (coverage.py: `coverage json`; istanbul: json-summary)",
    "branches": (
        "turn on branch coverage (coverage.py: `coverage run --branch` or "
        "`[tool.coverage.run] branch = true`), or set `branches: null` to gate without it"
    ),
    "functions": (
        "use a format with function data (coverage.py >= 7.5 JSON or data file, istanbul), "
        "or set `functions: null`"
    ),
    "statements": "use a format with statement data, or set `statements: null`",
}
MAX_FILE_FINDINGS = 10
# How a test command writes a report of each format, for a report that is missing.
WRITE_REPORT = {
    "": "coverage.py: `coverage json -o PATH`; jest, c8, nyc: the json-summary reporter",
    "coverage-json": "coverage.py: `coverage json -o PATH`",
    "coverage-data": "coverage.py: `coverage run --data-file=PATH`",
    "istanbul-summary": (
        "jest: `--coverageReporters=json-summary`; c8, nyc: `--reporter=json-summary`"
    ),
    "lcov": "jest: `--coverageReporters=lcov`; c8, nyc: `--reporter=lcov`",
    "cobertura": "coverage.py: `coverage xml -o PATH`; jest, c8, nyc: the cobertura reporter",
    "coverage-xml": "coverage.py: `coverage xml -o PATH`",
}


class CoverageGate:
    name = "coverage"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        *REPORT_OPTIONS,
        *SHARD_OPTIONS,
        *(Option(m, "percent", f"minimum {m} coverage, %", threshold=True) for m in METRICS),
    )
    stdout_report = False

    def judge(self, gate: GateInput) -> GateResult:
        actual: dict[str, float | None] = dict.fromkeys(METRICS)
        problem = command_problem(gate)
        # Measured in-process by the pytest plugin (pytest-cov's data), or why that failed.
        if isinstance(gate.evidence, CoverageReport):
            return self._judge_report(gate, gate.evidence, problem)
        if isinstance(gate.evidence, ReportError):
            return unreadable(gate, "no usable coverage data", gate.evidence, actual)
        try:
            report = self._read(gate)
        except ReportError as exc:
            return unreadable(gate, "no usable coverage report", exc, actual)
        return self._judge_report(gate, report, problem)

    def _read(self, gate: GateInput) -> CoverageReport:
        cfg = gate.config
        if not cfg.reports:
            raise ReportError("coverage", "no coverage report configured", "set `report:`")
        how = WRITE_REPORT.get(cfg.format or "", WRITE_REPORT[""])
        files = report_files(gate, "coverage report", f"the test command must write it ({how})")
        return gate.registry.read_coverage_many(files, cfg.format, gate.root)

    def _judge_report(
        self, gate: GateInput, report: CoverageReport, problem: str | None
    ) -> GateResult:
        cfg = gate.config
        actual: dict[str, float | None] = {}
        parts: list[str] = []
        failed_metrics: list[str] = []
        notes: list[str] = []
        problems: list[str] = [problem] if problem else []
        for metric in METRICS:
            ratio = report.metric(metric)
            actual[metric] = None if ratio is None else ratio.percent
            threshold = cfg.thresholds.get(metric)
            if threshold is None:
                if ratio is not None:
                    parts.append(f"{metric} {pct(ratio.percent)}")
                continue
            if ratio is None:
                failed_metrics.append(metric)
                parts.append(f"{metric} not measured (need {pct(threshold)})")
                problems.append(
                    f"{report.source}: {metric} coverage is not in this report; "
                    + HOW_TO_MEASURE[metric]
                )
                continue
            parts.append(f"{metric} {pct(ratio.percent, threshold)} (need {pct(threshold)})")
            if ratio.percent < threshold:
                failed_metrics.append(metric)
                more = needed_to_reach(threshold, ratio.covered, ratio.total)
                notes.append(
                    f"{metric}: {pct(ratio.percent, threshold)} < {pct(threshold)}: "
                    f"cover {more} more of {ratio.total} {metric} ({ratio.covered} covered now)"
                )
        if not failed_metrics and not problem and (msg := exit_disagrees(gate)):
            # The gate's own command (`coverage json`, a fail-under check) failed: a report that
            # looks fine does not outweigh it.
            problems.append(msg)
        status = "fail" if failed_metrics or problems else "pass"
        result = new_result(gate, status, ", ".join(parts) or "no coverage thresholds set")
        result.actual = actual
        result.problems = problems
        result.notes = notes + report.notes
        if failed_metrics:
            result.findings = _worst_files(report.files, gate)
        return result


def _worst_files(files: list[FileCoverage], gate: GateInput) -> list[Finding]:
    ranked = sorted((f for f in files if f.missed > 0), key=lambda f: (-f.missed, f.path))
    findings = []
    for file in ranked[:MAX_FILE_FINDINGS]:
        ranges = line_ranges(file.missing_lines)
        many = "s" if len(file.missing_lines) != 1 else ""
        where = f": line{many} {ranges}" if file.missing_lines else ""
        findings.append(
            Finding(
                f"{file.missed} line{'s' if file.missed != 1 else ''} not covered{where}",
                path=display_path(file.path, gate.root),
                line=file.missing_lines[0] if file.missing_lines else None,
                severity="error",
            )
        )
    return findings


def line_ranges(lines: list[int], limit: int = 12) -> str:
    """``[1, 2, 3, 7, 9, 10]`` -> ``1-3, 7, 9-10``; long lists end with ``, …``."""
    ranges: list[str] = []
    start = prev = None
    for n in sorted(lines):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            ranges.append(str(start) if start == prev else f"{start}-{prev}")
            start = prev = n
    if start is not None:
        ranges.append(str(start) if start == prev else f"{start}-{prev}")
    shown = ", ".join(ranges[:limit])
    return shown + (", …" if len(ranges) > limit else "")
