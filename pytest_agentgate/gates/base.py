"""What every gate kind shares: its option schema, its inputs, and the command checks."""

from __future__ import annotations

import glob
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.verdict import GateResult

if TYPE_CHECKING:
    from pytest_agentgate.process import CommandResult
    from pytest_agentgate.registry import Registry

OptionType = Literal["str", "int", "percent", "number", "bool", "globs", "choice", "env"]


@dataclass(frozen=True)
class Option:
    """One config key a gate kind accepts."""

    name: str
    type: OptionType
    doc: str
    choices: tuple[str, ...] = ()
    # Thresholds take profile defaults and may be set to null to switch them off.
    threshold: bool = False


# Keys every gate accepts, whatever its kind.
COMMON_OPTIONS: tuple[Option, ...] = (
    Option("command", "str", "shell command to run; its exit code is always part of the evidence"),
    Option("timeout", "number", "seconds before the command and all its children are killed"),
    Option("enabled", "bool", "false skips the gate"),
    Option("blocking", "bool", "false reports the gate without failing the verdict"),
    Option("env", "env", "extra environment variables for the command"),
)
REPORT_OPTIONS: tuple[Option, ...] = (
    Option("report", "globs", "report file(s) to read after every command has finished"),
    Option("format", "str", "report format (see `agentgate explain`)"),
)

# For reports that arrive as shards (a CI matrix): judging part of the suite is not allowed.
SHARD_OPTIONS: tuple[Option, ...] = (
    Option("expected_files", "int", "exactly this many report files must match"),
    Option("min_files", "int", "at least this many report files must match"),
)

DEFAULT_TIMEOUT = 600.0


@dataclass
class GateConfig:
    """One gate as configured, after profile defaults were merged under the overrides."""

    name: str
    kind: str
    command: str | None = None
    timeout: float | None = DEFAULT_TIMEOUT
    reports: list[str] = field(default_factory=list)
    format: str | None = None
    thresholds: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True
    blocking: bool = True
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class GateInput:
    """Everything a gate kind may look at when it judges."""

    config: GateConfig
    root: Path
    result: CommandResult | None  # None when the gate has no command or commands were not run
    ran_commands: bool
    started_at: float  # wall-clock time (time.time()) when commands started
    registry: Registry
    # Every command that ran this run (all gates): a report named in one of them must be fresh
    # even when the gate reading it has no command of its own (coverage written by the tests).
    commands_run: tuple[str, ...] = ()
    # Evidence a front door measured in-process (the pytest plugin: a TestRun, a CoverageReport,
    # or the ReportError that stopped it). A gate kind that accepts it judges it instead of
    # reading its reports; None means read the reports as usual.
    evidence: object | None = None


class GateKind(Protocol):
    """A gate kind, registered through the ``agentgate_gate_kinds`` hook."""

    name: str
    options: tuple[Option, ...]
    # True when the command's stdout is the report unless a report file is configured.
    stdout_report: bool

    def judge(self, gate: GateInput) -> GateResult: ...


# -- shared helpers -------------------------------------------------------------------------


def pct(value: float | None, need: float | None = None) -> str:
    """Display form of a percentage: two decimals. Comparisons never use this.

    Below ``need``, the display never rounds up to it: 84.996 against 85 shows 84.99%, not a
    failing "85.00% (need 85.00%)".
    """
    if value is None:
        return "n/a"
    if need is not None and value < need and round(value, 2) >= round(need, 2):
        return f"{math.floor(value * 100) / 100:.2f}%"
    return f"{value:.2f}%"


def new_result(
    gate: GateInput, status: Literal["pass", "fail", "skipped"], summary: str
) -> GateResult:
    cfg = gate.config
    res = gate.result
    return GateResult(
        name=cfg.name,
        kind=cfg.kind,
        status=status,
        summary=summary,
        blocking=cfg.blocking,
        expected={k: v for k, v in cfg.thresholds.items() if v is not None},
        command=cfg.command,
        exit_code=None if res is None else res.exit_code,
        duration_s=None if res is None else res.duration_s,
    )


def skipped(gate: GateInput, why: str, actual: Mapping[str, Any] | None = None) -> GateResult:
    result = new_result(gate, "skipped", why)
    result.actual = dict(actual or {})
    return result


def command_problem(gate: GateInput) -> str | None:
    """Why the command's run cannot be trusted at all (timeout, could not start), else None."""
    res = gate.result
    if res is None:
        return None
    if res.timed_out:
        timeout = gate.config.timeout
        return (
            f"`{gate.config.command}` was killed after its {timeout:g} s timeout (with every "
            "process it started); make it finish in time or raise `timeout`"
        )
    if res.start_error:
        return f"`{gate.config.command}` could not start: {res.start_error}"
    return None


def exit_disagrees(gate: GateInput) -> str | None:
    """The message for a command that exited non-zero while its report shows nothing wrong."""
    res = gate.result
    if res is None or res.exit_code in (0, None):
        return None
    return (
        f"`{gate.config.command}` exited with code {res.exit_code} but its report shows nothing "
        "wrong: the report is not telling the whole story (a crash, a collection or config "
        "error). Output tail:\n" + res.output_tail
    )


def unreadable(
    gate: GateInput, summary: str, error: Exception, actual: Mapping[str, Any] | None = None
) -> GateResult:
    """A failed gate for evidence that could not be read, with the command's side of the story."""
    result = new_result(gate, "fail", summary)
    result.actual = dict(actual or {})
    if problem := command_problem(gate):
        result.problems.append(problem)
    result.problems.append(str(error))
    if not result.problems[:-1] and (context := crash_context(gate)):
        result.problems.append(context)
    return result


def crash_context(gate: GateInput) -> str | None:
    """When a report is unusable and the command failed, the command's own words say why."""
    res = gate.result
    if res is None or res.exit_code in (0, None):
        return None
    return f"`{gate.config.command}` exited with code {res.exit_code}; output tail:\n" + (
        res.output_tail or "(no output)"
    )


def expand_reports(gate: GateInput) -> tuple[list[Path], list[str]]:
    """Expand the configured report globs under the root; also the patterns that matched nothing."""
    files: list[Path] = []
    unmatched: list[str] = []
    for pattern in gate.config.reports:
        full = pattern if os.path.isabs(pattern) else str(gate.root / pattern)
        if glob.has_magic(pattern):
            matches = sorted(Path(p) for p in glob.glob(full, recursive=True))
        else:
            matches = [Path(full)] if os.path.lexists(full) else []
        if not matches:
            unmatched.append(pattern)
        files.extend(m for m in matches if m not in files)
    return files, unmatched


def report_files(gate: GateInput, what: str, missing_hint: str) -> list[Path]:
    """The gate's report files: every pattern matched, as many as expected, and written by this
    run's command when it has one. Anything else is a ReportError that says so."""
    files, unmatched = expand_reports(gate)
    if unmatched:
        raise ReportError(", ".join(unmatched), f"no {what} found", missing_hint)
    check_file_count(gate, files)
    if stale := stale_reports(gate, files):
        raise ReportError(
            ", ".join(stale),
            f"not written by this run's {gate.config.name} command (it is older than the run)",
            "the command probably failed before writing it",
        )
    return files


# What `actual` holds for a built-in gate kind that could not measure anything.
UNMEASURED: dict[str, dict[str, object]] = {
    "build": {"exit_code": None, "errors": None},
    "lint": {"errors": None, "warnings": None},
    "test": {
        "total": 0,
        "passed": 0,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
        "flaky": 0,
        "pass_rate": None,
    },
    "coverage": dict.fromkeys(("lines", "branches", "functions", "statements")),
}


def check_file_count(gate: GateInput, files: list[Path]) -> None:
    """Fail a partial set of shard reports instead of judging part of the suite."""
    expected = gate.config.options.get("expected_files")
    minimum = gate.config.options.get("min_files")
    found = len(files)
    names = ", ".join(display_path(p, gate.root) for p in files) or "none"
    patterns = ", ".join(gate.config.reports)
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


def stale_reports(gate: GateInput, files: list[Path]) -> list[str]:
    """Report files a command of this run should have written but did not touch.

    That is the gate's own command, or, for a gate without one (a coverage gate reading what the
    test command wrote), any command of this run that names the report. A report nobody in this
    run writes (made by an earlier CI step) may be older than the run.
    """
    if not gate.ran_commands:
        return []
    if gate.result is None and not written_this_run(gate):
        return []
    stale = []
    for path in files:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        # One second of slack for file systems with coarse timestamps.
        if mtime < gate.started_at - 1.0:
            stale.append(display_path(path, gate.root))
    return stale


def written_this_run(gate: GateInput) -> bool:
    """Whether a command that ran this run names one of the gate's report paths."""
    return any(names_report(command, gate.config.reports) for command in gate.commands_run)


def names_report(command: str, patterns: list[str]) -> bool:
    """Whether ``command`` names one of the report paths ``patterns`` (so it writes it)."""
    for pattern in patterns:
        named = re.compile(r"(?:^|[\s=:'\"])" + re.escape(pattern) + r"(?:$|[\s'\";,])")
        if named.search(command):
            return True
    return False


def display_path(path: Path | str, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


def needed_to_reach(threshold: float, covered: int, total: int) -> int:
    """How many more of ``total`` must be covered to reach ``threshold`` percent."""
    need = math.ceil(threshold * total / 100.0 - 1e-9)
    return max(0, need - covered)
