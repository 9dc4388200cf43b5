"""Signals that end agentgate end its gate commands first (timeout, CI cancellation, a closed
terminal, Ctrl-\\), and a second signal during that cleanup makes it quicker, never leaky."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and process groups")

# A gate command that starts a background process and waits: both must be gone afterwards.
BUSY = "sleep 60 & echo $! > bg.pid; echo $$ > sh.pid; wait"
# The same, ignoring SIGTERM (SIG_IGN is inherited by the background sleep): only SIGKILL ends it.
STUBBORN = "trap '' TERM; sleep 60 & echo $! > bg.pid; echo $$ > sh.pid; wait"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is not running: it only waits for its parent to read its status
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state != "Z"


def start(project: Path, command: str) -> subprocess.Popen[str]:
    (project / ".git").mkdir()
    (project / "agentgate.yml").write_text(f'gates:\n  build:\n    command: "{command}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTGATE_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_agentgate", "verify"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the test's own signals go to agentgate alone
    )
    deadline = time.monotonic() + 20
    while not ((project / "bg.pid").exists() and (project / "sh.pid").exists()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the gate command never started"
        time.sleep(0.02)
    time.sleep(0.1)  # the pid files are written: let the shell reach `wait`
    return proc


def pids(project: Path) -> list[int]:
    return [int((project / name).read_text()) for name in ("bg.pid", "sh.pid")]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT])
def test_an_ending_signal_stops_every_gate_command_first(tmp_path: Path, signum: int) -> None:
    proc = start(tmp_path, BUSY)
    children = pids(tmp_path)
    assert all(alive(pid) for pid in children)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signum
    assert f"stopped by {signal.Signals(signum).name}" in err
    assert "Traceback" not in err
    assert not [pid for pid in children if alive(pid)]


def test_a_second_ctrl_c_during_cleanup_kills_at_once_and_leaves_nothing(tmp_path: Path) -> None:
    proc = start(tmp_path, STUBBORN)
    children = pids(tmp_path)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)  # cleanup is under way: SIGTERM sent, the grace period (2 s) running
    assert proc.poll() is None and all(alive(pid) for pid in children)
    second = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert time.monotonic() - second < 1.5  # SIGKILL at once, not after the grace period
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert not [pid for pid in children if alive(pid)]


def test_without_a_second_signal_the_grace_period_is_waited_out(tmp_path: Path) -> None:
    proc = start(tmp_path, STUBBORN)
    children = pids(tmp_path)
    first = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert time.monotonic() - first >= 1.5 and proc.returncode == 143
    assert not [pid for pid in children if alive(pid)]
