"""A gated pytest run's exit status is given by a parent that runs none of the project's code
(pytest_plugin/supervisor.py): a 0 needs a passing verdict, which the gate process tells it.

The end-to-end cases (``os._exit(0)`` and ``exec`` in the project's code, signals) are in
test_plugin_early.py, with the real ``pytest --agentgate`` in a process of its own.
"""

from __future__ import annotations

import os
import warnings

import pytest

from pytest_agentgate.pytest_plugin import supervisor
from pytest_agentgate.pytest_plugin.supervisor import Ending, final, read_verdict


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


def pipe_with(said: bytes, *, close: bool = True) -> tuple[int, int]:
    reading, writing = os.pipe()
    os.write(writing, said)
    if close:
        os.close(writing)
    return reading, writing


@pytest.mark.parametrize(
    ("said", "verdict"),
    [(b"pass\n", "pass"), (b"fail\n", "fail"), (b"escalate\n", "escalate"), (b"", None)],
)
def test_the_verdict_is_the_gate_process_word_before_it_closed_the_pipe(
    said: bytes, verdict: str | None
) -> None:
    reading, _ = pipe_with(said)
    try:
        assert read_verdict(reading, 5.0) == verdict
    finally:
        os.close(reading)


def test_a_word_that_is_no_verdict_status_is_none() -> None:
    reading, _ = pipe_with(b"passed with flying colours\n")
    try:
        assert read_verdict(reading, 5.0) is None
    finally:
        os.close(reading)


def test_a_gate_process_that_never_closes_the_pipe_is_waited_for_only_so_long() -> None:
    reading, writing = pipe_with(b"pass\n", close=False)
    try:
        assert read_verdict(reading, 0.2) is None
    finally:
        os.close(reading)
        os.close(writing)


def forked(said: bytes, status: int) -> tuple[int, int]:
    """A child that tells the pipe ``said`` and exits with ``status`` (as a run and its gate
    process would); the child's pid and the pipe's reading end."""
    reading, writing = os.pipe()
    with warnings.catch_warnings():  # the test process has threads (xdist's, coverage's)
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:
        os.write(writing, said)
        os._exit(status)
    os.close(writing)
    return child, reading


def test_the_parent_waits_for_the_run_then_reads_the_verdict() -> None:
    child, reading = forked(b"fail\n", 0)
    assert supervisor.supervise(child, reading, wait=10.0) == final(0, "fail")
    child, reading = forked(b"pass\n", 0)
    assert supervisor.supervise(child, reading, wait=10.0) == Ending(status=0)
    child, reading = forked(b"", 0)
    assert supervisor.supervise(child, reading, wait=10.0).status == 3


def test_a_test_is_not_its_process_own_run() -> None:
    # Called from a test: the run in session is this suite's, so a pytest started in-process
    # by this test (pytester's inline runs) is never forked.
    assert not supervisor.is_own_run()
