"""What the coverage readers share: format names, how to write each format, checked counts."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
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

HINTS: dict[str, str] = {
    "coverage-json": (
        "`coverage json -o FILE` writes it (or `pytest --cov --cov-report=json:FILE`)"
    ),
    "coverage-data": (
        "run the tests under coverage.py to write it: `coverage run -m pytest` or `pytest --cov`"
    ),
    "istanbul-summary": (
        "the json-summary reporter writes it: `nyc --reporter=json-summary`, "
        "`c8 --reporter=json-summary`, `jest --coverageReporters=json-summary`, "
        "or vitest `coverage.reporter: ['json-summary']`"
    ),
    "cobertura": (
        "`coverage xml -o FILE` (or `pytest --cov --cov-report=xml:FILE`) writes it; other "
        "languages: the tool's Cobertura reporter (c8/nyc `--reporter=cobertura`, coverlet, "
        "gcovr `--cobertura`)"
    ),
    "lcov": (
        "`coverage lcov -o FILE`, `c8 --reporter=lcovonly`, `nyc --reporter=lcovonly`, jest "
        "`--coverageReporters=lcov`, `geninfo`/`lcov --capture` or `grcov -t lcov` write it"
    ),
}


def missing_hint(path: str, format: str | None) -> str:
    """How to write the report at ``path``: by its format, else guessed from its file name."""
    if format in HINTS:
        return HINTS[format]
    name = Path(path).name
    if name.startswith(".coverage"):
        return HINTS["coverage-data"]
    if "summary" in name:
        return HINTS["istanbul-summary"]
    if name.endswith(".xml"):
        return HINTS["cobertura"]
    if name.endswith((".info", ".lcov")):
        return HINTS["lcov"]
    return f"{HINTS['coverage-json']}; for JavaScript, {HINTS['istanbul-summary']}"


def ratio_of(covered: object, total: object, source: str, where: str, hint: str) -> Ratio:
    """covered/total from a report's counts: whole numbers, covered never above total."""
    covered_n = count(covered, source, f"{where} covered", hint)
    total_n = count(total, source, f"{where} total", hint)
    if covered_n > total_n:
        raise ReportError(source, f"{where}: covered {covered_n} exceeds total {total_n}", hint)
    return Ratio(covered_n, total_n)


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
