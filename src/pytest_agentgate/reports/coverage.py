"""Coverage reports: a coverage file in, a :class:`CoverageReport` of covered/total ratios out.

Formats read (:data:`COVERAGE_FORMATS`):

- ``coverage-json``: coverage.py's ``coverage json`` report.
- ``coverage-data``: coverage.py's ``.coverage`` SQLite data file, turned into the JSON report by
  coverage.py itself in a child process, then read like ``coverage-json``.
- ``istanbul-summary``: ``coverage-summary.json`` from the json-summary reporter of nyc, c8, jest
  and vitest.

Every percentage comes from :class:`Ratio` (covered/total), never from a tool's percent field:
coverage.py's ``percent_covered`` mixes lines and branches, and istanbul's ``pct`` is rounded (or
the string ``"Unknown"``). A report that measured no file at all is an error, not 100%: a
misconfigured ``--cov=`` must not pass the gate silently.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ._io import count, decode_text, display_path, load_json, read_bytes, shape_error
from .model import CoverageReport, FileCoverage, Ratio, ReportError

COVERAGE_FORMATS: tuple[str, ...] = ("coverage-json", "coverage-data", "istanbul-summary")

SQLITE_MAGIC = b"SQLite format 3\x00"

_HINTS: dict[str, str] = {
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
}

# Long enough for a large data file; a report step that hangs longer is broken, not slow.
_DATA_TIMEOUT_S = 300

# Environment variables that would make the child process measure itself and write data files
# into the user's project (pytest-cov's subprocess hook, coverage's process_startup and patch).
_MEASURING_ENV_PREFIXES = ("COV_CORE_",)
_MEASURING_ENV = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG", "COVERAGE_FILE")


def _missing_hint(path: str, format: str | None) -> str:
    if format in _HINTS:
        return _HINTS[format]
    name = Path(path).name
    if name.startswith(".coverage"):
        return _HINTS["coverage-data"]
    if "summary" in name:
        return _HINTS["istanbul-summary"]
    return f"{_HINTS['coverage-json']}; for JavaScript, {_HINTS['istanbul-summary']}"


def _unknown_format(source: str, what: str) -> ReportError:
    return ReportError(
        source,
        f"is not a coverage report agentgate reads ({what})",
        "agentgate reads coverage.py JSON (`coverage json`), the coverage.py data file "
        "(`.coverage`) and istanbul `coverage-summary.json` (json-summary reporter); "
        f"formats: {', '.join(COVERAGE_FORMATS)}",
    )


# --- detection ----------------------------------------------------------------------------------


def _classify_json(data: object) -> str | None:
    if not isinstance(data, dict):
        return None
    meta, totals = data.get("meta"), data.get("totals")
    if isinstance(meta, dict) and ("format" in meta or "branch_coverage" in meta):
        return "coverage-json"
    if isinstance(totals, dict) and "num_statements" in totals:
        return "coverage-json"
    total = data.get("total")
    if isinstance(total, dict) and isinstance(total.get("lines"), dict):
        lines = total["lines"]
        if "pct" in lines or "total" in lines:
            return "istanbul-summary"
    return None


def _sniff(data: bytes, source: str) -> tuple[str, Any]:
    """The format of ``data`` and, for JSON formats, the parsed document."""
    if data.startswith(SQLITE_MAGIC):
        return "coverage-data", None
    if not data.strip():
        raise ReportError(
            source, "is empty", f"did the coverage step crash? {_missing_hint(source, None)}"
        )
    text = decode_text(data, source)
    if text.lstrip()[:1] not in ("{", "["):
        looks = "XML" if text.lstrip().startswith("<") else "not JSON and not a SQLite data file"
        raise _unknown_format(source, looks)
    document = load_json(text, source, hint=_missing_hint(source, None))
    fmt = _classify_json(document)
    if fmt is None:
        what = "JSON of an unknown shape"
        if isinstance(document, dict) and any(
            isinstance(v, dict) and "statementMap" in v for v in document.values()
        ):
            what = "istanbul coverage-final.json; use the json-summary reporter instead"
        raise _unknown_format(source, what)
    return fmt, document


def detect_coverage_format(path: str | os.PathLike[str]) -> str:
    """The format of the coverage file at ``path``, judged by its content.

    Raises ReportError for a missing, empty or unreadable file, and for content that is none of
    :data:`COVERAGE_FORMATS` (the message lists them).
    """
    source = os.fspath(path)
    return _sniff(read_bytes(path, hint=_missing_hint(source, None)), source)[0]


# --- helpers ------------------------------------------------------------------------------------


def _ratio(covered: object, total: object, source: str, where: str, hint: str) -> Ratio:
    covered_n = count(covered, source, f"{where} covered", hint)
    total_n = count(total, source, f"{where} total", hint)
    if covered_n > total_n:
        raise ReportError(source, f"{where}: covered {covered_n} exceeds total {total_n}", hint)
    return Ratio(covered_n, total_n)


def _dict(value: object, source: str, where: str, hint: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise shape_error(source, where, "an object", value, hint)
    return value


# --- coverage.py JSON ---------------------------------------------------------------------------


def _python_functions(files: dict[str, Any], source: str, hint: str) -> Ratio | None:
    """Functions from the per-file "functions" regions (coverage.py >= 7.5, JSON format 3).

    A function counts when it has statements; it is covered when any of them ran. The "" region
    is the module-level code outside every function, not a function. Older reports have no regions,
    so functions are not measured (None), never 100%.
    """
    measured = False
    covered = total = 0
    for path, entry in files.items():
        regions = entry.get("functions")
        if regions is None:
            continue
        measured = True
        regions = _dict(regions, source, f'file {path!r} "functions"', hint)
        for name, region in regions.items():
            if name == "":
                continue
            where = f"file {path!r} function {name!r}"
            summary = _dict(
                _dict(region, source, where, hint).get("summary"), source, f"{where} summary", hint
            )
            ratio = _ratio(
                summary.get("covered_lines"), summary.get("num_statements"), source, where, hint
            )
            if ratio.total > 0:
                total += 1
                covered += ratio.covered > 0
    return Ratio(covered, total) if measured else None


def parse_coverage_json(
    data: object, source: str, *, format: str = "coverage-json"
) -> CoverageReport:
    """A parsed ``coverage json`` document -> CoverageReport.

    Lines and statements are the same ratio (coverage.py measures Python statements as lines).
    Branches exist only when the run measured them (``meta.branch_coverage``).
    """
    hint = _HINTS["coverage-json"]
    document = _dict(data, source, "the top level", hint)
    meta = document.get("meta", {})
    meta = _dict(meta, source, '"meta"', hint)
    totals = _dict(document.get("totals"), source, '"totals"', hint)
    files = _dict(document.get("files", {}), source, '"files"', hint)

    lines = _ratio(
        totals.get("covered_lines"), totals.get("num_statements"), source, "totals lines", hint
    )
    branches = None
    if meta.get("branch_coverage") is True:
        branches = _ratio(
            totals.get("covered_branches"),
            totals.get("num_branches"),
            source,
            "totals branches",
            hint,
        )

    file_reports = []
    for path, entry in files.items():
        where = f"file {path!r}"
        entry = _dict(entry, source, where, hint)
        summary = _dict(entry.get("summary"), source, f"{where} summary", hint)
        file_lines = _ratio(
            summary.get("covered_lines"), summary.get("num_statements"), source, where, hint
        )
        missing = entry.get("missing_lines", [])
        if not isinstance(missing, list):
            raise shape_error(source, f"{where} missing_lines", "a list", missing, hint)
        numbers = sorted(count(n, source, f"{where} missing line", hint) for n in missing)
        file_reports.append(FileCoverage(path=path, lines=file_lines, missing_lines=numbers))

    if not file_reports:
        raise ReportError(
            source,
            "measured no files",
            "coverage found no measured source: check `[run] source` / `--cov=` names your "
            "package and that the tests ran under coverage",
        )
    return CoverageReport(
        source=source,
        format=format,
        lines=lines,
        branches=branches,
        functions=_python_functions(files, source, hint),
        statements=lines,
        files=file_reports,
    )


# --- coverage.py data file ----------------------------------------------------------------------

# Runs in a child process whose working directory is the project root, so that coverage.py reads
# that root's configuration (.coveragerc, setup.cfg, tox.ini, pyproject.toml), resolves relative
# paths from there and reports paths relative to it, exactly as `coverage json` would. In-process
# use would have to chdir (global, racy with parallel gates) and would reset coverage.py's
# module-global relative directory under any coverage that is measuring this process (pytest-cov).
_EXPORT_SCRIPT = r"""
import json, sys, warnings
# Never import a project's own module named "coverage" from the working directory.
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
data_file, outfile, result_file = sys.argv[1:4]
result = {"error": None, "no_data": False, "measured": 0, "warnings": [], "stage": "config"}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        import coverage
        from coverage.exceptions import NoDataError
        cov = coverage.Coverage(data_file=data_file, data_suffix=False, messages=False)
        result["stage"] = "load"
        cov.load()
        result["measured"] = len(cov.get_data().measured_files())
        result["stage"] = "report"
        cov.json_report(outfile=outfile, ignore_errors=True)
    except Exception as exc:
        if type(exc).__name__ == "ConfigError" or isinstance(exc, ImportError):
            result["stage"] = "config"  # a bad setting, or a configured plugin that is missing
        result["no_data"] = type(exc).__name__ == "NoDataError"
        result["error"] = f"{type(exc).__name__}: {exc}"
result["warnings"] = [str(w.message) for w in caught]
with open(result_file, "w", encoding="utf-8") as f:
    json.dump(result, f)
"""


def _child_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _MEASURING_ENV and not key.startswith(_MEASURING_ENV_PREFIXES)
    }
    env["PYTHONIOENCODING"] = "utf-8"
    return env


_NO_SOURCE = re.compile(r"No source for code: '(?P<path>.+)'")


def _notes_from_warnings(messages: list[str], root: str) -> list[str]:
    """Turn coverage.py's warnings into notes; files without source are listed together."""
    missing: list[str] = []
    notes: list[str] = []
    for message in messages:
        found = _NO_SOURCE.search(message)
        if found:
            missing.append(display_path(found["path"], root))
        else:
            notes.append(f"coverage.py: {message.split(' (couldnt-parse)')[0]}")
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        notes.insert(
            0,
            f"{len(missing)} measured file(s) left out of the totals because their source was not "
            f"found (reported from {root}): {shown}",
        )
    return notes


def read_coverage_data(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """Read a coverage.py data file by having coverage.py write its JSON report to a temp dir.

    The user's data file is copied first and never opened in place; nothing is written next to the
    user's files. Measured files whose source cannot be found are left out with a note (like
    ``coverage json -i``); if nothing can be reported, a ReportError says how to produce the data.
    """
    source = os.fspath(path)
    hint = _HINTS["coverage-data"]
    head = read_bytes(path, hint=hint)[: len(SQLITE_MAGIC)]
    if not head:
        raise ReportError(source, "is empty", f"did the test run crash? {hint}")
    if head != SQLITE_MAGIC:
        raise ReportError(source, "is not a coverage.py data file (not SQLite)", hint)
    root_dir = os.path.abspath(os.getcwd() if root is None else os.fspath(root))
    if not os.path.isdir(root_dir):
        raise ReportError(source, f"project root {root_dir} is not a directory")

    with tempfile.TemporaryDirectory(prefix="agentgate-coverage-") as tmp:
        data_copy = os.path.join(tmp, ".coverage")
        outfile = os.path.join(tmp, "coverage.json")
        result_file = os.path.join(tmp, "result.json")
        try:
            shutil.copyfile(source, data_copy)
        except OSError as exc:
            raise ReportError(source, f"cannot be read: {exc.strerror or exc}", hint) from None
        try:
            process = subprocess.run(
                [sys.executable, "-c", _EXPORT_SCRIPT, data_copy, outfile, result_file],
                cwd=root_dir,
                env=_child_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=_DATA_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ReportError(
                source, f"coverage.py took over {_DATA_TIMEOUT_S}s to report on it"
            ) from None
        except OSError as exc:
            raise ReportError(source, f"cannot start coverage.py: {exc}") from None
        try:
            result = json.loads(Path(result_file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            tail = process.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise ReportError(
                source,
                "coverage.py could not report on it" + (f": {' '.join(tail)}" if tail else ""),
                "is coverage.py installed in the Python that runs agentgate?",
            ) from None

        if result["error"]:
            result["error"] = result["error"].replace(data_copy, source)
            if result["stage"] == "config":
                raise ReportError(
                    source,
                    f"coverage.py could not start with the configuration in {root_dir} "
                    f"({result['error']})",
                    "fix the coverage configuration (.coveragerc, setup.cfg, tox.ini or "
                    "pyproject.toml) or point the gate's root at the project",
                )
            if result["stage"] == "load":
                raise ReportError(
                    source, f"cannot be loaded by coverage.py ({result['error']})", hint
                )
            if result["no_data"] or result["measured"] == 0:
                raise ReportError(
                    source,
                    f"has no coverage data to report ({result['error']})",
                    f"{hint}, with `[run] source` (or `--cov=`) naming your code",
                )
            raise ReportError(source, f"coverage.py could not report on it: {result['error']}")
        notes = _notes_from_warnings(result["warnings"], root_dir)
        document = load_json(Path(outfile).read_text(encoding="utf-8"), source)
        if isinstance(document, dict) and not document.get("files"):
            raise ReportError(
                source,
                f"measured {result['measured']} file(s) but none could be reported from {root_dir}",
                "run agentgate from the project root (or set its root) so coverage.py finds "
                "the sources" + "".join(f"; {note}" for note in notes),
            )
        report = parse_coverage_json(document, source, format="coverage-data")
        report.notes.extend(notes)
        return report


# --- istanbul coverage-summary.json -------------------------------------------------------------

_ISTANBUL_METRICS = ("lines", "statements", "functions", "branches")


def _istanbul_metric(entry: dict[str, Any], name: str, source: str, where: str) -> Ratio:
    hint = _HINTS["istanbul-summary"]
    metric = _dict(entry.get(name), source, f"{where} {name}", hint)
    # "pct" is ignored: rounded, or "Unknown" when total is 0 (Ratio makes that 100%).
    return _ratio(metric.get("covered"), metric.get("total"), source, f"{where} {name}", hint)


def parse_istanbul_summary(
    data: object, source: str, *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """A parsed istanbul ``coverage-summary.json`` -> CoverageReport (no line numbers in it)."""
    hint = _HINTS["istanbul-summary"]
    document = _dict(data, source, "the top level", hint)
    total = _dict(document.get("total"), source, '"total"', hint)
    metrics = {name: _istanbul_metric(total, name, source, "total") for name in _ISTANBUL_METRICS}
    files = []
    for path, entry in document.items():
        if path == "total":
            continue
        where = f"file {path!r}"
        lines = _istanbul_metric(_dict(entry, source, where, hint), "lines", source, where)
        files.append(FileCoverage(path=display_path(path, root), lines=lines))
    if not files:
        raise ReportError(
            source,
            "measured no files",
            "check the coverage `include`/`all` settings and that the tests ran with coverage on",
        )
    return CoverageReport(source=source, format="istanbul-summary", files=files, **metrics)


# --- entry point --------------------------------------------------------------------------------


def read_coverage(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    root: str | os.PathLike[str] | None = None,
) -> CoverageReport:
    """Read the coverage report at ``path``; ``format`` None detects it from the content.

    ``root`` (default: the working directory) is the project directory: coverage.py data is
    reported from there with its configuration, and istanbul's absolute paths are shown relative
    to it.
    """
    source = os.fspath(path)
    if format is not None and format not in COVERAGE_FORMATS:
        raise ReportError(
            source,
            f"unknown coverage format {format!r}",
            f"agentgate reads: {', '.join(COVERAGE_FORMATS)}",
        )
    if format == "coverage-data":
        return read_coverage_data(path, root=root)
    data = read_bytes(path, hint=_missing_hint(source, format))
    if format is None:
        format, document = _sniff(data, source)
        if format == "coverage-data":
            return read_coverage_data(path, root=root)
    else:
        if data.startswith(SQLITE_MAGIC):
            raise ReportError(
                source,
                f"is a coverage.py data file, not {format}",
                "set the format to coverage-data, or leave it out to detect it",
            )
        document = load_json(
            decode_text(data, source),
            source,
            empty_hint=f"did the coverage step crash? {_HINTS[format]}",
            hint=_HINTS[format],
        )
    if format == "coverage-json":
        return parse_coverage_json(document, source)
    return parse_istanbul_summary(document, source, root=root)


__all__ = [
    "COVERAGE_FORMATS",
    "detect_coverage_format",
    "parse_coverage_json",
    "parse_istanbul_summary",
    "read_coverage",
    "read_coverage_data",
]
