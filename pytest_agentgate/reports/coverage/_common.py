"""What the coverage readers share: format names, how to write each format, checked counts."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pytest_agentgate.reports._io import count, shape_error
from pytest_agentgate.reports.model import Ratio, ReportError

COVERAGE_FORMATS: tuple[str, ...] = (
    "coverage-json",
    "coverage-data",
    "istanbul-summary",
    "cobertura",
    "lcov",
)
# Other names accepted for a format: coverage.py calls its Cobertura report "coverage xml".
COVERAGE_ALIASES: dict[str, str] = {"coverage-xml": "cobertura"}

SQLITE_MAGIC = b"SQLite format 3\x00"


def ratio_of(covered: object, total: object, source: str, where: str, hint: str) -> Ratio:
    """covered/total from a report's counts: whole numbers, covered never above total."""
    covered_n = count(covered, source, f"{where} covered", hint)
    total_n = count(total, source, f"{where} total", hint)
    if covered_n > total_n:
        raise ReportError(source, f"{where}: covered {covered_n} exceeds total {total_n}", hint)
    return Ratio(covered_n, total_n)


def check_total(claimed: Ratio, summed: Ratio, source: str, where: str, hint: str) -> None:
    """A report's total is the sum of its files (coverage.py and istanbul add them up): a total
    that says otherwise was not written by the tool, and the gate would judge the claim."""
    if claimed != summed:
        raise ReportError(
            source,
            f"{where} say {claimed.covered} of {claimed.total} covered, but its files add up to "
            f"{summed.covered} of {summed.total}: the report is not credible",
            hint,
        )


def expect_object(value: object, source: str, where: str, hint: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else a ReportError naming ``where`` in ``source``."""
    if not isinstance(value, dict):
        raise shape_error(source, where, "an object", value, hint)
    return value


def unique_paths(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """``paths`` as strings, each once, in order; a single path (not in a list) is one path."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return list(dict.fromkeys(os.fspath(p) for p in paths))
