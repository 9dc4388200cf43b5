"""Gate kinds, one evidence shape at a time: a context in, evidence collected, a GateResult out."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import DATA, PY, assess

from pytest_agentgate.gates import base, collect, judging
from pytest_agentgate.gates import test as test_kind
from pytest_agentgate.gates.build import BuildGate
from pytest_agentgate.gates.coverage import CoverageEvidence, CoverageGate, line_ranges
from pytest_agentgate.gates.custom import CustomGate
from pytest_agentgate.gates.lint import LintGate
from pytest_agentgate.process import CommandResult, CommandSpec, run_command
from pytest_agentgate.reports import jsonvalue, model
from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.build import extract_errors, tail_lines
from pytest_agentgate.verdict import Finding

MakeInput = Callable[..., base.CollectContext]
MakeResult = Callable[..., CommandResult]
OLD = time.time() - 3600


def _write(path: Path, text: str, *, old: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if old:
        os.utime(path, (OLD, OLD))
    return path


# -- shared helpers -----------------------------------------------------------------------------


def test_pct_and_needed_to_reach() -> None:
    assert judging.pct(None) == "n/a"
    assert judging.pct(84.996) == "85.00%"
    assert judging.pct(84.996, 85) == "84.99%" and judging.pct(84.996, 84.99) == "85.00%"
    assert judging.pct(66.666, 95) == "66.67%"  # far below: rounded as usual
    assert judging.needed_to_reach(85, 21249, 25000) == 1
    assert judging.needed_to_reach(85, 85, 100) == 0
    assert judging.needed_to_reach(50, 9, 10) == 0


def test_expand_reports(tmp_path: Path, gate_input: MakeInput) -> None:
    a = _write(tmp_path / "r" / "a.xml", "")
    b = _write(tmp_path / "r" / "sub" / "b.xml", "")
    outside = _write(tmp_path.parent / f"{tmp_path.name}-out.xml", "")
    gate = gate_input("test", reports=["r/**/*.xml", "r/a.xml", str(outside), "nope/*.xml", "x"])
    files, unmatched = collect.expand_reports(gate)
    assert files == [a, b, outside]
    assert unmatched == ["nope/*.xml", "x"]
    assert display_path(str(outside), tmp_path) == str(outside)
    assert display_path(str(b), tmp_path) == "r/sub/b.xml"


def test_written_this_run_matches_whole_paths(gate_input: MakeInput) -> None:
    def named(report: str, command: str) -> bool:
        return collect.written_this_run(
            gate_input("coverage", reports=[report], commands_run=(command,))
        )

    assert named("cov.json", "pytest --cov-report=json:cov.json")
    assert named(".agentgate/.coverage", "coverage run --data-file=.agentgate/.coverage -m x")
    assert named("cov.json", "coverage json -o 'cov.json'")
    assert not named("cov.json", "coverage json -o build/cov.json")
    assert not named("cov.json", "coverage json -o cov.json.bak")


def problem(context: base.CollectContext) -> str | None:
    return judging.command_problem(context.config, base.Evidence(context.root, context.result))


def test_command_problem(gate_input: MakeInput, command_result: MakeResult) -> None:
    assert problem(gate_input("build")) is None
    timed_out = gate_input("build", result=command_result("slow", None, timed_out=True), timeout=2)
    assert "killed after its 2 s timeout" in str(problem(timed_out))
    broken = gate_input("build", result=command_result("x", None, start_error="no shell"))
    assert problem(broken) == "`x` could not start: no shell"


# -- build --------------------------------------------------------------------------------------

GCC = "src/a.c:12:5: error: expected ';' before '}' token\nsrc/a.c:3:1: warning: unused x\n"
RUSTC = """\
error[E0308]: mismatched types
 --> src/main.rs:4:18
  |
4 |     let x: i32 = "a";
  |                  ^^^ expected `i32`, found `&str`
error: aborting due to 1 previous error
"""
TSC = "src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"


def test_extract_errors_shapes() -> None:
    (gcc,) = extract_errors(GCC)
    assert (gcc.path, gcc.line, gcc.column, gcc.message) == (
        "src/a.c",
        12,
        5,
        "expected ';' before '}' token",
    )
    (rust,) = extract_errors(RUSTC + "error: could not compile `demo` (bin) due to 1 error\n")
    assert (rust.code, rust.path, rust.line, rust.column) == ("E0308", "src/main.rs", 4, 18)
    assert rust.message == "mismatched types"  # cargo's closing summaries are not counted
    (tsc,) = extract_errors(TSC)
    assert (tsc.path, tsc.line, tsc.column, tsc.code) == ("src/app.ts", 3, 7, "TS2322")
    assert extract_errors("error: linker failed") == [Finding("linker failed")]
    assert extract_errors("all good\n") == []


def test_extract_compileall_errors() -> None:
    output = (
        "*** Error compiling 'pkg/a.py'...\n"
        '  File "pkg/a.py", line 3\n'
        "    def f(:\n"
        "SyntaxError: invalid syntax\n"
        "*** Error compiling 'pkg/b.py'...\n"
        "*** Error compiling 'pkg/c.py'...\n"
        '  File "pkg/c.py", line 9\n'
    )
    a, b, c = extract_errors(output)
    assert (a.path, a.line, a.message) == ("pkg/a.py", 3, "SyntaxError: invalid syntax")
    assert (b.path, b.line, b.message) == ("pkg/b.py", None, "could not be compiled")
    assert (c.path, c.line) == ("pkg/c.py", 9)


def test_an_error_python_reports_without_a_traceback_is_read(tmp_path: Path) -> None:
    # compileall, run for real: a TabError is printed as "Sorry: TabError: ... (E10.py, line 3)".
    import subprocess
    import sys

    (tmp_path / "E10.py").write_text("if True:\n\tx = 1\n        y = 2\n")
    done = subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "E10.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    (found,) = extract_errors(done.stdout + done.stderr)
    assert (found.path, found.line) == ("E10.py", 3)
    assert found.message == "TabError: inconsistent use of tabs and spaces in indentation"


def test_tail_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(30)) + "\n\n   \n"
    assert tail_lines(text, 3) == ["line 27", "line 28", "line 29"]


def test_real_compileall_syntax_error(tmp_path: Path, gate_input: MakeInput) -> None:
    _write(tmp_path / "pkg" / "ok.py", "x = 1\n")
    _write(tmp_path / "pkg" / "broken.py", "x = 1\n\ndef f(:\n    pass\n")
    command = f"{PY} -m compileall -q pkg"
    spec = CommandSpec(key="build", command=command, cwd=tmp_path, timeout=30)
    result = assess(BuildGate(), gate_input("build", result=run_command(spec)))
    assert result.status == "fail"
    assert result.actual == {"exit_code": 1, "errors": 1}
    (finding,) = result.findings
    assert (finding.path, finding.line) == ("pkg/broken.py", 3)
    assert finding.message.startswith("SyntaxError")


def test_build_says_when_its_output_was_cut(
    gate_input: MakeInput, command_result: MakeResult
) -> None:
    # Error lines in dropped output cannot be counted: the verdict must say output was dropped.
    cut = command_result("make", 0, stdout="ok\n", stdout_dropped=5_000_000, stderr_dropped=7)
    passed = assess(BuildGate(), gate_input("build", result=cut))
    assert passed.status == "pass"
    assert passed.summary == "build succeeded (first 5000007 bytes of output dropped)"
    assert passed.notes == [
        "the first 5000007 bytes of the output were dropped (capture limit); "
        "only error lines in the rest were found"
    ]
    failed = assess(BuildGate(), gate_input("build", result=command_result("make", 2, "x\n")))
    assert failed.status == "fail" and failed.notes == []
    failed = assess(
        BuildGate(), gate_input("build", result=command_result("make", 2, "x\n", stdout_dropped=3))
    )
    assert "the first 3 bytes" in failed.notes[0]


def test_build_outcomes(gate_input: MakeInput, command_result: MakeResult) -> None:
    gate = BuildGate()
    assert assess(gate, gate_input("build")).summary == "no build command configured"
    assert assess(gate, gate_input("build", command="make")).status == "skipped"

    ok = assess(gate, gate_input("build", result=command_result("make", 0, "built\n")))
    assert (ok.status, ok.summary, ok.actual) == (
        "pass",
        "build succeeded",
        {"exit_code": 0, "errors": 0},
    )

    noisy = command_result("make", 0, GCC + GCC)
    over = assess(gate, gate_input("build", result=noisy))
    assert over.status == "fail" and over.summary == "build exited 0 but printed 2 errors (max 0)"
    tolerated = assess(gate, gate_input("build", result=noisy, thresholds={"max_errors": None}))
    assert tolerated.status == "pass"
    assert tolerated.summary == "build succeeded with 2 error lines"

    failed = assess(gate, gate_input("build", result=command_result("make", 2, stderr=GCC)))
    assert failed.summary == "build failed: exit code 2, 1 error line"
    unknown = assess(gate, gate_input("build", result=command_result("make", 2, "a\nb\nboom\n")))
    assert unknown.summary == "build failed: exit code 2, 0 error lines"
    assert [f.message for f in unknown.findings] == ["a", "b", "boom"]
    silent = assess(gate, gate_input("build", result=command_result("make", 2)))
    assert silent.problems == ["the command printed nothing"]

    slow = command_result("make", None, "half", timed_out=True)
    timed_out = assess(gate, gate_input("build", result=slow, timeout=1))
    assert timed_out.status == "fail" and timed_out.summary == "build did not finish"
    assert "killed after its 1 s timeout" in timed_out.problems[0]
    assert timed_out.actual == {"exit_code": None, "errors": 0}


# -- lint ---------------------------------------------------------------------------------------

RUFF_ONE = json.dumps(
    [
        {
            "code": "F401",
            "message": "`os` imported but unused",
            "filename": "a.py",
            "location": {"row": 1, "column": 8},
            "end_location": {"row": 1, "column": 10},
            "fix": None,
            "noqa_row": 1,
            "url": None,
        }
    ]
)


def test_lint_from_stdout(gate_input: MakeInput, command_result: MakeResult) -> None:
    gate = LintGate()
    out = command_result("ruff check", 1, RUFF_ONE)
    strict = assess(gate, gate_input("lint", result=out, fmt="ruff", profile="strict"))
    assert strict.status == "fail"
    assert strict.summary == "1 error (max 0), 0 warnings (max 0)"
    assert strict.findings[0].code == "F401"
    relaxed = assess(gate, gate_input("lint", result=out, fmt="ruff", profile="relaxed"))
    assert relaxed.status == "pass"  # ruff's exit 1 is explained by the finding it reports

    clean = assess(gate, gate_input("lint", result=command_result("ruff", 0, "[]"), fmt="ruff"))
    assert clean.status == "pass" and clean.actual == {"errors": 0, "warnings": 0}

    crashed = assess(gate, gate_input("lint", result=command_result("ruff", 2, "[]"), fmt="ruff"))
    assert crashed.status == "fail" and crashed.summary == "lint command exited 2"

    garbage = command_result("ruff", 2, "ruff: error: unknown option\n")
    unreadable = assess(gate, gate_input("lint", result=garbage, fmt="ruff"))
    assert unreadable.status == "fail" and unreadable.summary == "lint report could not be read"
    assert any("exited with code 2" in p for p in unreadable.problems)

    dropped = command_result("ruff", 1, RUFF_ONE, stdout_dropped=10)
    too_big = assess(gate, gate_input("lint", result=dropped, fmt="ruff"))
    assert too_big.status == "fail" and "capture limit" in too_big.problems[0]

    slow = command_result("ruff", None, timed_out=True)
    timed_out = assess(gate, gate_input("lint", result=slow, fmt="ruff"))
    assert timed_out.summary == "lint did not finish"
    assert timed_out.actual == {"errors": None, "warnings": None}

    assert assess(gate, gate_input("lint", command="ruff", fmt="ruff")).status == "skipped"
    unknown = assess(gate, gate_input("lint", result=out, fmt="nosuchlinter"))
    assert unknown.status == "fail" and "unknown lint format" in unknown.problems[0]


def test_lint_from_files(tmp_path: Path, gate_input: MakeInput, command_result: MakeResult) -> None:
    gate = LintGate()
    eslint = str(DATA / "js" / "eslint.json")
    result = assess(gate, gate_input("lint", reports=[eslint], fmt="eslint", ran=False))
    assert result.actual == {"errors": 3, "warnings": 1}
    assert [f.severity for f in result.findings] == ["error", "error", "error", "warning"]
    relaxed = assess(
        gate, gate_input("lint", reports=[eslint], fmt="eslint", ran=False, profile="relaxed")
    )
    assert relaxed.status == "pass"

    missing = assess(gate, gate_input("lint", reports=["nope.json"], fmt="ruff", ran=False))
    assert missing.status == "fail" and "nope.json: no lint report found" in missing.problems[0]
    (tmp_path / "dir.json").mkdir()
    folder = assess(gate, gate_input("lint", reports=["dir.json"], fmt="ruff", ran=False))
    assert "dir.json: is a folder" in folder.problems[0]

    _write(tmp_path / "old.json", "[]", old=True)
    ran = command_result("ruff check -o old.json", 0)
    stale = assess(gate, gate_input("lint", result=ran, reports=["old.json"], fmt="ruff"))
    assert stale.status == "fail" and "older than the run" in stale.problems[0]


# -- test ---------------------------------------------------------------------------------------

PASSING = (
    '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite>'
)


def test_test_gate_with_sample_reports(gate_input: MakeInput) -> None:
    gate = test_kind.SuiteGate()
    xunit1 = assess(gate, gate_input("test", reports=[str(DATA / "junit" / "pytest-xunit1.xml")]))
    assert (xunit1.actual["passed"], xunit1.actual["failed"], xunit1.actual["errors"]) == (3, 2, 2)
    # pytest said "1 skipped, 1 xfailed": the xfail is told apart, as pytest tells it.
    assert (xunit1.actual["skipped"], xunit1.actual["xfailed"]) == (1, 1)
    assert xunit1.status == "fail"
    assert ", 1 skipped, 1 xfailed" in xunit1.summary
    assert all(f.name and "::" in f.name for f in xunit1.findings)

    report = [str(DATA / "junit" / "gotestsum.xml")]
    flaky_fail = assess(gate, gate_input("test", reports=report, profile="strict"))
    assert "1 flaky (flaky tests are not allowed)" in flaky_fail.summary
    assert any(f.code == "flaky" and f.severity == "warning" for f in flaky_fail.findings)
    lenient = assess(
        gate, gate_input("test", reports=report, thresholds={"min_pass_rate": 50, "flaky": "allow"})
    )
    assert lenient.status == "pass"
    assert lenient.notes == ["1 failing tests are within the profile's tolerance"]


def test_test_gate_outcomes(
    tmp_path: Path, gate_input: MakeInput, command_result: MakeResult
) -> None:
    gate = test_kind.SuiteGate()
    assert assess(gate, gate_input("test")).summary == "no JUnit report configured"

    no_cmd = assess(gate, gate_input("test", reports=["junit.xml"], ran=False))
    assert "run the tests with a JUnit reporter first" in no_cmd.problems[0]
    with_cmd = assess(gate, gate_input("test", reports=["j.xml"], result=command_result("tox", 1)))
    assert (
        "`tox` must write it (pytest: --junitxml=PATH; jest: the jest-junit reporter)"
        in (with_cmd.problems[0])
    )
    assert any("exited with code 1" in p for p in with_cmd.problems)

    _write(tmp_path / "pass.xml", PASSING)
    ok = assess(gate, gate_input("test", reports=["pass.xml"], result=command_result("t", 0)))
    assert ok.status == "pass" and ok.summary == "2 of 2 tests passed (100.00%, need 95.00%)"
    no_min = assess(
        gate, gate_input("test", reports=["pass.xml"], thresholds={"min_pass_rate": None})
    )
    assert no_min.summary == "2 of 2 tests passed (100.00%)"

    late = command_result("t", None, timed_out=True)
    killed = assess(gate, gate_input("test", reports=["pass.xml"], result=late, timeout=5))
    assert killed.status == "fail" and "killed after its 5 s timeout" in killed.problems[0]

    _write(
        tmp_path / "skips.xml",
        '<testsuite><testcase classname="t" name="a"><skipped/></testcase></testsuite>',
    )
    skipped_only = assess(gate, gate_input("test", reports=["skips.xml"]))
    assert skipped_only.status == "fail"
    assert skipped_only.summary == (
        "no tests executed (1 skipped): zero executed tests is a failure"
    )


def test_pass_rate_rounding(gate_input: MakeInput) -> None:
    run = model.TestRun(total=25000, passed=21249, failed=3751)
    gate = gate_input("test", reports=["x"], thresholds={"min_pass_rate": 85})
    result = test_kind._judge_run(gate.config, test_kind.SuiteEvidence(gate.root, run=run), run)
    assert result.status == "fail"
    # 84.996 is below 85, and the display must not round it up to a failing "85.00%, need
    # 85.00%": below the threshold it is cut to two decimals instead.
    assert result.summary == "21249 of 25000 tests passed (84.99%, need 85.00%)"
    assert result.actual["pass_rate"] == pytest.approx(84.996)


def test_a_missing_coverage_report_says_how_its_own_format_is_written(
    gate_input: MakeInput,
) -> None:
    # A jest project's missing coverage-summary.json must not be told to run coverage.py.
    gate = gate_input("coverage", reports=["coverage/coverage-summary.json"], ran=False)
    gate.config.format = "istanbul-summary"
    result = assess(CoverageGate(), gate)
    assert result.status == "fail"
    assert "--coverageReporters=json-summary" in result.problems[0]
    assert "coverage.py" not in result.problems[0]
    unnamed = assess(CoverageGate(), gate_input("coverage", reports=["c.json"], ran=False))
    assert "coverage json -o FILE" in unnamed.problems[0]
    assert "json-summary" in unnamed.problems[0]


def test_coverage_below_its_threshold_never_displays_as_reaching_it(
    tmp_path: Path, gate_input: MakeInput
) -> None:
    _write(tmp_path / "cov.info", "SF:a.js\nLF:200000\nLH:169993\nend_of_record\n")
    thresholds = {"branches": None, "functions": None, "statements": None}
    result = assess(
        CoverageGate(),
        gate_input("coverage", reports=["cov.info"], ran=False, thresholds=thresholds),
    )
    assert result.status == "fail" and result.actual["lines"] == pytest.approx(84.9965)
    assert result.summary.startswith("lines 84.99% (need 85.00%)")
    assert "lines: 84.99% < 85.00%: cover 7 more of 200000 lines" in result.notes[0]


def test_node_ids(tmp_path: Path, gate_input: MakeInput) -> None:
    gate = gate_input("test")
    path = str(tmp_path / "tests" / "test_x.py")

    def nid(classname: str, file: str | None = path) -> str:
        return test_kind.node_id(
            model.TestCaseResult("test_a", classname, "failed", file=file), base.Evidence(gate.root)
        )

    assert nid("tests.test_x") == "tests/test_x.py::test_a"
    assert nid("proj.tests.test_x") == "tests/test_x.py::test_a"
    assert nid("tests.test_x.TestThing") == "tests/test_x.py::TestThing::test_a"
    assert nid("other.module") == "other.module::test_a"
    assert nid("tests.test_x", file=None) == "tests.test_x::test_a"


# -- coverage -----------------------------------------------------------------------------------


def test_coverage_gate_on_coverage_json(gate_input: MakeInput) -> None:
    gate = CoverageGate()
    partial = str(DATA / "python" / "coverage-partial.json")
    result = assess(gate, gate_input("coverage", reports=[partial], ran=False))
    assert result.status == "fail"
    assert result.actual["lines"] == pytest.approx(28 * 100 / 39)
    assert result.actual["branches"] == pytest.approx(50.0)
    first = result.findings[0]
    assert (first.path, first.message) == ("shop/pricing.py", "6 lines not covered: lines 10-15")
    assert [f.path for f in result.findings] == [
        "shop/pricing.py",
        "shop/textutil.py",
        "shop/inventory.py",
    ]
    # One missed line reads as one: "1 line not covered: line 7", not "1 lines ...: lines 7".
    assert result.findings[2].message == "1 line not covered: line 7"
    assert any(
        n.startswith("lines: 71.79% < 85.00%: cover 6 more of 39 lines") for n in result.notes
    )

    off = assess(
        gate,
        gate_input(
            "coverage",
            reports=[partial],
            ran=False,
            thresholds={m: None for m in ("lines", "branches", "functions", "statements")},
        ),
    )
    assert off.status == "pass" and off.summary.startswith("lines 71.79%, branches 50.00%")


def test_coverage_metric_not_measured(tmp_path: Path, gate_input: MakeInput) -> None:
    document = json.loads((DATA / "python" / "coverage-partial.json").read_text())
    for key in ("covered_branches", "num_branches", "num_partial_branches", "missing_branches"):
        document["totals"].pop(key, None)
    document["meta"]["branch_coverage"] = False
    for entry in document["files"].values():
        for part in (
            entry,
            *entry.get("functions", {}).values(),
            *entry.get("classes", {}).values(),
        ):
            for key in (
                "covered_branches",
                "num_branches",
                "num_partial_branches",
                "missing_branches",
            ):
                part.get("summary", {}).pop(key, None)
            part.pop("executed_branches", None)
            part.pop("missing_branches", None)
    _write(tmp_path / "nobranch.json", json.dumps(document))
    result = assess(
        CoverageGate(),
        gate_input("coverage", reports=["nobranch.json"], ran=False, profile="relaxed"),
    )
    assert result.actual["branches"] is None
    assert result.status == "fail"
    assert "branches not measured (need 65.00%)" in result.summary
    assert any("turn on branch coverage" in p for p in result.problems)


def test_coverage_report_problems(
    tmp_path: Path, gate_input: MakeInput, command_result: MakeResult
) -> None:
    gate = CoverageGate()
    nothing = assess(gate, gate_input("coverage", ran=False))
    assert nothing.status == "fail" and "no coverage report configured" in nothing.problems[0]
    missing = assess(gate, gate_input("coverage", reports=["cov.json"], ran=False))
    assert "cov.json: no coverage report found" in missing.problems[0]
    summary = (DATA / "js" / "coverage-summary.json").read_text()
    _write(tmp_path / "a" / "s.json", summary)
    _write(tmp_path / "b" / "s.json", summary)
    several = assess(gate, gate_input("coverage", reports=["*/s.json"], ran=False))
    # istanbul summaries have no per-line data, so two shards of them cannot be merged.
    assert several.status == "fail"
    assert "cannot be merged" in " ".join(several.problems)
    _write(tmp_path / "old.json", summary, old=True)
    writer = command_result("npx c8 report", 0)
    stale = assess(gate, gate_input("coverage", reports=["old.json"], result=writer))
    assert "older than the run" in stale.problems[0]
    late = command_result("npx c8 report", None, timed_out=True)
    fresh = _write(tmp_path / "new.json", summary)
    killed = assess(
        gate, gate_input("coverage", reports=[fresh.name], result=late, thresholds={"branches": 50})
    )
    assert killed.status == "fail" and "timeout" in killed.problems[0]


def test_line_ranges() -> None:
    assert line_ranges([]) == ""
    assert line_ranges([9, 1, 2, 3, 7, 10]) == "1-3, 7, 9-10"
    assert line_ranges(list(range(0, 40, 2)), limit=3) == "0, 2, 4, …"


# -- custom -------------------------------------------------------------------------------------

NPM_AUDIT = {
    "auditReportVersion": 2,
    "vulnerabilities": {
        "lodash": {"name": "lodash", "severity": "high", "via": [{"severity": "high"}]},
        "minimist": {"name": "minimist", "severity": "moderate", "via": ["x"]},
    },
    "metadata": {"vulnerabilities": {"low": 0, "moderate": 1, "high": 1, "total": 2}},
}
BANDIT = {
    "errors": [],
    "results": [
        {"filename": "a.py", "issue_severity": "LOW", "issue_confidence": "HIGH"},
        {"filename": "b.py", "issue_severity": "MEDIUM", "issue_confidence": "HIGH"},
    ],
    "metrics": {"_totals": {"SEVERITY.LOW": 1, "SEVERITY.MEDIUM": 1}},
}


def test_custom_exit_code_only(gate_input: MakeInput, command_result: MakeResult) -> None:
    gate = CustomGate()
    assert assess(gate, gate_input("custom", name="c")).status == "skipped"
    assert assess(gate, gate_input("custom", command="x")).summary == "not run (--no-run)"
    ok = assess(gate, gate_input("custom", result=command_result("x", 0)))
    assert (ok.status, ok.actual) == ("pass", {"exit_code": 0})
    bad = assess(gate, gate_input("custom", result=command_result("x", 3, "why it failed")))
    assert bad.status == "fail" and bad.summary == "exit code 3"
    assert "why it failed" in bad.notes[0]
    slow = assess(
        gate, gate_input("custom", name="scan", result=command_result("x", None, timed_out=True))
    )
    assert slow.status == "fail" and slow.summary == "scan did not finish"


def test_custom_metric(tmp_path: Path, gate_input: MakeInput, command_result: MakeResult) -> None:
    gate = CustomGate()

    def judge(stdout: str, exit_code: int = 0, **limits: float) -> tuple[str, str]:
        result = assess(
            gate,
            gate_input(
                "custom",
                result=command_result("scan", exit_code, stdout),
                options={"metric": "summary.items.1.score"},
                thresholds=limits,
            ),
        )
        return result.status, result.summary + " | " + " ".join(result.problems)

    doc = json.dumps({"summary": {"items": [{"score": 1}, {"score": 7.5}]}})
    assert judge(doc, min=5) == ("pass", "summary.items.1.score = 7.5 (min 5) | ")
    assert judge(doc, min=5, max=7)[0] == "fail"
    assert judge(doc, max=7)[1].startswith("summary.items.1.score = 7.5 (max 7)")
    assert judge(doc, 1, min=5)[0] == "fail"  # the command's failure still counts
    for broken in ('{"summary": {"items": [1]}}', '{"summary": {"items": [{"score": "9"}]}}'):
        status, text = judge(broken, min=5)
        assert status == "fail" and "could not be measured" in text
    for not_finite in ("NaN", "Infinity", "-Infinity", "1" + "0" * 400):
        status, text = judge(
            f'{{"summary": {{"items": [0, {{"score": {not_finite}}}]}}}}', min=5, max=9
        )
        assert status == "fail", not_finite
        assert "not a finite number" in text
    status, text = judge("", min=1)
    assert status == "fail" and "is empty" in text

    _write(tmp_path / "score.json", doc)
    from_file = assess(
        gate,
        gate_input(
            "custom",
            reports=["score.json"],
            ran=False,
            options={"metric": "summary.items.0.score"},
            thresholds={"min": 1},
        ),
    )
    assert from_file.status == "pass" and from_file.actual == {"value": 1.0, "exit_code": None}


def test_custom_severity(tmp_path: Path, gate_input: MakeInput, command_result: MakeResult) -> None:
    gate = CustomGate()

    def judge(document: object, allowed: str, exit_code: int = 0) -> tuple[str, str]:
        result = assess(
            gate,
            gate_input(
                "custom",
                result=command_result("audit", exit_code, json.dumps(document)),
                thresholds={"max_severity": allowed},
            ),
        )
        return result.status, result.summary + " | " + " ".join(result.problems + result.notes)

    status, text = judge(NPM_AUDIT, "moderate", 1)
    assert status == "fail"
    assert text.startswith("2 high, 1 moderate (max severity moderate)")
    assert "above the tolerated severity: 2 high" in text
    assert judge(NPM_AUDIT, "high", 1)[0] == "pass"
    assert judge(BANDIT, "low")[0] == "fail"
    assert judge(BANDIT, "medium", 1)[0] == "pass"
    assert judge({"results": []}, "low") == ("pass", "no findings (max severity low) | ")
    crashed = judge({"results": []}, "low", 2)
    assert crashed[0] == "fail" and "exited with code 2 but its report shows nothing" in crashed[1]
    # Trivy's "UNKNOWN" (or any word not on the scale) cannot be ranked: it is never tolerated
    # by accident, and the gate says why.
    trivy = {"Results": [{"Vulnerabilities": [{"Severity": "UNKNOWN"}, {"Severity": "LOW"}]}]}
    status, text = judge(trivy, "high", 1)
    assert status == "fail" and text.startswith("1 unknown, 1 low (max severity high)")
    assert "above the tolerated severity: 1 unknown" in text
    assert "cannot rank the severity 'unknown', so it counts as the highest" in text
    assert "lowest first: none, info, informational, note < low, minor < warning" in text
    assert judge(trivy, "critical", 1) == ("pass", "1 unknown, 1 low (max severity critical) | ")
    deep: object = {"severity": "critical"}
    for _ in range(5000):
        deep = {"next": deep}
    assert jsonvalue.severities(deep).__next__() == "critical"


def test_custom_report_problems(
    tmp_path: Path, gate_input: MakeInput, command_result: MakeResult
) -> None:
    gate = CustomGate()
    options = {"metric": "n"}
    missing = assess(
        gate,
        gate_input("custom", reports=["r.json"], ran=False, options=options, thresholds={"max": 1}),
    )
    assert missing.status == "fail" and "r.json: no JSON report found" in missing.problems[0]
    _write(tmp_path / "r1.json", "{}")
    _write(tmp_path / "r2.json", "{}")
    several = assess(
        gate,
        gate_input(
            "custom", reports=["r*.json"], ran=False, options=options, thresholds={"max": 1}
        ),
    )
    assert several.status == "fail"
    _write(tmp_path / "old.json", '{"n": 0}', old=True)
    stale = assess(
        gate,
        gate_input(
            "custom",
            reports=["old.json"],
            result=command_result("scan -o old.json", 0),
            options=options,
            thresholds={"max": 1},
        ),
    )
    assert stale.status == "fail" and "older than the run" in stale.problems[0]
    (tmp_path / "dir.json").mkdir()
    folder = assess(
        gate,
        gate_input(
            "custom", reports=["dir.json"], ran=False, options=options, thresholds={"max": 1}
        ),
    )
    assert folder.status == "fail" and "dir.json: is a folder" in folder.problems[0]
    no_run = assess(
        gate, gate_input("custom", command="scan", ran=False, thresholds={"max_severity": "low"})
    )
    assert no_run.status == "skipped"


def test_jsonvalue_load_json_never_raises_anything_else() -> None:
    with pytest.raises(model.ReportError, match="nested too deeply"):
        jsonvalue.load_json("[" * 100000 + "]" * 100000, "deep.json")
    with pytest.raises(model.ReportError, match="truncated"):
        jsonvalue.load_json('{"a": ', "cut.json")
    with pytest.raises(model.ReportError, match=r"has no value at `a\.b`"):
        jsonvalue.lookup({"a": {}}, "a.b.c", "r.json")
    with pytest.raises(model.ReportError, match="not a number"):
        jsonvalue.lookup({"a": True}, "a", "r.json")
    assert jsonvalue.lookup([[0, 5]], "0.1", "r.json") == 5.0


def test_rare_evidence_problems(
    tmp_path: Path,
    gate_input: MakeInput,
    command_result: MakeResult,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    late = command_result("pytest", None, timed_out=True)
    missing = assess(test_kind.SuiteGate(), gate_input("test", reports=["j.xml"], result=late))
    assert "timeout" in missing.problems[0] and "no JUnit report found" in missing.problems[1]

    (tmp_path / "dangling.xml").symlink_to(tmp_path / "nowhere.xml")
    ran = command_result("pytest", 0)
    dangling = assess(
        test_kind.SuiteGate(), gate_input("test", reports=["dangling.xml"], result=ran)
    )
    assert dangling.status == "fail" and "not found" in dangling.problems[0]

    _write(tmp_path / "r.json", "[]")

    def refuse(*args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", refuse)
    locked = assess(LintGate(), gate_input("lint", reports=["r.json"], fmt="ruff", ran=False))
    assert "r.json: cannot be read: Permission denied" in locked.problems[0]


def test_unmeasured_metric_without_threshold_is_left_out(
    tmp_path: Path, gate_input: MakeInput
) -> None:
    document = json.loads((DATA / "python" / "coverage-partial.json").read_text())
    document["meta"]["branch_coverage"] = False
    for key in ("covered_branches", "num_branches", "num_partial_branches", "missing_branches"):
        document["totals"].pop(key, None)
    for entry in document["files"].values():
        for part in (
            entry,
            *entry.get("functions", {}).values(),
            *entry.get("classes", {}).values(),
        ):
            for key in ("covered_branches", "num_branches", "num_partial_branches"):
                part.get("summary", {}).pop(key, None)
            part.pop("executed_branches", None)
            part.pop("missing_branches", None)
    _write(tmp_path / "c.json", json.dumps(document))
    thresholds = {"lines": 10, "branches": None, "functions": None, "statements": None}
    result = assess(
        CoverageGate(), gate_input("coverage", reports=["c.json"], ran=False, thresholds=thresholds)
    )
    assert result.status == "pass"
    assert "branches" not in result.summary and result.actual["branches"] is None


def test_error_shapes_cut_short() -> None:
    (rust,) = extract_errors("error[E0425]: cannot find value `x`")
    assert (rust.code, rust.path) == ("E0425", None)
    far = extract_errors("error: boom\n  |\n  |\n  |\n --> src/a.rs:1:1\n")
    assert far[0].path is None
    long = "*** Error compiling 'a.py'...\n" + "    noise\n" * 15
    (compiled,) = extract_errors(long)
    assert (compiled.path, compiled.message) == ("a.py", "could not be compiled")


def test_evidence_a_door_measured_and_partial_runs(gate_input: MakeInput) -> None:
    partial = model.TestRun(total=2, passed=2, partial=["-k smoke"])
    suite = test_kind.SuiteGate()
    strict = gate_input("test", profile="strict")
    result = suite.judge(strict.config, test_kind.SuiteEvidence(strict.root, run=partial))
    assert result.status == "fail" and "; partial run: -k smoke" in result.summary
    assert "only part of the suite ran" in result.problems[0]
    standard = gate_input("test")
    allowed = suite.judge(standard.config, test_kind.SuiteEvidence(standard.root, run=partial))
    assert allowed.status == "pass"
    assert allowed.notes == ["judged only the tests that ran: -k smoke"]
    # The pytest door's run stopped by its integrity gate: no "partial run, run the whole
    # suite" (review 27: the user had), under any profile.
    stopped = model.TestRun(partial=["stopped before the first test by the integrity gate"])
    said = suite.judge(standard.config, test_kind.SuiteEvidence(standard.root, run=stopped))
    assert said.status == "fail" and "partial" not in said.summary
    assert said.problems == [
        "no test ran (stopped before the first test by the integrity gate): the change's "
        "integrity findings come first; resolve them, then run the suite again"
    ]

    coverage = gate_input("coverage", thresholds={"branches": None})
    report = model.CoverageReport(
        "pytest-cov", "coverage-data", lines=model.Ratio(9, 10), statements=model.Ratio(9, 10)
    )
    measured = CoverageEvidence(coverage.root, report=report, measured_as="data")
    judged = CoverageGate().judge(coverage.config, measured)
    assert judged.summary.startswith("lines 90.00% (need 85.00%)")
    error = model.ReportError("pytest-cov", "no data collected")
    missing = CoverageEvidence(coverage.root, error=error, measured_as="data")
    broken = CoverageGate().judge(coverage.config, missing)
    assert broken.status == "fail" and broken.problems == ["pytest-cov: no data collected"]
    assert broken.summary == "no usable coverage data"
