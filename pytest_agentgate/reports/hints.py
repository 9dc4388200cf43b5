"""How to produce each report format: the one home of every "how to write this report" hint.

Error messages about a missing or unreadable report end with one of these, and the format
registrations (``LintFormat.how``, ``CoverageFormat.how``) carry them for ``agentgate explain``.
"""

from __future__ import annotations

from pathlib import Path

# The command that writes each lint format.
LINT_COMMANDS: dict[str, str] = {
    "ruff": "ruff check --output-format json",
    "eslint": "eslint -f json",
    "pylint": "pylint --output-format=json2",
    "mypy": "mypy --output json",
    "flake8": "flake8 --format=json (flake8-json plugin)",
    "flake8-text": "a flake8 or pycodestyle run's default output (path:line:col: CODE message)",
    "sarif": "a linter's SARIF output (e.g. `ruff check --output-format sarif`)",
}

# How each coverage format is written.
COVERAGE_HINTS: dict[str, str] = {
    "coverage-json": (
        "`coverage json -o FILE` writes it (or `pytest --cov --cov-report=json:FILE`)"
    ),
    "coverage-data": (
        "run the tests under coverage.py to write it: `coverage run -m pytest` or `pytest --cov`"
    ),
    "istanbul-summary": (
        "the json-summary reporter writes it: `nyc --reporter=json-summary`, "
        "`c8 --reporter=json-summary`, `jest --coverageReporters=json-summary`, "
        "or vitest `coverage.reporter: ['json-summary']`"
    ),
    "cobertura": (
        "`coverage xml -o FILE` (or `pytest --cov --cov-report=xml:FILE`) writes it; other "
        "languages: the tool's Cobertura reporter (c8/nyc `--reporter=cobertura`, coverlet, "
        "gcovr `--cobertura`)"
    ),
    "lcov": (
        "`coverage lcov -o FILE`, `c8 --reporter=lcovonly`, `nyc --reporter=lcovonly`, jest "
        "`--coverageReporters=lcov`, `geninfo`/`lcov --capture` or `grcov -t lcov` write it"
    ),
}


def missing_hint(path: str, format: str | None) -> str:
    """How to write the report at ``path``: by its format, else guessed from its file name."""
    if format in COVERAGE_HINTS:
        return COVERAGE_HINTS[format]
    name = Path(path).name
    if name.startswith(".coverage"):
        return COVERAGE_HINTS["coverage-data"]
    if "summary" in name:
        return COVERAGE_HINTS["istanbul-summary"]
    if name.endswith(".xml"):
        return COVERAGE_HINTS["cobertura"]
    if name.endswith((".info", ".lcov")):
        return COVERAGE_HINTS["lcov"]
    return (
        f"{COVERAGE_HINTS['coverage-json']}; for JavaScript, {COVERAGE_HINTS['istanbul-summary']}"
    )


def lint_hint(tool: str) -> str:
    """``run `ruff check --output-format json``` or, for a family of tools, its description."""
    command = LINT_COMMANDS[tool]
    return command if command.startswith("a ") else f"run `{command}`"


JUNIT_HINT = "pytest: --junitxml=PATH; jest: the jest-junit reporter"
