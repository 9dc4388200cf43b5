"""A gated pytest run's exit status is given by a parent that runs none of the project's code
(pytest_plugin/supervisor.py): a 0 needs a passing verdict, which the gate process, the parent's
own child, tells it by its exit status.

The end-to-end cases (``os._exit(0)`` and ``exec`` in the project's code, signals) are in
test_plugin_early.py, with the real ``pytest --agentgate`` in a process of its own.
"""

from __future__ import annotations

import os
import time
import warnings

import pytest

from pytest_agentgate.pytest_plugin import supervisor
from pytest_agentgate.pytest_plugin.supervisor import VERDICT_EXIT, Ending, final


def test_a_status_0_stands_only_with_a_passing_verdict() -> None:
    assert final(0, "pass") == Ending(status=0)
    no_verdict = final(0, None)
    assert no_verdict.status == 3
    assert "no verdict" in no_verdict.message and "os._exit" in no_verdict.message
    for status in ("fail", "escalate"):
        ending = final(0, status)
        assert ending.status == 1 and f"a verdict of {status}" in ending.message


def test_any_other_status_of_the_run_is_kept() -> None:
    assert final(1, None) == Ending(status=1)
    assert final(2, "pass") == Ending(status=2)
    assert final(5, "fail") == Ending(status=5)
    assert final(-15, None) == Ending(signal=15)


def forked(status: int) -> int:
    """A child that exits with ``status`` at once, as a run or a gate process would."""
    with warnings.catch_warnings():  # the test process has threads (xdist's, coverage's)
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:
        os._exit(status)
    return child


@pytest.mark.parametrize(
    ("run", "gate", "ending"),
    [
        (0, VERDICT_EXIT["pass"], Ending(status=0)),
        (0, VERDICT_EXIT["fail"], final(0, "fail")),
        (0, VERDICT_EXIT["escalate"], final(0, "escalate")),
        (0, 0, final(0, None)),  # the gate process made no verdict
        (0, 1, final(0, None)),  # nor when agentgate itself failed
        (1, VERDICT_EXIT["fail"], Ending(status=1)),
    ],
)
def test_the_parent_waits_for_the_run_then_for_the_gate_process_verdict(
    run: int, gate: int, ending: Ending
) -> None:
    assert supervisor.supervise(forked(run), forked(gate), wait=10.0) == ending


def test_a_gate_process_that_does_not_end_is_killed_and_made_no_verdict() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        gate = os.fork()
    if gate == 0:
        time.sleep(60)
        os._exit(VERDICT_EXIT["pass"])
    started = time.monotonic()
    assert supervisor.supervise(forked(0), gate, wait=0.5) == final(0, None)
    assert time.monotonic() - started < 30
    with pytest.raises(ChildProcessError):  # reaped
        os.waitpid(gate, os.WNOHANG)


def test_a_test_is_not_its_process_own_run() -> None:
    # Called from a test: the run in session is this suite's, so a pytest started in-process
    # by this test (pytester's inline runs) is never forked.
    assert not supervisor.is_own_run()
