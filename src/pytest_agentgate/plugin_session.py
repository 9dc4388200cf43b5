"""The gated pytest session behind ``pytest --agentgate``: see :mod:`pytest_agentgate.plugin`.

Imported only when a run is gated. :class:`GateSession` is the plugin object of a gated run on the
controller (or without xdist), :class:`WorkerAgent` the one on an xdist worker, :class:`Notice`
the one of a run that is not gated for a reason worth saying.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .config import Config as GateSettings
    from .engine import Plan
    from .gates.base import GateConfig
    from .process import CommandResult
    from .registry import Registry
    from .reports.model import CoverageReport, ReportError, TestRun
    from .verdict import Verdict

WORKER_OUTPUT_KEY = "agentgate_deselected"
MAX_MESSAGE = 500


# -- small plugins ----------------------------------------------------------------------------


class Notice:
    """Says once, in the terminal summary, why this run is not gated."""

    def __init__(self, text: str) -> None:
        self.text = text

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        terminalreporter.write_line(self.text, yellow=True)


class WorkerAgent:
    """On an xdist worker: no gate work, only the count of deselected items for the controller
    (xdist sends ``workeroutput`` back when the worker finishes)."""

    def __init__(self, config: pytest.Config) -> None:
        self.output: dict[str, Any] = config.workeroutput  # type: ignore[attr-defined]
        self.output[WORKER_OUTPUT_KEY] = 0

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.output[WORKER_OUTPUT_KEY] += len(items)


# -- folding test reports ---------------------------------------------------------------------

# Outcome rank of one test; a higher rank wins within one attempt (error > failure > skipped).
_PASSED, _SKIPPED, _FAILED, _ERROR = 0, 1, 2, 3
_RANK = 3
_EVER_FAILED = 4  # some attempt of the test failed or errored (flaky if the last one passed)
_OUTCOMES = ("passed", "skipped", "failed", "error")

_Detail = tuple[str | None, int | None, str | None]  # file, line, first line of the message


class TestLedger:
    """Every report of the session folded per node id, with DESIGN.md's test semantics.

    - setup or teardown failures are errors, a failed call a failure (strict XPASS included),
      skips and xfails are skipped, passes (non-strict XPASS included) passed;
    - a setup report starts a new attempt: a test run again (pytest-rerunfailures, whose failed
      attempts report the outcome "rerun") counts once with its last outcome, and is flaky when
      it passed after an earlier failure;
    - failed collectors (collection errors) are errors, skipped ones (module-level skip) skipped;
    - an xdist worker that crashed counts as an error: on the test it was running when xdist
      names it, else on its own.
    """

    __test__ = False  # not a test class, whatever pytest's python_classes says

    def __init__(self, rootpath: Path) -> None:
        self.rootpath = rootpath
        self.states: dict[str, int] = {}
        self.details: dict[str, _Detail] = {}
        self.collectors: dict[str, int] = {}
        self.crashed_workers: dict[str, str] = {}
        self.crash_reported: set[str] = set()

    def test_report(self, report: pytest.TestReport) -> None:
        # The hot path: three calls per test, so passes do as little as possible.
        when = report.when
        outcome = report.outcome
        nodeid = report.nodeid
        states = self.states
        if when == "setup":
            previous = states.get(nodeid, 0) & _EVER_FAILED
            if outcome == "passed":
                states[nodeid] = previous
                return
            if outcome == "skipped":
                states[nodeid] = previous | _SKIPPED
                return
            states[nodeid] = previous | _ERROR | _EVER_FAILED
        else:
            if outcome == "passed":
                if nodeid not in states:
                    states[nodeid] = _PASSED
                return
            previous = states.get(nodeid, 0)
            if outcome == "skipped":
                rank = _SKIPPED
            elif outcome == "failed":
                rank = _FAILED if when == "call" else _ERROR
            else:  # "rerun": this attempt failed and another one follows
                rank = _FAILED
            if rank >= _FAILED:
                previous |= _EVER_FAILED
            states[nodeid] = max(previous & _RANK, rank) | (previous & _EVER_FAILED)
            if when == "???":  # xdist's report for the test a crashed worker was running
                worker = getattr(getattr(report, "node", None), "gateway", None)
                self.crash_reported.add(str(getattr(worker, "id", "")))
        if outcome != "skipped":
            self.details[nodeid] = self._detail(report)

    def collect_report(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collectors[report.nodeid] = _ERROR
            self.details[report.nodeid] = self._detail(report, "collection error")
        elif report.skipped:
            self.collectors.setdefault(report.nodeid, _SKIPPED)

    def worker_down(self, worker: str, error: object) -> None:
        if error is not None:
            self.crashed_workers.setdefault(worker, str(error))

    @property
    def ran(self) -> int:
        """Tests that started (a setup report), collectors excluded."""
        return len(self.states)

    def _detail(self, report: pytest.TestReport | pytest.CollectReport, what: str = "") -> _Detail:
        fspath, lineno, _ = report.location
        file = str(self.rootpath / fspath) if fspath else None
        line = lineno + 1 if isinstance(lineno, int) else None
        when = getattr(report, "when", None)
        if not what and when in ("setup", "teardown"):
            what = f"error in {when}"
        return file, line, _message(report.longrepr, what)

    def to_run(self) -> TestRun:
        from .reports.model import TestCaseResult, TestRun

        run = TestRun(files=["pytest session"])
        counts = [0, 0, 0, 0]
        entries = [*self.states.items(), *self.collectors.items()]
        for nodeid, state in entries:
            rank = state & _RANK
            counts[rank] += 1
            flaky = rank == _PASSED and bool(state & _EVER_FAILED)
            if rank < _FAILED and not flaky:
                continue
            file, line, message = self.details.get(nodeid, (None, None, None))
            result = TestCaseResult(
                name=nodeid,
                classname="",
                outcome=_OUTCOMES[rank],  # type: ignore[arg-type]
                file=file,
                line=line,
                message=message,
                flaky=flaky,
            )
            (run.flaky_tests if flaky else run.failures).append(result)
        for worker, error in sorted(self.crashed_workers.items()):
            if worker in self.crash_reported:
                continue
            counts[_ERROR] += 1
            run.failures.append(
                TestCaseResult(
                    name=f"xdist worker {worker}",
                    classname="",
                    outcome="error",
                    message=f"the worker crashed: {_first_line(error)}",
                )
            )
        run.passed, run.skipped, run.failed, run.errors = counts
        run.total = sum(counts)
        run.flaky = len(run.flaky_tests)
        return run


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= MAX_MESSAGE else line[: MAX_MESSAGE - 3] + "..."
    return ""


def _message(longrepr: object, what: str) -> str | None:
    """The first line of a failure: the assertion or exception, not the traceback."""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        text = str(getattr(crash, "message", ""))
    elif isinstance(longrepr, tuple) and len(longrepr) == 3:
        text = str(longrepr[2])
    else:
        text = "" if longrepr is None else str(longrepr)
    first = _first_line(text)
    if what:
        return f"{what}: {first}" if first else what
    return first or None


# -- the gated session ------------------------------------------------------------------------


class Background:
    """The other gates' commands, run by the engine in a thread while the tests run."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.cancel = threading.Event()
        self.started_at = time.time()
        self._thread: threading.Thread | None = None
        self._results: dict[str, CommandResult] = {}
        self._error: BaseException | None = None

    def start(self) -> None:
        if not self.plan.commands:
            return
        self._thread = threading.Thread(target=self._run, name="agentgate-gates", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from .engine import execute

        try:
            self._results, self.started_at = execute(self.plan, cancel=self.cancel)
        except BaseException as exc:  # reported as each command failing to start
            self._error = exc

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def collect(self) -> tuple[dict[str, CommandResult], float]:
        from .process import CommandResult

        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            why = f"agentgate could not run the commands: {self._error!r}"
            return {
                spec.key: CommandResult(spec, None, 0.0, "", "", start_error=why)
                for spec in self.plan.commands
            }, self.started_at
        return dict(self._results), self.started_at

    def stop(self) -> None:
        self.cancel.set()
        if self._thread is not None:
            self._thread.join()


BACKGROUND_NICENESS = 10


class GateSession:
    """The plugin of a gated session on the controller (or a run without xdist)."""

    def __init__(
        self,
        config: pytest.Config,
        settings: GateSettings,
        registry: Registry,
        test_gates: list[str],
        coverage_gates: list[str],
        run: bool,
    ) -> None:
        from .engine import make_plan

        self.config = config
        self.settings = settings
        self.registry = registry
        self.test_gates = test_gates
        self.coverage_gates = coverage_gates
        self.ledger = TestLedger(config.rootpath)
        # The ledger's method is the hook itself: one call less for each of 3 reports per test.
        self.pytest_runtest_logreport = self.ledger.test_report
        in_process = test_gates + coverage_gates
        self.plan = make_plan(settings, registry, run=run, in_process=in_process)
        # The tests are what the developer waits for: the other gates run at a lower priority.
        self.plan.commands[:] = [
            dataclasses.replace(spec, niceness=BACKGROUND_NICENESS) for spec in self.plan.commands
        ]
        self.background = Background(self.plan)
        self.deselected = 0
        self.collected: int | None = None
        self.last_failed = _last_failed_active(config)
        self.interrupted = False
        self.stopped_because = ""
        self.verdict: Verdict | None = None
        self.json_error: str | None = None
        self.t0 = time.monotonic()

    @classmethod
    def create(cls, config: pytest.Config, profile: str) -> GateSession:
        from .api import resolve_config
        from .config import ConfigError
        from .registry import RegistryError, get_registry

        cwd = config.invocation_params.dir
        try:
            registry = get_registry()
            settings = resolve_config(cwd, profile=profile or None, registry=registry)
        except (ConfigError, RegistryError) as exc:
            raise pytest.UsageError(f"agentgate: {exc}") from None
        cov_active = cov_plugin_active(config)
        command = shlex.join(["pytest", *config.invocation_params.args])
        tests, covs = adapt_settings(settings, command, cov_active)
        run = not config.getoption("agentgate_no_run", False)
        return cls(config, settings, registry, tests, covs, run)

    # session lifecycle

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.t0 = time.monotonic()
        self.background.start()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if not report.passed:
            self.ledger.collect_report(report)

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.collected = max(self.collected or 0, len(ids))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        output = getattr(node, "workeroutput", None) or {}
        # Every worker collects (and deselects from) the whole suite: the largest count is it.
        self.deselected = max(self.deselected, int(output.get(WORKER_OUTPUT_KEY, 0)))
        self.ledger.worker_down(str(getattr(getattr(node, "gateway", None), "id", node)), error)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # Ctrl-C or pytest.exit(); not pytest's own stop after collection errors, which is
        # judged like any other run (the errors count).
        self.interrupted = not isinstance(excinfo.value, pytest.Session.Interrupted)
        if not self.interrupted:  # e.g. "1 error during collection": why the run stopped early
            self.stopped_because = str(excinfo.value)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.interrupted:
            self.background.stop()
            return
        self.verdict = self.make_verdict(session)
        if self.verdict.status != "pass" and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        path = self.config.getoption("agentgate_json", None)
        if path:
            self.json_error = write_json(self.config.invocation_params.dir / path, self.verdict)
            if self.json_error is not None:
                session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.background.running:  # the session never finished (an early crash)
            self.background.stop()

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        from .render.terminal import render_text

        terminalreporter.write_sep("=", "agentgate")
        if self.verdict is None:
            terminalreporter.write_line(
                "agentgate: no verdict: the run was interrupted", yellow=True
            )
            return
        colour = self.config.get_terminal_writer().hasmarkup
        for line in render_text(self.verdict, colour=colour).splitlines():
            terminalreporter.write_line(line)
        if self.json_error is not None:
            terminalreporter.write_line(f"agentgate: error: {self.json_error}", red=True)

    # the verdict

    def make_verdict(self, session: pytest.Session) -> Verdict:
        from .engine import conclude, judge
        from .process import CommandResult, CommandSpec

        run = self.ledger.to_run()
        run.partial = self.partial_reasons(session)
        evidence: dict[str, object] = dict.fromkeys(self.test_gates, run)
        if self.coverage_gates:
            coverage = read_pytest_cov(self.config)
            evidence.update(dict.fromkeys(self.coverage_gates, coverage))
        results, started_at = self.background.collect()
        duration = time.monotonic() - self.t0
        for name in self.test_gates:
            # The session is the test command: its exit status is part of the evidence, as a
            # command's is (a non-zero status with no failing test is a problem).
            gate = self.settings.gate(name)
            spec = CommandSpec(
                key=name,
                command=gate.command or "pytest" if gate else "pytest",
                cwd=self.settings.root,
            )
            results[name] = CommandResult(spec, int(session.exitstatus), duration, "", "")
        gates = judge(self.plan, results, started_at, self.registry, evidence)
        return conclude(self.settings, gates)

    def partial_reasons(self, session: pytest.Session) -> list[str]:
        """Why this run covers only part of the suite; empty for a whole run."""
        reasons = []
        if self.last_failed:
            reasons.append("--lf ran only the tests that failed last time")
        if self.deselected:
            reasons.append(f"{self.deselected} tests deselected (-k, -m, --lf or --deselect)")
        if chosen := chosen_paths(self.config):
            reasons.append(chosen)
        ran = self.ledger.ran
        if self.collected is not None and ran < self.collected:
            why = session.shouldfail or session.shouldstop or self.stopped_because
            how = why if isinstance(why, str) and why else "-x, --maxfail or an abort"
            reasons.append(f"stopped after {ran} of {self.collected} tests ({how})")
        return reasons


# -- configuration ----------------------------------------------------------------------------


def _runs_pytest(command: str | None) -> bool:
    if not command:
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return "-m pytest" in command or any(
        Path(w).name in ("pytest", "py.test", "pytest.exe") for w in words
    )


_COVERAGE_PY_FORMATS = (None, "coverage-json", "coverage-data")


def adapt_settings(
    settings: GateSettings, command: str, cov_active: bool
) -> tuple[list[str], list[str]]:
    """Point the configuration at this session; return the test and coverage gates it feeds.

    The test gate that runs pytest (else the one named ``test``; else a new one) is this
    session: its command is not run and its reports are not read. With pytest-cov active, the
    coverage.py coverage gates get this session's data instead of their report. Zero-config
    gates coverage only with pytest-cov active, since nothing else measures this run.
    """
    from .gates.base import GateConfig, names_report
    from .profiles import defaults_for

    gates = settings.gates
    tests = [g for g in gates if g.kind == "test" and _runs_pytest(g.command)]
    if not tests:
        tests = [g for g in gates if g.kind == "test" and g.name == "test"]
    if not tests:  # a gate named "test" is always of kind test, so the name is free
        added = GateConfig("test", "test", thresholds=defaults_for(settings.profile, "test"))
        gates.insert(_insert_at(gates), added)
        tests = [added]
        settings.notices.append("the configuration has no test gate: gating this run as 'test'")
    replaced = [g.command for g in tests if g.command]
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
    else:
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
    return [g.name for g in tests], [g.name for g in covs]


def _insert_at(gates: list[GateConfig]) -> int:
    """After build and lint, where the test gate sits in a configuration."""
    return sum(1 for g in gates if g.kind in ("build", "lint"))


def _last_failed_active(config: pytest.Config) -> bool:
    """``--lf`` with failures recorded by the last run: only those tests run."""
    if not config.getoption("lf", False):
        return False
    cache = getattr(config, "cache", None)
    return bool(cache is not None and cache.get("cache/lastfailed", {}))


def chosen_paths(config: pytest.Config) -> str | None:
    """Test ids or paths on the command line that select less than the whole suite.

    The suite is ``testpaths`` under pytest's rootdir, else the rootdir itself. Paths that
    contain every part of it (``pytest tests`` with ``testpaths = tests``, ``pytest .``) are a
    whole run.
    """
    source = config.args_source
    if source == pytest.Config.ArgsSource.TESTPATHS or config.getoption("pyargs", False):
        return None
    here = config.invocation_params.dir
    args = [str(here)] if source == pytest.Config.ArgsSource.INVOCATION_DIR else list(config.args)
    shown = ", ".join(_display(a, config.rootpath) for a in args)
    if any("::" in a for a in args):
        return f"only {shown} ran, not the whole suite"
    chosen = [(here / a).resolve() for a in args]
    suite = _suite(config)
    if all(any(c == part or c in part.parents for c in chosen) for part in suite):
        return None
    return f"only the tests in {shown} ran, not the whole suite"


def _suite(config: pytest.Config) -> list[Path]:
    root = config.rootpath
    parts: list[Path] = []
    for pattern in config.getini("testpaths") or ():
        parts.extend(p.resolve() for p in sorted(root.glob(str(pattern))))
    return parts or [root.resolve()]


def _display(arg: str, root: Path) -> str:
    path, sep, rest = arg.partition("::")
    with contextlib.suppress(ValueError):
        path = (
            str(Path(path).resolve().relative_to(root.resolve()))
            if Path(path).is_absolute()
            else path
        )
    return path + sep + rest


# -- coverage from pytest-cov -----------------------------------------------------------------


def _pytest_cov(config: pytest.Config) -> Any:
    plugin = config.pluginmanager.get_plugin("_cov")
    if plugin is None or getattr(plugin, "_disabled", False):
        return None
    return plugin


def cov_plugin_active(config: pytest.Config) -> bool:
    """pytest-cov is measuring this session (``--cov`` given, no ``--no-cov``)."""
    return _pytest_cov(config) is not None


def read_pytest_cov(config: pytest.Config) -> CoverageReport | ReportError:
    """pytest-cov's combined data for this session, reported by coverage.py in-process.

    Not ``cov_total``: it mixes lines and branches, and is None unless a report was asked for.
    pytest-cov has stopped, saved and combined its data (every xdist worker's included) by the
    time the session finishes; coverage.py writes its JSON report of that data, which is read
    like any ``coverage json`` report.
    """
    from .reports.model import ReportError

    plugin = _pytest_cov(config)
    controller = getattr(plugin, "cov_controller", None)
    cov = getattr(controller, "cov", None)
    if plugin is None:
        return ReportError(
            "pytest-cov",
            "not active in this run, and the coverage report the test command "
            "writes is not written by this session (the one there is from an earlier run)",
            "run pytest with --cov=PACKAGE (pytest-cov) so this run's coverage is measured",
        )
    if cov is None:
        return ReportError("pytest-cov", "pytest-cov measured nothing in this session")
    report = coverage_from(cov, getattr(controller, "topdir", None), source="pytest-cov")
    failed = getattr(controller, "failed_workers", None)
    if failed and not isinstance(report, ReportError):
        names = ", ".join(str(getattr(getattr(n, "gateway", None), "id", n)) for n in failed)
        report.notes.append(f"xdist workers {names} returned no coverage data")
    return report


def coverage_from(cov: Any, topdir: str | None, *, source: str) -> CoverageReport | ReportError:
    """A coverage.py ``Coverage`` object's data as a CoverageReport (its JSON report, parsed)."""
    from .reports.coverage.coveragepy import notes_from_warnings, parse_coverage_json
    from .reports.model import ReportError

    hint = "check that --cov= (or [run] source) names your package and that the tests import it"
    with (
        tempfile.TemporaryDirectory(prefix="agentgate-cov-") as tmp,
        warnings.catch_warnings(record=True) as caught,
        _working_directory(topdir),
    ):
        warnings.simplefilter("always")
        outfile = os.path.join(tmp, "coverage.json")
        try:
            cov.json_report(outfile=outfile, ignore_errors=True)
            document = json.loads(Path(outfile).read_text(encoding="utf-8"))
        except Exception as exc:  # coverage.py's NoDataError and friends
            return ReportError(
                source, f"coverage.py could not report ({type(exc).__name__}: {exc})", hint
            )
    try:
        report = parse_coverage_json(document, source, format="pytest-cov")
    except ReportError as exc:
        return exc
    report.notes.extend(
        notes_from_warnings([str(w.message) for w in caught], topdir or os.getcwd())
    )
    return report


@contextlib.contextmanager
def _working_directory(path: str | None) -> Iterator[None]:
    """pytest-cov reports from the directory it started in; so do we."""
    if path is None or os.path.abspath(path) == os.getcwd():
        yield
        return
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def write_json(path: Path, verdict: Verdict) -> str | None:
    """Write the verdict; the error message when it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(verdict.to_json() + "\n", encoding="utf-8")
    except OSError as exc:
        return f"--agentgate-json {path}: cannot write the verdict: {exc.strerror or exc}"
    return None
