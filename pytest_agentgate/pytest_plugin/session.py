"""The gated pytest session behind ``pytest --agentgate``: see :mod:`.entry`.

Imported only when a run is gated. :class:`GateSession` is the plugin object of a gated run on the
controller (or without xdist), :class:`WorkerAgent` the one on an xdist worker, :class:`Notice`
the one of a run that is not gated for a reason worth saying.

This module holds only what must happen inside pytest: folding the test reports, noting what
selected part of the suite, exporting pytest-cov's data, and stopping a run that cannot end
in a verdict. It imports nothing of the engine. The configuration, the integrity gate, the
other gates' commands and the verdict belong to the gate process (:mod:`.gate_process`),
started before the project's conftest.py files are imported (:func:`start_early`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from pytest_agentgate.commands import MAX_RUN_LISTED_TESTS, STOPPED_BY_INTEGRITY
from pytest_agentgate.pytest_plugin.count import Tests
from pytest_agentgate.reports.model import MAX_SKIPPED_KEPT, SKIPPED_AT
from pytest_agentgate.reports.outcomes import (
    ERROR,
    EVER_FAILED,
    FAILED,
    OUTCOMES,
    PASSED,
    RANK_MASK,
    SKIPPED,
    fold,
    is_flaky,
)

WORKER_OUTPUT_KEY = "agentgate_deselected"
# A worker's test functions: collected, and left with no case to run by pytest's selection.
WORKER_TESTS_KEY = "agentgate_tests"
# A worker's list of the test tools' code it found replaced (pytest_plugin/tampering.py).
WORKER_REPLACED_KEY = "agentgate_replaced"
MAX_MESSAGE = 500
COVERAGE_HINT = (
    "check that --cov= (or [run] source) names your package and that the tests import it"
)


# -- small plugins ----------------------------------------------------------------------------


class Notice:
    """Says once, in the terminal summary, why this run is not gated (or how it is gated);
    at the end if the run stopped before its summary (a usage error when the session starts)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.said = False

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        terminalreporter.write_line(self.text, yellow=True)
        self.said = True

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if not self.said:
            write_line(config, self.text, yellow=True)


def write_line(config: pytest.Config, text: str, **markup: bool) -> None:
    """Lines on pytest's terminal; on stdout without one (``-p no:terminal``)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        sys.stdout.write(text + "\n")
        return
    for line in text.splitlines():
        reporter.write_line(line, **markup)


def has_markup(config: pytest.Config) -> bool:
    """Whether pytest's terminal shows colours."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    return reporter is not None and bool(config.get_terminal_writer().hasmarkup)


class WorkerAgent:
    """On an xdist worker: no gate work, only the count of deselected items for the controller
    (xdist sends ``workeroutput`` back when the worker finishes)."""

    def __init__(self, config: pytest.Config) -> None:
        self.output: dict[str, Any] = config.workeroutput  # type: ignore[attr-defined]
        self.output[WORKER_OUTPUT_KEY] = 0
        self.replaced: set[str] = set()
        self.tests = Tests()

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.output[WORKER_OUTPUT_KEY] += len(items)
        self.tests.deselect(items, sys._getframe(1))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from pytest_agentgate.pytest_plugin.witness import to_controller

        self._look_for_replaced(session.config, session.items)
        lists = self.tests.lists(session.items, only_selection=True, limit=MAX_RUN_LISTED_TESTS)
        self.output[WORKER_TESTS_KEY] = to_controller(lists)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        from pytest_agentgate.pytest_plugin.tampering import look_as_it_runs

        look_as_it_runs(item, self.replaced, before=True)
        yield
        look_as_it_runs(item, self.replaced, before=False)
        self._send_replaced()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._look_for_replaced(session.config)

    def _look_for_replaced(self, config: pytest.Config, items: Sequence[pytest.Item] = ()) -> None:
        from pytest_agentgate.pytest_plugin.tampering import replaced, tests_replaced

        self.replaced.update(replaced(config.pluginmanager.get_plugins(), str(config.rootpath)))
        self.replaced.update(tests_replaced(items, str(config.rootpath)))
        self._send_replaced()

    def _send_replaced(self) -> None:
        from pytest_agentgate.pytest_plugin.witness import to_controller

        self.output[WORKER_REPLACED_KEY] = to_controller(sorted(self.replaced))


def _two_lists(value: Any) -> tuple[list[str] | None, list[str] | None]:
    """A worker's (collected, deselected) test functions; None for a part that is not a list
    of names."""
    if not isinstance(value, list) or len(value) != 2:
        return None, None
    parts = [[str(name) for name in part] if isinstance(part, list) else None for part in value]
    return parts[0], parts[1]


# -- folding test reports ---------------------------------------------------------------------

_Detail = tuple[str | None, int | None, str | None]  # file, line, first line of the message


class OutcomeLedger:
    """Every report of the session folded per node id, by :mod:`pytest_agentgate.reports.outcomes`.

    - setup or teardown failures are errors, a failed call a failure (strict XPASS included),
      skips and xfails are skipped, passes (non-strict XPASS included) passed;
    - a setup report starts a new attempt: a test run again (pytest-rerunfailures, whose failed
      attempts report the outcome "rerun") counts once with its last outcome, and is flaky when
      it passed after an earlier failure; its call and teardown reports fold into that attempt;
    - failed collectors (collection errors) are errors, skipped ones (module-level skip) skipped;
    - an xdist worker that crashed counts as an error: on the test it was running when xdist
      names it, else on its own.
    """

    def __init__(self, rootpath: Path) -> None:
        self.rootpath = rootpath
        self.states: dict[str, int] = {}
        self.details: dict[str, _Detail] = {}
        self.collectors: dict[str, int] = {}
        self.crashed_workers: dict[str, str] = {}
        self.crash_reported: set[str] = set()
        # Tests whose call was an expected failure (xfailed) or passed though marked xfail
        # (xpassed); counted apart when their last outcome is still that.
        self.xfail_calls: dict[str, int] = {}
        # Why each test was skipped (the first MAX_SKIPPED_KEPT): the integrity gate asks
        # whether the change skipped a test it edited.
        self.skips: dict[str, str] = {}
        # Where the project's code raised each of those skips (pytest_plugin/skips.py).
        self.skipped_at: dict[str, str] = {}
        # The tests whose call phase ran: one reported passed whose call never ran did not run
        # its body (pytest's --setup-only, witness.Outcomes).
        self.called: set[str] = set()

    def test_report(self, report: pytest.TestReport) -> None:
        # The hot path: three calls per test, so passes do as little as possible. A pass is
        # outcomes.fold inlined: a passing setup starts an attempt, keeping only EVER_FAILED
        # (fold(previous, PASSED, True)); a passing call or teardown changes nothing
        # (fold(previous, PASSED, False) is previous). The rest call fold().
        when: str = report.when  # xdist also sends "???" for a crashed worker
        outcome = report.outcome
        nodeid = report.nodeid
        states = self.states
        if when == "call":
            self.called.add(nodeid)
        if when == "setup":
            if outcome == "passed":
                states[nodeid] = states.get(nodeid, 0) & EVER_FAILED
                return
            if outcome == "skipped":
                states[nodeid] = fold(states.get(nodeid, 0), SKIPPED, True)
                self._skipped(nodeid, report)
                return
            states[nodeid] = fold(states.get(nodeid, 0), ERROR, True)
        else:
            if outcome == "passed":
                if nodeid not in states:
                    states[nodeid] = PASSED
                if when == "call" and hasattr(report, "wasxfail"):
                    self.xfail_calls[nodeid] = PASSED
                return
            if outcome == "skipped":
                rank = SKIPPED
                if when == "call" and hasattr(report, "wasxfail"):
                    self.xfail_calls[nodeid] = SKIPPED
            elif outcome == "failed":
                rank = FAILED if when == "call" else ERROR
            else:  # "rerun": this attempt failed and another one follows
                rank = FAILED
            states[nodeid] = fold(states.get(nodeid, 0), rank, False)
            if when == "???":  # xdist's report for the test a crashed worker was running
                worker = getattr(getattr(report, "node", None), "gateway", None)
                self.crash_reported.add(str(getattr(worker, "id", "")))
        if outcome != "skipped":
            self.details[nodeid] = self._detail(report)
        else:
            self._skipped(nodeid, report)

    def _skipped(self, nodeid: str, report: pytest.TestReport) -> None:
        if len(self.skips) < MAX_SKIPPED_KEPT and nodeid not in self.skips:
            found = getattr(report, "user_properties", ())
            where = next((v for k, v in found if k == SKIPPED_AT), None)
            if isinstance(where, str):
                self.skipped_at[nodeid] = where
            xfail = getattr(report, "wasxfail", None)
            if xfail is not None:
                self.skips[nodeid] = f"xfail: {xfail}" if xfail else "xfail"
            else:
                longrepr = report.longrepr
                why = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
                self.skips[nodeid] = _first_line(str(why)) or "skipped"

    def collect_report(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collectors[report.nodeid] = fold(PASSED, ERROR, True)
            self.details[report.nodeid] = self._detail(report, "collection error")
        elif report.skipped:
            self.collectors.setdefault(report.nodeid, fold(PASSED, SKIPPED, True))

    def worker_down(self, worker: str, error: object) -> None:
        if error is not None:
            self.crashed_workers.setdefault(worker, str(error))

    def not_run(self) -> list[str]:
        """The tests whose last outcome is a pass and whose call phase never ran."""
        called = self.called
        return sorted(
            nodeid
            for nodeid, state in self.states.items()
            if state & RANK_MASK == PASSED and nodeid not in called
        )

    @property
    def ran(self) -> int:
        """Tests that started (a setup report), collectors excluded."""
        return len(self.states)

    def _detail(self, report: pytest.TestReport | pytest.CollectReport, what: str = "") -> _Detail:
        fspath, lineno, _ = report.location or ("", None, "")
        file = str(self.rootpath / fspath) if fspath else None
        line = lineno + 1 if isinstance(lineno, int) else None
        when = getattr(report, "when", None)
        if not what and when in ("setup", "teardown"):
            what = f"error in {when}"
        return file, line, _message(report.longrepr, what)

    def summary(self) -> dict[str, Any]:
        """The fold for the gate process: counts (passed, skipped, failed, errors), the failing
        and flaky tests, and ``xfail``: how many of the skipped were xfailed and of the passed
        xpassed."""
        counts = [0, 0, 0, 0]
        cases: list[dict[str, Any]] = []
        entries = [*self.states.items(), *self.collectors.items()]
        for nodeid, state in entries:
            rank = state & RANK_MASK  # outcomes.rank_of, inlined: once per test
            counts[rank] += 1
            if state == PASSED:
                continue  # passed, never failed: the common case
            flaky = is_flaky(state)
            if rank < FAILED and not flaky:
                continue  # skipped (perhaps after a failure: its last outcome)
            file, line, message = self.details.get(nodeid, (None, None, None))
            cases.append(
                {
                    "name": nodeid,
                    "outcome": OUTCOMES[rank],
                    "file": file,
                    "line": line,
                    "message": message,
                    "flaky": flaky,
                }
            )
        for worker, error in sorted(self.crashed_workers.items()):
            if worker in self.crash_reported:
                continue
            counts[ERROR] += 1
            cases.append(
                {
                    "name": f"xdist worker {worker}",
                    "outcome": "error",
                    "message": f"the worker crashed: {_first_line(error)}",
                }
            )
        xfail = [0, 0]  # xfailed, xpassed
        for nodeid, rank in self.xfail_calls.items():
            if self.states.get(nodeid, -1) & RANK_MASK == rank:
                xfail[rank == PASSED] += 1
        skipped = [
            [nodeid, why, self.skipped_at.get(nodeid)]
            for nodeid, why in self.skips.items()
            if self.states.get(nodeid, -1) & RANK_MASK == SKIPPED
        ]
        return {"counts": counts, "cases": cases, "xfail": xfail, "skipped": skipped}


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


# The same agentgate as this process's, wherever it was imported from (argv[1]); not the
# current directory, where `python -c` would otherwise find a project's own yaml.py first.
HELPER_CODE = (
    "import sys; sys.path[:] = [sys.argv[1], *filter(None, sys.path)]; "
    "from pytest_agentgate.pytest_plugin.gate_process import main; main()"
)
STOP_TIMEOUT = 10.0  # seconds the gate process gets to stop its commands before it is killed
# The test gate's evidence of a run the integrity gate stopped before collection.
NOT_RUN = STOPPED_BY_INTEGRITY
REJECTED = "agentgate: the integrity gate rejected the change, so no test ran"


# -- nested under agentgate -------------------------------------------------------------------

# How far up the process tree the agentgate process that started this pytest may be: the gate
# command's shell, `coverage run`, a wrapper script, pytest itself with xdist workers.
MAX_ANCESTORS = 32
# What an agentgate process looks like on the command line (the console script's body).
CONSOLE_SCRIPT_IMPORT = "from pytest_agentgate.cli.main import main"
_PYTHON_NAME = re.compile(r"(python|pypy)[0-9.]*[dmt]?(\.exe)?", re.IGNORECASE)


def agentgate_ancestor(value: str | None) -> int | None:
    """The pid of the agentgate process that started this pytest, or None.

    ``value`` is the re-entrancy guard (``AGENTGATE_RUNNING``) as pytest started. It is
    honoured only when the pid it names (:func:`pytest_agentgate.process.running_marker`) is an
    ancestor of this process and that ancestor runs agentgate: the ``agentgate`` console script,
    ``python -m pytest_agentgate``, or a ``pytest --agentgate`` session's gate process. A value
    typed into a shell or set by a conftest.py names no such process. On Linux the whole parent
    chain is walked in /proc; elsewhere only the direct parent is honoured, its command line
    unread.
    """
    from pytest_agentgate.process import parse_running_marker

    pid = parse_running_marker(value)
    if pid is None or pid == os.getpid():
        return None
    if not sys.platform.startswith("linux"):  # pragma: no cover - no /proc to read
        return pid if pid == os.getppid() else None
    ancestor = os.getppid()
    for _ in range(MAX_ANCESTORS):
        if ancestor == pid:
            return pid if runs_agentgate(pid) else None
        parent = _linux_parent(ancestor)
        if parent is None or parent == ancestor or ancestor <= 1:
            return None
        ancestor = parent
    return None


def _linux_parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid ..."; comm may contain spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def runs_agentgate(pid: int) -> bool:
    """Whether the Linux process ``pid`` runs agentgate, judged by its command line."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return False
    argv = [a.decode("utf-8", "surrogateescape") for a in raw.split(b"\0")[:-1]]
    return is_agentgate_command(argv, Path(f"/proc/{pid}/cwd"))


def is_agentgate_command(argv: Sequence[str], cwd: Path) -> bool:
    """Whether ``argv`` is a Python interpreter running agentgate (see :func:`agentgate_ancestor`).

    The interpreter's own options are skipped as Python reads them; then ``-m pytest_agentgate``,
    ``-c`` with the gate process's code, or a script named ``agentgate`` that is the console
    script (it imports ``pytest_agentgate.cli.main``).
    """
    if not argv or not _PYTHON_NAME.fullmatch(os.path.basename(argv[0])):
        return False
    args = iter(argv[1:])
    for arg in args:
        if arg == "-" or not arg.startswith("-"):  # the script, or stdin
            return os.path.basename(arg) == "agentgate" and _is_console_script(cwd / arg)
        if arg.startswith("--"):  # --check-hash-based-pycs takes a value
            if arg == "--check-hash-based-pycs":
                next(args, None)
            continue
        for index, letter in enumerate(arg[1:], start=1):
            if letter in "mcXW":
                value = arg[index + 1 :] or next(args, "")
                if letter == "m":
                    return value == "pytest_agentgate"
                if letter == "c":
                    return value == HELPER_CODE
                break  # -X opt, -W arg
    return False


def _is_console_script(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return CONSOLE_SCRIPT_IMPORT in f.read(4096)
    except OSError:
        return False


class GateProcess:
    """The pytest process's end of the gate process (:mod:`.gate_process`).

    Started when the session is configured, so that it resolves the configuration and starts
    the other gates' commands on another core while pytest collects and runs the tests.
    """

    def __init__(self, request: dict[str, Any]) -> None:
        package_parent = str(Path(__file__).resolve().parent.parent)
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115  (closed in close())
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", HELPER_CODE, package_parent],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                encoding="utf-8",
            )
        except OSError as exc:
            self.stderr.close()
            raise pytest.UsageError(
                f"agentgate: cannot start its gate process ({sys.executable or 'no Python'}): "
                f"{exc.strerror or exc}"
            ) from None
        # Whether the process waiting for this run (:mod:`.supervisor`) reaps the gate process:
        # this one cannot wait for it, nor know how it ended.
        self.reaped_elsewhere = False
        self.request = request
        self.ready_message: dict[str, Any] | None = None
        self.failure: str | None = None
        # The verdict asked for when the integrity gate stopped the run before its tests, and
        # whether it (or why there is none) has been shown.
        self.rejection: dict[str, Any] | None = None
        self.rejection_said = False
        self._send(request)

    def ready(self) -> dict[str, Any]:
        """The gate process's answer to the request: ``ready``, or a configuration ``error``.
        Waits for it (the configuration is resolved and the integrity gate judged meanwhile);
        empty when the gate process failed (:attr:`failure`)."""
        if self.ready_message is None:
            self.ready_message = self._receive("before it was ready") or {}
        return self.ready_message

    @property
    def may_run(self) -> bool:
        """Whether the project's code may run: the integrity gate passed. Waits for it."""
        early = self.ready().get("early")
        return isinstance(early, dict) and early.get("status") == "pass"

    def verdict(self, evidence: dict[str, Any]) -> dict[str, Any] | None:
        """The verdict for this evidence: ``status``, ``text`` and ``json_error``; None (with
        :attr:`failure` set) when the gate process failed."""
        return self._receive("without a verdict") if self._send(evidence) else None

    def close(self) -> None:
        """End the input: a gate process still waiting for evidence stops its commands."""
        if self.process.returncode is None:
            # Both ends: an answer nobody will read must not block the gate process.
            for stream in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(OSError):
                    stream.close()  # type: ignore[union-attr]
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stderr.close()

    def _send(self, message: dict[str, Any]) -> bool:
        try:
            self.process.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
            self.process.stdin.flush()  # type: ignore[union-attr]
        except (OSError, ValueError):  # the gate process is gone
            self._failed("before it had the evidence")
            return False
        return True

    def _receive(self, when: str) -> dict[str, Any] | None:
        if self.failure is not None:
            return None
        # Lines that are not a message are skipped, and shown if no message follows: Python
        # can print before the gate process takes stdout for the protocol (a noisy .pth file).
        noise: list[str] = []
        for line in self.process.stdout:  # type: ignore[union-attr]
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if isinstance(message, dict):
                return message
            noise.append(line.rstrip("\n"))
        self._failed(when, noise[-20:])
        return None

    def _failed(self, when: str, output: Sequence[str] = ()) -> None:
        if self.failure is not None:
            return
        with contextlib.suppress(OSError, ValueError):
            self.process.stdin.close()  # type: ignore[union-attr]
        if self.reaped_elsewhere:  # its status is the waiting process's to take
            self.failure = f"agentgate's gate process ended {when}"
        else:
            try:
                status = self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                status = self.process.wait()
            how = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
            self.failure = f"agentgate's gate process ended {when} ({how})"
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0)
            lines = [*output, *self.stderr.read().decode("utf-8", "replace").strip().splitlines()]
            if lines := [line for line in lines if line.strip()]:
                self.failure += ":\n" + "\n".join(lines[-20:])


# The gate process started before the project's conftest.py files were imported.
EARLY_GATE = pytest.StashKey[GateProcess]()
# coverage.py measuring this session when pytest-cov does not (``SelfCoverage``), or why not.
SELF_COVERAGE = pytest.StashKey["SelfCoverage | str"]()


def session_request(config: pytest.Config, profile: str, *, early: bool = False) -> dict[str, Any]:
    """The gate process's request for this session; ``early``: before pytest has parsed every
    option (while it loads the initial conftest.py files)."""
    if early:
        no_run = getattr(config.known_args_namespace, "agentgate_no_run", False)
    else:
        no_run = config.getoption("agentgate_no_run", False)
    return {
        "cwd": str(config.invocation_params.dir),
        "profile": profile,
        "command": shlex.join(["pytest", *config.invocation_params.args]),
        "cov_active": cov_plugin_active(config),
        "run": not no_run,
    }


def in_a_repository(path: Path) -> bool:
    """Whether ``path`` is inside a git work tree (a ``.git`` folder or file above it): only
    there does the integrity gate judge a change."""
    return any((folder / ".git").exists() for folder in (path, *path.parents))


def start_early(config: pytest.Config, profile: str, supervised: int | None = None) -> None:
    """Start the gate process before pytest imports the project's conftest.py files, and wait
    for its judgment of the integrity gate.

    A change the gate rejects (or that cannot be judged: a configuration error, a gate process
    that failed) gets none of them imported (``--noconftest``): none of its code runs, not even
    a module-level ``os._exit(0)``, which nothing in this process could catch. The verdict is
    asked for and shown at once, with no test run; the session stops before collection
    (:meth:`GateSession.stop_unless_judged`).

    ``supervised``: the run forks once the gate process has started, and goes on in the child,
    while the parent waits for it and gives its exit status (:func:`.supervisor.fork`, given
    this copy of stderr to speak on).
    """
    gate = GateProcess(session_request(config, profile, early=True))
    if supervised is not None:
        from pytest_agentgate.pytest_plugin import supervisor

        supervisor.fork(gate.process, supervised)
        gate.reaped_elsewhere = True
    config.stash[EARLY_GATE] = gate
    config.add_cleanup(gate.close)
    if not in_a_repository(config.rootpath):
        # No git, no change to judge: the integrity gate does not exist here, so pytest goes on
        # loading while the gate process starts (the session waits for it before collection).
        measure_coverage(config, gate)
        return
    if gate.may_run:
        measure_coverage(config, gate)
        return
    config.known_args_namespace.noconftest = True
    if "error" in gate.ready() or gate.failure is not None:
        return  # said when the session starts
    # Asked for and shown now, before pytest could stop on an option that only a conftest.py
    # it no longer imports would have added.
    capture = config.pluginmanager.get_plugin("capturemanager")
    shown = capture.global_and_fixture_disabled() if capture else contextlib.nullcontext()
    with shown:
        colour = _colour(config)
        json_path = getattr(config.known_args_namespace, "agentgate_json", None)
        gate.rejection = gate.verdict(not_run_evidence(config, gate, colour, json_path))
        sys.stdout.write(rejection_text(gate))
        sys.stdout.flush()
        gate.rejection_said = True


def measure_coverage(config: pytest.Config, gate: GateProcess) -> None:
    """Without pytest-cov, measure this session with coverage.py as the test command it stands
    for would have (``measure`` in the gate process's answer), from before the project's
    conftest.py files are imported. Waits for the answer only when pytest-cov is not active."""
    if cov_plugin_active(config):
        return
    options = gate.ready().get("measure")
    if not isinstance(options, dict):
        return
    workers = getattr(config.known_args_namespace, "numprocesses", None)
    if workers not in (None, 0, "0"):
        config.stash[SELF_COVERAGE] = (
            "agentgate measures coverage itself only in one process, and this run has xdist workers"
        )
        return
    try:
        config.stash[SELF_COVERAGE] = SelfCoverage(options)
    except Exception as exc:  # coverage.py refusing its configuration, say
        config.stash[SELF_COVERAGE] = f"coverage.py could not start ({type(exc).__name__}: {exc})"


class SelfCoverage:
    """coverage.py measuring this session in-process, with the test command's options (source,
    branch, include, omit, rcfile) and, from the project's folder, its configuration; the data
    stays in memory. What ``coverage run -m pytest`` would have measured, pytest-cov aside."""

    def __init__(self, options: dict[str, Any]) -> None:
        import coverage

        self.root = options.get("root")
        self.early = _imported_already(self.root or os.getcwd())
        with _working_directory(self.root):
            self.cov = coverage.Coverage(
                data_file=None,
                branch=options.get("branch"),
                source=options.get("source") or None,
                include=options.get("include") or None,
                omit=options.get("omit") or None,
                config_file=options.get("rcfile") or True,
            )
            self.cov.start()
        self.stopped = False

    def export(self, directory: Path) -> dict[str, Any]:
        """Stop measuring; this session's data as a coverage.py JSON report in ``directory``
        (the payload :func:`export_pytest_cov` gives for pytest-cov's)."""
        if not self.stopped:
            self.cov.stop()
            # What the tracer collected, into the data the report reads: coverage.py's reporting
            # copies the data first when [paths] remaps files, and the copy of unflushed data
            # is empty ("Can't touch files in an empty CoverageData").
            with contextlib.suppress(Exception):
                self.cov.get_data()
            self.stopped = True
        notes = self._copies_of_the_project() + self._imported_before_measuring()
        outfile = directory / "coverage.json"
        with warnings.catch_warnings(record=True) as caught, _working_directory(self.root):
            warnings.simplefilter("always")
            try:
                self.cov.json_report(outfile=str(outfile), ignore_errors=True)
            except Exception as exc:  # coverage.py's NoDataError and friends
                problem = f"coverage.py could not report ({type(exc).__name__}: {exc})"
                if self.early and type(exc).__name__ == "NoDataError":
                    # Review 17, typeguard: a pytest plugin whose every file pytest imported
                    # first; `--cov=` is not the matter.
                    return {"error": [SELF_MEASURED, problem, self._all_early()]}
                return {"error": [SELF_MEASURED, problem, COVERAGE_HINT]}
        return {
            "json": str(outfile),
            "warnings": [str(w.message) for w in caught],
            "topdir": self.root,
            "failed_workers": [],
            "by": SELF_MEASURED,
            "notes": notes,
        }

    def _imported_before_measuring(self) -> list[str]:
        """Leave out of the report the project's files pytest imported before coverage.py
        could start here (a project that is a pytest plugin: pytest loads it first), whose
        lines run at import this session never saw run (review 8: pyfakefs). ``agentgate
        verify``'s command measures them from the interpreter's start."""
        if not self.early:
            return []
        omit = [*(self.cov.config.report_omit or []), *self.early]
        self.cov.set_option("report:omit", omit)
        root = self.root or os.getcwd()
        shown = [os.path.relpath(path, root) for path in self.early[:3]]
        more = f" and {len(self.early) - 3} more" if len(self.early) > 3 else ""
        return [
            f"{len(self.early)} file(s) of the project's code were imported before coverage.py "
            f"could start in this pytest session (pytest loads the project's plugins first: "
            f"{', '.join(shown)}{more}): what they run at import is not measured here, so they "
            "are left out; `agentgate verify` (and the stop hook) measures them from the start"
        ]

    def _all_early(self) -> str:
        root = self.root or os.getcwd()
        shown = [os.path.relpath(path, root) for path in self.early[:3]]
        more = f" and {len(self.early) - 3} more" if len(self.early) > 3 else ""
        return (
            "every file of the project's code this session would measure was imported before "
            "coverage.py could start (pytest loads the project's own plugins first: "
            f"{', '.join(shown)}{more}), so coverage cannot be measured in this pytest "
            "session: run `agentgate verify` (the stop hook does too), which measures it from "
            "the interpreter's start"
        )

    def _copies_of_the_project(self) -> list[str]:
        """Have the report count the project's code measured in a copy with the same bytes
        as the project's files (a src layout installed with ``pip install .``), and no other
        copy; the notes that say which."""
        from pytest_agentgate.reports.coverage.copies import copies_of_the_project

        try:
            measured = self.cov.get_data().measured_files()
        except Exception:  # nothing measured: the report says so
            return []
        copies = copies_of_the_project(measured, self.root or os.getcwd())
        if copies.aliases:
            self.cov.set_option("paths", {**self.cov.config.paths, **copies.aliases})
        if copies.omit:
            omit = [*(self.cov.config.report_omit or []), *copies.omit]
            self.cov.set_option("report:omit", omit)
        return copies.notes


def _imported_already(root: str) -> list[str]:
    """The files of the project's code (under ``root``, not in an environment inside it, not
    its tests) whose modules are imported already: what coverage.py starting now will not see
    run at import."""
    from pytest_agentgate.pytest_plugin.start import files_of
    from pytest_agentgate.testcode import is_test_code

    top = os.path.realpath(root)
    found: set[str] = set()
    for where in files_of(sys.modules).values():
        if not where.endswith(".py"):
            continue
        real = os.path.realpath(where)
        parts = real.split(os.sep)
        if (
            not real.startswith(top + os.sep)
            or "site-packages" in parts
            or "dist-packages" in parts
        ):
            continue
        if not is_test_code(os.path.relpath(real, top)):
            found.add(real)
    return sorted(found)


# How a report of this session's own measurement names its tool.
SELF_MEASURED = "coverage.py (measured by agentgate in this session)"


def _colour(config: pytest.Config) -> bool:
    """Whether pytest will colour its output (``--color``, NO_COLOR, FORCE_COLOR, a terminal),
    before its terminal writer exists."""
    choice = getattr(config.known_args_namespace, "color", "auto")
    if choice in ("yes", "no"):
        return bool(choice == "yes")
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def not_run_evidence(
    config: pytest.Config, gate: GateProcess, colour: bool, json_path: str | None
) -> dict[str, Any]:
    """The evidence of a run stopped before its first test."""
    coverage = None
    if gate.ready().get("coverage"):
        coverage = {
            "error": [
                "pytest-cov" if cov_plugin_active(config) else "pytest session",
                f"nothing was measured: no test ran ({NOT_RUN})",
                "resolve the integrity findings, then run the suite again",
            ]
        }
    return {
        "tests": {"counts": [0, 0, 0, 0], "cases": [], "partial": [NOT_RUN]},
        "exitstatus": int(pytest.ExitCode.TESTS_FAILED),
        "duration": 0.0,
        "coverage": coverage,
        "json": str(config.invocation_params.dir / json_path) if json_path else None,
        "colour": colour,
    }


def rejection_text(gate: GateProcess) -> str:
    """What the terminal shows of a run stopped before collection: the integrity gate's
    verdict, or why there is none."""
    answer = gate.rejection
    if answer is None:
        return f"agentgate: no verdict: {gate.failure}\n"
    lines = [REJECTED, *str(answer.get("text", "")).splitlines()]
    if answer.get("json_error"):
        lines.append(f"agentgate: error: {answer['json_error']}")
    return "\n".join(lines) + "\n"


def what_ended(excinfo: pytest.ExceptionInfo[BaseException], root: Path) -> str:
    """``pytest.exit('done') in conftest.py:4``: the exception that ended the run, and the last
    place in the project's own code it went through (not pytest's, nor an installed package's)."""
    exc = excinfo.value
    if isinstance(exc, pytest.exit.Exception):
        what = f"pytest.exit({exc.msg!r})"
    elif isinstance(exc, SystemExit):
        what = f"SystemExit({exc.code!r})"
    else:
        what = type(exc).__name__
    where = None
    tb: TracebackType | None = excinfo.tb
    while tb is not None:
        place = _project_file(tb.tb_frame.f_code.co_filename, root)
        if place is not None:
            where = f"{place}:{tb.tb_lineno}"
        tb = tb.tb_next
    return f"{what} in {where}" if where else what


def _project_file(filename: str, root: Path) -> str | None:
    """``filename`` relative to the project, or None for code that is not the project's."""
    path = Path(filename)
    if not path.is_absolute():
        return None
    try:
        relative = path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return None
    if any(part in ("site-packages", "dist-packages") for part in relative.parts):
        return None
    return relative.as_posix()


class GateSession:
    """The plugin of a gated session on the controller (or a run without xdist)."""

    def __init__(self, config: pytest.Config, gate: GateProcess) -> None:
        self.config = config
        self.gate = gate
        self.ledger = OutcomeLedger(config.rootpath)
        # The ledger's method is the hook itself: one call less for each of 3 reports per test.
        self.pytest_runtest_logreport = self.ledger.test_report
        self.deselected = 0
        self.collected: int | None = None
        # The test functions collected, and left with no case to run by pytest's selection
        # (count.Tests; None: too many): the integrity gate compares them with the base's.
        self.tests = Tests()
        self.test_lists: tuple[list[str] | None, list[str] | None] = (None, None)
        self._worker_lists: list[tuple[list[str] | None, list[str] | None]] = []
        # Items collected under a node id another item has (witness.duplicates): the ledger
        # folds reports per node id, so each such id counts once.
        self.duplicates = 0
        # The test tools' code found replaced, here or on an xdist worker.
        self.replaced: set[str] = set()
        self.collect_errors = 0
        self.last_failed = _last_failed_active(config)
        self.interrupted = False
        self.stopped_because = ""
        # What the project's code ended the run with (pytest.exit, SystemExit, Ctrl-C), and
        # where: pytest.exit('done') in conftest.py:4.
        self.ended_by = ""
        self.rejected = False  # the integrity gate stopped the run before collection
        self.answer: dict[str, Any] | None = None
        self.said = False  # the verdict, or why there is none, is on the terminal
        # pytest's session, made before the configuration: its exit status is the run's.
        self.session: pytest.Session | None = config.pluginmanager.get_plugin("session")
        self.t0 = time.perf_counter()

    @classmethod
    def create(cls, config: pytest.Config, profile: str) -> GateSession:
        """The session's plugin, with the gate process started before the project's conftest.py
        files were imported (:func:`start_early`), else a new one."""
        request = session_request(config, profile)
        gate = config.stash.get(EARLY_GATE, None)
        if gate is None or gate.request != request:
            if gate is not None:  # the project's code changed what was asked: ask again
                gate.close()
            gate = GateProcess(request)
        return cls(config, gate)

    @property
    def config_error(self) -> str | None:
        error = (self.gate.ready_message or {}).get("error")
        return str(error) if error is not None else None

    # session lifecycle

    @pytest.hookimpl(tryfirst=True)  # before xdist starts its workers and any other plugin
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.t0 = time.perf_counter()
        self.session = session
        self.stop_unless_judged()

    def stop_unless_judged(self) -> None:
        """Before collection: the run goes on only when the integrity gate passed.

        A configuration the engine refuses is a usage error. A change the integrity gate
        rejects gets its verdict (no test run: it fails, and counts like any other) and stops
        the run with status 1; a gate process that failed, with 3. The project's collection
        and test hooks never run.
        """
        if "error" in self.gate.ready():
            raise pytest.UsageError(self.config_error)
        if self.gate.may_run:
            return
        if self.gate.failure is None and not in_a_repository(self.config.rootpath):
            return  # no git: there is no integrity gate to pass
        self.rejected = True
        gate = self.gate
        if gate.failure is None and gate.rejection is None:  # judged after the conftest.py files
            json_path = self.config.getoption("agentgate_json", None)
            evidence = not_run_evidence(self.config, gate, has_markup(self.config), json_path)
            gate.rejection = gate.verdict(evidence)
        if not gate.rejection_said:
            write_line(self.config, rejection_text(gate))
            gate.rejection_said = True
        self.answer = gate.rejection
        self.said = True
        if self.answer is None:
            pytest.exit("agentgate: no verdict, so no test ran", returncode=3)
        pytest.exit(REJECTED, returncode=pytest.ExitCode.TESTS_FAILED)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if not report.passed:
            self.ledger.collect_report(report)
            if report.failed:
                self.collect_errors += 1

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)
        self.tests.deselect(items, sys._getframe(1))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        from pytest_agentgate.pytest_plugin.tampering import look_as_it_runs

        look_as_it_runs(item, self.replaced, before=True)
        yield
        look_as_it_runs(item, self.replaced, before=False)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from pytest_agentgate.pytest_plugin.tampering import tests_replaced

        self.test_lists = self.tests.lists(
            session.items, only_selection=True, limit=MAX_RUN_LISTED_TESTS
        )
        self.collected = len(session.items)
        self.duplicates = _duplicates(item.nodeid for item in session.items)
        self._look_for_replaced()
        self.replaced.update(tests_replaced(session.items, str(self.config.rootpath)))

    def _look_for_replaced(self) -> None:
        from pytest_agentgate.pytest_plugin.tampering import replaced

        self.replaced.update(
            replaced(self.config.pluginmanager.get_plugins(), str(self.config.rootpath))
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.collected = max(self.collected or 0, len(ids))
        self.duplicates = max(self.duplicates, _duplicates(ids))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        from pytest_agentgate.pytest_plugin.witness import from_worker

        output = getattr(node, "workeroutput", None) or {}
        # Every worker collects (and deselects from) the whole suite: the largest count is it.
        self.deselected = max(self.deselected, int(output.get(WORKER_OUTPUT_KEY, 0)))
        lists = from_worker(output.get(WORKER_TESTS_KEY))
        self._worker_lists.append(_two_lists(lists))
        found = from_worker(output.get(WORKER_REPLACED_KEY))
        if isinstance(found, list):
            self.replaced.update(str(entry) for entry in found)
        self.ledger.worker_down(str(getattr(getattr(node, "gateway", None), "id", node)), error)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # Ctrl-C or pytest.exit(); not pytest's own stop after collection errors, which is
        # judged like any other run (the errors count).
        if self.rejected:  # our own stop before collection
            return
        self.interrupted = not isinstance(excinfo.value, pytest.Session.Interrupted)
        if not self.interrupted:  # e.g. "1 error during collection": why the run stopped early
            self.stopped_because = str(excinfo.value)
        else:
            self.ended_by = what_ended(excinfo, self.config.rootpath)

    def pytest_internalerror(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # pytest reports a SystemExit from a hook (sys.exit(0) in pytest_sessionstart) as an
        # internal error, and exits 3.
        if isinstance(excinfo.value, SystemExit) and not self.ended_by:
            self.ended_by = what_ended(excinfo, self.config.rootpath)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.interrupted or "error" in self.gate.ready():
            self.gate.close()
            if self.interrupted and session.exitstatus == pytest.ExitCode.OK:
                # pytest.exit(returncode=0) from the project's code: no verdict, never a pass
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        if self.gate.failure is None:
            try:
                self.answer = self.ask_verdict(session)
            except KeyboardInterrupt:  # Ctrl-C while the other gates finish; they are stopped
                self.interrupted = True
                self.gate.close()
                session.exitstatus = pytest.ExitCode.INTERRUPTED
                return
        if self.answer is None:  # no verdict is never a pass
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            return
        if self.answer.get("status") != "pass" and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.answer.get("json_error"):
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_unconfigure(self, config: pytest.Config) -> Generator[None, object, object]:
        """After every other plugin's: the session never finished (the project's code ended it
        in pytest_sessionstart: pytest skips pytest_sessionfinish then), or it is done. Either
        way, the run exits 0 only with a passing verdict."""
        try:
            return (yield)
        finally:
            self.gate.close()
            self.keep_exit_status()

    def keep_exit_status(self) -> None:
        """Say what the terminal summary did not (pytest shows none after an internal error or
        before the session started), then: no verdict turns pytest's 0 into 3, a failing
        verdict into 1, whatever the project's code did to the status after the verdict."""
        if not self.said and self.config_error is None:
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_sep("=", "agentgate")
            self.say(lambda line, **markup: write_line(self.config, line, **markup))
        session = self.session
        if session is None or session.exitstatus != pytest.ExitCode.OK:
            return
        if self.answer is None:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        elif self.answer.get("status") != "pass":
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def no_verdict(self) -> str:
        """Why there is no verdict, as the terminal says it."""
        if self.ended_by.startswith("KeyboardInterrupt"):
            return f"agentgate: no verdict: the run was interrupted ({self.ended_by})"
        if self.ended_by:
            return f"agentgate: no verdict: the run was ended early by {self.ended_by}"
        if self.interrupted:
            return "agentgate: no verdict: the run was interrupted"
        if self.gate.failure is not None:
            return f"agentgate: no verdict: {self.gate.failure}"
        return "agentgate: no verdict: the run ended before the verdict was made"

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.config_error is not None:  # pytest reports it as the usage error it is
            return
        terminalreporter.write_sep("=", "agentgate")
        self.say(terminalreporter.write_line)

    def say(self, write: Callable[..., None]) -> None:
        """The verdict, or why there is none, line by line."""
        self.said = True
        if self.answer is None:
            write(self.no_verdict(), **{"yellow" if self.interrupted else "red": True})
            return
        if self.ended_by:  # SystemExit from a hook: pytest's internal error, judged anyway
            write(f"agentgate: the run was ended early by {self.ended_by}")
        for line in str(self.answer.get("text", "")).splitlines():
            write(line)
        if self.answer.get("json_error"):
            write(f"agentgate: error: {self.answer['json_error']}", red=True)

    def _test_lists(self) -> tuple[list[str] | None, list[str] | None]:
        """The collected and deselected test functions, here or merged from the workers."""
        if not self._worker_lists:
            return self.test_lists
        merged: list[list[str] | None] = []
        for index in (0, 1):
            names: set[str] = set()
            for lists in self._worker_lists:
                part = lists[index]
                if part is None:
                    break
                names.update(part)
            else:
                merged.append(sorted(names))
                continue
            merged.append(None)
        return merged[0], merged[1]

    # the verdict

    def ask_verdict(self, session: pytest.Session) -> dict[str, Any] | None:
        tests = self.ledger.summary()
        tests["partial"] = self.partial_reasons(session)
        # What the suite selected: the integrity gate compares it with the base's.
        # (with those deselected: the base's checkout has no cache for `--lf` or `--sw`).
        tests["selected"] = None if self.collected is None else self.collected + self.deselected
        tests["collect_errors"] = self.collect_errors
        tests["collected_tests"], tests["deselected_tests"] = self._test_lists()
        tests["tests_over_limit"] = self.collected is not None and tests["collected_tests"] is None
        from pytest_agentgate.pytest_plugin.witness import local_plugins

        tests["local_plugins"] = local_plugins(self.config)
        self._look_for_replaced()
        tests["replaced"] = sorted(self.replaced)
        from pytest_agentgate.pytest_plugin.startup import Install, planted, planted_plugins

        installs: list[Install] = []
        plugins = planted_plugins(
            self.config.pluginmanager.get_plugins(), str(self.config.rootpath), installs
        )
        tests["startup"] = [code._asdict() for code in planted() + plugins]
        tests["installs"] = [install._asdict() for install in installs]
        tests["loosened"] = loosened_run(self.config)
        from pytest_agentgate.pytest_plugin.witness import MAX_NOT_RUN_NAMED, setup_only

        not_run = self.ledger.not_run()
        tests["not_run"] = len(not_run)
        tests["not_run_tests"] = not_run[:MAX_NOT_RUN_NAMED]
        tests["not_run_by"] = setup_only(self.config) if not_run else ""
        evidence: dict[str, Any] = {
            "tests": tests,
            "exitstatus": int(session.exitstatus),
            "duration": time.perf_counter() - self.t0,
            "coverage": None,
            "json": None,
            "colour": has_markup(self.config),
        }
        if path := self.config.getoption("agentgate_json", None):
            evidence["json"] = str(self.config.invocation_params.dir / path)
        if not self.gate.ready().get("coverage"):
            return self.gate.verdict(evidence)
        own = self.config.stash.get(SELF_COVERAGE, None)
        if isinstance(own, str):
            evidence["coverage"] = {
                "error": [SELF_MEASURED, own, "run pytest with --cov=PACKAGE (pytest-cov)"]
            }
            return self.gate.verdict(evidence)
        with tempfile.TemporaryDirectory(prefix="agentgate-cov-") as tmp:
            if own is not None:
                evidence["coverage"] = own.export(Path(tmp))
            else:
                evidence["coverage"] = export_pytest_cov(self.config, Path(tmp))
            return self.gate.verdict(evidence)

    def partial_reasons(self, session: pytest.Session) -> list[str]:
        """Why this run covers only part of the suite; empty for a whole run."""
        reasons = []
        if self.last_failed:
            reasons.append("--lf ran only the tests that failed last time")
        if self.deselected and (chosen := caller_selection(self.config)):
            reasons.append(f"{self.deselected} tests deselected ({chosen})")
        doctests = bool(self.gate.ready().get("doctest_modules"))
        if chosen := chosen_paths(self.config, doctest_modules=doctests):
            reasons.append(chosen)
        if chosen := caller_collection(self.config):
            reasons.append(chosen)
        ran = self.ledger.ran
        if self.collected is not None and ran < self.collected - self.duplicates:
            why = self.ended_by or session.shouldfail or session.shouldstop or self.stopped_because
            how = why if isinstance(why, str) and why else "-x, --maxfail or an abort"
            reasons.append(f"stopped after {ran} of {self.collected} tests ({how})")
        return reasons


def _duplicates(ids: Iterable[str]) -> int:
    """How many of the items ``ids`` name share a node id with an item before them (witness.py)."""
    seen = list(ids)
    return len(seen) - len(set(seen))


# -- what the run checks ------------------------------------------------------------------------


def loosened_run(config: pytest.Config) -> list[str]:
    """What makes this session check less than its tests say, each a reason the gate fails."""
    reasons = []
    level = sys.flags.optimize
    if level > 0 and config.getoption("assertmode", "rewrite") != "rewrite":
        reasons.append(
            f"Python runs with -{'O' * min(level, 2)} (python -O or PYTHONOPTIMIZE) and pytest "
            "does not rewrite asserts (--assert=plain): not one assert statement of the tests "
            "ran, so a failing test passes; run without -O and PYTHONOPTIMIZE, or without "
            "--assert=plain"
        )
    from pytest_agentgate.integrity.hooks import _installed_plugin, _plugins

    for name in dict.fromkeys(_plugins(shlex.join(config.invocation_params.args))):
        if name.split(".", 1)[0] == "pytest_agentgate":
            continue  # `-p pytest_agentgate`: this plugin, where autoload is off
        if not _installed_plugin(name):
            reasons.append(
                f"-p {name} on the command line loads a plugin that no installed package "
                "provides, and a plugin can rewrite any test's result: install it as a "
                "package, or leave it out"
            )
    return reasons


# -- the selection ----------------------------------------------------------------------------


# Options that deselect collected tests.
SELECTION_OPTIONS = ("-k", "-m", "--deselect")


def caller_selection(config: pytest.Config) -> str | None:
    """The selection options the caller gave (the command line, PYTEST_ADDOPTS), as given; None
    when tests were deselected only by the project's own configuration (``addopts`` in its ini
    file, a conftest.py of the base). That selection is the project's suite, as it is for
    ``agentgate verify`` running the same pytest; a change that narrows it is the integrity
    gate's to judge."""
    try:
        extra = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    except ValueError:
        extra = []
    found = []
    for arg in [*config.invocation_params.args, *extra]:
        for option in SELECTION_OPTIONS:
            if (
                arg == option
                or arg.startswith(option + "=")
                or (len(option) == 2 and arg.startswith(option) and not arg.startswith("--"))
            ):
                found.append(option)
    return ", ".join(dict.fromkeys(found)) or None


# pytest ini keys that choose what is collected: the caller's `-o` of one narrows the suite.
COLLECTION_INI = (
    "python_files",
    "python_classes",
    "python_functions",
    "testpaths",
    "norecursedirs",
    "collect_imported_tests",
    "addopts",
)
# Options that leave files out of collection, or read another settings file.
COLLECTION_OPTIONS = ("--ignore", "--ignore-glob", "-c", "--config-file")


def caller_collection(config: pytest.Config) -> str | None:
    """The options on the command line that choose what is collected (``-o python_functions=``,
    ``--ignore``, ``-c``), as given; None when the project's settings choose it. Like ``-k`` and
    node ids, they make the run the caller's part of the suite."""
    from pytest_agentgate.integrity.environment import option_pairs

    found = []
    for option, value in option_pairs(shlex.join(config.invocation_params.args)):
        if option in ("-o", "--override-ini"):
            key, _, given = (value or "").partition("=")
            key = key.strip()
            if key in COLLECTION_INI and not _the_projects_own(config, key, given):
                found.append(f"{option} {key}=")
        elif option in COLLECTION_OPTIONS:
            found.append(option)
    if not found:
        return None
    shown = ", ".join(dict.fromkeys(found))
    return f"the command line chooses what is collected ({shown}), not the project's settings"


# pytest's own defaults of the name patterns, for a project that sets none.
_NAME_DEFAULTS = {
    "python_files": "test_*.py *_test.py",
    "python_classes": "Test",
    "python_functions": "test",
}


def _the_projects_own(config: pytest.Config, key: str, given: str) -> bool:
    """Whether ``-o key=given`` says what the project's settings file (else pytest's default)
    says already: the same patterns, in any order."""
    from pytest_agentgate.integrity import pytest_files

    own: Any = None
    path = config.inipath
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        table = pytest_files.read(path.name, text)
        own = table.values.get(key) if table is not None else None
    if own is None:
        own = _NAME_DEFAULTS.get(key)
    if own is None:
        return False
    words = [str(v) for v in own] if isinstance(own, list) else str(own).split()
    return sorted(words) == sorted(given.split())


def _last_failed_active(config: pytest.Config) -> bool:
    """``--lf`` with failures recorded by the last run: only those tests run."""
    if not config.getoption("lf", False):
        return False
    cache = getattr(config, "cache", None)
    return bool(cache is not None and cache.get("cache/lastfailed", {}))


def chosen_paths(config: pytest.Config, *, doctest_modules: bool = False) -> str | None:
    """Test ids or paths on the command line that select less than the whole suite.

    The suite is ``testpaths`` under pytest's rootdir, else the rootdir itself. Paths that
    contain every part of it (``pytest tests`` with ``testpaths = tests``, ``pytest .``) are a
    whole run. ``doctest_modules``: the test gate the session stands for runs
    ``--doctest-modules`` (:func:`_tests_outside`).
    """
    source = config.args_source
    if source == pytest.Config.ArgsSource.TESTPATHS:
        return None
    here = config.invocation_params.dir
    args = [str(here)] if source == pytest.Config.ArgsSource.INVOCATION_DIR else list(config.args)
    shown = ", ".join(_display(a, config.rootpath) for a in args)
    if any("::" in a for a in args):
        return f"only {shown} ran, not the whole suite"
    chosen = [(here / a).resolve() for a in args]
    if config.getoption("pyargs", False):
        # A package's name is the folder it is imported from; a path is a path (red team 57:
        # `--pyargs tests/test_pkg.py` made any path the whole suite).
        found = [p if p.exists() else _package_folder(a) for a, p in zip(args, chosen, strict=True)]
        if any(p is None for p in found):
            return f"only the tests in {shown} ran, not the whole suite"
        chosen = [p for p in found if p is not None]
    suite = _suite(config)
    if all(any(c == part or c in part.parents for c in chosen) for part in suite):
        return None
    if not config.getini("testpaths") and not _tests_outside(config, chosen, doctest_modules):
        return None  # `pytest tests` where every test file is in tests/ (review 34)
    return f"only the tests in {shown} ran, not the whole suite"


def _package_folder(name: str) -> Path | None:
    """Where ``--pyargs NAME`` finds a package or module: its folder, or its file; None when
    it is not found."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return Path(spec.origin).resolve() if spec.origin else None


# How many of the project's files are looked at for a test file outside the paths a run names;
# beyond it, the run is taken for a part of the suite.
MAX_FILES_LOOKED_AT = 200_000


def _tests_outside(config: pytest.Config, chosen: list[Path], doctest_modules: bool) -> bool:
    """Whether the project (pytest's rootdir, which has no ``testpaths``) has a file pytest
    would collect tests from outside the ``chosen`` paths: one its ``python_files`` patterns
    name, a doctest file (``--doctest-glob``), with ``--doctest-modules`` (this run's, or the
    test gate's: ``doctest_modules``) any Python file; or a ``conftest.py`` there that collects
    files of its own (``pytest_collect_file``: red team 58). Not in a folder
    ``norecursedirs`` keeps pytest out of. The project's files are those git lists (tracked,
    or new and not ignored), else those on disk."""
    root = _top(config)
    patterns = [str(p) for p in config.getini("python_files") or ("test_*.py", "*_test.py")]
    patterns += [str(p) for p in config.getoption("doctestglob", None) or ("test*.txt",)]
    modules = doctest_modules or bool(config.getoption("doctestmodules", False))
    skipped = [str(p) for p in config.getini("norecursedirs")]
    for count, relative in enumerate(_project_files(root)):
        if count >= MAX_FILES_LOOKED_AT:
            return True
        path = root / relative
        if any(c == path or c in path.parents for c in chosen):
            continue
        folders = relative.split("/")[:-1]
        if any(fnmatch.fnmatch(f, pattern) for f in folders for pattern in skipped):
            continue
        name = path.name
        if (modules and name.endswith(".py")) or any(
            fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern)
            for pattern in patterns
        ):
            return True
        if name == "conftest.py" and _collects_files(path):
            return True
    return False


def _collects_files(conftest: Path) -> bool:
    """Whether a conftest.py holds a collector of its own (``pytest_collect_file``), which
    may collect tests from any file under its folder."""
    try:
        return "pytest_collect_file" in conftest.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # cannot be read: it may


def _project_files(root: Path) -> Iterator[str]:
    """The files under ``root``, relative to it with ``/``: git's list where ``root`` is in a
    repository, else a walk of the disk (hidden folders left out)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            base = Path(folder).relative_to(root).as_posix()
            for name in files:
                yield name if base == "." else f"{base}/{name}"
        return
    for name in os.fsdecode(listed).split("\0"):
        if name:
            yield name


def _suite(config: pytest.Config) -> list[Path]:
    root = config.rootpath
    parts: list[Path] = []
    for pattern in config.getini("testpaths") or ():
        parts.extend(p.resolve() for p in sorted(root.glob(str(pattern))))
    return parts or [_top(config)]


def _top(config: pytest.Config) -> Path:
    """The folder the whole suite is under, where the project sets no ``testpaths``: pytest's
    rootdir, or above it the folder of the project's settings file and the folder pytest was
    started from (red team 57: ``--rootdir=tests`` made ``tests`` the whole suite)."""
    folders = [config.rootpath.resolve(), config.invocation_params.dir.resolve()]
    if config.inipath is not None:
        folders.append(config.inipath.parent.resolve())
    try:
        return Path(os.path.commonpath(folders))
    except ValueError:  # another drive (Windows)
        return folders[0]


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


def export_pytest_cov(config: pytest.Config, directory: Path) -> dict[str, Any] | None:
    """pytest-cov's combined data for this session, for the gate process: a coverage.py JSON
    report written in ``directory`` with the warnings coverage.py gave, or the ``error`` that
    stopped it. None when pytest-cov is not active.

    Not ``cov_total``: it mixes lines and branches, and is None unless a report was asked for.
    pytest-cov has stopped, saved and combined its data (every xdist worker's included) by the
    time the session finishes; coverage.py reports it in-process, from where pytest-cov started.
    """
    plugin = _pytest_cov(config)
    if plugin is None:
        return None
    controller = getattr(plugin, "cov_controller", None)
    cov = getattr(controller, "cov", None)
    if cov is None:
        return {"error": ["pytest-cov", "pytest-cov measured nothing in this session", ""]}
    topdir = getattr(controller, "topdir", None)
    outfile = directory / "coverage.json"
    with warnings.catch_warnings(record=True) as caught, _working_directory(topdir):
        warnings.simplefilter("always")
        try:
            cov.json_report(outfile=str(outfile), ignore_errors=True)
        except Exception as exc:  # coverage.py's NoDataError and friends
            problem = f"coverage.py could not report ({type(exc).__name__}: {exc})"
            return {"error": ["pytest-cov", problem, COVERAGE_HINT]}
    failed = getattr(controller, "failed_workers", None) or ()
    return {
        "json": str(outfile),
        "warnings": [str(w.message) for w in caught],
        "topdir": topdir,
        "failed_workers": [str(getattr(getattr(n, "gateway", None), "id", n)) for n in failed],
    }


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
