"""process.py: real subprocesses, checked the way a user sees them (exit codes, output, timing,
no processes left behind)."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pytest_agentgate.process as process
from pytest_agentgate.process import (
    CommandResult,
    CommandSpec,
    StatusReporter,
    parse_running_marker,
    run_command,
    run_commands,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX process groups")

PY = shlex.quote(sys.executable)


def spec(command: str, tmp_path: Path, key: str = "gate", **kw: object) -> CommandSpec:
    return CommandSpec(key=key, command=command, cwd=tmp_path, **kw)  # type: ignore[arg-type]


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (dead, not yet reaped by PID 1) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] not in "ZX"


def wait_gone(pids: list[int], within: float = 1.0) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(alive(p) for p in pids):
            return []
        time.sleep(0.02)
    return [p for p in pids if alive(p)]


# -- exit codes and output ----------------------------------------------------------------------


def test_exit_code_and_separate_streams(tmp_path: Path) -> None:
    result = run_command(spec("echo out; echo err >&2; exit 3", tmp_path))
    assert result.exit_code == 3
    assert result.stdout == "out\n"
    assert result.stderr == "err\n"
    assert not result.timed_out and result.start_error is None
    assert result.stdout_dropped == result.stderr_dropped == 0


def test_success_runs_in_cwd_with_env(tmp_path: Path) -> None:
    command = 'pwd; echo "$AGENTGATE_RUNNING $EXTRA"; read line || echo "stdin closed"'
    result = run_command(spec(command, tmp_path, env={"EXTRA": "x y"}))
    assert result.exit_code == 0
    cwd, env_line, stdin_line = result.stdout.splitlines()
    assert Path(cwd).resolve() == tmp_path.resolve()
    marker, extra = env_line.split(" ", 1)
    assert parse_running_marker(marker) == os.getpid() and extra == "x y"
    assert stdin_line == "stdin closed"


def test_missing_executable_is_exit_127_not_an_exception(tmp_path: Path) -> None:
    result = run_command(spec("agentgate-no-such-tool --version", tmp_path))
    assert result.exit_code == 127
    assert "not found" in result.stderr
    assert result.start_error is None


def test_shell_that_cannot_start_is_captured(tmp_path: Path) -> None:
    result = run_command(spec("echo hi", tmp_path / "missing-dir"))
    assert result.exit_code is None
    assert result.start_error is not None and "missing-dir" in result.start_error
    assert result.stdout == result.stderr == ""


def test_killed_by_signal_is_a_negative_exit_code(tmp_path: Path) -> None:
    result = run_command(spec("kill -9 $$", tmp_path))
    assert result.exit_code == -9
    assert not result.timed_out


def test_unicode_and_invalid_utf8_are_decoded_with_replacement(tmp_path: Path) -> None:
    command = f"{PY} -c \"import sys; sys.stdout.buffer.write('héllo ✓ '.encode() + b'\\xff!')\""
    result = run_command(spec(command, tmp_path))
    assert result.stdout == "héllo ✓ \ufffd!"


# -- bounded capture ----------------------------------------------------------------------------


def test_capture_keeps_the_tail_and_counts_dropped_bytes(tmp_path: Path) -> None:
    command = (
        f"{PY} -c \"import sys; sys.stdout.write('a' * 100000 + 'THE-END');"
        " sys.stderr.write('b' * 5000 + 'ERR-END')\""
    )
    result = run_command(spec(command, tmp_path, stdout_limit=10, output_limit=100))
    assert result.stdout == "aaaTHE-END"
    assert result.stdout_dropped == 100007 - 10
    assert result.stderr == "b" * 93 + "ERR-END"
    assert result.stderr_dropped == 5007 - 100


def test_capture_does_not_start_with_half_a_character(tmp_path: Path) -> None:
    # b"xx\xc3\xa9!": a 2-byte limit would start in the middle of "é"; that byte is dropped too.
    result = run_command(spec("printf 'xx\\303\\251!'", tmp_path, stdout_limit=3))
    assert (result.stdout, result.stdout_dropped) == ("é!", 2)
    result = run_command(spec("printf 'xx\\303\\251!'", tmp_path, stdout_limit=2))
    assert (result.stdout, result.stdout_dropped) == ("!", 4)


def test_fifty_megabytes_of_output_keep_memory_small(tmp_path: Path) -> None:
    # Run the capture in a fresh interpreter so its peak RSS is not pytest's.
    src = Path(process.__file__).resolve().parents[1]
    script = """
import resource, sys
from pathlib import Path
from pytest_agentgate.process import CommandSpec, run_command
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cmd = "head -c 50000000 /dev/zero | tr '\\\\0' x; echo; echo LAST-LINE"
r = run_command(CommandSpec("big", cmd, Path("."), stdout_limit=64 * 1024))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
scale = 1 if sys.platform == "darwin" else 1024
print(r.exit_code, len(r.stdout), r.stdout_dropped, (after - before) * scale)
print(r.stdout.splitlines()[-1])
"""
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    summary, last = proc.stdout.splitlines()
    exit_code, kept, dropped, growth = (int(x) for x in summary.split())
    assert exit_code == 0
    assert last == "LAST-LINE"
    assert kept == 64 * 1024
    assert kept + dropped == 50_000_000 + len("\nLAST-LINE\n")
    assert growth < 10 * 1024 * 1024  # bytes; unbounded capture would need 50 MB


def test_output_tail_is_the_last_lines_with_a_dropped_marker(tmp_path: Path) -> None:
    command = "for i in $(seq 1 100); do echo line$i; done; echo boom >&2"
    result = run_command(spec(command, tmp_path, stdout_limit=400))
    lines = result.output_tail.splitlines()
    assert len(lines) == 41
    assert lines[-1] == "boom"
    assert lines[-2] == "line100"
    dropped = int(lines[0].removeprefix("[").removesuffix(" bytes dropped]"))
    # Every byte of output is either shown or counted.
    shown = sum(len(line) + 1 for line in lines[1:])
    assert dropped + shown == len("".join(f"line{i}\n" for i in range(1, 101))) + len("boom\n")


def test_output_tail_has_no_marker_when_nothing_was_dropped(tmp_path: Path) -> None:
    result = run_command(spec("echo one; echo two >&2", tmp_path))
    assert result.output_tail == "one\ntwo"


# -- timeouts and process groups ----------------------------------------------------------------

HANGS_IGNORING_SIGTERM = (
    f"{PY} -c 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    'print("ready", flush=True); time.sleep(100)\''
)


def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path: Path) -> None:
    command = (
        "sleep 100 & echo $!; "
        "sh -c 'sleep 100 & echo $!; wait' & "  # a grandchild of a grandchild
        f"{HANGS_IGNORING_SIGTERM} & echo $!; "  # needs the SIGKILL after the grace
        "wait"
    )
    timeout, grace = 0.4, 0.3
    start = time.monotonic()
    result = run_command(spec(command, tmp_path, timeout=timeout, kill_grace=grace))
    elapsed = time.monotonic() - start
    assert result.timed_out
    assert result.exit_code is None
    assert timeout <= elapsed < timeout + grace + 0.5
    pids = [int(x) for x in result.stdout.split() if x.isdigit()]
    assert "ready" in result.stdout and len(pids) == 3
    assert wait_gone(pids) == []


def test_timeout_without_stubborn_children_returns_right_after_sigterm(tmp_path: Path) -> None:
    start = time.monotonic()
    result = run_command(spec("sleep 100 & sleep 100", tmp_path, timeout=0.3))
    assert result.timed_out
    assert time.monotonic() - start < 0.3 + 0.5  # not the 2 s grace


def test_background_child_holding_the_pipe_does_not_hang(tmp_path: Path) -> None:
    # The shell exits at once; `sleep` keeps stdout open. The command is over: end the leftover.
    start = time.monotonic()
    result = run_command(spec("sleep 100 & echo $!; echo hi", tmp_path))
    assert time.monotonic() - start < 1.0
    assert result.exit_code == 0 and not result.timed_out
    pid_line, hi = result.stdout.splitlines()
    assert hi == "hi"
    assert wait_gone([int(pid_line)]) == []


def test_stubborn_leftover_is_killed_after_the_grace(tmp_path: Path) -> None:
    command = f"{HANGS_IGNORING_SIGTERM} & echo $!; sleep 0.2; echo done"
    start = time.monotonic()
    result = run_command(spec(command, tmp_path, kill_grace=0.2))
    assert time.monotonic() - start < 0.2 + 0.2 + 0.7
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "done"
    assert wait_gone([int(result.stdout.split()[0])]) == []


def test_cancel_terminates_a_running_command(tmp_path: Path) -> None:
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    start = time.monotonic()
    result = run_command(spec("sleep 100 & echo $!; wait", tmp_path), cancel=cancel)
    assert time.monotonic() - start < 1.0
    assert result.cancelled and result.exit_code is None and not result.timed_out
    assert wait_gone([int(result.stdout.split()[0])]) == []


class InterruptingStatus(StatusReporter):
    """Raises KeyboardInterrupt on its first tick, as Ctrl-C would in the waiting thread."""

    def tick(self) -> None:
        raise KeyboardInterrupt


def test_ctrl_c_during_run_commands_leaves_no_process_behind(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    specs = [spec(f"sleep 100 & echo $! >> {pid_file}; wait", tmp_path, key=k) for k in "ab"]
    status = InterruptingStatus(FakeStream(tty=False), interval=0.3)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_commands(specs, status=status)
    assert time.monotonic() - start < 1.5
    pids = [int(x) for x in pid_file.read_text().split()]
    assert len(pids) == 2
    assert wait_gone(pids) == []


def test_interrupt_inside_run_command_kills_the_group(tmp_path: Path) -> None:
    class InterruptAfter:
        """Stands in for the cancel event; the run loop polls it, so it can raise there."""

        def __init__(self) -> None:
            self.calls = 0

        def is_set(self) -> bool:
            self.calls += 1
            if self.calls > 6:
                raise KeyboardInterrupt
            return False

    pid_file = tmp_path / "pid"
    with pytest.raises(KeyboardInterrupt):
        run_command(
            spec(f"sleep 100 & echo $! > {pid_file}; wait", tmp_path),
            cancel=InterruptAfter(),  # type: ignore[arg-type]
        )
    assert wait_gone([int(pid_file.read_text())]) == []


# -- parallel runs ------------------------------------------------------------------------------


def test_commands_run_in_parallel_and_are_keyed(tmp_path: Path) -> None:
    specs = [spec(f"sleep 0.5; echo {k}", tmp_path, key=k) for k in ("build", "lint", "test")]
    start = time.monotonic()
    results = run_commands(specs)
    assert time.monotonic() - start < 1.2
    assert list(results) == ["build", "lint", "test"]
    assert {k: r.stdout for k, r in results.items()} == {
        "build": "build\n",
        "lint": "lint\n",
        "test": "test\n",
    }


def test_max_workers_bounds_parallelism(tmp_path: Path) -> None:
    specs = [spec("sleep 0.1", tmp_path, key=k) for k in "abc"]
    start = time.monotonic()
    run_commands(specs, max_workers=1)
    assert time.monotonic() - start >= 0.3


def test_one_gate_failing_does_not_affect_the_others(tmp_path: Path) -> None:
    results = run_commands(
        [
            spec("exit 1", tmp_path, key="build"),
            spec("sleep 5", tmp_path, key="test", timeout=0.2),
            spec("echo fine", tmp_path, key="lint"),
            spec("true", tmp_path / "nowhere", key="custom"),
        ]
    )
    assert results["build"].exit_code == 1
    assert results["test"].timed_out
    assert results["lint"].stdout == "fine\n"
    assert results["custom"].start_error is not None


def test_a_bug_running_one_command_is_that_commands_start_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = process.run_command

    def flaky_runner(spec: CommandSpec, **kwargs: object) -> CommandResult:
        if spec.key == "lint":
            raise RuntimeError("runner bug")
        return real(spec, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(process, "run_command", flaky_runner)
    results = run_commands(
        [spec("true", tmp_path, key="build"), spec("true", tmp_path, key="lint")]
    )
    assert results["build"].exit_code == 0
    assert results["lint"].start_error == "agentgate: RuntimeError('runner bug')"


def test_duplicate_keys_are_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="duplicate"):
        run_commands([spec("true", tmp_path, key="x"), spec("true", tmp_path, key="x")])
    assert run_commands([]) == {}


def test_default_workers_keep_four_gates_parallel_on_small_machines() -> None:
    assert process.default_max_workers(4) >= 4
    assert process.default_max_workers(1) == 1
    assert process.default_max_workers(1000) == max(os.cpu_count() or 1, 4)


# -- status line --------------------------------------------------------------------------------


class FakeStream(io.StringIO):
    def __init__(self, tty: bool, encoding: str = "utf-8") -> None:
        super().__init__()
        self._tty = tty
        self._encoding = encoding

    def isatty(self) -> bool:
        return self._tty

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding


def test_status_line_on_a_terminal_is_redrawn_and_cleared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    stream = FakeStream(tty=True)
    assert isinstance(StatusReporter.for_stream(stream), StatusReporter)
    status = StatusReporter(stream, interval=0.1)
    specs = [
        spec("true", tmp_path, key="build"),
        spec("sleep 0.4; exit 1", tmp_path, key="test"),
    ]
    results = run_commands(specs, status=status)
    assert results["test"].exit_code == 1
    out = stream.getvalue()
    frames = out.split("\r\x1b[2K")
    assert frames[0] == "" and frames[-1] == ""  # every frame redraws in place; the end erases
    drawn = [f for f in frames if f]
    assert drawn[0] == "agentgate: build … · test …"
    assert any("build ✓" in f and "test …" in f for f in drawn)
    assert 2 <= len(drawn) <= 8  # throttled: ~4 redraws a second, not one per poll
    assert "\n" not in out


def test_status_line_prints_nothing_when_not_a_terminal(tmp_path: Path) -> None:
    stream = FakeStream(tty=False)
    assert StatusReporter.for_stream(stream) is None
    silent = StatusReporter(stream)
    run_commands([spec("true", tmp_path, key="build")], status=silent)
    assert stream.getvalue() == ""


def test_status_line_is_off_on_a_dumb_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")
    assert StatusReporter.for_stream(FakeStream(tty=True)) is None


def test_status_line_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    now = [100.0]
    status = StatusReporter(FakeStream(tty=True), clock=lambda: now[0], width=200)
    status.begin(["build", "lint", "test", "cov"])
    status.started("build")
    status.started("lint")
    status.started("cov")
    now[0] += 1.2
    build = spec("make", tmp_path, key="build")
    status.finished(CommandResult(build, 0, 0.8, "", ""))
    status.finished(
        CommandResult(spec("x", tmp_path, key="cov"), None, 1.2, "", "", timed_out=True)
    )
    assert status.line() == "agentgate: build ✓ 0.8s · lint … 1.2s · test … · cov ✗ timeout 1.2s"


def test_status_line_falls_back_to_ascii_and_fits_the_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    stream = FakeStream(tty=True, encoding="ascii")
    status = StatusReporter(stream, width=30)
    status.begin(["build", "a-very-long-gate-name", "test"])
    status.finished(CommandResult(spec("false", tmp_path, key="build"), 1, 0.1, "", ""))
    assert status.line().startswith("agentgate: build FAIL 0.1s | a-very-long-gate-name ...")
    frame = stream.getvalue().split("\r\x1b[2K")[-1]
    assert len(frame) == 30 and frame.endswith("...")
    stream.getvalue().encode("ascii")  # nothing the terminal cannot show


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="POSIX priorities")
def test_niceness_lowers_the_priority_of_what_the_command_starts(tmp_path: Path) -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    probe = f"sleep 0.2; {sys.executable} -c 'import os; print(os.getpriority(os.PRIO_PROCESS, 0))'"
    result = run_command(CommandSpec("nice", probe, tmp_path, timeout=10, niceness=5))
    assert result.exit_code == 0
    assert int(result.stdout.strip()) == min(base + 5, 19)


def test_leaving_now_removes_the_temporary_folders_and_kills_the_children(
    tmp_path: Path,
) -> None:
    # The hook leaves with os._exit at its deadline: a checkout of the base it was making is
    # not left behind, nor the process it started.
    code = (
        "import subprocess, sys\n"
        "from pytest_agentgate.process import leave_now, temporary_folder\n"
        "with temporary_folder('agentgate-test-') as folder:\n"
        "    (folder / 'f').write_text('x')\n"
        "    child = subprocess.Popen(['sleep', '60'])\n"
        "    print(folder, child.pid, flush=True)\n"
        "    leave_now(3)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 3, proc.stderr
    folder, pid = proc.stdout.split()
    assert not Path(folder).exists()
    for _ in range(50):
        state = Path(f"/proc/{pid}/stat")
        if not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"sleep {pid} still runs")


# -- what the commands leave running --------------------------------------------------------------

# A daemon: forks, leaves the session, forks again; the grandchild writes its pid to argv[1],
# then waits to put a file back (argv[2]) long after its command is over.
DAEMON = """\
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(sys.argv[1] + ".part", "w") as f:
            f.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".part", sys.argv[1])
        time.sleep(float(sys.argv[3]))
        if len(sys.argv) > 2 and sys.argv[2] != "-":
            open(sys.argv[2], "w").write("put back")
        os._exit(0)
    os._exit(0)
os.wait()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
"""
# The end of a script that waits up to 5 s for ``pid`` to be gone (a zombie is not gone).
WAIT_GONE = """\
end = time.time() + 5
while time.time() < end:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit(0)
    time.sleep(0.05)
sys.exit("{what} never went away")
"""
# An honest use of one: start it, stop it, and wait until it is gone.
STOPS_ITS_DAEMON = """\
import os, signal, subprocess, sys, time
subprocess.run([sys.executable, "daemon.py", "stopped.pid", "-", "30"], check=True)
pid = int(open("stopped.pid").read())
time.sleep(0.3)
os.kill(pid, 0)  # still running
os.kill(pid, signal.SIGTERM)
""" + WAIT_GONE.format(what="the daemon")
# Red team 8's ways past the first version: a chain 30 processes deep, each in a session of
# its own and waiting on the next (one level was stopped per round, for 20 rounds); a process
# whose first thread has ended while another runs (it looked ended, and was waited on for ever).
CHAIN = """\
import os, sys, time
for level in range(30):
    pid = os.fork()
    if pid:
        if level == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        os._exit(0)
    os.setsid()
with open(sys.argv[1] + ".part", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".part", sys.argv[1])
time.sleep(30)
"""
FIRST_THREAD_ENDS = """\
import ctypes, os, sys, threading, time
if os.fork():
    os._exit(0)
os.setsid()
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
threading.Thread(target=time.sleep, args=(30,)).start()
ctypes.CDLL(None).pthread_exit(None)
"""
# An honest shell job: `cmd &` in the command's own session, waited for by the test.
BACKGROUND_JOB = """\
import os, subprocess, sys, time
pid = int(subprocess.run("sleep 0.3 >/dev/null 2>&1 & echo $!", shell=True,
                         capture_output=True, text=True).stdout)
""" + WAIT_GONE.format(what="the background job")
RUNNER = """\
import json, os, sys, time
from pathlib import Path
from pytest_agentgate.process import CommandSpec, adopt_orphans, end_strays, run_commands

py = sys.executable
here = Path.cwd()
adopting = adopt_orphans()
specs = [
    CommandSpec(key="leaves", command=f"{py} daemon.py left.pid put-back.txt 2", cwd=here),
    CommandSpec(key="stops", command=f"{py} stops.py", cwd=here),
    CommandSpec(key="job", command=f"{py} job.py", cwd=here),
    CommandSpec(key="chain", command=f"{py} chain.py chain.pid", cwd=here),
    CommandSpec(key="thread", command=f"{py} thread.py thread.pid", cwd=here),
    CommandSpec(key="quick", command="true", cwd=here),
]
results = run_commands(specs)
while not (Path("chain.pid").exists() and Path("thread.pid").exists()):
    time.sleep(0.01)
started = time.monotonic()
strays = end_strays()
took = time.monotonic() - started
gone = {}
for name in ("left.pid", "chain.pid", "thread.pid"):
    pid = int(Path(name).read_text())
    try:
        os.kill(pid, 0)
        gone[name] = False
    except ProcessLookupError:
        gone[name] = True
print(json.dumps({
    "adopting": adopting,
    "codes": {k: r.exit_code for k, r in results.items()},
    "errors": {k: r.stderr[-300:] for k, r in results.items()},
    "strays": strays,
    "left": int(Path("left.pid").read_text()),
    "gone": gone,
    "took": took,
}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper: Linux")
def test_what_a_command_leaves_running_is_stopped_after_the_commands(tmp_path: Path) -> None:
    """A daemon a command started outside its session (setsid) lived on after agentgate and
    could put a file back once the verdict was given. It is now adopted, and stopped once the
    commands are over, with all it started, however deep; a process whose first thread has
    ended is stopped, not waited on. A daemon a command stops itself, and a shell's background
    job, are reaped as they end, so the command sees them gone. Run in a process of its own:
    adoption lasts as long as the process."""
    import json

    for name, text in {
        "daemon.py": DAEMON,
        "stops.py": STOPS_ITS_DAEMON,
        "job.py": BACKGROUND_JOB,
        "chain.py": CHAIN,
        "thread.py": FIRST_THREAD_ENDS,
        "runner.py": RUNNER,
    }.items():
        (tmp_path / name).write_text(text)
    done = subprocess.run(
        [sys.executable, "runner.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["adopting"] is True
    codes = {"leaves": 0, "stops": 0, "job": 0, "chain": 0, "thread": 0, "quick": 0}
    assert report["codes"] == codes, report["errors"]
    assert report["gone"] == {"left.pid": True, "chain.pid": True, "thread.pid": True}
    assert report["took"] < 4
    strays = report["strays"]
    assert any(s.startswith(f"pid {report['left']}: ") and "daemon.py" in s for s in strays)
    assert sum("chain.py" in s for s in strays) == 30  # the first of 31 ended by itself
    assert len(strays) == 1 + 30 + 1  # and the thread's process, named by what is left
    time.sleep(2.2)  # past the time the daemon would have put the file back
    assert not (tmp_path / "put-back.txt").exists()


LIBRARY = """\
import json, os, sys
import pytest_agentgate
from pytest_agentgate import process

here = os.getcwd()
with open("agentgate.yml", "w") as f:
    f.write("gates:\\n  build:\\n    command: '%s daemon.py left.pid - 30'\\n" % sys.executable)
verdict = pytest_agentgate.verify(here)
left = int(open("left.pid").read())
os.kill(left, 0)  # still running: a library call stops nothing of its caller's
os.kill(left, 9)
print(json.dumps({"adopting": process._adopting, "status": verdict.status}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a child subreaper: Linux")
def test_a_library_call_adopts_nothing(tmp_path: Path) -> None:
    """``pytest_agentgate.verify()`` runs inside someone's program: it never makes that program
    the parent of their orphans, and what its commands leave running is theirs."""
    import json

    (tmp_path / "daemon.py").write_text(DAEMON)
    (tmp_path / "library.py").write_text(LIBRARY)
    done = subprocess.run(
        [sys.executable, "library.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"adopting": False, "status": "pass"}
