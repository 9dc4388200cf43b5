"""How the reports of one test fold into its outcome: the test gate's counting rules, once.

The rules (the "test" row of the gate semantics in docs/ARCHITECTURE.md):

- Only test cases count. Each report of one says passed, skipped, failed or error, ranked
  **error > failure > skipped > passed**.
- A test's reports come in **attempts**. Within one attempt the highest rank wins: a test whose
  call passed and whose teardown errored is an error. A JUnit ``<testcase>`` element is one
  attempt (its ``<error>``, ``<failure>`` and ``<skipped>`` children its reports); in pytest,
  a setup report starts one, its call and teardown reports belong to it.
- A test that appears more than once (reruns, pytest's second ``<testcase>`` for a teardown
  error after a failure, the same test in two report files) **counts once, with its last
  outcome**: a new attempt's outcome replaces the one before, whatever its rank. A test that
  failed and was then skipped is a skip.
- Any report that failed or errored sets the **ever failed** bit, which no later report clears.
  A test whose last outcome is a pass and which ever failed is **flaky**.

A test's folded state is a small int: its rank (``state & RANK_MASK``) and the ``EVER_FAILED``
bit. Every state is below ``STATES``, a power of two, so a reader can keep a state in a byte
with flags of its own above it, or count states in a list indexed by state. The first report
of a test folds into ``0``: passed, never failed.

The readers inline :func:`fold` on their hot paths (one call per test case matters there);
``tests/test_outcomes.py`` checks that they count like it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the Literal only: the pytest plugin imports this module, not the model's
    from pytest_agentgate.reports.model import Outcome

__all__ = [
    "ERROR",
    "EVER_FAILED",
    "FAILED",
    "OUTCOMES",
    "PASSED",
    "RANK_MASK",
    "SKIPPED",
    "STATES",
    "fold",
    "is_flaky",
    "rank_of",
]

# Outcome ranks: a higher rank wins within one attempt. Also the index of each outcome in the
# counts the pytest plugin sends its gate process (passed, skipped, failed, errors).
PASSED = 0
SKIPPED = 1
FAILED = 2
ERROR = 3
RANK_MASK = 3  # the bits of a state that hold its rank

# Set in a state when any report of the test failed or errored: flaky if its last outcome passed.
EVER_FAILED = 4
STATES = EVER_FAILED << 1  # every state is below this

# Outcome names, in rank order: OUTCOMES[rank_of(state)].
OUTCOMES: tuple[Outcome, Outcome, Outcome, Outcome] = ("passed", "skipped", "failed", "error")


def fold(previous: int, outcome: int, new_attempt: bool) -> int:
    """The state of a test after one more report.

    ``previous`` is its state so far (``0`` before its first report). ``outcome`` is the
    report's rank, or a rank with ``EVER_FAILED`` set for a report that says the test failed
    before it got that outcome (Surefire's ``<flakyFailure>``: passed, after failed retries).
    ``new_attempt``: the report starts a new attempt, whose outcome replaces the test's;
    otherwise the higher rank of the two wins. A failure or error sets ``EVER_FAILED``; an
    earlier one keeps it.
    """
    rank = outcome & RANK_MASK
    ever_failed = (previous | outcome) & EVER_FAILED
    if rank >= FAILED:
        ever_failed = EVER_FAILED
    if not new_attempt and previous & RANK_MASK > rank:
        rank = previous & RANK_MASK
    return rank | ever_failed


def rank_of(state: int) -> int:
    """The rank of a test's last outcome: an index into ``OUTCOMES``."""
    return state & RANK_MASK


def is_flaky(state: int) -> bool:
    """The test passed in the end, after a failure or error."""
    return state & RANK_MASK == PASSED and bool(state & EVER_FAILED)
