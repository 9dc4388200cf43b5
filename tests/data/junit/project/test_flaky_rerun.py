"""Fails on the first attempt, passes on the second (file-based counter).

Only meant to be run with pytest-rerunfailures: `pytest --reruns 2 test_flaky_rerun.py`.
The counter file lives in $RERUN_COUNTER_DIR (default: a temp dir) so the
project tree stays clean.
"""

import os
import tempfile

import pytest

COUNTER = os.path.join(
    os.environ.get("RERUN_COUNTER_DIR", tempfile.gettempdir()), "agentgate_rerun_counter"
)


def _bump() -> int:
    n = 0
    if os.path.exists(COUNTER):
        with open(COUNTER) as fh:
            n = int(fh.read() or 0)
    n += 1
    with open(COUNTER, "w") as fh:
        fh.write(str(n))
    return n


def test_stable():
    assert 1 + 1 == 2


def test_flaky_once():
    attempt = _bump()
    assert attempt >= 2, f"attempt {attempt} failed"


def test_always_fails():
    assert 2 + 2 == 5


@pytest.mark.skip(reason="skipped in rerun sample")
def test_skipped():
    pass
