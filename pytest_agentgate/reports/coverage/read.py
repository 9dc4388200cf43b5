"""The entry point: read a coverage report, or several shards, in any format agentgate reads."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pytest_agentgate.reports._io import decode_text, load_json, read_bytes
from pytest_agentgate.reports.coverage._common import (
    COVERAGE_ALIASES,
    COVERAGE_FORMATS,
    SQLITE_MAGIC,
    unique_paths,
)
from pytest_agentgate.reports.coverage.cobertura import read_cobertura
from pytest_agentgate.reports.coverage.coveragepy import (
    data_files,
    parse_coverage_json,
    read_coverage_data,
    read_coverage_data_files,
)
from pytest_agentgate.reports.coverage.istanbul import parse_istanbul_summary
from pytest_agentgate.reports.coverage.lcov import parse_lcov
from pytest_agentgate.reports.coverage.merge import merge_coverage
from pytest_agentgate.reports.coverage.sniff import detect_coverage_format, sniff
from pytest_agentgate.reports.hints import COVERAGE_HINTS, missing_hint
from pytest_agentgate.reports.model import CoverageReport, ReportError


def _canonical(format: str | None, source: str) -> str | None:
    if format is None:
        return None
    format = COVERAGE_ALIASES.get(format, format)
    if format not in COVERAGE_FORMATS:
        known = ", ".join([*COVERAGE_FORMATS, *COVERAGE_ALIASES])
        raise ReportError(
            source, f"unknown coverage format {format!r}", f"agentgate reads: {known}"
        )
    return format


def read_coverage(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    root: str | os.PathLike[str] | None = None,
) -> CoverageReport:
    """Read the coverage report at ``path``; ``format`` None detects it from the content.

    ``root`` (default: the working directory) is the project directory: coverage.py data is
    reported from there with its configuration, and absolute paths in istanbul, Cobertura and
    lcov reports are shown relative to it. A directory ``path`` is read as coverage.py data
    (its ``.coverage`` and ``.coverage.*`` files, combined).
    """
    source = os.fspath(path)
    format = _canonical(format, source)
    if format == "coverage-data" or (format is None and os.path.isdir(source)):
        return read_coverage_data(path, root=root)
    if format == "cobertura":
        return read_cobertura(path, root=root)
    data = read_bytes(path, hint=missing_hint(source, format))
    document: Any = None
    if format is None:
        format, document = sniff(data, source)
        if format == "coverage-data":
            return read_coverage_data(path, root=root)
        if format == "cobertura":
            return read_cobertura(path, root=root)
    elif data.startswith(SQLITE_MAGIC):
        raise ReportError(
            source,
            f"is a coverage.py data file, not {format}",
            "set the format to coverage-data, or leave it out to detect it",
        )
    if format == "lcov":
        return parse_lcov(decode_text(data, source), source, root=root)
    if document is None:  # a format was given, so the content was not sniffed
        document = load_json(
            decode_text(data, source),
            source,
            empty_hint=f"did the coverage step crash? {COVERAGE_HINTS[format]}",
            hint=COVERAGE_HINTS[format],
        )
    if format == "coverage-json":
        return parse_coverage_json(document, source, root=root)
    return parse_istanbul_summary(document, source, root=root)


def read_coverage_files(
    paths: Sequence[str | os.PathLike[str]],
    *,
    format: str | None = None,
    root: str | os.PathLike[str] | None = None,
) -> CoverageReport:
    """Read the coverage reports of several shards as one report.

    coverage.py data files are combined by coverage.py (:func:`read_coverage_data_files`); any
    other set is read file by file and merged line by line (:func:`merge_coverage`, which refuses
    formats without per-line data). One path is the same as :func:`read_coverage`.
    """
    names = unique_paths(paths)
    if not names:
        raise ReportError("coverage", "no coverage reports given", "point the gate at them")
    if len(names) == 1:
        return read_coverage(names[0], format=format, root=root)
    format = _canonical(format, ", ".join(names))
    formats = [format or _detect_path(name) for name in names]
    if all(f == "coverage-data" for f in formats):
        return read_coverage_data_files([p for name in names for p in data_files(name)], root=root)
    return merge_coverage(
        [read_coverage(name, format=f, root=root) for name, f in zip(names, formats, strict=True)]
    )


def _detect_path(path: str) -> str:
    return "coverage-data" if os.path.isdir(path) else detect_coverage_format(path)
