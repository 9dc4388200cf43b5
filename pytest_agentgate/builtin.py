"""The built-in gate kinds and report formats, registered like any third-party plugin."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_agentgate.plugin_api import CoverageFormat, GateKind, LintFormat, hookimpl
from pytest_agentgate.reports.hints import COVERAGE_HINTS, LINT_COMMANDS
from pytest_agentgate.reports.model import CoverageReport


@hookimpl
def agentgate_gate_kinds() -> Sequence[GateKind[Any]]:
    from pytest_agentgate.gates.build import BuildGate
    from pytest_agentgate.gates.coverage import CoverageGate
    from pytest_agentgate.gates.custom import CustomGate
    from pytest_agentgate.gates.integrity import IntegrityGate
    from pytest_agentgate.gates.lint import LintGate
    from pytest_agentgate.gates.session import SessionGate
    from pytest_agentgate.gates.test import SuiteGate

    return [
        BuildGate(),
        LintGate(),
        SuiteGate(),
        CoverageGate(),
        CustomGate(),
        IntegrityGate(),
        SessionGate(),
    ]


@hookimpl
def agentgate_lint_formats() -> Sequence[LintFormat]:
    from pytest_agentgate.reports.lint import LINT_FORMATS

    return [
        LintFormat(name, parse, LINT_COMMANDS.get(name, "")) for name, parse in LINT_FORMATS.items()
    ]


def _reader(fmt: str) -> Callable[[Path, Path], CoverageReport]:
    def read(path: Path, root: Path) -> CoverageReport:
        from pytest_agentgate.reports.coverage import read_coverage

        report: CoverageReport = read_coverage(path, format=fmt, root=root)
        return report

    return read


@hookimpl
def agentgate_coverage_formats() -> Sequence[CoverageFormat]:
    from pytest_agentgate.reports.coverage import COVERAGE_ALIASES, COVERAGE_FORMATS

    names = (*COVERAGE_FORMATS, *COVERAGE_ALIASES)
    return [
        CoverageFormat(
            name, _reader(name), COVERAGE_HINTS.get(COVERAGE_ALIASES.get(name, name), "")
        )
        for name in names
    ]
