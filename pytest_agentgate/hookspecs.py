"""Extension points. Third-party gate kinds and report formats register through the
``agentgate`` entry-point group, exactly as the built-ins do (see ``builtin.py``)::

    [project.entry-points.agentgate]
    mytool = "my_package.agentgate_plugin"

and implement one or both hooks with ``@pytest_agentgate.hookimpl``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pytest_agentgate.gates.base import GateKind
    from pytest_agentgate.registry import CoverageFormat, LintFormat

PROJECT = "agentgate"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def agentgate_gate_kinds() -> Sequence[GateKind]:  # type: ignore[empty-body]
    """Return gate kinds (objects with ``name``, ``options``, ``stdout_report``, ``judge``)."""


@hookspec
def agentgate_lint_formats() -> Sequence[LintFormat]:  # type: ignore[empty-body]
    """Return lint report formats: a name and ``parse(text, source) -> LintReport``."""


@hookspec
def agentgate_coverage_formats() -> Sequence[CoverageFormat]:  # type: ignore[empty-body]
    """Return coverage report formats: a name and ``read(path, root) -> CoverageReport``."""
