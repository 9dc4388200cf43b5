"""The fold rules of reports/outcomes.py, and the two readers that count by them."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate.pytest_plugin.session import OutcomeLedger
from pytest_agentgate.reports.junit import read_junit
from pytest_agentgate.reports.outcomes import (
    ERROR,
    EVER_FAILED,
    FAILED,
    OUTCOMES,
    PASSED,
    RANK_MASK,
    SKIPPED,
    STATES,
    fold,
    is_flaky,
    rank_of,
)

RANKS = (PASSED, SKIPPED, FAILED, ERROR)
# Every state a fold can give: a rank, with EVER_FAILED always set for a failure or an error.
STATES_REACHED = sorted(
    {fold(p, r, new) for p in (0, EVER_FAILED) for r in RANKS for new in (True, False)}
)


def fold_all(*reports: tuple[int, bool]) -> int:
    """A test's state after its reports, each ``(outcome, new_attempt)``."""
    state = 0
    for outcome, new_attempt in reports:
        state = fold(state, outcome, new_attempt)
    return state


def attempt(*ranks: int) -> list[tuple[int, bool]]:
    """The reports of one attempt: the first starts it."""
    return [(rank, index == 0) for index, rank in enumerate(ranks)]


# -- the rules --------------------------------------------------------------------------------


def test_ranks_are_error_over_failure_over_skipped_over_passed() -> None:
    assert PASSED < SKIPPED < FAILED < ERROR
    assert OUTCOMES == ("passed", "skipped", "failed", "error")
    assert [OUTCOMES[rank] for rank in RANKS] == ["passed", "skipped", "failed", "error"]
    assert all(rank & RANK_MASK == rank for rank in RANKS)
    assert not EVER_FAILED & RANK_MASK
    assert STATES & (STATES - 1) == 0, "a power of two: readers keep flags above it"
    never_failed = {PASSED, SKIPPED}
    assert set(STATES_REACHED) == never_failed | {rank | EVER_FAILED for rank in RANKS}
    assert all(state < STATES for state in STATES_REACHED)


@pytest.mark.parametrize("first", RANKS)
@pytest.mark.parametrize("second", RANKS)
def test_within_an_attempt_the_highest_rank_wins(first: int, second: int) -> None:
    state = fold_all(*attempt(first, second))
    assert rank_of(state) == max(first, second)
    assert bool(state & EVER_FAILED) == (max(first, second) >= FAILED)
    assert not is_flaky(state)


@pytest.mark.parametrize("first", RANKS)
@pytest.mark.parametrize("last", RANKS)
def test_the_last_attempt_wins_and_a_failure_sticks(first: int, last: int) -> None:
    state = fold_all(*attempt(first), *attempt(last))
    assert rank_of(state) == last
    assert bool(state & EVER_FAILED) == (first >= FAILED or last >= FAILED)
    assert is_flaky(state) == (first >= FAILED and last == PASSED)


def test_a_rerun_that_passes_is_a_flaky_pass() -> None:
    state = fold_all(*attempt(PASSED, FAILED), *attempt(PASSED, PASSED, PASSED))
    assert OUTCOMES[rank_of(state)] == "passed" and is_flaky(state)
    # ...and after an error in setup, or several failed attempts, too.
    assert is_flaky(fold_all(*attempt(ERROR), *attempt(FAILED), *attempt(PASSED)))


def test_a_pass_then_a_teardown_error_is_an_error() -> None:
    state = fold_all(*attempt(PASSED, PASSED, ERROR))  # setup, call, teardown
    assert OUTCOMES[rank_of(state)] == "error" and not is_flaky(state)
    # pytest's JUnit report of a failure then a teardown error: two elements, two attempts.
    assert rank_of(fold_all(*attempt(FAILED), *attempt(ERROR))) == ERROR


def test_a_skip_after_a_failure_is_a_skip_not_flaky() -> None:
    state = fold_all(*attempt(FAILED), *attempt(SKIPPED))
    assert OUTCOMES[rank_of(state)] == "skipped"
    assert state & EVER_FAILED and not is_flaky(state)
    # Within one attempt a skip does not hide the failure.
    assert rank_of(fold_all(*attempt(PASSED, FAILED, SKIPPED))) == FAILED


def test_the_last_of_many_attempts_wins() -> None:
    for ranks in itertools.product(RANKS, repeat=4):
        state = fold_all(*(report for rank in ranks for report in attempt(rank)))
        assert rank_of(state) == ranks[-1]
        assert bool(state & EVER_FAILED) == any(rank >= FAILED for rank in ranks)


def test_a_flaky_marker_fails_without_ranking() -> None:
    # Surefire's <flakyFailure> beside no <failure>: passed, after failed retries.
    state = fold_all((PASSED, True), (PASSED | EVER_FAILED, False))
    assert state == PASSED | EVER_FAILED and is_flaky(state)
    assert is_flaky(fold(0, PASSED | EVER_FAILED, True))
    assert rank_of(fold(state, SKIPPED, False)) == SKIPPED  # a marker ranks as a pass


@pytest.mark.parametrize("state", STATES_REACHED)
def test_the_identities_the_readers_inline(state: int) -> None:
    # JUnit reader: a <testcase> element folds into its test as the element's own fold.
    assert fold(0, state, True) == state
    for previous in STATES_REACHED:
        assert fold(previous, state, True) == state | (previous & EVER_FAILED)
    # The plugin: a passing setup keeps only EVER_FAILED, a passing call or teardown nothing.
    assert fold(state, PASSED, True) == state & EVER_FAILED
    assert fold(state, PASSED, False) == state
    assert rank_of(state) == state & RANK_MASK
    assert is_flaky(state) == (state == PASSED | EVER_FAILED)


# -- both readers count alike -----------------------------------------------------------------

# One attempt of a test, as pytest reports it (when, outcome) and as pytest's JUnit report
# writes it (the children of each <testcase> element it writes for that attempt).
KINDS: dict[str, tuple[list[tuple[str, str]], list[str]]] = {
    "pass": ([("setup", "passed"), ("call", "passed"), ("teardown", "passed")], [""]),
    "skip": ([("setup", "skipped"), ("teardown", "passed")], ["<skipped/>"]),
    "xfail": ([("setup", "passed"), ("call", "skipped"), ("teardown", "passed")], ["<skipped/>"]),
    "fail": ([("setup", "passed"), ("call", "failed"), ("teardown", "passed")], ["<failure/>"]),
    "setup error": ([("setup", "failed"), ("teardown", "passed")], ["<error/>"]),
    "teardown error": (
        [("setup", "passed"), ("call", "passed"), ("teardown", "failed")],
        ["<error/>"],
    ),
    # pytest writes a second <testcase> for a teardown error after a failed call.
    "fail, teardown error": (
        [("setup", "passed"), ("call", "failed"), ("teardown", "failed")],
        ["<failure/>", "<error/>"],
    ),
}
# The same attempts by the rules alone: the rank of each report, the first starting the attempt.
RULES = {
    "pass": attempt(PASSED, PASSED, PASSED),
    "skip": attempt(SKIPPED, PASSED),
    "xfail": attempt(PASSED, SKIPPED, PASSED),
    "fail": attempt(PASSED, FAILED, PASSED),
    "setup error": attempt(ERROR, PASSED),
    "teardown error": attempt(PASSED, PASSED, ERROR),
    "fail, teardown error": attempt(PASSED, FAILED, ERROR),
}
SEQUENCES = [seq for size in (1, 2, 3) for seq in itertools.product(KINDS, repeat=size)]


def _report(nodeid: str, when: str, outcome: str) -> pytest.TestReport:
    longrepr = ("t.py", 1, "Skipped: no") if outcome == "skipped" else None
    if outcome == "failed":
        longrepr = "AssertionError: no"
    return pytest.TestReport(nodeid, ("t.py", 0, nodeid), {}, outcome, longrepr, when)


def _tally(counts: list[int], listed: list[tuple[str, str, bool]]) -> dict[str, Any]:
    return {"counts": counts, "listed": sorted(listed)}


def test_the_junit_reader_and_the_plugin_count_alike(tmp_path: Path) -> None:
    ledger = OutcomeLedger(tmp_path)
    elements: list[str] = []
    expected_counts = [0, 0, 0, 0]
    expected_listed: list[tuple[str, str, bool]] = []
    for number, sequence in enumerate(SEQUENCES):
        name = f"test_{number}"
        for kind in sequence:
            reports, children = KINDS[kind]
            for when, outcome in reports:
                ledger.test_report(_report(f"t.py::{name}", when, outcome))
            elements += [f'<testcase classname="t" name="{name}">{c}</testcase>' for c in children]
        state = fold_all(*(report for kind in sequence for report in RULES[kind]))
        expected_counts[rank_of(state)] += 1
        if rank_of(state) >= FAILED or is_flaky(state):
            expected_listed.append((name, OUTCOMES[rank_of(state)], is_flaky(state)))
    # Split over two files, as shards or a rerun's own report would be.
    half = len(elements) // 2
    paths = [tmp_path / "a.xml", tmp_path / "b.xml"]
    for path, part in zip(paths, (elements[:half], elements[half:]), strict=True):
        path.write_text(f"<testsuite>{''.join(part)}</testsuite>", encoding="utf-8")

    run = read_junit(paths)
    summary = ledger.summary()
    from_junit = _tally(
        [run.passed, run.skipped, run.failed, run.errors],
        [(t.name, t.outcome, t.flaky) for t in [*run.failures, *run.flaky_tests]],
    )
    from_plugin = _tally(
        summary["counts"],
        [(c["name"].split("::")[1], c["outcome"], c["flaky"]) for c in summary["cases"]],
    )
    expected = _tally(expected_counts, expected_listed)
    assert from_junit == from_plugin == expected
    assert run.total == len(SEQUENCES) == sum(summary["counts"])
    # The sequences reach every outcome, flaky passes and skips after failures included.
    assert all(expected_counts) and any(flaky for *_, flaky in expected_listed)
