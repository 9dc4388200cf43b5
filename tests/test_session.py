"""The session gate and the transcript readers, on transcripts the real harnesses wrote.

The samples in tests/data/transcripts/ come from the real CLIs driven by a scripted model (see
the README there): the agent runs a failing test, edits calc.py, runs a command that fails,
runs the test again (it passes) and ends with "All tests pass. The remaining work on
subtraction can go in a follow-up PR." Longer sessions (loops, thrash, budgets) are built from
the Claude sample's own lines, with new ids.
"""

from __future__ import annotations

import copy
import gc
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import DATA, CliRun, gated_project, only_gate, verify_json

from pytest_agentgate.gates.session import check_claims, claims, deferrals
from pytest_agentgate.reports._io import MAX_COUNT
from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.reports.transcripts import build
from pytest_agentgate.reports.transcripts import read as reader
from pytest_agentgate.reports.transcripts.build import timestamp
from pytest_agentgate.reports.transcripts.read import read_transcript
from pytest_agentgate.verdict import GateResult

Agentgate = Callable[..., CliRun]
TRANSCRIPTS = DATA / "transcripts"
FINAL = (
    "Fixed add in calc.py. All tests pass. The remaining work on subtraction can go in a "
    "follow-up PR."
)
SAMPLES = {
    "claude-code.jsonl": ("claude", "claude-opus-4-8", 360, 200_000),
    "codex-rollout.jsonl": ("codex", "fake-model", 300, 258_400),
    "gemini-chat.jsonl": ("gemini", "gemini-2.5-flash", 300, 1_048_576),
    "copilot-events.jsonl": ("copilot", "fake-model", 300, 128_000),
}


# -- reading the harnesses' transcripts --------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_harness_transcript_is_read_the_same_way(name: str) -> None:
    harness, model, tokens, window = SAMPLES[name]
    session = read_transcript(TRANSCRIPTS / name)
    assert (session.harness, session.model, session.tokens) == (harness, model, tokens)
    assert session.context_window == window and session.context_tokens == 60
    assert session.final_message == FINAL
    assert session.skipped == 0 and session.duration_s is not None
    assert 0 < session.duration_s < 5
    shell = [c for c in session.calls if c.command is not None]
    assert [(c.command, c.failed) for c in shell][-2:] == [
        ("cat missing-notes.txt", True),
        ("python3 test_calc.py", False),
    ]
    assert shell[0].command == "python3 test_calc.py" and shell[0].failed is True
    edits = [c for c in session.calls if c.paths]
    assert [c.paths for c in edits] == [("/home/user/project/calc.py",)]
    assert edits[0].failed is False


def test_tokens_are_counted_once_per_message() -> None:
    """Claude writes a message with text and a tool call as two lines with one id and one
    usage; Gemini writes a message again when its tool calls are added."""
    claude = (TRANSCRIPTS / "claude-code.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"usage"' in line for line in claude) == 7
    assert read_transcript(TRANSCRIPTS / "claude-code.jsonl").tokens == 6 * 60
    gemini = (TRANSCRIPTS / "gemini-chat.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"type":"gemini"' in line for line in gemini) == 9  # 4 written twice
    assert read_transcript(TRANSCRIPTS / "gemini-chat.jsonl").tokens == 5 * 60


def test_a_denied_edit_is_a_failed_call() -> None:
    session = read_transcript(TRANSCRIPTS / "claude-code-edit-denied.jsonl")
    edit = next(c for c in session.calls if c.name == "Edit")
    assert edit.failed is True
    assert [c.failed for c in session.calls if c.command] == [True, True, True]


def test_the_content_decides_the_harness_not_the_door(tmp_path: Path) -> None:
    # Copilot runs Claude's hooks with its own events.jsonl as transcript_path.
    session = read_transcript(TRANSCRIPTS / "copilot-events.jsonl", harness="claude")
    assert session.harness == "copilot"


def test_a_transcript_being_written_is_read_up_to_its_last_whole_line(tmp_path: Path) -> None:
    text = (TRANSCRIPTS / "claude-code.jsonl").read_text(encoding="utf-8")
    cut = tmp_path / "lagging.jsonl"
    cut.write_text(text[: len(text) - 200], encoding="utf-8")  # the last line is half written
    session = read_transcript(cut)
    assert session.skipped == 1
    assert session.notes == ["1 lines of the transcript were not JSON and were skipped"]
    assert session.final_message is None or "follow-up" not in session.final_message
    assert len(session.calls) == 5


def test_lines_with_only_a_time_are_skipped_but_the_last_one_ends_the_session(
    tmp_path: Path,
) -> None:
    """Claude's attachment and last-prompt lines are not parsed (a third of a long session's
    bytes); the session still ends at the last line's time, whatever that line is."""
    text = (TRANSCRIPTS / "claude-code.jsonl").read_text(encoding="utf-8")
    attachment = next(line for line in text.splitlines() if '"attachment":{' in line[:160])
    late = json.loads(attachment)
    late["timestamp"] = "2026-11-23T23:50:00.000Z"
    path = tmp_path / "claude.jsonl"
    path.write_text(text + json.dumps(late, separators=(",", ":")) + "\n", encoding="utf-8")
    session = read_transcript(path)
    assert session.ended is not None and session.started is not None
    assert session.ended - session.started == pytest.approx(6 * 60 + 50.044)
    assert (session.skipped, session.lines) == (0, len(text.splitlines()) + 1)
    # Followed by a line without a time (Claude ends with one): still the end.
    lines = text.splitlines()
    last_prompt = lines[-1]
    assert '"timestamp"' not in last_prompt
    body = "\n".join([*lines[:-1], json.dumps(late, separators=(",", ":")), last_prompt])
    path.write_text(body + "\n", encoding="utf-8")
    assert read_transcript(path).ended == session.ended
    # Followed by a line read with a time: that one is the end.
    body = "\n".join([*lines[:-1], json.dumps(late, separators=(",", ":")), lines[-2]])
    path.write_text(body + "\n", encoding="utf-8")
    assert read_transcript(path).ended == pytest.approx(session.started + 0.729)


def test_gemini_user_lines_are_skipped_but_a_rewritten_history_is_read(tmp_path: Path) -> None:
    lines = (TRANSCRIPTS / "gemini-chat.jsonl").read_text(encoding="utf-8").splitlines()
    last_user = max(i for i, line in enumerate(lines) if '"type":"user"' in line[:160])
    path = tmp_path / "gemini.jsonl"
    path.write_text("\n".join(lines[: last_user + 1]) + "\n", encoding="utf-8")
    session = read_transcript(path)
    stamp = json.loads(lines[last_user])["timestamp"]
    assert session.ended == timestamp(stamp)  # the last line's time, though unparsed
    # A resumed session rewrites its history in one line, which may start with a user
    # message: the calls in it still count.
    messages = [json.loads(line) for line in lines if line.startswith('{"id"')]
    rewrite = json.dumps({"$set": {"messages": messages}}, separators=(",", ":"))
    assert '"type":"user"' in rewrite[:160]
    later = next(line for line in lines if '"type":"gemini"' in line)  # read, with a time
    path.write_text("\n".join([lines[0], rewrite, later]) + "\n", encoding="utf-8")
    full = read_transcript(TRANSCRIPTS / "gemini-chat.jsonl")
    assert len(read_transcript(path).calls) == len(full.calls) > 0


def test_a_gemini_message_written_again_is_read_once_and_whole(tmp_path: Path) -> None:
    """A message is written first with no text and no calls, then again with its calls: the
    later is read, the earlier only when the later is cut off (the harness was writing it).
    A writing that said something (text, calls) is always read: a later one cannot take it
    back."""
    lines = (TRANSCRIPTS / "gemini-chat.jsonl").read_text(encoding="utf-8").splitlines()
    full = read_transcript(TRANSCRIPTS / "gemini-chat.jsonl")
    last = [i for i, line in enumerate(lines) if '"toolCalls"' in line][-1]
    earlier = json.loads(lines[last - 2])
    assert earlier["id"] == json.loads(lines[last])["id"]
    assert "toolCalls" not in earlier and earlier["content"] == ""
    path = tmp_path / "gemini.jsonl"
    path.write_text("\n".join([*lines[:last], lines[last][:-40]]) + "\n", encoding="utf-8")
    session = read_transcript(path)
    assert (session.skipped, session.tokens) == (1, 4 * 60)  # the fourth from its earlier write
    assert len(session.calls) == len(full.calls) - 1
    # Whole, the later writing is the message: its calls count.
    path.write_text("\n".join(lines[: last + 1]) + "\n", encoding="utf-8")
    session = read_transcript(path)
    assert (session.skipped, session.tokens, len(session.calls)) == (0, 4 * 60, len(full.calls))
    # Text in the earlier writing stays the agent's last words though the later has none.
    earlier["content"] = "Running the tests again."
    lines[last - 2] = json.dumps(earlier, separators=(",", ":"))
    path.write_text("\n".join(lines[: last + 1]) + "\n", encoding="utf-8")
    assert read_transcript(path).final_message == "Running the tests again."
    # Two messages with other ids in a row are both read.
    other = dict(earlier, id="another", content="Checked the notes first.")
    lines.insert(last - 1, json.dumps(other, separators=(",", ":")))
    path.write_text("\n".join(lines[:last]) + "\n", encoding="utf-8")
    session = read_transcript(path)
    assert (session.tokens, session.final_message) == (5 * 60, "Checked the notes first.")


def test_reading_leaves_the_cycle_collector_as_it_was(tmp_path: Path) -> None:
    assert gc.isenabled()
    read_transcript(TRANSCRIPTS / "claude-code.jsonl")
    assert gc.isenabled()
    (tmp_path / "t.jsonl").write_text('{"hello": "world"}\n', encoding="utf-8")
    with pytest.raises(ReportError):
        read_transcript(tmp_path / "t.jsonl")
    assert gc.isenabled()
    gc.disable()
    try:
        read_transcript(TRANSCRIPTS / "claude-code.jsonl")
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("fast", [True, False], ids=["orjson", "json"])
def test_calls_with_numbers_past_64_bits_are_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    """Such a line is read by json (orjson refuses it); the call's input is still its key."""
    if not fast:
        monkeypatch.setattr(reader, "_fast_loads", None)
        monkeypatch.setattr(build, "_dumps", None)
    head = (TRANSCRIPTS / "codex-rollout.jsonl").read_text(encoding="utf-8").splitlines()[0]
    call = (
        '{"type":"response_item","payload":{"type":"function_call","call_id":"%s",'
        '"name":"shell","arguments":{"command":["sleep","%s"],"timeout_ms":%s}}}'
    )
    big, other = "9" * 30, "8" * 30
    lines = [head, call % ("a", 1, big), call % ("b", 1, big), call % ("c", 1, other)]
    path = tmp_path / "codex.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    a, b, c = read_transcript(path).calls
    assert a.command == "sleep 1" and a.key == b.key != c.key


def test_a_tool_result_that_quotes_a_skipped_key_is_still_read(tmp_path: Path) -> None:
    """What a tool returns is a JSON string: a key in it has escaped quotes, so a failed call
    whose output starts with `"attachment":{` is no line to skip."""
    lines = (TRANSCRIPTS / "claude-code.jsonl").read_text(encoding="utf-8").splitlines()
    call_id, index = next(
        (part["id"], index)
        for index, line in enumerate(lines)
        for part in json.loads(line).get("message", {}).get("content", [])
        if isinstance(part, dict) and part.get("type") == "tool_use"
    )
    result = {
        "parentUuid": None,
        "type": "user",
        "message": {
            "content": [
                {
                    "content": '"attachment":{"x":1} Exit code 3',
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "is_error": True,
                }
            ],
            "role": "user",
        },
        "timestamp": "2026-11-23T23:43:11.000Z",
    }
    text = json.dumps(result, separators=(",", ":"))
    assert '"attachment\\":{' in text[:160]  # escaped, within the bytes looked at
    path = tmp_path / "claude.jsonl"
    path.write_text("\n".join([*lines[: index + 1], text]) + "\n", encoding="utf-8")
    [shell] = [c for c in read_transcript(path).calls if c.id == call_id]
    assert (shell.failed, shell.exit_code) == (True, 3)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_standard_librarys_parser_reads_what_orjson_reads(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = read_transcript(TRANSCRIPTS / name)
    monkeypatch.setattr(reader, "_fast_loads", None)  # PyPy, or a platform without its wheel
    assert read_transcript(TRANSCRIPTS / name) == fast


@pytest.mark.parametrize("fast", [True, False], ids=["orjson", "json"])
def test_lines_orjson_refuses_are_read_as_json_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    if not fast:
        monkeypatch.setattr(reader, "_fast_loads", None)
    lines = (TRANSCRIPTS / "claude-code.jsonl").read_bytes().splitlines()
    last = lines[-2]
    assert b'"type":"text","text":"Fixed add' in last
    # Bytes that are not UTF-8 and a lone surrogate in the final text; NaN and a number past
    # 64 bits as token counts; a value after the object: json reads, or skips, each the same.
    odd = [
        last.replace(b'"text":"Fixed add', b'"text":"\\ud800 caf\xe9 Fixed add'),
        b'{"type":"assistant","uuid":"n","message":{"id":"n","usage":{"input_tokens":NaN}}}',
        b'{"type":"assistant","uuid":"b","message":{"id":"b","usage":{"input_tokens":'
        + b"9" * 30
        + b"}}}",
        b'{"type":"assistant","uuid":"t"} trailing',
        b"[1, 2]",
    ]
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\n".join([*lines[:-2], *odd, lines[-1]]) + b"\n")
    session = read_transcript(path)
    assert session.final_message is not None
    assert session.final_message.startswith("\ud800 caf\ufffd Fixed add")
    assert session.skipped == 2  # the trailing text and the list
    assert session.tokens == 360 + MAX_COUNT


def test_a_line_too_long_is_skipped_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (TRANSCRIPTS / "claude-code.jsonl").read_text(encoding="utf-8").splitlines()
    huge = json.loads(lines[-2])
    huge["message"]["content"][0]["text"] = "x" * 30_000
    lines[-2] = json.dumps(huge)
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(reader, "MAX_LINE", 20_000)
    monkeypatch.setattr(reader, "_CHUNK", 1000)
    session = read_transcript(path)
    assert session.skipped == 1 and "longer than" in session.notes[0]
    assert session.final_message is None or session.final_message != huge


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "transcript not found"),
        ("", "is empty"),
        ('{"hello": "world"}\n', "is not a transcript agentgate reads"),
        ("PK\x03\x04 binary\n\x00\x01\n", "has no JSON line in its 2 lines: not a transcript"),
    ],
)
def test_a_transcript_that_cannot_be_read_is_a_report_error(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    path = tmp_path / "t.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportError, match=problem):
        read_transcript(path)


def _holes_kept(folder: Path) -> bool:
    probe = folder / "probe"
    probe.write_bytes(b"x")
    os.truncate(probe, 1 << 24)
    with open(probe, "rb") as handle:
        return hasattr(os, "SEEK_HOLE") and os.lseek(handle.fileno(), 0, os.SEEK_HOLE) < 1 << 24


def test_a_transcript_with_holes_is_refused_without_reading_them(tmp_path: Path) -> None:
    # Red team 33: `truncate -s 400G transcript` (4 KB on disk) made the session gate read zeros
    # until the stop hook's budget ran out, which let the agent stop unverified, every time.
    if not _holes_kept(tmp_path):
        pytest.skip("this file system keeps no holes")
    path = tmp_path / "t.jsonl"
    path.write_bytes((TRANSCRIPTS / "claude-code.jsonl").read_bytes())
    os.truncate(path, 400 << 30)
    with pytest.raises(ReportError, match=r"has a hole at byte \d+ of its 429496729600") as caught:
        read_transcript(path)
    assert "made by `truncate`?" in str(caught.value)


@pytest.mark.parametrize("line", [b'{"x": 1}\n', b"y" * 100])
def test_a_transcript_not_read_in_time_is_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: bytes
) -> None:
    """Many short lines, or one endless line: either way the clock ends the reading."""
    path = tmp_path / "t.jsonl"
    path.write_bytes((TRANSCRIPTS / "claude-code.jsonl").read_bytes() + line * 20_000)
    monkeypatch.setattr(reader, "READ_TIME_S", -1.0)
    monkeypatch.setattr(reader, "MAX_LINE", 1000)
    monkeypatch.setattr(reader, "_CHUNK", 1000)
    with pytest.raises(ReportError, match=r"was not read within -1 s \(\d+ lines, \d+ bytes"):
        read_transcript(path)
    monkeypatch.setattr(reader, "READ_TIME_S", 60.0)
    assert read_transcript(path).lines > 1


# -- the language of the final message -----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I'll handle the edge cases in a follow-up PR.",
        "We can address the flaky tests incrementally.",
        "Remaining work: the CSV exporter.",
        "The migration is out of scope for now.",
        "Two tests are skipped for now.",
        "The rest can be addressed later.",
        "I deferred the Windows support.",
        "The CSV export is for a follow-up.",
        "Retries can come in the next PR.",
        "The payment call is stubbed out for now.",
        "I left a TODO for the error path.",
    ],
)
def test_deferral_language_is_found(text: str) -> None:
    assert deferrals(f"Fixed the parser. {text}") == [text]


@pytest.mark.parametrize(
    "text",
    [
        "There is no remaining work.",
        "Nothing is deferred and no follow-up PR is needed.",
        'The old message said "fix in a follow-up PR"; I removed it.',
        "I removed the `remaining work` placeholder.",
        "> out of scope for now\nThat quote is from the issue; all of it is done.",
        "```\n# TODO: follow-up PR\n```\nThe snippet above is gone.",
        "I did not leave anything for a follow-up PR.",
    ],
)
def test_honest_text_is_not_deferral(text: str) -> None:
    assert deferrals(text) == []


def test_claims_know_what_they_are_about() -> None:
    found = claims("Lint is clean. All tests pass. Coverage is above 90%. Everything is done.")
    assert [kinds for _, kinds in found] == [("lint",), ("test",), ("coverage",), None]
    assert claims("Not all tests pass yet: two fail.") == []


def test_a_claim_is_quoted_beside_the_gate_that_disproves_it() -> None:
    test = GateResult("test", "test", "fail", "3 of 4 tests passed (75.00%, need 100.00%)")
    lint = GateResult("lint", "lint", "pass", "no findings")
    session = GateResult("session", "session", "pass", "the session shows nothing wrong")
    gates = check_claims([test, lint, session], "Lint is clean and all tests pass.")
    judged = gates[2]
    assert judged.status == "fail" and gates[:2] == [test, lint]
    assert [f.message for f in judged.findings] == [
        'You said: "Lint is clean and all tests pass." The gate measured otherwise: '
        "test: 3 of 4 tests passed (75.00%, need 100.00%)."
    ]
    assert session.findings == []  # the judged result is not changed in place
    assert check_claims([lint, session], "All tests pass.") == [lint, session]
    both = check_claims([lint, test, session], "All tests pass and the work is complete.")
    assert both[2].findings[0].message.endswith("test: 3 of 4 tests passed (75.00%, need 100.00%).")
    named = GateResult("unit-tests", "custom", "fail", "exit code 1")
    assert check_claims([named, session], "Tests pass.")[1].status == "fail"


# -- the gate, through the CLI -------------------------------------------------------------------


@pytest.fixture
def gated(project: Path, write_config: Callable[[str], Path]) -> Callable[[str], Path]:
    """A project whose one gate passes (or fails), under the given profile and extra config."""

    def make(extra: str = "", *, passing: bool = True, profile: str = "standard") -> Path:
        code = 0 if passing else 1
        write_config(
            f"profile: {profile}\ngates:\n  custom:\n"
            f'    - {{name: tests, command: "{{py}} -c \\"raise SystemExit({code})\\""}}\n' + extra
        )
        return project

    return make


def _gate(run: CliRun, name: str = "session") -> dict[str, Any]:
    return run.gate(name)


def test_plain_verify_has_no_session_gate(gated: Callable[..., Path], agentgate: Agentgate) -> None:
    gated()
    run = agentgate("verify", "--format", "json")
    assert run.code == 0
    assert [g["name"] for g in run.verdict()["gates"]] == ["tests"]


def test_deferral_blocks_under_strict_and_warns_otherwise(
    gated: Callable[..., Path], agentgate: Agentgate
) -> None:
    gated(profile="strict")
    transcript = str(TRANSCRIPTS / "codex-rollout.jsonl")
    strict = agentgate("verify", "--format", "json", "--transcript", transcript)
    assert strict.code == 1
    gate = _gate(strict)
    assert gate["status"] == "fail" and gate["summary"] == "the session shows deferral"
    assert gate["findings"][0]["message"] == (
        "the transcript's last message defers work: \"The remaining work on subtraction can go "
        'in a follow-up PR."; finish it now instead'
    )
    assert "follow-up PR" in strict.verdict()["continuation"]
    gated(profile="standard")
    standard = agentgate("verify", "--format", "json", "--transcript", transcript)
    assert standard.code == 0
    assert _gate(standard)["findings"][0]["severity"] == "warning"
    assert _gate(standard)["actual"]["tool_calls"] == 4


def test_the_events_message_wins_over_a_lagging_transcript(
    gated: Callable[..., Path], agentgate: Agentgate
) -> None:
    gated(profile="strict")
    run = agentgate(
        "verify",
        "--format",
        "json",
        "--transcript",
        str(TRANSCRIPTS / "gemini-chat.jsonl"),
        "--claim",
        "Fixed add in calc.py; the test passes and nothing is left.",
    )
    assert run.code == 0, run.out
    assert _gate(run)["actual"]["message"] == "the final message"


def test_a_missing_transcript_turns_the_signals_off_and_never_fails(
    gated: Callable[..., Path], agentgate: Agentgate, project: Path
) -> None:
    gated(profile="strict")
    run = agentgate("verify", "--transcript", str(project / "gone.jsonl"))
    assert run.code == 0 and "PASS  session  the session shows 1 warning" in run.out
    doc = agentgate("verify", "--format", "json", "--transcript", "gone.jsonl")
    assert doc.code == 0 and _gate(doc)["status"] == "pass"
    assert [f["message"] for f in _gate(doc)["findings"]] == [
        "the transcript's signals are off: gone.jsonl: transcript not found"
    ]


def test_a_sparse_transcript_turns_the_signals_off_and_the_gates_still_judge(
    gated: Callable[..., Path], agentgate: Agentgate, project: Path
) -> None:
    if not _holes_kept(project):
        pytest.skip("this file system keeps no holes")
    gated(profile="strict", passing=False)
    path = project / "t.jsonl"
    path.write_bytes((TRANSCRIPTS / "claude-code.jsonl").read_bytes())
    os.truncate(path, 400 << 30)
    doc = agentgate("verify", "--format", "json", "--transcript", "t.jsonl")
    assert doc.code == 1 and doc.gate("tests")["status"] == "fail"
    [finding] = _gate(doc)["findings"]
    assert finding["message"].startswith("the transcript's signals are off: t.jsonl: has a hole")


def test_a_success_claim_the_tests_disprove_is_quoted_beside_them(
    gated: Callable[..., Path], agentgate: Agentgate
) -> None:
    gated(passing=False)
    run = agentgate("verify", "--format", "json", "--claim", "Done. All tests pass.")
    assert run.code == 1
    text = run.verdict()["continuation"]
    assert text.splitlines()[1].startswith(
        'You said: "Done." The gate measured otherwise: tests: exit code 1.'
    )
    assert _gate(run)["findings"][0]["code"] == "claim-disproved"


def test_the_session_alone_never_makes_a_pass(
    project: Path, write_config: Callable[[str], Path], agentgate: Agentgate
) -> None:
    write_config("gates:\n  custom:\n    - {name: tests, command: 'true'}\n")
    run = agentgate("verify", "--no-run", "--format", "json", "--claim", "All done.")
    assert run.code == 1
    assert "nothing was verified" in " ".join(run.verdict()["notices"])


# -- budgets, loops, thrash: a human is needed -----------------------------------------------


def _claude_session(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], failing: tuple[int, ...] = ()
) -> Path:
    """A Claude Code transcript of ``calls`` (tool name, input), from the sample's own lines;
    the calls at the indexes ``failing`` end with an error (exit code 1)."""
    lines = [json.loads(x) for x in (TRANSCRIPTS / "claude-code.jsonl").read_text().splitlines()]
    use = next(x for x in lines if x["type"] == "assistant" and "tool_use" in json.dumps(x))
    result = next(x for x in lines if x["type"] == "user" and "tool_result" in json.dumps(x))
    out = [lines[0]]
    for n, (name, args) in enumerate(calls):
        a, r = copy.deepcopy(use), copy.deepcopy(result)
        a["message"]["id"] = f"msg_{n}"
        a["message"]["content"] = [{"type": "tool_use", "id": f"t{n}", "name": name, "input": args}]
        r["message"]["content"] = [
            {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}
            if n not in failing
            else {
                "type": "tool_result",
                "tool_use_id": f"t{n}",
                "content": "Exit code 1\nno",
                "is_error": True,
            }
        ]
        out += [a, r]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in out), encoding="utf-8")
    return path


def test_a_loop_escalates_with_its_pattern(
    gated: Callable[..., Path], agentgate: Agentgate, tmp_path: Path
) -> None:
    gated()
    pytest_call = ("Bash", {"command": "pytest -q"})
    read = ("Read", {"file_path": "/home/user/project/calc.py"})
    transcript = _claude_session(tmp_path, [pytest_call, read] * 6)
    run = agentgate("verify", "--format", "json", "--transcript", str(transcript))
    assert run.code == 3
    doc = run.verdict()
    assert doc["status"] == "escalate"
    assert "`Bash: pytest -q` was made 6 times with no file edited between" in doc["escalation"]
    assert _gate(run)["escalate"]


def test_running_the_tests_after_each_edit_is_not_a_loop(
    gated: Callable[..., Path], agentgate: Agentgate, tmp_path: Path
) -> None:
    gated()
    calls: list[tuple[str, dict[str, Any]]] = []
    for n in range(8):
        calls.append(("Bash", {"command": "pytest -q"}))
        calls.append(
            ("Edit", {"file_path": f"/home/user/project/m{n % 3}.py", "old_string": str(n)})
        )
    run = agentgate(
        "verify", "--format", "json", "--transcript", str(_claude_session(tmp_path, calls))
    )
    assert run.code == 0, run.out


def test_file_thrash_escalates(
    gated: Callable[..., Path], agentgate: Agentgate, tmp_path: Path
) -> None:
    gated("  session: {max_file_edits: 3}\n")
    calls = [("Edit", {"file_path": "/x/calc.py", "old_string": str(n)}) for n in range(4)]
    run = agentgate(
        "verify", "--format", "json", "--transcript", str(_claude_session(tmp_path, calls))
    )
    assert run.code == 3
    assert "/x/calc.py was edited 4 times (max_file_edits 3)" in run.verdict()["escalation"]


def _patch(*names: str, runs: str = "apply_patch <<'EOF'\n") -> tuple[str, dict[str, Any]]:
    files = "".join(f"*** Update File: {name}\n@@\n-a\n+b\n" for name in names)
    return ("Bash", {"command": f"{runs}*** Begin Patch\n{files}*** End Patch\nEOF"})


def test_one_call_edits_each_file_once_however_it_spells_it(
    gated: Callable[..., Path], agentgate: Agentgate, tmp_path: Path
) -> None:
    # Red team 50: one no-op command naming n.txt 21 ways was 21 edits, and file thrash
    # escalated the first stop (the agent may stop). Text that only looks like a patch edits
    # nothing; a patch that runs edits each of its files once.
    gated("  session: {max_file_edits: 3}\n")
    names = ["n.txt", "./n.txt", "././n.txt", "a/../n.txt"]
    calls = [_patch(*names, runs=": '"), _patch(*names, runs="echo '"), _patch(*names)]
    run = agentgate(
        "verify", "--format", "json", "--transcript", str(_claude_session(tmp_path, calls))
    )
    assert run.code == 0, run.out
    cd = "cd . && apply_patch <<'EOF'\n"
    calls = [_patch(*names), _patch("n.txt"), _patch("n.txt"), _patch("./n.txt", runs=cd)]
    run = agentgate(
        "verify", "--format", "json", "--transcript", str(_claude_session(tmp_path, calls))
    )
    assert run.code == 3
    assert "n.txt was edited 4 times (max_file_edits 3)" in run.verdict()["escalation"]


def test_budgets_escalate_and_name_the_key(
    project: Path, write_config: Callable[[str], Path], agentgate: Agentgate
) -> None:
    write_config(
        "gates:\n  custom:\n    - {name: tests, command: 'true'}\n"
        "budget: {max_tool_calls: 3, max_tokens: 1000}\n"
    )
    run = agentgate(
        "verify",
        "--format",
        "json",
        "--task",
        "t1",
        "--transcript",
        str(TRANSCRIPTS / "copilot-events.jsonl"),
    )
    assert run.code == 3
    doc = run.verdict()
    assert "the session used 4 tool calls, over budget.max_tool_calls (3)" in doc["escalation"]
    assert _gate(run)["expected"] == {
        "deferral": "warn",
        "loop_repeats": 5,
        "max_file_edits": 20,
        "max_tool_calls": 3,
        "max_tokens": 1000,
    }


@pytest.mark.parametrize(
    ("budget", "error"),
    [
        ("{max_tokens: -1}", "budget.max_tokens: expected a whole number >= 1, got a number (-1)"),
        ("{max_tool_call: 3}", "budget.max_tool_call: unknown key; did you mean 'max_tool_calls'?"),
        ("{max_context_percent: 120}", "budget.max_context_percent: expected a percentage"),
        ("[1]", "budget: expected a mapping of keys"),
    ],
)
def test_a_bad_budget_is_an_error_naming_the_key(
    project: Path,
    write_config: Callable[[str], Path],
    agentgate: Agentgate,
    budget: str,
    error: str,
) -> None:
    write_config(f"gates:\n  custom:\n    - {{name: t, command: 'true'}}\nbudget: {budget}\n")
    run = agentgate("verify")
    assert run.code == 2
    assert f"agentgate.yml:4: {error}" in run.err


def test_context_advice(gated: Callable[..., Path], agentgate: Agentgate) -> None:
    gated("  session: {context_window: 70}\n")
    run = agentgate(
        "verify", "--format", "json", "--transcript", str(TRANSCRIPTS / "claude-code.jsonl")
    )
    assert run.code == 0
    advice = [f["message"] for f in _gate(run)["findings"] if f["code"] == "context-full"]
    assert advice == [
        "the context window is 86% full: compact it (summarise what is done and what is left) "
        "before going on"
    ]


def test_calls_that_failed_after_the_last_good_test_run_are_warnings(
    gated: Callable[..., Path], agentgate: Agentgate, tmp_path: Path
) -> None:
    gated(profile="strict")
    calls = [
        ("Bash", {"command": "git push"}),
        ("Bash", {"command": "python -m pytest -q"}),
        ("Bash", {"command": "git push origin work"}),
        ("Read", {"file_path": "/x/notes.md"}),
    ]
    transcript = _claude_session(tmp_path, calls, failing=(0, 2, 3))
    run = agentgate("verify", "--format", "json", "--transcript", str(transcript))
    assert run.code == 0  # warnings: a failed call is not always a problem
    findings = [(f["name"], f["message"]) for f in _gate(run)["findings"]]
    assert findings == [
        (
            "Bash: git push origin work",
            "failed after the last successful test or build run (Bash: python -m pytest -q): "
            "exit code 1",
        ),
        (
            "Read: /x/notes.md",
            "failed after the last successful test or build run (Bash: python -m pytest -q): "
            "exit code 1",
        ),
    ]


def _base_then_change(
    project: Path, write_config: Callable[[str], Path], base: str, now: str
) -> None:
    """``base`` committed on main as the configuration, ``now`` in its place on a branch."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)

    (project / ".git").rmdir()
    git("init", "-q", "-b", "main")
    write_config(base)
    git("add", "-A")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "base")
    git("checkout", "-qb", "work")
    write_config(now)


def _verify_against_main(agentgate: Agentgate) -> CliRun:
    return agentgate(
        "verify",
        "--format",
        "json",
        "--base",
        "main",
        "--transcript",
        str(TRANSCRIPTS / "claude-code.jsonl"),
    )


def test_a_change_cannot_raise_the_budget_of_the_base(
    project: Path, write_config: Callable[[str], Path], agentgate: Agentgate
) -> None:
    gates = "gates:\n  custom:\n    - {name: tests, command: 'true'}\n"
    _base_then_change(
        project,
        write_config,
        gates + "budget: {max_tool_calls: 3}\n",
        gates + "budget: {max_tool_calls: 300}\n",
    )
    run = _verify_against_main(agentgate)
    assert run.code == 3  # 5 tool calls against the base's 3
    assert _gate(run)["expected"]["max_tool_calls"] == 3
    integrity = run.gate("integrity")
    assert any("max_tool_calls" in f["message"] for f in integrity["findings"]), integrity


@pytest.mark.parametrize(
    ("base", "change"),
    [
        ("", "budget: {max_tool_calls: 1}\n"),
        ("budget: {max_tool_calls: 30}\n", "budget: {max_tool_calls: 1}\n"),
        ("", "  session: {loop_repeats: 2, max_file_edits: 1}\n"),
    ],
    ids=["budget-added", "budget-lowered", "loop-and-thrash-limits-added"],
)
def test_a_change_cannot_lower_a_limit_to_escalate_at_once(
    project: Path, write_config: Callable[[str], Path], agentgate: Agentgate, base: str, change: str
) -> None:
    # Red team 43: an escalation lets the agent stop; a budget the change adds (or lowers),
    # already spent, was in force at once. The base's limits stand until the change is merged.
    gates = "gates:\n  custom:\n    - {name: tests, command: 'true'}\n"
    now = gates + change if change.startswith("budget") else gates + change + base
    _base_then_change(project, write_config, gates + base, now)
    run = _verify_against_main(agentgate)
    assert run.code == 0, run.out
    assert run.verdict()["escalation"] is None
    notices = run.verdict()["notices"]
    shown = "budget.max_tool_calls" if "budget" in change else "gates.session.loop_repeats"
    assert any("not in force until this change is merged" in n and shown in n for n in notices)


def test_what_escalates_is_cleaned_of_secrets(
    gated: Callable[..., Path], agentgate: Agentgate, tmp_path: Path
) -> None:
    gated()
    token = "ghp_" + "a1B2c3D4e5" * 4
    call = ("Bash", {"command": f"curl -H 'Authorization: token {token}' https://api.example"})
    run = agentgate(
        "verify", "--format", "json", "--transcript", str(_claude_session(tmp_path, [call] * 6))
    )
    assert run.code == 3
    assert token not in run.out and "was made 6 times" in run.verdict()["escalation"]


def test_explain_shows_the_session_gate_and_its_budget(
    project: Path, write_config: Callable[[str], Path], agentgate: Agentgate
) -> None:
    write_config(
        "gates:\n  custom:\n    - {name: t, command: 'true'}\nbudget: {max_tokens: 9000}\n"
    )
    doc = json.loads(agentgate("explain", "--format=json").out)
    assert [g["name"] for g in doc["gates"]] == ["t"]
    assert doc["session"]["thresholds"]["max_tokens"] == 9000
    assert "judged when a hook, --transcript or --claim" in agentgate("explain").out


def test_a_claude_session_past_200k_tokens_has_the_1m_window(tmp_path: Path) -> None:
    lines = (TRANSCRIPTS / "claude-code.jsonl").read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-2])
    last["message"]["usage"]["cache_read_input_tokens"] = 400_000
    lines[-2] = json.dumps(last)
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = read_transcript(path)
    assert (session.context_tokens, session.context_window) == (400_060, 1_000_000)


def test_a_disabled_session_gate_is_not_judged(
    gated: Callable[..., Path], agentgate: Agentgate
) -> None:
    gated("  session: {enabled: false}\n", profile="strict")
    run = agentgate("verify", "--format", "json", "--claim", "Left the rest for a follow-up PR.")
    assert run.code == 0
    assert [g["name"] for g in run.verdict()["gates"]] == ["tests"]


def test_a_configuration_that_names_no_measuring_gate_says_so(
    project: Path, write_config: Callable[[str], Path], agentgate: Agentgate
) -> None:
    # Review 28: an agentgate.yml holding only `budget:` replaced the detected gates, and its
    # verdict was a PASS that had judged nothing of the project. Here nothing is detected (no
    # Python project): the file names no gates and gates nothing, and says so.
    write_config("budget: {max_tool_calls: 5}\n")
    notices = agentgate("verify", "--format", "json").verdict()["notices"]
    assert any(
        n.startswith("agentgate.yml names no gate that measures the project")
        and "zero-config detects no Python project beside it; name them under `gates`" in n
        for n in notices
    ), notices
    write_config("gates: {}\n")
    notices = agentgate("verify", "--format", "json").verdict()["notices"]
    assert any("its `gates` replace the detected ones" in n for n in notices), notices
    write_config("gates:\n  custom:\n    - {name: tests, command: 'true'}\n")
    notices = agentgate("verify", "--format", "json").verdict()["notices"]
    assert not any("names no gate that measures" in n for n in notices)


def test_a_configuration_holding_only_a_profile_gates_the_project(tmp_path: Path) -> None:
    # Review 28's PASS, end to end: `profile: strict` alone, a failing test and a lint error.
    root = gated_project(
        tmp_path / "proj",
        "profile: strict\n",
        {
            "pyproject.toml": "[project]\nname = 'demo'\nversion = '0'\n",
            "demo/__init__.py": "def add(a, b):\n    return a - b\n",
            "tests/test_add.py": "from demo import add\n\n\ndef test_add():\n"
            "    assert add(2, 2) == 4\n",
        },
    )
    code, verdict = verify_json(root)
    assert (code, verdict["status"], verdict["profile"]) == (1, "fail", "strict")
    test = only_gate(verdict, "test")
    assert test["status"] == "fail"
    assert [f["name"] for f in test["findings"]] == ["tests/test_add.py::test_add"]
    assert any("names no gates" in n for n in verdict["notices"])
