"""What measuring coverage costs a project's tests.

``agentgate verify --coverage-cost`` runs the test gate's command once more without coverage
(:func:`pytest_agentgate.commands.without_coverage`), alone and before the gates, then the gates
one at a time, so that neither run shares the machine with another command. The two times are
kept in ``.agentgate/coverage-cost.json`` under the test command, and every later verdict whose
test gate runs that same command shows them, dated, beside the test gate's time of that run.

The figures are informational: no gate is judged on them, so the file needs no protection
beyond the project's own. A test gate that measures coverage and takes a while, with nothing
measured for its command, gets a notice saying how to measure it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_agentgate.state.storage import STATE_DIR, write_atomic

COST_FILE = "coverage-cost.json"
# A test gate measuring coverage that takes at least this long, with no measurement for its
# command, gets the notice that says how to measure what coverage costs it.
HINT_AFTER_S = 30.0


@dataclass(frozen=True)
class CoverageCost:
    """One measurement: the test command's time with coverage (the test gate's run) and
    without (the same command, coverage left out), both run alone."""

    command: str
    with_s: float
    without_s: float
    measured_at: float

    @property
    def share(self) -> float:
        """Coverage's share of the test gate's time: what the run with coverage took beyond
        the run without it (0 when the run without coverage took longer: noise)."""
        if self.with_s <= 0:
            return 0.0
        return max(0.0, (self.with_s - self.without_s) / self.with_s)

    def describe(self, gate: str, *, now: bool) -> str:
        stamp = time.localtime(self.measured_at)
        when = "now" if now else time.strftime("on %Y-%m-%d at %H:%M", stamp)
        factor = f", {self.with_s / self.without_s:.1f}x" if self.without_s > 0 else ""
        again = "" if now else "; `agentgate verify --coverage-cost` measures it again"
        return (
            f"{gate}: coverage took {self.share:.0%} of the test gate's time, measured {when}: "
            f"{_seconds(self.with_s)} with coverage, {_seconds(self.without_s)} without"
            f"{factor}{again}"
        )


# coverage.py's sys.monitoring core ("sysmon", Python 3.12+) is its fast one, and its default
# from Python 3.14; before 3.14 it cannot measure branches and coverage.py falls back to its C
# tracer (core.py: "sys.monitoring can't measure branches in this version").
SYSMON_BRANCHES = (3, 14)
CORE_NOTE = (
    "; on Python 3.12 and 3.13 coverage.py measures branch coverage with its C tracer: its "
    "faster sys.monitoring core measures branches only from Python 3.14"
)


def tracer_note(python: tuple[int, int], branch: bool, env: Mapping[str, str]) -> str:
    """Why the tests ran under coverage.py's C tracer and not sysmon, when that is why."""
    if branch and (3, 12) <= python < SYSMON_BRANCHES and "COVERAGE_CORE" not in env:
        return CORE_NOTE
    return ""


def hint(gate: str, duration_s: float) -> str:
    return (
        f"{gate}: the tests took {_seconds(duration_s)} under coverage; "
        "`agentgate verify --coverage-cost` runs them once more without it and shows "
        "coverage's share of that time"
    )


def not_measured(gate: str, why: str) -> str:
    return f"{gate}: coverage's cost was not measured: {why}"


def _seconds(value: float) -> str:
    """Enough digits that the times shown and the share computed from them agree."""
    if value < 10:
        return f"{value:.2f} s"
    return f"{value:.1f} s" if value < 600 else f"{value / 60:.1f} min"


def _path(root: Path) -> Path:
    return root / STATE_DIR / COST_FILE


# Beyond these, a figure is no measurement: a week of tests, a time before 2000 or after 3000.
MAX_SECONDS = 7 * 86400.0
_EPOCHS = (946684800.0, 32503680000.0)


def load(root: Path, command: str) -> CoverageCost | None:
    """The measurement kept for ``command``; None when there is none or the file is damaged in
    any way (a figure that cannot be read is not shown, and the next measurement replaces the
    file). Never raises: the file is the agent's to write, and a notice costs no verdict."""
    return _cost(command, _commands(_path(root)).get(command))


def _cost(command: str, entry: Any) -> CoverageCost | None:
    """One kept entry as a measurement; None for anything damaged."""
    if not isinstance(entry, dict):
        return None
    try:
        cost = CoverageCost(
            command,
            float(entry["with_s"]),
            float(entry["without_s"]),
            float(entry["measured_at"]),
        )
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    if not all(0 <= v <= MAX_SECONDS for v in (cost.with_s, cost.without_s)):
        return None  # NaN fails these comparisons too
    if not _EPOCHS[0] <= cost.measured_at <= _EPOCHS[1]:
        return None
    return cost


def _commands(path: Path) -> dict[str, Any]:
    """The file's measurements by command; empty when it is missing or damaged."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    commands = doc.get("commands") if isinstance(doc, dict) else None
    return commands if isinstance(commands, dict) else {}


def save(root: Path, cost: CoverageCost) -> None:
    """Keep ``cost`` for its command, beside the other commands' measurements that still read
    (a damaged entry or file is dropped)."""
    path = _path(root)
    commands: dict[str, Any] = {}
    for command, entry in _commands(path).items():
        if (kept := _cost(command, entry)) is not None:
            commands[command] = _entry(kept)
    commands[cost.command] = _entry(cost)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"commands": commands}, indent=2, sort_keys=True) + "\n")


def _entry(cost: CoverageCost) -> dict[str, float]:
    return {
        "with_s": round(cost.with_s, 3),
        "without_s": round(cost.without_s, 3),
        "measured_at": round(cost.measured_at, 3),
    }
