"""The coverage gate: lines, branches, functions, statements from covered/total counts, and
patch coverage: the share of the lines the change adds or modifies that the tests ran
(:mod:`pytest_agentgate.gates.patch`)."""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    REPORT_OPTIONS,
    SHARD_OPTIONS,
    CollectContext,
    Evidence,
    Option,
)
from pytest_agentgate.gates.changed import ChangedFiles, NoBase
from pytest_agentgate.gates.collect import report_files
from pytest_agentgate.gates.judging import (
    command_problem,
    count,
    exit_disagrees,
    needed_to_reach,
    new_result,
    pct,
    unreadable,
)
from pytest_agentgate.gates.patch import (
    PatchCoverage,
    add_unreported,
    folders_measured,
    imported_unmeasured,
    in_measured_folder,
    measure_patch,
)
from pytest_agentgate.profiles import ProfileDefault
from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.hints import missing_hint
from pytest_agentgate.reports.model import METRICS, CoverageReport, FileCoverage, ReportError
from pytest_agentgate.texts import read_regular, read_regular_text
from pytest_agentgate.verdict import Finding, GateResult

# How to produce each metric when the report lacks it.
HOW_TO_MEASURE = {
    "lines": "write a coverage report (coverage.py: `coverage json`; istanbul: json-summary)",
    "branches": (
        "turn on branch coverage (coverage.py: `coverage run --branch`, pytest-cov: "
        "`--cov-branch`, or `[tool.coverage.run] branch = true` for both), or set "
        "`branches: null` to gate without it (under a profile that does not require it)"
    ),
    "functions": (
        "use a format with function data (coverage.py >= 7.5 JSON or data file, istanbul), "
        "or set `functions: null`"
    ),
    "statements": "use a format with statement data, or set `statements: null`",
}
MAX_FILE_FINDINGS = 10
PATCH_MIN_LINES = 5
# Coverage a door measured itself (the pytest session) reaches the judge without the change.
DOOR_PATCH = PatchCoverage.without_base(
    "this door measured coverage without looking at the change",
    "gate with `agentgate verify`, which measures patch coverage against the base",
)


@dataclass
class CoverageEvidence(Evidence):
    """The coverage measured by this run: read from reports, or handed in by the pytest door."""

    report: CoverageReport | None = None
    # "report" when read from files; "data" when a door measured it in-process (pytest-cov).
    measured_as: str = "report"
    # What the tests covered of the change; None when no collector looked at the change.
    patch: PatchCoverage | None = None


def parallel_data(context: CollectContext) -> CollectContext:
    """coverage.py with ``parallel = true`` suffixes its data file
    (``.coverage.<host>.pid<N>.<random>``). When a configured data file is not there, the
    suffixed ones beside it that this run wrote are read in its place (combined); those of
    earlier runs never are."""
    cfg = context.config
    data = cfg.format == "coverage-data" or (
        cfg.format is None and all(os.path.basename(r).startswith(".coverage") for r in cfg.reports)
    )
    if not data:
        return context
    reports: list[str] = []
    for pattern in cfg.reports:
        full = pattern if os.path.isabs(pattern) else str(context.root / pattern)
        if glob.has_magic(pattern) or os.path.lexists(full):
            reports.append(pattern)
            continue
        siblings = sorted(p for p in glob.glob(glob.escape(full) + ".*") if os.path.isfile(p))
        if not siblings:
            reports.append(pattern)
            continue
        fresh = siblings
        if context.ran_commands:
            fresh = [p for p in siblings if os.path.getmtime(p) >= context.started_at - 1]
        if not fresh:
            raise ReportError(
                pattern,
                f"not found, and the {len(siblings)} parallel data files beside it "
                f"({os.path.basename(full)}.*) were not written by this run",
                "the test command probably failed before coverage.py saved its data; "
                "delete the old files, or run `coverage combine` in the test command",
            )
        reports.extend(os.path.relpath(p, context.root) for p in fresh)
    if reports == cfg.reports:
        return context
    return dataclasses.replace(context, config=dataclasses.replace(cfg, reports=reports))


def statement_lines(path: Path) -> set[int] | None:
    """The lines where the statements of a Python file start (docstrings left out, as
    coverage.py leaves them out); None when it cannot be read or parsed."""
    import ast

    from pytest_agentgate import syntax

    try:
        tree = syntax.parse(read_regular(path))
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
    lines = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring, or a bare constant: not a statement coverage counts
        lines.add(node.lineno)
    return lines


class CoverageGate:
    name = "coverage"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        *REPORT_OPTIONS,
        *SHARD_OPTIONS,
        *(Option(m, "percent", f"minimum {m} coverage, %", threshold=True) for m in METRICS),
        Option(
            "patch",
            "percent",
            "minimum coverage of the lines the change adds or modifies, %",
            threshold=True,
        ),
        Option(
            "patch_min_lines",
            "int",
            f"below this many changed measurable lines, patch coverage is reported, never "
            f"failing (default {PATCH_MIN_LINES})",
        ),
    )
    stdout_report = False

    def prepare(self, config: GateConfig, root: Path) -> None:
        """While the tests run: start coverage.py's reporter if the report is its data file."""
        data = config.format == "coverage-data" or (
            config.format is None
            and any(os.path.basename(r.rstrip("/")).startswith(".coverage") for r in config.reports)
        )
        if data:
            from pytest_agentgate.reports.coverage.coveragepy import warm

            warm(root)

    def collect(self, context: CollectContext) -> CoverageEvidence:
        evidence = CoverageEvidence(context.root, command=context.result)
        cfg = context.config
        try:
            if not cfg.reports:
                raise ReportError("coverage", "no coverage report configured", "set `report:`")
            how = missing_hint(cfg.reports[0], cfg.format)
            context = parallel_data(context)
            files = report_files(
                context, "coverage report", f"the test command must write it ({how})"
            )
            evidence.report = context.registry.read_coverage_many(files, cfg.format, context.root)
        except ReportError as exc:
            evidence.error = exc
            return evidence
        return self.complete(context, evidence)

    def complete(self, context: CollectContext, evidence: CoverageEvidence) -> CoverageEvidence:
        """The patch coverage of the change in the evidence's report, when the gate has a patch
        threshold: for the report read here, and for the data a door measured itself (the
        pytest session) and hands in without looking at the change."""
        if evidence.report is None or evidence.patch is not None:
            return evidence
        if context.config.thresholds.get("patch") is not None:
            changed = ChangedFiles.of(context.change, context.root)
            evidence.patch = patch = measure_patch(evidence.report, changed)
            if patch.unmeasured and not isinstance(changed, NoBase):
                folders = folders_measured(evidence.report, changed)
                statements = {
                    path: lines
                    for path, _ in patch.unmeasured
                    if in_measured_folder(path, folders)
                    and not (context.root / path).with_name("__init__.py").exists()
                    and (lines := statement_lines(context.root / path)) is not None
                }
                add_unreported(patch, changed, statements)
            if patch.unmeasured and patch.files:
                texts = {}
                for measured in patch.files:
                    with contextlib.suppress(OSError, UnicodeDecodeError):
                        texts[measured.path] = read_regular_text(context.root / measured.path)
                omitted = _coverage_omit(context.root)
                patch.imported = [
                    (path, importer)
                    for path, importer in imported_unmeasured(patch, texts)
                    if not _is_omitted(context.root / path, omitted, context.root)
                ]
        return evidence

    def judge(self, config: GateConfig, evidence: CoverageEvidence) -> GateResult:
        report = evidence.report
        if report is None:
            error = evidence.error or ReportError("coverage", "no coverage data")
            summary = f"no usable coverage {evidence.measured_as}"
            return unreadable(config, evidence, summary, error, dict.fromkeys((*METRICS, "patch")))
        problem = command_problem(config, evidence)
        actual: dict[str, float | None] = {}
        parts: list[str] = []
        failed_metrics: list[str] = []
        notes: list[str] = []
        problems: list[str] = [problem] if problem else []
        lines = report.metric("lines")
        nothing_measured = lines is None or lines.total == 0
        for metric in METRICS:
            ratio = report.metric(metric)
            threshold = config.thresholds.get(metric)
            if ratio is not None and ratio.total == 0:
                # 0 of 0 is not 100%: it is nothing measured. A report that measures lines but
                # has no branches (or functions) to measure is no reason to fail, and no figure.
                actual[metric] = None
                if threshold is None or not nothing_measured:
                    parts.append(f"{metric}: none to measure")
                    continue
                failed_metrics.append(metric)
                parts.append(f"{metric} not measured: 0 of 0 (need {pct(threshold)})")
                problems.append(
                    f"{report.source}: the report measures no {metric} (0 of 0), so nothing was "
                    "verified: did the tests import the code under test? " + HOW_TO_MEASURE[metric]
                )
                continue
            actual[metric] = None if ratio is None else ratio.percent
            if threshold is None:
                if ratio is not None:
                    parts.append(f"{metric} {pct(ratio.percent)}")
                continue
            if ratio is None:
                failed_metrics.append(metric)
                parts.append(f"{metric} not measured (need {pct(threshold)})")
                problems.append(
                    f"{report.source}: {metric} coverage is not in this report; "
                    + HOW_TO_MEASURE[metric]
                )
                continue
            parts.append(f"{metric} {pct(ratio.percent, threshold)} (need {pct(threshold)})")
            if ratio.percent < threshold:
                failed_metrics.append(metric)
                more = needed_to_reach(threshold, ratio.covered, ratio.total)
                notes.append(
                    f"{metric}: {pct(ratio.percent, threshold)} < {pct(threshold)}: "
                    f"cover {more} more of {ratio.total} {metric} ({ratio.covered} covered now)"
                )
        patch_findings = _judge_patch(
            config, evidence, actual, parts, failed_metrics, notes, problems
        )
        if not failed_metrics and not problem and (msg := exit_disagrees(config, evidence)):
            # The gate's own command (`coverage json`, a fail-under check) failed: a report that
            # looks fine does not outweigh it.
            problems.append(msg)
        status: Literal["pass", "fail"] = "fail" if failed_metrics or problems else "pass"
        result = new_result(
            config, evidence, status, ", ".join(parts) or "no coverage thresholds set"
        )
        result.actual = actual
        result.problems = problems
        result.notes = notes + report.notes
        if patch_findings:
            result.findings = patch_findings
        if any(m != "patch" for m in failed_metrics):
            result.findings += _worst_files(report.files, evidence)
        return result


def _judge_patch(
    config: GateConfig,
    evidence: CoverageEvidence,
    actual: dict[str, float | None],
    parts: list[str],
    failed: list[str],
    notes: list[str],
    problems: list[str],
) -> list[Finding]:
    """Patch coverage against ``patch``; the findings (uncovered new lines) when it fails.

    A profile's default ``patch`` applies only when there is a change to measure; a ``patch`` the
    user wrote fails when it cannot be measured, as every other threshold does.
    """
    threshold = config.thresholds.get("patch")
    patch = evidence.patch
    if patch is None:
        patch = DOOR_PATCH if threshold is not None else PatchCoverage()
    ratio = patch.ratio
    # No changed line is measured (a change to docs, tests or comments): nothing to judge.
    actual["patch"] = None if ratio is None or ratio.total == 0 else ratio.percent
    if ratio is not None and patch.unmeasured:
        lines = sum(n for _, n in patch.unmeasured)
        shown = ", ".join(p for p, _ in patch.unmeasured[:5])
        more = len(patch.unmeasured) - 5
        files = count(len(patch.unmeasured), "file")
        notes.append(
            f"patch coverage: {count(lines, 'changed line')} in {files} "
            f"the coverage report does not measure, not counted: {shown}"
            + (f" and {more} more" if more > 0 else "")
            + " (do the tests import them? coverage.py reports files no test imports only "
            "with `source` / `--cov=PACKAGE`)"
        )
    if threshold is None:
        if ratio is not None and ratio.total:
            parts.append(f"patch {pct(ratio.percent)} of {count(ratio.total, 'changed line')}")
        return []
    if patch.imported:
        failed.append("patch")
        moved = "; ".join(f"{path} (imported by {importer})" for path, importer in patch.imported)
        parts.append("patch: changed code the report does not measure, called from code it does")
        problems.append(
            f"changed code that measured code imports is outside what coverage measures: "
            f"{moved}; measure it (`[run] source`, `--cov=`), or move it back into the package"
        )
        return []
    if ratio is None:
        if patch.no_base and isinstance(threshold, ProfileDefault):
            notes.append(f"no base: patch coverage not measured ({patch.why})")
            return []
        failed.append("patch")
        parts.append(f"patch not measured (need {pct(threshold)})")
        problems.append(f"patch coverage not measured: {patch.why}; {patch.how}")
        return []
    minimum = config.options.get("patch_min_lines", PATCH_MIN_LINES)
    against = f" against {patch.base}" if patch.base else ""
    if ratio.total == 0:
        parts.append("patch: no changed line the report measures")
        return []
    if ratio.total < minimum:
        parts.append(
            f"patch {pct(ratio.percent)} of {count(ratio.total, 'changed line')} "
            f"(informational below {minimum})"
        )
        return []
    parts.append(
        f"patch {pct(ratio.percent, threshold)} of {count(ratio.total, 'changed line')} "
        f"(need {pct(threshold)})"
    )
    if ratio.percent >= threshold:
        return []
    failed.append("patch")
    more = needed_to_reach(threshold, ratio.covered, ratio.total)
    notes.append(
        f"patch: {pct(ratio.percent, threshold)} < {pct(threshold)}: cover {more} more of the "
        f"{ratio.total} lines the change adds or modifies{against} ({ratio.covered} covered now)"
    )
    findings: list[Finding] = []
    for file in patch.files:
        if not file.uncovered:
            continue
        if len(findings) == MAX_FILE_FINDINGS:
            break
        n = len(file.uncovered)
        findings.append(
            Finding(
                f"{count(n, 'new line')} not covered: line{'s' if n != 1 else ''} "
                f"{line_ranges(file.uncovered)}",
                path=file.path,
                line=file.uncovered[0],
                severity="error",
            )
        )
    return findings


def _worst_files(files: list[FileCoverage], evidence: Evidence) -> list[Finding]:
    ranked = sorted((f for f in files if f.missed > 0), key=lambda f: (-f.missed, f.path))
    findings = []
    for file in ranked[:MAX_FILE_FINDINGS]:
        ranges = line_ranges(file.missing_lines)
        many = "s" if len(file.missing_lines) != 1 else ""
        where = f": line{many} {ranges}" if file.missing_lines else ""
        findings.append(
            Finding(
                f"{file.missed} line{'s' if file.missed != 1 else ''} not covered{where}",
                path=display_path(file.path, evidence.root, follow_links=False),
                line=file.missing_lines[0] if file.missing_lines else None,
                severity="error",
            )
        )
    return findings


def line_ranges(lines: list[int], limit: int = 12) -> str:
    """``[1, 2, 3, 7, 9, 10]`` -> ``1-3, 7, 9-10``; long lists end with ``, …``."""
    ranges: list[str] = []
    start = prev = None
    for n in sorted(lines):
        if start is None or prev is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            ranges.append(str(start) if start == prev else f"{start}-{prev}")
            start = prev = n
    if start is not None:
        ranges.append(str(start) if start == prev else f"{start}-{prev}")
    shown = ", ".join(ranges[:limit])
    return shown + (", …" if len(ranges) > limit else "")


def _coverage_omit(root: Path) -> list[str]:
    """coverage.py's ``[run] omit`` for the project at ``root``, read as coverage.py reads its
    settings (the first of .coveragerc, setup.cfg, tox.ini, pyproject.toml that has them): a
    file the project leaves out of coverage on purpose is no code moved out of it (review 22).
    A change to ``omit`` is the integrity gate's to judge."""
    from coverage.config import CoverageConfig

    config = CoverageConfig()
    for name, ours in (
        (".coveragerc", True),
        (".coveragerc.toml", True),
        ("setup.cfg", False),
        ("tox.ini", False),
        ("pyproject.toml", False),
    ):
        path = root / name
        try:
            if path.is_file() and config.from_file(str(path), warn=lambda _: None, our_file=ours):
                break
        except Exception:  # unreadable settings: coverage says so itself, in the test run
            continue
    return list(config.run_omit or [])


def _is_omitted(path: Path, patterns: list[str], root: Path) -> bool:
    """Whether one of coverage.py's ``omit`` ``patterns`` names ``path`` (a relative pattern
    is relative to the project, as coverage.py makes it absolute from where it runs)."""
    import fnmatch

    shown = str(path)
    return any(
        fnmatch.fnmatch(shown, p if p.startswith(("*", "/")) else str(root / p)) for p in patterns
    )
