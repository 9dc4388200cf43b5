"""Lint reports: a linter's JSON output in, a :class:`LintReport` of normalised findings out.

One parser per tool, registered in :data:`LINT_FORMATS`. Severity is normalised here, once:
anything the tool calls error or fatal is an ``error``, every other finding it reports is a
``warning``, and notes/info are dropped. Parsers never judge; the lint gate applies thresholds.

Every failure to read is a :class:`ReportError` naming the source and saying what to do. A report
that parses but lists nothing (``[]``) is a clean run, so an unreadable report must never be
mistaken for one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from ..verdict import Finding, Severity
from ._io import display_path, load_json, optional_int, read_text, shape_error
from .model import LintReport, ReportError

LintParser = Callable[[str, str], LintReport]

# How to produce each format, for error messages.
_COMMANDS: dict[str, str] = {
    "ruff": "ruff check --output-format json",
    "eslint": "eslint -f json",
    "pylint": "pylint --output-format=json2",
    "mypy": "mypy -O json",
    "flake8": "flake8 --format=json (flake8-json plugin)",
    "sarif": "a linter's SARIF output (e.g. `ruff check --output-format sarif`)",
}


def _hint(tool: str) -> str:
    command = _COMMANDS[tool]
    return command if command.startswith("a ") else f"run `{command}`"


def _empty_hint(tool: str, source: str) -> str:
    if _is_stdout(source):
        return (
            f"the lint command printed no JSON; did it crash? expected the output of {_hint(tool)}"
        )
    return f"the report file is empty; did the lint command crash before writing it? {_hint(tool)}"


def _is_stdout(source: str) -> bool:
    return source.lstrip("<").startswith("stdout")


def _expect_list(data: object, source: str, where: str, tool: str) -> list[Any]:
    if not isinstance(data, list):
        raise shape_error(source, where, "a list", data, _hint(tool))
    return data


def _expect_dict(data: object, source: str, where: str, tool: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise shape_error(source, where, "an object", data, _hint(tool))
    return data


def _expect_str(data: object, source: str, where: str, tool: str) -> str:
    if not isinstance(data, str):
        raise shape_error(source, where, "a string", data, _hint(tool))
    return data


def _optional_str(data: object, source: str, where: str, tool: str) -> str | None:
    if data is None:
        return None
    return _expect_str(data, source, where, tool)


def _load(text: str, source: str, tool: str) -> Any:
    return load_json(text, source, empty_hint=_empty_hint(tool, source), hint=_hint(tool))


# --- ruff ---------------------------------------------------------------------------------------


def parse_ruff(text: str, source: str) -> LintReport:
    """``ruff check --output-format json``: a list of violations, every one an error.

    ruff has no warning level: a violation of a selected rule fails the check. Syntax errors have a
    null code (older ruff) or ``invalid-syntax``. Paths are absolute; they are shown relative to
    the working directory when they lie under it.
    """
    data = _expect_list(_load(text, source, "ruff"), source, "the top level", "ruff")
    findings = []
    for index, item in enumerate(data):
        where = f"item {index}"
        item = _expect_dict(item, source, where, "ruff")
        message = _expect_str(item.get("message"), source, f'{where} "message"', "ruff")
        code = _optional_str(item.get("code"), source, f'{where} "code"', "ruff")
        filename = _optional_str(item.get("filename"), source, f'{where} "filename"', "ruff")
        location = item.get("location")
        line = column = None
        if isinstance(location, dict):
            line, column = optional_int(location.get("row")), optional_int(location.get("column"))
        cell = optional_int(item.get("cell"))
        if cell is not None:  # a notebook: the row counts within the cell
            message = f"{message} (cell {cell})"
        findings.append(
            Finding(
                message=message,
                path=None if filename is None else display_path(filename),
                line=line,
                code=code,
                severity="error",
                tool="ruff",
                column=column,
            )
        )
    return LintReport(tool="ruff", source=source, findings=findings)


# --- eslint -------------------------------------------------------------------------------------


def parse_eslint(text: str, source: str) -> LintReport:
    """``eslint -f json``: a list of files, each with messages of severity 2 (error) or 1 (warning).

    A fatal message (a parse error, ruleId null) is an error whatever its severity.
    """
    data = _expect_list(_load(text, source, "eslint"), source, "the top level", "eslint")
    findings = []
    for index, entry in enumerate(data):
        where = f"file entry {index}"
        entry = _expect_dict(entry, source, where, "eslint")
        file_path = _expect_str(entry.get("filePath"), source, f'{where} "filePath"', "eslint")
        messages = _expect_list(entry.get("messages"), source, f'{where} "messages"', "eslint")
        for number, raw in enumerate(messages):
            at = f"{where} message {number}"
            raw = _expect_dict(raw, source, at, "eslint")
            message = _expect_str(raw.get("message"), source, f'{at} "message"', "eslint")
            severity: Severity
            if raw.get("fatal") is True or raw.get("severity") == 2:
                severity = "error"
            elif raw.get("severity") == 1:
                severity = "warning"
            else:
                continue  # severity 0 ("off") never reaches a report; other values are no finding
            findings.append(
                Finding(
                    message=message,
                    path=display_path(file_path),
                    line=optional_int(raw.get("line")),
                    code=_optional_str(raw.get("ruleId"), source, f'{at} "ruleId"', "eslint"),
                    severity=severity,
                    tool="eslint",
                    column=optional_int(raw.get("column")),
                )
            )
    return LintReport(tool="eslint", source=source, findings=findings)


# --- pylint -------------------------------------------------------------------------------------

_PYLINT_ERRORS = {"error", "fatal"}
_PYLINT_IGNORED = {"info", "information"}


def parse_pylint(text: str, source: str) -> LintReport:
    """``pylint --output-format=json2`` (``{"messages": [...], "statistics": {...}}``).

    The older ``--output-format=json`` (a bare list of the same messages) is read as well.
    error and fatal are errors; warning, convention and refactor are warnings; info is dropped.
    """
    data = _load(text, source, "pylint")
    if isinstance(data, dict):
        data = data.get("messages")
        where = 'the "messages" key'
    else:
        where = "the top level"
    messages = _expect_list(data, source, where, "pylint")
    findings = []
    for index, raw in enumerate(messages):
        at = f"message {index}"
        raw = _expect_dict(raw, source, at, "pylint")
        message = _expect_str(raw.get("message"), source, f'{at} "message"', "pylint")
        kind = str(raw.get("type", "")).lower()
        if kind in _PYLINT_IGNORED:
            continue
        severity: Severity = "error" if kind in _PYLINT_ERRORS else "warning"
        path = raw.get("absolutePath") or raw.get("path")
        findings.append(
            Finding(
                message=message,
                path=display_path(path) if isinstance(path, str) else None,
                line=optional_int(raw.get("line")),
                code=_optional_str(
                    raw.get("symbol") or raw.get("messageId") or raw.get("message-id"),
                    source,
                    f'{at} "symbol"',
                    "pylint",
                ),
                severity=severity,
                tool="pylint",
                column=optional_int(raw.get("column")),
            )
        )
    return LintReport(tool="pylint", source=source, findings=findings)


# --- mypy ---------------------------------------------------------------------------------------


def parse_mypy(text: str, source: str) -> LintReport:
    """``mypy -O json``: one JSON object per line; severity error counts, notes are dropped.

    A trailing plain-text summary line ("Found 3 errors ...") is not part of the JSON output; any
    other line that is not a JSON object makes the report unreadable.
    """
    if not text.strip():
        raise ReportError(source, "is empty: no JSON to read", _empty_hint("mypy", source))
    findings = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or (number > 1 and stripped.startswith(("Found ", "Success: "))):
            continue
        raw = _expect_dict(
            _load(stripped, f"{source} line {number}", "mypy"), source, f"line {number}", "mypy"
        )
        message = _expect_str(raw.get("message"), source, f'line {number} "message"', "mypy")
        severity = raw.get("severity")
        if severity != "error":
            continue  # notes explain an error on a neighbouring line; they are not findings
        hint = raw.get("hint")
        if isinstance(hint, str) and hint:
            message = f"{message} ({hint})"
        path = raw.get("file")
        findings.append(
            Finding(
                message=message,
                path=display_path(path) if isinstance(path, str) else None,
                line=optional_int(raw.get("line")),
                code=_optional_str(raw.get("code"), source, f'line {number} "code"', "mypy"),
                severity="error",
                tool="mypy",
                column=optional_int(raw.get("column")),
            )
        )
    return LintReport(tool="mypy", source=source, findings=findings)


# --- flake8 -------------------------------------------------------------------------------------


def parse_flake8(text: str, source: str) -> LintReport:
    """flake8-json (``flake8 --format=json``): ``{path: [violation, ...]}``.

    flake8 has no severities; like ruff, every reported violation fails the check.
    """
    data = _expect_dict(_load(text, source, "flake8"), source, "the top level", "flake8")
    findings = []
    for path, violations in data.items():
        for index, raw in enumerate(_expect_list(violations, source, repr(path), "flake8")):
            at = f"{path!r} item {index}"
            raw = _expect_dict(raw, source, at, "flake8")
            message = _expect_str(raw.get("text"), source, f'{at} "text"', "flake8")
            filename = raw.get("filename") if isinstance(raw.get("filename"), str) else path
            findings.append(
                Finding(
                    message=message,
                    path=display_path(filename),
                    line=optional_int(raw.get("line_number")),
                    code=_optional_str(raw.get("code"), source, f'{at} "code"', "flake8"),
                    severity="error",
                    tool="flake8",
                    column=optional_int(raw.get("column_number")),
                )
            )
    return LintReport(tool="flake8", source=source, findings=findings)


# --- SARIF --------------------------------------------------------------------------------------

_SARIF_LEVELS: dict[str, Severity | None] = {
    "error": "error",
    "warning": "warning",
    "note": None,
    "none": None,
}


def _sarif_location(result: dict[str, Any]) -> tuple[str | None, int | None, int | None]:
    locations = result.get("locations")
    if not isinstance(locations, list) or not locations or not isinstance(locations[0], dict):
        return None, None, None
    physical = locations[0].get("physicalLocation")
    if not isinstance(physical, dict):
        return None, None, None
    artifact = physical.get("artifactLocation")
    uri = artifact.get("uri") if isinstance(artifact, dict) else None
    path = None
    if isinstance(uri, str):
        path = unquote(uri.removeprefix("file://")) if uri.startswith("file:///") else uri
        path = display_path(path)
    region = physical.get("region")
    if not isinstance(region, dict):
        return path, None, None
    return path, optional_int(region.get("startLine")), optional_int(region.get("startColumn"))


def parse_sarif(text: str, source: str) -> LintReport:
    """SARIF 2.1.0: ``runs[].results[]``; level error -> error, warning (the default) -> warning."""
    data = _expect_dict(_load(text, source, "sarif"), source, "the top level", "sarif")
    runs = _expect_list(data.get("runs"), source, 'the "runs" key', "sarif")
    findings = []
    tools = []
    for run_index, run in enumerate(runs):
        run = _expect_dict(run, source, f"run {run_index}", "sarif")
        driver = run.get("tool", {}).get("driver", {}) if isinstance(run.get("tool"), dict) else {}
        tool = driver.get("name") if isinstance(driver, dict) else None
        tool = tool if isinstance(tool, str) else "sarif"
        tools.append(tool)
        results = run.get("results") or []
        for index, result in enumerate(
            _expect_list(results, source, f"run {run_index} results", "sarif")
        ):
            at = f"run {run_index} result {index}"
            result = _expect_dict(result, source, at, "sarif")
            raw_message = result.get("message")
            message = raw_message.get("text") if isinstance(raw_message, dict) else None
            message = _expect_str(message, source, f'{at} "message.text"', "sarif")
            level = result.get("level", "warning")
            severity = _SARIF_LEVELS.get(level) if isinstance(level, str) else "warning"
            if severity is None:
                continue
            path, line, column = _sarif_location(result)
            findings.append(
                Finding(
                    message=message,
                    path=path,
                    line=line,
                    code=_optional_str(result.get("ruleId"), source, f'{at} "ruleId"', "sarif"),
                    severity=severity,
                    tool=tool,
                    column=column,
                )
            )
    tool_name = tools[0] if len(set(tools)) == 1 else "sarif"
    return LintReport(tool=tool_name, source=source, findings=findings)


LINT_FORMATS: dict[str, LintParser] = {
    "ruff": parse_ruff,
    "eslint": parse_eslint,
    "pylint": parse_pylint,
    "mypy": parse_mypy,
    "flake8": parse_flake8,
    "sarif": parse_sarif,
}


def _parser(format: str, source: str) -> LintParser:
    try:
        return LINT_FORMATS[format]
    except KeyError:
        known = ", ".join(sorted(LINT_FORMATS))
        raise ReportError(
            source, f"unknown lint format {format!r}", f"agentgate reads: {known}"
        ) from None


def parse_lint(text: str, *, format: str, source: str) -> LintReport:
    """Parse lint output ``text`` in ``format``; ``source`` names it in messages.

    ``source`` is the report's path, or ``"stdout of `COMMAND`"`` when the text is what a command
    printed (an empty stdout is then reported as a probable crash).
    """
    return _parser(format, source)(text, source)


def read_lint(path: str | os.PathLike[str], *, format: str) -> LintReport:
    """Read and parse the lint report file at ``path``."""
    source = os.fspath(path)
    parser = _parser(format, source)
    hint = f"the lint command did not write it; {_hint(format)} with its output sent to this file"
    return parser(read_text(path, hint=hint), source)


__all__ = [
    "LINT_FORMATS",
    "LintParser",
    "parse_eslint",
    "parse_flake8",
    "parse_lint",
    "parse_mypy",
    "parse_pylint",
    "parse_ruff",
    "parse_sarif",
    "read_lint",
]
