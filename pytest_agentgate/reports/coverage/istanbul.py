"""istanbul ``coverage-summary.json`` (the json-summary reporter of nyc, c8, jest, vitest)."""

from __future__ import annotations

import os
from typing import Any

from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.coverage._common import check_total, expect_object, ratio_of
from pytest_agentgate.reports.hints import COVERAGE_HINTS
from pytest_agentgate.reports.model import CoverageReport, FileCoverage, Ratio, ReportError

_ISTANBUL_METRICS = ("lines", "statements", "functions", "branches")


def _istanbul_metric(entry: dict[str, Any], name: str, source: str, where: str) -> Ratio:
    hint = COVERAGE_HINTS["istanbul-summary"]
    metric = expect_object(entry.get(name), source, f"{where} {name}", hint)
    # "pct" is ignored: rounded, or "Unknown" when total is 0 (Ratio makes that 100%).
    return ratio_of(metric.get("covered"), metric.get("total"), source, f"{where} {name}", hint)


def parse_istanbul_summary(
    data: object, source: str, *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """A parsed istanbul ``coverage-summary.json`` -> CoverageReport (no line numbers in it).

    ``total`` must be what the files add up to, metric by metric, as istanbul writes it.
    """
    hint = COVERAGE_HINTS["istanbul-summary"]
    document = expect_object(data, source, "the top level", hint)
    total = expect_object(document.get("total"), source, '"total"', hint)
    totals = {name: _istanbul_metric(total, name, source, "total") for name in _ISTANBUL_METRICS}
    files = []
    # Each metric summed over the files, while every file has it (the reporter writes all four).
    summed = dict.fromkeys(_ISTANBUL_METRICS, Ratio(0, 0))
    for path, entry in document.items():
        if path == "total":
            continue
        where = f"file {path!r}"
        entry = expect_object(entry, source, where, hint)
        for name in list(summed):
            if name in entry:
                summed[name] += _istanbul_metric(entry, name, source, where)
            else:
                del summed[name]
        file_lines = _istanbul_metric(entry, "lines", source, where)
        files.append(FileCoverage(path=display_path(path, root), lines=file_lines))
    if not files:
        raise ReportError(
            source,
            "measured no files",
            "check the coverage `include`/`all` settings and that the tests ran with coverage on",
        )
    for name, ratio in summed.items():
        check_total(totals[name], ratio, source, f"total {name}", hint)
    return CoverageReport(
        source=source,
        format="istanbul-summary",
        files=files,
        lines=totals["lines"],
        statements=totals["statements"],
        functions=totals["functions"],
        branches=totals["branches"],
    )
