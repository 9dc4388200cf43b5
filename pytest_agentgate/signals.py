"""Signals that end agentgate end its children first.

``timeout`` sends SIGTERM, a CI cancellation SIGTERM then SIGKILL, a closed terminal SIGHUP, and
Ctrl-\\ SIGQUIT. Python's default for those is to die at once, leaving every gate command
running with no timeout any more. Under :func:`ending_signals` the first of them (or Ctrl-C)
raises in the main thread instead, so the runner stops every command's process group (SIGTERM,
then SIGKILL after the grace period) before agentgate exits with ``128 + signal``. A second
signal during that cleanup does not interrupt it: it makes it hurry (SIGKILL at once).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

# Set by a second ending signal: the runner kills what is left without waiting out the grace.
HURRY = threading.Event()

ENDING = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
    if hasattr(signal, name)
)


class Terminated(BaseException):
    """An ending signal arrived (not Ctrl-C, which is KeyboardInterrupt)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def exit_code(signum: int) -> int:
    """The shell's convention: 128 + the signal's number (SIGTERM 143, SIGINT 130)."""
    return 128 + signum


def name_of(signum: int) -> str:
    return signal.Signals(signum).name


@contextlib.contextmanager
def ending_signals() -> Iterator[None]:
    """Turn the ending signals into exceptions for the duration; only the main thread can."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    ending = False

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal ending
        if ending:  # cleanup is under way: do not interrupt it, make it quick
            HURRY.set()
            return
        ending = True
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    previous = {}
    for signum in ENDING:
        with contextlib.suppress(OSError, ValueError):
            previous[signum] = signal.signal(signum, handler)
    HURRY.clear()
    try:
        yield
    finally:
        for signum, old in previous.items():
            with contextlib.suppress(OSError, ValueError):
                signal.signal(signum, old)
