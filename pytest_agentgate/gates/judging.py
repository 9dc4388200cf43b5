"""What the judges share. Everything here is pure: config and evidence in, words and numbers out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import Evidence
from pytest_agentgate.reports.model import METRICS, ReportError
from pytest_agentgate.verdict import GateResult

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
    "coverage": dict.fromkeys(METRICS),
}


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


def count(n: int, noun: str) -> str:
    """``1 error``, ``2 errors``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def new_result(
    config: GateConfig,
    evidence: Evidence,
    status: Literal["pass", "fail", "skipped"],
    summary: str,
) -> GateResult:
    res = evidence.command
    return GateResult(
        name=config.name,
        kind=config.kind,
        status=status,
        summary=summary,
        blocking=config.blocking,
        expected={k: v for k, v in config.thresholds.items() if v is not None},
        command=config.command,
        exit_code=None if res is None else res.exit_code,
        duration_s=None if res is None else res.duration_s,
        threshold_sources=dict(config.sources),
    )


def skipped(
    config: GateConfig, evidence: Evidence, why: str, actual: Mapping[str, Any] | None = None
) -> GateResult:
    result = new_result(config, evidence, "skipped", why)
    result.actual = dict(actual or {})
    return result


def command_problem(config: GateConfig, evidence: Evidence) -> str | None:
    """Why the command's run cannot be trusted at all (timeout, could not start), else None."""
    res = evidence.command
    if res is None:
        return None
    if res.timed_out:
        timeout = config.timeout
        return (
            f"`{config.command}` was killed after its {timeout:g} s timeout (with every "
            "process it started); make it finish in time or raise `timeout`"
        )
    if res.over_budget is not None:
        budget, before = res.over_budget
        return (
            f"`{config.command}` did not finish within the stop hook's budget of {budget:g} s "
            f"and was stopped, with every process it started; an earlier verdict of this "
            f"project saw it finish in {before:.1f} s, so what is new waits or loops (a test "
            "that sleeps, a call that never returns): make it finish in time (raising "
            "`hook: {budget: N}` is a person's change to the base's configuration)"
        )
    if res.stopped_at_budget is not None:
        return (
            f"`{config.command}` did not finish within the stop hook's budget of "
            f"{res.stopped_at_budget:g} s and was stopped, with every process it started, "
            "beside a gate that finished failing: fix that first, then make this one finish in "
            "time, or raise `hook: {budget: N}` in agentgate.yml"
        )
    if res.start_error:
        return f"`{config.command}` could not start: {res.start_error}"
    return None


def exit_disagrees(config: GateConfig, evidence: Evidence) -> str | None:
    """The message for a command that exited non-zero while its report shows nothing wrong."""
    res = evidence.command
    if res is None or res.exit_code in (0, None):
        return None
    said = [line for line in res.output_tail.splitlines() if line.startswith("agentgate: ")]
    if said and "pytest_agentgate.tools" in (config.command or ""):
        # agentgate's own runner of the linter could not run it (not installed, no pin): the
        # cause, not a report that tells less than the whole story (review 27).
        return f"`{config.command}` could not run the linter: {said[-1][len('agentgate: ') :]}"
    return (
        f"`{config.command}` exited with code {res.exit_code} but its report shows nothing "
        "wrong: the report is not telling the whole story (a crash, a collection or config "
        "error). Output tail:\n" + res.output_tail
    )


def unreadable(
    config: GateConfig,
    evidence: Evidence,
    summary: str,
    error: ReportError,
    actual: Mapping[str, Any] | None = None,
) -> GateResult:
    """A failed gate for evidence that could not be read, with the command's side of the story."""
    result = new_result(config, evidence, "fail", summary)
    result.actual = dict(actual or {})
    if problem := command_problem(config, evidence):
        result.problems.append(problem)
    result.problems.append(str(error))
    if not result.problems[:-1] and (context := crash_context(config, evidence)):
        result.problems.append(context)
    return result


def crash_context(config: GateConfig, evidence: Evidence) -> str | None:
    """When a report is unusable and the command failed, the command's own words say why."""
    res = evidence.command
    if res is None or res.exit_code in (0, None):
        return None
    return f"`{config.command}` exited with code {res.exit_code}; output tail:\n" + (
        res.output_tail or "(no output)"
    )


def needed_to_reach(threshold: float, covered: int, total: int) -> int:
    """How many more of ``total`` must be covered to reach ``threshold`` percent."""
    need = math.ceil(threshold * total / 100.0 - 1e-9)
    return max(0, need - covered)
