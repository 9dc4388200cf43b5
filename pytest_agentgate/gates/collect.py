"""What the collectors share: finding a gate's report files, and trusting only fresh ones."""

from __future__ import annotations

import glob
import os
import re
import time
from pathlib import Path

from pytest_agentgate.gates.base import CollectContext
from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.model import ReportError


def expand_reports(context: CollectContext) -> tuple[list[Path], list[str]]:
    """Expand the configured report globs under the root; also the patterns that matched nothing."""
    files: list[Path] = []
    unmatched: list[str] = []
    for pattern in context.config.reports:
        full = pattern if os.path.isabs(pattern) else str(context.root / pattern)
        if glob.has_magic(pattern):
            matches = sorted(Path(p) for p in glob.glob(full, recursive=True))
        else:
            matches = [Path(full)] if os.path.lexists(full) else []
        if not matches:
            unmatched.append(pattern)
        files.extend(m for m in matches if m not in files)
    return files, unmatched


def report_files(context: CollectContext, what: str, missing_hint: str) -> list[Path]:
    """The gate's report files: every pattern matched, as many as expected, and written by this
    run's command when it has one. Anything else is a ReportError that says so."""
    files, unmatched = expand_reports(context)
    if unmatched:
        raise ReportError(", ".join(unmatched), f"no {what} found", missing_hint)
    check_file_count(context, files)
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
        # One second of slack for file systems with coarse timestamps.
        if mtime < context.started_at - 1.0:
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
        return path.read_text(encoding="utf-8", errors="replace")
    except IsADirectoryError:
        raise ReportError(name, f"is a directory, not a {what}") from None
    except OSError as exc:
        raise ReportError(name, f"cannot be read: {exc.strerror}") from None
