"""The pipeline: config -> plan -> run commands -> read reports -> judge -> Verdict.

It knows no front door: the CLI, the pytest plugin, the harness hooks and the Action all call
:func:`run_verdict` and render what it returns.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import traceback
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_agentgate.config import STATE_DIR, Config
from pytest_agentgate.gates.base import UNMEASURED, GateConfig, GateInput, new_result, skipped
from pytest_agentgate.process import CommandResult, CommandSpec, StatusReporter, run_commands
from pytest_agentgate.registry import Registry
from pytest_agentgate.state.ledger import TaskRef, settle
from pytest_agentgate.verdict import Attempt, GateResult, Verdict, overall_status

NOTHING_VERIFIED = (
    "no gate produced any evidence, so nothing was verified: configure at least one gate "
    "with a command or a report"
)


@dataclass(frozen=True)
class Plan:
    """The gates to judge and the commands to run for them."""

    config: Config
    commands: list[CommandSpec]
    run: bool


def command_environment() -> dict[str, str]:
    """Variables every gate command gets on top of the caller's environment.

    A hook or CI step often calls ``.venv/bin/agentgate`` without activating the environment;
    the commands then get that environment's ``bin`` first on PATH, as activation would do.
    An environment that is already active is left alone.
    """
    if sys.prefix == sys.base_prefix or os.environ.get("VIRTUAL_ENV"):
        return {}
    bindir = os.path.dirname(sys.executable)
    return {
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "VIRTUAL_ENV": sys.prefix,
    }


def make_plan(
    config: Config, registry: Registry, *, run: bool = True, in_process: Collection[str] = ()
) -> Plan:
    """``in_process``: gates whose evidence the front door supplies (the pytest plugin's own
    session is the test run); their commands are not run."""
    commands = []
    base_env = command_environment()
    if run:
        for gate in config.gates:
            if gate.enabled and gate.command and config.enabled and gate.name not in in_process:
                stdout_report = registry.kinds[gate.kind].stdout_report and not gate.reports
                commands.append(
                    CommandSpec(
                        key=gate.name,
                        command=gate.command,
                        cwd=config.root,
                        timeout=gate.timeout,
                        env={**base_env, **gate.env} or None,
                        # Only a report on stdout needs to be kept whole.
                        stdout_limit=(64 if stdout_report else 1) * 1024 * 1024,
                    )
                )
    return Plan(config, commands, run)


def ensure_state_dir(root: Path) -> Path:
    """``.agentgate/`` in the project, with a .gitignore so nothing in it is ever committed."""
    state = root / STATE_DIR
    state.mkdir(exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Written by agentgate: its reports and state are never committed.\n*\n")
    return state


def execute(
    plan: Plan,
    status: StatusReporter | None = None,
    *,
    cancel: threading.Event | None = None,
) -> tuple[dict[str, CommandResult], float]:
    """Run the plan's commands; ``cancel`` (set from another thread) ends them early."""
    started = time.time()
    if not plan.commands:
        return {}, started
    with contextlib.suppress(OSError):
        # A read-only project can still be gated; a command that needs the folder says so.
        ensure_state_dir(plan.config.root)
    return run_commands(plan.commands, status=status, cancel=cancel), started


def judge(
    plan: Plan,
    results: Mapping[str, CommandResult],
    started_at: float,
    registry: Registry,
    evidence: Mapping[str, object] | None = None,
) -> list[GateResult]:
    """``evidence``: per gate name, what a front door measured in-process (a TestRun, a
    CoverageReport, or the ReportError that stopped it); the gate kind judges it instead of
    reading its reports."""
    evidence = evidence or {}
    gates = []
    commands_run = tuple(spec.command for spec in plan.commands if spec.key in results)
    for gate in plan.config.gates:
        if not plan.config.enabled or not gate.enabled:
            gates.append(_disabled(gate, registry, plan, started_at))
            continue
        gate_input = GateInput(
            config=gate,
            root=plan.config.root,
            result=results.get(gate.name),
            ran_commands=plan.run,
            started_at=started_at,
            registry=registry,
            commands_run=commands_run,
            evidence=evidence.get(gate.name),
        )
        gates.append(_judge_one(gate_input, registry))
    return gates


def _disabled(gate: GateConfig, registry: Registry, plan: Plan, started_at: float) -> GateResult:
    gate_input = GateInput(gate, plan.config.root, None, plan.run, started_at, registry)
    return skipped(gate_input, "disabled in the configuration")


def _judge_one(gate: GateInput, registry: Registry) -> GateResult:
    try:
        return registry.kinds[gate.config.kind].judge(gate)
    except Exception as exc:  # a bug in a gate kind must never turn into a pass
        result = new_result(gate, "fail", f"agentgate could not judge this gate ({exc!r})")
        # The verdict must still validate: the built-in kinds' `actual` keys, none measured.
        result.actual = dict(UNMEASURED.get(gate.config.kind, {}))
        if "exit_code" in result.actual and gate.result is not None:
            result.actual["exit_code"] = gate.result.exit_code
        result.problems.append(
            "internal error in the gate kind; please report it with this trace:\n"
            + "".join(traceback.format_exception(exc)[-3:])
        )
        return result


def run_verdict(
    config: Config,
    registry: Registry,
    *,
    run: bool = True,
    status: StatusReporter | None = None,
    attempt: Attempt | None = None,
    claim: str | None = None,
    evidence: Mapping[str, object] | None = None,
    task: TaskRef | None = None,
) -> Verdict:
    """Run the whole pipeline once and return the one Verdict every surface renders.

    ``task`` names the task the verdict counts against (see ledger.py); without one, nothing is
    counted (unless ``attempts.per_branch``) but the verdict still goes into the history.
    """
    wall_started = time.monotonic()
    plan = make_plan(config, registry, run=run, in_process=tuple(evidence or ()))
    results, started_at = execute(plan, status)
    gates = judge(plan, results, started_at, registry, evidence)
    return conclude(
        config,
        gates,
        attempt=attempt,
        claim=claim,
        task=task,
        wall_s=time.monotonic() - wall_started,
    )


def conclude(
    config: Config,
    gates: list[GateResult],
    *,
    attempt: Attempt | None = None,
    claim: str | None = None,
    task: TaskRef | None = None,
    wall_s: float | None = None,
) -> Verdict:
    """The Verdict of judged gates: overall status, attempt, escalation, continuation text."""
    verdict = Verdict(
        status=overall_status(gates),
        profile=config.profile,
        gates=gates,
        attempt=attempt,
        notices=list(config.notices),
    )
    if not config.enabled:
        verdict.notices.append("gating is disabled in the configuration (enabled: false)")
    elif all(g.status == "skipped" for g in gates):
        # Nothing was measured, so nothing was verified: that is never a pass.
        verdict.status = "fail"
        verdict.notices.append(NOTHING_VERIFIED)
    # The ledger decides the attempt and any escalation once, before the text is written.
    instruction = settle(verdict, config, task, wall_s=wall_s)
    if verdict.status == "fail":  # an escalated task goes to a human, not back to the agent
        from pytest_agentgate.render.continuation import render_continuation

        verdict.continuation = render_continuation(
            verdict, max_chars=config.max_chars, claim=claim, instruction=instruction
        )
    return verdict
