"""The fold rules of reports/outcomes.py."""

from __future__ import annotations

import itertools

import pytest

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
