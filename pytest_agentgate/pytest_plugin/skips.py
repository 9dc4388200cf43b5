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
whether that line is one the change adds (``gates.integrity.with_skipped_tests``). A skip
raised in installed code that is no test tool and no plugin pytest loaded, or in code outside
the project, is its caller's: the walk goes on outward (red team 52: a library installed
mid-task, called from a new conftest fixture, that skipped the failing test).
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
    def __init__(self, root: Path, plugins: Any = None) -> None:
        self.root = root.resolve()
        self.environment = {Path(p).resolve() for p in {sys.prefix, sys.base_prefix}}
        self.plugins = plugins  # pytest's plugin manager: whose code raises skips of its own
        self._tools: frozenset[str] | None = None

    def tools(self) -> frozenset[str]:
        """The top-level names of the installed code that skips tests of its own accord: the
        test tools, and the packages of the plugins pytest loaded (pytest-django's database
        fixtures skip where there is none)."""
        if self._tools is None:
            from pytest_agentgate.testcode import TEST_TOOLS

            names = set(TEST_TOOLS)
            for plugin in self.plugins.get_plugins() if self.plugins is not None else ():
                file = getattr(plugin, "__file__", None)  # a module's; else its class's
                if file is None:
                    file = getattr(sys.modules.get(type(plugin).__module__), "__file__", None)
                found = _installed_name(file)
                if found is not None:  # a conftest is the project's, never a tool
                    names.add(found)
            self._tools = frozenset(names)
        return self._tools

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
            if not path.is_absolute():
                return None
            if _ENVIRONMENT_PARTS.intersection(path.parts):
                if _installed_name(str(path)) in {None, *self.tools()}:
                    return None  # a test tool's or a plugin's own skip
                continue  # another library's (red team 52): whoever called it raised it
            if any(env in path.parents for env in self.environment if env != self.root):
                continue  # the standard library's: whoever called it raised the skip
            if self.root in path.parents:
                return f"{path}:{entry.lineno + 1}"
            # Code outside the project, put on sys.path (red team 52): its caller raised it.
        return None


def _installed_name(file: Any) -> str | None:
    """The top-level name of the installed code ``file`` is part of (the folder or module
    right under ``site-packages``), or None for a file elsewhere."""
    if not isinstance(file, str):
        return None
    parts = Path(file).parts
    folders = [i for i, part in enumerate(parts) if part in _ENVIRONMENT_PARTS]
    if not folders or folders[-1] + 1 >= len(parts):
        return None
    return parts[folders[-1] + 1].removesuffix(".py")


def _a_skip(error: BaseException) -> bool:
    """A skip or xfail raised as one (``pytest.skip``, ``pytest.xfail``, ``SkipTest``)."""
    import unittest

    return isinstance(error, (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest))
