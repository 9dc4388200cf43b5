"""Renderers of one Verdict: continuation text for the agent, terminal and markdown for humans."""

from __future__ import annotations

from pytest_agentgate.verdict import Attempt


def attempt_words(attempt: Attempt) -> str:
    """``attempt 2 of 3``; past the budget (the verdict that escalates), ``attempts used up: 3
    of 3`` rather than ``attempt 4 of 3``."""
    if attempt.number > attempt.max:
        return f"attempts used up: {attempt.max} of {attempt.max}"
    return f"attempt {attempt.number} of {attempt.max}"
