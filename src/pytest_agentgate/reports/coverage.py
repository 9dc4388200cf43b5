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
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.parsers import expat

from ._io import (
    XmlRejected,
    count,
    decode_text,
    display_path,
    hardened_expat,
    load_json,
    read_bytes,
    shape_error,
)
from .model import CoverageDetail, CoverageReport, FileCoverage, Ratio, ReportError

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
    if name.endswith(".xml"):
        return _HINTS["cobertura"]
    if name.endswith((".info", ".lcov")):
        return _HINTS["lcov"]
    return f"{_HINTS['coverage-json']}; for JavaScript, {_HINTS['istanbul-summary']}"


def _unknown_format(source: str, what: str) -> ReportError:
    return ReportError(
        source,
        f"is not a coverage report agentgate reads ({what})",
        "agentgate reads coverage.py JSON (`coverage json`), the coverage.py data file "
        "(`.coverage`), istanbul `coverage-summary.json` (json-summary reporter), Cobertura XML "
        "(`coverage xml` and other tools' Cobertura reporters) and lcov tracefiles; "
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


_SNIFF_BYTES = 64 * 1024
_LCOV_START = re.compile(rb"(?:TN|SF|VER):")
# The first element's start tag, past the XML declaration, comments and a DOCTYPE.
_FIRST_TAG = re.compile(
    rb"(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>|\s)*<([A-Za-z_][\w:.-]*)([^>]*)",
    re.DOTALL,
)


def _sniff_xml(head: bytes, source: str) -> str:
    found = _FIRST_TAG.match(head)
    if found is None:
        raise _unknown_format(source, "XML whose first element could not be found")
    tag, attrs = found.group(1).decode("ascii", "replace"), found.group(2)
    if tag == "coverage" and b"clover=" in attrs:
        raise _unknown_format(source, "Clover XML; write Cobertura or lcov instead")
    if tag == "coverage":
        return "cobertura"
    if tag == "report":
        raise _unknown_format(
            source, "JaCoCo XML? convert it to Cobertura (e.g. cover2cover) or lcov"
        )
    raise _unknown_format(source, f"XML with root element <{tag}>")


def _sniff(data: bytes, source: str) -> tuple[str, Any]:
    """The format of ``data`` and, for JSON formats, the parsed document."""
    if data.startswith(SQLITE_MAGIC):
        return "coverage-data", None
    if not data.strip():
        raise ReportError(
            source, "is empty", f"did the coverage step crash? {_missing_hint(source, None)}"
        )
    head = data[:_SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        return _sniff_xml(head, source), None
    if _LCOV_START.match(head):
        return "lcov", None
    text = decode_text(data, source)
    if text.lstrip()[:1] not in ("{", "["):
        raise _unknown_format(source, "not JSON, XML, lcov or a SQLite data file")
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


def _json_detail(
    entry: dict[str, Any], missing: list[int], branches: bool
) -> CoverageDetail | None:
    """Per-line evidence of one coverage.py JSON file entry, for merging shards; None when the
    entry lacks ``executed_lines`` (then it cannot be merged)."""
    executed = entry.get("executed_lines")
    if not isinstance(executed, list):
        return None
    detail = CoverageDetail(lines=dict.fromkeys(missing, False))
    for n in executed:
        if isinstance(n, int):
            detail.lines[n] = True
    if branches:
        ran, missed = entry.get("executed_branches"), entry.get("missing_branches")
        if not isinstance(ran, list) or not isinstance(missed, list):
            return None
        detail.branches = {}
        for arcs, taken in ((missed, False), (ran, True)):
            for arc in arcs:
                if isinstance(arc, list) and len(arc) == 2:
                    detail.branches[f"{arc[0]}->{arc[1]}"] = taken
    regions = entry.get("functions")
    if isinstance(regions, dict):
        detail.functions = {}
        for name, region in regions.items():
            summary = region.get("summary") if isinstance(region, dict) else None
            if name and isinstance(summary, dict) and summary.get("num_statements"):
                detail.functions[name] = bool(summary.get("covered_lines"))
    return detail


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
        file_reports.append(
            FileCoverage(
                path=path,
                lines=file_lines,
                missing_lines=numbers,
                detail=_json_detail(entry, numbers, branches is not None),
            )
        )

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
shards = sys.argv[4:]  # copies of parallel data files to combine into data_file first
result = {"error": None, "no_data": False, "measured": 0, "warnings": [], "stage": "config"}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        import coverage
        from coverage.exceptions import NoDataError
        cov = coverage.Coverage(data_file=data_file, data_suffix=False, messages=False)
        if shards:
            result["stage"] = "combine"
            cov.combine(data_paths=shards, strict=True, keep=True)
            cov.save()
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


def _data_files(path: str) -> list[str]:
    """A data file, or the ``.coverage`` and ``.coverage.*`` data files in a directory."""
    if not os.path.isdir(path):
        return [path]
    try:
        names = sorted(os.listdir(path))
    except OSError as exc:
        raise ReportError(path, f"cannot be listed: {exc.strerror or exc}") from None
    found = []
    for name in names:
        full = os.path.join(path, name)
        if (name == ".coverage" or name.startswith(".coverage.")) and os.path.isfile(full):
            with open(full, "rb") as handle:
                if handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC:
                    found.append(full)
    if not found:
        raise ReportError(
            path,
            "holds no coverage.py data file (.coverage or .coverage.*)",
            _HINTS["coverage-data"],
        )
    return found


def read_coverage_data(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """Read a coverage.py data file by having coverage.py write its JSON report to a temp dir.

    ``path`` may also be a directory: its ``.coverage`` and parallel ``.coverage.*`` files are
    combined (see :func:`read_coverage_data_files`). The user's data files are copied first and
    never opened in place; nothing is written next to the user's files. Measured files whose
    source cannot be found are left out with a note (like ``coverage json -i``); if nothing can
    be reported, a ReportError says how to produce the data.
    """
    return read_coverage_data_files(_data_files(os.fspath(path)), root=root)


def read_coverage_data_files(
    paths: Sequence[str | os.PathLike[str]], *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """Combine several coverage.py data files (``parallel = true``, or one per CI shard).

    They are copied into a temporary directory and combined there by coverage.py's own
    ``Coverage.combine`` (which applies the project's ``[paths]`` remapping), in a child process
    run from ``root``; the user's files are neither changed nor deleted. One path is read as is.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    names = list(dict.fromkeys(os.fspath(p) for p in paths))
    if not names:
        raise ReportError("coverage", "no coverage.py data files given", _HINTS["coverage-data"])
    source = names[0] if len(names) == 1 else ", ".join(names)
    hint = _HINTS["coverage-data"]
    for name in names:
        head = read_bytes(name, hint=hint)[: len(SQLITE_MAGIC)]
        if not head:
            raise ReportError(name, "is empty", f"did the test run crash? {hint}")
        if head != SQLITE_MAGIC:
            raise ReportError(name, "is not a coverage.py data file (not SQLite)", hint)
    root_dir = os.path.abspath(os.getcwd() if root is None else os.fspath(root))
    if not os.path.isdir(root_dir):
        raise ReportError(source, f"project root {root_dir} is not a directory")

    with tempfile.TemporaryDirectory(prefix="agentgate-coverage-") as tmp:
        data_copy = os.path.join(tmp, ".coverage")
        outfile = os.path.join(tmp, "coverage.json")
        result_file = os.path.join(tmp, "result.json")
        copies: dict[str, str] = {}
        if len(names) == 1:
            copies[data_copy] = names[0]
        else:
            os.mkdir(os.path.join(tmp, "shards"))
            for index, name in enumerate(names):
                copies[os.path.join(tmp, "shards", f".coverage.shard{index}")] = name
        for copy, name in copies.items():
            try:
                shutil.copyfile(name, copy)
            except OSError as exc:
                raise ReportError(name, f"cannot be read: {exc.strerror or exc}", hint) from None
        shards = [] if len(names) == 1 else list(copies)
        try:
            process = subprocess.run(
                [sys.executable, "-c", _EXPORT_SCRIPT, data_copy, outfile, result_file, *shards],
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
            for copy, name in copies.items():
                result["error"] = result["error"].replace(copy, name)
            result["error"] = result["error"].replace(data_copy, source)
            if result["stage"] == "combine":
                raise ReportError(
                    source,
                    f"coverage.py could not combine these data files ({result['error']})",
                    "they must all be measured the same way (all with or all without --branch); "
                    "shards from other machines need a `[paths]` remapping in the coverage "
                    "configuration",
                )
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


# --- per-line detail: one way to total a report, and to merge shards --------------------------


def _report_from_details(
    source: str,
    format: str,
    details: dict[str, CoverageDetail],
    *,
    branches: bool,
    functions: bool,
    fallback: dict[str, tuple[Ratio | None, Ratio | None, Ratio | None]] | None = None,
) -> CoverageReport:
    """Totals computed from per-line evidence; statements are lines (one statement per line is
    all that Cobertura and lcov record). ``branches``/``functions`` False: not measured (None).

    ``fallback`` holds per-file (lines, branches, functions) summary counts for files whose
    report gave counts without line detail (an lcov record with LF/LH but no DA lines).
    """
    lines = Ratio(0, 0)
    branch_total = Ratio(0, 0)
    function_total = Ratio(0, 0)
    files = []
    fallback = fallback or {}
    for path, detail in details.items():
        summary_lines, summary_branches, summary_functions = fallback.get(path, (None, None, None))
        if detail.lines or summary_lines is None:
            file_lines = Ratio(sum(detail.lines.values()), len(detail.lines))
            missing = sorted(n for n, ran in detail.lines.items() if not ran)
            kept: CoverageDetail | None = detail
        else:
            file_lines, missing, kept = summary_lines, [], None
        lines += file_lines
        if detail.branches:
            branch_total += Ratio(sum(detail.branches.values()), len(detail.branches))
        elif detail.line_branches:
            for covered, total in detail.line_branches.values():
                branch_total += Ratio(covered, total)
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
        files.append(FileCoverage(path=path, lines=file_lines, missing_lines=missing, detail=kept))
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
    )


# --- Cobertura XML ------------------------------------------------------------------------------

_CONDITION = re.compile(r"\((\d+)\s*/\s*(\d+)\)")
_COBERTURA_NAMES = ("coverage", "sources", "source", "class", "method", "line", "lines")


def _cobertura_handlers(
    parser: Any, details: dict[str, CoverageDetail], sources: list[str]
) -> dict[str, bool]:
    """Install handlers that fold every ``<line>`` into ``details``; returns the flags they set."""
    flags = {"root": False, "branches": False, "functions": False}
    detail: CoverageDetail | None = None
    class_name = ""
    method: str | None = None
    method_lines = method_ran = False
    text: list[str] = []

    def number(attrs: dict[str, str], key: str) -> int:
        raw = attrs.get(key)
        try:
            value = int(raw) if raw is not None else -1
        except ValueError:
            try:  # some tools write hits as "1.0"
                value = int(float(raw))  # type: ignore[arg-type]
            except ValueError:
                value = -1
        if value < 0:
            raise XmlRejected(
                f"line {parser.CurrentLineNumber}: <line> {key}={raw!r} is not a whole number "
                "0 or more",
                _HINTS["cobertura"],
            )
        return value

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal detail, class_name, method, method_lines, method_ran
        if tag == "line":
            if detail is None:
                return  # a <line> outside any <class>: not tied to a file
            ran = number(attrs, "hits") > 0
            if method is not None:
                method_lines = True
                method_ran = method_ran or ran
                return
            line = number(attrs, "number")
            detail.lines[line] = detail.lines.get(line, False) or ran
            condition = attrs.get("condition-coverage")
            if condition is not None and attrs.get("branch", "true") != "false":
                found = _CONDITION.search(condition)
                if found is None:
                    return
                covered, total = int(found.group(1)), int(found.group(2))
                if covered > total:
                    raise XmlRejected(
                        f"line {parser.CurrentLineNumber}: condition-coverage {condition!r} "
                        "covers more than its total",
                        _HINTS["cobertura"],
                    )
                flags["branches"] = True
                if detail.line_branches is None:
                    detail.line_branches = {}
                previous = detail.line_branches.get(line)
                if previous is None or (covered, total) > previous:
                    detail.line_branches[line] = (covered, total)
        elif tag == "class":
            filename = attrs.get("filename")
            if not filename:
                raise XmlRejected(
                    f"line {parser.CurrentLineNumber}: <class> without a filename",
                    _HINTS["cobertura"],
                )
            detail = details.setdefault(filename, CoverageDetail())
            class_name = attrs.get("name", "")
        elif tag == "method" and detail is not None:
            method = f"{class_name}.{attrs.get('name', '')}{attrs.get('signature', '')}"
            method_lines = method_ran = False
        elif tag == "source":
            text.clear()
            parser.CharacterDataHandler = text.append
        elif tag == "coverage" and not flags["root"]:
            flags["root"] = True

    def end(tag: str) -> None:
        nonlocal detail, method
        if tag == "method" and method is not None and detail is not None:
            if method_lines:  # a method without lines says nothing about whether it ran
                flags["functions"] = True
                if detail.functions is None:
                    detail.functions = {}
                detail.functions[method] = detail.functions.get(method, False) or method_ran
            method = None
        elif tag == "class":
            detail = None
        elif tag == "source":
            parser.CharacterDataHandler = None
            sources.append("".join(text).strip())

    def start_root(tag: str, attrs: dict[str, str]) -> None:
        if tag != "coverage":
            raise XmlRejected(
                f"not a Cobertura report: the root element is <{tag}>, expected <coverage>",
                _HINTS["cobertura"],
            )
        parser.StartElementHandler = start
        start(tag, attrs)

    parser.StartElementHandler = start_root
    parser.EndElementHandler = end
    return flags


def _resolve(filename: str, sources: list[str], root: str | os.PathLike[str] | None) -> str:
    """A Cobertura filename as a project path: joined to the ``<source>`` where it exists."""
    if os.path.isabs(filename):
        return display_path(filename, root)
    for base in sources:
        if base and os.path.exists(os.path.join(base, filename)):
            return display_path(os.path.join(base, filename), root)
    return filename


def read_cobertura(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """Cobertura XML (``coverage xml``, istanbul/c8, coverlet, gcovr, ...), streamed with expat.

    The ``line-rate``/``branch-rate`` and ``lines-valid`` attributes are never read: lines are
    counted from the ``<line>`` elements of each ``<class>`` (one per file and line, covered when
    any occurrence has hits > 0), branches from ``condition-coverage="50% (1/2)"``. Functions
    come from ``<method>`` elements that carry ``<line>``s (istanbul, coverlet), covered when one
    of their lines ran; a report without them (coverage.py writes ``<methods/>``) has no function
    data: None. A report with no ``condition-coverage`` at all has no branch data: None. A bare
    DOCTYPE reference (istanbul writes one) is tolerated, never fetched; entities are refused.
    """
    source = os.fspath(path)
    hint = _HINTS["cobertura"]
    details: dict[str, CoverageDetail] = {}
    sources: list[str] = []
    parser = hardened_expat(names=_COBERTURA_NAMES, allow_doctype=True)
    parser.buffer_text = True
    flags = _cobertura_handlers(parser, details, sources)
    got = False
    final = False
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed by the `with` below
    except OSError:
        read_bytes(source, hint=hint)  # raises the right ReportError
        raise  # pragma: no cover - read_bytes raised
    try:
        with handle:
            while chunk := handle.read(1 << 20):
                got = got or bool(chunk.strip())
                parser.Parse(chunk, False)
            if not got:
                raise ReportError(source, "is empty", f"did the coverage step crash? {hint}")
            final = True
            parser.Parse(b"", True)
    except XmlRejected as exc:
        raise ReportError(source, exc.problem, exc.hint) from None
    except expat.ExpatError as exc:
        what = expat.errors.messages.get(exc.code, str(exc))
        problem = "is truncated XML" if final and flags["root"] else "is not well-formed XML"
        raise ReportError(source, f"{problem} ({what} at line {exc.lineno})", hint) from None
    except (LookupError, ValueError) as exc:
        raise ReportError(source, f"cannot be decoded: {exc}", hint) from None
    except OSError as exc:
        raise ReportError(source, f"cannot be read: {exc.strerror or exc}", hint) from None
    finally:
        parser.StartElementHandler = parser.EndElementHandler = None
        parser.CharacterDataHandler = None
    resolved: dict[str, CoverageDetail] = {}
    for filename, detail in details.items():
        name = _resolve(filename, sources, root)
        if name in resolved:  # two spellings of one file
            other = resolved[name]
            for line, ran in detail.lines.items():
                other.lines[line] = other.lines.get(line, False) or ran
        else:
            resolved[name] = detail
    return _report_from_details(
        source,
        "cobertura",
        resolved,
        branches=flags["branches"],
        functions=flags["functions"],
    )


# --- lcov ---------------------------------------------------------------------------------------


class _LcovFile:
    __slots__ = ("detail", "summary")

    def __init__(self) -> None:
        self.detail = CoverageDetail()
        self.summary: dict[str, int] = {}


def _lcov_int(value: str, source: str, number: int, hint: str) -> int:
    try:
        result = int(value) if value.strip() != "-" else 0
    except ValueError:
        try:
            result = int(float(value))
        except ValueError:
            raise ReportError(
                source, f"line {number}: {value.strip()!r} is not a number", hint
            ) from None
    return result


def _lcov_summary(
    summary: dict[str, int], total_key: str, hit_key: str, where: str, source: str
) -> Ratio | None:
    if total_key not in summary:
        return None
    return _ratio(summary.get(hit_key, 0), summary[total_key], source, where, _HINTS["lcov"])


def parse_lcov(
    text: str, source: str, *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """An lcov tracefile: ``SF:`` records closed by ``end_of_record``.

    Counted from the detail lines (``DA:line,hits``, ``BRDA:line,block,branch,taken``,
    ``FN``/``FNDA`` and lcov 2's ``FNA``), a file that appears in several records once (a line,
    branch or function is covered when any record covered it). The summary lines ``LF/LH``,
    ``BRF/BRH`` and ``FNF/FNH`` are used only for a record that has no detail lines of that kind.
    Branches (functions) are None when no record has any branch (function) data.
    """
    hint = _HINTS["lcov"]
    if not text.strip():
        raise ReportError(source, "is empty", f"did the coverage step crash? {hint}")
    first = text.lstrip().partition("\n")[0]
    if not re.match(r"(?:TN|SF|VER):", first):
        raise ReportError(source, f"is not an lcov tracefile (it starts with {first[:40]!r})", hint)
    files: dict[str, _LcovFile] = {}
    current: _LcovFile | None = None
    current_name = ""
    has_branches = has_functions = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line == "end_of_record":
            if current is None:
                raise ReportError(source, f"line {number}: end_of_record outside a record", hint)
            current = None
            continue
        tag, sep, value = line.partition(":")
        if not sep:
            raise ReportError(source, f"line {number}: {line[:60]!r} is not an lcov line", hint)
        if tag == "SF":
            if current is not None:
                raise ReportError(
                    source, f"line {number}: record {current_name!r} has no end_of_record", hint
                )
            current_name = value
            current = files.setdefault(value, _LcovFile())
            continue
        if tag in ("TN", "VER"):
            continue
        if current is None:
            raise ReportError(source, f"line {number}: {tag} outside an SF record", hint)
        detail = current.detail
        if tag == "DA":
            parts = value.split(",")
            if len(parts) < 2:
                raise ReportError(source, f"line {number}: DA needs line,hits", hint)
            at = _lcov_int(parts[0], source, number, hint)
            ran = _lcov_int(parts[1], source, number, hint) > 0
            detail.lines[at] = detail.lines.get(at, False) or ran
        elif tag == "BRDA":
            parts = value.split(",")
            if len(parts) < 4:
                raise ReportError(
                    source, f"line {number}: BRDA needs line,block,branch,taken", hint
                )
            has_branches = True
            key = ",".join(parts[:-1])
            taken = _lcov_int(parts[-1], source, number, hint) > 0
            if detail.branches is None:
                detail.branches = {}
            detail.branches[key] = detail.branches.get(key, False) or taken
        elif tag in ("FN", "FNDA", "FNA"):
            has_functions = True
            if detail.functions is None:
                detail.functions = {}
            parts = value.split(",")
            if tag == "FN":  # FN:line,name or lcov 2's FN:start,end,name
                name = parts[-1]
                detail.functions.setdefault(name, False)
            else:  # FNDA:hits,name  /  FNA:index,hits,name
                if len(parts) < (3 if tag == "FNA" else 2):
                    raise ReportError(source, f"line {number}: {tag} is incomplete", hint)
                hits = _lcov_int(parts[-2], source, number, hint)
                name = parts[-1]
                detail.functions[name] = detail.functions.get(name, False) or hits > 0
        elif tag in ("LF", "LH", "BRF", "BRH", "FNF", "FNH"):
            current.summary[tag] = _lcov_int(value, source, number, hint)
            if tag in ("BRF", "BRH"):
                has_branches = True
            elif tag in ("FNF", "FNH"):
                has_functions = True
        # Other tags (FNL, LN, checksums, MCDC, ...) carry nothing counted here.
    if current is not None:
        raise ReportError(
            source,
            f"is truncated: record {current_name!r} has no end_of_record",
            f"the coverage step may have been killed while writing it; {hint}",
        )
    if not files:
        raise ReportError(source, "has no SF record: not an lcov tracefile", hint)

    details: dict[str, CoverageDetail] = {}
    fallback: dict[str, tuple[Ratio | None, Ratio | None, Ratio | None]] = {}
    for name, entry in files.items():
        path = display_path(name, root)
        details[path] = entry.detail
        fallback[path] = tuple(  # type: ignore[assignment]
            _lcov_summary(entry.summary, total, hit, f"{name!r} {what}", source)
            for total, hit, what in (
                ("LF", "LH", "lines"),
                ("BRF", "BRH", "branches"),
                ("FNF", "FNH", "functions"),
            )
        )
    return _report_from_details(
        source, "lcov", details, branches=has_branches, functions=has_functions, fallback=fallback
    )


def read_lcov(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    source = os.fspath(path)
    data = read_bytes(path, hint=_HINTS["lcov"])
    return parse_lcov(decode_text(data, source), source, root=root)


# --- merging shards -----------------------------------------------------------------------------


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
    merged = _report_from_details(
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


# --- entry point --------------------------------------------------------------------------------


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
    data = read_bytes(path, hint=_missing_hint(source, format))
    if format is None:
        format, document = _sniff(data, source)
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
    if document is None if format is None else True:
        document = load_json(
            decode_text(data, source),
            source,
            empty_hint=f"did the coverage step crash? {_HINTS[format]}",
            hint=_HINTS[format],
        )
    if format == "coverage-json":
        return parse_coverage_json(document, source)
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
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    names = list(dict.fromkeys(os.fspath(p) for p in paths))
    if not names:
        raise ReportError("coverage", "no coverage reports given", "point the gate at them")
    if len(names) == 1:
        return read_coverage(names[0], format=format, root=root)
    format = _canonical(format, ", ".join(names))
    formats = [format or _detect_path(name) for name in names]
    if all(f == "coverage-data" for f in formats):
        return read_coverage_data_files([p for name in names for p in _data_files(name)], root=root)
    return merge_coverage(
        [read_coverage(name, format=f, root=root) for name, f in zip(names, formats, strict=True)]
    )


def _detect_path(path: str) -> str:
    return "coverage-data" if os.path.isdir(path) else detect_coverage_format(path)


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
