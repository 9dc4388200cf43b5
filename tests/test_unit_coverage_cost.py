"""What measuring coverage costs, in process: the figures kept in
``.agentgate/coverage-cost.json`` and the sentences the verdict shows.

Pins down coverage's share of the test gate's time, how times are written, the dated and the
fresh description, the C-tracer note, and that a kept file the agent could damage never yields a
figure that is no measurement (missing keys, text, NaN, negative or huge times, dates before 2000)
while the measurements that still read survive the next save.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate.state import coverage_cost
from pytest_agentgate.state.coverage_cost import (
    CORE_NOTE,
    CoverageCost,
    hint,
    load,
    not_measured,
    save,
    tracer_note,
)

WHEN = time.mktime((2026, 3, 4, 5, 6, 0, 0, 0, -1))


def test_share_is_what_coverage_added_to_the_time() -> None:
    assert CoverageCost("pytest", 10.0, 4.0, WHEN).share == pytest.approx(0.6)
    assert CoverageCost("pytest", 4.0, 5.0, WHEN).share == 0.0  # noise: no negative share
    assert CoverageCost("pytest", 0.0, 0.0, WHEN).share == 0.0


def test_describe_a_measurement_of_this_run_and_a_kept_one() -> None:
    cost = CoverageCost("pytest --cov", 12.5, 5.0, WHEN)
    assert cost.describe("test", now=True) == (
        "test: coverage took 60% of the test gate's time, measured now: "
        "12.5 s with coverage, 5.00 s without, 2.5x"
    )
    kept = cost.describe("test", now=False)
    assert "measured on 2026-03-04 at 05:06: " in kept
    assert kept.endswith("; `agentgate verify --coverage-cost` measures it again")


def test_times_are_shown_in_the_unit_that_reads() -> None:
    slow = CoverageCost("pytest", 1200.0, 0.0, WHEN).describe("t", now=True)
    assert slow == (
        "t: coverage took 100% of the test gate's time, measured now: "
        "20.0 min with coverage, 0.00 s without"
    )
    assert hint("test", 45.25) == (
        "test: the tests took 45.2 s under coverage; `agentgate verify --coverage-cost` runs "
        "them once more without it and shows coverage's share of that time"
    )
    assert not_measured("test", "the gate failed") == (
        "test: coverage's cost was not measured: the gate failed"
    )


@pytest.mark.parametrize(
    ("python", "branch", "env", "note"),
    [
        ((3, 12), True, {}, CORE_NOTE),
        ((3, 13), True, {}, CORE_NOTE),
        ((3, 13), False, {}, ""),
        ((3, 14), True, {}, ""),
        ((3, 11), True, {}, ""),
        ((3, 12), True, {"COVERAGE_CORE": "ctrace"}, ""),
    ],
)
def test_tracer_note(python: tuple[int, int], branch: bool, env: dict[str, str], note: str) -> None:
    assert tracer_note(python, branch, env) == note


def test_save_then_load_per_command(tmp_path: Path) -> None:
    save(tmp_path, CoverageCost("pytest -q", 3.14159, 1.0, WHEN))
    save(tmp_path, CoverageCost("pytest --cov", 9.0, 2.0, WHEN))
    save(tmp_path, CoverageCost("pytest -q", 4.0, 2.0, WHEN + 60))  # measured again
    assert load(tmp_path, "pytest -q") == CoverageCost("pytest -q", 4.0, 2.0, WHEN + 60)
    assert load(tmp_path, "pytest --cov") == CoverageCost("pytest --cov", 9.0, 2.0, WHEN)
    assert load(tmp_path, "pytest -x") is None
    kept = json.loads((tmp_path / ".agentgate" / "coverage-cost.json").read_text("utf-8"))
    assert sorted(kept["commands"]) == ["pytest --cov", "pytest -q"]


def test_rounded_to_the_millisecond(tmp_path: Path) -> None:
    save(tmp_path, CoverageCost("c", 3.14159, 1.00049, WHEN + 0.0004))
    assert load(tmp_path, "c") == CoverageCost("c", 3.142, 1.0, round(WHEN + 0.0004, 3))


@pytest.mark.parametrize(
    "entry",
    [
        {"with_s": 1.0, "without_s": 1.0},  # a key missing
        {"with_s": "fast", "without_s": 1.0, "measured_at": WHEN},
        {"with_s": None, "without_s": 1.0, "measured_at": WHEN},
        {"with_s": -1.0, "without_s": 1.0, "measured_at": WHEN},
        {"with_s": 1.0, "without_s": 8 * 86400.0, "measured_at": WHEN},
        {"with_s": math.nan, "without_s": 1.0, "measured_at": WHEN},
        {"with_s": 1.0, "without_s": 1.0, "measured_at": 0.0},  # 1970
        {"with_s": 1.0, "without_s": 1.0, "measured_at": 1e12},  # after 3000
        {"with_s": 1e400, "without_s": 1.0, "measured_at": WHEN},
        [1.0, 1.0, WHEN],
        "1.0",
    ],
)
def test_a_damaged_entry_is_no_measurement_and_is_dropped_at_the_next_save(
    tmp_path: Path, entry: Any
) -> None:
    path = tmp_path / ".agentgate" / "coverage-cost.json"
    path.parent.mkdir()
    good = {"with_s": 2.0, "without_s": 1.0, "measured_at": WHEN}
    path.write_text(json.dumps({"commands": {"bad": entry, "good": good}}), encoding="utf-8")
    assert load(tmp_path, "bad") is None
    assert load(tmp_path, "good") == CoverageCost("good", 2.0, 1.0, WHEN)
    save(tmp_path, CoverageCost("new", 1.0, 1.0, WHEN))
    kept = json.loads(path.read_text("utf-8"))["commands"]
    assert sorted(kept) == ["good", "new"]


@pytest.mark.parametrize("text", ["[]", '{"commands": []}', '"x"', "{", "[" * 100000])
def test_a_damaged_file_reads_as_no_measurement(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".agentgate" / coverage_cost.COST_FILE
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    assert load(tmp_path, "pytest") is None
    save(tmp_path, CoverageCost("pytest", 1.0, 0.5, WHEN))
    assert load(tmp_path, "pytest") == CoverageCost("pytest", 1.0, 0.5, WHEN)
