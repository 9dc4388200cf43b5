"""Inputs the fuzz suite (``tests_fuzz/``) found that broke a reader, each kept here as a plain
case with what the user sees since it was fixed.

Before its fix each of these escaped as an exception (the verdict said "agentgate could not
judge this gate" with a traceback, or the hook let the agent stop unverified), or was read as a
number no tool writes (a line -1, a session that started at infinity). Now a report no tool
writes fails its gate saying what is wrong, and a value that is no count or time is not one.
The configuration's cases are in test_config_hostile.py, the hook's in test_hooks.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import CliRun

from pytest_agentgate.gates.lint import _in_change
from pytest_agentgate.git import FileChange
from pytest_agentgate.reports._io import MAX_COUNT
from pytest_agentgate.reports.lint import parse_lint

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]

DEEP_JSON = "[" * 3000 + "]" * 3000


def gates(run: CliRun) -> dict[str, dict[str, Any]]:
    assert "Traceback" not in run.out + run.err
    verdict = run.verdict()
    for gate in verdict["gates"]:
        assert "could not judge" not in gate["summary"], gate["problems"]
    return {gate["name"]: gate for gate in verdict["gates"]}


def verify_report(agentgate: Agentgate, project: Path, name: str, text: str, *flags: str) -> Any:
    (project / name).write_text(text, encoding="utf-8")
    return gates(agentgate("verify", "--no-run", "--format", "json", *flags, name))


# -- JUnit reports ------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["-1", "9" * 5000, "1e400"])
def test_a_failed_testcase_line_that_points_nowhere_is_no_line(
    project: Path, agentgate: Agentgate, line: str
) -> None:
    report = (
        '<testsuite><testcase classname="t" name="test_a" file="t.py" line="' + line + '">'
        '<failure message="collection failure">boom</failure></testcase></testsuite>'
    )
    test = verify_report(agentgate, project, "junit.xml", report, "--junit")["test"]
    assert test["status"] == "fail"
    [finding] = test["findings"]
    assert (finding["path"], finding["line"]) == ("t.py", None)


# -- lint reports --------------------------------------------------------------------------------


def test_a_lint_report_nested_too_deeply_is_refused_when_detecting_its_format(
    project: Path, agentgate: Agentgate
) -> None:
    lint = verify_report(agentgate, project, "lint.json", DEEP_JSON, "--lint")["lint"]
    assert lint["status"] == "fail"
    assert lint["summary"].startswith("lint report could not be read")
    assert "lint.json: is JSON nested too deeply to read" in lint["problems"][0]


def test_a_finding_whose_path_has_a_nul_byte_is_counted(
    project: Path, agentgate: Agentgate
) -> None:
    report = json.dumps(
        [{"code": "F401", "message": "unused", "filename": "/\0/a.py", "location": {"row": 1}}]
    )
    flags = ("--lint-format", "ruff", "--lint")
    lint = verify_report(agentgate, project, "ruff.json", report, *flags)["lint"]
    assert (lint["status"], lint["summary"]) == ("fail", "1 error (max 0), 0 warnings (max 50)")
    [finding] = lint["findings"]
    assert (finding["path"], finding["line"], finding["message"]) == ("/\\x00/a.py", 1, "unused")


def test_a_negative_line_is_no_line_and_counts_in_a_changed_file(
    project: Path, agentgate: Agentgate
) -> None:
    """A line -1 was kept, and under ``scope: changed`` a finding at line -100 of a changed file
    was left out as far from the change. A finding without a line counts in a changed file."""
    report = json.dumps(
        [
            {
                "filePath": str(project / "a.js"),
                "messages": [{"severity": 2, "message": "m", "line": -100, "column": -1}],
            }
        ]
    )
    flags = ("--lint-format", "eslint", "--lint")
    lint = verify_report(agentgate, project, "eslint.json", report, *flags)["lint"]
    [finding] = lint["findings"]
    assert (finding["path"], finding["line"], finding["message"]) == ("a.js", None, "m")

    class Changed:
        def find(self, path: str) -> FileChange | None:
            return FileChange("a.js", "modified", lines={1, 2}) if path == "a.js" else None

    findings = parse_lint(report, format="eslint", source="eslint.json").findings
    kept, dropped = _in_change(findings, Changed(), 3)  # type: ignore[arg-type]
    assert (len(kept), dropped) == (1, [])


# -- coverage reports ----------------------------------------------------------------------------


def test_a_negative_executed_line_is_not_a_measured_line(
    project: Path, agentgate: Agentgate
) -> None:
    report = json.dumps(
        {
            "meta": {"format": 3},
            "totals": {"covered_lines": 1, "num_statements": 1},
            "files": {
                "a.py": {
                    "summary": {"covered_lines": 1, "num_statements": 1},
                    "missing_lines": [],
                    "executed_lines": [-1],
                }
            },
        }
    )
    coverage = verify_report(agentgate, project, "coverage.json", report, "--coverage")["coverage"]
    assert coverage["status"] == "fail"
    assert coverage["summary"].startswith("no usable coverage report")
    assert "coverage.json: file 'a.py' executed line is negative (-1)" in coverage["problems"][0]


# -- custom gates' JSON reports ------------------------------------------------------------------


@pytest.mark.parametrize(
    "metric",
    ["\u00b2", "9" * 5000],
    ids=["superscript-two", "5000-digits"],  # "²".isdigit() is True; int() refuses both
)
def test_a_metric_that_is_no_list_index_has_no_value(
    metric: str, project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config(
        "gates:\n  custom:\n    - name: perf\n"
        "      command: '{py} -c \"print([1])\"'\n"
        f"      metric: '{metric}'\n      max: 1\n"
    )
    perf = gates(agentgate("verify", "--format", "json"))["perf"]
    assert perf["status"] == "fail"
    assert f"has no value at `{metric[:20]}" in perf["problems"][0]


def test_a_list_index_with_leading_zeros_still_reads(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config(
        "gates:\n  custom:\n    - name: perf\n"
        "      command: '{py} -c \"print([5, 1])\"'\n      metric: '01'\n      max: 1\n"
    )
    perf = gates(agentgate("verify", "--format", "json"))["perf"]
    assert perf["status"] == "pass", perf


# -- build output --------------------------------------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("output", "finding"),
    [
        (f"a.c:{HUGE}:1: error: boom", ("a.c", None, "boom")),
        (f"a.ts({HUGE},1): error TS1005: boom", ("a.ts", None, "boom")),
        (f"error[E0001]: boom\n  --> a.rs:1:{HUGE}", ("a.rs", 1, "boom")),
        (
            f"*** Error compiling 'a.py'...\n  File \"a.py\", line {HUGE}\nSyntaxError: bad",
            ("a.py", None, "SyntaxError: bad"),
        ),
    ],
    ids=["gcc", "tsc", "rustc", "compileall"],
)
def test_a_line_number_of_5000_digits_in_build_output_is_no_line(
    output: str,
    finding: tuple[str, int | None, str],
    project: Path,
    write_config: WriteConfig,
    agentgate: Agentgate,
) -> None:
    (project / "out.txt").write_text(output + "\n", encoding="utf-8")
    write_config(
        "gates:\n  build:\n    command: >-\n"
        "      {py} -c \"import sys; sys.stdout.write(open('out.txt').read()); sys.exit(1)\"\n"
    )
    build = gates(agentgate("verify", "--format", "json"))["build"]
    assert build["status"] == "fail"
    assert [(f["path"], f["line"], f["message"]) for f in build["findings"]] == [finding]


# -- harness transcripts -------------------------------------------------------------------------


def verify_transcript(
    agentgate: Agentgate, project: Path, lines: list[str] | None
) -> dict[str, Any]:
    """The session gate of ``verify`` given the transcript ``t.jsonl`` (of ``lines``; None:
    as the test left it)."""
    (project / "ruff.json").write_text("[]", encoding="utf-8")
    if lines is not None:
        (project / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = agentgate(
        "verify", "--no-run", "--format", "json", "--lint-format", "ruff", "--lint", "ruff.json",
        "--transcript", "t.jsonl",
    )  # fmt: skip
    return gates(run)["session"]


def signals_off(session: dict[str, Any]) -> str:
    assert session["status"] == "pass"
    [finding] = session["findings"]
    message: str = finding["message"]
    assert message.startswith("the transcript's signals are off: t.jsonl: ")
    return message


def test_a_fifo_in_the_transcripts_place_is_refused_not_waited_on(
    project: Path, agentgate: Agentgate
) -> None:
    """The hook read a FIFO there until its time ran out, and the agent was let stop."""
    fifo = project / "t.jsonl"
    os.mkfifo(fifo)

    waited = []

    def rescue() -> None:  # were the FIFO waited on, this ends the wait: the test fails, not hangs
        with contextlib.suppress(OSError):  # no reader waits: nothing to end
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            waited.append(True)

    timer = threading.Timer(10, rescue)
    timer.start()
    try:
        session = verify_transcript(agentgate, project, None)
    finally:
        timer.cancel()
    assert signals_off(session).endswith("t.jsonl: is not a regular file")
    assert not waited


def test_a_line_whose_type_is_an_object_is_no_transcript(
    project: Path, agentgate: Agentgate
) -> None:
    session = verify_transcript(agentgate, project, ['{"type": {}, "uuid": "u"}'])
    assert "is not a transcript agentgate reads" in signals_off(session)


def test_a_line_nested_too_deeply_is_not_json(project: Path, agentgate: Agentgate) -> None:
    session = verify_transcript(agentgate, project, [DEEP_JSON])
    assert "has no JSON line in its 1 lines: not a transcript" in signals_off(session)


def test_tool_arguments_nested_too_deeply_are_kept_as_text(
    project: Path, agentgate: Agentgate
) -> None:
    arguments = json.dumps("[" * 5000 + "]" * 5000)
    line = (
        '{"type": "response_item", "payload": {"type": "function_call", "call_id": "c", '
        f'"name": "shell", "arguments": {arguments}}}}}'
    )
    session = verify_transcript(agentgate, project, [line])
    assert (session["status"], session["actual"]["tool_calls"]) == ("pass", 1)


@pytest.mark.parametrize(
    "lines",
    [
        ['{"projectHash": "h"}', '{"type": "gemini", "toolCalls": 5}'],
        ['{"projectHash": "h"}', '{"type": "gemini", "toolCalls": [{"id": "c", "result": 5}]}'],
        ['{"type": "assistant.message", "data": {"toolRequests": 5}}'],
    ],
    ids=["gemini-tool-calls", "gemini-call-result", "copilot-tool-requests"],
)
def test_a_number_where_a_list_of_calls_belongs_is_no_call(
    lines: list[str], project: Path, agentgate: Agentgate
) -> None:
    session = verify_transcript(agentgate, project, lines)
    assert (session["status"], session["findings"]) == ("pass", [])


def test_a_negative_token_count_cancels_no_tokens(project: Path, agentgate: Agentgate) -> None:
    usage = {"input_tokens": -150_000, "cache_read_input_tokens": 150_000, "output_tokens": 100}
    message = {"id": "m", "model": "claude-sonnet-4-5", "usage": usage}
    line = {"type": "assistant", "uuid": "u", "message": message}
    session = verify_transcript(agentgate, project, [json.dumps(line)])
    assert (session["actual"]["tokens"], session["actual"]["context_percent"]) == (150_100, 75.05)


def test_a_token_count_beyond_any_session_is_counted_as_the_most_there_is(
    project: Path, agentgate: Agentgate
) -> None:
    """10**400 tokens: the context's fill overflowed a float. It is now the largest count a
    report may hold, and every budget sees it spent."""
    line = '{"type": "assistant", "uuid": "u", "message": {"usage": {"input_tokens": 1%s}}}'
    session = verify_transcript(agentgate, project, [line % ("0" * 400)])
    assert session["actual"]["tokens"] == MAX_COUNT
    assert session["actual"]["context_percent"] == MAX_COUNT * 100 / 1_000_000


@pytest.mark.parametrize("stamp", ["1e400", "1" + "0" * 400], ids=["infinite", "400-digits"])
def test_a_timestamp_that_is_no_time_gives_no_duration(
    stamp: str, project: Path, agentgate: Agentgate
) -> None:
    """1e400 started the session at infinity (a duration of 0.0); 10**400 overflowed a float."""
    lines = [f'{{"type": "user", "uuid": "u", "timestamp": {stamp}}}']
    session = verify_transcript(agentgate, project, lines)
    assert session["status"] == "pass"
    assert session["actual"]["duration_s"] is None


# -- file names ---------------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_judged_not_a_crash(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    # Red team 16: `invoice/r\xe9sum\xe9.py` (Latin-1 bytes) crashed every door with a
    # UnicodeEncodeError while writing the state, and the hook let the agent stop unverified.
    import subprocess

    write_config("gates:\n  build:\n    command: python -c pass\n")

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.email=a@b", "-c", "user.name=a", *args],
            cwd=project,
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "base")
    (project / os.fsdecode(b"r\xe9sum\xe9.py")).write_bytes(b"x = 1\n")
    for _ in range(2):  # and the state it wrote reads back
        run = agentgate("verify", "--format", "json")
        assert "internal error" not in run.out + run.err
        assert {gate["name"]: gate["status"] for gate in run.verdict()["gates"]}["build"] == "pass"
