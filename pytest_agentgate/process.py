"""Run gate commands: timeouts that kill the whole process group, bounded output capture,
parallel runs and a live status line.

Rules this module keeps (docs/ARCHITECTURE.md, "Rules for every gate"):

* Every command runs in its own session/process group with stdin closed. On timeout the whole
  group gets SIGTERM, then SIGKILL after a short grace, so grandchildren die with the command.
* When the main process exits on its own, whatever it left running in its group (``cmd &``
  without ``wait``) is terminated the same way. Those leftovers may hold the output pipes open;
  without this a gate would hang until they finish. A process that escapes the group on purpose
  (``setsid``, a daemon) cannot be tracked; the pipes are then abandoned after a bounded wait.
* stdout and stderr are read concurrently into buffers that keep the *tail* and count the bytes
  dropped from the head, so a command printing gigabytes costs at most the limit in memory.
* Nothing here raises for a command problem: a non-zero exit, a missing executable (the shell
  exits 127) or an ``OSError`` at start all end up in the :class:`CommandResult`.

POSIX is the target. On Windows the module imports and runs commands (``cmd /c``), but the group
kill is best effort (``taskkill /T``) and leftovers of a finished command are not hunted down.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, TextIO

from pytest_agentgate.signals import HURRY

__all__ = [
    "RUNNING_ENV",
    "CommandResult",
    "CommandSpec",
    "StatusReporter",
    "default_max_workers",
    "parse_running_marker",
    "run_command",
    "run_commands",
    "running_marker",
]

_POSIX = os.name == "posix"

DEFAULT_KILL_GRACE_S = 2.0
# After the group was killed, how long to keep reading pipes that a process outside the group
# (it called setsid) may still hold open before giving up on them.
PIPE_CLOSE_WAIT_S = 1.0
# How often the run loop wakes up to check for exit, timeout and cancellation.
_POLL_S = 0.05
_CHUNK = 64 * 1024
# Gate commands are external processes; the worker threads only wait for them. A floor keeps the
# usual build/lint/test/coverage set fully parallel on small (2-CPU) CI machines.
_MIN_DEFAULT_WORKERS = 4
TAIL_LINES = 40
# How often processes the commands left behind are reaped while the commands run.
_REAP_S = 0.2


@dataclass(frozen=True)
class CommandSpec:
    """One command to run for one gate."""

    key: str  # the gate name, unique within one run
    command: str  # a shell command line, run with the platform shell (``sh -c`` / ``cmd /c``)
    cwd: Path
    timeout: float | None = None  # seconds; None = no limit
    env: Mapping[str, str] | None = None  # extra variables on top of os.environ
    stdout_limit: int = 16 * 1024 * 1024  # bytes of stdout kept (stdout may be a JSON report)
    output_limit: int = 1024 * 1024  # bytes of stderr kept
    kill_grace: float = DEFAULT_KILL_GRACE_S  # seconds between SIGTERM and SIGKILL
    # Added to the command's nice value (POSIX): background gates yield the CPU to the tests.
    niceness: int = 0


@dataclass
class CommandResult:
    """What happened when a :class:`CommandSpec` ran."""

    spec: CommandSpec
    # The exit status; negative -N when a signal N killed it (subprocess convention).
    # None when it could not start, was killed by the timeout, or was cancelled.
    exit_code: int | None
    duration_s: float
    stdout: str  # decoded utf-8 with errors="replace"
    stderr: str
    stdout_dropped: int = 0  # bytes dropped from the HEAD of stdout (the tail is kept)
    stderr_dropped: int = 0
    timed_out: bool = False
    start_error: str | None = None  # why the shell itself could not start (OSError text)
    cancelled: bool = False  # killed because the run was interrupted (Ctrl-C), not judged
    # Stopped at the harness hook's budget, where an earlier verdict saw it finish within
    # that budget: (the budget, the time it took then). Judged as a run cut short.
    over_budget: tuple[float, float] | None = None
    # Stopped at the harness hook's budget (seconds) beside a gate that finished failing, whose
    # verdict it is part of: judged as a run cut short.
    stopped_at_budget: float | None = None

    @property
    def cut_short(self) -> bool:
        """Killed before it finished, by its timeout or the hook's budget: nothing it wrote can
        be judged."""
        return self.timed_out or self.over_budget is not None or self.stopped_at_budget is not None

    @property
    def output_tail(self) -> str:
        """The last ~40 lines of stdout then stderr, for humans.

        The streams are captured separately, so they cannot be interleaved as the terminal would
        have shown them; stderr comes last because that is where errors usually are. A first line
        ``[N bytes dropped]`` says how much output is not shown (capture limit plus older lines).
        """
        return self.tail(TAIL_LINES)

    def tail(self, max_lines: int = TAIL_LINES) -> str:
        lines = self.stdout.splitlines() + self.stderr.splitlines()
        kept = lines[-max_lines:] if max_lines > 0 else []
        cut = lines[: len(lines) - len(kept)]
        dropped = self.stdout_dropped + self.stderr_dropped
        dropped += sum(len(line.encode("utf-8", "replace")) + 1 for line in cut)
        if dropped:
            kept.insert(0, f"[{dropped} bytes dropped]")
        return "\n".join(kept)


# -- bounded capture --------------------------------------------------------------------------


class _TailBuffer:
    """Keeps the last ``limit`` bytes fed to it and counts the rest.

    Chunks are kept whole in a deque and the head is trimmed once at the end, so feeding is
    O(len(chunk)) whatever the limit (no re-copying of a 16 MB buffer on every read).
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._dropped = 0
        self._lock = threading.Lock()  # the Windows reader threads feed while others read

    def feed(self, data: bytes) -> None:
        with self._lock:
            self._chunks.append(data)
            self._size += len(data)
            while self._chunks and self._size - len(self._chunks[0]) >= self.limit:
                head = self._chunks.popleft()
                self._size -= len(head)
                self._dropped += len(head)

    def result(self) -> tuple[str, int]:
        """The kept tail decoded, and the number of bytes dropped from the head."""
        with self._lock:
            data = b"".join(self._chunks)
            dropped = self._dropped
        excess = len(data) - self.limit
        if excess > 0:
            data = data[excess:]
            dropped += excess
        if dropped:
            # Do not start with half a UTF-8 character (which would decode to U+FFFD).
            skip = 0
            while skip < 3 and skip < len(data) and 0x80 <= data[skip] <= 0xBF:
                skip += 1
            data = data[skip:]
            dropped += skip
        return data.decode("utf-8", errors="replace"), dropped


class _Pump(Protocol):
    @property
    def done(self) -> bool: ...

    def pump(self, duration: float) -> None: ...

    def close(self) -> None: ...


class _SelectorPump:
    """POSIX: read both pipes from the calling thread with a selector.

    ``pump(d)`` reads for up to ``d`` seconds and returns early only when every pipe is at EOF.
    Giving up on a pipe is just closing our end, which a blocked reader thread could not do.
    """

    def __init__(self, streams: Sequence[tuple[IO[bytes], _TailBuffer]]) -> None:
        self._files = [f for f, _ in streams]
        self._sel = selectors.DefaultSelector()
        for f, buf in streams:
            self._sel.register(f.fileno(), selectors.EVENT_READ, buf)

    @property
    def done(self) -> bool:
        return not self._sel.get_map()

    def pump(self, duration: float) -> None:
        end = time.monotonic() + duration
        while self._sel.get_map():
            remaining = end - time.monotonic()
            for key, _ in self._sel.select(max(remaining, 0.0)):
                try:
                    data = os.read(key.fd, _CHUNK)
                except InterruptedError:  # pragma: no cover - PEP 475 retries for us
                    continue
                except OSError:
                    data = b""
                if data:
                    key.data.feed(data)
                else:
                    self._sel.unregister(key.fd)
            if remaining <= 0:
                return

    def close(self) -> None:
        self._sel.close()
        for f in self._files:
            f.close()


class _ThreadPump:  # pragma: no cover - Windows only
    """Windows: one daemon reader thread per pipe (select() does not work on pipes there)."""

    def __init__(self, streams: Sequence[tuple[IO[bytes], _TailBuffer]]) -> None:
        self._threads = [
            threading.Thread(target=self._read, args=(f, buf), daemon=True) for f, buf in streams
        ]
        for t in self._threads:
            t.start()

    @staticmethod
    def _read(f: IO[bytes], buf: _TailBuffer) -> None:
        try:
            while data := f.read(_CHUNK):
                buf.feed(data)
        except (OSError, ValueError):
            pass
        finally:
            f.close()

    @property
    def done(self) -> bool:
        return not any(t.is_alive() for t in self._threads)

    def pump(self, duration: float) -> None:
        end = time.monotonic() + duration
        for t in self._threads:
            t.join(max(0.0, end - time.monotonic()))

    def close(self) -> None:
        # A thread still blocked on a pipe held by an escaped process owns its file; closing it
        # from here could hand its descriptor number to someone else mid-read.
        pass


# -- process groups ---------------------------------------------------------------------------


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process remains in the process group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if sys.platform.startswith("linux"):
        # Orphans are reparented to PID 1, and in many containers PID 1 never reaps them: a dead
        # member stays a zombie and killpg(pgid, 0) keeps succeeding. Look at the states.
        return _linux_group_has_live_member(pgid)
    return True


def _linux_group_has_live_member(pgid: int) -> bool:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ..."; comm may contain spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


# Temporary folders this process is using (a checkout of the base, a copy of git's index):
# removed by :func:`leave_now` when the process must leave without finishing.
TEMPORARY: set[str] = set()


@contextlib.contextmanager
def temporary_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder, removed afterwards, and by :func:`leave_now` if it comes first."""
    folder = tempfile.mkdtemp(prefix=prefix)
    TEMPORARY.add(folder)
    try:
        yield Path(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        TEMPORARY.discard(folder)


def leave_now(code: int) -> None:
    """End this process at once (``os._exit``): what it started is killed, its temporary
    folders are removed. For the hook that must answer before the harness's timeout."""
    kill_children()
    for folder in list(TEMPORARY):
        shutil.rmtree(folder, ignore_errors=True)
    os._exit(code)


def kill_children() -> None:
    """SIGKILL every process this one started that is still running (a gate command's whole
    group), for a process about to leave without waiting for them: the hook that must answer
    before the harness's timeout. Linux only (where ``/proc`` lists each thread's children);
    elsewhere a no-op."""
    for pid in _children():
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid:  # a gate command: its own group, children included
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)


def _terminate_group(proc: subprocess.Popen[bytes], pump: _Pump, grace: float) -> None:
    """SIGTERM the command's group, SIGKILL whatever is left after ``grace`` seconds.

    The pipes are read meanwhile, so a process blocked on a full pipe can still die cleanly.
    """
    if not _POSIX:  # pragma: no cover - Windows
        subprocess.run(
            ["taskkill", "/T", "/F", "/PID", str(proc.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        proc.kill()
        proc.wait()
        return
    pgid = proc.pid  # start_new_session=True: the child leads its own group
    _signal_group(pgid, signal.SIGTERM)
    end = time.monotonic() + grace
    while True:
        # Reap the main process first: while it is an unreaped zombie the group exists.
        if proc.poll() is not None and not _group_alive(pgid):
            return
        remaining = end - time.monotonic()
        if remaining <= 0 or HURRY.is_set():  # a second signal: no more grace
            break
        _wait_a_little(proc, pump, min(_POLL_S, remaining))
    _signal_group(pgid, signal.SIGKILL)
    # Bounded: a process stuck in uninterruptible sleep must not hang the gate.
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5.0)


def _wait_a_little(proc: subprocess.Popen[bytes], pump: _Pump, seconds: float) -> None:
    """Read output for ``seconds``; when the pipes are closed, wait on the process instead."""
    if not pump.done:
        pump.pump(seconds)
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=seconds)


# -- running one command ----------------------------------------------------------------------


# -- the re-entrancy guard --------------------------------------------------------------------

# Every gate command gets RUNNING_ENV=running_marker(): the pytest plugin inside a gate command
# then leaves the judging to the agentgate process that started it. The value names that
# process, "<pid>:<nonce>", and the plugin honours it only when that pid is one of its own
# ancestors running agentgate (pytest_plugin/session.py, started_by_agentgate): a value typed
# into a shell or set by a conftest.py names no such process, and gates anyway.
RUNNING_ENV = "AGENTGATE_RUNNING"
_NONCE = secrets.token_hex(8)


def running_marker() -> str:
    """The guard's value for the commands this process starts: its pid and a random nonce."""
    return f"{os.getpid()}:{_NONCE}"


def parse_running_marker(value: str | None) -> int | None:
    """The pid a guard value names; None for anything :func:`running_marker` does not write."""
    pid, sep, nonce = (value or "").partition(":")
    if not sep or not pid.isdigit() or len(nonce) != len(_NONCE) or not nonce.isalnum():
        return None
    return int(pid) if int(pid) > 0 else None  # pid 1: agentgate as a container's init


# Caches a tool trusts by a file's modification time: a file restored with the time it had when
# it was clean (`touch -r`) is not looked at again, and its old result is reported. Off for
# every gate command, unless the gate's own `env:` (the base's configuration) turns one on.
NO_TOOL_CACHE = {"RUFF_NO_CACHE": "true"}


def _child_env(spec: CommandSpec) -> dict[str, str]:
    from pytest_agentgate.state.env_keys import unkeyed_env

    # What the verdict cache does not key (a shell's bookkeeping, a harness's settings) is not
    # the commands' to see: the stop hook reuses a run the agent made with other values there.
    left_out = unkeyed_env(os.environ)
    env = {name: value for name, value in os.environ.items() if name not in left_out}
    if "PWD" in left_out:
        env["PWD"] = os.path.abspath(spec.cwd)
    if "SHELL" in left_out:
        # A shell the agent's and the hook's may name differently (Claude Code's do): one
        # for every run, not none (review 28: code that reads $SHELL, and its test).
        env["SHELL"] = "/bin/sh"
    env.update(NO_TOOL_CACHE)
    if spec.env:
        env.update(spec.env)
    # Lets a nested agentgate or the pytest plugin inside a gate command know it is nested.
    # Set last: no gate's `env` can forge or unset it.
    env[RUNNING_ENV] = running_marker()
    return env


def run_command(spec: CommandSpec, *, cancel: threading.Event | None = None) -> CommandResult:
    """Run ``spec`` to completion (or timeout) and return what happened. Never raises for a
    command problem.

    ``cancel``: when set from another thread, the command's group is terminated as on a timeout
    and the result has ``cancelled=True``. ``run_commands`` uses it on Ctrl-C.
    """
    start = time.monotonic()
    if cancel is not None and cancel.is_set():
        return CommandResult(spec, None, 0.0, "", "", cancelled=True)
    out = _TailBuffer(spec.stdout_limit)
    err = _TailBuffer(spec.output_limit)
    try:
        with _RUNNING_LOCK:
            proc = _spawn(spec)
            _RUNNING.add(proc.pid)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return CommandResult(
            spec, None, time.monotonic() - start, "", "", start_error=_describe_start_error(exc)
        )
    assert proc.stdout is not None and proc.stderr is not None
    streams = [(proc.stdout, out), (proc.stderr, err)]
    pump: _Pump = _SelectorPump(streams) if _POSIX else _ThreadPump(streams)
    deadline = None if spec.timeout is None else start + spec.timeout
    timed_out = cancelled = False
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                timed_out = True
                break
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            step = _POLL_S if deadline is None else min(_POLL_S, deadline - now)
            _wait_a_little(proc, pump, step)
        if timed_out or cancelled:
            _terminate_group(proc, pump, spec.kill_grace)
        elif _POSIX and _group_alive(proc.pid):
            # The main process is done but left processes behind in its group (`cmd &`); they
            # may hold our pipes open forever. The command is over: end them.
            _terminate_group(proc, pump, spec.kill_grace)
        pump.pump(PIPE_CLOSE_WAIT_S)
    except BaseException:
        # KeyboardInterrupt or a bug: never leave the group running behind us.
        if _POSIX:
            _signal_group(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover
            proc.kill()
        proc.wait()
        raise
    finally:
        pump.close()
        if proc.returncode is not None:  # reaped: the pid is no command's any more
            with _RUNNING_LOCK:
                _RUNNING.discard(proc.pid)
    stdout, stdout_dropped = out.result()
    stderr, stderr_dropped = err.result()
    return CommandResult(
        spec=spec,
        exit_code=None if (timed_out or cancelled) else proc.returncode,
        duration_s=time.monotonic() - start,
        stdout=stdout,
        stderr=stderr,
        stdout_dropped=stdout_dropped,
        stderr_dropped=stderr_dropped,
        timed_out=timed_out,
        cancelled=cancelled,
    )


def _spawn(spec: CommandSpec) -> subprocess.Popen[bytes]:
    # Windows has no sessions; a new process group at least keeps Ctrl-C from the console away.
    flags = 0 if _POSIX else getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    proc = subprocess.Popen(
        spec.command,
        shell=True,
        cwd=spec.cwd,
        env=_child_env(spec),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        start_new_session=_POSIX,
        creationflags=flags,
    )
    if spec.niceness and hasattr(os, "setpriority"):
        # Right after the start: what the shell starts from now on inherits the lower priority.
        with contextlib.suppress(OSError):
            os.setpriority(
                os.PRIO_PROCESS, proc.pid, os.getpriority(os.PRIO_PROCESS, 0) + spec.niceness
            )
    return proc


def _describe_start_error(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return str(exc) or type(exc).__name__


# -- what the commands leave running ----------------------------------------------------------


def _children(pid: int | str = "self") -> set[int]:
    """The processes whose parent is ``pid`` (Linux; elsewhere none are listed)."""
    pids: set[int] = set()
    for text in _per_thread(pid, "children"):
        with contextlib.suppress(ValueError):
            pids.update(int(word) for word in text.split())
    return pids


def _per_thread(pid: int | str, name: str) -> Iterator[bytes]:
    """``/proc/PID/task/TID/NAME`` of each thread of the process that can be read."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/{name}", "rb") as f:
                yield f.read()
        except OSError:
            continue


# The gate commands running now, by pid (each leads its own session); taken with the lock while
# a command starts, so a command just started is never taken for a process it left behind.
_RUNNING: set[int] = set()
_RUNNING_LOCK = threading.Lock()
_PR_SET_CHILD_SUBREAPER = 36
_adopting = False


def adopt_orphans() -> bool:
    """Make this process the parent of what its commands leave behind (Linux, where a process
    can be a "child subreaper"; elsewhere False and nothing changes).

    A process a gate command starts that leaves the command's session (``setsid``, a daemon,
    ``start_new_session=True``) used to go to init and live on after agentgate: a test run
    could leave one to put a file back once the verdict was given. Once this is called such a
    process becomes this one's child, :func:`reap_adopted` reaps it when it ends (as init
    would) and :func:`end_strays` stops it when the commands are over. For agentgate's own
    processes only (``verify``, the hook, the Action, the pytest door's gate process): in a
    process that runs someone's code, their orphans would become its children.
    """
    global _adopting
    if _adopting or not sys.platform.startswith("linux"):
        return _adopting
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _adopting = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc to ask, or no prctl in it
        _adopting = False
    return _adopting


def _adopted(*, running_too: bool = False) -> list[int]:
    """This process's children that it did not start: they are in no session of its own
    (agentgate's own helpers, git and the like, run in its session) and are no command it is
    running. ``running_too``: also those still in the session of a command that runs. Call
    with ``_RUNNING_LOCK`` held."""
    if not _adopting:
        return []
    own = os.getsid(0)
    found = []
    for pid in _children():
        if pid in _RUNNING:
            continue
        try:
            session = os.getsid(pid)
        except OSError:  # gone already
            continue
        if session != own and (running_too or session not in _RUNNING):
            found.append(pid)
    return found


def reap_adopted() -> None:
    """Reap the adopted processes that have ended, as init would, also those of a command
    still running (``sh -c 'sleep 1 &'``): a test that waits for a process it started to be
    gone sees it gone."""
    with _RUNNING_LOCK:
        for pid in _adopted(running_too=True):
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)


def end_strays(within: float = 5.0) -> list[str]:
    """Stop every adopted process still running once the commands are over, with all it
    started; what each was running (``pid 123: python -c ...``), for the verdict to say.

    Each is first stopped (SIGSTOP: it starts nothing more), then its descendants are found
    and stopped too, then all are killed and reaped. The processes killed that were not this
    one's children are adopted as their parents die: they are looked for again until none is
    left, for at most ``within`` seconds. Never waits on a process that has not ended (a
    process whose first thread ended while another runs looks ended to ``/proc``)."""
    named: dict[int, str] = {}
    end = time.monotonic() + within
    while True:
        with _RUNNING_LOCK:
            strays = _adopted()
            for pid in _frozen(strays, named):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for pid in strays:
                with contextlib.suppress(OSError):
                    os.waitpid(pid, os.WNOHANG)
        if not strays or time.monotonic() > end:
            return list(named.values())
        time.sleep(0.01)  # the children of those just killed are adopted meanwhile


def _frozen(roots: list[int], named: dict[int, str]) -> list[int]:
    """``roots`` and every process below them, each stopped (SIGSTOP) before its children
    are listed, so none starts another meanwhile. Those running are named in ``named``."""
    found: list[int] = []
    seen: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        found.append(pid)
        if _running(pid):
            named.setdefault(pid, f"pid {pid}: {_command_line(pid)}")
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
        todo.extend(_children(pid))
    return found


def _running(pid: int) -> bool:
    """Whether any thread of the process has not ended (its first thread may have)."""
    for stat in _per_thread(pid, "stat"):
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read(4096).rstrip(b"\0").split(b"\0")
    except OSError:
        return "?"
    line = " ".join(" ".join(w.decode("utf-8", "replace").split()) for w in words).strip()
    if not line:  # its first thread has ended: the name of the process is what is left
        try:
            with open(f"/proc/{pid}/comm", "rb") as f:
                line = f.read(64).decode("utf-8", "replace").strip() or "?"
        except OSError:
            return "?"
    return line if len(line) <= 200 else line[:199] + "…"


# -- running many -----------------------------------------------------------------------------


def default_max_workers(n_commands: int) -> int:
    """Workers used by :func:`run_commands` when ``max_workers`` is not given."""
    return max(1, min(n_commands, max(os.cpu_count() or 1, _MIN_DEFAULT_WORKERS)))


def run_commands(
    specs: Sequence[CommandSpec],
    *,
    status: StatusReporter | None = None,
    max_workers: int | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, CommandResult]:
    """Run every spec in parallel, one worker thread per command, and key the results by
    ``spec.key`` (in the order of ``specs``).

    Workers default to ``max(os.cpu_count(), 4)`` capped at the number of commands; gate
    commands mostly wait, and build, lint and test must overlap even on 2-CPU runners.
    On KeyboardInterrupt every running command's group is terminated before it propagates.
    ``cancel``: set it from another thread to end every command early (results ``cancelled``);
    the pytest plugin, which runs this in the background, uses it when the session is
    interrupted.
    """
    specs = list(specs)
    seen: set[str] = set()
    for spec in specs:
        if spec.key in seen:
            raise ValueError(f"duplicate command key {spec.key!r}")
        seen.add(spec.key)
    if not specs:
        return {}
    workers = max_workers if max_workers is not None else default_max_workers(len(specs))
    workers = max(1, min(workers, len(specs)))
    cancel = cancel if cancel is not None else threading.Event()

    def work(spec: CommandSpec) -> CommandResult:
        try:
            if status is not None:
                status.started(spec.key)
            result = run_command(spec, cancel=cancel)
            if status is not None:
                status.finished(result)
        except Exception as exc:  # a bug here must not cost the other gates their results
            result = CommandResult(spec, None, 0.0, "", "", start_error=f"agentgate: {exc!r}")
        return result

    if status is not None:
        status.begin([s.key for s in specs])
    # Plain threads rather than concurrent.futures: importing it registers loggers, and pytest's
    # logging plugin walks every logger several times per test, which made each test of a gated
    # pytest session measurably slower (benchmarks/bench_plugin.py).
    queue = deque(specs)
    results: dict[str, CommandResult] = {}
    finished = threading.Condition()

    def worker() -> None:
        while True:
            try:
                spec = queue.popleft()  # atomic: no two workers take the same command
            except IndexError:
                return
            result = work(spec)
            with finished:
                results[spec.key] = result
                finished.notify()

    threads = [
        threading.Thread(target=worker, name=f"agentgate-cmd-{i}", daemon=True)
        for i in range(workers)
    ]
    tick = status.interval if status is not None else None
    if _adopting:  # what the commands leave behind is reaped as it ends
        tick = min(tick or _REAP_S, _REAP_S)
    try:
        for thread in threads:
            thread.start()
        while True:
            with finished:
                if len(results) == len(specs):
                    break
                finished.wait(tick)
            if status is not None:
                status.tick()
            reap_adopted()
    except BaseException:
        cancel.set()  # the commands still queued return at once, cancelled
        raise
    finally:
        for thread in threads:
            if thread.ident is not None:
                thread.join()
        if status is not None:
            status.close()
    return {spec.key: results[spec.key] for spec in specs}


# -- live status line -------------------------------------------------------------------------


class StatusReporter:
    """A one-line live status of the running gates, redrawn in place on a terminal::

        agentgate: build ✓ 0.8s · lint … 1.2s · test …

    Only animates when ``stream.isatty()`` is true (and ``TERM`` is not ``dumb``); otherwise
    every method is a no-op and nothing at all is written, so logs and CI output stay clean.
    :meth:`for_stream` returns ``None`` in that case, which callers can pass straight to
    :func:`run_commands`; constructing a reporter on a non-TTY is also safe (it stays silent).
    Redraws are throttled to one per ``interval`` seconds; :meth:`close` erases the line.
    """

    _CLEAR = "\r\x1b[2K"

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        interval: float = 0.25,
        width: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream: TextIO = stream if stream is not None else sys.stderr
        self.interval = interval
        self.enabled = _is_live_terminal(self.stream)
        self._width = width
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: list[str] = []
        self._started: dict[str, float] = {}
        self._finished: dict[str, CommandResult] = {}
        self._last_draw: float | None = None
        self._drawn = False
        self._ok, self._fail, self._busy, self._sep = _symbols(self.stream)

    @classmethod
    def for_stream(cls, stream: TextIO | None = None) -> StatusReporter | None:
        """A reporter for ``stream`` (default stderr) if it is a live terminal, else None."""
        reporter = cls(stream)
        return reporter if reporter.enabled else None

    def begin(self, keys: Sequence[str]) -> None:
        with self._lock:
            self._keys = list(keys)
            self._draw(force=True)

    def started(self, key: str) -> None:
        with self._lock:
            self._started[key] = self._clock()
            if key not in self._keys:
                self._keys.append(key)
            self._draw()

    def finished(self, result: CommandResult) -> None:
        with self._lock:
            self._finished[result.spec.key] = result
            self._draw()

    def tick(self) -> None:
        """Redraw (throttled) so the running gates' clocks move."""
        with self._lock:
            self._draw()

    def close(self) -> None:
        """Erase the status line (if one was drawn)."""
        with self._lock:
            if self.enabled and self._drawn:
                self._write(self._CLEAR)
                self._drawn = False

    def line(self) -> str:
        """The status line as it would be drawn now (without control characters)."""
        now = self._clock()
        parts = []
        for key in self._keys:
            result = self._finished.get(key)
            if result is not None:
                ok = result.exit_code == 0
                why = " timeout" if result.timed_out else ""
                mark = self._ok if ok else self._fail
                parts.append(f"{key} {mark}{why} {result.duration_s:.1f}s")
            elif key in self._started:
                parts.append(f"{key} {self._busy} {now - self._started[key]:.1f}s")
            else:
                parts.append(f"{key} {self._busy}")
        return "agentgate: " + f" {self._sep} ".join(parts)

    def _draw(self, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self._clock()
        if not force and self._last_draw is not None and now - self._last_draw < self.interval:
            return
        self._last_draw = now
        text = self.line()
        width = self._width if self._width is not None else _terminal_width()
        if len(text) > width:  # a wrapped line cannot be redrawn in place with \r
            text = text[: max(0, width - len(self._busy))] + self._busy
        self._write(self._CLEAR + text)
        self._drawn = True

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal must not break the run
            self.enabled = False


def _is_live_terminal(stream: TextIO) -> bool:
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _terminal_width() -> int:
    import shutil

    return max(20, shutil.get_terminal_size(fallback=(80, 24)).columns - 1)


def _symbols(stream: TextIO) -> tuple[str, str, str, str]:
    fancy = ("✓", "✗", "…", "·")
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "".join(fancy).encode(encoding)
    except (LookupError, UnicodeEncodeError):
        return ("ok", "FAIL", "...", "|")
    return fancy
