"""Gates over the reports real teams have: several lint tools, test and coverage shards,
formats recognised by content, flaky tests per profile."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from _helpers import DATA, CliRun

Run = Callable[..., CliRun]


def _copy(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dest)
    return dest


def test_several_lint_reports_are_counted_together_and_tagged(
    project: Path, agentgate: Run
) -> None:
    _copy(DATA / "python" / "ruff.json", project / "reports" / "ruff.json")
    _copy(DATA / "js" / "eslint.json", project / "reports" / "eslint.json")
    # No --lint-format: each report is recognised by its content.
    run = agentgate(
        "verify",
        "--no-run",
        "--lint",
        "reports/ruff.json",
        "--lint",
        "reports/eslint.json",
        "--profile",
        "relaxed",
        "--format",
        "json",
    )
    lint = run.gate("lint")
    # From ruff 2 errors; from eslint 3 errors (one fatal parse error) and 1 warning.
    assert lint["actual"] == {"errors": 5, "warnings": 1}
    assert {f["tool"] for f in lint["findings"]} == {"ruff", "eslint"}
    assert lint["status"] == "pass"  # relaxed tolerates 5 errors
    strict = agentgate(
        "verify",
        "--no-run",
        "--lint",
        "reports/ruff.json",
        "--lint",
        "reports/eslint.json",
        "--profile",
        "strict",
        "--format",
        "json",
    )
    assert strict.code == 1 and strict.gate("lint")["status"] == "fail"


def test_a_lint_report_of_unknown_shape_lists_the_formats(project: Path, agentgate: Run) -> None:
    (project / "lint.json").write_text('{"hello": "world"}', encoding="utf-8")
    run = agentgate("verify", "--no-run", "--lint", "lint.json", "--format", "json")
    lint = run.gate("lint")
    assert run.code == 1 and lint["status"] == "fail"
    message = " ".join(lint["problems"])
    assert "lint.json" in message
    for name in ("ruff", "eslint", "pylint", "mypy", "flake8", "sarif"):
        assert name in message


def test_test_shards_must_all_be_there(
    project: Path, agentgate: Run, write_config: Callable[[str], Path]
) -> None:
    _copy(DATA / "junit" / "pytest-xunit1.xml", project / "shards" / "1" / "junit.xml")
    _copy(DATA / "junit" / "pytest-xunit2.xml", project / "shards" / "2" / "junit.xml")
    write_config("gates:\n  test:\n    report: 'shards/*/junit.xml'\n    expected_files: 3\n")
    run = agentgate("verify", "--no-run", "--format", "json")
    test = run.gate("test")
    assert run.code == 1 and test["status"] == "fail"
    assert "2 report files matched, expected_files is 3" in test["problems"][0]
    assert "shards/1/junit.xml" in test["problems"][0]


def test_reruns_across_shards_count_once(project: Path, agentgate: Run) -> None:
    # The same pytest run's report twice: every test identity appears in both shards.
    _copy(DATA / "junit" / "pytest-xunit1.xml", project / "a" / "junit.xml")
    _copy(DATA / "junit" / "pytest-xunit1.xml", project / "b" / "junit.xml")
    once = agentgate("verify", "--no-run", "--junit", "a/junit.xml", "--format", "json")
    twice = agentgate("verify", "--no-run", "--junit", "*/junit.xml", "--format", "json")
    assert twice.gate("test")["actual"] == once.gate("test")["actual"]
    assert once.gate("test")["actual"]["total"] == 9


def test_flaky_tests_fail_strict_and_are_listed_by_standard(project: Path, agentgate: Run) -> None:
    _copy(DATA / "junit" / "gotestsum.xml", project / "junit.xml")
    strict = agentgate(
        "verify", "--no-run", "--junit", "junit.xml", "--profile", "strict", "--format", "json"
    )
    standard = agentgate(
        "verify", "--no-run", "--junit", "junit.xml", "--profile", "standard", "--format", "json"
    )
    for run in (strict, standard):
        gate = run.gate("test")
        assert gate["actual"]["flaky"] == 1
        assert any(f["code"] == "flaky" and "TestFlaky" in f["name"] for f in gate["findings"])
    assert "flaky tests are not allowed" in strict.gate("test")["summary"]
    assert "flaky tests are not allowed" not in standard.gate("test")["summary"]


def test_cobertura_has_no_function_data_so_a_function_threshold_fails(
    project: Path, agentgate: Run
) -> None:
    _copy(DATA / "python" / "coverage-partial.xml", project / "coverage.xml")
    run = agentgate("verify", "--no-run", "--coverage", "coverage.xml", "--format", "json")
    cov = run.gate("coverage")
    # 28 of 39 lines, 7 of 14 branches, counted from the <line> elements.
    assert abs(cov["actual"]["lines"] - 28 * 100 / 39) < 1e-9
    assert cov["actual"]["branches"] == 50.0
    assert cov["actual"]["functions"] is None
    assert cov["status"] == "fail"
    assert any("functions coverage is not in this report" in p for p in cov["problems"])


def test_lcov_shards_are_merged_line_by_line(project: Path, agentgate: Run) -> None:
    first = "SF:app.py\nDA:1,1\nDA:2,0\nDA:3,1\nDA:4,0\nLF:4\nLH:2\nend_of_record\n"
    second = "SF:app.py\nDA:1,1\nDA:2,1\nDA:3,0\nDA:4,1\nLF:4\nLH:3\nend_of_record\n"
    (project / "s1").mkdir()
    (project / "s2").mkdir()
    (project / "s1" / "lcov.info").write_text(first, encoding="utf-8")
    (project / "s2" / "lcov.info").write_text(second, encoding="utf-8")
    (project / "agentgate.yml").write_text(
        "gates:\n  coverage:\n    report: 's*/lcov.info'\n    format: lcov\n"
        "    min_files: 2\n    branches: null\n    functions: null\n",
        encoding="utf-8",
    )
    run = agentgate("verify", "--no-run", "--format", "json")
    cov = run.gate("coverage")
    # Each shard alone covers 2 or 3 of 4 lines; together every line ran.
    assert cov["actual"]["lines"] == 100.0
    assert cov["status"] == "pass"


PARALLEL_CONFIG = """\
gates:
  test:
    command: >-
      {py} -m coverage run --branch --data-file=.agentgate/.coverage
      -m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml
    report: .agentgate/junit.xml
  coverage:
    report: .agentgate/.coverage
    format: coverage-data
"""


def test_parallel_coverage_data_of_this_run_is_found_and_earlier_runs_are_not(
    project: Path, agentgate: Run, write_config: Callable[[str], Path]
) -> None:
    # `parallel = true` (attrs, pluggy) makes coverage.py write .coverage.<host>.pid<N>.<random>
    # in place of the configured data file.
    (project / "pyproject.toml").write_text(
        "[tool.coverage.run]\nparallel = true\nsource = ['calc']\n", encoding="utf-8"
    )
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (project / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n", encoding="utf-8"
    )
    write_config(PARALLEL_CONFIG)
    # An earlier run's data file: not SQLite, and old. Combined, it would fail the read.
    stale = project / ".agentgate" / ".coverage.oldhost.pid1.x"
    stale.parent.mkdir()
    stale.write_text("an earlier run's data", encoding="utf-8")
    os.utime(stale, (1_000_000_000, 1_000_000_000))
    run = agentgate("verify", "--profile", "strict", "--format", "json", "--no-cache")
    coverage = run.gate("coverage")
    assert coverage["status"] == "pass", coverage
    assert coverage["actual"]["lines"] == 100.0
    written = [p for p in (project / ".agentgate").glob(".coverage.*") if p != stale]
    assert len(written) == 1 and not (project / ".agentgate" / ".coverage").exists()


def test_parallel_data_only_from_earlier_runs_is_named_as_such(
    project: Path, agentgate: Run, write_config: Callable[[str], Path]
) -> None:
    write_config(PARALLEL_CONFIG.replace("-m coverage run", "-c 'raise SystemExit(0)' #"))
    stale = project / ".agentgate" / ".coverage.oldhost.pid1.x"
    stale.parent.mkdir()
    stale.write_text("old", encoding="utf-8")
    os.utime(stale, (1_000_000_000, 1_000_000_000))
    coverage = agentgate("verify", "--format", "json", "--no-cache").gate("coverage")
    assert coverage["status"] == "fail"
    assert "the 1 parallel data files beside it (.coverage.*) were not written by this run" in (
        json.dumps(coverage)
    )
