"""The built-in gate kinds and report formats, registered like any third-party plugin."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_agentgate.gates.base import GateKind
from pytest_agentgate.hookspecs import hookimpl
from pytest_agentgate.registry import CoverageFormat, LintFormat
from pytest_agentgate.reports.model import CoverageReport


@hookimpl
def agentgate_gate_kinds() -> Sequence[GateKind]:
    from pytest_agentgate.gates.build import BuildGate
    from pytest_agentgate.gates.coverage import CoverageGate
    from pytest_agentgate.gates.custom import CustomGate
    from pytest_agentgate.gates.lint import LintGate
    from pytest_agentgate.gates.test import TestGate

    return [BuildGate(), LintGate(), TestGate(), CoverageGate(), CustomGate()]


@hookimpl
def agentgate_lint_formats() -> Sequence[LintFormat]:
    from pytest_agentgate.reports.lint import LINT_FORMATS

    return [LintFormat(name, parse) for name, parse in LINT_FORMATS.items()]


@hookimpl
def agentgate_coverage_formats() -> Sequence[CoverageFormat]:
    from pytest_agentgate.reports.coverage import COVERAGE_ALIASES, COVERAGE_FORMATS

    def reader(fmt: str):  # type: ignore[no-untyped-def]
        def read(path: Path, root: Path) -> CoverageReport:
            from pytest_agentgate.reports.coverage import read_coverage

            return read_coverage(path, format=fmt, root=root)

        return read

    return [CoverageFormat(name, reader(name)) for name in (*COVERAGE_FORMATS, *COVERAGE_ALIASES)]
