"""Where the project's code skipped a test: for the integrity gate's ``skip-added``.

A skip or xfail the source of the test does not show can still be the change's: a conftest
hook that raises ``pytest.skip.Exception`` or calls ``pytest.xfail()`` for the failing test,
the code under test raising ``unittest.SkipTest``. pytest's report names where a skip was
raised only for a plain ``pytest.skip`` (JUnit's ``<skipped>`` text), and not for an xfail or
a ``SkipTest``, which pytest re-raises from its own code. In a run agentgate gates, each test
skipped or xfailed by an exception gets the property ``agentgate_skipped_at``: the innermost
frame of the exception's traceback in a file of the project (under pytest's rootdir, outside
the interpreter's environment), as ``/abs/path.py:LINE``. JUnit writes it in the test case's
``<properties>``; under pytest-xdist it travels with the report. The integrity gate asks
whether that line is one the change adds (``gates.integrity.with_skipped_tests``).
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

PLUGIN_NAME = "agentgate-skips"
_ENVIRONMENT_PARTS = frozenset({"site-packages", "dist-packages"})


class SkipWitness:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.environment = {Path(p).resolve() for p in {sys.prefix, sys.base_prefix}}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        raised = call.excinfo  # before pytest's unittest plugin re-raises a SkipTest as its own
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        if not report.skipped or raised is None:
            return
        from pytest_agentgate.reports.model import SKIPPED_AT as PROPERTY  # only when one skips

        if any(name == PROPERTY for name, _ in item.user_properties):
            return
        where = self.raised_at(raised)
        if where is not None:
            item.user_properties.append((PROPERTY, where))
            report.user_properties.append((PROPERTY, where))

    def raised_at(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
        """``path:line`` of the innermost frame of ``excinfo`` in the project's own files."""
        for entry in reversed(excinfo.traceback):
            path = Path(str(entry.path))
            if not path.is_absolute():
                continue  # <string>, <frozen ...>
            if _ENVIRONMENT_PARTS.intersection(path.parts) or any(
                env in path.parents for env in self.environment if env != self.root
            ):
                continue
            if self.root in path.parents:
                return f"{path}:{entry.lineno + 1}"
        return None
