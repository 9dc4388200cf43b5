"""The test gate: JUnit XML testcases, folded per test identity, against a minimum pass rate."""

from __future__ import annotations

from pytest_agentgate.gates.base import (
    COMMON_OPTIONS,
    SHARD_OPTIONS,
    UNMEASURED,
    GateInput,
    Option,
    command_problem,
    display_path,
    exit_disagrees,
    new_result,
    pct,
    report_files,
    skipped,
    unreadable,
)
from pytest_agentgate.reports.model import ReportError, TestCaseResult, TestRun
from pytest_agentgate.verdict import Finding, GateResult


class TestGate:
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

    def judge(self, gate: GateInput) -> GateResult:
        if isinstance(gate.evidence, TestRun):  # measured in-process by the pytest plugin
            return self._judge_run(gate, gate.evidence, command_problem(gate))
        if not gate.config.reports:
            return skipped(gate, "no JUnit report configured")
        problem = command_problem(gate)
        try:
            run = self._read(gate)
        except ReportError as exc:
            return unreadable(gate, "no usable test report", exc, UNMEASURED["test"])
        return self._judge_run(gate, run, problem)

    def _read(self, gate: GateInput) -> TestRun:
        cmd = gate.config.command
        hint = (
            f"`{cmd}` must write it (pytest: --junitxml=PATH; jest: the jest-junit reporter)"
            if cmd
            else "run the tests with a JUnit reporter first"
        )
        files = report_files(gate, "JUnit report", hint)
        from pytest_agentgate.reports.junit import (
            read_junit,  # only when a report is read, not in pytest
        )

        return read_junit([str(p) for p in files])

    def _judge_run(self, gate: GateInput, run: TestRun, problem: str | None) -> GateResult:
        cfg = gate.config
        executed = run.executed
        rate = run.passed * 100.0 / executed if executed else None
        actual = {
            "total": run.total,
            "passed": run.passed,
            "failed": run.failed,
            "errors": run.errors,
            "skipped": run.skipped,
            "flaky": run.flaky,
            "pass_rate": rate,
        }
        min_rate = cfg.thresholds.get("min_pass_rate")
        need = "" if min_rate is None else f", need {pct(min_rate)}"
        failing = run.failed + run.errors
        findings = [_failure_finding(t, gate) for t in run.failures]
        findings += [_flaky_finding(t, gate) for t in run.flaky_tests]
        fail = False
        if executed == 0:
            fail = True
            summary = f"no tests executed ({run.skipped} skipped): zero executed tests is a failure"
        else:
            summary = f"{run.passed} of {executed} tests passed ({pct(rate, min_rate)}{need})"
            if min_rate is not None and rate is not None and rate < min_rate:
                fail = True
        if run.skipped and executed:
            summary += f", {run.skipped} skipped"
        if run.flaky:
            summary += f", {run.flaky} flaky"
            if cfg.thresholds.get("flaky") == "fail":
                fail = True
                summary += " (flaky tests are not allowed)"
        partial_problem = None
        if run.partial:
            summary += "; partial run: " + "; ".join(run.partial)
            if cfg.thresholds.get("partial") == "fail":
                fail = True
                partial_problem = (
                    "only part of the suite ran (" + "; ".join(run.partial) + "): a partial run "
                    "cannot pass this profile, because the code the other tests cover is not "
                    "verified; run the whole suite"
                )
        result = new_result(gate, "fail" if fail else "pass", summary)
        result.actual = actual
        result.findings = findings
        if partial_problem is not None:
            result.problems.append(partial_problem)
        elif run.partial:
            result.notes.append("judged only the tests that ran: " + "; ".join(run.partial))
        if problem is not None:
            result.status = "fail"
            result.problems.append(problem)
        elif not failing and executed and (msg := exit_disagrees(gate)):
            result.status = "fail"
            result.problems.append(msg)
        if failing and not fail and result.status == "pass":
            result.notes.append(f"{failing} failing tests are within the profile's tolerance")
        return result


def node_id(test: TestCaseResult, gate: GateInput) -> str:
    """``tests/test_x.py::TestClass::test_name`` when the report says which file, as pytest
    prints it; otherwise the report's own ``classname::name``."""
    if test.file and test.classname:
        path = display_path(test.file, gate.root)
        module = path.removesuffix(".py").replace("/", ".").replace("\\", ".")
        classname = test.classname
        # xunit1 classnames are the dotted module path, maybe with a prefix, then the class.
        if module and (classname == module or classname.endswith("." + module)):
            return f"{path}::{test.name}"
        for sep in (module + ".",):
            if sep in classname + ".":
                rest = (classname + ".").split(sep, 1)[1].rstrip(".")
                return (
                    f"{path}::{rest.replace('.', '::')}::{test.name}"
                    if rest
                    else f"{path}::{test.name}"
                )
    return test.display_name


def _failure_finding(test: TestCaseResult, gate: GateInput) -> Finding:
    kind = "error" if test.outcome == "error" else "failed"
    message = test.message or kind
    return Finding(
        message=message,
        path=None if test.file is None else display_path(test.file, gate.root),
        line=test.line,
        name=node_id(test, gate),
        code=None if kind == "failed" else "error",
        severity="error",
    )


def _flaky_finding(test: TestCaseResult, gate: GateInput) -> Finding:
    return Finding(
        message="flaky: failed, then passed on a rerun"
        + (f" ({test.message})" if test.message else ""),
        path=None if test.file is None else display_path(test.file, gate.root),
        line=test.line,
        name=node_id(test, gate),
        code="flaky",
        severity="warning",
    )
