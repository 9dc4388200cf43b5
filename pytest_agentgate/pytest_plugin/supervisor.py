"""The process that gives ``pytest --agentgate``'s exit status: the run's own cannot be trusted to.

The project's code runs in the pytest process, and code can end its process with any status:
``os._exit(0)`` however it is reached (a built name, ``posix._exit``, libc through ctypes), or an
``exec`` of a program that exits 0. Nothing inside the process can stop that, or print after it.
So a gated pytest forks before it imports the project's conftest.py files: the child goes on as
the pytest run, and the parent, which runs none of the project's code, waits for it and exits
with its status, but for this: a 0 needs a passing verdict, which the parent hears from the gate
process (:mod:`.gate_process`) over a pipe of its own, whose writing end the child hands to the
gate process and closes before any of the project's code runs.

- The child's 0 with no verdict (the run was ended early) becomes 3, and with a verdict other
  than a pass, 1: what the session itself does when the project's code ends it in a way it sees
  (``pytest.exit(returncode=0)``, ``SystemExit``). The parent says why on stderr.
- Any other status of the child's is the parent's; a child killed by a signal kills the parent
  with the same signal.
- Signals: a terminal's Ctrl-C (or a hang-up) reaches both processes, as they share the process
  group, and the parent drops its own; SIGTERM, SIGHUP and SIGQUIT sent with ``kill`` are
  passed on to the child (:data:`PASSED_ON`). On Linux the child is ended (SIGTERM) if the parent
  is killed.
- Only a pytest that is its process's own run forks: not one started in-process by another
  (pytester's in-process runs, a test calling ``pytest.main()``), whose process is not pytest's
  to end. Nor where there is no ``fork`` or ``sigtimedwait`` (Windows, macOS).

The parent has only the fork's cost: it waits, blocked, and ends with ``os._exit`` (its copy of
pytest's state is never torn down twice).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import select
import signal
import sys
import time
import warnings
from types import FrameType

# What the gate process writes to the parent once it has sent the session its verdict.
VERDICT_STATUSES = ("pass", "fail", "escalate")
# How long the parent waits for the gate process's word after the child ended: the gate process
# stops its commands first when the child ended without asking for a verdict.
VERDICT_WAIT = 30.0
# Signals the parent passes on to the child when sent with kill(): to the parent alone, the child
# gets none; to the process group, it gets it twice, which ends a process that does not handle
# it anyway. Not SIGINT, which pytest handles (a second one interrupts its report of the first):
# the terminal's Ctrl-C and a group's reach the child; the parent's own is dropped.
PASSED_ON = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
WATCHED = {*PASSED_ON, signal.SIGINT, signal.SIGCHLD}
# si_code of a signal sent with kill() (the terminal's are the kernel's: not passed on).
SI_USER = 0
PR_SET_PDEATHSIG = 1
# The frames of a pytest run on the stack: one being configured, one in session.
CONFIGURING = ("_pytest.config", "_prepareconfig")
IN_SESSION = ("_pytest.main", "wrap_session")

NO_VERDICT = (
    "agentgate: no verdict: the pytest process ended with status 0 before agentgate's verdict was "
    "made: the project's code (or a plugin) ended the run early (os._exit, an exec of another "
    "program); no verdict is never a pass: exit status 3"
)
NOT_PASSED = (
    "agentgate: the pytest process ended with status 0 after a verdict of {status}: the "
    "project's code (or a plugin) ended the run with a status of its own; exit status 1"
)


@dataclasses.dataclass(frozen=True)
class Ending:
    """How the parent ends: an exit status, or the signal that killed the child; and what it
    says on stderr first."""

    status: int = 0
    signal: int | None = None
    message: str = ""


def final(child: int, verdict: str | None) -> Ending:
    """The gated run's ending from the child's ``child`` status (:func:`os.waitstatus_to_exitcode`:
    negative for a signal) and the gate process's ``verdict`` (None: none was made)."""
    if child < 0:
        return Ending(signal=-child)
    if child != 0 or verdict == "pass":
        return Ending(status=child)
    if verdict is None:
        return Ending(status=3, message=NO_VERDICT)
    return Ending(status=1, message=NOT_PASSED.format(status=verdict))


def is_own_run() -> bool:
    """Whether the pytest calling this is its process's own run: one pytest run on the stack,
    being configured, and none in session (whose test started this one in-process)."""
    configuring = sessions = 0
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        where = (frame.f_globals.get("__name__"), frame.f_code.co_name)
        configuring += where == CONFIGURING
        sessions += where == IN_SESSION
        frame = frame.f_back
    return configuring == 1 and sessions == 0


def fork() -> int | None:
    """Fork, where this pytest may: in the child (the run), return the writing end of the pipe
    for the gate process; in the parent, wait for the child and end this process as it should.
    None where the run is not forked."""
    if not (hasattr(os, "fork") and hasattr(signal, "sigtimedwait")) or not is_own_run():
        return None
    reading, writing = os.pipe()
    parent = os.getpid()
    # Blocked from before the fork, so that no signal reaches the parent before it waits (it
    # would go on as pytest, or leave the run behind); the child takes its mask back at once.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    with warnings.catch_warnings():  # Python 3.12 warns of forking a process with threads
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.close(reading)
        _end_with(parent)
        return writing
    try:
        os.close(writing)
        # Its status is the parent's to take, whatever a plugin set before (an ignored
        # SIGCHLD would have the kernel take it).
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        ending = supervise(child, reading)
    except BaseException as exc:  # never go on as pytest in this process
        ending = Ending(status=3, message=f"agentgate: waiting for the pytest run failed: {exc!r}")
    end(ending)
    return None  # not reached


def _end_with(parent: int) -> None:
    """On Linux, have the kernel end this process if ``parent`` dies (killed, say)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):  # a libc without prctl
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before that was set
        os.kill(os.getpid(), signal.SIGTERM)


def supervise(child: int, verdicts: int, wait: float = VERDICT_WAIT) -> Ending:
    """Wait for the ``child`` process, passing on the signals sent to this one alone, then read
    the gate process's word from the ``verdicts`` pipe (its reading end, closed here)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    try:
        status = _wait(child)
        verdict = read_verdict(verdicts, wait)
    finally:
        os.close(verdicts)
        # What came once the child had ended is not passed on: it ended already.
        while signal.sigtimedwait(WATCHED, 0) is not None:
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return final(status, verdict)


def _wait(child: int) -> int:
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid == child:
            return os.waitstatus_to_exitcode(status)
        info = signal.sigtimedwait(WATCHED, 1.0)
        if (
            info is not None
            and info.si_signo in PASSED_ON
            and info.si_code == SI_USER
            and info.si_pid != child  # the run's own code cannot stop the parent either
        ):
            os.kill(child, info.si_signo)


def read_verdict(verdicts: int, wait: float) -> str | None:
    """The gate process's last word on the pipe before it closed it: a verdict status, or None
    when it closed it with none (the run ended before asking) or said nothing in ``wait``
    seconds."""
    deadline = time.monotonic() + wait
    said = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([verdicts], [], [], left)[0]:
            return None
        chunk = os.read(verdicts, 64)
        if not chunk:
            break
        said += chunk
    words = said.decode("ascii", "replace").split()
    return words[-1] if words and words[-1] in VERDICT_STATUSES else None


def end(ending: Ending) -> None:
    """End this process as ``ending`` says (the parent's copy of pytest is never torn down)."""
    if ending.message:
        with contextlib.suppress(OSError):  # no stderr to say it on: the status says it
            os.write(2, f"\n{ending.message}\n".encode("utf-8", "replace"))
    if ending.signal is not None:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(ending.signal, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {ending.signal})
            os.kill(os.getpid(), ending.signal)
    os._exit(ending.status if ending.signal is None else 128 + ending.signal)
