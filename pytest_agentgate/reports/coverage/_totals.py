"""Per-line detail: one way to total a report (Cobertura, lcov), and to merge shards."""

from __future__ import annotations

import os

from pytest_agentgate.reports.coverage._common import foreign_files, foreign_note
from pytest_agentgate.reports.model import (
    CoverageDetail,
    CoverageReport,
    FileCoverage,
    Ratio,
    ReportError,
)


def report_from_details(
    source: str,
    format: str,
    details: dict[str, CoverageDetail],
    *,
    branches: bool,
    functions: bool,
    fallback: dict[str, tuple[Ratio | None, Ratio | None, Ratio | None]] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> CoverageReport:
    """Totals computed from per-line evidence; statements are lines (one statement per line is
    all that Cobertura and lcov record). ``branches``/``functions`` False: not measured (None).

    ``fallback`` holds per-file (lines, branches, functions) summary counts for files whose
    report gave counts without line detail (an lcov record with LF/LH but no DA lines).

    With ``root``, the project: files outside it are left out of the files and the totals, with
    a note (:func:`foreign_files`); a relative path is read from ``root``.
    """
    notes: list[str] = []
    foreign = foreign_files(list(details), root)
    if foreign:
        notes.append(foreign_note(sorted(foreign)))
        details = {path: detail for path, detail in details.items() if path not in foreign}
    lines = Ratio(0, 0)
    branch_total = Ratio(0, 0)
    function_total = Ratio(0, 0)
    files = []
    fallback = fallback or {}
    for path, detail in details.items():
        summary_lines, summary_branches, summary_functions = fallback.get(path, (None, None, None))
        if detail.lines or summary_lines is None:
            missing = [n for n, ran in detail.lines.items() if not ran]
            missing.sort()  # most reports list lines in order: a pass that moves nothing
            file_lines = Ratio(len(detail.lines) - len(missing), len(detail.lines))
            kept: CoverageDetail | None = detail
        else:
            file_lines, missing, kept = summary_lines, [], None
        lines += file_lines
        if detail.branches:
            branch_total += Ratio(sum(detail.branches.values()), len(detail.branches))
        elif detail.line_branches:
            counts = detail.line_branches.values()
            branch_total += Ratio(sum(c for c, _ in counts), sum(t for _, t in counts))
        elif summary_branches is not None:
            branch_total += summary_branches
            if summary_branches.total:  # counts without identities cannot be merged
                kept = None
        if detail.functions:
            function_total += Ratio(sum(detail.functions.values()), len(detail.functions))
        elif summary_functions is not None:
            function_total += summary_functions
            if summary_functions.total:
                kept = None
        files.append(
            FileCoverage(
                path=path,
                lines=file_lines,
                missing_lines=missing,
                detail=kept,
                line_hits=detail.line_hits(),
            )
        )
    if not files:
        raise ReportError(
            source,
            "measured no files",
            "check that the tests ran with coverage on and that the coverage tool's "
            "include/source settings name your code",
        )
    return CoverageReport(
        source=source,
        format=format,
        lines=lines,
        branches=branch_total if branches else None,
        functions=function_total if functions else None,
        statements=lines,
        files=files,
        notes=notes,
    )
