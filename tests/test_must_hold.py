"""The issue's "must hold" list, end to end: real tools on tiny projects, through the CLI."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import BILLION_LAUGHS, CliRun, sample

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]

PYTEST_CMD = (
    "{py} -m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml -o junit_family=xunit1"
)

TWENTY_TESTS = "\n".join(
    [
        "import pytest",
        "",
        "",
        "@pytest.mark.parametrize('n', range(19))",
        "def test_square_is_not_negative(n):",
        "    assert n * n >= 0",
        "",
        "",
        "def test_tax_zero():",
        "    rate = 0.015",
        "    assert rate * 100 == 0.0, 'zero-rated items pay no tax'",
        "",
    ]
)


def _pytest_project(project: Path, write_config: WriteConfig, tests: str) -> None:
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_calc.py").write_text(tests)
    write_config(
        f"profile: strict\ngates:\n  test:\n    command: {PYTEST_CMD}\n"
        "    report: .agentgate/junit.xml\n"
    )


def test_one_failing_test_of_twenty(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    _pytest_project(project, write_config, TWENTY_TESTS)

    strict = agentgate("verify", "--format", "json")
    assert strict.code == 1
    gate = strict.gate("test")
    assert gate["status"] == "fail"
    assert gate["actual"] == {
        "total": 20,
        "passed": 19,
        "failed": 1,
        "errors": 0,
        "skipped": 0,
        "flaky": 0,
        "xfailed": 0,
        "xpassed": 0,
        "pass_rate": 95.0,
    }
    assert gate["summary"] == "19 of 20 tests passed (95.00%, need 100.00%)"
    assert gate["exit_code"] == 1
    text = strict.verdict()["continuation"]
    assert text.splitlines()[0].startswith("COMPLETION REJECTED")
    line = next(ln for ln in text.splitlines() if "tests/test_calc.py::test_tax_zero" in ln)
    assert "AssertionError: zero-rated items pay no tax" in line

    # The same report judged by the other profiles (report-only: no second pytest run).
    standard = agentgate("verify", "--no-run", "--profile", "standard", "--format", "json")
    assert standard.code == 0
    assert standard.verdict()["status"] == "pass"
    assert standard.verdict()["continuation"] is None
    relaxed = agentgate("verify", "--no-run", "--profile", "relaxed")
    assert relaxed.code == 0
    assert "PASS  test  19 of 20 tests passed (95.00%, need 90.00%)" in relaxed.out


def test_two_ruff_errors(project: Path, write_config: WriteConfig, agentgate: Agentgate) -> None:
    (project / "ruff.toml").write_text('[lint]\nselect = ["F"]\n')
    (project / "bad.py").write_text("import os\n\n\ndef f():\n    unused = 1\n")
    write_config(
        "gates:\n  lint:\n    command: {py} -m ruff check --output-format json --no-cache .\n"
        "    format: ruff\n"
    )
    for profile in ("strict", "standard"):
        run = agentgate("verify", "--profile", profile, "--format", "json")
        assert run.code == 1, profile
        gate = run.gate("lint")
        assert gate["actual"] == {"errors": 2, "warnings": 0}
        lines = run.verdict()["continuation"].splitlines()
        assert "  - bad.py:1 F401: `os` imported but unused" in lines
        assert any(ln.startswith("  - bad.py:5 F841: Local variable `unused`") for ln in lines)
    relaxed = agentgate("verify", "--profile", "relaxed", "--format", "json")
    assert relaxed.code == 0
    assert relaxed.gate("lint")["summary"] == "2 errors (max 5), 0 warnings (max 100)"


# Seven ifs (14 branches); every line runs but three ifs are always true: branches 11/14.
BRANCHY = """\
def check(x):
    total = 0
    if x > 0:
        total += 1
    if x > 1:
        total += 1
    if x > 2:
        total += 1
    if x > 3:
        total += 1
    if x >= -5:
        total += 1
    if x >= -6:
        total += 1
    if x >= -7:
        total += 1
    return total


check(0)
check(5)
"""


def test_branch_coverage_is_not_percent_covered(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    (project / "prog.py").write_text(BRANCHY)
    data = ".agentgate/.coverage"
    write_config(
        "gates:\n  coverage:\n"
        f"    command: {{py}} -m coverage run --branch --data-file={data} prog.py && "
        f"{{py}} -m coverage json --data-file={data} -o .agentgate/coverage.json\n"
        "    report: .agentgate/coverage.json\n"
    )
    strict = agentgate("verify", "--profile", "strict", "--format", "json")
    assert strict.code == 1
    gate = strict.gate("coverage")
    assert gate["actual"]["lines"] == 100.0
    assert gate["actual"]["branches"] == pytest.approx(11 * 100 / 14)
    assert "lines 100.00% (need 90.00%)" in gate["summary"]
    assert "branches 78.57% (need 85.00%)" in gate["summary"]
    report = json.loads((project / ".agentgate" / "coverage.json").read_text())
    mixed = f"{report['totals']['percent_covered']:.2f}"
    assert mixed not in json.dumps(strict.verdict())  # (n + 11) / (n + 14) never shows up
    assert "branches: 78.57% < 85.00%: cover 1 more of 14 branches" in gate["summary"] + str(
        strict.verdict()["continuation"]
    )

    standard = agentgate("verify", "--no-run", "--profile", "standard", "--format", "json")
    assert standard.code == 1
    assert standard.gate("coverage")["summary"].startswith("lines 100.00% (need 85.00%)")
    assert agentgate("verify", "--no-run", "--profile", "relaxed").code == 0


def test_branch_coverage_from_sample_reports(agentgate: Agentgate, project: Path) -> None:
    # sample() relocates the data file's absolute paths to this checkout, so the sources are found.
    for name in ("coverage-branches.json", "coverage-branches.data"):
        report = sample(f"python/{name}")
        run = agentgate("verify", "--no-run", "--coverage", str(report), "--format", "json")
        actual = run.gate("coverage")["actual"]
        assert actual["lines"] == 100.0, name
        assert actual["branches"] == pytest.approx(78.57142857142857), name
        assert run.code == 1, name  # standard wants 80% of branches


# -- evidence that cannot be trusted fails fast, naming the file -------------------------------

XXE = """<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY secret SYSTEM "file://{secret}">]>
<testsuite><testcase classname="t" name="a"><failure message="&secret;"/></testcase></testsuite>
"""

BROKEN = {
    "junit-missing": ("--junit", None),
    "junit-not-xml": ("--junit", '{"tests": 3}'),
    "junit-bomb": ("--junit", BILLION_LAUGHS),
    "junit-xxe": ("--junit", XXE),
    "junit-truncated": ("--junit", '<testsuite><testcase classname="t" name="a"><fail'),
    "junit-empty": ("--junit", ""),
    "coverage-missing": ("--coverage", None),
    "coverage-not-json": ("--coverage", "<coverage/>"),
    "coverage-truncated": ("--coverage", '{"meta": {"format": 3}, "totals": {"covered_lines": 3'),
    "lint-missing": ("--lint", None),
    "lint-not-json": ("--lint", "bad.py:1:1: F401 `os` imported but unused"),
    "lint-truncated": ("--lint", '[{"code": "F401", "filename": "bad.py"'),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_untrustworthy_evidence_fails_naming_the_file(
    case: str, project: Path, agentgate: Agentgate
) -> None:
    flag, content = BROKEN[case]
    report = project / f"{case}.report"
    secret = project / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    if content is not None:
        report.write_text(content.replace("{secret}", str(secret)))
    extra = ["--lint-format", "ruff"] if flag == "--lint" else []
    started = time.monotonic()
    run = agentgate("verify", "--no-run", flag, str(report), *extra, "--format", "json")
    assert time.monotonic() - started < 2.0
    assert run.code == 1
    verdict = run.verdict()
    assert verdict["status"] == "fail"
    (gate,) = verdict["gates"]
    assert gate["status"] == "fail"
    assert any(report.name in p for p in gate["problems"]), gate["problems"]
    assert report.name in verdict["continuation"]
    blob = run.out + run.err
    assert "Traceback" not in blob
    assert "lollol" not in blob
    assert "TOP-SECRET-VALUE" not in blob


def test_zero_tests_collected_is_a_failure(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    _pytest_project(project, write_config, "def helper():\n    return 1\n")
    run = agentgate("verify", "--format", "json")
    assert run.code == 1
    gate = run.gate("test")
    assert gate["exit_code"] == 5
    assert gate["status"] == "fail"
    assert gate["summary"].startswith("no tests executed")
    assert gate["actual"]["pass_rate"] is None


def _dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    # A zombie waiting for a reaper that never comes (PID 1 in a container) is dead too.
    return status.exists() and "\nState:\tZ" in status.read_text()


@pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")
def test_hanging_command_is_killed_with_its_children(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config(
        "gates:\n  build:\n"
        "    command: sh -c 'sleep 30 & echo $! > child.pid; wait'\n"
        "    timeout: 0.5\n"
    )
    started = time.monotonic()
    run = agentgate("verify", "--format", "json")
    assert time.monotonic() - started < 5.0
    assert run.code == 1
    gate = run.gate("build")
    assert gate["status"] == "fail"
    assert gate["summary"] == "build did not finish"
    assert any("killed after its 0.5 s timeout" in p for p in gate["problems"])
    assert "killed after its 0.5 s timeout" in run.verdict()["continuation"]
    pid = int((project / "child.pid").read_text())
    deadline = time.monotonic() + 2.0
    while not _dead(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _dead(pid)


def test_rounding_never_lifts_a_value_over_its_threshold(
    project: Path, agentgate: Agentgate
) -> None:
    total = {m: {"total": 25000, "covered": 21249} for m in ("lines", "statements")}
    total.update({m: {"total": 10, "covered": 10} for m in ("functions", "branches")})
    summary = {"total": total, "src/big.js": total}
    report = project / "coverage-summary.json"
    report.write_text(json.dumps(summary))
    run = agentgate("verify", "--no-run", "--coverage", str(report), "--format", "json")
    gate = run.gate("coverage")
    assert gate["actual"]["lines"] == pytest.approx(84.996)
    assert gate["status"] == "fail"
    # Judged unrounded; displayed with two decimals that never round up to the threshold (a
    # failing "85.00% (need 85.00%)" would read as a contradiction).
    assert "lines 84.99% (need 85.00%)" in gate["summary"]
    assert "cover 1 more of 25000 lines" in run.verdict()["continuation"]
