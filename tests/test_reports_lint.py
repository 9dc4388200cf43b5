"""Lint report parsers: real ruff output, sample eslint output, and every way a report goes bad."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _helpers import sample

from pytest_agentgate.reports.lint import (
    LINT_FORMATS,
    detect_lint_format,
    parse_lint,
    read_lint,
)
from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.verdict import Finding

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent


def test_registry_names_the_formats() -> None:
    assert {"ruff", "eslint", "pylint", "mypy", "flake8", "sarif"} <= set(LINT_FORMATS)
    assert LINT_FORMATS["ruff"]("[]", "s").tool == "ruff"


# --- ruff -------------------------------------------------------------------------------------


def test_real_ruff_run_on_two_violations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "módulo.py").write_text(
        "import os\n\n\ndef f():\n    unused = 1\n    return 2\n", encoding="utf-8"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            "F",
            "--output-format",
            "json",
            ".",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    monkeypatch.chdir(tmp_path)
    report = parse_lint(proc.stdout, format="ruff", source="stdout of `ruff check`")
    assert (report.tool, report.errors, report.warnings) == ("ruff", 2, 0)
    by_code = {f.code: f for f in report.findings}
    assert set(by_code) == {"F401", "F841"}
    unused_import = by_code["F401"]
    assert unused_import.path == os.path.join("pkg", "módulo.py")  # absolute -> relative to cwd
    assert (unused_import.line, unused_import.column, unused_import.tool) == (1, 8, "ruff")
    assert by_code["F841"].line == 5
    assert "os" in unused_import.message


def test_real_ruff_clean_run_is_an_empty_clean_report(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("X = 1\n", encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--no-cache",
            "--output-format",
            "json",
            ".",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = parse_lint(proc.stdout, format="ruff", source="stdout of `ruff check`")
    assert (report.errors, report.warnings, report.findings) == (0, 0, [])


def test_ruff_sample_file(monkeypatch: pytest.MonkeyPatch) -> None:
    path = sample("python/ruff.json")
    monkeypatch.chdir(REPO)
    report = read_lint(path, format="ruff")
    assert report.source == str(path)
    assert (report.errors, report.warnings) == (2, 0)
    assert [(f.code, f.line, f.column) for f in report.findings] == [("F401", 1, 8), ("F841", 5, 5)]
    assert report.findings[0].path == os.path.join(
        "tests", "data", "python", "project", "lint_sample", "messy.py"
    )


def test_ruff_syntax_error_with_null_code_and_notebook_cell(tmp_path: Path) -> None:
    outside = "/somewhere/else/x.py"
    text = json.dumps(
        [
            {
                "code": None,
                "message": "SyntaxError: Unexpected token",
                "filename": outside,
                "location": {"row": 3, "column": 1},
            },
            {
                "code": "F401",
                "message": "`os` imported but unused",
                "filename": "nb.ipynb",
                "location": {"row": 1, "column": 8},
                "cell": 2,
            },
            {"code": "E999", "message": "no location", "filename": "y.py", "location": None},
        ]
    )
    report = parse_lint(text, format="ruff", source="r.json")
    syntax, notebook, bare = report.findings
    assert syntax == Finding(
        "SyntaxError: Unexpected token", outside, 3, None, None, "error", "ruff", 1
    )
    assert notebook.message.endswith("(cell 2)") and notebook.path == "nb.ipynb"
    assert (bare.line, bare.column) == (None, None)
    assert report.errors == 3


def test_every_ruff_finding_is_an_error_even_if_it_says_otherwise() -> None:
    text = json.dumps(
        [
            {
                "code": "W291",
                "message": "Trailing whitespace",
                "filename": "a.py",
                "location": {"row": 1, "column": 2},
                "severity": "warning",
            }
        ]
    )
    assert parse_lint(text, format="ruff", source="s").errors == 1


# --- eslint -----------------------------------------------------------------------------------


def test_eslint_sample_file(monkeypatch: pytest.MonkeyPatch) -> None:
    path = sample("js/eslint.json")
    monkeypatch.chdir(REPO)
    report = read_lint(path, format="eslint")
    assert (report.tool, report.errors, report.warnings) == ("eslint", 3, 1)
    fatal = [f for f in report.findings if f.code is None]
    assert len(fatal) == 1 and fatal[0].severity == "error"
    assert fatal[0].message.startswith("Parsing error")
    assert fatal[0].path == os.path.join("tests", "data", "js", "project", "lint", "broken.js")
    warning = next(f for f in report.findings if f.severity == "warning")
    assert (warning.code, warning.line, warning.column) == ("no-unused-vars", 3, 7)


def test_eslint_severity_mapping() -> None:
    text = json.dumps(
        [
            {
                "filePath": "/elsewhere/ü.js",
                "messages": [
                    {"ruleId": "a", "severity": 2, "message": "err", "line": 1, "column": 2},
                    {"ruleId": "b", "severity": 1, "message": "warn", "line": 2, "column": 3},
                    {
                        "ruleId": None,
                        "severity": 1,
                        "message": "fatal parse",
                        "fatal": True,
                        "line": 4,
                    },
                    {
                        "severity": 1,
                        "message": "File ignored because of a matching ignore pattern.",
                    },
                ],
            },
            {"filePath": "/elsewhere/clean.js", "messages": []},
        ]
    )
    report = parse_lint(text, format="eslint", source="stdout of `eslint -f json`")
    assert [(f.code, f.severity) for f in report.findings] == [
        ("a", "error"),
        ("b", "warning"),
        (None, "error"),
        (None, "warning"),
    ]
    assert (report.errors, report.warnings) == (2, 2)
    assert report.findings[0].path == "/elsewhere/ü.js"
    assert report.findings[3].line is None


# --- other formats from the design table ------------------------------------------------------


def test_pylint_json2_and_legacy_json() -> None:
    messages = [
        {
            "type": "error",
            "symbol": "undefined-variable",
            "message": "Undefined 'x'",
            "path": "a.py",
            "line": 3,
            "column": 4,
        },
        {"type": "fatal", "symbol": "syntax-error", "message": "bad", "path": "b.py", "line": 1},
        {"type": "convention", "symbol": "missing-docstring", "message": "doc", "path": "a.py"},
        {"type": "refactor", "symbol": "too-many-branches", "message": "rf", "path": "a.py"},
        {"type": "warning", "symbol": "unused-import", "message": "wi", "path": "a.py"},
        {"type": "info", "symbol": "locally-disabled", "message": "info", "path": "a.py"},
    ]
    for text in (json.dumps({"messages": messages, "statistics": {}}), json.dumps(messages)):
        report = parse_lint(text, format="pylint", source="p.json")
        assert (report.errors, report.warnings) == (2, 3)
        assert report.findings[0].code == "undefined-variable"


def test_mypy_json_lines() -> None:
    lines = [
        {
            "file": "m.py",
            "line": 2,
            "column": 4,
            "message": "Incompatible types",
            "hint": None,
            "code": "assignment",
            "severity": "error",
        },
        {
            "file": "m.py",
            "line": 2,
            "column": 4,
            "message": "See docs",
            "hint": None,
            "code": None,
            "severity": "note",
        },
        {
            "file": "n.py",
            "line": 7,
            "column": 0,
            "message": "Name missing",
            "hint": "import it",
            "code": "name-defined",
            "severity": "error",
        },
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\nFound 2 errors in 2 files\n"
    report = parse_lint(text, format="mypy", source="stdout of `mypy -O json`")
    assert (report.errors, report.warnings) == (2, 0)
    assert report.findings[1].message == "Name missing (import it)"
    # mypy's JSON columns are 0-based; findings are 1-based like every other tool's.
    assert [f.column for f in report.findings] == [5, 1]
    with pytest.raises(ReportError, match="line 2"):
        parse_lint(json.dumps(lines[0]) + "\nnot json\n", format="mypy", source="m")


def test_flake8_json() -> None:
    text = json.dumps(
        {
            "a.py": [
                {
                    "code": "E501",
                    "filename": "a.py",
                    "line_number": 3,
                    "column_number": 80,
                    "text": "line too long",
                    "physical_line": "x",
                }
            ],
            "b.py": [],
        }
    )
    report = parse_lint(text, format="flake8", source="f.json")
    assert [(f.path, f.line, f.column, f.code, f.severity) for f in report.findings] == [
        ("a.py", 3, 80, "E501", "error")
    ]


def test_sarif_levels() -> None:
    text = json.dumps(
        {
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {"driver": {"name": "semgrep"}},
                    "results": [
                        {
                            "ruleId": "r1",
                            "level": "error",
                            "message": {"text": "bad"},
                            "locations": [
                                {
                                    "physicalLocation": {
                                        "artifactLocation": {"uri": "src/a.py"},
                                        "region": {"startLine": 4, "startColumn": 2},
                                    }
                                }
                            ],
                        },
                        {"ruleId": "r2", "message": {"text": "default level is warning"}},
                        {"ruleId": "r3", "level": "note", "message": {"text": "fyi"}},
                    ],
                }
            ],
        }
    )
    report = parse_lint(text, format="sarif", source="s.sarif")
    assert report.tool == "semgrep"
    assert [(f.code, f.severity, f.path, f.line) for f in report.findings] == [
        ("r1", "error", "src/a.py", 4),
        ("r2", "warning", None, None),
    ]


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "text", "problem"),
    [
        ("ruff", "", "is empty"),
        ("ruff", "  \n", "is empty"),
        ("ruff", "error: Failed to parse pyproject.toml", "not valid JSON"),
        ("ruff", '[{"code": "F401", "message": "x"', "truncated"),
        ("ruff", '{"code": "F401"}', "top level should be a list, got an object"),
        ("ruff", '[{"code": "F401", "filename": "a.py"}]', '"message" should be a string'),
        ("ruff", "[1]", "item 0 should be an object"),
        ("ruff", '[{"code": 5, "message": "m"}]', '"code" should be a string'),
        ("eslint", "", "is empty"),
        ("eslint", '[{"messages": []}]', '"filePath" should be a string, got null'),
        ("eslint", '[{"filePath": "a.js"}]', '"messages" should be a list'),
        ("eslint", '[{"filePath": "a.js", "messages": ["x"]}]', "message 0 should be an object"),
        ("eslint", '[{"filePath": "a.js", "messages": [{"severity": 2}]}]', '"message"'),
        ("eslint", "null", "top level should be a list, got null"),
        ("pylint", '{"statistics": {}}', '"messages" key should be a list'),
        ("flake8", "[]", "top level should be an object"),
        ("sarif", "{}", '"runs" key should be a list'),
        ("mypy", "[1]", "line 1 should be an object"),
    ],
)
def test_bad_text_is_a_report_error_naming_the_source(fmt: str, text: str, problem: str) -> None:
    source = "stdout of `lint`"
    with pytest.raises(ReportError) as caught:
        parse_lint(text, format=fmt, source=source)
    message = str(caught.value)
    assert message.startswith(source + ":")
    assert problem in message
    assert caught.value.hint  # always says what to do


def test_empty_stdout_suggests_a_crash() -> None:
    with pytest.raises(ReportError, match="printed no JSON; did it crash") as caught:
        parse_lint("", format="ruff", source="stdout of `ruff check`")
    # The hint names the command whose output was expected, in a sentence that reads.
    assert caught.value.hint is not None
    assert "expected the output of `ruff check --output-format json`" in caught.value.hint
    with pytest.raises(ReportError) as caught:
        parse_lint("", format="sarif", source="stdout of `semgrep`")
    assert caught.value.hint is not None
    assert "expected a linter's SARIF output" in caught.value.hint


def test_empty_list_is_a_valid_clean_report() -> None:
    for fmt in ("ruff", "eslint"):
        report = parse_lint("[]\n", format=fmt, source="s")
        assert (report.tool, report.errors, report.warnings) == (fmt, 0, 0)


def test_unknown_format_lists_the_known_ones() -> None:
    with pytest.raises(ReportError, match="unknown lint format 'rubocop'") as caught:
        parse_lint("[]", format="rubocop", source="s")
    assert "eslint" in caught.value.hint and "ruff" in caught.value.hint
    with pytest.raises(ReportError):
        read_lint("whatever.json", format="rubocop")


def test_read_lint_file_problems(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ReportError, match="file not found") as caught:
        read_lint(missing, format="ruff")
    assert str(missing) in str(caught.value)
    assert "ruff check --output-format json" in caught.value.hint

    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ReportError, match="is empty") as caught:
        read_lint(empty, format="eslint")
    assert "eslint -f json" in caught.value.hint

    with pytest.raises(ReportError, match="is a directory"):
        read_lint(tmp_path, format="ruff")

    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    with pytest.raises(ReportError, match="not UTF-8"):
        read_lint(binary, format="ruff")

    truncated = tmp_path / "cut.json"
    truncated.write_text('[{"filePath": "a.js", "messages": [', encoding="utf-8")
    with pytest.raises(ReportError, match="truncated"):
        read_lint(truncated, format="eslint")


def test_read_lint_tolerates_bom_and_unicode_paths(tmp_path: Path) -> None:
    path = tmp_path / "rapport ü.json"
    data = [
        {
            "filePath": "src/日本.js",
            "messages": [
                {"ruleId": "semi", "severity": 1, "message": "Missing semicolon.", "line": 1}
            ],
        }
    ]
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(data, ensure_ascii=False).encode("utf-8"))
    report = read_lint(path, format="eslint")
    assert report.source == str(path)
    assert [(f.path, f.severity) for f in report.findings] == [("src/日本.js", "warning")]


# --- real output of pylint, mypy, flake8 and bandit (tests/data/lint/README.md) -----------------


def test_real_pylint_json2_and_legacy_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA / "lint" / "project")
    for name in ("pylint-json2.json", "pylint-json.json"):
        report = read_lint(sample(f"lint/{name}"), format="pylint")
        # fatal 1 + error 2; warning 8 + refactor 3 + convention 7; info 1 dropped.
        assert (report.tool, report.errors, report.warnings) == ("pylint", 3, 18), name
        codes = {f.code for f in report.findings}
        assert {"fatal", "syntax-error", "undefined-variable", "no-else-return"} <= codes
        assert "useless-suppression" not in codes
        undefined = next(f for f in report.findings if f.code == "undefined-variable")
        assert (undefined.path, undefined.line, undefined.column) == (
            os.path.join("app", "billing.py"),
            13,
            22,
        )
        assert any(f.path == os.path.join("app", "prix_é.py") for f in report.findings)


def test_real_mypy_json_lines_columns_and_notes() -> None:
    report = read_lint(DATA / "lint" / "mypy.jsonl", format="mypy")
    assert (report.errors, report.warnings) == (2, 0)  # the annotation-unchecked note is dropped
    first, second = report.findings
    # `mypy --show-column-numbers` prints 7:23 for what the JSON calls column 22.
    assert (first.path, first.line, first.column, first.code) == (
        "app/billing.py",
        7,
        23,
        "arg-type",
    )
    assert second.column == 16 and '"list" is invariant' in second.message
    assert "\n" not in second.message
    syntax = read_lint(DATA / "lint" / "mypy-syntax.jsonl", format="mypy")
    assert [(f.code, f.line, f.column) for f in syntax.findings] == [
        ("syntax", 1, 13),
        ("syntax", 1, 14),
    ]


def test_clean_mypy_run_prints_nothing_and_is_clean() -> None:
    for text in ("", "\n"):
        report = parse_lint(text, format="mypy", source="stdout of `mypy -O json`")
        assert (report.errors, report.warnings) == (0, 0)


def test_real_flake8_json() -> None:
    report = read_lint(DATA / "lint" / "flake8.json", format="flake8")
    assert (report.tool, report.errors, report.warnings) == ("flake8", 5, 0)
    assert [f.code for f in report.findings] == ["E501", "F401", "F841", "F821", "E999"]
    assert report.findings[3].column == 23
    clean = parse_lint('{"ok.py": []}', format="flake8", source="s")
    assert clean.findings == []


def test_real_flake8_and_pycodestyle_text() -> None:
    # What zero-config reads when a project lints with flake8 or pycodestyle (their default
    # output): the same five findings as flake8-json gives, every one an error.
    report = read_lint(DATA / "lint" / "flake8.txt", format="flake8-text")
    assert (report.tool, report.errors, report.warnings) == ("flake8", 5, 0)
    assert [f.code for f in report.findings] == ["E501", "F401", "F841", "F821", "E999"]
    assert (report.findings[3].path, report.findings[3].line) == ("app/billing.py", 13)
    assert report.findings[3].column == 23
    assert report.findings[3].message == "undefined name 'nam'"
    style = read_lint(DATA / "lint" / "pycodestyle.txt", format="flake8-text")
    assert [f.code for f in style.findings] == ["E501", "E128", "E901"]
    assert parse_lint("", format="flake8-text", source="<stdout>").findings == []


def test_flake8_text_that_is_not_findings_is_an_error_never_a_clean_run() -> None:
    crash = "Traceback (most recent call last):\n  File x\nImportError: no\n"
    with pytest.raises(ReportError, match=r"line 1 is not a `path:line:col: CODE message`"):
        parse_lint(crash, format="flake8-text", source="<stdout>")


def test_real_bandit_sarif() -> None:
    report = read_lint(DATA / "lint" / "bandit.sarif", format="sarif")
    assert report.tool == "Bandit"
    # B602 is an error; B404, B105, B101 are notes (low severity): dropped. broken.py could not
    # be parsed: bandit says so in an error-level tool notification, which is an error.
    assert [(f.code, f.severity, f.path, f.line) for f in report.findings] == [
        ("B602", "error", "app/billing.py", 17),
        (None, "error", "app/broken.py", None),
    ]
    assert "could not analyse" in report.findings[1].message


def test_sarif_uri_decoding_default_levels_kinds_and_suppressions() -> None:
    def result(rule: str, **extra: object) -> dict[str, object]:
        return {
            "ruleId": rule,
            "message": {"text": rule},
            "locations": [
                {"physicalLocation": {"artifactLocation": {"uri": "src/prix_%C3%A9.py"}}}
            ],
            **extra,
        }

    text = json.dumps(
        {
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {
                        "driver": {
                            "name": "CodeQL",
                            "rules": [
                                {"id": "r-err", "defaultConfiguration": {"level": "error"}},
                                {"id": "r-note", "defaultConfiguration": {"level": "note"}},
                            ],
                        }
                    },
                    "results": [
                        result("r-err"),
                        result("r-note"),
                        result("r-idx", ruleIndex=0),
                        result("r-pass", kind="pass"),
                        result("r-review", kind="review", level="none"),
                        result("r-sup", level="error", suppressions=[{"kind": "inSource"}]),
                        result(
                            "r-rej",
                            level="error",
                            suppressions=[{"kind": "external", "status": "rejected"}],
                        ),
                        result("r-gone", level="error", baselineState="absent"),
                        result("r-plain"),
                    ],
                },
                {"tool": {"driver": {"name": "semgrep"}}, "results": []},
            ],
        }
    )
    report = parse_lint(text, format="sarif", source="s.sarif")
    assert report.tool == "sarif"  # two different tools
    assert [(f.code, f.severity, f.tool) for f in report.findings] == [
        ("r-err", "error", "CodeQL"),
        ("r-idx", "error", "CodeQL"),
        ("r-rej", "error", "CodeQL"),
        ("r-plain", "warning", "CodeQL"),
    ]
    assert report.findings[0].path == "src/prix_é.py"
    uri = "file:///tmp/x%20y.py"
    one = {
        "version": "2.1.0",
        "runs": [{"results": [result("a", level="error")]}],
    }
    one["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = (
        uri
    )
    assert parse_lint(json.dumps(one), format="sarif", source="s").findings[0].path == "/tmp/x y.py"


# --- detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("python/ruff.json", "ruff"),
        ("js/eslint.json", "eslint"),
        ("lint/pylint-json2.json", "pylint"),
        ("lint/pylint-json.json", "pylint"),
        ("lint/mypy.jsonl", "mypy"),
        ("lint/mypy-syntax.jsonl", "mypy"),
        ("lint/flake8.json", "flake8"),
        ("lint/bandit.sarif", "sarif"),
    ],
)
def test_detects_every_real_sample(relative: str, expected: str) -> None:
    path = DATA / relative
    assert detect_lint_format(path.read_text(encoding="utf-8"), str(path)) == expected
    assert read_lint(path).tool.lower() in {expected, "bandit"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a.py": []}', "flake8"),
        ("{}", "flake8"),
        ('{"messages": [], "statistics": {}}', "pylint"),
        (
            '{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": []}]}',
            "sarif",
        ),
        ('{"file": "a.py", "line": 1, "severity": "note", "message": "m"}', "mypy"),
    ],
)
def test_detects_hand_made_shapes(text: str, expected: str) -> None:
    assert detect_lint_format(text, "s") == expected
    assert parse_lint(text, source="s").errors == 0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "is empty"),
        ("[]", "empty list"),
        ("hello", "not JSON"),
        ("[1, 2]", "unknown or mixed"),
        (
            '[{"filePath": "a", "messages": []}, {"code": "x", "location": {}, "filename": "f"}]',
            "mixed",
        ),
        ('{"version": "2.0.0", "runs": []}', "SARIF version '2.0.0'"),
        ('{"whatever": 1}', "unknown shape"),
        ("[1", "not valid JSON"),
        ('{"a": 1}\n{"b": 2}', "not mypy"),
        ("3", "not JSON"),
    ],
)
def test_undetectable_text_lists_the_formats(text: str, problem: str) -> None:
    with pytest.raises(ReportError) as caught:
        detect_lint_format(text, "report.json")
    assert str(caught.value).startswith("report.json:")
    assert problem in str(caught.value)
    for name in LINT_FORMATS:
        assert name in caught.value.hint


def test_malformed_real_samples_fail_cleanly(tmp_path: Path) -> None:
    for name, fmt in (("pylint-json2.json", "pylint"), ("bandit.sarif", "sarif")):
        cut = tmp_path / name
        text = (DATA / "lint" / name).read_text(encoding="utf-8")
        cut.write_text(text[: len(text) // 2], encoding="utf-8")
        with pytest.raises(ReportError, match=r"truncated|not valid JSON") as caught:
            read_lint(cut, format=fmt)
        assert str(cut) in str(caught.value)
    broken = tmp_path / "mypy.jsonl"
    broken.write_text('{"file": "a.py", "line": 1, "severity": "error"}\n', encoding="utf-8")
    with pytest.raises(ReportError, match='"message" should be a string'):
        read_lint(broken, format="mypy")


@pytest.mark.parametrize(
    ("format", "text", "problem"),
    [
        (
            "eslint",
            json.dumps([{"filePath": "a.js", "messages": [{"severity": 0, "message": "off"}]}]),
            "file entry 0 message 0 has severity 0: eslint writes 1 (warning) or 2 (error)",
        ),
        (
            "sarif",
            json.dumps(
                {
                    "version": "2.1.0",
                    "runs": [
                        {"results": [{"kind": "pass", "level": "error", "message": {"text": "m"}}]}
                    ],
                }
            ),
            "run 0 result 0 has kind 'pass' with level 'error': SARIF 2.1.0 gives a result "
            "that is not a failure the level none",
        ),
    ],
    ids=["eslint-severity-off", "sarif-pass-at-error-level"],
)
def test_a_finding_its_tool_never_writes_is_not_credible(
    format: str, text: str, problem: str
) -> None:
    """Skipped, either would be a finding that counts nothing and passes."""
    with pytest.raises(ReportError) as caught:
        parse_lint(text, format=format, source="r")
    assert problem in str(caught.value)
