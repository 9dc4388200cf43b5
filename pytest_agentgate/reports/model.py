"""Evidence types produced by the parsers and consumed by the gates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.verdict import Finding

Outcome = Literal["passed", "failed", "error", "skipped"]
# The coverage metrics, in the order every output lists them.
METRICS: tuple[str, ...] = ("lines", "branches", "functions", "statements")


class ReportError(AgentgateError):
    """A report that cannot be read. The message names the file and says what to do."""

    def __init__(self, path: str, problem: str, hint: str = "") -> None:
        self.path = path
        self.problem = problem
        self.hint = hint
        text = f"{path}: {problem}"
        if hint:
            text += f" ({hint})"
        super().__init__(text)


@dataclass
class LintReport:
    """Findings of one lint tool run. Severity is already normalised to error/warning."""

    tool: str
    source: str  # file path, or "<stdout of COMMAND>"
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")


@dataclass(frozen=True)
class TestCaseResult:
    """One test identity after reruns are folded: its last outcome."""

    name: str
    classname: str
    outcome: Outcome
    file: str | None = None
    line: int | None = None
    message: str | None = None  # first line of the failure/error/skip message or text
    flaky: bool = False
    # A skipped test: where the project's code raised its skip, as ``/abs/path.py:LINE``
    # (agentgate's pytest plugin, ``pytest_plugin/skips.py``).
    raised_at: str | None = None

    @property
    def display_name(self) -> str:
        # jest-junit repeats the suite in both attributes; pytest's are module and function.
        if self.classname and not self.name.startswith(self.classname):
            return f"{self.classname}::{self.name}"
        return self.name


# The skipped tests a run keeps by name (the counts count them all).
MAX_SKIPPED_KEPT = 500
# The test case property agentgate's pytest plugin gives a skipped test: where the project's
# code raised its skip (pytest_plugin/skips.py).
SKIPPED_AT = "agentgate_skipped_at"


@dataclass
class TestRun:
    """Counts over every ``<testcase>`` of every file read, duplicates folded."""

    files: list[str] = field(default_factory=list)
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    flaky: int = 0
    # pytest's xfailed tests (counted in ``skipped`` too) and its xpassed ones: marked xfail,
    # passed anyway, not strict (counted in ``passed`` too), for counts that read like pytest's.
    xfailed: int = 0
    xpassed: int = 0
    # Failed and errored tests in report order; flaky tests (passed after an earlier failure).
    failures: list[TestCaseResult] = field(default_factory=list)
    flaky_tests: list[TestCaseResult] = field(default_factory=list)
    # Tests skipped or xfailed in this run, their reason as the message (the first
    # MAX_SKIPPED_KEPT): the integrity gate asks whether the change skipped one it edited.
    skipped_tests: list[TestCaseResult] = field(default_factory=list)
    # Why the run covers only part of the suite (-k, --lf, -x, ...), when the front door can
    # tell (the pytest plugin); empty for a whole run and for reports read from files.
    partial: list[str] = field(default_factory=list)
    # The reports' ``agentgate_*`` properties (what agentgate's pytest plugin witnessed of the
    # run that wrote them: its run id, the items collected and selected), name -> one value per
    # file that has it.
    properties: dict[str, list[str]] = field(default_factory=dict)

    @property
    def executed(self) -> int:
        return self.passed + self.failed + self.errors


@dataclass(frozen=True)
class Ratio:
    """covered of total. The percentage is computed here, once, unrounded."""

    covered: int
    total: int

    @property
    def percent(self) -> float:
        # Nothing to cover is fully covered, as coverage.py and istanbul both report it.
        return 100.0 if self.total == 0 else self.covered * 100.0 / self.total

    def __add__(self, other: Ratio) -> Ratio:
        return Ratio(self.covered + other.covered, self.total + other.total)


@dataclass
class CoverageDetail:
    """Per-line evidence of one file, kept by the formats that have it (coverage.py JSON and data,
    Cobertura, lcov) so that shards can be merged line by line (``merge_coverage``)."""

    lines: dict[int, bool] = field(default_factory=dict)  # line number -> ran at least once
    # Branch identity (lcov "line,block,branch", coverage.py arc "a->b") -> taken at least once.
    branches: dict[str, bool] | None = None
    # Cobertura records only counts per line: line -> (covered, total) branch outcomes.
    line_branches: dict[int, tuple[int, int]] | None = None
    functions: dict[str, bool] | None = None  # function identity -> ran at least once
    # lcov only: lines that have no ``DA`` record but that a ``BRDA`` or ``FN`` record marks
    # (diff-cover counts them as measured lines), and ``DA`` lines with zero hits whose branches
    # ran. Patch coverage reads them over ``lines``; the line totals never do.
    implied_lines: dict[int, bool] | None = None

    def line_hits(self) -> dict[int, bool]:
        """Every line patch coverage counts as measured -> whether it ran."""
        if not self.implied_lines:
            return self.lines
        return {**self.lines, **self.implied_lines}


@dataclass
class FileCoverage:
    path: str
    lines: Ratio | None = None
    missing_lines: list[int] = field(default_factory=list)
    detail: CoverageDetail | None = None
    # Every line the report measures (an executable line) -> whether the tests ran it; None when
    # the format has no line numbers (istanbul's summary). Patch coverage is computed from it.
    # Usually the same dict as ``detail.lines`` (shared, not copied).
    line_hits: dict[int, bool] | None = None

    @property
    def missed(self) -> int:
        if self.lines is not None:
            return self.lines.total - self.lines.covered
        return len(self.missing_lines)


@dataclass
class CoverageReport:
    """Totals per metric; None where the format does not measure that metric."""

    source: str
    format: str
    lines: Ratio | None = None
    branches: Ratio | None = None
    functions: Ratio | None = None
    statements: Ratio | None = None
    files: list[FileCoverage] = field(default_factory=list)
    # What the reader had to work around (e.g. measured files whose source is gone); for humans.
    notes: list[str] = field(default_factory=list)

    def metric(self, name: str) -> Ratio | None:
        value = getattr(self, name)
        assert value is None or isinstance(value, Ratio)
        return value
