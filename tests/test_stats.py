"""The gate's own dashboard (stats.py), computed from history.jsonl only."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import DATA, CliRun
from _helpers import record as record_verdict

from pytest_agentgate.config import Config
from pytest_agentgate.state import ledger, stats
from pytest_agentgate.state.task import LedgerError, TaskRef
from pytest_agentgate.verdict import GateResult, Verdict

Agentgate = Callable[..., CliRun]
DAY = 86400.0
T0 = 1_750_000_000.0  # 2025-06-15 15:06:40 UTC
SVG = "{http://www.w3.org/2000/svg}"


def record(
    ts: float,
    task: str | None,
    status: str,
    *gates: tuple[str, str, float | None],
    wall: float | None = 10.0,
    reason: str | None = None,
) -> dict[str, Any]:
    """One history line; each gate is (name, status, duration)."""
    items = []
    for name, gate_status, duration in gates:
        item: dict[str, Any] = {"name": name, "status": gate_status, "duration_s": duration}
        if gate_status == "fail" and reason != "none":
            item["reason"] = reason or f"{name}: failing"
        items.append(item)
    return {"ts": ts, "task": task, "status": status, "wall_s": wall, "gates": items}


def history() -> list[dict[str, Any]]:
    ok = ("test", "pass", 4.0)
    bad = ("test", "fail", 4.0)
    lint_ok = ("lint", "pass", 1.0)
    lint_bad = ("lint", "fail", 1.0)
    return [
        # A: first try.
        record(T0, "A", "pass", ok, lint_ok),
        # B: one rejection, then a pass the next day.
        record(T0 + 10, "B", "fail", bad, lint_ok),
        record(T0 + DAY, "B", "pass", ok, lint_ok),
        # C: three rejections and an escalation, two days later.
        record(T0 + 2 * DAY, "C", "fail", ok, lint_bad),
        record(T0 + 2 * DAY + 1, "C", "fail", ok, lint_bad),
        record(T0 + 2 * DAY + 2, "C", "fail", bad, lint_bad),
        record(T0 + 2 * DAY + 3, "C", "escalate", bad, lint_bad),
        # No task: in the totals and per gate, not in the task numbers.
        record(T0 + 3 * DAY, None, "fail", bad, ("lint", "skipped", None), wall=None),
    ]


def test_compute_every_number() -> None:
    s = stats.compute(history(), now=T0 + 3 * DAY + 60)
    assert s["schema"] == "agentgate.stats/1" and s["since"] is None and s["from"] is None
    assert (s["verdicts"], s["passed"], s["failed"], s["escalated"]) == (8, 2, 5, 1)
    assert s["tasks"] == 3
    assert s["first_try_passes"] == 1 and s["first_try_pass_rate"] == pytest.approx(100 / 3)
    assert s["rejections_per_task"] == {"0": 1, "1": 1, "2": 0, "3+": 1}
    assert s["escalated_tasks"] == 1 and s["escalation_rate"] == pytest.approx(100 / 3)
    gates = {g["name"]: g for g in s["gates"]}
    assert gates["test"]["runs"] == 8 and gates["test"]["passed"] == 4
    assert gates["test"]["pass_rate"] == 50.0 and gates["test"]["mean_duration_s"] == 4.0
    assert gates["lint"]["runs"] == 7 and gates["lint"]["pass_rate"] == pytest.approx(300 / 7)
    # Task time from the verdicts (no transcript here): B from its first verify's start (10 s
    # before T0 + 10) to T0 + DAY, C over 13 s; A has one verdict, so no known time. The gate
    # time is the wall time of their verifies, 10 s each.
    assert (s["tasks_timed"], s["gate_time_s"], s["task_time_s"]) == (2, 60.0, DAY + 13)
    assert s["gate_share_of_task_time"] == pytest.approx(60 * 100 / (DAY + 13))
    assert (s["tokens_per_task"], s["tasks_with_tokens"]) == (None, 0)
    assert s["top_failure_reasons"] == [
        {"reason": "test: failing", "count": 4},
        {"reason": "lint: failing", "count": 4},
    ]
    days = s["days"]
    assert [d["date"] for d in days] == ["2025-06-15", "2025-06-16", "2025-06-17", "2025-06-18"]
    assert days[0] == {
        "date": "2025-06-15",
        "verdicts": 2,
        "passed": 1,
        "rejected": 1,
        "escalated": 0,
        "pass_rate": 50.0,
        "rejection_rate": 50.0,
    }
    assert days[2]["rejection_rate"] == 100.0 and days[2]["escalated"] == 1


def test_since_window_and_gaps() -> None:
    s = stats.compute(history(), since="36h", now=T0 + 3 * DAY + 60)
    assert s["since"] == "36h" and s["from"] == "2025-06-17T03:07:40+00:00"
    assert s["verdicts"] == 5 and s["tasks"] == 1
    assert s["first_try_pass_rate"] == 0.0
    gappy = stats.compute([record(T0, "A", "pass"), record(T0 + 3 * DAY, "A", "pass")], now=T0)
    assert [d["verdicts"] for d in gappy["days"]] == [1, 0, 0, 1]
    assert gappy["days"][1]["pass_rate"] is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("7d", 7 * DAY),
        ("24h", DAY),
        ("30m", 1800.0),
        ("2w", 14 * DAY),
        ("90s", 90.0),
        ("1.5h", 5400.0),
    ],
)
def test_parse_since(text: str, seconds: float) -> None:
    assert stats.parse_since(text) == seconds


@pytest.mark.parametrize("text", ["", "7", "d", "0d", "-1d", "7 days", "7y"])
def test_parse_since_rejects(text: str) -> None:
    with pytest.raises(LedgerError, match="positive duration such as 7d"):
        stats.parse_since(text)


def test_odd_lines_do_not_break_the_numbers() -> None:
    odd = [
        {
            "ts": T0,
            "task": "A",
            "status": "fail",
            "gates": [
                "not a gate",
                {"name": "x", "status": "fail", "duration_s": True},
            ],
        },
        {"ts": T0 + 1, "task": "A", "status": "fail", "gates": None, "wall_s": 0},
    ]
    s = stats.compute(odd, now=T0)
    assert s["gates"] == [
        {"name": "x", "runs": 1, "passed": 0, "pass_rate": 0.0, "mean_duration_s": None}
    ]
    assert s["top_failure_reasons"] == [{"reason": "x: failed", "count": 1}]
    assert s["gate_share_of_task_time"] is None
    assert s["rejections_per_task"]["2"] == 1


def test_text_rendering() -> None:
    text = stats.render_text(stats.compute(history(), since="7d", now=T0 + 3 * DAY))
    assert text.startswith(
        "agentgate stats, the last 7d: 8 verdicts (2 pass, 5 fail, 1 escalate), 3 tasks"
    )
    assert "first-try pass rate  33.33% (1 of 3 tasks)" in text
    assert "rejections per task  0: 1  1: 1  2: 0  3+: 1" in text
    assert "escalation rate      33.33% (1 of 3 tasks)" in text
    assert (
        "gate time            0.07% of task time (60.00 s of verifies in 86413.00 s of 2 tasks)"
        in text
    )
    assert "tokens per task      n/a (no transcript read yet)" in text
    assert "  test  pass 50.00% (4 of 8)  mean 4.00 s" in text
    assert "     4  test: failing" in text
    empty = stats.render_text(stats.compute([], now=T0))
    assert "0 verdicts" in empty and "no verdicts recorded yet" in empty


def test_markdown_rendering() -> None:
    md = stats.render_markdown(stats.compute(history(), now=T0 + 3 * DAY))
    assert md.startswith("## agentgate stats (all recorded history)\n")
    assert "| First-try pass rate | 33.33% |" in md
    assert "| Rejections per task | 0: 1, 1: 1, 2: 0, 3+: 1 |" in md
    assert "| test | 50.00% | 8 | 4.00 s |" in md
    assert "1. test: failing (4)" in md
    assert "No verdicts recorded yet." in stats.render_markdown(stats.compute([], now=T0))
    pipes = stats.compute([record(T0, "A", "fail", ("a|b", "fail", None))], now=T0)
    assert "| a\\|b | 0.00% | 1 | n/a |" in stats.render_markdown(pipes)


def test_json_rendering() -> None:
    s = stats.compute(history(), now=T0 + 3 * DAY)
    assert json.loads(stats.render_json(s)) == s


def test_svg_is_valid_and_draws_each_day() -> None:
    svg = stats.render_svg(stats.compute(history(), since="30d", now=T0 + 3 * DAY))
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert len(bars) == 8  # 4 days, a pass bar and a rejection bar each
    titles = [b.find(f"{SVG}title").text for b in bars]  # type: ignore[union-attr]
    assert "2025-06-15: pass rate 50.00%" in titles
    assert "2025-06-16: rejection rate n/a" not in titles
    assert float(bars[4].get("height", "0")) == 0.0  # day 3 passes nothing
    empty = ET.fromstring(stats.render_svg(stats.compute([], now=T0)))
    assert any(t.text == "no verdicts recorded" for t in empty.iter(f"{SVG}text"))


def test_stats_from_a_real_ledger(tmp_path: Path) -> None:
    config = Config(root=tmp_path)
    failing = GateResult(
        "test",
        "test",
        "fail",
        "1 of 2 tests passed",
        actual={"passed": 1, "failed": 1, "errors": 0},
        duration_s=1.0,
    )
    for n in range(4):
        v = Verdict("fail", "standard", [failing])
        record_verdict(config, TaskRef("T"), v, wall_s=2.0, now=T0 + 60 * n)
    passing = GateResult("test", "test", "pass", "2 of 2 tests passed")
    record_verdict(config, TaskRef("U"), Verdict("pass", "standard", [passing]), wall_s=1.0, now=T0)
    s = stats.compute(ledger.read_history(tmp_path), now=T0)
    assert s["tasks"] == 2 and s["escalated_tasks"] == 1
    assert s["rejections_per_task"] == {"0": 1, "1": 0, "2": 0, "3+": 1}
    assert s["top_failure_reasons"] == [{"reason": "test: failing tests", "count": 4}]
    # T: four verifies of 2 s over 3 minutes (and 2 s); U has one verdict and no transcript.
    assert (s["tasks_timed"], s["gate_time_s"], s["task_time_s"]) == (1, 8.0, 182.0)
    assert s["gate_share_of_task_time"] == pytest.approx(8 * 100 / 182)


def test_cli_stats(project: Path, agentgate: Agentgate) -> None:
    junit = str(DATA / "junit" / "pytest-xunit1.xml")
    for _ in range(2):
        agentgate("verify", "--no-run", "--junit", junit, "--task", "T1")
    text = agentgate("stats")
    assert text.code == 0 and "2 verdicts (0 pass, 2 fail, 0 escalate), 1 tasks" in text.out
    assert "test: failing tests" in text.out
    # "--format=json": the fixture checks `--format json` output against the verdict schema.
    doc = json.loads(agentgate("stats", "--format=json", "--since", "1h").out)
    assert doc["verdicts"] == 2 and doc["rejections_per_task"]["2"] == 1
    md = agentgate("stats", "--format", "markdown")
    assert md.out.startswith("## agentgate stats")
    svg = agentgate("stats", "--format", "svg", "--output", "out/chart.svg")
    assert svg.code == 0 and "wrote out/chart.svg" in svg.err and svg.out == ""
    ET.fromstring((project / "out" / "chart.svg").read_text())
    assert ET.fromstring(agentgate("stats", "--format", "svg").out).tag == f"{SVG}svg"
    bad = agentgate("stats", "--since", "soon")
    assert bad.code == 2 and "--since expects a positive duration" in bad.err


def test_cli_stats_with_a_config_elsewhere(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "agentgate.yml").write_text("gates:\n  test: {report: junit.xml}\n")
    sub = tmp_path / "src"
    sub.mkdir()
    record_verdict(Config(root=tmp_path), None, Verdict("pass", "standard", []), now=T0)
    monkeypatch.chdir(sub)
    run = agentgate("stats", "--format=json")
    assert json.loads(run.out)["verdicts"] == 1
    run = agentgate("stats", "--config", "../agentgate.yml", "--format=json")
    assert json.loads(run.out)["verdicts"] == 1


def test_stats_learn_the_task_time_and_tokens_from_the_transcript(
    project: Path, agentgate: Agentgate
) -> None:
    junit = str(DATA / "junit" / "pytest-xunit1.xml")
    transcript = str(DATA / "transcripts" / "claude-code.jsonl")
    for _ in range(2):
        run = agentgate(
            "verify", "--no-run", "--junit", junit, "--task", "T1", "--transcript", transcript
        )
        assert run.code == 1
    lines = ledger.read_history(project)
    assert lines[-1]["session"] == {"duration_s": 0.729, "tokens": 360, "tool_calls": 5}
    doc = json.loads(agentgate("stats", "--format=json").out)
    assert (doc["tokens_per_task"], doc["tasks_with_tokens"]) == (360.0, 1)
    walls = sum(line["wall_s"] for line in lines)
    # The two verifies took longer than the session's 0.729 s: their span is the task's time.
    span = lines[-1]["ts"] - lines[0]["ts"] + lines[0]["wall_s"]
    assert doc["task_time_s"] == pytest.approx(max(span, 0.729), abs=1e-3)
    assert doc["gate_share_of_task_time"] == pytest.approx(
        walls * 100 / doc["task_time_s"], rel=1e-3
    )
    text = agentgate("stats").out
    assert "tokens per task      360 (mean of 1 task with a transcript)" in text
