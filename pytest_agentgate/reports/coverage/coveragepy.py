"""coverage.py's formats: the ``coverage json`` report, and ``.coverage`` data files.

A data file is never parsed here: coverage.py itself turns it into the JSON report, in a child
process run from the project root (see ``_EXPORT_SCRIPT``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_agentgate.reports._io import count, display_path, load_json, read_bytes, shape_error
from pytest_agentgate.reports.coverage._common import (
    SQLITE_MAGIC,
    check_total,
    expect_object,
    foreign_files,
    foreign_note,
    ratio_of,
    unique_paths,
)
from pytest_agentgate.reports.hints import COVERAGE_HINTS
from pytest_agentgate.reports.model import (
    CoverageDetail,
    CoverageReport,
    FileCoverage,
    Ratio,
    ReportError,
)

# Long enough for a large data file; a report step that hangs longer is broken, not slow.
_DATA_TIMEOUT_S = 300

# Environment variables that would make the child process measure itself and write data files
# into the user's project (pytest-cov's subprocess hook, coverage's process_startup and patch).
_MEASURING_ENV_PREFIXES = ("COV_CORE_",)
_MEASURING_ENV = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG", "COVERAGE_FILE")


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
        regions = expect_object(regions, source, f'file {path!r} "functions"', hint)
        for name, region in regions.items():
            if name == "":
                continue
            where = f"file {path!r} function {name!r}"
            summary = expect_object(
                expect_object(region, source, where, hint).get("summary"),
                source,
                f"{where} summary",
                hint,
            )
            ratio = ratio_of(
                summary.get("covered_lines"), summary.get("num_statements"), source, where, hint
            )
            if ratio.total > 0:
                total += 1
                covered += ratio.covered > 0
    return Ratio(covered, total) if measured else None


def _json_detail(
    entry: dict[str, Any], missing: list[int], executed: list[int] | None, branches: bool
) -> CoverageDetail | None:
    """Per-line evidence of one coverage.py JSON file entry, for merging shards; None when the
    entry lacks ``executed_lines`` (then it cannot be merged)."""
    lines = _json_lines(missing, executed)
    if lines is None:
        return None
    detail = CoverageDetail(lines=lines)
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


def _json_lines(missing: list[int], executed: list[int] | None) -> dict[int, bool] | None:
    """The measured lines of an entry (``executed_lines`` + ``missing_lines``) -> ran; None when
    the entry has no ``executed_lines``."""
    if executed is None:
        return None
    lines = dict.fromkeys(missing, False)
    lines.update(dict.fromkeys(executed, True))
    return lines


def parse_coverage_json(
    data: object,
    source: str,
    *,
    format: str = "coverage-json",
    root: str | os.PathLike[str] | None = None,
    relative_to: str | os.PathLike[str] | None = None,
) -> CoverageReport:
    """A parsed ``coverage json`` document -> CoverageReport.

    Lines and statements are the same ratio (coverage.py measures Python statements as lines).
    Branches exist only when the run measured them (``meta.branch_coverage``). The totals must be
    what the files' summaries add up to, as coverage.py writes them: the gate judges the totals.

    With ``root``, the project: files measured outside it (coverage.py without ``source``
    measures every file outside the standard library and site-packages, such as an editable
    install of another project) are left out, with a note, and the totals are those of the
    files kept. A relative path is read from ``relative_to`` (default ``root``).
    """
    hint = COVERAGE_HINTS["coverage-json"]
    document = expect_object(data, source, "the top level", hint)
    meta = document.get("meta", {})
    meta = expect_object(meta, source, '"meta"', hint)
    totals = expect_object(document.get("totals"), source, '"totals"', hint)
    files = expect_object(document.get("files", {}), source, '"files"', hint)

    lines = ratio_of(
        totals.get("covered_lines"), totals.get("num_statements"), source, "totals lines", hint
    )
    branches = None
    if meta.get("branch_coverage") is True:
        branches = ratio_of(
            totals.get("covered_branches"),
            totals.get("num_branches"),
            source,
            "totals branches",
            hint,
        )

    file_reports = []
    # What the files add up to; branches only while every file has its counts (they always do
    # when coverage.py writes the report).
    summed_lines = Ratio(0, 0)
    summed_branches = None if branches is None else Ratio(0, 0)
    file_branches: dict[str, Ratio] = {}
    for path, entry in files.items():
        where = f"file {path!r}"
        entry = expect_object(entry, source, where, hint)
        summary = expect_object(entry.get("summary"), source, f"{where} summary", hint)
        file_lines = ratio_of(
            summary.get("covered_lines"), summary.get("num_statements"), source, where, hint
        )
        summed_lines += file_lines
        if summed_branches is not None and "num_branches" in summary:
            file_branches[path] = ratio_of(
                summary.get("covered_branches"),
                summary.get("num_branches"),
                source,
                f"{where} branches",
                hint,
            )
            summed_branches += file_branches[path]
        else:
            summed_branches = None
        missing = entry.get("missing_lines", [])
        if not isinstance(missing, list):
            raise shape_error(source, f"{where} missing_lines", "a list", missing, hint)
        numbers = sorted(count(n, source, f"{where} missing line", hint) for n in missing)
        executed = entry.get("executed_lines")
        ran = None
        if isinstance(executed, list):  # without it the file has totals only
            ran = [count(n, source, f"{where} executed line", hint) for n in executed]
        detail = _json_detail(entry, numbers, ran, branches is not None)
        file_reports.append(
            FileCoverage(
                path=path,
                lines=file_lines,
                missing_lines=numbers,
                detail=detail,
                line_hits=detail.lines if detail is not None else _json_lines(numbers, ran),
            )
        )

    if not file_reports:
        raise ReportError(
            source,
            "measured no files",
            "coverage found no measured source: check `[run] source` / `--cov=` names your "
            "package and that the tests ran under coverage",
        )
    check_total(lines, summed_lines, source, "totals lines", hint)
    if branches is not None and summed_branches is not None:
        check_total(branches, summed_branches, source, "totals branches", hint)
    notes: list[str] = []
    # Left out only where every kept file's counts are known (coverage.py always writes them).
    foreign = set()
    if branches is None or summed_branches is not None:
        foreign = foreign_files(list(files), root, relative_to)
    if foreign:
        notes.append(foreign_note(sorted(foreign)))
        files = {path: entry for path, entry in files.items() if path not in foreign}
        file_reports = [f for f in file_reports if f.path not in foreign]
        lines = sum((f.lines for f in file_reports if f.lines is not None), Ratio(0, 0))
        if branches is not None:
            branches = sum((file_branches[path] for path in files), Ratio(0, 0))
    return CoverageReport(
        source=source,
        format=format,
        lines=lines,
        branches=branches,
        functions=_python_functions(files, source, hint),
        statements=lines,
        files=file_reports,
        notes=notes,
    )


# --- coverage.py data file ----------------------------------------------------------------------

# Runs in a child process whose working directory is the project root, so that coverage.py reads
# that root's configuration (.coveragerc, setup.cfg, tox.ini, pyproject.toml), resolves relative
# paths from there and reports paths relative to it, exactly as `coverage json` would. In-process
# use would have to chdir (global, racy with parallel gates) and would reset coverage.py's
# module-global relative directory under any coverage that is measuring this process (pytest-cov).
_EXPORT_SCRIPT = r"""
import json, os, sys, warnings
# Never import a project's own module named "coverage" from the working directory.
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
args = sys.argv[1:]
if args == ["--wait"]:  # started early (warm()): import coverage now, then wait for the files
    try:
        import coverage
    except Exception:
        pass  # imported again below, where the error is reported
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    args = json.loads(line)
data_file, outfile, result_file = args[:3]
shards = args[3:]  # copies of parallel data files to combine into data_file first
result = {
    "error": None, "no_data": False, "measured": 0, "warnings": [], "stage": "config",
    "plugins": [], "installed": [],
}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        import coverage
        from coverage.exceptions import NoDataError
        cov = coverage.Coverage(data_file=data_file, data_suffix=False, messages=False)
        # A configured plugin is the project's code: reading a report never runs it (it could
        # write the numbers this process reports). Files only a plugin measures are left out.
        result["plugins"] = list(cov.config.plugins)
        cov.config.plugins = []
        if shards:
            result["stage"] = "combine"
            cov.combine(data_paths=shards, strict=True, keep=True)
            cov.save()
        result["stage"] = "load"
        cov.load()
        measured = cov.get_data().measured_files()
        result["measured"] = len(measured)
        result["stage"] = "report"
        # The project's code measured in an installed copy (src layout, `pip install .`) is
        # reported as the project's files when the copy has their bytes (copies.py).
        from pytest_agentgate.reports.coverage.copies import copies_of_the_project
        installed = copies_of_the_project(measured, os.getcwd())
        result["installed"] = installed.notes
        if installed.aliases:
            cov.set_option("paths", {**cov.config.paths, **installed.aliases})
        if installed.omit:
            cov.set_option("report:omit", [*(cov.config.report_omit or []), *installed.omit])
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


# Reporters started early by warm(), per project root, each waiting for one request.
_warm: dict[str, subprocess.Popen[bytes]] = {}
_warm_lock = threading.Lock()


def warm(root: str | os.PathLike[str]) -> None:
    """Start coverage.py's reporter for ``root`` now, while the tests run: importing coverage.py
    is most of what reading a small data file costs. The next read from ``root`` uses it; one
    that is never used exits when agentgate does (its stdin closes)."""
    root_dir = os.path.abspath(os.fspath(root))
    with _warm_lock:
        if root_dir in _warm or not os.path.isdir(root_dir):
            return
        try:
            _warm[root_dir] = subprocess.Popen(
                [sys.executable, "-c", _EXPORT_SCRIPT, "--wait"],
                cwd=root_dir,
                env=_child_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError:
            return  # the read starts its own, and reports why it cannot


def _cool() -> None:
    """Let every reporter that was never used exit."""
    with _warm_lock:
        waiting = list(_warm.values())
        _warm.clear()
    for process in waiting:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.communicate(b"", timeout=5)
        if process.poll() is None:
            process.kill()
            process.wait()


atexit.register(_cool)


def _report(root_dir: str, args: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Run the export script on ``args``: in the reporter warm() started for ``root_dir``
    when there is one still waiting, else in a new one."""
    with _warm_lock:
        process = _warm.pop(root_dir, None)
    if process is not None and process.poll() is None:
        try:
            out, err = process.communicate(
                (json.dumps(args) + "\n").encode(), timeout=_DATA_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return subprocess.run(
        [sys.executable, "-c", _EXPORT_SCRIPT, *args],
        cwd=root_dir,
        env=_child_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=_DATA_TIMEOUT_S,
        check=False,
    )


def _child_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _MEASURING_ENV and not key.startswith(_MEASURING_ENV_PREFIXES)
    }
    env["PYTHONIOENCODING"] = "utf-8"
    return env


_NO_SOURCE = re.compile(r"No source for code: '(?P<path>.+)'")


def notes_from_warnings(messages: list[str], root: str) -> list[str]:
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


def data_files(path: str) -> list[str]:
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
            COVERAGE_HINTS["coverage-data"],
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
    return read_coverage_data_files(data_files(os.fspath(path)), root=root)


def read_coverage_data_files(
    paths: Sequence[str | os.PathLike[str]], *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """Combine several coverage.py data files (``parallel = true``, or one per CI shard).

    They are copied into a temporary directory and combined there by coverage.py's own
    ``Coverage.combine`` (which applies the project's ``[paths]`` remapping), in a child process
    run from ``root``; the user's files are neither changed nor deleted. One path is read as is.
    """
    names = unique_paths(paths)
    if not names:
        raise ReportError(
            "coverage", "no coverage.py data files given", COVERAGE_HINTS["coverage-data"]
        )
    source = names[0] if len(names) == 1 else ", ".join(names)
    hint = COVERAGE_HINTS["coverage-data"]
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
            process = _report(root_dir, [data_copy, outfile, result_file, *shards])
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
        notes = notes_from_warnings(result["warnings"], root_dir)
        document = load_json(Path(outfile).read_text(encoding="utf-8"), source)
        if isinstance(document, dict) and not document.get("files"):
            raise ReportError(
                source,
                f"measured {result['measured']} file(s) but none could be reported from {root_dir}",
                "run agentgate from the project root (or set its root) so coverage.py finds "
                "the sources" + "".join(f"; {note}" for note in notes),
            )
        report = parse_coverage_json(document, source, format="coverage-data", root=root_dir)
        report.notes.extend(result.get("installed") or [])
        report.notes.extend(notes)
        if result.get("plugins"):
            report.notes.append(
                f"the coverage configuration's plugins ({', '.join(result['plugins'])}) were not "
                "loaded to read the data: agentgate never runs the project's code to read a "
                "report; files only they measure are not counted"
            )
        return report
