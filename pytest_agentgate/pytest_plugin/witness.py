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
  ``agentgate_collect_errors``: the collectors that failed (a test file that does not import);
- ``agentgate_xpassed``: the tests marked xfail that passed anyway (not strict), which JUnit
  cannot tell from any other pass.

Under pytest-xdist the items are collected on the workers, each the whole suite: each worker
hands its counts to the controller (xdist's ``workeroutput``), which records them, once.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import pytest

PLUGIN_NAME = "agentgate-witness"
# The key of a worker's counts in xdist's ``workeroutput``.
WORKER_KEY = "agentgate_witness"
COUNTS = ("collected", "deselected", "selected", "collect_errors")


class Witness:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.collected: int | None = None
        self.selected: int | None = None
        self.deselected = 0
        self.collect_errors = 0
        self.xpassed: set[str] = set()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None, Any, None]:
        before = len(items)
        yield
        self.collected = (self.collected or 0) + before
        self.selected = (self.selected or 0) + len(items)

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors += 1

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            if report.passed and hasattr(report, "wasxfail"):
                self.xpassed.add(report.nodeid)
            else:
                self.xpassed.discard(report.nodeid)  # a rerun's outcome replaces it

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """On the xdist controller: a worker's counts (every worker collects the same suite;
        the largest figures are kept, as a worker that crashed may have counted less)."""
        counts = getattr(node, "workeroutput", {}).get(WORKER_KEY)
        if not isinstance(counts, dict):
            return
        for name in COUNTS:
            value = counts.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                setattr(self, name, max(getattr(self, name) or 0, value))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from _pytest.junitxml import xml_key

        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: its counts go to the controller
            if self.collected is not None:
                workeroutput[WORKER_KEY] = {name: getattr(self, name) for name in COUNTS}
            return
        xml = session.config.stash.get(xml_key, None)
        if xml is None:
            return
        xml.add_global_property("agentgate_run", self.run_id)
        if self.xpassed:
            xml.add_global_property("agentgate_xpassed", str(len(self.xpassed)))
        if self.collected is not None:
            xml.add_global_property("agentgate_collected", str(self.collected))
            xml.add_global_property("agentgate_deselected", str(self.deselected))
            xml.add_global_property("agentgate_selected", str(self.selected))
            xml.add_global_property("agentgate_collect_errors", str(self.collect_errors))
