"""What the collectors share: finding a gate's report files, and trusting only fresh ones."""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
import time
from pathlib import Path

from pytest_agentgate.gates.base import CollectContext
from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.model import ReportError

# The largest report file agentgate reads (a million JUnit test cases is about 120 MiB).
MAX_REPORT_BYTES = 256 * 1024 * 1024


def expand_reports(context: CollectContext) -> tuple[list[Path], list[str]]:
    """Expand the configured report globs under the root; also the patterns that matched nothing.

    Linear in the files below the pattern's fixed part, and safe from symlink loops: ``**``
    walks real folders only, never a link to a folder.
    """
    files: list[Path] = []
    seen: set[Path] = set()
    unmatched: list[str] = []
    for pattern in context.config.reports:
        full = pattern if os.path.isabs(pattern) else str(context.root / pattern)
        if glob.has_magic(pattern):
            matches = sorted(Path(p) for p in _glob(full))
        else:
            matches = [Path(full)] if os.path.lexists(full) else []
        if not matches:
            unmatched.append(pattern)
        for match in matches:
            if match not in seen:
                seen.add(match)
                files.append(match)
    return files, unmatched


def _glob(pattern: str) -> list[str]:
    parts = Path(pattern).parts
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    if "**" not in parts[fixed:]:
        return glob.glob(pattern)  # one level per pattern part: no recursion, no loop
    base = Path(*parts[:fixed])
    wanted = parts[fixed:]
    found = []
    for folder, _dirs, names in os.walk(base, followlinks=False):
        rel = Path(folder).relative_to(base).parts
        for name in names:
            if _match((*rel, name), wanted):
                found.append(os.path.join(folder, name))
    return found


def _match(path: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """Glob semantics over path parts: ``**`` is any number of folders (never a hidden one), and
    a ``*`` does not match a hidden name unless the pattern part starts with a dot."""
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        for skip in range(len(path) + 1):
            if skip and path[skip - 1].startswith("."):
                return False
            if _match(path[skip:], rest):
                return True
        return False
    if not path or (path[0].startswith(".") and not head.startswith(".")):
        return False
    return fnmatch.fnmatchcase(path[0], head) and _match(path[1:], rest)


def check_readable(context: CollectContext, files: list[Path]) -> None:
    """Only regular files, of a size agentgate reads, and never a link out of the project: a
    report that links to ``/dev/zero`` or another user's file, a FIFO, a folder is refused
    before anything is read. (A report the configuration names outside the project is read:
    it was named there on purpose.)"""
    root = os.path.realpath(context.root)
    for path in files:
        name = display_path(str(path), context.root)
        try:
            info = path.stat()
        except FileNotFoundError:
            raise ReportError(name, "not found (a link to nothing?)") from None
        except OSError as exc:
            raise ReportError(name, f"cannot be read: {exc.strerror}") from None
        if stat.S_ISDIR(info.st_mode):
            raise ReportError(name, "is a folder, not a report", "name the file the tool writes")
        if not stat.S_ISREG(info.st_mode):
            raise ReportError(
                name,
                "is not a regular file (a FIFO, socket or device): nothing to read",
                "point the gate at the file the tool writes",
            )
        if info.st_size > MAX_REPORT_BYTES:
            raise ReportError(
                name,
                f"is {info.st_size / 2**20:.0f} MiB, more than agentgate reads "
                f"({MAX_REPORT_BYTES // 2**20} MiB)",
                "split the report into shards, or make the tool report less",
            )
        named_inside = _inside(os.path.abspath(path), os.path.abspath(context.root))
        if named_inside and not _inside(os.path.realpath(path), root):
            raise ReportError(
                name,
                "is a link to a file outside the project; agentgate reads reports inside it",
                "write the report inside the project, or name its real path in the configuration",
            )


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def report_files(context: CollectContext, what: str, missing_hint: str) -> list[Path]:
    """The gate's report files: every pattern matched, as many as expected, and written by this
    run's command when it has one. Anything else is a ReportError that says so."""
    files, unmatched = expand_reports(context)
    if unmatched:
        raise ReportError(", ".join(unmatched), f"no {what} found", missing_hint)
    check_file_count(context, files)
    check_readable(context, files)
    if future := future_reports(files, context.root):
        raise ReportError(
            ", ".join(future),
            "is dated in the future, so nothing can tell when it was written",
            "let the command write it in this run; a report is evidence only from its own run",
        )
    if stale := stale_reports(context, files):
        if context.result is not None or written_this_run(context):
            problem = f"not written by this run's {context.config.name} command (it is older "
            problem += "than the run)"
            hint = "the command probably failed before writing it"
        else:
            problem = "not written in this run (it is older than the run, and agentgate ran "
            problem += "the gates' commands): a report counts only from the run that made it"
            hint = "gate reports an earlier CI step wrote with `agentgate verify --no-run`"
        raise ReportError(", ".join(stale), problem, hint)
    return files


def check_file_count(context: CollectContext, files: list[Path]) -> None:
    """Fail a partial set of shard reports instead of judging part of the suite."""
    expected = context.config.options.get("expected_files")
    minimum = context.config.options.get("min_files")
    found = len(files)
    names = ", ".join(display_path(str(p), context.root) for p in files) or "none"
    patterns = ", ".join(context.config.reports)
    if expected is not None and found != expected:
        raise ReportError(
            patterns,
            f"{found} report files matched, expected_files is {expected} (found: {names})",
            "a shard's report is missing or extra; judge the whole suite, not part of it",
        )
    if minimum is not None and found < minimum:
        raise ReportError(
            patterns,
            f"{found} report files matched, min_files is {minimum} (found: {names})",
            "a shard's report is missing; judge the whole suite, not part of it",
        )


# Seconds a report's time may lie ahead of the clock (a file system on another host).
FUTURE_SLACK_S = 5.0
# Seconds a report may predate its run: file systems with coarse timestamps.
STALE_SLACK_S = 1.0


def future_reports(files: list[Path], root: Path) -> list[str]:
    """Report files whose modification time lies in the future: not evidence of anything."""
    now = time.time()
    future = []
    for path in files:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime > now + FUTURE_SLACK_S:
            future.append(display_path(str(path), root))
    return future


def stale_reports(context: CollectContext, files: list[Path]) -> list[str]:
    """Report files older than this run, when agentgate ran the gates' commands.

    In that mode every report must come from this run: the gate's own command, the command that
    names it (coverage written by the tests), or any other command of the run. Reports that an
    earlier CI step wrote are read with ``--no-run``, where nothing ran and nothing is stale.
    """
    if not context.ran_commands or (context.result is None and not context.commands_run):
        return []
    stale = []
    for path in files:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime < context.started_at - STALE_SLACK_S:
            stale.append(display_path(str(path), context.root))
    return stale


def written_this_run(context: CollectContext) -> bool:
    """Whether a command that ran this run names one of the gate's report paths."""
    return any(names_report(command, context.config.reports) for command in context.commands_run)


def names_report(command: str, patterns: list[str]) -> bool:
    """Whether ``command`` names one of the report paths ``patterns`` (so it writes it)."""
    for pattern in patterns:
        named = re.compile(r"(?:^|[\s=:'\"])" + re.escape(pattern) + r"(?:$|[\s'\";,])")
        if named.search(command):
            return True
    return False


def read_report_text(path: Path, what: str, source: str | None = None) -> str:
    """A report file's text; a ReportError that names the file (as ``source``, when given)
    when it cannot be read."""
    name = str(path) if source is None else source
    try:
        # utf-8-sig: a byte order mark (PowerShell writes one) is not part of the report.
        return path.read_text(encoding="utf-8-sig", errors="replace")
    except IsADirectoryError:
        raise ReportError(name, f"is a directory, not a {what}") from None
    except OSError as exc:
        raise ReportError(name, f"cannot be read: {exc.strerror}") from None
