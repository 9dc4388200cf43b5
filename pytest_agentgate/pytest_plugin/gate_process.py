"""The gate process of ``pytest --agentgate``: the engine's half of a gated pytest session.

The pytest process starts it before it imports the project's conftest.py files
(:func:`.session.start_early`) and keeps only what must happen in pytest: folding the test reports
and exporting pytest-cov's data. Everything else runs here, on another core: resolving the
configuration and judging the integrity gate while pytest waits (so a change that fails it runs
none of its code), starting the other gates' commands (build, lint, custom) to run while the
tests run, and at the end judging the evidence, writing the verdict and rendering it. The
verdict is made by the same engine as ``agentgate verify``'s.

The protocol is one JSON object per line, pytest process first:

1. request ``{"cwd", "profile", "command", "cov_active", "run"}``;
2. answer ``{"ready": true, "coverage": bool, "measure": options, "early": {"status",
   "failed"}}``, or ``{"error": message}`` for a configuration the engine refuses. ``coverage``:
   whether coverage gates want this session's coverage data; ``measure``: without pytest-cov,
   how the pytest process measures it itself with coverage.py (``commands.coverage_options``),
   else null. ``early``: the integrity gate, judged before this answer
   (:meth:`HelperSession.early`): ``status`` ``"pass"`` or ``"fail"``, and ``failed``, the
   blocking gates that failed. pytest waits for this answer before it imports the project's
   conftest.py; on ``"fail"`` it imports none, asks for the verdict at once with no test run,
   and stops before collection;
3. evidence ``{"tests", "exitstatus", "duration", "coverage", "json", "colour"}``, or the end of
   the input when the session ended without a verdict (interrupted): the commands are stopped;
4. answer ``{"status", "text", "json_error"}``.

Anything else the process writes (a traceback if agentgate itself fails) goes to stderr, which
the pytest process shows when no answer comes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pytest_agentgate.commands import coverage_options, runs_pytest, words
from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.config.resolve import resolve_config
from pytest_agentgate.engine import Pipeline, Request
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.gates.base import Evidence
from pytest_agentgate.gates.collect import names_report
from pytest_agentgate.gates.coverage import CoverageEvidence
from pytest_agentgate.gates.test import SuiteEvidence, install_entries, startup_entries
from pytest_agentgate.process import CommandResult, CommandSpec
from pytest_agentgate.profiles import defaults_for
from pytest_agentgate.pytest_plugin.supervisor import VERDICT_EXIT
from pytest_agentgate.registry import get_registry
from pytest_agentgate.reports.model import ReportError, TestCaseResult, TestRun
from pytest_agentgate.verdict import Verdict, overall_status

if TYPE_CHECKING:
    from pytest_agentgate.config.model import Config as GateSettings
    from pytest_agentgate.registry import Registry

# The tests are what the developer waits for: the other gates' commands run at a lower priority.
BACKGROUND_NICENESS = 10
# Linux keeps a nice value and a scheduling class per thread, and a thread or process inherits
# them from the thread that starts it. Lowering the background thread's own priority covers every
# command it starts, from its first instruction on. (Lowering a command's after it has started
# misses what its shell has already started, such as `python -m ruff`.)
PER_THREAD_PRIORITY = sys.platform.startswith("linux")


# -- the protocol -----------------------------------------------------------------------------


class Channel:
    """JSON lines over a pair of text streams."""

    def __init__(self, incoming: IO[str], outgoing: IO[str]) -> None:
        self.incoming = incoming
        self.outgoing = outgoing

    def receive(self) -> dict[str, Any] | None:
        """The next message; None at the end of the input."""
        line = self.incoming.readline()
        return json.loads(line) if line.strip() else None

    def send(self, message: dict[str, Any]) -> None:
        self.outgoing.write(json.dumps(message) + "\n")
        self.outgoing.flush()


def main() -> None:
    """The process's entry point (``python -c`` from the pytest process)."""
    # The protocol gets stdout's file; anything else written to fd 1 (by agentgate or a child
    # process that inherits it) lands on stderr instead of in the protocol.
    outgoing = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    # Ctrl-C reaches the whole process group. pytest is interrupted and gives no verdict, so the
    # commands stop now, even while pytest waits for them at the end; this process still answers
    # (or sees the input end). A handler rather than SIG_IGN: the commands must not inherit an
    # ignored SIGINT.
    cancel = threading.Event()
    signal.signal(signal.SIGINT, lambda signum, frame: cancel.set())
    stdin = open(sys.stdin.fileno(), encoding="utf-8", closefd=False)  # noqa: SIM115
    try:
        status = serve(Channel(stdin, outgoing), cancel)
    except BrokenPipeError:  # the pytest process is gone: nobody to answer
        status = 0
    # Everything is written and closed; skip the interpreter's teardown (about 15 ms), since
    # pytest reaps this process before it exits.
    sys.stderr.flush()
    os._exit(status)


def serve(channel: Channel, cancel: threading.Event | None = None) -> int:
    """Answer one gated session; ``cancel`` (set from a signal handler) stops the commands.
    The status to exit with: the verdict's (:data:`.supervisor.VERDICT_EXIT`), which the process
    waiting for the pytest run reads, as the run's own exit status cannot be trusted; 0 when
    no verdict was made."""
    request = channel.receive()
    if request is None:
        return 0
    try:
        gate = HelperSession.start(request, cancel)
    except AgentgateError as exc:
        channel.send({"error": f"agentgate: {exc}"})
        return 0
    verdict = 0
    try:
        channel.send(
            {
                "ready": True,
                "coverage": bool(gate.coverage_gates),
                "measure": gate.measure,
                "doctest_modules": gate.doctest_modules(),
                "early": gate.early(),
            }
        )
        evidence = channel.receive()
        if evidence is not None:  # else the session ended without a verdict
            answer = gate.finish(evidence)
            verdict = VERDICT_EXIT[answer["status"]]
            channel.send(answer)
    finally:  # whatever happened, no command outlives this process
        gate.background.stop()
        # Nor the base's collection: its checkout is removed before this process ends.
        gate.pipeline.stop_counting()
    return verdict


# -- the session ------------------------------------------------------------------------------


class HelperSession:
    """The configuration of one gated session, its background commands, and its verdict."""

    def __init__(
        self,
        settings: GateSettings,
        registry: Registry,
        test_gates: list[str],
        coverage_gates: list[str],
        cov_active: bool,
        run: bool,
        cancel: threading.Event | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.test_gates = test_gates
        self.coverage_gates = coverage_gates
        self.cov_active = cov_active
        self.measure: dict[str, Any] | None = None
        self.replaced: list[str] = []
        # The session's command line ("pytest ARGS") and where it was started.
        self.invocation: tuple[str, Path] | None = None
        request = Request(
            settings,
            door="pytest",
            run=run,
            door_evidence=(*test_gates, *coverage_gates),
            record=True,
        )
        self.pipeline = Pipeline(request, registry)
        if not PER_THREAD_PRIORITY:  # else the background thread lowers its own (and theirs)
            self.pipeline.plan.commands[:] = [
                dataclasses.replace(spec, niceness=BACKGROUND_NICENESS)
                for spec in self.pipeline.plan.commands
            ]
        self.background = Background(self.pipeline, cancel)
        self.background.start()

    @classmethod
    def start(cls, request: dict[str, Any], cancel: threading.Event | None = None) -> HelperSession:
        registry = get_registry()
        profile = request.get("profile") or None
        settings = resolve_config(Path(request["cwd"]), profile=profile, registry=registry)
        cov_active = bool(request.get("cov_active"))
        adapted = adapt_settings(settings, request["command"], cov_active)
        run = bool(request.get("run", True))
        session = cls(
            settings, registry, adapted.test_gates, adapted.coverage_gates, cov_active, run, cancel
        )
        session.measure = adapted.measure
        session.replaced = adapted.replaced
        session.invocation = (str(request["command"]), Path(request["cwd"]))
        return session

    def early(self) -> dict[str, Any]:
        """Judge the integrity gates now, while pytest waits to import the project's code: a
        change that fails them is stopped before any of it runs (``early`` in the protocol).
        A change they let run gets its base's tests counted while the tests run."""
        names = [g.name for g in self.settings.gates if g.kind == "integrity"]
        results = self.pipeline.early(names)
        status = overall_status(results)
        if status == "pass" and self.invocation is not None:
            self.pipeline.start_counting(self.background.cancel, self.count_commands())
        return {
            "status": status,
            "failed": [r.name for r in results if r.failed and r.blocking],
        }

    def doctest_modules(self) -> bool:
        """Whether a test gate this session stands for runs ``--doctest-modules``: its tests
        are in every module of the project, not only in its test files."""
        return any("--doctest-modules" in words(command) for command in self.replaced)

    def count_commands(self) -> dict[str, tuple[str, Path]]:
        """The command each test gate of this session is, as its base is collected: this
        Python's pytest with the session's arguments, where the session was started."""
        assert self.invocation is not None
        command, cwd = self.invocation
        args = words(command)[1:]  # "pytest ARGS", as the pytest process wrote it
        python = shlex.join([sys.executable, "-m", "pytest", *args])
        return dict.fromkeys(self.test_gates, (python, cwd))

    def finish(self, evidence: dict[str, Any]) -> dict[str, Any]:
        verdict = self.verdict(evidence)
        json_error = None
        if evidence.get("json"):
            json_error = write_json(Path(evidence["json"]), verdict)
        from pytest_agentgate.render.terminal import render_text

        return {
            "status": verdict.status,
            "text": render_text(verdict, colour=bool(evidence.get("colour"))),
            "json_error": json_error,
        }

    def verdict(self, evidence: dict[str, Any]) -> Verdict:
        """The one pipeline's verdict, with this session's tests (and pytest-cov's data) as the
        evidence of the gates the session measured."""
        root = self.settings.root
        run = tests_evidence(evidence["tests"])
        measured: dict[str, Evidence] = {}
        for name in self.test_gates:
            # The session is the test command: its exit status is part of the evidence, as a
            # command's is (a non-zero status with no failing test is a problem).
            gate = self.settings.gate(name)
            spec = CommandSpec(
                key=name, command=gate.command or "pytest" if gate else "pytest", cwd=root
            )
            session = CommandResult(
                spec, int(evidence["exitstatus"]), float(evidence["duration"]), "", ""
            )
            measured[name] = SuiteEvidence(
                root,
                command=session,
                run=run,
                selected=_count(evidence["tests"].get("selected")),
                collect_errors=_count(evidence["tests"].get("collect_errors")) or 0,
                collected_tests=_names(evidence["tests"].get("collected_tests")),
                tests_over_limit=evidence["tests"].get("tests_over_limit") is True,
                deselected_tests=_names(evidence["tests"].get("deselected_tests")),
                local_plugins=[
                    str(name)
                    for name in evidence["tests"].get("local_plugins") or []
                    if isinstance(name, str)
                ],
                replaced=[
                    str(name)
                    for name in evidence["tests"].get("replaced") or []
                    if isinstance(name, str)
                ],
                startup=startup_entries(evidence["tests"].get("startup") or []),
                installs=install_entries(evidence["tests"].get("installs") or []),
                loosened=[
                    str(why)
                    for why in evidence["tests"].get("loosened") or []
                    if isinstance(why, str)
                ],
                not_run=_count(evidence["tests"].get("not_run")) or 0,
                not_run_tests=_names(evidence["tests"].get("not_run_tests")) or [],
                not_run_by=str(evidence["tests"].get("not_run_by") or ""),
            )
        if self.coverage_gates:
            measured_here = self.cov_active or self.measure is not None
            coverage = coverage_evidence(evidence.get("coverage"), measured_here, root)
            measured.update(dict.fromkeys(self.coverage_gates, coverage))
        self.background.collect()
        return self.pipeline.verdict(measured)


class Background:
    """The other gates' commands, run by the pipeline in a thread while the tests run."""

    def __init__(self, pipeline: Pipeline, cancel: threading.Event | None = None) -> None:
        self.pipeline = pipeline
        self.cancel = cancel or threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        if not self.pipeline.plan.commands:
            return
        self._thread = threading.Thread(target=self._run, name="agentgate-gates", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if PER_THREAD_PRIORITY:
            lower_this_thread()
        try:
            self.pipeline.run_commands(cancel=self.cancel)
        except BaseException as exc:  # reported as each command failing to start
            self._error = exc

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def collect(self) -> dict[str, CommandResult]:
        """Wait for the commands; their results are the pipeline's."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            why = f"agentgate could not run the commands: {self._error!r}"
            self.pipeline.results = {
                spec.key: CommandResult(spec, None, 0.0, "", "", start_error=why)
                for spec in self.pipeline.plan.commands
            }
        return self.pipeline.results

    def stop(self) -> None:
        self.cancel.set()
        if self._thread is not None:
            self._thread.join()


def lower_this_thread() -> None:
    """Linux: nice +10 and the idle scheduling class for the calling thread only, so that the
    commands run on CPU time the tests do not want (nice 19 alone still takes a share of a busy
    core; an idle-class thread takes next to none)."""
    thread = threading.get_native_id()
    with contextlib.suppress(OSError):
        nice = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, nice + BACKGROUND_NICENESS)
    with contextlib.suppress(OSError):
        os.sched_setscheduler(thread, os.SCHED_IDLE, os.sched_param(0))


# -- evidence from the pytest process ---------------------------------------------------------


def tests_evidence(tests: dict[str, Any]) -> TestRun:
    """The session's folded test reports (``OutcomeLedger.summary()`` and the partial-run reasons)
    as the test gate's evidence."""
    run = TestRun(files=["pytest session"])
    for case in tests["cases"]:
        result = TestCaseResult(
            name=case["name"],
            classname="",
            outcome=case["outcome"],
            file=case.get("file"),
            line=case.get("line"),
            message=case.get("message"),
            flaky=bool(case.get("flaky")),
        )
        (run.flaky_tests if result.flaky else run.failures).append(result)
    run.passed, run.skipped, run.failed, run.errors = tests["counts"]
    run.total = sum(tests["counts"])
    run.xfailed, run.xpassed = tests.get("xfail", (0, 0))
    run.flaky = len(run.flaky_tests)
    run.partial = list(tests.get("partial", ()))
    for entry in tests.get("skipped") or ():
        if not isinstance(entry, list) or len(entry) not in (2, 3):
            continue
        name, why, *where = entry
        at = where[0] if where and isinstance(where[0], str) else None
        if isinstance(name, str) and isinstance(why, str):
            run.skipped_tests.append(TestCaseResult(name, "", "skipped", message=why, raised_at=at))
    return run


def _count(value: Any) -> int | None:
    """A count the pytest process sent; None for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _names(value: Any) -> list[str] | None:
    """A list of test functions the pytest process sent; None for anything else."""
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        return None
    return list(value)


def coverage_evidence(
    payload: dict[str, Any] | None, cov_active: bool, root: Path
) -> CoverageEvidence:
    """This session's coverage data as the pytest process exported it (a ``coverage json``
    report, from pytest-cov or from its own measurement), or the reason there is none.
    ``cov_active``: the session measured coverage (pytest-cov, or agentgate's ``measure``)."""
    from pytest_agentgate.reports.coverage.coveragepy import (
        notes_from_warnings,
        parse_coverage_json,
    )

    evidence = CoverageEvidence(root, measured_as="data")
    if payload is None and cov_active:
        evidence.error = ReportError(
            "pytest session",
            "sent no coverage data, though this session was to measure it",
            "run pytest again; if it persists, report it as a bug of agentgate",
        )
        return evidence
    if payload is None or not cov_active:
        evidence.error = ReportError(
            "pytest-cov",
            "not active in this run, and the coverage report the test command "
            "writes is not written by this session (the one there is from an earlier run)",
            "run pytest with --cov=PACKAGE (pytest-cov) so this run's coverage is measured",
        )
        return evidence
    if "error" in payload:
        evidence.error = ReportError(*payload["error"])
        return evidence
    document = json.loads(Path(payload["json"]).read_text(encoding="utf-8"))
    topdir = payload.get("topdir") or os.getcwd()
    try:
        report = parse_coverage_json(
            document,
            payload.get("by", "pytest-cov"),
            format="pytest-cov",
            root=root,
            relative_to=topdir,
        )
    except ReportError as exc:
        evidence.error = exc
        return evidence
    report.notes.extend(str(note) for note in payload.get("notes", ()))
    report.notes.extend(notes_from_warnings(list(payload.get("warnings", ())), topdir))
    if failed := payload.get("failed_workers"):
        report.notes.append(f"xdist workers {', '.join(failed)} returned no coverage data")
    evidence.report = report
    return evidence


def write_json(path: Path, verdict: Verdict) -> str | None:
    """Write the verdict; the error message when it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(verdict.to_json() + "\n", encoding="utf-8")
    except OSError as exc:
        return f"--agentgate-json {path}: cannot write the verdict: {exc.strerror or exc}"
    return None


# -- configuration ----------------------------------------------------------------------------


_COVERAGE_PY_FORMATS = (None, "coverage-json", "coverage-data")


@dataclasses.dataclass
class Adapted:
    """What :func:`adapt_settings` made of the configuration for this session."""

    test_gates: list[str]
    coverage_gates: list[str]
    # How the pytest process measures coverage itself (``commands.coverage_options``) when
    # pytest-cov is not active and the replaced test command measured it; None otherwise.
    measure: dict[str, Any] | None = None
    # The configured commands of the test gates this session stands for (replaced by it).
    replaced: list[str] = dataclasses.field(default_factory=list)


def adapt_settings(settings: GateSettings, command: str, cov_active: bool) -> Adapted:
    """Point the configuration at this session; say which test and coverage gates it feeds.

    The test gate that runs pytest (else the one named ``test``; else a new one) is this
    session: its command is not run and its reports are not read. With pytest-cov active, the
    coverage.py coverage gates get this session's data instead of their report. Without it,
    when the replaced test command measured coverage (``coverage run``, ``pytest --cov``), the
    pytest process measures this session the same way with coverage.py (``measure``): the flow
    ``agentgate init``, then ``pytest --agentgate``, needs no ``--cov``. Otherwise zero-config
    does not gate coverage, since nothing measures this run.
    """
    gates = settings.gates
    tests = [g for g in gates if g.kind == "test" and runs_pytest(g.command)]
    if not tests:
        tests = [g for g in gates if g.kind == "test" and g.name == "test"]
    if not tests:  # a gate named "test" is always of kind test, so the name is free
        added = GateConfig("test", "test", thresholds=defaults_for(settings.profile, "test"))
        gates.insert(_insert_at(gates), added)
        tests = [added]
        settings.notices.append("the configuration has no test gate: gating this run as 'test'")
    replaced = [g.command for g in tests if g.command]
    measure = next(
        (m for c in replaced if (m := coverage_options(c, settings.root)) is not None), None
    )
    for gate in tests:
        gate.command = command
        gate.reports = []
    covs: list[GateConfig] = [
        g
        for g in gates
        if g.kind == "coverage"
        and g.format in _COVERAGE_PY_FORMATS
        and not any("summary" in r or r.endswith(".info") for r in g.reports)
    ]
    zero_config = settings.path is None
    if cov_active:
        for gate in covs:
            gate.command = None
            gate.reports = []
        settings.notices.append("tests and coverage judged from this pytest session (pytest-cov)")
        measure = None
    elif measure is not None and covs:
        for gate in covs:
            gate.command = None
            gate.reports = []
        settings.notices.append(
            "tests and coverage judged from this pytest session (coverage.py, measured as the "
            "test command measures it)"
        )
    else:
        measure = None
        if zero_config:
            settings.gates = [g for g in gates if g not in covs]
            settings.notices.append(
                "coverage is not gated: pytest-cov is not active in this run (add --cov=PACKAGE)"
            )
            covs = []
        else:
            # A report the replaced test command writes is not written by this session: it is
            # the last run's. Those gates get this session's (missing) pytest-cov data instead.
            covs = [
                g
                for g in covs
                if not g.command and any(names_report(c, g.reports) for c in replaced)
            ]
            for gate in covs:
                gate.reports = []
        settings.notices.append("tests judged from this pytest session")
    return Adapted([g.name for g in tests], [g.name for g in covs], measure, replaced=replaced)


def _insert_at(gates: list[GateConfig]) -> int:
    """After build and lint, where the test gate sits in a configuration."""
    return sum(1 for g in gates if g.kind in ("build", "lint"))
