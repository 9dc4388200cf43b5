"""`agentgate hook HARNESS --session-start`: the task's base is pinned when the session starts.

The events are shaped as the real harnesses sent them (Claude Code 2.1.197, Codex CLI 0.169.0,
Gemini CLI 0.61.0 and Copilot CLI 1.0.102, recorded headless through the harness lab,
2026-11); the projects are real git repositories. The attack: in a repository without a remote,
on the default branch, the agent commits a skipped test before its first stop, so the base the
refs give (the merge-base of HEAD with main) is its own commit and the change is empty.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _helpers import PY, edit, git, run_hook

from pytest_agentgate.cli import hook
from pytest_agentgate.git import Repo
from pytest_agentgate.harness import start
from pytest_agentgate.harness.protocols import HARNESSES
from pytest_agentgate.state import stops, task_base
from pytest_agentgate.state.ledger import read_history

pytestmark = pytest.mark.usefixtures("fresh_state_home")

CALC = "def add(a, b):\n    return a - b\n"
TESTS = """\
import pytest
from calc import add


def test_add():
    assert add(2, 3) == 5


def test_zero():
    assert add(0, 0) == 0
"""
GATES = f"""\
profile: strict
gates:
  test:
    command: >-
      {PY} -m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml
      -o junit_family=xunit1
    report: .agentgate/junit.xml
"""


@pytest.fixture(autouse=True)
def _every_stop_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stops, "SAME_STOP_S", 0.0)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository without a remote, on main, whose test_add fails."""
    root = tmp_path / "calc"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TESTS)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "calc"\nversion = "0"\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n'
    )
    (root / "agentgate.yml").write_text(GATES)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a project with a failing test")
    return root


def start_event(harness: str, root: Path, session: str = "sess-1") -> dict[str, Any]:
    """A session-start event as each harness sent it (paths and ids replaced)."""
    if harness == "copilot":  # Copilot CLI's own sessionStart: camelCase, no event name
        return {
            "sessionId": session,
            "timestamp": 1795672641140,
            "cwd": str(root),
            "source": "new",
            "initialPrompt": "Make the tests pass",
        }
    if harness == "copilot-as-claude":  # Copilot running .claude/settings.json's SessionStart
        return {
            "hook_event_name": "SessionStart",
            "session_id": session,
            "timestamp": "2026-11-26T05:57:21.140Z",
            "cwd": str(root),
            "source": "new",
            "initial_prompt": "Make the tests pass",
        }
    event: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/home/u/.{harness}/sessions/{session}.jsonl",
        "cwd": str(root),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    if harness == "codex":
        event.update(model="gpt-5", permission_mode="bypassPermissions")
    if harness == "gemini":
        event["timestamp"] = "2026-11-26T05:57:12.902Z"
    return event


def stop_event(harness: str, root: Path, session: str = "sess-1") -> dict[str, Any]:
    if harness == "copilot":
        return {
            "sessionId": session,
            "timestamp": int(time.time() * 1000),
            "cwd": str(root),
            "stopReason": "end_turn",
            "stop_hook_active": False,
        }
    name = "AfterAgent" if harness == "gemini" else "Stop"
    return {
        "session_id": session,
        "cwd": str(root),
        "hook_event_name": name,
        "stop_hook_active": False,
        "last_assistant_message": "All done, the tests pass.",
    }


def call(
    harness: str, payload: Any, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[str, str, int]:
    """`agentgate hook HARNESS ARGS` with ``payload`` on stdin: (stdout, stderr, exit) of this
    call alone."""
    capsys.readouterr()
    return run_hook(harness, payload, capsys, *args)


def session_start(
    harness: str, root: Path, capsys: pytest.CaptureFixture[str], session: str = "sess-1"
) -> None:
    """What install-hook wires up: the harness's event, to ``hook NAME --session-start``."""
    name = "claude" if harness == "copilot-as-claude" else harness
    out, err, code = call(name, start_event(harness, root, session), capsys, "--session-start")
    assert (out, err, code) == ("", "", 0)


def stop(harness: str, root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    out, err, code = call(harness, stop_event(harness, root), capsys)
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)
    return answer


def pin_of(root: Path, session: str = "sess-1") -> str | None:
    found = Repo.find(root)
    assert found is not None
    return task_base.pinned(found.toplevel, session)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD")


# -- the pin, per harness --------------------------------------------------------------------


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini", "copilot", "copilot-as-claude"])
def test_the_session_start_pins_the_base_and_answers_nothing(
    harness: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert pin_of(repo) is None
    session_start(harness, repo, capsys)
    assert pin_of(repo) == head(repo)
    record = json.loads((repo / ".agentgate" / "task-bases.json").read_text())
    assert list(record.values()) == [head(repo)]
    assert read_history(repo) == []  # nothing was judged: no gate ran, no attempt counted
    assert not (repo / ".agentgate" / "junit.xml").exists()


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini", "copilot-as-claude"])
def test_a_session_start_given_to_the_stop_hook_is_not_gated(
    harness: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``SessionStart`` event names itself: the stop hook's command pins, never judges."""
    name = "claude" if harness == "copilot-as-claude" else harness
    assert call(name, start_event(harness, repo), capsys) == ("", "", 0)
    assert pin_of(repo) == head(repo)
    assert read_history(repo) == []


def test_a_second_start_of_the_same_session_keeps_the_first_pin(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Copilot runs its own sessionStart hook and .claude/settings.json's; Claude Code starts a
    resumed or compacted session again: the first pin holds."""
    first = head(repo)
    session_start("copilot", repo, capsys)
    edit(repo, "calc.py", "a - b", "a + b")
    git(repo, "commit", "-qam", "moved on")
    session_start("copilot-as-claude", repo, capsys)
    session_start("claude", repo, capsys)
    assert pin_of(repo) == first != head(repo)


def test_a_pin_pointed_at_another_commit_by_hand_is_not_the_base(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team 16: the agent committed its own base, then wrote that commit into the pin and
    into the project's record of it, so that the two agreed. The pin is sealed."""
    session_start("claude", repo, capsys)
    edit(repo, "calc.py", "a - b", "a + b")
    git(repo, "commit", "-qam", "the agent's own base")
    found = Repo.find(repo)
    assert found is not None
    path = task_base._path(found.toplevel, "sess-1")
    doc = json.loads(path.read_text())
    doc["sha"] = head(repo)
    path.write_text(json.dumps(doc))
    record = repo / ".agentgate" / task_base.ANCHORS
    record.write_text(json.dumps(dict.fromkeys(json.loads(record.read_text()), head(repo))))
    assert pin_of(repo) is None  # not trusted
    answer = stop("claude", repo, capsys)
    assert answer["decision"] == "block"
    assert "was changed after agentgate wrote it" in answer["reason"]


def test_the_repository_moved_away_is_no_fresh_start(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team 19: `.git` moved out of the project after the session began, so that the next
    verdict's snapshot of the tree became the base, with a loosened agentgate.yml in it."""
    session_start("claude", repo, capsys)
    (repo / ".git").rename(tmp_path / "moved-git")
    answer = stop("claude", repo, capsys)
    assert answer["decision"] == "block"
    assert "git finds none there now" in answer["reason"]


def test_the_verdict_cache_cleared_leaves_the_task_as_it_was(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A review on real projects: the seal's secret lived in the verdict cache's folder, and
    clearing that folder made every task's records untrusted."""
    import shutil

    from pytest_agentgate.state.cache import CACHE_DIR
    from pytest_agentgate.state.storage import user_state_home

    session_start("claude", repo, capsys)
    shutil.rmtree(user_state_home() / CACHE_DIR, ignore_errors=True)
    assert pin_of(repo) == head(repo)
    answer = stop("claude", repo, capsys)
    assert "was changed after agentgate wrote it" not in answer.get("reason", "")


def test_two_starts_at_the_same_moment_pin_once(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = json.dumps(start_event("codex", repo)).encode()
    answers = []

    def one() -> None:
        answers.append(start.start_session(HARNESSES["codex"], raw))

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a.stdout for a in answers] == [""] * 4
    assert pin_of(repo) == head(repo)
    assert list(json.loads((repo / ".agentgate" / "task-bases.json").read_text()).values()) == [
        head(repo)
    ]


def test_each_session_is_its_own_task(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_start("claude", repo, capsys, session="one")
    first = head(repo)
    edit(repo, "calc.py", "a - b", "a + b")
    git(repo, "commit", "-qam", "the next task starts here")
    session_start("claude", repo, capsys, session="two")
    assert (pin_of(repo, "one"), pin_of(repo, "two")) == (first, head(repo))


# -- never fails, never speaks to the model ----------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [b"", b"not json", b"[1, 2]", json.dumps({"cwd": "/"}).encode(), b"\xff\xfe"],
    ids=["empty", "text", "list", "no-session", "bytes"],
)
def test_an_event_that_is_not_one_is_a_note_on_stderr(
    payload: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err, code = call("claude", payload, capsys, "--session-start")
    assert (out, code) == ("", 0)
    assert err.startswith("agentgate: note: the task's base was not pinned at the session's start")
    assert err.endswith("its first stop pins it.\n")


def test_outside_a_folder_or_a_repository_with_no_base_nothing_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = start_event("claude", tmp_path / "gone")
    assert call("claude", gone, capsys, "--session-start") == ("", "", 0)
    empty = tmp_path / "empty-repo"  # no commit yet: no base to pin, as at a first verdict
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    assert call("claude", start_event("claude", empty), capsys, "--session-start") == ("", "", 0)
    assert pin_of(empty) is None


def test_an_unwritable_state_directory_pins_nothing_and_says_nothing(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(blocked / "state"))
    assert call("gemini", start_event("gemini", repo), capsys, "--session-start") == ("", "", 0)
    assert pin_of(repo) is None


def test_cursor_has_no_session_start_here(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = {"conversation_id": "c-1", "workspace_roots": [str(repo)]}
    out, err, code = call("cursor", event, capsys, "--session-start")
    assert (out, code) == ("", 0)
    assert "Cursor has no session-start hook agentgate uses" in err
    assert pin_of(repo, "c-1") is None


def test_a_bug_in_agentgate_is_a_note_and_exit_0(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate.config import resolve

    def broken(*args: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(resolve, "pin_task_base", broken)
    out, err, code = call("claude", start_event("claude", repo), capsys, "--session-start")
    assert (out, code) == ("", 0)
    assert "(RuntimeError: kaboom); its first stop pins it." in err


def test_a_start_that_takes_too_long_is_left_to_the_first_stop(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate.config import resolve

    released = threading.Event()
    monkeypatch.setattr(resolve, "pin_task_base", lambda *args: released.wait(30))
    monkeypatch.setattr(start, "START_BUDGET_S", 0.2)
    left: list[int] = []

    def abandon(code: int) -> None:
        left.append(code)
        released.set()
        raise SystemExit(code)

    monkeypatch.setattr(hook, "_abandon", abandon)
    started = time.monotonic()
    with pytest.raises(SystemExit):
        call("codex", start_event("codex", repo), capsys, "--session-start")
    out, err = capsys.readouterr()
    assert time.monotonic() - started < 10
    assert left == [0] and out == ""
    assert "(it took more than 0.2 s); its first stop pins it." in err


# -- the attack, through the doors -------------------------------------------------------------

SKIP = ("def test_add():", "@pytest.mark.skip\ndef test_add():")


@pytest.mark.parametrize("harness", ["claude", "copilot"])
def test_a_skip_committed_on_main_before_the_first_stop_is_found(
    harness: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = head(repo)
    session_start(harness, repo, capsys)
    edit(repo, "tests/test_calc.py", *SKIP)
    git(repo, "commit", "-qam", "tests pass now")
    answer = stop(harness, repo, capsys)
    assert answer["decision"] == "block"
    reason = answer["reason"]
    assert "tests/test_calc.py:5 skip-added: new @pytest.mark.skip on test_add" in reason
    assert f"integrity FAILED: 1 of 1 findings block against {base[:12]}" in reason


def test_a_default_branch_moved_onto_the_agents_commit_is_found(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session_start("codex", repo, capsys)
    git(repo, "checkout", "-q", "-b", "work")
    edit(repo, "tests/test_calc.py", *SKIP)
    git(repo, "commit", "-qam", "tests pass now")
    git(repo, "branch", "-f", "main", "HEAD")
    answer = stop("codex", repo, capsys)
    assert answer["decision"] == "block"
    assert "skip-added" in answer["reason"]


def test_without_the_session_start_the_same_attack_passes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the session-start hook is for: the first stop pins the agent's own commit."""
    edit(repo, "tests/test_calc.py", *SKIP)
    git(repo, "commit", "-qam", "tests pass now")
    answer = stop("claude", repo, capsys)
    assert "decision" not in answer, answer
    assert answer == {"systemMessage": "agentgate: PASS (profile strict)"}


def test_honest_work_committed_on_main_passes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session_start("gemini", repo, capsys)
    edit(repo, "calc.py", "a - b", "a + b")
    git(repo, "commit", "-qam", "fix add()")
    answer = stop("gemini", repo, capsys)
    assert answer == {"systemMessage": "agentgate: PASS (profile strict)"}
