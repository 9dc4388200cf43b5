"""The hostile inputs of tests/data/bad/: each gets its exact verdict, never a pass.

A report no honest tool writes (a count that is infinite, negative, a string or 5,000 digits; a
total its own files contradict; a severity the tool never uses; a DTD, a truncated file, a lone
byte order mark) fails its gate with the file and what is wrong, and the verdict stays strict
JSON with every control character made visible.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _helpers import DATA

from pytest_agentgate.cli.main import main
from pytest_agentgate.redact import CONTROLS

BAD = DATA / "bad"

JUNIT = ["--junit"]
COVERAGE = ["--coverage"]
NO_TEST_REPORT = "no usable test report"
NO_COVERAGE_REPORT = "no usable coverage report"
NO_LINT_REPORT = "lint report could not be read"


def lint(fmt: str) -> list[str]:
    return ["--lint-format", fmt, "--lint"]


# JSON nested 1,500 deep: Python 3.10 to 3.12 refuse to parse it; 3.13 parses it (its limit is
# the C stack) and the reader then finds a list where an object belongs. Never a pass.
DEEP_JSON_REFUSED = sys.version_info < (3, 13)

# file -> (the report flags, the gate's summary, what its first problem says). When the gate read
# the report and judged it (failing tests, lint findings, uncovered lines), the first problem is
# its first finding, "name-or-path: message"; None: the gate has neither problems nor findings
# (its summary says it all).
CASES: dict[str, tuple[list[str], str, str | None]] = {
    # --- JUnit XML ------------------------------------------------------------------------------
    "junit-empty.xml": (JUNIT, NO_TEST_REPORT, "JUnit report is empty"),
    "junit-bom-only.xml": (JUNIT, NO_TEST_REPORT, "JUnit report contains no XML element"),
    "junit-not-xml.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "JUnit report is not well-formed XML (syntax error at line 1, column 1)",
    ),
    "junit-truncated.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "JUnit report is truncated (unclosed token at line 2, column 112)",
    ),
    "junit-invalid-utf8.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "not well-formed XML (not well-formed (invalid token) at line 2, column 61)",
    ),
    "junit-unknown-encoding.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "JUnit report cannot be decoded: unknown encoding: x-agentgate-pass",
    ),
    "junit-entity-expansion.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "DTD/entity declarations are not allowed in a JUnit report",
    ),
    "junit-external-entity.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "DTD/entity declarations are not allowed in a JUnit report",
    ),
    "junit-doctype-system.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "DTD/entity declarations are not allowed in a JUnit report",
    ),
    "junit-root-html.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "not a JUnit report: the root element is <html>, expected <testsuites> or <testsuite>",
    ),
    "junit-raw-ansi-escape.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "not well-formed XML (not well-formed (invalid token) at line 2, column 95)",
    ),
    "junit-ansi-character-reference.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "not well-formed XML (reference to invalid character number at line 2, column 95)",
    ),
    "junit-xml-1.1-controls.xml": (
        JUNIT,
        NO_TEST_REPORT,
        "not well-formed XML (reference to invalid character number at line 2, column 95)",
    ),
    "junit-c1-controls-in-message.xml": (
        JUNIT,
        "0 of 1 tests passed (0.00%, need 100.00%)",
        "tests.test_a::test_one: boom\\x9b2K\\x9b1A\\x85PASSED test_one",
    ),
    "junit-controls-in-failure-text.xml": (
        JUNIT,
        "0 of 1 tests passed (0.00%, need 100.00%)",
        "tests.test_a::test_\\x9d0;fake title\\x9c: \\x9b2K\\x9b1AE   assert 1 == 2",
    ),
    "junit-testcase-no-name.xml": (
        JUNIT,
        "0 of 1 tests passed (0.00%, need 100.00%)",
        "tests.test_a::<unnamed testcase #1>: assert 1 == 2",
    ),
    "junit-tests-count-lies.xml": (
        JUNIT,
        "no tests executed (0 skipped): zero executed tests is a failure",
        None,
    ),
    "junit-count-lies-over-failure.xml": (
        JUNIT,
        "1 of 2 tests passed (50.00%, need 100.00%)",
        "tests.test_a::test_two: assert 0 == 1",
    ),
    "junit-all-skipped.xml": (
        JUNIT,
        "no tests executed (2 skipped): zero executed tests is a failure",
        None,
    ),
    "junit-failure-then-appended-pass.xml": (
        JUNIT,
        "2 of 2 tests passed (100.00%, need 100.00%), 1 flaky (flaky tests are not allowed)",
        "tests.test_a::test_two: flaky: failed, then passed on a rerun (assert 0 == 1)",
    ),
    # --- lcov ----------------------------------------------------------------------------------
    "lcov-empty.info": (COVERAGE, NO_COVERAGE_REPORT, "lcov-empty.info: is empty"),
    "lcov-invalid-utf8.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is not UTF-8 text (undecodable byte at offset 18)",
    ),
    "lcov-summary-text.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is not a coverage report agentgate reads (not JSON, XML, lcov or a SQLite data file)",
    ),
    "lcov-stray-end-of-record.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is not a coverage report agentgate reads (not JSON, XML, lcov or a SQLite data file)",
    ),
    "lcov-da-before-sf.info": (COVERAGE, NO_COVERAGE_REPORT, "line 2: DA outside an SF record"),
    "lcov-missing-end-of-record.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 5: record 'a.py' has no end_of_record",
    ),
    "lcov-truncated.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is truncated: record 'a.py' has no end_of_record",
    ),
    "lcov-line-without-tag.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 4: 'all lines covered' is not an lcov line",
    ),
    "lcov-5000-digit-count.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 3: '99999999999999999999999999999999…' is not a credible count",
    ),
    "lcov-hits-inf.info": (COVERAGE, NO_COVERAGE_REPORT, "'inf' is not a credible count"),
    "lcov-negative-hits.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 3: '-3' is not a credible count",
    ),
    "lcov-fractional-hits.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 3: '0.5' is not a credible count",
    ),
    "lcov-da-without-hits.info": (COVERAGE, NO_COVERAGE_REPORT, "line 3: DA needs line,hits"),
    "lcov-brda-garbage.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 4: 'yes' is not a credible count",
    ),
    "lcov-brda-too-short.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 4: BRDA needs line,block,branch,taken",
    ),
    "lcov-fnda-incomplete.info": (COVERAGE, NO_COVERAGE_REPORT, "line 4: FNDA is incomplete"),
    "lcov-lh-exceeds-lf.info": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "'a.py' lines: covered 25 exceeds total 10",
    ),
    "lcov-nothing-measured.info": (
        COVERAGE,
        "lines not measured: 0 of 0 (need 90.00%)",
        "the report measures no lines (0 of 0), so nothing was verified",
    ),
    # --- Cobertura XML -------------------------------------------------------------------------
    "cobertura-truncated.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is truncated XML (unclosed token at line 2)",
    ),
    "cobertura-root-inside-other.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is not a coverage report agentgate reads (XML with root element <results>)",
    ),
    "cobertura-entity-declaration.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "DTD entity declarations are not allowed in a report",
    ),
    "cobertura-external-entity.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "DTD entity declarations are not allowed in a report",
    ),
    "cobertura-hits-inf.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "<line> hits='inf' is not a credible count",
    ),
    "cobertura-hits-negative.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 2: <line> hits='-1' is not a credible count",
    ),
    "cobertura-line-without-number.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 2: <line> without a number attribute",
    ),
    "cobertura-class-without-filename.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 2: <class> without a filename",
    ),
    "cobertura-condition-exceeds-total.xml": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "line 2: condition-coverage '150% (3/2)' covers more than its total",
    ),
    "cobertura-no-classes.xml": (COVERAGE, NO_COVERAGE_REPORT, "measured no files"),
    "cobertura-line-rate-above-one.xml": (
        COVERAGE,
        "lines 0.00% (need 90.00%), branches 0.00% (need 85.00%)",
        "a.py: 2 lines not covered: lines 1-2",
    ),
    # --- coverage.py JSON and data -------------------------------------------------------------
    "coverage-empty.json": (COVERAGE, NO_COVERAGE_REPORT, "coverage-empty.json: is empty"),
    "coverage-bom-only.json": (COVERAGE, NO_COVERAGE_REPORT, "coverage-bom-only.json: is empty"),
    "coverage-data-fake-sqlite.coverage": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "cannot be loaded by coverage.py (DataError: Couldn't use data file",
    ),
    "coverage-json-invalid-utf8.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is not UTF-8 text (undecodable byte at offset 35)",
    ),
    "coverage-json-truncated.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is not valid JSON (Unterminated string starting at at line 1, column 187)",
    ),
    "coverage-json-nested-1500-deep.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is JSON nested too deeply to read"
        if DEEP_JSON_REFUSED
        else "unexpected shape: file 'a.py' should be an object, got a list",
    ),
    "coverage-json-top-level-list.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "is not a coverage report agentgate reads (JSON of an unknown shape)",
    ),
    "coverage-json-totals-not-object.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        'unexpected shape: "totals" should be an object, got a string',
    ),
    "coverage-json-1e308.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "more than any report can count: not credible",
    ),
    "coverage-json-infinity.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "totals lines covered should be a whole number, got inf",
    ),
    "coverage-json-nan.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "totals lines covered should be a whole number, got nan",
    ),
    "coverage-json-negative-count.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "totals lines covered is negative (-5)",
    ),
    "coverage-json-counts-as-strings.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "unexpected shape: totals lines covered should be a whole number, got a string",
    ),
    "coverage-json-fractional-count.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "totals lines covered should be a whole number, got 9.5",
    ),
    "coverage-json-covered-exceeds-total.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "totals lines: covered 120 exceeds total 100",
    ),
    "coverage-json-branches-exceed.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "totals branches: covered 8 exceeds total 4",
    ),
    "coverage-json-missing-line-negative.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "file 'a.py' missing line is negative (-3)",
    ),
    "coverage-json-totals-disagree-with-files.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "totals lines say 10 of 10 covered, but its files add up to 1 of 10: the report is not "
        "credible",
    ),
    "coverage-json-duplicate-totals.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "totals lines say 10 of 10 covered, but its files add up to 2 of 10",
    ),
    "coverage-json-nothing-measured.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "measured no files (coverage found no measured source",
    ),
    # --- istanbul coverage-summary.json --------------------------------------------------------
    "istanbul-pct-without-counts.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "unexpected shape: total lines covered should be a whole number, got null",
    ),
    "istanbul-counts-as-strings.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "unexpected shape: total lines covered should be a whole number, got a string",
    ),
    "istanbul-negative-total.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "total lines covered is negative (-10)",
    ),
    "istanbul-covered-exceeds-total.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "total lines: covered 50 exceeds total 10",
    ),
    "istanbul-file-entry-list.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "unexpected shape: file '/p/src/a.js' should be an object, got a list",
    ),
    "istanbul-total-disagrees-with-files.json": (
        COVERAGE,
        NO_COVERAGE_REPORT,
        "total lines say 10 of 10 covered, but its files add up to 1 of 10: the report is not "
        "credible",
    ),
    "istanbul-no-files.json": (COVERAGE, NO_COVERAGE_REPORT, "measured no files"),
    # --- ruff JSON -----------------------------------------------------------------------------
    "ruff-empty.json": (lint("ruff"), NO_LINT_REPORT, "ruff-empty.json: is empty: no JSON to read"),
    "ruff-bom-only.json": (
        lint("ruff"),
        NO_LINT_REPORT,
        "ruff-bom-only.json: is empty: no JSON to read",
    ),
    "ruff-truncated.json": (
        lint("ruff"),
        NO_LINT_REPORT,
        "is not valid JSON (Unterminated string starting at at line 1, column 98)",
    ),
    "ruff-nested-1500-deep.json": (
        lint("ruff"),
        NO_LINT_REPORT,
        "is JSON nested too deeply to read"
        if DEEP_JSON_REFUSED
        else "unexpected shape: item 0 should be an object, got a list",
    ),
    "ruff-object-not-list.json": (
        lint("ruff"),
        NO_LINT_REPORT,
        "unexpected shape: the top level should be a list, got an object",
    ),
    "ruff-item-not-object.json": (
        lint("ruff"),
        NO_LINT_REPORT,
        "unexpected shape: item 0 should be an object, got a string",
    ),
    "ruff-message-null.json": (
        lint("ruff"),
        NO_LINT_REPORT,
        'unexpected shape: item 0 "message" should be a string, got null',
    ),
    # A location the reader cannot use leaves the finding without a line; it still counts.
    "ruff-location-string.json": (
        lint("ruff"),
        "1 error (max 0), 0 warnings (max 0)",
        "/p/a.py: Undefined name `x`",
    ),
    "ruff-nan-row.json": (
        lint("ruff"),
        "1 error (max 0), 0 warnings (max 0)",
        "/p/a.py: Undefined name `x`",
    ),
    # Lint reports are decoded leniently: a bad byte in a message is shown, the finding counts.
    "ruff-invalid-utf8.json": (
        lint("ruff"),
        "1 error (max 0), 0 warnings (max 0)",
        "/p/a.py: Undefined name \ufffd\ufffd",
    ),
    # --- eslint JSON ---------------------------------------------------------------------------
    "eslint-object-not-list.json": (
        lint("eslint"),
        NO_LINT_REPORT,
        "unexpected shape: the top level should be a list, got an object",
    ),
    "eslint-messages-missing.json": (
        lint("eslint"),
        NO_LINT_REPORT,
        'unexpected shape: file entry 0 "messages" should be a list, got null',
    ),
    "eslint-severity-string-2.json": (
        lint("eslint"),
        NO_LINT_REPORT,
        "file entry 0 message 0 has severity '2': eslint writes 1 (warning) or 2 (error)",
    ),
    "eslint-severity-word-error.json": (
        lint("eslint"),
        NO_LINT_REPORT,
        "has severity 'error': eslint writes 1 (warning) or 2 (error); the report is not credible",
    ),
    "eslint-severity-float.json": (
        lint("eslint"),
        NO_LINT_REPORT,
        "file entry 0 message 0 has severity 2.0: eslint writes 1 (warning) or 2 (error)",
    ),
    "eslint-severity-negative.json": (
        lint("eslint"),
        NO_LINT_REPORT,
        "file entry 0 message 0 has severity -2: eslint writes 1 (warning) or 2 (error)",
    ),
    "eslint-severity-off.json": (
        lint("eslint"),
        NO_LINT_REPORT,
        "file entry 0 message 0 has severity 0: eslint writes 1 (warning) or 2 (error)",
    ),
    "eslint-counts-without-messages.json": (
        lint("eslint"),
        NO_LINT_REPORT,
        "file entry 0 counts 5 errors and warnings but lists 0 messages; the report is not "
        "credible",
    ),
    # --- pylint JSON ---------------------------------------------------------------------------
    "pylint-messages-not-list.json": (
        lint("pylint"),
        NO_LINT_REPORT,
        'unexpected shape: the "messages" key should be a list, got an object',
    ),
    "pylint-type-unknown.json": (
        lint("pylint"),
        NO_LINT_REPORT,
        "message 0 has type 'critical': pylint writes error, fatal, warning, convention, "
        "refactor or info; the report is not credible",
    ),
    "pylint-type-missing.json": (
        lint("pylint"),
        NO_LINT_REPORT,
        "message 0 has type None: pylint writes error, fatal, warning, convention, refactor",
    ),
    # --- mypy JSON lines -----------------------------------------------------------------------
    "mypy-line-not-object.jsonl": (
        lint("mypy"),
        NO_LINT_REPORT,
        "unexpected shape: line 2 should be an object, got a list",
    ),
    "mypy-truncated-line.jsonl": (
        lint("mypy"),
        NO_LINT_REPORT,
        "mypy-truncated-line.jsonl line 2: is not valid JSON",
    ),
    "mypy-text-not-json.jsonl": (
        lint("mypy"),
        NO_LINT_REPORT,
        "mypy-text-not-json.jsonl line 1: is not valid JSON (Expecting value at line 1, column 1)",
    ),
    "mypy-severity-capitalised.jsonl": (
        lint("mypy"),
        NO_LINT_REPORT,
        'line 1 has severity \'Error\': mypy writes "error" or "note"',
    ),
    "mypy-severity-warning.jsonl": (
        lint("mypy"),
        NO_LINT_REPORT,
        'line 1 has severity \'warning\': mypy writes "error" or "note"',
    ),
    "mypy-severity-missing.jsonl": (
        lint("mypy"),
        NO_LINT_REPORT,
        'line 1 has severity None: mypy writes "error" or "note"',
    ),
    # --- flake8 (JSON and text) ----------------------------------------------------------------
    "flake8-json-list.json": (
        lint("flake8"),
        NO_LINT_REPORT,
        "unexpected shape: the top level should be an object, got a list",
    ),
    "flake8-json-violation-not-object.json": (
        lint("flake8"),
        NO_LINT_REPORT,
        "unexpected shape: 'a.py' item 0 should be an object, got a string",
    ),
    "flake8-text-unparsable.txt": (
        lint("flake8-text"),
        NO_LINT_REPORT,
        "line 2 is not a `path:line:col: CODE message` finding: 'flake8 finished: everything "
        "looks good'",
    ),
    "flake8-text-critical-error.txt": (
        lint("flake8-text"),
        NO_LINT_REPORT,
        "line 1 is not a `path:line:col: CODE message` finding: 'There was a critical error",
    ),
    # A line number no file has: the finding counts, without a line.
    "flake8-text-5000-digit-line.txt": (
        lint("flake8-text"),
        "1 error (max 0), 0 warnings (max 0)",
        "a.py: line too long (90 > 79 characters)",
    ),
    # --- SARIF ---------------------------------------------------------------------------------
    "sarif-bare-object.sarif": (lint("sarif"), NO_LINT_REPORT, '"runs"'),
    "sarif-no-runs.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "has no runs: the tool wrote no run of itself, so nothing was checked",
    ),
    "sarif-run-not-object.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "unexpected shape: run 0 should be an object, got a string",
    ),
    "sarif-results-missing.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "run 0 has no results (a scan writes them, [] when it found none), so nothing was checked",
    ),
    "sarif-results-empty-object.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "unexpected shape: run 0 results should be a list, got an object",
    ),
    "sarif-results-false.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "unexpected shape: run 0 results should be a list, got a boolean",
    ),
    "sarif-message-missing.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        'unexpected shape: run 0 result 0 "message.text" should be a string, got null',
    ),
    "sarif-level-unknown.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "run 0 result 0 has level 'critical': SARIF 2.1.0 writes error, warning, note, none; "
        "the report is not credible",
    ),
    "sarif-level-capitalised.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "run 0 result 0 has level 'Error': SARIF 2.1.0 writes error, warning, note, none",
    ),
    "sarif-rule-default-level-unknown.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "run 0 result 0 has level 'blocker': SARIF 2.1.0 writes error, warning, note, none",
    ),
    "sarif-pass-at-error-level.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "run 0 result 0 has kind 'pass' with level 'error': SARIF 2.1.0 gives a result that is "
        "not a failure the level none; the report is not credible",
    ),
    "sarif-kind-unknown.sarif": (
        lint("sarif"),
        NO_LINT_REPORT,
        "run 0 result 0 has kind 'ignored': SARIF 2.1.0 writes fail, informational, "
        "notApplicable, open, pass, review; the report is not credible",
    ),
}


def _strict(constant: str) -> Any:
    raise AssertionError(f"the verdict is not strict JSON: it holds {constant}")


def _strings(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def test_every_file_of_the_corpus_has_its_case() -> None:
    assert sorted(CASES) == sorted(p.name for p in BAD.iterdir() if p.name != "README.md")


def test_the_corpus_is_small_hand_written_files() -> None:
    sizes = {p.name: p.stat().st_size for p in BAD.iterdir()}
    assert len(sizes) >= 60 and max(sizes.values()) < 8 * 1024, sizes


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hostile_report_gets_its_exact_verdict(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    flags, summary, problem = CASES[name]
    shutil.copy(BAD / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    code = main(["verify", "--no-run", "--profile", "strict", "--format", "json", *flags, name])
    out, err = capsys.readouterr()
    assert code == 1, err
    verdict = json.loads(out, parse_constant=_strict)
    [gate] = verdict["gates"]
    assert (verdict["status"], gate["status"]) == ("fail", "fail")
    assert gate["summary"].startswith(summary)
    evidence = gate["problems"] or [
        f"{finding['name'] or finding['path']}: {finding['message']}"
        for finding in gate["findings"]
    ]
    if problem is None:
        assert evidence == []
    else:
        assert problem in evidence[0]
    assert "Traceback" not in out + err
    raw = [text for text in _strings(verdict) if CONTROLS.search(text)]
    assert raw == [], "control characters reach the verdict raw"
