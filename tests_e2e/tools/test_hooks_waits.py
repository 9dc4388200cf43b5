"""The stop hook when agentgate itself waits: judging that hangs past the time budget, and a ledger
lock another process holds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_hooks import (
    FAILING,
    GIT_ENV,
    PASSING,
    _hold_ledger_lock,
    _state,
    event,
    project,
)

from pytest_agentgate.state.ledger import read_history

pytestmark = pytest.mark.usefixtures("fresh_state_home")


def test_the_answer_comes_within_the_budget_when_judging_hangs(tmp_path: Path) -> None:
    # Not a command hangs but something agentgate does itself once the configuration is read
    # (here git's diff, as on a stuck network file system): the answer still comes before the
    # budget ends, it lets the agent stop and says why, and what agentgate started is not left
    # running.
    root = project(tmp_path, PASSING + "hook:\n  budget: 10\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=GIT_ENV)
    (root / "more.py").write_text("x = 1\n")
    shims = tmp_path / "shims"
    shims.mkdir()
    pids = tmp_path / "git-pids"
    real_git = shutil.which("git")
    git = shims / "git"
    git.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do\n'
        f"  if [ \"$arg\" = diff ]; then echo $$ >> '{pids}'; exec sleep 120; fi\n"
        "done\n"
        f"exec '{real_git}' \"$@\"\n"
    )
    git.chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_agentgate", "hook", "claude"],
        input=json.dumps(event("claude", root)).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer == {
        "systemMessage": "agentgate could not gate this stop: its time budget of 10 s ran out "
        "before it could judge the gates' evidence (reading the reports or the change took too "
        "long); what it had started was stopped. Raise `hook: {budget: N}` in agentgate.yml "
        "(and the harness's hook timeout, which `agentgate install-hook` sets above it). The "
        "agent was allowed to stop, and its work was NOT verified."
    }
    assert 10 <= took < 30
    started_gits = [int(pid) for pid in pids.read_text().split()]
    assert started_gits
    for pid in started_gits:
        for _ in range(50):
            if not Path(f"/proc/{pid}").exists() or "Z" in _state(pid):
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"git {pid} is still running")


def test_a_held_ledger_lock_does_not_let_a_failing_agent_stop(tmp_path: Path) -> None:
    # The stop hook waits a few seconds for the attempts ledger, not its whole budget: the
    # verdict is judged as ever and a failing one blocks, its attempt counted in the user's
    # state directory (red team 38: unrecorded blocks never escalated), naming the holder.
    root = project(tmp_path, FAILING + "hook:\n  budget: 30\n")
    holder = _hold_ledger_lock(root)
    try:
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest_agentgate", "hook", "claude"],
            input=json.dumps(event("claude", root)).encode(),
            capture_output=True,
            timeout=60,
        )
        took = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["decision"] == "block", answer
    assert "build FAILED" in answer["reason"]
    assert answer["systemMessage"] == "agentgate: FAIL, attempt 1 of 3 (failed: build)"
    reason = answer["reason"]
    assert f"ledger.lock is held by process {holder.pid} (" in reason
    assert "was not released within 5 s" in reason
    assert "the attempt was counted outside the project; end that process." in reason
    assert took < 25
    assert read_history(root) == []  # nothing written in the project past the lock
