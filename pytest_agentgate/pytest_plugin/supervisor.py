"""The process that gives ``pytest --agentgate``'s exit status: the run's own cannot be trusted to.

The project's code runs in the pytest process, and code can end its process with any status:
``os._exit(0)`` however it is reached (a built name, ``posix._exit``, libc through ctypes), or an
``exec`` of a program that exits 0. Nothing inside the process can stop that, or print after it.
So a gated pytest forks once it has started its gate process (:mod:`.gate_process`), before it
imports the project's conftest.py files: the child goes on as the pytest run, and the parent,
which runs none of the project's code, waits for it and exits with its status, but for this: a
0 needs a passing verdict. The parent hears the verdict from the gate process, which is its own
child, by the status that process exits with (:data:`VERDICT_EXIT`): no other process can give
it one (a pipe or a file the run's code could write to as well).

- The child's 0 with no verdict (the run was ended early) becomes 3, and with a verdict other
  than a pass, 1: what the session itself does when the project's code ends it in a way it sees
  (``pytest.exit(returncode=0)``, ``SystemExit``). The parent says why on stderr.
- Any other status of the child's is the parent's; a child killed by a signal kills the parent
  with the same signal.
- The gate process is the parent's to reap: once the run has ended, it has :data:`VERDICT_WAIT`
  seconds to stop its commands and exit (it stops them when the run ends without asking for a
  verdict), then it is killed.
- Signals: a terminal's Ctrl-C (or a hang-up) reaches both processes, as they share the process
  group, and the parent drops its own; SIGTERM, SIGHUP and SIGQUIT sent with ``kill`` are
  passed on to the child (:data:`PASSED_ON`). On Linux the child is ended (SIGTERM) if the parent
  is killed.
- Only a pytest that is its process's own run forks: not one started in-process by another
  (pytester's in-process runs, a test calling ``pytest.main()``), whose process is not pytest's
  to end. Nor where there is no ``fork`` or ``sigtimedwait`` (Windows, macOS).

The parent has only the fork's cost: it waits, blocked, and ends with ``os._exit`` (its copy of
pytest's state is never torn down twice). Its stderr is a copy of the one pytest started with,
taken before pytest captured output (:func:`terminal`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import time
import warnings
from types import FrameType

# The gate process's exit status once it has sent the session a verdict, by the verdict's
# status; any other (0 included) is no verdict.
VERDICT_EXIT = {"pass": 20, "fail": 21, "escalate": 22}
# How long the parent waits for the gate process to exit once the run ended: it stops its
# commands first when the run ended without asking for a verdict.
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


def may_fork() -> bool:
    """Whether this pytest may fork (:mod:`.supervisor`): a system with ``fork`` and
    ``sigtimedwait``, and a run that is its process's own."""
    return hasattr(os, "fork") and hasattr(signal, "sigtimedwait") and is_own_run()


def terminal() -> int:
    """A copy of this process's stderr, taken before pytest captures output: where the parent
    says why it changed the run's status."""
    return os.dup(2)


def fork(gate: subprocess.Popen[str], stderr: int) -> None:
    """Fork: return in the child, which goes on as the run; in the parent, wait for the run
    and the ``gate`` process, and end this process as they say. ``stderr``: :func:`terminal`,
    closed in the child."""
    parent = os.getpid()
    # Blocked from before the fork, so that no signal reaches the parent before it waits (it
    # would go on as pytest, or leave the run behind); the child takes its mask back at once.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    with warnings.catch_warnings():  # Python 3.12 warns of forking a process with threads
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.close(stderr)
        _end_with(parent)
        return
    try:
        # The gate process sees its input end when the run does: the parent holds no end of
        # its pipes.
        for stream in (gate.stdin, gate.stdout):
            if stream is not None:
                os.close(stream.fileno())
        # Its children's statuses are the parent's to take, whatever a plugin set before (an
        # ignored SIGCHLD would have the kernel take them).
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        ending = supervise(child, gate.pid)
    except BaseException as exc:  # never go on as pytest in this process
        ending = Ending(status=3, message=f"agentgate: waiting for the pytest run failed: {exc!r}")
    end(ending, stderr)


def _end_with(parent: int) -> None:
    """On Linux, have the kernel end this process if ``parent`` dies (killed, say)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):  # a libc without prctl
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before that was set
        os.kill(os.getpid(), signal.SIGTERM)


def supervise(child: int, gate: int, wait: float = VERDICT_WAIT) -> Ending:
    """Wait for the ``child`` process, passing on the signals sent to this one alone, then for
    the ``gate`` process (killed after ``wait`` seconds): how the parent ends."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    try:
        status = _wait(child)
        verdict = gate_verdict(gate, wait)
    finally:
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


def gate_verdict(gate: int, wait: float) -> str | None:
    """The status of the verdict the ``gate`` process made, by the status it exits with; None
    when it made none, or is still running after ``wait`` seconds (then killed)."""
    deadline = time.monotonic() + wait
    while True:
        pid, status = os.waitpid(gate, os.WNOHANG)
        if pid == gate:
            code = os.waitstatus_to_exitcode(status)
            return next((name for name, exit in VERDICT_EXIT.items() if exit == code), None)
        if time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(gate, signal.SIGKILL)
            os.waitpid(gate, 0)
            return None
        signal.sigtimedwait({signal.SIGCHLD}, min(0.5, max(0.0, deadline - time.monotonic())))


def end(ending: Ending, stderr: int = 2) -> None:
    """End this process as ``ending`` says, saying why on ``stderr`` (the parent's copy of
    pytest is never torn down)."""
    if ending.message:
        with contextlib.suppress(OSError):  # no stderr to say it on: the status says it
            os.write(stderr, f"\n{ending.message}\n".encode("utf-8", "replace"))
    if ending.signal is not None:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(ending.signal, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {ending.signal})
            os.kill(os.getpid(), ending.signal)
    os._exit(ending.status if ending.signal is None else 128 + ending.signal)
