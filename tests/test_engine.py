"""The pipeline: plan, run, judge, verdict; and the rules that hold for every gate."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import DATA, CliRun

from pytest_agentgate import engine
from pytest_agentgate.config import Config
from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import CollectContext, Evidence, Option
from pytest_agentgate.registry import Registry
from pytest_agentgate.state.storage import ensure_state_dir
from pytest_agentgate.verdict import GateResult, Verdict

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]
JUNIT = DATA / "junit"


def _config(root: Path, *gates: GateConfig, **extra: Any) -> Config:
    return Config(root=root, profile="standard", gates=list(gates), **extra)


def run_verdict(
    config: Config, registry: Registry, *, run: bool = True, task: str | None = None
) -> Verdict:
    """The pipeline as a door calls it: run, collect, judge, conclude, record."""
    request = engine.Request(config, door="cli", task=task, run=run, record=True)
    return engine.run(request, registry)


# -- plan and environment ---------------------------------------------------------------------


def test_plan_runs_only_enabled_gates_with_commands(tmp_path: Path, registry: Registry) -> None:
    config = _config(
        tmp_path,
        GateConfig("build", "build", command="make", env={"A": "1"}),
        GateConfig("lint", "lint", command="ruff check", format="ruff"),
        GateConfig("lint2", "lint", command="ruff check", format="ruff", reports=["r.json"]),
        GateConfig("test", "test", reports=["junit.xml"]),
        GateConfig("off", "build", command="make", enabled=False),
    )
    plan = engine.make_plan(config, registry)
    specs = {s.key: s for s in plan.commands}
    assert list(specs) == ["build", "lint", "lint2"]
    assert specs["build"].env is not None and specs["build"].env["A"] == "1"
    assert specs["lint"].stdout_limit == 64 * 1024 * 1024  # the report is on stdout
    assert specs["lint2"].stdout_limit == 1024 * 1024
    assert specs["build"].cwd == tmp_path
    assert engine.make_plan(config, registry, run=False).commands == []
    config.enabled = False
    assert engine.make_plan(config, registry).commands == []


def test_command_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setattr(sys, "prefix", "/venv")
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    env = engine.command_environment()
    assert env["VIRTUAL_ENV"] == "/venv"
    assert env["PATH"].startswith(os.path.dirname(sys.executable) + os.pathsep)
    monkeypatch.setenv("VIRTUAL_ENV", "/active")
    assert engine.command_environment() == {}
    monkeypatch.delenv("VIRTUAL_ENV")
    monkeypatch.setattr(sys, "prefix", "/usr")
    assert engine.command_environment() == {}


def test_command_environment_of_the_python_named_for_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AGENTGATE_PYTHON (the GitHub Action's): agentgate runs from a virtualenv of its own, the
    commands with the workflow's Python, whose folder goes first on PATH. VIRTUAL_ENV names
    its environment when it is a virtual environment's, and is not set for a Python of none
    (setup-python's), whose installation no tool should take for an active environment."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin")
    monkeypatch.setattr(sys, "prefix", "/agentgate-venv")
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    installed = tmp_path / "hostedtoolcache" / "bin"
    installed.mkdir(parents=True)
    monkeypatch.setenv("AGENTGATE_PYTHON", str(installed / "python3"))
    assert engine.command_environment() == {"PATH": f"{installed}{os.pathsep}/usr/bin"}
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setenv("AGENTGATE_PYTHON", str(venv / "bin" / "python3"))
    assert engine.command_environment() == {
        "PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin",
        "VIRTUAL_ENV": str(venv),
    }
    monkeypatch.setenv("AGENTGATE_PYTHON", "")
    assert engine.command_environment()["VIRTUAL_ENV"] == "/agentgate-venv"


def test_state_dir_is_git_ignored(tmp_path: Path) -> None:
    state = ensure_state_dir(tmp_path)
    ignore = state / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "*"
    ignore.write_text("custom\n")
    ensure_state_dir(tmp_path)
    assert ignore.read_text() == "custom\n"


# -- the verdict ------------------------------------------------------------------------------


class Exploding:
    """A gate kind with a bug in its judge (or, with ``in_collect``, in its collector)."""

    name = "exploding"
    options: tuple[Option, ...] = ()
    stdout_report = False

    def __init__(self, in_collect: bool = False) -> None:
        self.in_collect = in_collect

    def collect(self, context: CollectContext) -> Evidence:
        if self.in_collect:
            raise KeyError("boom")
        return Evidence(context.root, command=context.result)

    def judge(self, config: GateConfig, evidence: Evidence) -> GateResult:
        raise KeyError("boom")


@pytest.mark.parametrize("in_collect", [False, True], ids=["judge", "collect"])
@pytest.mark.parametrize("kind", ["build", "lint", "test", "coverage", "custom"])
def test_a_gate_kind_that_raises_fails_the_gate(
    kind: str,
    in_collect: bool,
    tmp_path: Path,
    registry: Registry,
    check_verdict: Callable[[dict[str, Any]], dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(registry.kinds, kind, Exploding(in_collect))
    config = _config(tmp_path, GateConfig("g", kind, command="true"))
    verdict = run_verdict(config, registry)
    (gate,) = verdict.gates
    assert gate.status == "fail"
    assert verdict.status == "fail"
    assert "KeyError('boom')" in gate.summary
    assert "internal error" in gate.problems[0] and "KeyError" in gate.problems[0]
    if kind == "build":
        assert gate.actual["exit_code"] == 0
    check_verdict(verdict.to_dict())


def test_a_change_that_cannot_be_read_fails_the_gates_that_need_it(
    tmp_path: Path,
    registry: Registry,
    check_verdict: Callable[[dict[str, Any]], dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The verdict reads the change in a thread while the collectors read their reports: what
    # reading it raised reaches the gates that ask for it, never the door as a trace.
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("git went away")

    monkeypatch.setattr(engine, "find_change", broken)
    config = _config(
        tmp_path,
        GateConfig("build", "build", command="true"),
        GateConfig("integrity", "integrity"),
    )
    verdict = run_verdict(config, registry)
    gates = {g.name: g for g in verdict.gates}
    assert gates["build"].status == "pass"
    assert gates["integrity"].status == "fail"
    assert "RuntimeError('git went away')" in gates["integrity"].summary
    assert verdict.status == "fail"
    check_verdict(verdict.to_dict())


def test_nothing_verified_is_a_failure(tmp_path: Path, registry: Registry) -> None:
    config = _config(tmp_path, GateConfig("build", "build", command="true"))
    # The task's integrity gate (outside git: against its snapshot) is switched off here.
    config.gates.insert(0, GateConfig("integrity", "integrity", enabled=False))
    verdict = run_verdict(config, registry, run=False, task="T")
    assert [(g.name, g.status) for g in verdict.gates] == [
        ("integrity", "skipped"),
        ("build", "skipped"),
    ]
    assert verdict.status == "fail"
    assert engine.NOTHING_VERIFIED in verdict.notices
    assert verdict.continuation is not None
    first = verdict.continuation.splitlines()[0]
    assert first.startswith("COMPLETION REJECTED (attempt 1 of 3)")
    assert engine.NOTHING_VERIFIED in verdict.continuation


def test_no_gates_at_all_is_a_failure(tmp_path: Path, registry: Registry) -> None:
    verdict = run_verdict(_config(tmp_path), registry)
    assert verdict.status == "fail"
    assert verdict.notices == [engine.NOTHING_VERIFIED]


def test_disabled_configuration_passes_and_says_so(tmp_path: Path, registry: Registry) -> None:
    config = _config(tmp_path, GateConfig("build", "build", command="false"), enabled=False)
    verdict = run_verdict(config, registry)
    assert verdict.status == "pass"
    assert verdict.gates[0].summary == "disabled in the configuration"
    assert any("enabled: false" in n for n in verdict.notices)
    assert verdict.gates[0].exit_code is None  # nothing ran


def test_disabled_gate_is_skipped(tmp_path: Path, registry: Registry) -> None:
    config = _config(
        tmp_path,
        GateConfig("off", "build", command="false", enabled=False),
        GateConfig("on", "build", command="true"),
    )
    verdict = run_verdict(config, registry)
    assert [g.status for g in verdict.gates] == ["skipped", "pass"]
    assert verdict.status == "pass"
    assert verdict.continuation is None


def test_advisory_gate_failure_does_not_fail_the_verdict(
    tmp_path: Path, registry: Registry
) -> None:
    config = _config(
        tmp_path,
        GateConfig("advice", "build", command="false", blocking=False),
        GateConfig("build", "build", command="true"),
    )
    verdict = run_verdict(config, registry)
    assert verdict.gates[0].status == "fail"
    assert verdict.status == "pass"


# -- rules for every gate, through real commands -----------------------------------------------


def test_reports_are_read_after_every_command_finished(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    # The coverage gate has no command: it reads what the (slower) test command writes.
    summary = (DATA / "js" / "coverage-summary.json").read_text()
    (project / "summary.src").write_text(summary)
    write_config(
        "gates:\n"
        "  test:\n"
        f"    command: sleep 0.3 && cp {JUNIT / 'pytest-teardown-dup.xml'} junit.xml && "
        "cp summary.src .agentgate/summary.json\n"
        "    report: junit.xml\n"
        "    min_pass_rate: 0\n"
        "  coverage:\n"
        "    report: .agentgate/summary.json\n"
        "    branches: 70\n"
    )
    run = agentgate("verify", "--format", "json")
    assert run.gate("coverage")["status"] == "pass", run.gate("coverage")
    assert run.gate("coverage")["actual"]["lines"] == pytest.approx(40 * 100 / 44)
    assert run.gate("test")["actual"]["total"] == 2


def test_stale_reports_fail(project: Path, write_config: WriteConfig, agentgate: Agentgate) -> None:
    state = project / ".agentgate"
    state.mkdir()
    (state / "junit.xml").write_bytes((JUNIT / "pytest-teardown-dup.xml").read_bytes())
    (state / "summary.json").write_bytes((DATA / "js" / "coverage-summary.json").read_bytes())
    (project / "ci-made.json").write_bytes((DATA / "js" / "coverage-summary.json").read_bytes())
    old = time.time() - 3600
    for path in (state / "junit.xml", state / "summary.json", project / "ci-made.json"):
        os.utime(path, (old, old))
    write_config(
        "gates:\n"
        "  test:\n"
        "    command: echo pretend --cov-report=json:.agentgate/summary.json\n"
        "    report: .agentgate/junit.xml\n"
        "  coverage:\n"
        "    report: .agentgate/summary.json\n"
        "  old-ci-report:\n"
        "    kind: coverage\n"
        "    report: ci-made.json\n"
        "    branches: null\n"
    )
    run = agentgate("verify", "--format", "json")
    assert run.code == 1
    for name in ("test", "coverage"):
        gate = run.gate(name)
        assert gate["status"] == "fail", name
        assert any("older than the run" in p for p in gate["problems"]), name
    # Nobody in this run writes ci-made.json, but agentgate ran the gates' commands: a report
    # counts only from the run that made it (an hour-old one is not evidence of this work).
    old_ci = run.gate("old-ci-report")
    assert old_ci["status"] == "fail"
    assert "not written in this run" in old_ci["problems"][-1]
    assert "agentgate verify --no-run" in old_ci["problems"][-1]
    # Reports an earlier CI step wrote are read with --no-run, where nothing is stale.
    report_only = agentgate("verify", "--format", "json", "--no-run")
    assert report_only.gate("old-ci-report")["status"] == "pass"


def test_a_report_dated_in_the_future_is_not_evidence(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    summary = project / "summary.json"
    summary.write_bytes((DATA / "js" / "coverage-summary.json").read_bytes())
    ahead = time.time() + 86400
    os.utime(summary, (ahead, ahead))
    write_config("gates:\n  coverage:\n    report: summary.json\n    branches: null\n")
    for args in ((), ("--no-run",)):
        gate = agentgate("verify", "--format", "json", *args).gate("coverage")
        assert gate["status"] == "fail"
        assert "summary.json: is dated in the future" in gate["problems"][-1]


EXIT_BUT_CLEAN = {
    "lint": "  lint:\n    command: sh -c 'echo []; exit 2'\n    format: ruff\n",
    "test": ("  test:\n    command: cp pass.src j.xml; exit 3\n    report: j.xml\n"),
    "coverage": (
        "  coverage:\n"
        f"    command: cp {DATA / 'js' / 'coverage-summary.json'} c.json; exit 2\n"
        "    report: c.json\n"
        "    branches: 70\n"
    ),
    "custom": (
        "  custom:\n"
        '    - {name: custom, command: "echo \'{\\"n\\": 0}\'; exit 4", metric: n, max: 0}\n'
    ),
}


@pytest.mark.parametrize("kind", sorted(EXIT_BUT_CLEAN))
def test_non_zero_exit_with_a_clean_report_fails(
    kind: str, project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    (project / "pass.src").write_text(
        '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"/>'
        "</testsuite>"
    )
    write_config("gates:\n" + EXIT_BUT_CLEAN[kind])
    run = agentgate("verify", "--format", "json")
    gate = run.gate(kind)
    assert gate["status"] == "fail", gate
    assert gate["exit_code"] != 0
    assert run.code == 1
    assert f"exited with code {gate['exit_code']}" in run.verdict()["continuation"]


def test_a_project_where_the_state_folder_cannot_be_made_is_still_gated(
    project: Path, write_config: Callable[[str], Path], agentgate: Callable[..., CliRun]
) -> None:
    (project / ".agentgate").write_text("a file where the folder would go\n", encoding="utf-8")
    write_config("gates:\n  build:\n    command: \"{py} -c 'print(1)'\"\n")
    run = agentgate("verify", "--format", "json")
    assert run.code == 0, run.err
    assert run.gate("build")["status"] == "pass"
    assert "Traceback" not in run.err
