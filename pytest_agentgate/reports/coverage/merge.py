"""Merging the coverage reports of several shards, line by line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_agentgate.reports.coverage._totals import report_from_details
from pytest_agentgate.reports.model import CoverageDetail, CoverageReport, ReportError


def _union(into: dict[Any, bool] | None, other: dict[Any, bool] | None) -> dict[Any, bool] | None:
    if other is None:
        return into
    merged = dict(into or {})
    for key, ran in other.items():
        merged[key] = merged.get(key, False) or ran
    return merged


def _union_line_branches(
    a: dict[int, tuple[int, int]] | None, b: dict[int, tuple[int, int]] | None
) -> dict[int, tuple[int, int]] | None:
    """Cobertura counts per line: exact when one side took nothing or everything, else unknown
    (1 of 2 taken in each shard may be the same branch or both): raises _Ambiguous."""
    if a is None or b is None:
        return a if b is None else b
    merged = dict(a)
    for line, (covered, total) in b.items():
        if line not in merged:
            merged[line] = (covered, total)
            continue
        other_covered, other_total = merged[line]
        if other_total != total:
            raise _Ambiguous(line)
        if covered == 0 or other_covered == total:
            continue
        if other_covered != 0 and covered != total:
            raise _Ambiguous(line)
        merged[line] = (covered, total)
    return merged


class _Ambiguous(Exception):
    pass


def merge_coverage(reports: Sequence[CoverageReport]) -> CoverageReport:
    """One report from the coverage reports of several shards: per-line union, file by file.

    A line (branch, function) is covered when any shard covered it, and counted once. Every
    report needs per-line detail (coverage.py JSON or data, Cobertura, lcov); istanbul's summary
    has none, so its shards cannot be merged (ReportError). Branches are merged when every shard
    measured them: exactly for lcov and coverage.py (branch identities); for Cobertura, which
    only records "1 of 2" per line, a line two shards covered partly cannot be merged, so
    branches are then None with a note. Functions likewise need every shard to measure them.
    A single report is returned as it is.
    """
    if not reports:
        raise ReportError("coverage", "no coverage reports to merge", "point the gate at them")
    if len(reports) == 1:
        return reports[0]
    source = ", ".join(r.source for r in reports)
    for report in reports:
        lacking = [f.path for f in report.files if f.detail is None]
        if lacking:
            raise ReportError(
                report.source,
                f"shards of format {report.format} cannot be merged: it has no per-line data "
                f"(for {lacking[0]}"
                + (f" and {len(lacking) - 1} more" if len(lacking) > 1 else "")
                + ")",
                "write a format with line detail per shard (coverage.py data or JSON, lcov, "
                "Cobertura), or combine the shards with the coverage tool first "
                "(`coverage combine`, `nyc merge`, `lcov -a`)",
            )
    details: dict[str, CoverageDetail] = {}
    notes: list[str] = []
    ambiguous: str | None = None
    for report in reports:
        for file in report.files:
            assert file.detail is not None
            detail = details.setdefault(file.path, CoverageDetail())
            for line, ran in file.detail.lines.items():
                detail.lines[line] = detail.lines.get(line, False) or ran
            detail.implied_lines = _union(detail.implied_lines, file.detail.implied_lines)
            detail.branches = _union(detail.branches, file.detail.branches)
            detail.functions = _union(detail.functions, file.detail.functions)
            try:
                detail.line_branches = _union_line_branches(
                    detail.line_branches, file.detail.line_branches
                )
            except _Ambiguous as exc:
                ambiguous = ambiguous or f"{file.path} line {exc.args[0]}"
            if detail.branches and detail.line_branches:  # Cobertura counts beside lcov arcs
                ambiguous = ambiguous or f"{file.path} (Cobertura and another format)"
    branches = all(r.branches is not None for r in reports)
    if branches and ambiguous is not None:
        branches = False
        notes.append(
            f"branch coverage of the Cobertura shards cannot be merged ({ambiguous} is partly "
            "covered in two shards, and Cobertura does not say which branches ran); merge "
            "lcov or coverage.py data shards instead for branch coverage"
        )
    formats = sorted({r.format for r in reports})
    merged = report_from_details(
        source,
        formats[0] if len(formats) == 1 else "+".join(formats),
        details,
        branches=branches,
        functions=all(r.functions is not None for r in reports),
    )
    for report in reports:
        merged.notes.extend(report.notes)
    merged.notes.extend(notes)
    return merged
