"""The test gate: JUnit XML testcases, folded per test identity, against a minimum pass rate."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_agentgate.commands import STOPPED_BY_INTEGRITY, runs_pytest, runs_this_interpreter
from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    SHARD_OPTIONS,
    CollectContext,
    Evidence,
    Option,
)
from pytest_agentgate.gates.collect import report_files
from pytest_agentgate.gates.judging import (
    UNMEASURED,
    command_problem,
    exit_disagrees,
    new_result,
    pct,
    skipped,
    unreadable,
)
from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.hints import JUNIT_HINT
from pytest_agentgate.reports.model import ReportError, TestCaseResult, TestRun
from pytest_agentgate.texts import read_regular
from pytest_agentgate.verdict import Finding, GateResult


@dataclass
class SuiteEvidence(Evidence):
    """The tests that ran: read from JUnit XML, or handed in by the pytest door."""

    run: TestRun | None = None
    # What agentgate's pytest plugin witnessed (pytest_plugin/witness.py): items collected
    # that disappeared without being deselected, and items selected that never reported.
    dropped: int = 0
    never_ran: int = 0
    # How many tests the suite holds (selected to run, plus deselected; not those dropped), and
    # how many of its collectors failed, as the witness or the pytest door saw them; None when
    # not known (another runner). The integrity gate compares it with the base's.
    selected: int | None = None
    collect_errors: int = 0
    # The test functions pytest's selection (-m, -k, --deselect) took out of this run, none of
    # their cases left (function node ids, the witness's ``agentgate_deselected_tests``); None
    # when not known. The integrity gate compares them with the base's.
    deselected_tests: list[str] | None = None
    # The test functions collected in this run (the witness's ``agentgate_collected_tests``),
    # and whether there were too many to list (not merely unknown).
    collected_tests: list[str] | None = None
    tests_over_limit: bool = False
    # pytest plugins loaded from the project folder by no installation (witness.py).
    local_plugins: list[str] = field(default_factory=list)
    # The test tools' code replaced by code the project wrote (pytest_plugin/tampering.py).
    replaced: list[str] = field(default_factory=list)
    # What made the pytest door's own run check less than its tests say (asserts that do not
    # run, a plugin no installed package provides): the session names it, the gate fails.
    loosened: list[str] = field(default_factory=list)
    # Code the interpreter that ran the tests runs at every start that no installed
    # distribution put there (pytest_plugin/startup.py): (file, line, code). The integrity
    # gate judges it (gates/integrity.with_startup_code).
    startup: list[tuple[str, int, str, bool]] = field(default_factory=list)
    # The distributions the run loaded pytest plugins and test tools from: (site folder,
    # dist-info, RECORD digest, plugin, tool). The integrity gate compares them with the
    # environment the task began with (integrity/installs.py).
    installs: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    # The files and folders outside the project the run's code read (the witness's
    # ``agentgate_read``): the verdict cache keys them. None: too many to keep, no verdict kept.
    read_outside: list[str] | None = field(default_factory=list)
    # Tests reported passed whose call phase never ran: their bodies did not run (pytest's
    # --setup-only or --setup-plan runs the fixtures only), as the witness (its
    # ``agentgate_outcomes``) or the pytest door counted them; a few of their node ids, and the
    # option that did it with where it came from ("" when not known). Not counted as passed.
    not_run: int = 0
    not_run_tests: list[str] = field(default_factory=list)
    not_run_by: str = ""
    # The failing tests the witness saw (its ``agentgate_outcomes``) that the JUnit report does
    # not show failing: the report was rewritten after pytest wrote it. ``run`` then holds the
    # witness's counts and failures: the run's outcomes as it saw them.
    rewritten: list[TestCaseResult] = field(default_factory=list)


class SuiteGate:
    """The ``test`` gate kind."""

    name = "test"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        Option("report", "globs", "JUnit XML file(s) or glob(s) the test command writes"),
        *SHARD_OPTIONS,
        Option(
            "min_pass_rate", "percent", "passed / (passed + failed + errors), %", threshold=True
        ),
        Option(
            "flaky",
            "choice",
            "fail: any flaky test fails the gate; allow: flaky tests are only listed",
            choices=("fail", "allow"),
            threshold=True,
        ),
        Option(
            "partial",
            "choice",
            "fail: a run of only part of the suite (pytest -k, -m, --lf, -x, chosen paths) fails; "
            "allow: it is judged on what ran",
            choices=("fail", "allow"),
            threshold=True,
        ),
    )
    stdout_report = False

    def collect(self, context: CollectContext) -> SuiteEvidence:
        evidence = SuiteEvidence(context.root, command=context.result)
        cfg = context.config
        if not cfg.reports:
            evidence.missing = "no JUnit report configured"
            return evidence
        hint = (
            f"`{cfg.command}` must write it ({JUNIT_HINT})"
            if cfg.command
            else "run the tests with a JUnit reporter first"
        )
        try:
            files = report_files(context, "JUnit report", hint)
            from pytest_agentgate.reports.junit import read_junit  # not imported in pytest

            evidence.run = read_junit([str(p) for p in files])
            if context.result is not None and context.run_id and runs_pytest(cfg.command):
                _check_witness(context, evidence, evidence.run, files)
        except ReportError as exc:
            evidence.error = exc
        return evidence

    def judge(self, config: GateConfig, evidence: SuiteEvidence) -> GateResult:
        if evidence.error is not None:
            return unreadable(
                config, evidence, "no usable test report", evidence.error, UNMEASURED["test"]
            )
        if evidence.run is None:
            return skipped(config, evidence, evidence.missing or "no test results")
        return _judge_run(config, evidence, evidence.run)


def _check_witness(
    context: CollectContext, evidence: SuiteEvidence, run: TestRun, files: list[Path]
) -> None:
    """A pytest report of a run agentgate started carries that run's id (and what pytest
    collected); one that does not was not written by this run. Raises ReportError."""
    names = ", ".join(display_path(str(p), context.root) for p in files)
    witnessed = run.properties.get("agentgate_run", [])
    command = str(context.config.command)
    if any(value != context.run_id for value in witnessed) or (
        len(witnessed) < len(files) and runs_this_interpreter(command, context.command_env)
    ):
        raise ReportError(
            names,
            "not written by this run's pytest: it lacks this run's id (agentgate_run), so it "
            "was copied in, hand-made, or left by another run",
            "let the test command's pytest write the report itself, in this run",
        )
    numbers = {
        key: sum(int(v) for v in run.properties.get(f"agentgate_{key}", []) if v.isdigit())
        for key in ("collected", "deselected", "selected", "collect_errors", "duplicates")
    }
    evidence.local_plugins = list(run.properties.get("agentgate_local_plugin", []))
    evidence.replaced = list(run.properties.get("agentgate_replaced", []))
    evidence.replaced += _swapped_sources(context.root, run.properties.get("agentgate_sources", []))
    evidence.startup = startup_entries(run.properties.get("agentgate_startup", []))
    evidence.installs = install_entries(run.properties.get("agentgate_install", []))
    evidence.read_outside = read_entries(run.properties.get("agentgate_read", []))
    outcomes = run.properties.get("agentgate_outcomes", [])
    if len(outcomes) < len(witnessed) and runs_this_interpreter(command, context.command_env):
        # This agentgate's witness wrote the report's run id, and writes its outcomes with it:
        # a report without them was rewritten after pytest wrote it (an older agentgate in
        # another environment may write none).
        raise ReportError(
            names,
            "rewritten after this run's pytest wrote it: it carries this run's id but not the "
            "outcomes the run's witness recorded beside it (agentgate_outcomes)",
            "let the test command's pytest write the report, and leave it as it is written",
        )
    _compare_outcomes(evidence, run, outcomes, len(witnessed))
    if "agentgate_collected" in run.properties:
        evidence.dropped = max(
            0, numbers["collected"] - numbers["deselected"] - numbers["selected"]
        )
        # Items that share a node id are one test of the report (witness.py).
        evidence.never_ran = max(0, numbers["selected"] - numbers["duplicates"] - run.total)
        # What the suite holds: deselection (the project's `-m`, `--sw`, `--lf`) is judged
        # elsewhere, and a checkout of the base has no cache to deselect by.
        evidence.selected = numbers["selected"] + numbers["deselected"]
        evidence.collect_errors = numbers["collect_errors"]
        evidence.deselected_tests = test_entries(
            run.properties.get("agentgate_deselected_tests", [])
        )
        evidence.collected_tests = test_entries(run.properties.get("agentgate_collected_tests", []))


def _compare_outcomes(
    evidence: SuiteEvidence, run: TestRun, documents: list[str], reports: int
) -> None:
    """The outcomes the witness saw (``agentgate_outcomes``, one per report it wrote) against
    what the report says: the tests whose bodies never ran, and the failing tests the report
    does not show failing (a report rewritten after pytest wrote it: ``run`` then takes the
    witness's counts and failures)."""
    counts = [0, 0, 0, 0]
    failing: list[TestCaseResult] | None = []
    found = list(_objects(documents))
    for document in found:
        not_run = document.get("not_run")
        if isinstance(not_run, int) and not isinstance(not_run, bool) and not_run > 0:
            evidence.not_run += not_run
            names = document.get("not_run_tests")
            evidence.not_run_tests += [n for n in names or () if isinstance(n, str)][:5]
            evidence.not_run_by = evidence.not_run_by or str(document.get("not_run_by") or "")
        seen = document.get("counts")
        if isinstance(seen, list) and len(seen) == 4 and all(type(n) is int for n in seen):
            counts = [a + max(0, b) for a, b in zip(counts, seen, strict=True)]
        tests = document.get("failing")
        if failing is None or not isinstance(tests, list):
            failing = None
            continue
        for test in tests:
            if isinstance(test, list) and len(test) == 5 and all(isinstance(v, str) for v in test):
                classname, name, outcome, message, file = test
                failing.append(
                    TestCaseResult(
                        name,
                        classname,
                        "error" if outcome == "error" else "failed",
                        file=str(evidence.root / file) if file else None,
                        message=message,
                    )
                )
    if len(found) < reports:
        return  # a report the witness wrote no outcomes into: an older agentgate's
    shown = {(t.classname, t.name) for t in (*run.failures, *run.flaky_tests)}
    if failing is not None:
        evidence.rewritten = [t for t in failing if (t.classname, t.name) not in shown]
    elif counts[2] + counts[3] > run.failed + run.errors + run.flaky:
        evidence.rewritten = [
            TestCaseResult("", "", "failed", message=f"{counts[2] + counts[3]} tests failed")
        ]
    if evidence.rewritten:
        run.passed, run.skipped = counts[0], counts[1]
        run.failed, run.errors = max(run.failed, counts[2]), max(run.errors, counts[3])
        run.total = run.passed + run.skipped + run.failed + run.errors
        run.failures += [t for t in evidence.rewritten if t.name]


def test_entries(values: list[str]) -> list[str] | None:
    """Test functions from the witness's ``agentgate_deselected_tests`` or
    ``agentgate_collected_tests`` (one per report): None when none is there, one says there
    were too many, or one cannot be read."""
    if not values:
        return None
    found: set[str] = set()
    for value in values:
        try:
            names = json.loads(value)
        except (ValueError, RecursionError):
            return None
        if not isinstance(names, list):
            return None
        found.update(n for n in names if isinstance(n, str))
    return sorted(found)


def read_entries(values: list[str]) -> list[str] | None:
    """The files read outside the project, from the witness's ``agentgate_read`` properties
    (one per report; a worker's are merged before): None when one says there were too many,
    or cannot be read."""
    found: set[str] = set()
    for value in values:
        try:
            paths = json.loads(value)
        except ValueError:
            return None
        if not isinstance(paths, list):
            return None
        found.update(p for p in paths if isinstance(p, str))
    return sorted(found)


def _not_run(run: TestRun) -> str:
    """The tests that did not run, as pytest's summary counts them: "2 skipped, 1 xfailed"."""
    parts = [f"{run.skipped - run.xfailed} skipped"] if run.skipped > run.xfailed else []
    if run.xfailed:
        parts.append(f"{run.xfailed} xfailed")
    return ", ".join(parts) or "0 skipped"


def _judge_run(config: GateConfig, evidence: SuiteEvidence, run: TestRun) -> GateResult:
    problem = command_problem(config, evidence)
    # A test whose body never ran did not pass, whatever its report says.
    passed = max(0, run.passed - evidence.not_run)
    executed = passed + run.failed + run.errors
    rate = passed * 100.0 / executed if executed else None
    actual = {
        "total": run.total,
        "passed": passed,
        "failed": run.failed,
        "errors": run.errors,
        "skipped": run.skipped - run.xfailed,
        "xfailed": run.xfailed,
        "xpassed": run.xpassed,
        "flaky": run.flaky,
        "pass_rate": rate,
    }
    if evidence.not_run:
        actual["not_run"] = evidence.not_run
    min_rate = config.thresholds.get("min_pass_rate")
    need = "" if min_rate is None else f", need {pct(min_rate)}"
    failing = run.failed + run.errors
    findings = [_failure_finding(t, evidence) for t in run.failures]
    findings += [_flaky_finding(t, evidence) for t in run.flaky_tests]
    fail = False
    if executed == 0:
        fail = True
        summary = f"no tests executed ({_not_run(run)}): zero executed tests is a failure"
    else:
        xpassed = f"; {run.xpassed} of them xpassed" if run.xpassed else ""
        summary = f"{passed} of {executed} tests passed ({pct(rate, min_rate)}{need}{xpassed})"
        if min_rate is not None and rate is not None and rate < min_rate:
            fail = True
    if run.skipped and executed:
        summary += f", {_not_run(run)}"
    if run.flaky:
        summary += f", {run.flaky} flaky"
        if config.thresholds.get("flaky") == "fail":
            fail = True
            summary += " (flaky tests are not allowed)"
    partial = list(run.partial)
    if evidence.never_ran:
        partial.append(f"{evidence.never_ran} selected tests never ran (-x, --maxfail, a crash)")
    run_partial = partial
    partial_problem = None
    if evidence.dropped:
        fail = True
        summary += f"; {evidence.dropped} collected tests dropped"
    if evidence.local_plugins:
        fail = True
        summary += f"; {len(evidence.local_plugins)} pytest plugins loaded from the project folder"
    if evidence.replaced:
        fail = True
        summary += f"; {len(evidence.replaced)} functions of the test tools or the project replaced"
    if evidence.loosened:
        fail = True
        summary += "; the run checked less than its tests say"
    if evidence.not_run:
        fail = True
        summary += f"; {evidence.not_run} tests reported passed never ran their bodies"
        findings.append(
            Finding(
                message=f"{evidence.not_run} tests reported passed did not run their bodies"
                + (f" ({evidence.not_run_by})" if evidence.not_run_by else ""),
                code="body-not-run",
            )
        )
    if evidence.rewritten:
        fail = True
        summary += "; the test report was rewritten after the run"
        findings.append(
            Finding(
                message="the test report was rewritten after pytest wrote it: it does not show "
                f"failing {len(evidence.rewritten)} tests the run saw fail",
                code="result-rewritten",
            )
        )
    if run_partial == [STOPPED_BY_INTEGRITY]:
        # The pytest door: the run was stopped, not cut short by its caller (review 27).
        summary += f"; no test ran: {STOPPED_BY_INTEGRITY}"
        fail = True
        partial_problem = (
            f"no test ran ({STOPPED_BY_INTEGRITY}): the change's integrity findings come first; "
            "resolve them, then run the suite again"
        )
    elif run_partial:
        summary += "; partial run: " + "; ".join(run_partial)
        if config.thresholds.get("partial") == "fail":
            fail = True
            partial_problem = (
                "only part of the suite ran (" + "; ".join(run_partial) + "): a partial run "
                "cannot pass this profile, because the code the other tests cover is not "
                "verified; run the whole suite"
            )
    result = new_result(config, evidence, "fail" if fail else "pass", summary)
    result.actual = actual
    result.findings = findings
    if evidence.dropped:
        result.problems.append(
            f"{evidence.dropped} of the tests pytest collected were removed from the run "
            "without being deselected (a pytest_collection_modifyitems hook or a plugin): "
            "every collected test must run"
        )
    if evidence.local_plugins:
        result.problems.append(
            "pytest loaded plugins that no installed package provides, from a distribution in "
            f"the project folder ({', '.join(evidence.local_plugins)}): remove it, or install "
            "the plugin as a package"
        )
    if evidence.replaced:
        result.problems.append(
            "code of the test tools or of the project under test was replaced while the tests "
            "ran, so the results are not those of the tests and the project's code: "
            f"{', '.join(evidence.replaced)}; remove the code that replaces it"
        )
    for why in evidence.loosened:
        result.problems.append(why)
    if evidence.not_run:
        result.problems.append(_not_run_problem(evidence))
    if evidence.rewritten:
        result.problems.append(_rewritten_problem(evidence))
    if partial_problem is not None:
        result.problems.append(partial_problem)
    elif run_partial:
        result.notes.append("judged only the tests that ran: " + "; ".join(run_partial))
    if problem is not None:
        result.status = "fail"
        result.problems.append(problem)
    elif not failing and executed and (msg := exit_disagrees(config, evidence)):
        result.status = "fail"
        result.problems.append(coverage_threshold_exit(config, evidence) or msg)
    if failing and not fail and result.status == "pass":
        result.notes.append(f"{failing} failing tests are within the profile's tolerance")
    return result


def _project_path(path: str, evidence: Evidence) -> str:
    return display_path(path, evidence.root, follow_links=False)


def node_id(test: TestCaseResult, evidence: Evidence) -> str:
    """``tests/test_x.py::TestClass::test_name`` when the report says which file, as pytest
    prints it; otherwise the report's own ``classname::name``."""
    if test.file and test.classname:
        path = _project_path(test.file, evidence)
        module = path.removesuffix(".py").replace("/", ".").replace("\\", ".")
        classname = test.classname
        # xunit1 classnames are the dotted module path, maybe with a prefix, then the class.
        if module and (classname == module or classname.endswith("." + module)):
            return f"{path}::{test.name}"
        sep = module + "."
        if sep in classname + ".":
            rest = (classname + ".").split(sep, 1)[1].rstrip(".")
            return (
                f"{path}::{rest.replace('.', '::')}::{test.name}"
                if rest
                else f"{path}::{test.name}"
            )
    return test.display_name


def _failure_finding(test: TestCaseResult, evidence: Evidence) -> Finding:
    kind = "error" if test.outcome == "error" else "failed"
    message = test.message or kind
    return Finding(
        message=message,
        path=None if test.file is None else _project_path(test.file, evidence),
        line=test.line,
        name=node_id(test, evidence),
        code=None if kind == "failed" else "error",
        severity="error",
    )


def _not_run_problem(evidence: SuiteEvidence) -> str:
    how = (
        f"pytest ran only their fixtures ({evidence.not_run_by}) and reports each test whose "
        "fixtures worked as passed"
        if evidence.not_run_by
        else "their call phase never ran"
    )
    names = ", ".join(evidence.not_run_tests[:5])
    more = ", ..." if evidence.not_run > len(evidence.not_run_tests[:5]) else ""
    return (
        f"{evidence.not_run} tests are reported passed but their bodies did not run: {how}: "
        f"{names}{more}. A test passes only when its body runs; remove the option and run the "
        "tests"
    )


def _rewritten_problem(evidence: SuiteEvidence) -> str:
    named = [node_id(t, evidence) for t in evidence.rewritten if t.name]
    shown = ", ".join(named[:5]) + (", ..." if len(named) > 5 else "")
    what = f"{len(named)} tests failed ({shown})" if named else evidence.rewritten[0].message
    return (
        f"the test report was rewritten after pytest wrote it: in the run {what} that the "
        "report does not show failing. Code of the project (a hook that runs after the tests, "
        "such as pytest_unconfigure) changed the report; the run's own outcomes are judged. "
        "Remove the code that rewrites the report"
    )


def _flaky_finding(test: TestCaseResult, evidence: Evidence) -> Finding:
    return Finding(
        message="flaky: failed, then passed on a rerun"
        + (f" ({test.message})" if test.message else ""),
        path=None if test.file is None else _project_path(test.file, evidence),
        line=test.line,
        name=node_id(test, evidence),
        code="flaky",
        severity="warning",
    )


# What a coverage plugin prints when the project's own threshold fails the test command: pytest-cov
# ("FAIL Required test coverage of 90% not reached. Total coverage: 85.00%") and coverage.py's
# `report --fail-under` ("Coverage failure: total of 85 is less than fail-under=90").
_COVERAGE_THRESHOLD = re.compile(
    r"Required test coverage of (?P<need>[\d.]+)% not reached\. Total coverage: (?P<got>[\d.]+)%"
    r"|Coverage failure: total of (?P<got2>[\d.]+) is less than fail-under=(?P<need2>[\d.]+)"
)


def coverage_threshold_exit(config: GateConfig, evidence: Evidence) -> str | None:
    """The problem for a test command whose tests all passed but whose exit code comes from the
    project's own coverage threshold (pytest-cov's or coverage.py's fail_under), else None."""
    res = evidence.command
    if res is None:
        return None
    text = res.stdout[-65536:] + "\n" + res.stderr[-65536:]
    matches = list(_COVERAGE_THRESHOLD.finditer(text))
    if not matches:
        return None
    found = matches[-1]
    need = found["need"] or found["need2"]
    got = found["got"] or found["got2"]
    return (
        f"`{config.command}` exited with code {res.exit_code} because the project's own coverage "
        f"threshold was not reached: {got}% of the required {need}% (its fail_under). Every "
        "test passed; cover more of the code (never lower the threshold)"
    )


def startup_entries(values: Iterable[object]) -> list[tuple[str, int, str, bool]]:
    """The startup code a witness or the pytest door found, each as ``{"path", "line",
    "code", "system"}`` (a JSON text in a JUnit property); entries of another shape are left
    out, and one that does not say ``"system": true`` is the tests' environment's."""
    entries = []
    for value in _objects(values):
        path, line, code = value.get("path"), value.get("line"), value.get("code")
        if isinstance(path, str) and isinstance(line, int) and isinstance(code, str):
            entries.append((path, line, code, value.get("system") is True))
    return entries


def install_entries(values: Iterable[object]) -> list[tuple[str, str, str, str, str]]:
    """The distributions a witness or the pytest door saw plugins and test tools loaded from,
    each as ``{"folder", "dist", "record", "plugin", "tool"}`` (a JSON text in a JUnit
    property); entries of another shape are left out."""
    keys = ("folder", "dist", "record", "plugin", "tool")
    entries = []
    for value in _objects(values):
        if all(isinstance(value.get(k), str) for k in keys):
            folder, dist, record, plugin, tool = (value[k] for k in keys)
            entries.append((folder, dist, record, plugin, tool))
    return entries


def _objects(values: Iterable[object]) -> Iterator[dict[str, Any]]:
    """Each of ``values`` that is a JSON object, or the JSON text of one."""
    for value in values:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                continue
        if isinstance(value, dict):
            yield value


def _swapped_sources(root: Path, documents: list[str]) -> list[str]:
    """The files of the project's code whose bytes as the tests' session ended (the witness's
    ``agentgate_sources``) are not the bytes there now: code swapped in for the run and put
    back after it."""
    import hashlib

    swapped: list[str] = []
    for document in documents[:8]:
        try:
            sources = json.loads(document)
        except ValueError:
            continue
        if not isinstance(sources, dict):
            continue
        for path, digest in list(sources.items())[:5000]:
            if not isinstance(path, str) or not isinstance(digest, str):
                continue
            file = Path(path)
            if not file.is_absolute() or not file.is_relative_to(root.resolve()):
                continue
            try:
                now = hashlib.sha256(read_regular(file)).hexdigest()
            except OSError:
                continue  # gone since: a module the tests wrote and removed
            if now != digest:
                shown = display_path(path, root)
                swapped.append(f"{shown} (the file held other code while the tests ran)")
    return sorted(set(swapped))[:20]
