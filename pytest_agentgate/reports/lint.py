"""Lint reports: a linter's JSON output in, a :class:`LintReport` of normalised findings out.

One parser per tool, registered in :data:`LINT_FORMATS`. Severity is normalised here, once:
anything the tool calls error or fatal is an ``error``, every other finding it reports is a
``warning``, and notes/info are dropped. Parsers never judge; the lint gate applies thresholds.

Every failure to read is a :class:`ReportError` naming the source and saying what to do. A report
that parses but lists nothing (``[]``) is a clean run, so an unreadable report must never be
mistaken for one.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from pytest_agentgate.reports._io import (
    display_path,
    kind,
    load_json,
    optional_int,
    read_text,
    shape_error,
    whole_number,
)
from pytest_agentgate.reports.hints import LINT_COMMANDS, lint_hint
from pytest_agentgate.reports.model import LintReport, ReportError
from pytest_agentgate.verdict import Finding, Severity

LintParser = Callable[[str, str], LintReport]


def _empty_hint(tool: str, source: str) -> str:
    if _is_stdout(source):
        command = LINT_COMMANDS[tool]
        expected = command if command.startswith("a ") else f"the output of `{command}`"
        return f"the lint command printed no JSON; did it crash? expected {expected}"
    return (
        f"the report file is empty; did the lint command crash before writing it? {lint_hint(tool)}"
    )


def _is_stdout(source: str) -> bool:
    return source.lstrip("<").startswith("stdout")


def _expect_list(data: object, source: str, where: str, tool: str) -> list[Any]:
    if not isinstance(data, list):
        raise shape_error(source, where, "a list", data, lint_hint(tool))
    return data


def _expect_dict(data: object, source: str, where: str, tool: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise shape_error(source, where, "an object", data, lint_hint(tool))
    return data


def _expect_str(data: object, source: str, where: str, tool: str) -> str:
    if not isinstance(data, str):
        raise shape_error(source, where, "a string", data, lint_hint(tool))
    return data


def _optional_str(data: object, source: str, where: str, tool: str) -> str | None:
    if data is None:
        return None
    return _expect_str(data, source, where, tool)


def _load(text: str, source: str, tool: str) -> Any:
    return load_json(text, source, empty_hint=_empty_hint(tool, source), hint=lint_hint(tool))


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

    A fatal message (a parse error, ruleId null) is an error whatever its severity. A file whose
    ``errorCount`` and ``warningCount`` add up to more messages than it lists is not credible.
    """
    data = _expect_list(_load(text, source, "eslint"), source, "the top level", "eslint")
    findings: list[Finding] = []
    for index, entry in enumerate(data):
        where = f"file entry {index}"
        entry = _expect_dict(entry, source, where, "eslint")
        file_path = _expect_str(entry.get("filePath"), source, f'{where} "filePath"', "eslint")
        messages = _expect_list(entry.get("messages"), source, f'{where} "messages"', "eslint")
        listed = len(findings)
        for number, raw in enumerate(messages):
            at = f"{where} message {number}"
            raw = _expect_dict(raw, source, at, "eslint")
            message = _expect_str(raw.get("message"), source, f'{at} "message"', "eslint")
            severity: Severity
            level = raw.get("severity")
            if raw.get("fatal") is True or (level == 2 and type(level) is int):
                severity = "error"
            elif level == 1 and type(level) is int:
                severity = "warning"
            else:
                # eslint writes 1 or 2 (a rule "off", 0, reports nothing): 0, "2", "error" or
                # 2.0 is a report eslint did not write, and skipping it would count nothing and
                # pass.
                raise ReportError(
                    source,
                    f"{at} has severity {level!r}: eslint writes 1 (warning) or 2 (error); the "
                    "report is not credible",
                    lint_hint("eslint"),
                )
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
        counts = (entry.get("errorCount"), entry.get("warningCount"))
        claimed = sum(c for c in counts if type(c) is int)
        found = len(findings) - listed
        if claimed > found:
            # eslint counts the messages it lists: counts above them are messages taken out.
            raise ReportError(
                source,
                f"{where} counts {claimed} errors and warnings but lists {found} messages; the "
                "report is not credible",
                lint_hint("eslint"),
            )
    return LintReport(tool="eslint", source=source, findings=findings)


# --- pylint -------------------------------------------------------------------------------------

_PYLINT_ERRORS = {"error", "fatal"}
_PYLINT_IGNORED = {"info", "information"}
_PYLINT_WARNINGS = {"warning", "convention", "refactor"}


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
        if kind not in _PYLINT_ERRORS and kind not in _PYLINT_WARNINGS:
            # Counted as a warning, an error pylint never wrote could pass a warning budget.
            raise ReportError(
                source,
                f"{at} has type {raw.get('type')!r}: pylint writes error, fatal, warning, "
                "convention, refactor or info; the report is not credible",
                lint_hint("pylint"),
            )
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
    """``mypy --output json`` (``-O json``, mypy >= 1.11): one JSON object per line.

    Severity error counts; notes are dropped (they explain an error on a neighbouring line, or say
    that an untyped function was not checked). mypy's JSON columns are 0-based (its text output
    adds one): they are made 1-based here, like every other tool's. A clean run prints nothing at
    all, so empty text is a clean report, not an unreadable one (a crashed mypy is caught by its
    exit code). A trailing plain-text summary line ("Found 3 errors ...") is skipped; any other
    line that is not a JSON object makes the report unreadable.
    """
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
        if severity == "note":
            continue
        if severity != "error":
            # mypy writes "error" or "note": anything else would be counted as nothing.
            raise ReportError(
                source,
                f'line {number} has severity {severity!r}: mypy writes "error" or "note"; the '
                "report is not credible",
                lint_hint("mypy"),
            )
        hint = raw.get("hint")
        if isinstance(hint, str) and hint.strip():
            message = f"{message} ({'; '.join(hint.strip().splitlines())})"
        path = raw.get("file")
        column = optional_int(raw.get("column"))
        findings.append(
            Finding(
                message=message,
                path=display_path(path) if isinstance(path, str) else None,
                line=optional_int(raw.get("line")),
                code=_optional_str(raw.get("code"), source, f'line {number} "code"', "mypy"),
                severity="error",
                tool="mypy",
                column=None if column is None or column < 0 else column + 1,
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
            named = raw.get("filename")
            filename = named if isinstance(named, str) else str(path)
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


_TEXT_LINE = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?:(?P<column>\d+):)? (?P<code>[A-Z]+[0-9]+) (?P<text>.*)$"
)


def parse_flake8_text(text: str, source: str) -> LintReport:
    """The default output of flake8 and pycodestyle: ``path:line:col: CODE message`` per line.

    Every line must be one (a crash's traceback is not a clean run); an empty output is.
    """
    findings = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        found = _TEXT_LINE.match(raw)
        if found is None:
            raise ReportError(
                source,
                f"line {number} is not a `path:line:col: CODE message` finding: {raw[:200]!r}",
                lint_hint("flake8-text"),
            )
        findings.append(
            Finding(
                message=found["text"],
                path=display_path(found["path"]),
                line=whole_number(found["line"]),
                code=found["code"],
                severity="error",
                tool="flake8",
                column=whole_number(found["column"]) if found["column"] else None,
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
_SARIF_KINDS = frozenset({"notApplicable", "pass", "fail", "review", "open", "informational"})


def _sarif_uri(uri: str) -> str:
    """A SARIF artifact URI as a path: percent-decoded (bandit writes ``prix_%C3%A9.py``)."""
    if uri.startswith("file://"):
        path = unquote(uri[len("file://") :])
        # file:///C:/x -> C:/x on Windows; file:///home/x -> /home/x elsewhere.
        if len(path) > 3 and path[0] == "/" and path[2] == ":":
            path = path[1:]
        return display_path(path)
    return display_path(unquote(uri))


def _sarif_location(result: dict[str, Any]) -> tuple[str | None, int | None, int | None]:
    locations = result.get("locations")
    if not isinstance(locations, list) or not locations or not isinstance(locations[0], dict):
        return None, None, None
    physical = locations[0].get("physicalLocation")
    if not isinstance(physical, dict):
        return None, None, None
    artifact = physical.get("artifactLocation")
    uri = artifact.get("uri") if isinstance(artifact, dict) else None
    path = _sarif_uri(uri) if isinstance(uri, str) else None
    region = physical.get("region")
    if not isinstance(region, dict):
        return path, None, None
    return path, optional_int(region.get("startLine")), optional_int(region.get("startColumn"))


def _sarif_rule_levels(run: dict[str, Any]) -> tuple[dict[str, str], list[str | None]]:
    """Each rule's ``defaultConfiguration.level`` by id and by index (the driver's rules)."""
    by_id: dict[str, str] = {}
    by_index: list[str | None] = []
    tool = run.get("tool")
    driver = tool.get("driver") if isinstance(tool, dict) else None
    rules = driver.get("rules") if isinstance(driver, dict) else None
    for rule in rules if isinstance(rules, list) else ():
        level = None
        if isinstance(rule, dict):
            config = rule.get("defaultConfiguration")
            level = config.get("level") if isinstance(config, dict) else None
            level = level if isinstance(level, str) else None
            if isinstance(rule.get("id"), str) and level is not None:
                by_id[rule["id"]] = level
        by_index.append(level)
    return by_id, by_index


def _sarif_level(
    result: dict[str, Any], by_id: dict[str, str], by_index: list[str | None]
) -> object:
    """The result's effective level (SARIF 2.1.0 section 3.27.10), or None if it is no finding.

    ``kind`` other than ``fail`` (pass, review, informational, ...) means level none; a missing
    level falls back to the rule's default configuration, then to ``warning``. The level is
    returned as the report writes it: one SARIF does not have is the caller's to refuse.
    """
    kind = result.get("kind", "fail")
    if kind != "fail":
        return None
    level = result.get("level")
    if level is not None:
        return level
    rule = result.get("rule")
    index = result.get("ruleIndex")
    if isinstance(rule, dict) and isinstance(rule.get("index"), int):
        index = rule["index"]
    if isinstance(index, int) and 0 <= index < len(by_index) and by_index[index] is not None:
        return by_index[index]
    rule_id = result.get("ruleId")
    if isinstance(rule_id, str) and rule_id in by_id:
        return by_id[rule_id]
    return "warning"


def _sarif_suppressed(result: dict[str, Any]) -> bool:
    """Suppressed in source or accepted by a reviewer (a ``suppressions`` entry not rejected or
    under review), or a baseline result that is gone (``baselineState: absent``)."""
    if result.get("baselineState") == "absent":
        return True
    suppressions = result.get("suppressions")
    if not isinstance(suppressions, list):
        return False
    return any(
        isinstance(s, dict) and s.get("status", "accepted") == "accepted" for s in suppressions
    )


def _sarif_notifications(run: dict[str, Any], tool: str) -> list[Finding]:
    """Error-level tool notifications: a file the tool could not analyse (bandit reports a syntax
    error this way) is not a clean file, so each is an error finding."""
    findings = []
    invocations = run.get("invocations")
    for invocation in invocations if isinstance(invocations, list) else ():
        if not isinstance(invocation, dict):
            continue
        for key in ("toolExecutionNotifications", "toolConfigurationNotifications"):
            notes = invocation.get(key)
            for note in notes if isinstance(notes, list) else ():
                if not isinstance(note, dict) or note.get("level", "warning") != "error":
                    continue
                raw_message = note.get("message")
                text = raw_message.get("text") if isinstance(raw_message, dict) else None
                descriptor = note.get("descriptor")
                code = descriptor.get("id") if isinstance(descriptor, dict) else None
                path, line, column = _sarif_location(note)
                findings.append(
                    Finding(
                        message=f"{tool} could not analyse this: {text or 'tool error'}",
                        path=path,
                        line=line,
                        code=code if isinstance(code, str) else None,
                        severity="error",
                        tool=tool,
                        column=column,
                    )
                )
    return findings


def _sarif_not_credible(
    source: str, at: str, field: str, value: object, known: list[str]
) -> ReportError:
    return ReportError(
        source,
        f"{at} has {field} {value!r}: SARIF 2.1.0 writes {', '.join(known)}; the report is not "
        "credible",
        lint_hint("sarif"),
    )


def parse_sarif(text: str, source: str) -> LintReport:
    """SARIF 2.1.0 (CodeQL, semgrep, bandit, ruff, and every other SARIF producer).

    ``runs[].results[]``: level error -> error, warning -> warning, note/none dropped; a result
    without a level takes its rule's default level, else warning. Results that are not failures
    (``kind`` pass/review/...), suppressed, or absent from a baseline are dropped. Error-level
    tool notifications (a file the tool could not parse) are errors. Each finding is tagged with
    its run's tool name; the report's tool is that name when every run has the same one. A run
    without ``results`` checked nothing, and a level or kind SARIF does not have is not credible.
    """
    data = _expect_dict(_load(text, source, "sarif"), source, "the top level", "sarif")
    runs = _expect_list(data.get("runs"), source, 'the "runs" key', "sarif")
    if not runs:
        # A tool that ran writes a run, even with no results: no run is no evidence.
        raise ReportError(
            source,
            "has no runs: the tool wrote no run of itself, so nothing was checked",
            lint_hint("sarif"),
        )
    findings = []
    tools = []
    for run_index, run in enumerate(runs):
        run = _expect_dict(run, source, f"run {run_index}", "sarif")
        driver = run.get("tool", {}).get("driver", {}) if isinstance(run.get("tool"), dict) else {}
        tool = driver.get("name") if isinstance(driver, dict) else None
        tool = tool if isinstance(tool, str) and tool else "sarif"
        tools.append(tool)
        by_id, by_index = _sarif_rule_levels(run)
        results = run.get("results")
        if results is None:
            # SARIF: "It must be present (but may be empty) if a log file represents an actual
            # scan"; a run without it only exports rule metadata.
            raise ReportError(
                source,
                f"run {run_index} has no results (a scan writes them, [] when it found none), "
                "so nothing was checked",
                lint_hint("sarif"),
            )
        for index, result in enumerate(
            _expect_list(results, source, f"run {run_index} results", "sarif")
        ):
            at = f"run {run_index} result {index}"
            result = _expect_dict(result, source, at, "sarif")
            raw_message = result.get("message")
            message = raw_message.get("text") if isinstance(raw_message, dict) else None
            if message is None and isinstance(raw_message, dict):
                message = raw_message.get("markdown")
            if message is None and isinstance(raw_message, dict) and "id" in raw_message:
                message = f"message {raw_message['id']}"  # text lives in the rule's messageStrings
            message = _expect_str(message, source, f'{at} "message.text"', "sarif")
            kind = result.get("kind", "fail")
            if not isinstance(kind, str) or kind not in _SARIF_KINDS:
                raise _sarif_not_credible(source, at, "kind", kind, sorted(_SARIF_KINDS))
            if kind != "fail" and result.get("level", "none") != "none":
                raise ReportError(
                    source,
                    f"{at} has kind {kind!r} with level {result.get('level')!r}: SARIF 2.1.0 "
                    "gives a result that is not a failure the level none; the report is not "
                    "credible",
                    lint_hint("sarif"),
                )
            level = _sarif_level(result, by_id, by_index)
            severity: Severity | None = None
            if isinstance(level, str) and level in _SARIF_LEVELS:
                severity = _SARIF_LEVELS[level]
            elif level is not None:
                # Counted as a warning, an error SARIF never names could pass a warning budget.
                raise _sarif_not_credible(source, at, "level", level, list(_SARIF_LEVELS))
            if severity is None or _sarif_suppressed(result):
                continue
            rule_id = result.get("ruleId")
            if rule_id is None and isinstance(result.get("rule"), dict):
                rule_id = result["rule"].get("id")
            path, line, column = _sarif_location(result)
            findings.append(
                Finding(
                    message=message,
                    path=path,
                    line=line,
                    code=_optional_str(rule_id, source, f'{at} "ruleId"', "sarif"),
                    severity=severity,
                    tool=tool,
                    column=column,
                )
            )
        findings.extend(_sarif_notifications(run, tool))
    tool_name = tools[0] if len(set(tools)) == 1 else "sarif"
    return LintReport(tool=tool_name, source=source, findings=findings)


LINT_FORMATS: dict[str, LintParser] = {
    "ruff": parse_ruff,
    "eslint": parse_eslint,
    "pylint": parse_pylint,
    "mypy": parse_mypy,
    "flake8": parse_flake8,
    "flake8-text": parse_flake8_text,
    "sarif": parse_sarif,
}


# --- detection ----------------------------------------------------------------------------------

_FORMAT_NAMES = {
    "ruff": "ruff JSON",
    "eslint": "eslint JSON",
    "pylint": "pylint json2 (or legacy json)",
    "mypy": "mypy JSON lines",
    "flake8": "flake8-json",
    "flake8-text": "flake8 or pycodestyle text (path:line:col: CODE message)",
    "sarif": "SARIF 2.1.0",
}


def _formats_hint() -> str:
    known = ", ".join(f"{name} ({_FORMAT_NAMES.get(name, name)})" for name in LINT_FORMATS)
    return f"agentgate reads: {known}; set `format:` to name it"


def _undetected(source: str, what: str) -> ReportError:
    return ReportError(
        source, f"is not a lint report agentgate recognises ({what})", _formats_hint()
    )


def _classify_item(item: object) -> str | None:
    """The list format an element of a top-level JSON list belongs to."""
    if not isinstance(item, dict):
        return None
    if "filePath" in item and "messages" in item:
        return "eslint"
    if "code" in item and "location" in item and "filename" in item:
        return "ruff"
    if "message-id" in item or ("symbol" in item and "type" in item and "module" in item):
        return "pylint"
    return None


def _classify_object(data: dict[str, Any]) -> str | None:
    if "runs" in data and "version" in data:
        if data["version"] == "2.1.0":
            return "sarif"
        return None
    if isinstance(data.get("messages"), list) and isinstance(data.get("statistics"), dict):
        return "pylint"
    if all(isinstance(v, list) for v in data.values()) and all(
        isinstance(x, dict) and "code" in x and "line_number" in x
        for v in data.values()
        for x in v[:1]
    ):
        return "flake8"  # {} too: flake8-json with nothing checked
    if {"file", "line", "severity", "message"} <= data.keys():
        return "mypy"  # a single JSON-lines record
    return None


def detect_lint_format(text: str, source: str) -> str:
    """The lint format of ``text``, judged by its content; ``source`` names it in errors.

    ruff: a list of objects with "code", "location" and "filename"; eslint: a list of objects with
    "filePath" and "messages"; pylint json2: an object with "messages" and "statistics" (legacy
    json: a list of objects with "message-id"/"symbol"); mypy: JSON lines, each an object with
    "file", "line", "severity" and "message"; flake8-json: an object mapping each file to a list of
    violations with "code"; SARIF: an object with "version": "2.1.0" and "runs".

    Raises ReportError, listing the formats agentgate reads, when the text is empty, not JSON, or
    matches no format or several (``[]`` is a clean ruff, eslint or pylint run alike; mypy prints
    nothing on a clean run): set the format explicitly then.
    """
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        raise ReportError(
            source,
            "is empty, so its format cannot be detected (a clean mypy run prints nothing)",
            _formats_hint(),
        )
    if stripped[0] not in "[{":
        raise _undetected(source, "it is not JSON")
    first_line = stripped.partition("\n")[0]
    try:
        data = json.loads(stripped)
    except RecursionError:
        raise ReportError(source, "is JSON nested too deeply to read", _formats_hint()) from None
    except ValueError:
        # Several JSON objects one per line: mypy's JSON lines (a lone line parses as an object).
        try:
            first = json.loads(first_line)
        except (ValueError, RecursionError):
            raise _undetected(source, "it is not valid JSON") from None
        if isinstance(first, dict) and _classify_object(first) == "mypy":
            return "mypy"
        raise _undetected(source, "it is several JSON values, but not mypy's JSON lines") from None
    if isinstance(data, list):
        if not data:
            raise ReportError(
                source,
                "is an empty list: a clean ruff, eslint or pylint (json) run, but which one "
                "cannot be told",
                _formats_hint(),
            )
        kinds = {_classify_item(item) for item in data[:50]}
        if len(kinds) == 1 and None not in kinds:
            return kinds.pop()  # type: ignore[return-value]
        raise _undetected(source, "a JSON list of unknown or mixed items")
    if isinstance(data, dict):
        found = _classify_object(data)
        if found is not None:
            return found
        if "runs" in data:
            version = data.get("version")
            raise _undetected(source, f"SARIF version {version!r}; agentgate reads SARIF 2.1.0")
        raise _undetected(source, "a JSON object of unknown shape")
    raise _undetected(source, f"JSON {kind(data)} at the top level")


def _parser(format: str, source: str) -> LintParser:
    try:
        return LINT_FORMATS[format]
    except KeyError:
        raise ReportError(source, f"unknown lint format {format!r}", _formats_hint()) from None


def parse_lint(text: str, *, format: str | None = None, source: str) -> LintReport:
    """Parse lint output ``text`` in ``format`` (None: detected from the content).

    ``source`` is the report's path, or ``"stdout of `COMMAND`"`` when the text is what a command
    printed (an empty stdout is then reported as a probable crash).
    """
    if format is None:
        format = detect_lint_format(text, source)
    return _parser(format, source)(text, source)


def read_lint(path: str | os.PathLike[str], *, format: str | None = None) -> LintReport:
    """Read and parse the lint report file at ``path`` (format None: detected from the content)."""
    source = os.fspath(path)
    if format is not None:
        parser = _parser(format, source)
        hint = (
            f"the lint command did not write it; {lint_hint(format)} "
            "with its output sent to this file"
        )
    else:
        hint = "the lint command did not write it; send its JSON output to this file"
    text = read_text(path, hint=hint)
    if format is None:
        format = detect_lint_format(text, source)
        parser = _parser(format, source)
    return parser(text, source)


__all__ = [
    "LINT_FORMATS",
    "LintParser",
    "detect_lint_format",
    "parse_eslint",
    "parse_flake8",
    "parse_lint",
    "parse_mypy",
    "parse_pylint",
    "parse_ruff",
    "parse_sarif",
    "read_lint",
]
