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
        if not report.skipped or raised is None or not _a_skip(raised.value):
            return  # an xfail mark's real failure is no skip the code raised
        from pytest_agentgate.reports.model import SKIPPED_AT as PROPERTY  # only when one skips

        if any(name == PROPERTY for name, _ in item.user_properties):
            return
        where = self.raised_at(raised)
        if where is not None:
            item.user_properties.append((PROPERTY, where))
            report.user_properties.append((PROPERTY, where))

    def raised_at(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
        """``path:line`` where the project's code raised the skip: the innermost frame of
        ``excinfo`` past pytest's and unittest's own skip helpers (``pytest.skip()``,
        ``self.skipTest()``) and the standard library's code (red team 37: a ``SkipTest``
        handed to a ``concurrent.futures.Future`` and raised by its ``result()``), if that
        frame is the project's. A skip an installed tool raised itself (pytest, for a mark)
        and that only passed through the project's code (a hook wrapper's ``yield``) has
        none."""
        for entry in reversed(excinfo.traceback):
            path = Path(str(entry.path))
            if path.name == "outcomes.py" and path.parent.name == "_pytest":
                continue
            if path.name == "case.py" and path.parent.name == "unittest":
                continue
            if not path.is_absolute() or _ENVIRONMENT_PARTS.intersection(path.parts):
                return None
            if any(env in path.parents for env in self.environment if env != self.root):
                continue  # the standard library's: whoever called it raised the skip
            return f"{path}:{entry.lineno + 1}" if self.root in path.parents else None
        return None


def _a_skip(error: BaseException) -> bool:
    """A skip or xfail raised as one (``pytest.skip``, ``pytest.xfail``, ``SkipTest``)."""
    import unittest

    return isinstance(error, (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest))
