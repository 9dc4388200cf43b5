"""Coverage reports: a coverage file in, a :class:`CoverageReport` of covered/total ratios out.

Formats read (:data:`COVERAGE_FORMATS`), one module per format family:

- ``coverage-json``: coverage.py's ``coverage json`` report (:mod:`.coveragepy`).
- ``coverage-data``: coverage.py's ``.coverage`` SQLite data file, turned into the JSON report by
  coverage.py itself in a child process, then read like ``coverage-json`` (:mod:`.coveragepy`).
- ``istanbul-summary``: ``coverage-summary.json`` from the json-summary reporter of nyc, c8, jest
  and vitest (:mod:`.istanbul`).
- ``cobertura``: Cobertura XML, from ``coverage xml`` and other tools' Cobertura reporters
  (:mod:`.cobertura`).
- ``lcov``: lcov tracefiles (:mod:`.lcov`).

:mod:`.detect` tells the formats apart by content, :mod:`.merge` merges shards line by line, and
:mod:`.read` is the entry point that picks the reader.

Every percentage comes from :class:`Ratio` (covered/total), never from a tool's percent field:
coverage.py's ``percent_covered`` mixes lines and branches, and istanbul's ``pct`` is rounded (or
the string ``"Unknown"``). A report that measured no file at all is an error, not 100%: a
misconfigured ``--cov=`` must not pass the gate silently.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_agentgate.reports.coverage._common import COVERAGE_ALIASES, COVERAGE_FORMATS
    from pytest_agentgate.reports.coverage.cobertura import read_cobertura
    from pytest_agentgate.reports.coverage.coveragepy import (
        parse_coverage_json,
        read_coverage_data,
        read_coverage_data_files,
    )
    from pytest_agentgate.reports.coverage.istanbul import parse_istanbul_summary
    from pytest_agentgate.reports.coverage.lcov import parse_lcov, read_lcov
    from pytest_agentgate.reports.coverage.merge import merge_coverage
    from pytest_agentgate.reports.coverage.read import read_coverage, read_coverage_files
    from pytest_agentgate.reports.coverage.sniff import detect_coverage_format

# Each name's module, imported on first use: a run that reads no coverage report (most pytest
# --agentgate runs) does not pay for six readers.
_MODULES = {
    "COVERAGE_ALIASES": "_common",
    "COVERAGE_FORMATS": "_common",
    "detect_coverage_format": "sniff",
    "merge_coverage": "merge",
    "parse_coverage_json": "coveragepy",
    "parse_istanbul_summary": "istanbul",
    "parse_lcov": "lcov",
    "read_cobertura": "cobertura",
    "read_coverage": "read",
    "read_coverage_data": "coveragepy",
    "read_coverage_data_files": "coveragepy",
    "read_coverage_files": "read",
    "read_lcov": "lcov",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "COVERAGE_ALIASES",
    "COVERAGE_FORMATS",
    "detect_coverage_format",
    "merge_coverage",
    "parse_coverage_json",
    "parse_istanbul_summary",
    "parse_lcov",
    "read_cobertura",
    "read_coverage",
    "read_coverage_data",
    "read_coverage_data_files",
    "read_coverage_files",
    "read_lcov",
]
