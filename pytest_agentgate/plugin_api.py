"""The published plugin API: the hooks a third-party plugin implements, and the types it needs.

A plugin is a module registered in the ``agentgate`` entry-point group, exactly as the built-ins
are (``pytest_agentgate.builtin``)::

    [project.entry-points.agentgate]
    mytool = "my_package.agentgate_plugin"

It implements one or more hooks with ``@hookimpl``. A function marked ``@hookimpl`` whose name is
not one of the hooks below is an error when the plugins are loaded: a misspelt hook never
silently does nothing. How to write a gate kind or a report format: docs/ARCHITECTURE.md.

Everything a plugin should import from agentgate is importable from this module; anything else
is internal and may change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    REPORT_OPTIONS,
    SHARD_OPTIONS,
    CollectContext,
    Evidence,
    GateKind,
    Option,
)
from pytest_agentgate.gates.collect import read_report_text, report_files
from pytest_agentgate.gates.judging import (
    command_problem,
    exit_disagrees,
    new_result,
    pct,
    skipped,
    unreadable,
)
from pytest_agentgate.process import CommandResult
from pytest_agentgate.reports.model import (
    CoverageReport,
    FileCoverage,
    LintReport,
    Ratio,
    ReportError,
)
from pytest_agentgate.verdict import Finding, GateResult, GateStatus, Severity

PROJECT = "agentgate"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True)
class LintFormat:
    """A lint report format: its name (the gate's ``format:``) and its parser."""

    name: str
    parse: Callable[[str, str], LintReport]  # (text, source) -> LintReport
    # A few words on how to produce the report, for error messages and `agentgate explain`.
    how: str = ""


@dataclass(frozen=True)
class CoverageFormat:
    """A coverage report format: its name and its reader."""

    name: str
    read: Callable[[Path, Path], CoverageReport]  # (path, project root) -> CoverageReport
    how: str = ""


@hookspec
def agentgate_gate_kinds() -> Sequence[GateKind[Any]]:  # type: ignore[empty-body]
    """Return gate kinds: objects with ``name``, ``options``, ``stdout_report``,
    ``collect(context) -> Evidence`` (all I/O) and ``judge(config, evidence) -> GateResult``
    (pure)."""


@hookspec
def agentgate_lint_formats() -> Sequence[LintFormat]:  # type: ignore[empty-body]
    """Return lint report formats: a name and ``parse(text, source) -> LintReport``."""


@hookspec
def agentgate_coverage_formats() -> Sequence[CoverageFormat]:  # type: ignore[empty-body]
    """Return coverage report formats: a name and ``read(path, root) -> CoverageReport``."""


__all__ = [
    "COMMON_OPTIONS",
    "PROJECT",
    "REPORT_OPTIONS",
    "SHARD_OPTIONS",
    "CollectContext",
    "CommandResult",
    "CoverageFormat",
    "CoverageReport",
    "Evidence",
    "FileCoverage",
    "Finding",
    "GateConfig",
    "GateKind",
    "GateResult",
    "GateStatus",
    "LintFormat",
    "LintReport",
    "Option",
    "Ratio",
    "ReportError",
    "Severity",
    "command_problem",
    "exit_disagrees",
    "hookimpl",
    "hookspec",
    "new_result",
    "pct",
    "read_report_text",
    "report_files",
    "skipped",
    "unreadable",
]
