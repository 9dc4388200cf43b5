"""`agentgate hook HARNESS`: golden events in, the exact answer and exit code out.

The events are shaped as the real harnesses send them (Claude Code, Codex, Gemini CLI and
Copilot CLI recorded headless, 2026-11; Cursor from its published protocol). The projects are
real folders with real gate commands; only the harness is played by the test.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _helpers import run_hook

from pytest_agentgate.config.model import Config
from pytest_agentgate.harness import door
from pytest_agentgate.harness.protocols import ANSWER_KEYS, HARNESSES, HookEvent
from pytest_agentgate.state import stops
from pytest_agentgate.state.ledger import read_history
from pytest_agentgate.verdict import Finding, GateResult, Verdict

pytestmark = pytest.mark.usefixtures("fresh_state_home")

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
PASSING = 'gates:\n  build:\n    command: python -c "pass"\n'
FAILING = "gates:\n  build:\n    command: python -c \"import sys; print('boom'); sys.exit(1)\"\n"


def project(tmp_path: Path, config: str, *, name: str = "proj") -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "agentgate.yml").write_text("profile: strict\n" + config)
    return root


def event(harness: str, root: Path, *, session: str = "sess-1", **extra: Any) -> dict[str, Any]:
    """A stop event as each harness sends it."""
    if harness == "copilot":
        base: dict[str, Any] = {
            "sessionId": session,
            "timestamp": 1795461086950,
            "cwd": str(root),
            "transcriptPath": None,
            "stopReason": "end_turn",
            "stop_hook_active": False,
        }
    elif harness == "cursor":
        base = {
            "conversation_id": session,
            "generation_id": "gen-1",
            "hook_event_name": "stop",
            "workspace_roots": [str(root)],
            "status": "completed",
            "loop_count": 0,
        }
    elif harness == "gemini":
        base = {
            "session_id": session,
            "cwd": str(root),
            "hook_event_name": "AfterAgent",
            "timestamp": "2026-11-23T19:11:04.567Z",
            "prompt": "Make the tests pass",
            "stop_hook_active": False,
        }
    else:
        base = {
            "session_id": session,
            "cwd": str(root),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "permission_mode": "default",
        }
        if harness == "codex":
            base.update(turn_id="turn-1", model="gpt-5")
    base = {k: v for k, v in base.items() if v is not None}
    base.update(extra)
    return base


def call(
    harness: str, payload: Any, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[Any, str, int]:
    """Run `agentgate hook HARNESS ARGS` with ``payload`` on stdin: (stdout JSON, stderr,
    exit)."""
    out, err, code = run_hook(harness, payload, capsys, *args)
    lines = out.splitlines()
    assert len(lines) == 1, f"stdout must be the answer alone, got {out!r}"
    return json.loads(lines[0]), err, code


@pytest.fixture(autouse=True)
def _every_stop_is_new(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call in these tests is a new stop unless a test says otherwise."""
    monkeypatch.setattr(stops, "SAME_STOP_S", 0.0)


# -- fail: block with the continuation text ------------------------------------------------------


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini", "copilot"])
def test_a_failing_gate_blocks_with_the_continuation(
    harness: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING)
    answer, err, code = call(harness, event(harness, root), capsys)
    assert (code, err) == (0, "")
    assert answer["decision"] == "block"
    assert answer["reason"].startswith("COMPLETION REJECTED (attempt 1 of 3)")
    assert "build FAILED" in answer["reason"]
    if harness == "copilot":  # Copilot shows no systemMessage: the block alone
        assert set(answer) == {"decision", "reason"}
    else:
        assert answer["systemMessage"] == "agentgate: FAIL, attempt 1 of 3 (failed: build)"
    assert set(answer) <= ANSWER_KEYS  # Codex drops a block with any other key
    history = read_history(root)
    assert [(h["status"], h["task"]) for h in history] == [("fail", "sess-1")]


def test_a_file_name_that_is_not_utf8_does_not_let_the_agent_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A failing test in `tests/test_caf\xe9.py` (a Latin-1 name): the task's snapshot could
    # not be written, and the agent was let go with agentgate's internal error. (pytest itself
    # cannot write its JUnit report for that name: the test gate fails for want of one.)
    root = project(
        tmp_path,
        "gates:\n  test:\n    command: python -m pytest -q -p no:cacheprovider"
        " --junitxml=.agentgate/junit.xml\n    report: .agentgate/junit.xml\n",
    )
    (root / "tests").mkdir()
    with open(os.fsencode(root / "tests") + b"/test_caf\xe9.py", "w") as file:
        file.write("def test_price():\n    assert 1 == 2\n")
    answer, err, code = call("claude", event("claude", root), capsys)
    assert (code, err) == (0, "")
    assert answer["decision"] == "block"
    assert "test FAILED: no usable test report" in answer["reason"]


@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_an_answer_naming_a_file_that_is_not_utf8_can_be_written(harness: str) -> None:
    answer = HARNESSES[harness].block("fix tests/test_caf\udce9.py", "agentgate: FAIL")
    sent = answer.stdout.encode("utf-8").decode("utf-8")  # strict: a stream can carry it
    assert "tests/test_caf\udce9.py" in "".join(json.loads(sent).values())


def test_cursor_is_sent_back_with_a_followup_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING)
    answer, _, code = call("cursor", event("cursor", root), capsys)
    assert code == 0
    assert list(answer) == ["followup_message"]
    assert answer["followup_message"].startswith("COMPLETION REJECTED (attempt 1 of 3)")


def test_the_claim_is_the_final_message_and_the_task_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING)
    payload = event("claude", root, session="abc", last_assistant_message="All done, build passes.")
    answer, _, _ = call("claude", payload, capsys)
    assert 'You said: "All done, build passes."' in answer["reason"]
    assert read_history(root)[-1]["task"] == "abc"


# -- pass: allow -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("harness", "expected"),
    [
        ("claude", {"systemMessage": "agentgate: PASS (profile strict)"}),
        ("codex", {"systemMessage": "agentgate: PASS (profile strict)"}),
        ("gemini", {"systemMessage": "agentgate: PASS (profile strict)"}),
        ("copilot", {}),
        ("cursor", {}),
    ],
)
def test_a_pass_lets_the_agent_stop(
    harness: str, expected: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, PASSING)
    answer, err, code = call(harness, event(harness, root), capsys)
    assert (answer, err, code) == (expected, "", 0)
    assert read_history(root)[-1]["status"] == "pass"


# -- escalate: allow, and tell the user where the report is -------------------------------------


def test_a_pass_names_what_the_integrity_gate_left_for_a_reviewer(tmp_path: Path) -> None:
    # Red team 33: a test's expectation changed to agree with the code is a notice, never a
    # block (the old expectation may have been the wrong one): the user sees it beside the pass.
    notes = [
        Finding("...", "tests/test_tax.py", 20, "expectation-changed", severity="warning"),
        *(
            Finding("...", f"t{n}.py", None, "test-removed-with-feature", severity="warning")
            for n in range(3)
        ),
    ]
    integrity = GateResult("integrity", "integrity", "pass", "4 findings", findings=notes)
    verdict = Verdict("pass", "strict", [integrity])
    event = HookEvent("claude", "s", str(tmp_path), None, None)
    outcome = door._outcome(verdict, Config(root=tmp_path), event)
    assert outcome.text == (
        "agentgate: PASS (profile strict); for a reviewer: expectation-changed at "
        "tests/test_tax.py:20, test-removed-with-feature at t0.py, test-removed-with-feature "
        "at t1.py and 1 more (`agentgate verify` shows why)"
    )
    quiet = Verdict("pass", "strict", [GateResult("integrity", "integrity", "pass", "none")])
    assert door._outcome(quiet, Config(root=tmp_path), event).text == (
        "agentgate: PASS (profile strict)"
    )


def escalated(
    tmp_path: Path, harness: str, capsys: pytest.CaptureFixture[str]
) -> tuple[Any, str, int, Path]:
    root = project(tmp_path, FAILING + "attempts:\n  max: 1\n")
    first, _, _ = call(harness, event(harness, root), capsys)
    assert "followup_message" in first or first["decision"] == "block"
    answer, err, code = call(harness, event(harness, root), capsys)
    return answer, err, code, root


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini"])
def test_an_escalation_lets_the_agent_stop_and_says_where_the_report_is(
    harness: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, err, code, root = escalated(tmp_path, harness, capsys)
    report = root / ".agentgate" / "escalations" / "sess-1.md"
    assert (code, err) == (0, "")
    assert list(answer) == ["systemMessage"]
    assert answer["systemMessage"] == (
        "agentgate: a human is needed. The gate still fails (build) and the agent has used its "
        "attempts, or hit something only a person can fix. The agent was allowed to stop. "
        f"Report: {report}"
    )
    assert report.is_file()
    assert read_history(root)[-1]["status"] == "escalate"


def test_copilot_is_told_on_stderr_with_exit_2_which_lets_it_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, err, code, root = escalated(tmp_path, "copilot", capsys)
    assert (answer, code) == ({}, 2)
    assert err.startswith("agentgate: a human is needed.")
    assert str(root / ".agentgate" / "escalations" / "sess-1.md") in err


def test_cursor_escalation_is_an_empty_answer_and_a_note_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, err, code, _ = escalated(tmp_path, "cursor", capsys)
    assert (answer, code) == ({}, 0)
    assert "a human is needed" in err


@pytest.mark.parametrize(("harness", "cap"), [("claude", 8), ("copilot", 8), ("cursor", 8)])
def test_the_attempt_budget_ends_the_loop_before_the_harness_cap(
    harness: str, cap: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING + "attempts:\n  max: 20\n  global_max: 30\n")
    answers = [call(harness, event(harness, root), capsys)[0] for _ in range(cap)]
    blocked = [a for a in answers if "decision" in a or "followup_message" in a]
    assert len(blocked) == cap - 1  # the harness would end the loop by itself at block `cap`
    first = answers[0].get("reason") or answers[0].get("followup_message")
    assert first.startswith(f"COMPLETION REJECTED (attempt 1 of {cap - 1})")
    assert "decision" not in answers[-1] and "followup_message" not in answers[-1]
    assert read_history(root)[-1]["status"] == "escalate"


def test_harnesses_without_a_cap_keep_the_configured_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING + "attempts:\n  max: 9\n  global_max: 30\n")
    answers = [call("codex", event("codex", root), capsys)[0] for _ in range(9)]
    assert all(a["decision"] == "block" for a in answers)
    assert answers[-1]["reason"].startswith("COMPLETION REJECTED (attempt 9 of 9)")


# -- agentgate's own trouble never traps the agent ----------------------------------------------

BROKEN = "gates:\n  build: [unclosed\n"


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini"])
def test_a_broken_configuration_lets_the_agent_stop_and_says_so(
    harness: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, BROKEN)
    answer, _, code = call(harness, event(harness, root), capsys)
    assert code == 0
    assert list(answer) == ["systemMessage"]
    message = answer["systemMessage"]
    assert message.startswith("agentgate could not gate this stop: its configuration is broken: ")
    assert "agentgate.yml" in message
    assert message.endswith("The agent was allowed to stop, and its work was NOT verified.")


def test_copilot_hears_of_a_broken_configuration_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, BROKEN)
    answer, err, code = call("copilot", event("copilot", root), capsys)
    assert (answer, code) == ({}, 2)
    assert "its configuration is broken" in err


@pytest.mark.parametrize(
    "payload",
    [b"", b"not json", b"[1, 2]", json.dumps({"cwd": "/"}).encode(), b"\xff\xfe"],
    ids=["empty", "text", "list", "no-session", "bytes"],
)
def test_an_event_that_is_not_one_lets_the_agent_stop(
    payload: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, _, code = call("claude", payload, capsys)
    assert code == 0
    assert answer["systemMessage"].startswith("agentgate could not gate this stop: ")
    assert "Is the hook installed for Claude Code?" in answer["systemMessage"]


def test_stdin_nested_too_deeply_is_not_an_event(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by tests_fuzz: the parser's RecursionError was agentgate's own "internal error"."""
    answer, _, code = call("claude", b"[" * 100_000, capsys)
    assert code == 0
    assert answer["systemMessage"].startswith(
        "agentgate could not gate this stop: the hook's stdin is JSON nested too deeply to read. "
        "Is the hook installed for Claude Code?"
    )


@pytest.mark.parametrize("stamp", ["1" + "0" * 400, "-1" + "0" * 400], ids=["huge", "negative"])
def test_a_timestamp_that_is_no_time_still_gates_the_stop(
    stamp: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by tests_fuzz: 10**400 overflowed a float, and the agent stopped unverified."""
    root = project(tmp_path, FAILING)
    payload = json.dumps(event("codex", root, timestamp="STAMP")).replace('"STAMP"', stamp)
    answer, _, code = call("codex", payload.encode(), capsys)
    assert code == 0
    assert answer["decision"] == "block" and "build FAILED" in answer["reason"]


def test_a_missing_cwd_lets_the_agent_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer, _, code = call("claude", event("claude", tmp_path / "gone"), capsys)
    assert code == 0
    assert "is not a folder" in answer["systemMessage"]


def test_a_bug_in_agentgate_lets_the_agent_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(door, "gate_stop", broken)
    root = project(tmp_path, FAILING)
    answer, _, code = call("gemini", event("gemini", root), capsys)
    assert code == 0
    message = answer["systemMessage"]
    assert "agentgate could not gate this stop: agentgate: internal error: RuntimeError" in message
    assert "kaboom" in message and "NOT verified" in message


def test_running_out_of_the_budget_stops_the_gates_and_lets_the_agent_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(
        tmp_path,
        'gates:\n  build:\n    command: python -c "import time; time.sleep(60)"\n'
        "hook:\n  budget: 10\n",
    )
    monkeypatch.setattr(door, "ANSWER_RESERVE_S", 9.7)  # the commands get 0.3 s of the 10
    answer, _, code = call("claude", event("claude", root), capsys)
    assert code == 0
    assert answer["systemMessage"] == (
        "agentgate could not gate this stop: its time budget of 10 s ran out before build "
        "finished; they were stopped. Make them faster, or raise `hook: {budget: N}` in "
        "agentgate.yml (and the harness's hook timeout, which `agentgate install-hook` sets "
        "above it). The agent was allowed to stop, and its work was NOT verified."
    )
    assert read_history(root) == []  # nothing judged, no attempt counted


def test_a_gate_the_change_made_slower_than_the_budget_is_judged_not_let_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 55: a new test that sleeps past the hook's budget made every stop agentgate's
    # trouble, which lets the agent go. Where an earlier verdict saw the gate finish within the
    # budget, what is new made it slow: judged, and counted as an attempt.
    sleep = tmp_path / "sleep-seconds"
    sleep.write_text("0")
    root = project(
        tmp_path,
        'gates:\n  build:\n    command: >-\n      python -c "import time, pathlib;'
        f" time.sleep(float(pathlib.Path('{sleep}').read_text()))\"\n"
        "hook:\n  budget: 10\n",
    )
    monkeypatch.setattr(door, "ANSWER_RESERVE_S", 8.0)  # the commands get 2 s of the 10
    answer, _, _ = call("claude", event("claude", root, session="s-1"), capsys)
    assert answer == {"systemMessage": "agentgate: PASS (profile strict)"}
    sleep.write_text("60")
    answer, _, code = call("claude", event("claude", root, session="s-2"), capsys)
    assert (answer["decision"], code) == ("block", 0)
    assert "COMPLETION REJECTED (attempt 1 of 3)" in answer["reason"]
    assert "did not finish within the stop hook's budget of 10 s" in answer["reason"]
    assert "an earlier verdict of this project saw it finish in 0." in answer["reason"]
    assert [(h["task"], h["status"]) for h in read_history(root)] == [
        ("s-1", "pass"),
        ("s-2", "fail"),
    ]


def test_a_gate_that_finished_failing_is_judged_though_another_ran_out_of_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 56: a slow gate of the change's own beside a failing one made every stop
    # agentgate's trouble, which lets the agent go. The failing gate finished: the work is not
    # done whatever the slow one would say. Judged, counted; the slow one is said stopped.
    root = project(
        tmp_path,
        FAILING
        + '  docs:\n    kind: custom\n    command: python -c "import time; time.sleep(60)"\n'
        "hook:\n  budget: 10\n",
    )
    monkeypatch.setattr(door, "ANSWER_RESERVE_S", 8.0)  # the commands get 2 s of the 10
    answer, _, code = call("claude", event("claude", root), capsys)
    assert (answer["decision"], code) == ("block", 0)
    assert "COMPLETION REJECTED (attempt 1 of 3)" in answer["reason"]
    assert "build FAILED" in answer["reason"]
    assert (
        "did not finish within the stop hook's budget of 10 s and was stopped" in answer["reason"]
    )
    assert "beside a gate that finished failing" in answer["reason"]
    assert [h["status"] for h in read_history(root)] == ["fail"]


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "Z"
    return stat[stat.rfind(")") + 2 :].split()[0]


def test_a_budget_below_the_minimum_is_a_configuration_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, PASSING + "hook:\n  budget: 1\n")
    answer, _, _ = call("claude", event("claude", root), capsys)
    assert "hook.budget" in answer["systemMessage"] or "budget" in answer["systemMessage"]
    assert "configuration is broken" in answer["systemMessage"]


def test_cursor_aborted_or_errored_turns_are_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING)
    answer, _, code = call("cursor", event("cursor", root, status="aborted"), capsys)
    assert (answer, code) == ({}, 0)
    assert read_history(root) == []


# -- one stop, one attempt ----------------------------------------------------------------------


def test_the_same_stop_called_twice_counts_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stops, "SAME_STOP_S", 60.0)
    root = project(tmp_path, FAILING)
    payload = event("claude", root, last_assistant_message="Done.")
    first, _, _ = call("claude", payload, capsys)
    again, _, _ = call("claude", payload, capsys)
    assert again == first
    assert len(read_history(root)) == 1


def test_copilot_running_its_hook_and_the_claude_one_counts_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copilot also runs .claude/settings.json's Stop hook, with Claude-shaped stdin."""
    monkeypatch.setattr(stops, "SAME_STOP_S", 60.0)
    root = project(tmp_path, FAILING)
    as_claude = {  # as Copilot CLI 1.0.102 sent it, beside its own agentStop call
        "hook_event_name": "Stop",
        "session_id": "cop-1",
        "timestamp": "2026-11-24T00:19:31.872Z",
        "cwd": str(root),
        "stop_reason": "end_turn",
        "stop_hook_active": False,
    }
    own = event("copilot", root, session="cop-1", timestamp=1795479571872)
    first, _, _ = call("copilot", own, capsys)
    second, _, _ = call("claude", as_claude, capsys)
    assert first["reason"] == second["reason"]
    assert len(read_history(root)) == 1
    # Its next stop, a fraction of a second later, is a new one.
    later = event("copilot", root, session="cop-1", timestamp=1795479572187)
    third, _, _ = call("copilot", later, capsys)
    assert third["reason"].startswith("COMPLETION REJECTED (attempt 2 of 3)")


def test_two_calls_at_the_same_moment_count_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stops, "SAME_STOP_S", 60.0)
    root = project(tmp_path, FAILING)
    raw = json.dumps(event("codex", root)).encode()
    answers: list[str] = []

    def one() -> None:
        answers.append(door.handle(HARNESSES["codex"], raw).stdout)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 2 and answers[0] == answers[1]
    assert len(read_history(root)) == 1


def test_a_new_stop_after_the_window_counts_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING)
    payload = event("claude", root, last_assistant_message="Done.")
    call("claude", payload, capsys)
    again, _, _ = call("claude", payload, capsys)
    assert again["reason"].startswith("COMPLETION REJECTED (attempt 2 of 3)")


def test_gemini_claim_is_the_new_reply_not_every_reply_so_far(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING)
    first = "Everything passes. I will handle the rest in a follow-up PR."
    call("gemini", event("gemini", root, prompt_response=first), capsys)
    second = first + "\nFixed the build; all checks pass now."
    answer, _, _ = call("gemini", event("gemini", root, prompt_response=second), capsys)
    assert 'You said: "Fixed the build; all checks pass now."' in answer["reason"]
    assert "follow-up PR" not in answer["reason"].split("You said:")[1].split("\n")[0]


def test_a_repeated_stop_on_an_unchanged_tree_reuses_the_gates_and_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess

    root = project(
        tmp_path,
        'gates:\n  build:\n    command: >-\n      python -c "import sys;'
        " open('.agentgate/runs', 'a').write('x'); sys.exit(1)\"\n",
    )
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(
            ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )
    first, _, _ = call("claude", event("claude", root), capsys)
    second, _, _ = call("claude", event("claude", root), capsys)
    assert (root / ".agentgate" / "runs").read_text() == "x"  # the command ran once
    assert first["reason"].startswith("COMPLETION REJECTED (attempt 1 of 3)")
    assert second["reason"].startswith("COMPLETION REJECTED (attempt 2 of 3)")


def test_a_record_planted_in_the_project_does_not_let_the_agent_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last stop's record lives outside the project: a pass written into .agentgate/ by the
    agent, for the words it is about to say, is not an answer."""

    monkeypatch.setattr(stops, "SAME_STOP_S", 60.0)
    root = project(tmp_path, FAILING)
    words = "All done."
    forged = {
        "key": stops.stop_key("sess-1", words),
        "answered_at": time.time(),
        "outcome": {
            "kind": "pass",
            "text": "agentgate: PASS (profile strict)",
            "status_line": None,
        },
        "replies": None,
    }
    import hashlib

    # Where an older agentgate kept it, and where a reader of its source would put it.
    folder = root / ".agentgate" / "stops" / hashlib.sha256(b"sess-1").hexdigest()[:32]
    folder.mkdir(parents=True)
    (folder / "last-stop.json").write_text(json.dumps(forged))
    answer, _, _ = call("claude", event("claude", root, last_assistant_message=words), capsys)
    assert answer["decision"] == "block"


def test_a_pass_recorded_in_the_users_folder_is_not_answered_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team 16: a process of the agent's kept a record of a passing stop fresh where the
    door keeps it, for the words the agent was about to say. Only a block is answered again."""
    monkeypatch.setattr(stops, "SAME_STOP_S", 60.0)
    root = project(tmp_path, FAILING)
    words = "All done."
    forged = stops.StopRecord(
        stops.stop_key("sess-1", words),
        time.time(),
        {"kind": "pass", "text": "agentgate: PASS (profile strict)", "status_line": None},
    )
    with stops.session_stops(root, "sess-1") as book:
        assert book is not None
        book.write(forged)
    answer, _, _ = call("claude", event("claude", root, last_assistant_message=words), capsys)
    assert answer["decision"] == "block"


def test_a_stop_lock_held_by_another_program_is_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team 16: a process of the agent's held the session's stop lock until the hook's time
    ran out (which lets the agent stop); red team 18 put `agentgate hook` in its command line.
    Only agentgate gating the same stop is waited for."""
    import subprocess
    import sys

    monkeypatch.setattr(stops, "STOP_LOCK_PATIENCE_S", 0.2)
    root = project(tmp_path, FAILING)
    with stops.session_stops(root, "sess-1"):
        pass  # the session's folder, as its first stop makes it
    folder = next((stops.user_state_home() / stops.STOPS_DIR).glob("*/*"))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            "f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True)\n"
            "time.sleep(60)",
            str(folder / "ledger.lock"),
            "agentgate",
            "hook",
            "claude",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        started = time.monotonic()
        answer, _, _ = call("claude", event("claude", root), capsys)
        assert answer["decision"] == "block"
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()


def test_a_stopped_hook_holding_the_stop_lock_is_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team 38: agentgate's own hook for the session, frozen with `kill -STOP` once it held
    the stop lock; every stop waited for it until the hook's time ran out."""
    import signal
    import subprocess
    import sys

    monkeypatch.setattr(stops, "STOP_LOCK_PATIENCE_S", 0.2)
    root = project(tmp_path, FAILING)
    with stops.session_stops(root, "sess-1"):
        pass
    folder = next((stops.user_state_home() / stops.STOPS_DIR).glob("*/*"))
    code = (
        "import fcntl, sys, time\n"
        "f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True)\n"
        "time.sleep(120)"
    )
    lock = str(folder / "ledger.lock")
    # The interpreter agentgate runs on, its command line the hook's: it looks like a stop
    # being gated, until it is stopped.
    holder = subprocess.Popen(
        [sys.executable, "-c", code, lock, "-m", "pytest_agentgate", "hook", "claude"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        holder.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        answer, _, _ = call("claude", event("claude", root), capsys)
        assert answer["decision"] == "block"
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()


# -- the session's project is where it started ---------------------------------------------------


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini", "copilot"])
def test_a_stop_in_another_folder_is_gated_where_the_session_started(
    harness: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The trick: end the turn with the shell in a scratch project whose one gate passes (the
    # stop event's cwd follows the agent's `cd`).
    work = project(tmp_path, FAILING)
    scratch = project(tmp_path, PASSING, name="scratch")
    call(harness, event(harness, work, last_assistant_message="one"), capsys)
    answer, _, _ = call(harness, event(harness, scratch, last_assistant_message="two"), capsys)
    assert answer.get("decision") == "block"
    history = read_history(work)
    assert [v["status"] for v in history] == ["fail", "fail"]
    assert [v["task"] for v in history] == ["sess-1", "sess-1"]
    assert not (scratch / ".agentgate").exists()  # the scratch project was not gated


def test_a_cursor_session_is_gated_in_the_workspace_cursor_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 38: Cursor has no session start, so the first stop seen for a conversation set
    # its folder; the agent piped a stop of its own naming a scratch copy that passes, and the
    # real stop (naming the real workspace) was gated there, and passed.
    work = project(tmp_path, FAILING)
    scratch = project(tmp_path, PASSING, name="scratch")
    forged, _, _ = call("cursor", event("cursor", scratch), capsys)
    assert forged == {}
    answer, _, _ = call("cursor", event("cursor", work, generation_id="gen-2"), capsys)
    assert answer["followup_message"].startswith("COMPLETION REJECTED")
    assert [v["status"] for v in read_history(work)] == ["fail"]


def test_the_sessions_record_edited_or_deleted_still_gates_where_it_started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 16: the record of where the session started, rewritten to point at a scratch
    # copy (or deleted), then the turn ended in that copy. The record is sealed, and the
    # session's task had its base pinned where it began.
    import subprocess

    from pytest_agentgate.state import sessions

    def repository(config: str, name: str) -> Path:
        root = project(tmp_path, config, name=name)
        for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-qm", "base")):
            subprocess.run(
                ["git", "-c", "user.email=a@b", "-c", "user.name=a", *args],
                cwd=root,
                check=True,
                capture_output=True,
            )
        return root

    work = repository(FAILING, "proj")
    scratch = repository(PASSING, "scratch")
    call("claude", event("claude", work, last_assistant_message="one"), capsys)
    record = sessions._path("claude", "sess-1")
    record.write_text(json.dumps({"cwd": str(scratch)}))
    answer, _, _ = call("claude", event("claude", scratch, last_assistant_message="two"), capsys)
    assert answer.get("decision") == "block"
    record.unlink()
    answer, _, _ = call("claude", event("claude", scratch, last_assistant_message="three"), capsys)
    assert answer.get("decision") == "block"
    assert [v["status"] for v in read_history(work)] == ["fail", "fail", "fail"]
    assert not (scratch / ".agentgate").exists()  # the scratch project was not gated


def test_a_stop_whose_folder_is_gone_is_gated_where_the_session_started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = project(tmp_path, FAILING)
    gone = project(tmp_path, PASSING, name="gone")
    call("claude", event("claude", work, last_assistant_message="one"), capsys)
    shutil.rmtree(gone)
    answer, _, _ = call("claude", event("claude", gone, last_assistant_message="two"), capsys)
    assert answer["decision"] == "block"
    assert read_history(work)[-1]["status"] == "fail"


def test_a_new_session_in_another_folder_is_gated_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = project(tmp_path, FAILING)
    other = project(tmp_path, PASSING, name="other")
    call("claude", event("claude", work), capsys)
    answer, _, _ = call("claude", event("claude", other, session="sess-2"), capsys)
    assert answer == {"systemMessage": "agentgate: PASS (profile strict)"}


# -- the ledger's lock held by another process ---------------------------------------------------


def _hold_ledger_lock(root: Path) -> subprocess.Popen[bytes]:
    """`flock .agentgate/ledger.lock sleep 300 &`, as an agent's shell could run it: held once
    this returns."""
    (root / ".agentgate").mkdir()
    lock = root / ".agentgate" / "ledger.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            "f = open(sys.argv[1], 'w')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(300)\n",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    return holder


def test_a_lock_held_for_a_moment_is_waited_for_and_the_attempt_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, FAILING)
    holder = _hold_ledger_lock(root)
    release = threading.Timer(1.0, holder.kill)
    release.start()
    try:
        answer, _, code = call("claude", event("claude", root), capsys)
    finally:
        release.cancel()
        holder.kill()
        holder.wait()
    assert code == 0
    assert answer["decision"] == "block"
    assert answer["reason"].startswith("COMPLETION REJECTED (attempt 1 of 3)")
    assert "not recorded" not in answer["reason"]
    assert [h["status"] for h in read_history(root)] == ["fail"]


def test_a_lock_held_for_good_counts_the_attempts_outside_and_escalates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 38: `flock .agentgate/ledger.lock` for good kept every block unrecorded, so the
    # task never escalated, and the harness's own cap (8 blocks) let the agent go unreported.
    from pytest_agentgate.state import storage

    monkeypatch.setattr(storage, "LEDGER_LOCK_WAIT_S", 0.2)
    root = project(tmp_path, FAILING + "attempts:\n  max: 2\n")
    holder = _hold_ledger_lock(root)
    try:
        first, _, _ = call("claude", event("claude", root, last_assistant_message="a"), capsys)
        second, _, _ = call("claude", event("claude", root, last_assistant_message="b"), capsys)
        third, _, _ = call("claude", event("claude", root, last_assistant_message="c"), capsys)
    finally:
        holder.kill()
        holder.wait()
    assert first["decision"] == "block"
    assert first["reason"].startswith("COMPLETION REJECTED (attempt 1 of 2)")
    assert "ledger.lock is held by process" in first["reason"]
    assert "the attempt was counted outside the project; end that process." in first["reason"]
    assert second["reason"].startswith("COMPLETION REJECTED (attempt 2 of 2)")
    assert "decision" not in third  # attempts used: the next failing stop goes to a human
    assert "a human is needed" in third["systemMessage"]


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini", "cursor"])
def test_half_a_character_in_the_event_is_read_as_a_replacement_character(harness: str) -> None:
    # Red team 38: `"Done \ud83d"` (a string cut inside an emoji) could not be hashed as UTF-8:
    # every stop was an internal error, which lets the agent go.
    key = {"gemini": "prompt_response", "cursor": "text"}.get(harness, "last_assistant_message")
    raw = (
        '{"session_id": "s\\ud800", "conversation_id": "s\\ud800", "cwd": "/tmp", '
        f'"hook_event_name": "Stop", "{key}": "Done \\ud83d", "status": "completed"}}'
    ).encode()
    event = HARNESSES[harness].parse(raw)
    assert "\ufffd" in event.session
    said = [event.session, event.message or "", event.replies or ""]
    "".join(said).encode("utf-8")  # whole characters only: no UnicodeEncodeError


def test_a_gemini_event_past_the_read_limit_is_still_gated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 38: Gemini's event carries every reply of the session; past 8 MiB it was cut,
    # "not JSON", and every later stop let the agent go unverified.
    from pytest_agentgate.harness.protocols import MAX_EVENT_BYTES

    root = project(tmp_path, FAILING)
    document = event("gemini", root, prompt_response='He said "x" ' * (MAX_EVENT_BYTES // 10))
    raw = json.dumps(document).encode()[:MAX_EVENT_BYTES]
    answer, _, _ = call("gemini", raw, capsys)
    assert answer["decision"] == "block", answer
    assert [v["task"] for v in read_history(root)] == ["sess-1"]


# -- the managed settings' Stop hook (Claude Code) -----------------------------------------------
# Claude Code reads its project settings again as they change: an agent that deletes
# .claude/settings.json, or writes `"disableAllHooks": true` there, frees the session it runs
# in (seen in the lab with Claude Code 2.1.197; a managed Stop hook held through both).


def git_project(tmp_path: Path, *, armed: bool, name: str = "proj") -> Path:
    """A repository whose main has one commit: a failing build, and, where ``armed``, agentgate's
    Claude Code hooks in .claude/settings.json as install-hook writes them."""
    root = project(tmp_path, FAILING, name=name)
    if armed:
        from pytest_agentgate.cli.main import main

        old = Path.cwd()
        os.chdir(root)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["install-hook", "claude"]) == 0
        finally:
            os.chdir(old)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True, capture_output=True)
    return root


def test_the_managed_hook_says_nothing_where_the_project_runs_no_agentgate_hook(
    tmp_path: Path, fresh_state_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = git_project(tmp_path, armed=False)
    out, err, code = run_hook("claude", event("claude", root), capsys, "--managed")
    assert (json.loads(out), err, code) == ({}, "", 0)  # allowed, with no word
    assert not (root / ".agentgate").exists()
    assert not fresh_state_home.exists()  # nothing of the session kept: it is not gated
    _, _, code = run_hook("claude", b"not an event", capsys, "--managed")
    assert code == 0


@pytest.mark.parametrize("how", ["deleted", "disabled", "entry-removed"])
def test_the_managed_hook_gates_a_project_whose_settings_the_agent_switched_off(
    how: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = git_project(tmp_path, armed=True)
    settings = root / ".claude" / "settings.json"
    if how == "deleted":
        settings.unlink()
    elif how == "disabled":
        settings.write_text(
            json.dumps({**json.loads(settings.read_text()), "disableAllHooks": True})
        )
    else:
        settings.write_text(json.dumps({"hooks": {}}))
    answer, _, code = call("claude", event("claude", root), capsys, "--managed")
    assert (answer["decision"], code) == ("block", 0)
    assert "COMPLETION REJECTED (attempt 1 of 3)" in answer["reason"]
    assert ".claude/settings.json stop-hook-removed: " in answer["reason"]
    assert [h["status"] for h in read_history(root)] == ["fail"]


def away_from(root: Path, tmp_path: Path, where: str) -> Path:
    """A folder the agent's shell can stop in that is not the project's: a repository of its
    own inside the project, a link in the project that leads out of it, or a deleted folder."""
    if where == "nested-repo":
        folder = root / "scratch"
        folder.mkdir()
        for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "x"]):
            subprocess.run(["git", *args], cwd=folder, env=GIT_ENV, check=True, capture_output=True)
        return folder
    if where == "link-out":
        outside = tmp_path / "outside"
        outside.mkdir()
        (root / "out").symlink_to(outside)
        return root / "out"
    gone = root / "gone"
    gone.mkdir()
    gone.rmdir()
    return gone


@pytest.mark.parametrize("records", ["kept", "deleted", "moved", "unwritable"])
@pytest.mark.parametrize("where", ["nested-repo", "link-out", "deleted"])
def test_the_managed_hook_gates_a_seen_session_wherever_its_shell_stops(
    where: str,
    records: str,
    tmp_path: Path,
    fresh_state_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Red team 56: with agentgate's entry taken out of .claude/settings.json, a stop whose cwd
    # could not be traced to the project (a nested `git init`, a link out, a deleted folder)
    # was answered {}. The session's start is kept in the user's state, and the project's
    # .agentgate/ names the session too: deleting the user's records, or moving the state
    # directory (a project's settings `env` reaches every hook), even where nothing can be
    # written, leaves the project.
    root = git_project(tmp_path, armed=True)
    first, _, _ = call("claude", event("claude", root, last_assistant_message="Done."), capsys)
    assert first["decision"] == "block"
    (root / ".claude" / "settings.json").write_text("{}")
    folder = away_from(root, tmp_path, where)
    if records == "deleted":
        shutil.rmtree(fresh_state_home / "sessions")
        shutil.rmtree(fresh_state_home / "task-bases")
    elif records == "moved":
        monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "another-state"))
    elif records == "unwritable":
        (tmp_path / "a-file").write_text("")
        monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "a-file" / "state"))
    stop = event("claude", folder, last_assistant_message="Done now.")
    answer, _, code = call("claude", stop, capsys, "--managed")
    assert (answer["decision"], code) == ("block", 0), answer
    assert "COMPLETION REJECTED (attempt 2 of 3)" in answer["reason"]
    assert [h["status"] for h in read_history(root)] == ["fail", "fail"]


@pytest.mark.parametrize("where", ["nested-repo", "link-out", "deleted"])
def test_the_managed_hook_says_nothing_wherever_a_session_of_an_unarmed_project_stops(
    where: str, tmp_path: Path, fresh_state_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = git_project(tmp_path, armed=False)
    for folder in (root, away_from(root, tmp_path, where)):
        out, err, code = run_hook("claude", event("claude", folder), capsys, "--managed")
        assert (json.loads(out), err, code) == ({}, "", 0)
    assert not (root / ".agentgate").exists()
    assert not fresh_state_home.exists()


def test_the_managed_and_the_project_hook_count_one_stop_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(stops, "SAME_STOP_S", 5.0)
    root = git_project(tmp_path, armed=True)
    stop = event("claude", root, last_assistant_message="All done.")
    first, _, _ = call("claude", stop, capsys)
    second, _, _ = call("claude", stop, capsys, "--managed")
    assert first == second and first["decision"] == "block"
    assert [h["status"] for h in read_history(root)] == ["fail"]
