"""What agentgate's pytest plugin witnesses of a test run that agentgate started.

When agentgate runs a gate's command it sets ``AGENTGATE_RUN_ID`` (``commands.RUN_ID_ENV``: a
fresh random id per run)
in the command's environment. A pytest run in that environment that writes a JUnit report
records, as the report's ``agentgate_*`` properties:

- ``agentgate_run``: the run id, so the test gate knows the report was written by this run's
  pytest (a report copied in, or hand-made, does not have it);
- ``agentgate_collected``: the items pytest collected before any plugin or conftest modified the
  list, ``agentgate_deselected``: the items deselected in the open (``-k``, ``-m``,
  ``--deselect``: ``pytest_deselected``), and ``agentgate_selected``: the items left to run. An
  item that disappeared without being deselected was dropped by a hook;
  ``agentgate_deselected_tests``: the test functions pytest's own selection (``-m``, ``-k``,
  ``--deselect``) took out of the run with none of their cases left, as node ids without
  parameters (JSON; null past ``commands.MAX_RUN_LISTED_TESTS``): the integrity gate asks whether
  the base's collection deselected them too, so a mark put on a test of the base by any
  spelling (a helper decorator, ``getattr(pytest.mark, name)``) is seen by its effect;
  ``agentgate_collected_tests``: the test functions collected, each as its node id without
  parameters, a tab, and where its code is defined (``count.entry``; JSON, null past the same
  bound): a test of the base no longer collected (``__test__ = False`` set by a helper, a
  ``@property`` on it) is seen, whatever new test keeps the count;
  ``agentgate_collect_errors``: the collectors that failed (a test file that does not import);
  ``agentgate_duplicates``: the items selected under a node id another selected item has
  (pytest-checkdocs' `project` item, once per packaging file): pytest runs each, a JUnit
  report holds one test of that name;
- ``agentgate_xpassed``: the tests marked xfail that passed anyway (not strict), which JUnit
  cannot tell from any other pass;
- ``agentgate_local_plugin``: each pytest plugin loaded from a distribution in the folder
  ``python -m pytest`` put first on ``sys.path`` (a ``*.egg-info`` or ``*.dist-info`` with a
  ``pytest11`` entry point in the project), unless that folder is on ``sys.path`` by
  installation too, or the same distribution, with the same plugins, is installed: an editable
  install leaves its ``.egg-info`` in the project, a planted one is loaded by no installation;
- ``agentgate_replaced``: each function or class of the test tools (pytest, pluggy, xdist,
  coverage.py, unittest, agentgate) replaced by code written outside any installed package,
  and of the project's own code replaced by a test's, a conftest's or code compiled at run
  time, or a module of the project loaded from another file or by the project's own loader
  (``tampering.replaced``), looked for when collection is done (the test modules are imported)
  and when the session ends;
- ``agentgate_sources``: the files of the project's code its loaded modules came from, with
  their SHA-256 as the session ends (JSON); the test gate compares them with the files after
  the run, so a file swapped for the run and put back is seen;
- ``agentgate_startup``: each piece of code this interpreter ran at start that no installed
  distribution put there (a ``.pth`` line, a ``sitecustomize``: ``startup.planted``), and each
  pytest plugin of the environment no installer put there (``startup.planted_plugins``, at
  line 0), as JSON (``{"path", "line", "code"}``); the integrity gate reports it;
- ``agentgate_read``: the files and folders outside the project the run's code read (JSON: a
  list, or ``null`` when there were too many to keep), for the verdict cache to key
  (``compiled.read_outside``);
- ``agentgate_install``: each distribution the run loaded a pytest plugin or a test tool's
  module from, with the digest of the files its ``RECORD`` hashes (``startup.Install``, as
  JSON); in a task, the integrity gate compares them with the environment the task began with
  (``environment-changed``);
- ``agentgate_outcomes``: the outcomes the witness saw itself, each test's reports folded as
  the test gate folds them (:class:`Outcomes`, JSON): the counts (passed, skipped, failed,
  errors), the failing tests as the report names them (``[classname, name, outcome,
  message, file]``; null past ``MAX_WITNESSED_FAILURES``), and the tests that passed without their
  call phase ever running (``not_run``: pytest's ``--setup-only`` or ``--setup-plan`` runs
  their fixtures only, and the report says they passed), with the option that did it
  (``not_run_by``). It is written before pytest writes the report, so code of the project that
  rewrites the report after (a ``pytest_unconfigure``) leaves it as the run saw it: the test
  gate compares the two (``result-rewritten``). It is not sealed: code that knows its name can
  rewrite it too.

Under pytest-xdist the items are collected on the workers, each the whole suite: each worker
hands its counts to the controller (xdist's ``workeroutput``), which records them, once.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Generator, Iterator, Sequence
from typing import Any

import pytest

from pytest_agentgate.commands import MAX_RUN_LISTED_TESTS
from pytest_agentgate.pytest_plugin.count import Tests
from pytest_agentgate.reports.outcomes import (
    ERROR,
    FAILED,
    OUTCOMES,
    PASSED,
    RANK_MASK,
    SKIPPED,
    fold,
)

PLUGIN_NAME = "agentgate-witness"
# The key of a worker's counts in xdist's ``workeroutput``.
WORKER_KEY = "agentgate_witness"
COUNTS = ("collected", "deselected", "selected", "collect_errors", "duplicates")
# The failing tests the witness names in its record (the counts count them all), and the tests
# whose bodies never ran.
MAX_WITNESSED_FAILURES = 1000
MAX_NOT_RUN_NAMED = 5
# pytest's options that run the tests' fixtures and not their bodies (``--setup-plan`` sets
# ``setuponly`` too), as they may be spelled.
SETUP_ONLY_OPTIONS = {
    "setupplan": ("--setup-plan", "--setupplan"),
    "setuponly": ("--setup-only", "--setuponly"),
}


class Outcomes:
    """Each test's reports folded per node id as the test gate folds them
    (:mod:`pytest_agentgate.reports.outcomes`; the pytest door's ``OutcomeLedger``): a setup
    report starts an attempt, a failed setup or teardown is an error, a failed call (or
    pytest-rerunfailures' ``rerun``) a failure. And which tests' call phase ran: a test whose
    call never ran has not run its body, whatever its report says."""

    def __init__(self) -> None:
        self.states: dict[str, int] = {}
        self.called: set[str] = set()
        # Each failing test's message and file (relative to pytest's rootdir).
        self.messages: dict[str, tuple[str, str]] = {}

    def add(self, report: pytest.TestReport) -> None:
        when, outcome, nodeid = report.when, report.outcome, report.nodeid
        if when == "call":
            self.called.add(nodeid)
        if outcome == "passed":
            rank = PASSED
        elif outcome == "skipped":
            rank = SKIPPED
        elif outcome == "failed" and when != "call":
            rank = ERROR  # setup, teardown, xdist's "???" for a crashed worker's test
        else:  # failed, or "rerun": this attempt failed and another one follows
            rank = FAILED
        self.states[nodeid] = fold(self.states.get(nodeid, 0), rank, when == "setup")
        if rank >= FAILED:
            self.messages[nodeid] = (_crash_line(report), str(report.location[0]))

    def not_run(self) -> list[str]:
        """The tests whose last outcome is a pass and whose call phase never ran."""
        return sorted(
            nodeid
            for nodeid, state in self.states.items()
            if state & RANK_MASK == PASSED and nodeid not in self.called
        )

    def record(self, prefix: str | None, not_run_by: str) -> dict[str, Any]:
        """What the witness writes as ``agentgate_outcomes``; ``prefix``: ``--junit-prefix``."""
        from _pytest.junitxml import bin_xml_escape, mangle_test_address

        counts = [0, 0, 0, 0]
        failing: list[list[str]] | None = []
        for nodeid, state in self.states.items():
            rank = state & RANK_MASK
            counts[rank] += 1
            if rank < FAILED or failing is None:
                continue
            if len(failing) >= MAX_WITNESSED_FAILURES:
                failing = None
                continue
            # As pytest's JUnit reporter names the test (_NodeReporter.record_testreport).
            names = mangle_test_address(nodeid)
            classnames = ([prefix] if prefix else []) + names[:-1]
            name = bin_xml_escape(names[-1])
            message, file = self.messages[nodeid]
            failing.append([".".join(classnames), name, OUTCOMES[rank], message, file])
        not_run = self.not_run()
        return {
            "counts": counts,
            "failing": failing,
            "not_run": len(not_run),
            "not_run_tests": not_run[:MAX_NOT_RUN_NAMED],
            "not_run_by": not_run_by if not_run else "",
        }


def _crash_line(report: pytest.TestReport) -> str:
    """The first line of what a failing report says, bounded."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(getattr(crash, "message", None) or report.longrepr or report.outcome)
    line = next((part.strip() for part in text.splitlines() if part.strip()), report.outcome)
    return line if len(line) <= 200 else line[:197] + "..."


def setup_only(config: pytest.Config) -> str:
    """The option that makes pytest run the tests' fixtures but not their bodies, and where it
    came from: "--setup-only in addopts (pyproject.toml)"; empty when neither is on."""
    from pytest_agentgate.pytest_plugin.start import PROJECT_CODE, option_sources

    for dest, spellings in SETUP_ONLY_OPTIONS.items():
        if not getattr(config.option, dest, False):
            continue
        for where, args in reversed(option_sources(config)):
            if any(arg in spellings for arg in args):
                return f"{spellings[0]} in {where}"
        return f"{spellings[0]} in {PROJECT_CODE}"
    return ""


class Witness:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.collected: int | None = None
        self.selected: int | None = None
        self.deselected = 0
        # The test functions collected, and those pytest's selection left with no case to
        # run (None: too many to keep).
        self._tests = Tests()
        self.deselected_tests: set[str] | None = set()
        self.collected_tests: set[str] | None = set()
        self.collect_errors = 0
        self.duplicates = 0
        self.xpassed: set[str] = set()
        self.outcomes = Outcomes()
        self.replaced: set[str] = set()
        self.sources: dict[str, str] = {}
        # The files and folders the run read outside the project (compiled.read_outside);
        # None when there were too many to keep.
        self.read: list[str] | None = []

    def _read(self, found: list[str] | None) -> None:
        if found is None or self.read is None:
            self.read = None
        else:
            self.read = sorted(set(self.read) | set(found))

    def _look_for_replaced(self, config: pytest.Config) -> None:
        from pytest_agentgate.pytest_plugin.tampering import replaced

        plugins = config.pluginmanager.get_plugins()
        # The test gate compares the files again after the run (agentgate_sources).
        self.replaced.update(replaced(plugins, str(config.rootpath), compared_after=True))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from pytest_agentgate.pytest_plugin.tampering import tests_replaced

        with untraced(str(session.config.rootpath)):
            self._look_for_replaced(session.config)
            self.replaced.update(tests_replaced(session.items, str(session.config.rootpath)))

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None, Any, None]:
        before = len(items)
        yield
        self.collected = (self.collected or 0) + before
        self.selected = (self.selected or 0) + len(items)
        ids = [item.nodeid for item in items]
        self.duplicates += len(ids) - len(set(ids))
        collected, deselected = self._tests.lists(
            items, only_selection=True, limit=MAX_RUN_LISTED_TESTS
        )
        self.collected_tests = _merged(self.collected_tests, collected)
        self.deselected_tests = _merged(self.deselected_tests, deselected)

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)
        self._tests.deselect(items, sys._getframe(1))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        from pytest_agentgate.pytest_plugin.tampering import look_as_it_runs

        look_as_it_runs(item, self.replaced, before=True)
        yield
        look_as_it_runs(item, self.replaced, before=False)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors += 1

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.outcomes.add(report)
        if report.when == "call":
            if report.passed and hasattr(report, "wasxfail"):
                self.xpassed.add(report.nodeid)
            else:
                self.xpassed.discard(report.nodeid)  # a rerun's outcome replaces it

    def pytest_configure(self, config: pytest.Config) -> None:
        self.local_plugins = local_plugins(config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """On the xdist controller: a worker's counts (every worker collects the same suite;
        the largest figures are kept, as a worker that crashed may have counted less)."""
        counts = from_worker(getattr(node, "workeroutput", {}).get(WORKER_KEY))
        if not isinstance(counts, dict):
            return
        found = counts.get("replaced")
        if isinstance(found, list):
            self.replaced.update(str(entry) for entry in found)
        sources = counts.get("sources")
        if isinstance(sources, dict):
            self.sources.update({str(k): str(v) for k, v in sources.items()})
        read = counts.get("read")
        self._read([str(p) for p in read] if isinstance(read, list) else None)
        for name in ("deselected_tests", "collected_tests"):
            tests = counts.get(name)
            found = [str(t) for t in tests] if isinstance(tests, list) else None
            setattr(self, name, _merged(getattr(self, name), found))
        for name in COUNTS:
            value = counts.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                setattr(self, name, max(getattr(self, name) or 0, value))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from pytest_agentgate.pytest_plugin.startup import one_look

        # The environment read once for every question below.
        with one_look(), untraced(str(session.config.rootpath)):
            self._finish(session)

    def _finish(self, session: pytest.Session) -> None:
        from _pytest.junitxml import xml_key

        from pytest_agentgate.pytest_plugin import compiled
        from pytest_agentgate.pytest_plugin.tampering import project_sources

        self._look_for_replaced(session.config)
        self.sources.update(project_sources(str(session.config.rootpath)))
        self._read(compiled.read_outside())
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: its counts go to the controller
            if self.collected is not None:
                counts: dict[str, Any] = {name: getattr(self, name) for name in COUNTS}
                counts["replaced"] = sorted(self.replaced)
                counts["sources"] = self.sources
                counts["read"] = self.read
                deselected, collected = self.deselected_tests, self.collected_tests
                counts["deselected_tests"] = None if deselected is None else sorted(deselected)
                counts["collected_tests"] = None if collected is None else sorted(collected)
                workeroutput[WORKER_KEY] = to_controller(counts)
            return
        xml = session.config.stash.get(xml_key, None)
        if xml is None:
            return
        xml.add_global_property("agentgate_run", self.run_id)
        record = self.outcomes.record(getattr(xml, "prefix", None), setup_only(session.config))
        xml.add_global_property("agentgate_outcomes", json.dumps(record))
        for name in getattr(self, "local_plugins", ()):
            xml.add_global_property("agentgate_local_plugin", name)
        for entry in sorted(self.replaced):
            xml.add_global_property("agentgate_replaced", entry)
        from pytest_agentgate.pytest_plugin.startup import Install, planted, planted_plugins

        plugins = session.config.pluginmanager.get_plugins()
        installs: list[Install] = []
        for code in planted() + planted_plugins(plugins, str(session.config.rootpath), installs):
            xml.add_global_property("agentgate_startup", json.dumps(code._asdict()))
        for install in installs:
            xml.add_global_property("agentgate_install", json.dumps(install._asdict()))
        if self.xpassed:
            xml.add_global_property("agentgate_xpassed", str(len(self.xpassed)))
        if self.sources:
            xml.add_global_property("agentgate_sources", json.dumps(self.sources, sort_keys=True))
        xml.add_global_property("agentgate_read", json.dumps(self.read))
        if self.collected is not None:
            xml.add_global_property("agentgate_collected", str(self.collected))
            xml.add_global_property("agentgate_deselected", str(self.deselected))
            xml.add_global_property("agentgate_selected", str(self.selected))
            xml.add_global_property("agentgate_collect_errors", str(self.collect_errors))
            xml.add_global_property("agentgate_duplicates", str(self.duplicates))
            for name, tests in (
                ("agentgate_deselected_tests", self.deselected_tests),
                ("agentgate_collected_tests", self.collected_tests),
            ):
                xml.add_global_property(name, json.dumps(None if tests is None else sorted(tests)))


def _merged(kept: set[str] | None, found: list[str] | None) -> set[str] | None:
    """Test functions ``kept`` with ``found`` added; None when either is not known, or past
    ``MAX_RUN_LISTED_TESTS``."""
    if kept is None or found is None:
        return None
    kept.update(found)
    return kept if len(kept) <= MAX_RUN_LISTED_TESTS else None


def to_controller(value: object) -> str:
    """``value`` as an xdist worker hands it to the controller: as JSON text, whose escapes
    carry a path that is not UTF-8 (lone surrogates), which execnet cannot send: the worker
    went down, and its counts and its coverage data were lost with it."""
    return json.dumps(value)


def from_worker(sent: object) -> Any:
    """What :func:`to_controller` sent; None when it is not what a worker sends."""
    if not isinstance(sent, str):
        return None
    try:
        return json.loads(sent)
    except (ValueError, RecursionError):
        return None


@contextlib.contextmanager
def untraced(project: str) -> Iterator[None]:
    """The witness's own looks, out of the tracer the tests run under (coverage.py's): its C
    tracer is called for every line of every frame, measured or not, and a look goes through
    the test tools' ten thousand functions; on examples/invoice, tracing the two looks cost
    more than the rest of the witness (1.3 of 5.1 billion instructions for the test command).
    What runs meanwhile is agentgate's code, so the project's measurement loses nothing, unless
    the project is agentgate (its own gate measures this code). The same tracer is put back:
    coverage.py's, or one the tests set, which the witness judges as the tests run."""
    tracer = sys.gettrace()
    own = os.path.realpath(project) + os.sep
    if tracer is None or os.path.realpath(__file__).startswith(own):
        yield
        return
    sys.settrace(None)
    try:
        yield
    finally:
        sys.settrace(tracer)


def local_plugins(config: pytest.Config) -> list[str]:
    """The pytest plugins loaded from a distribution found only because ``python -m pytest``
    put the current folder first on ``sys.path`` (see the module's docstring)."""
    from pytest_agentgate.pytest_plugin.start import START_KEY

    start = config.stash.get(START_KEY, ())
    if not start or not start[0]:
        return []
    first = os.path.realpath(start[0])
    if first in {os.path.realpath(p) for p in start[1:] if p}:
        return []  # on sys.path by installation too (a .pth of a legacy develop install)
    later = [p for p in start[1:] if p]
    found = []
    for plugin, dist in config.pluginmanager.list_plugin_distinfo():
        where = getattr(dist, "_path", None)
        if where is None or os.path.realpath(os.path.dirname(str(where))) != first:
            continue
        name = dist.metadata["Name"] or os.path.basename(str(where))
        if _installed_alike(name, dist, later):
            continue
        found.append(
            f"{config.pluginmanager.get_name(plugin) or name} ({os.path.basename(str(where))})"
        )
    return sorted(set(found))


def _installed_alike(name: str, dist: Any, path: list[str]) -> bool:
    """Whether a distribution of that name with the same pytest plugins is on ``path``."""
    from importlib import metadata

    def plugins(of: Any) -> set[tuple[str, str]]:
        return {(e.name, e.value) for e in of.entry_points if e.group == "pytest11"}

    for other in metadata.distributions(name=name, path=path):
        if plugins(other) == plugins(dist):
            return True
    return False
