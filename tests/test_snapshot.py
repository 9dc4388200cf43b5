"""Without git, a task's change is judged against the snapshot of its first verdict.

Each test builds a project in a folder that is in no git repository, gates it with the real
``agentgate verify --task`` (in-process), changes it the way an agent might, and gates it again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate.cli.main import main
from pytest_agentgate.state import snapshot

pytestmark = pytest.mark.usefixtures("fresh_state_home")

TESTS = """\
from calc import add


def test_add():
    assert add(1, 2) == 3


def test_add_negative():
    assert add(-1, -2) == -3
"""
# A build gate only: what is judged here is the change, not the tests' run.
CONFIG = """\
profile: strict
gates:
  build:
    command: python -c pass
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "calc-project"
    (root / "calc").mkdir(parents=True)
    (root / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TESTS)
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n')
    (root / "agentgate.yml").write_text(CONFIG)
    monkeypatch.chdir(root)
    # No repository above it either: the project's folder is what is gated.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return root


def verify(capsys: pytest.CaptureFixture[str], task: str | None = "task-1") -> dict[str, Any]:
    main(["verify", "--format", "json", *(["--task", task] if task else [])])
    out, err = capsys.readouterr()
    assert out, f"no verdict; stderr: {err}"
    verdict: dict[str, Any] = json.loads(out)
    return verdict


def integrity(verdict: dict[str, Any]) -> dict[str, Any]:
    return next(g for g in verdict["gates"] if g["name"] == "integrity")


def located(verdict: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {(f["code"], f["path"], f["line"]) for f in integrity(verdict)["findings"]}


def test_the_first_verdict_is_the_base_and_a_later_skip_is_found(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = verify(capsys)
    assert integrity(first)["status"] == "pass"
    assert "against the task's first verdict at " in integrity(first)["summary"]
    test_file = project / "tests" / "test_calc.py"
    test_file.write_text(
        "import pytest\n"
        + TESTS.replace("def test_add_negative", "@pytest.mark.skip\ndef test_add_negative")
    )
    shutil.rmtree(project / ".agentgate")  # the project's state is not where the base lives
    second = verify(capsys)
    assert second["status"] == "fail" and integrity(second)["status"] == "fail"
    assert ("skip-added", "tests/test_calc.py", 9) in located(second)


def test_suppressions_removed_tests_and_a_loosened_config_are_found(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verify(capsys)
    (project / "calc" / "__init__.py").write_text(
        "import os  # noqa: F401\n\n\ndef add(a, b):\n    return a + b\n"
    )
    (project / "tests" / "test_calc.py").write_text(TESTS.split("\n\n\ndef test_add_negative")[0])
    (project / "agentgate.yml").write_text(CONFIG.replace("profile: strict", "profile: relaxed"))
    found = located(verify(capsys))
    codes = {code for code, _, _ in found}
    assert ("suppression-added", "calc/__init__.py", 1) in found
    assert "test-removed" in codes
    assert "gate-config-loosened" in codes or "threshold" in codes, found


def test_honest_work_passes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    verify(capsys)
    # A new feature with its test, and the test file moved to a clearer name.
    (project / "calc" / "__init__.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (project / "tests" / "test_calc.py").unlink()
    (project / "tests" / "test_arithmetic.py").write_text(
        TESTS.replace("from calc import add", "from calc import add, sub")
        + "\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
    )
    second = verify(capsys)
    assert integrity(second)["status"] == "pass", integrity(second)["findings"]
    assert second["status"] == "pass"


def test_each_task_has_its_own_base_and_no_task_has_none(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verify(capsys, "task-1")
    (project / "tests" / "test_calc.py").write_text(TESTS.replace("== -3", "== -3  # noqa"))
    assert integrity(verify(capsys, "task-1"))["status"] == "fail"
    # A new task starts from the tree as it is now.
    assert integrity(verify(capsys, "task-2"))["status"] == "pass"
    # No task, no git: nothing to compare with, and no integrity gate.
    assert "integrity" not in [g["name"] for g in verify(capsys, None)["gates"]]


def test_what_the_snapshot_cannot_hold_is_said(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "MAX_FILES", 2)
    verify(capsys)
    main(["verify", "--format", "text", "--task", "task-1"])
    assert "files were too many for the snapshot and are not judged" in capsys.readouterr().out


def test_an_unreadable_snapshot_is_no_base_and_fails(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verify(capsys)
    stored = snapshot._path(project.resolve(), "task-1")
    assert stored.is_file()
    stored.write_text("{not json")
    gate = integrity(verify(capsys))
    assert gate["status"] == "fail"
    assert "snapshot cannot be read or written" in gate["problems"][0]


def test_a_harness_session_outside_git_is_held_to_its_first_stop(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop hook's task is the session: its first stop is the base of every later one."""
    import io
    import sys

    from pytest_agentgate.state import stops

    monkeypatch.setattr(stops, "SAME_STOP_S", 0.0)

    def stop() -> dict[str, Any]:
        event = {"session_id": "s-1", "cwd": str(project), "hook_event_name": "Stop"}
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(event).encode())))
        assert main(["hook", "claude"]) == 0
        answer: dict[str, Any] = json.loads(capsys.readouterr().out)
        return answer

    assert "decision" not in stop()  # the first stop passes: the work is done
    (project / "tests" / "test_calc.py").write_text(TESTS.replace("== -3", "== -3  # noqa"))
    blocked = stop()
    assert blocked["decision"] == "block"
    assert "tests/test_calc.py:9 suppression-added" in blocked["reason"]


WEAKENED = TESTS.replace("    assert add(-1, -2) == -3\n", "    pass\n")


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_snapshot_deleted_or_replaced_is_no_base_not_a_fresh_one(
    project: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """The cheap way to a clean base: weaken a test, then delete (or rewrite) the snapshot in
    the user's state directory so the next verdict takes the weakened tree as its base."""
    verify(capsys)
    (project / "tests" / "test_calc.py").write_text(WEAKENED)
    stored = snapshot._path(project.resolve(), "task-1")
    if how == "deleted":
        stored.unlink()
    else:
        files, _ = snapshot.take(project)
        stored.write_text(json.dumps({"root": str(project), "made_at": 0, "files": files}))
    gate = integrity(verify(capsys))
    assert gate["status"] == "fail"
    problem = gate["problems"][0]
    what = "is gone" if how == "deleted" else "is not the one the task's first verdict took"
    assert f"the snapshot of task task-1's first verdict ({stored}) {what}" in problem
    assert "agentgate reset --task task-1" in problem


def test_a_person_resets_the_task_and_its_next_verdict_takes_a_new_base(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verify(capsys)
    snapshot._path(project.resolve(), "task-1").unlink()
    assert integrity(verify(capsys))["status"] == "fail"
    capsys.readouterr()
    assert main(["reset", "--task", "task-1"]) == 0
    assert "cleared task task-1 (recorded" in capsys.readouterr().out
    again = verify(capsys)
    assert integrity(again)["status"] == "pass"
    assert any("reset by" in n for n in again["notices"]), again["notices"]


def test_deleting_the_projects_state_keeps_the_snapshot_as_the_base(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verify(capsys)
    shutil.rmtree(project / ".agentgate")
    (project / "tests" / "test_calc.py").write_text(WEAKENED)
    assert ("assertion-removed", "tests/test_calc.py", 8) in located(verify(capsys))


def test_a_session_start_takes_the_snapshot_before_the_agent_edits_anything(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside git the first stop's snapshot would hold whatever the agent did before it: the
    session-start hook takes it when the session starts (harness/start.py)."""
    import io
    import sys

    from pytest_agentgate.state import stops

    monkeypatch.setattr(stops, "SAME_STOP_S", 0.0)

    def hook(session: str, *args: str, **event: str) -> str:
        payload = {"session_id": session, "cwd": str(project), **event}
        monkeypatch.setattr(
            sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))
        )
        assert main(["hook", "claude", *args]) == 0
        return capsys.readouterr().out

    assert hook("s-1", "--session-start", hook_event_name="SessionStart", source="startup") == ""
    assert snapshot._path(project.resolve(), "s-1").is_file()
    (project / "tests" / "test_calc.py").write_text(TESTS.replace("== -3", "== -3  # noqa"))
    blocked = json.loads(hook("s-1", hook_event_name="Stop"))
    assert blocked["decision"] == "block"
    assert "tests/test_calc.py:9 suppression-added" in blocked["reason"]
    # A session that did not start through the hook takes its snapshot at its first stop.
    assert "decision" not in json.loads(hook("s-2", hook_event_name="Stop"))


def test_two_first_verdicts_at_once_take_one_snapshot(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two hooks of one session side by side: a second snapshot never replaces the first while
    the project's digest names the first (the task would have no base)."""
    import threading
    import time

    taken: list[float] = []
    real_take = snapshot.take

    def slow_take(root: Path) -> tuple[dict[str, str], list[str]]:
        taken.append(time.monotonic())
        time.sleep(0.3)
        return real_take(root)

    monkeypatch.setattr(snapshot, "take", slow_take)
    found: list[object] = []
    threads = [
        threading.Thread(target=lambda: found.append(snapshot.load_or_take(project, "t")))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(taken) == 1
    assert all(isinstance(f, dict) for f in found)
    assert isinstance(snapshot.load_or_take(project, "t"), dict)  # its digest is the project's


def test_a_python_file_is_read_as_python_decodes_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A test file the project keeps in Latin-1: in the snapshot, and now, as Python reads it.
    test_file = project / "tests" / "test_calc.py"
    latin = "# -*- coding: latin-1 -*-\n# Tests (r\xe9vis\xe9es)\n" + TESTS
    test_file.write_bytes(latin.encode("latin-1"))
    assert integrity(verify(capsys))["status"] == "pass"
    skipped = latin.replace("from calc", "import pytest\nfrom calc").replace(
        "def test_add_negative", "@pytest.mark.skip\ndef test_add_negative"
    )
    test_file.write_bytes(skipped.encode("latin-1"))
    assert ("skip-added", "tests/test_calc.py", 11) in located(verify(capsys))
    # UTF-7: a return before the assert, a comment to anyone who reads the file as UTF-8.
    hidden = "# -*- coding: utf-7 -*-\n" + TESTS.replace(
        "def test_add():\n", "def test_add():\n    # see INV-42 +AAo-    return\n"
    )
    test_file.write_bytes(hidden.encode("ascii"))
    found = {code for code, _, _ in located(verify(capsys))}
    assert {"source-disguised", "assertion-removed"} <= found


def test_a_snapshot_lock_held_for_good_is_waited_for_a_while_only(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 38: a `flock` of the agent's on the snapshots' lock held every verdict outside
    # git until the hook's time ran out, which lets the agent stop.
    import subprocess
    import sys
    import time

    monkeypatch.setattr(snapshot, "LOCK_WAIT_S", 0.3)
    verify(capsys)
    folder = snapshot._path(project.resolve(), "task-1").parent
    code = (
        "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\nfcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\ntime.sleep(60)\n"
    )
    lock = str(folder / "ledger.lock")
    holder = subprocess.Popen([sys.executable, "-c", code, lock], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        (project / "tests" / "test_calc.py").write_text(WEAKENED)
        started = time.monotonic()
        gate = integrity(verify(capsys))
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()
    assert gate["status"] == "fail"  # the weakened test, judged against the task's snapshot
