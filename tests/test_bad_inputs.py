"""The hostile inputs of tests/data/bad/: each gets its exact verdict, never a pass.

A report no honest tool writes (a count that is infinite, 5,000 digits or 1e308; a report that
measures nothing; a severity the tool never uses) fails its gate with the file and what is
wrong, and the verdict stays strict JSON.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _helpers import DATA

from pytest_agentgate.cli.main import main

BAD = DATA / "bad"

# file -> (the report flags, the gate's summary, what its first problem says)
CASES: dict[str, tuple[list[str], str, str]] = {
    "lcov-5000-digit-count.info": (
        ["--coverage"],
        "no usable coverage report",
        "line 3: '99999999999999999999999999999999…' is not a credible count",
    ),
    "lcov-hits-inf.info": (
        ["--coverage"],
        "no usable coverage report",
        "'inf' is not a credible count",
    ),
    "lcov-nothing-measured.info": (
        ["--coverage"],
        "lines not measured: 0 of 0 (need 90.00%)",
        "the report measures no lines (0 of 0), so nothing was verified",
    ),
    "cobertura-hits-inf.xml": (
        ["--coverage"],
        "no usable coverage report",
        "<line> hits='inf' is not a credible count",
    ),
    "coverage-json-1e308.json": (
        ["--coverage"],
        "no usable coverage report",
        "more than any report can count: not credible",
    ),
    "coverage-json-infinity.json": (
        ["--coverage"],
        "no usable coverage report",
        "totals lines covered should be a whole number, got inf",
    ),
    "coverage-json-nothing-measured.json": (
        ["--coverage"],
        "no usable coverage report",
        "measured no files (coverage found no measured source",
    ),
    "sarif-no-runs.sarif": (
        ["--lint-format", "sarif", "--lint"],
        "lint report could not be read",
        "has no runs: the tool wrote no run of itself, so nothing was checked",
    ),
    "sarif-bare-object.sarif": (
        ["--lint-format", "sarif", "--lint"],
        "lint report could not be read",
        '"runs"',
    ),
    "eslint-severity-string-2.json": (
        ["--lint-format", "eslint", "--lint"],
        "lint report could not be read",
        "file entry 0 message 0 has severity '2': eslint writes 1 (warning) or 2 (error)",
    ),
    "eslint-severity-word-error.json": (
        ["--lint-format", "eslint", "--lint"],
        "lint report could not be read",
        "has severity 'error': eslint writes 1 (warning) or 2 (error); the report is not credible",
    ),
    "mypy-severity-capitalised.jsonl": (
        ["--lint-format", "mypy", "--lint"],
        "lint report could not be read",
        'line 1 has severity \'Error\': mypy writes "error" or "note"',
    ),
}


def _strict(constant: str) -> Any:
    raise AssertionError(f"the verdict is not strict JSON: it holds {constant}")


def test_every_file_of_the_corpus_has_its_case() -> None:
    assert sorted(CASES) == sorted(p.name for p in BAD.iterdir() if p.name != "README.md")


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
    assert problem in gate["problems"][0]
    assert "Traceback" not in out + err
