"""Attempts, escalation, blockers, history and their reliability (ledger.py)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import DATA, CliRun, record

from pytest_agentgate.config import Config, ConfigError, RawConfig, validate
from pytest_agentgate.registry import Registry
from pytest_agentgate.state import escalation, history, ledger, storage
from pytest_agentgate.state.task import LedgerError, TaskRef
from pytest_agentgate.verdict import GateResult, Verdict, overall_status

Agentgate = Callable[..., CliRun]
T0 = 1_750_000_000.0  # a fixed clock: 2025-06-15 15:06:40 UTC


def test_gate(passed: int, total: int = 20, status: str | None = None) -> GateResult:
    failed = total - passed
    return GateResult(
        "test",
        "test",
        status or ("pass" if failed == 0 else "fail"),  # type: ignore[arg-type]
        f"{passed} of {total} tests passed",
        expected={"min_pass_rate": 100.0},
        actual={
            "total": total,
            "passed": passed,
            "failed": failed,
            "errors": 0,
            "skipped": 0,
            "flaky": 0,
            "pass_rate": passed * 100.0 / total,
        },
        duration_s=2.0,
    )


test_gate.__test__ = False  # type: ignore[attr-defined]


def lint_gate(errors: int, warnings: int = 0) -> GateResult:
    return GateResult(
        "lint",
        "lint",
        "fail" if errors else "pass",
        f"{errors} errors (max 0), {warnings} warnings (max 50)",
        expected={"max_errors": 0, "max_warnings": 50},
        actual={"errors": errors, "warnings": warnings},
        duration_s=0.5,
    )


def verdict(*gates: GateResult) -> Verdict:
    return Verdict(overall_status(list(gates)), "standard", list(gates))


def failing() -> Verdict:
    return verdict(test_gate(15), lint_gate(4))


def passing() -> Verdict:
    return verdict(test_gate(20), lint_gate(0))


def settle(
    v: Verdict, root: Path, task: str | None = "T1", source: str = "cli", **config: Any
) -> Verdict:
    cfg = Config(root=root, **config)
    return record(cfg, None if task is None else TaskRef(task, source), v, now=T0, source=source)


def history_lines(root: Path) -> list[dict[str, Any]]:
    text = (root / ".agentgate" / "history.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


# -- attempts -------------------------------------------------------------------------------


def test_max_rejections_then_the_next_failing_verdict_escalates(tmp_path: Path) -> None:
    results = [settle(failing(), tmp_path) for _ in range(5)]
    assert [(v.status, v.attempt.number, v.attempt.max) for v in results if v.attempt] == [
        ("fail", 1, 3),
        ("fail", 2, 3),
        ("fail", 3, 3),
        ("escalate", 4, 3),
        ("escalate", 5, 3),
    ]
    assert results[2].escalation is None
    assert results[3].escalation and "failed the gate 4 times through cli" in results[3].escalation
    assert any("escalations/T1.md" in n for n in results[3].notices)
    assert (tmp_path / ".agentgate" / ".gitignore").read_text().strip().endswith("*")


def test_a_pass_closes_the_task(tmp_path: Path) -> None:
    settle(failing(), tmp_path)
    settle(failing(), tmp_path)
    closed = settle(passing(), tmp_path)
    assert closed.status == "pass" and closed.attempt and closed.attempt.number == 3
    assert ledger.task_state(tmp_path, "T1") is None
    again = settle(failing(), tmp_path)
    assert again.attempt and again.attempt.number == 1


def test_no_task_counts_nothing_but_the_history_gets_a_line(tmp_path: Path) -> None:
    v = settle(failing(), tmp_path, task=None)
    assert v.status == "fail" and v.attempt is None
    assert not (tmp_path / ".agentgate" / "state.json").exists()
    (line,) = history_lines(tmp_path)
    assert line["task"] is None and line["status"] == "fail" and line["wall_s"] == 3.0
    assert line["gates"][0] == {
        "name": "test",
        "kind": "test",
        "status": "fail",
        "duration_s": 2.0,
        "numbers": {
            "passed": 15,
            "failed": 5,
            "errors": 0,
            "skipped": 0,
            "pass_rate": 75.0,
            "executed": 20,
        },
        "reason": "test: failing tests",
    }
    assert line["gates"][1]["reason"] == "lint: lint errors"


def test_every_verdict_appends_one_history_line(tmp_path: Path) -> None:
    settle(failing(), tmp_path)
    settle(passing(), tmp_path)
    lines = history_lines(tmp_path)
    assert [(x["task"], x["status"], x["attempt"]) for x in lines] == [
        ("T1", "fail", {"number": 1, "max": 3}),
        ("T1", "pass", {"number": 2, "max": 3}),
    ]
    assert lines[0]["time"] == "2025-06-15T15:06:40+00:00" and lines[0]["source"] == "cli"


def test_global_cap_across_sources(tmp_path: Path) -> None:
    for source in ("cli", "hook:claude"):
        for _ in range(3):
            assert settle(failing(), tmp_path, source=source).status == "fail"
    v = settle(failing(), tmp_path, source="action")
    assert v.status == "escalate"
    assert v.attempt is not None and (v.attempt.number, v.attempt.max) == (7, 6)
    assert v.escalation and "rejected 7 times across every source" in v.escalation
    assert "action 1, cli 3, hook:claude 3" in v.escalation


def test_the_attempt_shown_is_the_budget_closer_to_running_out(tmp_path: Path) -> None:
    for _ in range(4):
        settle(failing(), tmp_path)  # the 4th escalates through the CLI
    v = settle(failing(), tmp_path, source="hook:claude")
    assert v.status == "fail"
    assert v.attempt is not None and (v.attempt.number, v.attempt.max) == (5, 6)
    v = settle(failing(), tmp_path, source="hook:claude", attempts_global_max=20)
    assert v.attempt is not None and (v.attempt.number, v.attempt.max) == (2, 3)


def test_continuation_names_the_attempt_and_escalation_has_none(tmp_path: Path) -> None:
    config = Config(root=tmp_path, attempts_max=1)
    first = record(config, TaskRef("T1"), verdict(test_gate(15)), wall_s=1.0)
    assert first.status == "fail"
    assert first.continuation and "(attempt 1 of 1)" in first.continuation
    second = record(config, TaskRef("T1"), verdict(test_gate(15)), wall_s=1.0)
    assert second.status == "escalate" and second.continuation is None
    assert second.escalation


# -- the escalation report ------------------------------------------------------------------


def test_escalation_report_says_what_failed_and_what_changed(tmp_path: Path) -> None:
    settle(verdict(test_gate(15), lint_gate(4)), tmp_path, task="PR-12/fix tax")
    settle(verdict(test_gate(17), lint_gate(4)), tmp_path, task="PR-12/fix tax")
    settle(verdict(test_gate(17), lint_gate(4)), tmp_path, task="PR-12/fix tax")
    v = settle(verdict(test_gate(20), lint_gate(4)), tmp_path, task="PR-12/fix tax")
    assert v.status == "escalate" and v.escalation
    files = list((tmp_path / ".agentgate" / "escalations").iterdir())
    assert len(files) == 1 and files[0].name.startswith("PR-12_fix_tax-")
    report = files[0].read_text()
    assert report == v.escalation
    assert report.startswith("# agentgate: task PR-12/fix tax needs a human")
    assert "1. 2025-06-15 15:06 UTC, via cli: test: 15 of 20 tests passed; lint: 4 errors" in report
    assert "- 1 -> 2: test: 15 -> 17 of 20 passed; lint: 4 errors, unchanged" in report
    assert "- 2 -> 3: test: 17 of 20 passed, unchanged; lint: 4 errors, unchanged" in report
    assert "- 3 -> 4: test: 17 -> 20 of 20 passed (now passing); lint: 4 errors, unchanged" in (
        report
    )
    assert "lint has not moved over the last 4 attempts." in report
    assert "4. 2025-06-15 15:06 UTC, via cli: lint: 4 errors" in report
    assert "`agentgate reset --task PR-12/fix tax`" in report
    assert len(report) < 2000


def test_escalation_report_keeps_only_the_recent_attempts(tmp_path: Path) -> None:
    for _ in range(ledger.KEPT_ATTEMPTS + 3):
        v = settle(failing(), tmp_path, attempts_max=50, attempts_global_max=14)
    assert v.status == "escalate" and v.escalation
    assert "(3 earlier attempts not shown.)" in v.escalation
    assert f"\n{ledger.KEPT_ATTEMPTS + 3}. " in v.escalation
    assert "\n3. " not in v.escalation


def test_describe_change() -> None:
    def snap(status: str, summary: str = "s", **numbers: Any) -> dict[str, Any]:
        return {"status": status, "summary": summary, "numbers": numbers}

    change = escalation.describe_change
    assert (
        change(
            "test", "test", snap("fail", passed=3, executed=5), snap("fail", passed=4, executed=6)
        )
        == "test: 3 of 5 -> 4 of 6 passed"
    )
    assert (
        change(
            "lint", "lint", snap("fail", errors=4, warnings=2), snap("fail", errors=1, warnings=2)
        )
        == "lint: 4 -> 1 errors, 2 warnings"
    )
    assert (
        change("lint", "lint", snap("fail", errors=1), snap("fail", errors=1))
        == "lint: 1 error, unchanged"
    )
    assert (
        change("cov", "coverage", snap("fail", lines=80.0, branches=None), snap("fail", lines=80.0))
        == "cov: lines 80.00%, unchanged"
    )
    assert (
        change(
            "cov",
            "coverage",
            snap("fail", lines=80.0, branches=70.0),
            snap("pass", lines=91.5, branches=70.0),
        )
        == "cov: lines 80.00% -> 91.50%, branches 70.00% (now passing)"
    )
    assert change("build", "build", snap("pass", errors=0), snap("fail", errors=3)) == (
        "build: 0 -> 3 errors (now failing)"
    )
    assert change("audit", "custom", snap("fail", value=3), snap("fail", value=3.5)) == (
        "audit: value 3 -> 3.5"
    )
    assert change("audit", "custom", snap("fail", "bad"), snap("fail", "bad")) == (
        "audit: unchanged (bad)"
    )
    assert change("audit", "custom", snap("fail", "bad"), snap("fail", "worse")) == "audit: worse"


def test_failure_reasons_are_normalised() -> None:
    def g(
        kind: str,
        actual: dict[str, Any],
        expected: dict[str, Any] | None = None,
        summary: str = "s",
        problems: list[str] | None = None,
    ) -> GateResult:
        return GateResult(
            kind,
            kind,
            "fail",
            summary,
            expected=expected or {},
            actual=actual,
            problems=problems or [],
        )

    reason = history.failure_reason
    assert reason(g("test", {"passed": 0, "failed": 0, "errors": 0})) == "test: no tests executed"
    assert (
        reason(
            g(
                "test",
                {"passed": 1, "failed": 0, "errors": 0, "flaky": 1},
                summary="1 of 1 tests passed, 1 flaky",
            )
        )
        == "test: N of N tests passed, N flaky"
    )
    assert (
        reason(g("lint", {"errors": 0, "warnings": 60}, {"max_errors": 0, "max_warnings": 50}))
        == "lint: too many warnings"
    )
    assert reason(g("build", {"errors": 2, "exit_code": 1}, {"max_errors": 0})) == (
        "build: build errors"
    )
    assert reason(
        g(
            "coverage",
            {"lines": 80.0, "branches": 90.0},
            {"lines": 85.0, "branches": 85.0, "functions": 85.0},
        )
    ) == ("coverage: lines/functions coverage below threshold")
    for problem, kind in (
        ("command timed out after 60 s", "command timed out"),
        ("sh: 1: ruff: not found", "command or report not found"),
        ("no report matched .agentgate/junit.xml", "report missing"),
        ("the command exited 2 while its report shows nothing wrong", "command failed"),
    ):
        assert reason(g("lint", {"errors": None}, problems=[problem])) == f"lint: {kind}"
    assert reason(g("custom", {"exit_code": 1}, summary="")) == "custom: failed"


def test_key_numbers_of_other_kinds() -> None:
    gate = GateResult("audit", "custom", "fail", "s", actual={"value": 3, "ok": True, "x": "y"})
    assert history.key_numbers(gate) == {"value": 3}


def test_report_names_are_safe_and_distinct() -> None:
    assert storage.report_name("T1") == "T1.md"
    a, b = storage.report_name("a/b"), storage.report_name("a:b")
    assert a != b and a.startswith("a_b-") and "/" not in a
    assert storage.report_name("../..").endswith(".md") and "/" not in storage.report_name("../..")
    assert len(storage.report_name("x" * 200)) < 100


# -- blockers -------------------------------------------------------------------------------


def test_human_only_blocker_escalates_at_once_even_when_gates_pass(tmp_path: Path) -> None:
    assert ledger.block(tmp_path, TaskRef("T1", "hook:claude"), "needs_credentials", "no AWS key")
    v = settle(passing(), tmp_path)
    assert v.status == "escalate" and v.escalation
    assert "needs_credentials (needs credentials or secrets" in v.escalation
    assert "no AWS key" in v.escalation
    assert "every gate passed" in v.escalation
    # It stays until a human resets the task.
    assert settle(passing(), tmp_path).status == "escalate"
    assert ledger.reset(tmp_path, "T1") == 1
    assert settle(passing(), tmp_path).status == "pass"


def test_human_only_blocker_with_failing_gates(tmp_path: Path) -> None:
    ledger.block(tmp_path, TaskRef("T1"), "unsafe", "would drop the production table")
    v = settle(failing(), tmp_path)
    assert v.status == "escalate" and v.attempt and v.attempt.number == 1
    assert v.escalation and "would drop the production table" in v.escalation
    assert history_lines(tmp_path)[-1]["blocker"] == "unsafe"


@pytest.mark.parametrize(
    ("reason", "words"),
    [("transient", "retry the failing step"), ("insufficient_context", "gather it yourself")],
)
def test_retry_blockers_keep_the_agent_working(tmp_path: Path, reason: str, words: str) -> None:
    assert not ledger.block(tmp_path, TaskRef("T1"), reason, "registry returned 503")
    config = Config(root=tmp_path)
    v = record(config, TaskRef("T1"), verdict(test_gate(15)))
    assert v.status == "fail" and v.continuation
    assert words in v.continuation and "(registry returned 503)" in v.continuation
    # Used once: the next failing verdict is the ordinary continuation.
    again = record(config, TaskRef("T1"), verdict(test_gate(15)))
    assert again.continuation and words not in again.continuation


def test_retry_blocker_then_a_pass_closes_the_task(tmp_path: Path) -> None:
    ledger.block(tmp_path, TaskRef("T1"), "transient")
    assert settle(passing(), tmp_path).status == "pass"
    assert ledger.task_state(tmp_path, "T1") is None


def test_unknown_blocker_reason_lists_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="valid reasons: needs_credentials, needs_permissions"):
        ledger.block(tmp_path, TaskRef("T1"), "bored")


def test_task_ids_are_validated() -> None:
    for bad in ("", "   ", "a\nb", "x" * 201):
        with pytest.raises(LedgerError):
            TaskRef(bad)


# -- reset ----------------------------------------------------------------------------------


def test_reset_one_task_or_all(tmp_path: Path) -> None:
    assert ledger.reset(tmp_path) == 0  # nothing recorded yet
    for task in ("A", "B", "C"):
        settle(failing(), tmp_path, task=task)
    assert ledger.reset(tmp_path, "A") == 1
    assert ledger.reset(tmp_path, "A") == 0
    assert ledger.task_state(tmp_path, "B") is not None
    assert ledger.reset(tmp_path) == 2
    assert ledger.task_state(tmp_path, "B") is None
    v = settle(failing(), tmp_path, task="B")
    assert v.attempt and v.attempt.number == 1


# -- reliability ----------------------------------------------------------------------------

WORKER = """
import json, sys
from pathlib import Path
from pytest_agentgate.config import Config
from pytest_agentgate.engine import conclude
from pytest_agentgate.state.ledger import record
from pytest_agentgate.state.task import TaskRef
from pytest_agentgate.verdict import GateResult, Verdict

gate = GateResult("test", "test", "fail", "1 of 2 tests passed",
                  actual={"passed": 1, "failed": 1, "errors": 0, "total": 2})
verdict = Verdict("fail", "standard", [gate])
config = Config(root=Path(sys.argv[1]), attempts_max=3, attempts_global_max=100)
print("ready", flush=True)
sys.stdin.readline()
verdict = record(config, TaskRef("shared", "cli"), verdict,
                 lambda d: conclude(config, verdict.gates, decision=d), wall_s=0.1)
print(json.dumps([verdict.status, verdict.attempt.number]), flush=True)
"""


def test_concurrent_verifies_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(20)
    ]
    for proc in procs:  # every worker has imported everything: release them at once
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        results.append(json.loads(out))
    numbers = sorted(n for _, n in results)
    assert numbers == list(range(1, 21))
    assert sorted(s for s, _ in results).count("fail") == 3
    state = ledger.task_state(tmp_path, "shared")
    assert state is not None and state["total"] == 20 and state["sources"] == {"cli": 20}
    lines = ledger.read_history(tmp_path)
    assert len(lines) == 20
    assert sorted(x["attempt"]["number"] for x in lines) == list(range(1, 21))


def test_torn_last_history_line_is_skipped_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settle(failing(), tmp_path)
    settle(failing(), tmp_path)
    history = tmp_path / ".agentgate" / "history.jsonl"
    with history.open("a") as handle:
        handle.write('{"v": 1, "ts": 17500')  # a process killed mid-write
    assert len(ledger.read_history(tmp_path)) == 2
    assert "its last line is torn" in capsys.readouterr().err
    # The next append starts on a line of its own; the torn line is now reported by number.
    settle(failing(), tmp_path)
    records = ledger.read_history(tmp_path)
    assert [r["attempt"]["number"] for r in records] == [1, 2, 3]
    assert "line 3 is unreadable" in capsys.readouterr().err
    assert ledger.read_history(tmp_path / "nowhere") == []


def test_corrupt_state_is_set_aside_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settle(failing(), tmp_path)
    state = tmp_path / ".agentgate" / "state.json"
    state.write_text('{"schema": "agentgate.state/1", "tasks": {"T1": {"tot')
    v = settle(failing(), tmp_path)
    # The task's entry comes back from agentgate's copy outside the project (the user's state).
    assert v.status == "fail" and v.attempt and v.attempt.number == 2
    assert any("restored task T1's 1 rejection from" in n for n in v.notices)
    err = capsys.readouterr().err
    assert "is corrupt: invalid JSON" in err and "set aside as state.json.corrupt-" in err
    aside = list(state.parent.glob("state.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text().endswith('"tot')
    assert json.loads(state.read_text())["tasks"]["T1"]["total"] == 2


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {"schema": "other"},
        {"schema": "agentgate.state/1", "tasks": []},
        {"schema": "agentgate.state/1", "tasks": {"T1": {"total": -1}}},
        {
            "schema": "agentgate.state/1",
            "tasks": {
                "T1": {
                    "total": 1,
                    "verifies": 1,
                    "sources": {"cli": "x"},
                    "attempts": [],
                    "blockers": [],
                }
            },
        },
    ],
)
def test_state_of_the_wrong_shape_is_corrupt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: Any
) -> None:
    directory = tmp_path / ".agentgate"
    directory.mkdir()
    (directory / "state.json").write_text(json.dumps(doc))
    (directory / "state.json.corrupt-20250101T000000Z").write_text("older")
    assert storage.read_state(directory) == storage.empty_state()
    assert "is corrupt" in capsys.readouterr().err
    assert len(list(directory.glob("state.json.corrupt-*"))) == 2


def test_an_interrupted_state_write_leaves_the_old_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settle(failing(), tmp_path)
    state = tmp_path / ".agentgate" / "state.json"
    before = state.read_text()

    def killed(*args: Any) -> None:
        raise OSError("killed")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(OSError, match="killed"):
        storage.write_state(state.parent, storage.empty_state())
    assert state.read_text() == before
    assert [p.name for p in state.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_ledger_that_cannot_be_written_fails_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attempts that cannot be counted cannot run out: a failing task goes to a human at once
    instead of looping forever; the verdict says why. Without a task nothing escalates."""
    root = tmp_path / "file"
    root.write_text("not a directory")
    home = tmp_path / "home-is-a-file"
    home.write_text("neither is this")
    monkeypatch.setenv(storage.STATE_HOME_ENV, str(home))
    v = settle(failing(), root)
    assert v.status == "escalate" and v.attempt is None and v.continuation is None
    assert v.escalation and "without a count of the attempts" in v.escalation
    assert any(n.startswith("attempts could not be recorded in") for n in v.notices)
    assert "could not record the verdict" in capsys.readouterr().err
    untasked = settle(failing(), root, task=None)
    assert untasked.status == "fail" and untasked.continuation
    assert settle(passing(), root).status == "pass"


def test_a_project_state_folder_that_cannot_be_written_counts_in_the_copy_alone(
    tmp_path: Path, fresh_state_home: Path
) -> None:
    """The project's `.agentgate/` unwritable (here: the project's path is a file) made the
    first failing stop escalate, an agent's cheapest way out; agentgate's copy outside the
    project keeps the count instead, and the agent is told to make the folder writable."""
    root = tmp_path / "file"
    root.write_text("not a directory")
    results = [settle(failing(), root) for _ in range(4)]
    assert [(v.status, v.attempt and v.attempt.number) for v in results] == [
        ("fail", 1),
        ("fail", 2),
        ("fail", 3),
        ("escalate", 4),
    ]
    first = results[0]
    assert first.continuation and "agentgate's folder .agentgate/ in the project cannot be" in (
        first.continuation
    )
    [copy] = (fresh_state_home / "projects").iterdir()
    assert any(
        "the attempts are counted in agentgate's copy alone" in n and str(copy) in n
        for n in first.notices
    )
    report = copy / "escalations" / "T1.md"
    assert report.is_file() and "failed the gate 4 times" in report.read_text()
    assert any(f"the report is in {report}" in n for n in results[3].notices)
    lines = [json.loads(line) for line in (copy / "history.jsonl").read_text().splitlines()]
    assert [line["attempt"]["number"] for line in lines] == [1, 2, 3, 4]


def test_a_state_write_that_fails_midway_is_kept_in_the_copy(
    tmp_path: Path, fresh_state_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk shows only when agentgate writes: the state it could not write in the
    project is written in the copy, and the next verdict counts on from it."""
    settle(failing(), tmp_path)

    def full(self: object, state: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(storage.LocalStorage, "write_state", full)
        second = settle(failing(), tmp_path)
    assert second.status == "fail" and second.attempt and second.attempt.number == 2
    third = settle(failing(), tmp_path)
    assert third.attempt and third.attempt.number == 3
    assert any("fewer than agentgate's copy; restored its 2 rejections" in n for n in third.notices)
    with monkeypatch.context() as patch:
        patch.setattr(storage.LocalStorage, "write_state", full)
        patch.setattr(storage.UserMirror, "write", full)
        fourth = settle(failing(), tmp_path)
    assert fourth.status == "escalate" and fourth.attempt is None
    [why] = [n for n in fourth.notices if n.startswith("attempts could not be recorded")]
    assert "No space left on device; nor agentgate's copy in" in why


def test_a_dead_writers_temporary_files_are_cleaned_under_the_lock(tmp_path: Path) -> None:
    settle(failing(), tmp_path)
    state = tmp_path / ".agentgate"
    leftovers = [state / ".state.json.abc123.tmp", state / "escalations" / ".T1.md.x.tmp"]
    leftovers[1].parent.mkdir(exist_ok=True)
    for path in leftovers:
        path.write_text("half written")
    settle(failing(), tmp_path)
    assert not [p for p in leftovers if p.exists()]
    assert (state / "state.json").exists()


# -- per-branch tasks -----------------------------------------------------------------------


def test_per_branch_counts_the_git_branch(tmp_path: Path) -> None:
    git = shutil.which("git")
    if git is None:  # pragma: no cover
        pytest.skip("git is not installed")
    subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
    subprocess.run([git, "checkout", "-q", "-b", "feature/login"], cwd=tmp_path, check=True)
    v = settle(failing(), tmp_path, task=None, attempts_per_branch=True)
    assert v.attempt and v.attempt.number == 1
    assert history_lines(tmp_path)[-1]["task"] == "feature/login"
    assert ledger.task_state(tmp_path, "feature/login") is not None
    # Without per_branch, no task.
    assert settle(failing(), tmp_path, task=None).attempt is None
    assert ledger.resolve_task(Config(root=tmp_path), None) is None


def test_branch_task_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on PATH
    assert ledger.branch_task(tmp_path) is None


def test_branch_task_detached_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def detached(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(args, 1, "", "")

    monkeypatch.setattr(ledger.subprocess, "run", detached)
    assert ledger.branch_task(tmp_path) is None


# -- configuration --------------------------------------------------------------------------


def _validate(data: dict[str, Any], registry: Registry, tmp_path: Path) -> Config:
    return validate(RawConfig(data, "agentgate.yml"), registry, root=tmp_path, path=None)


def test_attempts_config_keys(registry: Registry, tmp_path: Path) -> None:
    config = _validate(
        {"attempts": {"max": 2, "global_max": 4, "per_branch": True}}, registry, tmp_path
    )
    assert (config.attempts_max, config.attempts_global_max, config.attempts_per_branch) == (
        2,
        4,
        True,
    )
    default = _validate({}, registry, tmp_path)
    assert (default.attempts_global_max, default.attempts_per_branch) == (6, False)
    with pytest.raises(ConfigError, match=r"attempts.global_max: expected a whole number >= 1"):
        _validate({"attempts": {"global_max": 0}}, registry, tmp_path)
    with pytest.raises(ConfigError, match=r"attempts.per_branch: expected true or false"):
        _validate({"attempts": {"per_branch": "yes"}}, registry, tmp_path)
    with pytest.raises(ConfigError, match=r"did you mean 'global_max'"):
        _validate({"attempts": {"globalmax": 3}}, registry, tmp_path)


# -- the CLI --------------------------------------------------------------------------------


def test_cli_verify_escalates_with_exit_3(project: Path, agentgate: Agentgate) -> None:
    junit = str(DATA / "junit" / "pytest-xunit1.xml")
    args = ("verify", "--no-run", "--junit", junit, "--task", "T9", "--format", "json")
    codes = [agentgate(*args).code for _ in range(3)]
    assert codes == [1, 1, 1]
    run = agentgate(*args)
    assert run.code == 3
    doc = run.verdict()
    assert doc["status"] == "escalate" and doc["attempt"] == {"number": 4, "max": 3}
    assert doc["escalation"] == (project / ".agentgate/escalations/T9.md").read_text()
    text = agentgate("verify", "--no-run", "--junit", junit, "--task", "T9")
    assert text.code == 3 and "ESCALATE" in text.out and "needs a human" in text.out
    # A human takes over.
    reset = agentgate("reset", "--task", "T9")
    assert reset.code == 0 and "cleared task T9" in reset.out
    assert agentgate(*args).verdict()["attempt"] == {"number": 1, "max": 3}
    assert "had no attempts" in agentgate("reset", "--task", "nope").out
    assert "cleared 1 task" in agentgate("reset").out


def test_cli_without_task_counts_nothing(project: Path, agentgate: Agentgate) -> None:
    junit = str(DATA / "junit" / "pytest-xunit1.xml")
    for _ in range(5):
        run = agentgate("verify", "--no-run", "--junit", junit, "--format", "json")
        assert run.code == 1 and run.verdict()["attempt"] is None
    assert len(ledger.read_history(project)) == 5


def test_cli_block(project: Path, agentgate: Agentgate) -> None:
    junit = str(DATA / "junit" / "pytest-xunit1.xml")
    run = agentgate("block", "--task", "T1", "--reason", "needs_permissions", "--detail", "push")
    assert run.code == 0 and "the next verify escalates to a human" in run.out
    verify = agentgate("verify", "--no-run", "--junit", junit, "--task", "T1", "--format", "json")
    assert verify.code == 3 and "needs_permissions" in verify.verdict()["escalation"]
    run = agentgate("block", "--task", "T2", "--reason", "transient")
    assert run.code == 0 and "keep going" in run.out
    none = agentgate("block", "--reason", "unsafe")
    assert none.code == 2 and "block needs --task" in none.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["block", "--task", "T1", "--reason", "bored"], "choose from 'needs_credentials'"),
        (["verify", "--task", ""], "task id cannot be empty"),
        (["stats", "--format", "pdf"], "invalid choice: 'pdf'"),
    ],
)
def test_cli_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    from pytest_agentgate.cli.main import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    if argv[0] == "block":
        assert "insufficient_context" in err


def test_cli_block_per_branch(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    git = shutil.which("git")
    if git is None:  # pragma: no cover
        pytest.skip("git is not installed")
    subprocess.run([git, "init", "-q", "-b", "main", str(tmp_path)], check=True)
    (tmp_path / "agentgate.yml").write_text(
        "attempts: {per_branch: true}\ngates:\n  test: {report: junit.xml}\n"
    )
    monkeypatch.chdir(tmp_path)
    run = agentgate("block", "--reason", "needs_human_decision", "--detail", "which API?")
    assert run.code == 0 and "task main" in run.out
    shutil.copy(DATA / "junit" / "pytest-xunit1.xml", tmp_path / "junit.xml")
    verify = agentgate("verify", "--no-run", "--format", "json")
    assert verify.code == 3 and "which API?" in verify.verdict()["escalation"]


def test_a_human_blocker_outranks_a_retry_blocker(tmp_path: Path) -> None:
    ledger.block(tmp_path, TaskRef("T1"), "transient")
    ledger.block(tmp_path, TaskRef("T1"), "needs_credentials")
    v = settle(verdict(test_gate(20), lint_gate(0)), tmp_path)
    assert v.status == "escalate" and v.continuation is None
    assert history_lines(tmp_path)[-1]["blocker"] == "needs_credentials"
    state = ledger.task_state(tmp_path, "T1")
    assert state is not None and [b["reason"] for b in state["blockers"]] == ["needs_credentials"]


def test_a_gate_new_in_the_last_attempt_has_no_streak(tmp_path: Path) -> None:
    settle(verdict(test_gate(15)), tmp_path, attempts_max=1)
    v = settle(verdict(test_gate(15), lint_gate(4)), tmp_path, attempts_max=1)
    assert v.escalation and "test has not moved over the last 2 attempts." in v.escalation
    assert "lint has not moved" not in v.escalation


KILLED_BEFORE_THE_HISTORY = """\
import os, sys
from pytest_agentgate.state import storage
def killed(self, record):  # SIGKILL between the state's write and the history's append
    os._exit(137)
storage.LocalStorage.append_history = killed
from pytest_agentgate.cli.main import main
sys.exit(main(["verify", "--task", "t", "--format", "json"]))
"""


def test_a_process_killed_before_its_history_line_loses_no_line(tmp_path: Path) -> None:
    """The history line is in the state (one atomic write) before it is appended: the next
    verdict appends what a killed process could not, so history and attempts agree."""
    (tmp_path / "agentgate.yml").write_text(
        "gates:\n  build:\n    command: python -c 'raise SystemExit(1)'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_THE_HISTORY], cwd=tmp_path, env=env, check=False
    )
    assert done.returncode == 137
    assert not (tmp_path / ".agentgate" / "history.jsonl").exists()
    verify = [sys.executable, "-m", "pytest_agentgate", "verify", "--task", "t"]
    subprocess.run(verify, cwd=tmp_path, env=env, capture_output=True, check=False)
    subprocess.run(verify, cwd=tmp_path, env=env, capture_output=True, check=False)
    lines = [line for line in history_lines(tmp_path) if line.get("task") == "t"]
    assert [line["attempt"]["number"] for line in lines] == [1, 2, 3]
    assert len({line["id"] for line in lines}) == 3
