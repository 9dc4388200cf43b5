"""Finding and reading configuration files: YAML, TOML, pyproject.toml and the "workspace quality
gates" JSON shape. Reading only: :mod:`.validate` checks the document.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_agentgate.config.model import JSON_NAMES, YAML_NAMES, ConfigError, KeyPath
from pytest_agentgate.reports.model import METRICS
from pytest_agentgate.texts import read_regular_text

# -- finding and reading --------------------------------------------------------------------


# The files a directory's configuration may be in, first found wins. ``pyproject.toml`` counts
# only with a ``[tool.agentgate]`` table (:func:`has_tool_table`).
CONFIG_NAMES = (*YAML_NAMES, *JSON_NAMES, "pyproject.toml")


def find_config(start: Path) -> Path | None:
    """The nearest config file in ``start`` or its parents, looking no higher than the
    repository's top level, or outside a repository than the project's folder
    (:func:`~pytest_agentgate.project.discovery_top`): an unrelated parent folder's
    configuration never gates a project."""
    from pytest_agentgate.project import discovery_top

    top = discovery_top(start)
    for directory in (start, *start.parents):
        for name in CONFIG_NAMES:
            candidate = directory / name
            if candidate.is_file() and (name != "pyproject.toml" or _has_tool_file(candidate)):
                return candidate
        if directory == top:
            break
    return None


def _has_tool_file(pyproject: Path) -> bool:
    try:
        text = read_regular_text(pyproject)
    except (OSError, UnicodeDecodeError):
        return False
    return has_tool_table(text, str(pyproject))


def has_tool_table(text: str, source: str) -> bool:
    """Whether a ``pyproject.toml``'s ``text`` configures agentgate (``[tool.agentgate]``)."""
    if "agentgate" not in text:
        return False
    try:
        data = _load_toml(text, source)
    except ConfigError:
        # A broken pyproject.toml that looks configured is reported when it is read.
        # The table header itself may be the broken part: `[tool.agentgate` with no `]`.
        header = r"^\s*\[+\s*tool\s*\.\s*agentgate(?![\w-])"
        return re.search(header, text, re.MULTILINE) is not None
    tool = data.get("tool")
    return isinstance(tool, dict) and "agentgate" in tool


@dataclass
class RawConfig:
    """The parsed document before validation, with line numbers per key path when known."""

    data: Any
    source: str
    lines: dict[KeyPath, int] = field(default_factory=dict)
    # Key paths as the user wrote them, for configs translated from another shape.
    display: dict[KeyPath, str] = field(default_factory=dict)
    ms_timeouts: bool = False
    # The file names no ``gates``: its gates are the ones zero-config detects (config/resolve.py).
    detected_gates: bool = False


# A configuration is a few kilobytes; a bigger file is not one.
MAX_CONFIG_BYTES = 1024 * 1024


def read_raw(path: Path) -> RawConfig:
    source = str(path)
    try:
        # Opened without blocking: a FIFO (or a device) named as the configuration must never
        # hang the gate waiting for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ConfigError(source, None, "no such file") from None
    except OSError as exc:
        raise ConfigError(source, None, f"cannot be read: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(source, None, "is not a regular file; name the configuration file")
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(source, None, f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            source, None, f"is larger than {MAX_CONFIG_BYTES // 1024} KiB; a configuration is small"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            source, None, f"cannot be read: not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_raw(text, path.name, source)


def _check_document(data: Any, source: str, lines: dict[KeyPath, int] | None = None) -> None:
    """JSON and TOML nest without bound: a configuration deeper than YAML's bound is refused.
    All three formats write integers of any size (YAML and TOML in hex: ``0xfff...``): one beyond
    :data:`MAX_NUMBER`, as a key or a value, is refused too, naming its key (and its line)."""
    stack: list[tuple[Any, KeyPath]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise ConfigError(
                source, None, f"nested more than {MAX_DEPTH} levels deep; a configuration is flat"
            )
        if isinstance(node, dict):
            for key, value in node.items():
                stack.append((key, path))
                stack.append((value, (*path, key if isinstance(key, (str, int)) else "?")))
        elif isinstance(node, list):
            stack.extend((value, (*path, index)) for index, value in enumerate(node))
        elif isinstance(node, int) and not -MAX_NUMBER <= node <= MAX_NUMBER:
            digits = int(node.bit_length() * math.log10(2)) + 1
            shown = ".".join(str(p) if _printable(p) else "(a huge number)" for p in path)
            raise ConfigError(
                source,
                shown or None,
                _too_many_digits(digits, about=True),
                _line_of(path, lines or {}),
            )


def _printable(part: str | int) -> bool:
    return not isinstance(part, int) or -MAX_NUMBER <= part <= MAX_NUMBER


def _line_of(path: KeyPath, lines: dict[KeyPath, int]) -> int | None:
    """The line of ``path``, else of the nearest key above it that has one."""
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path)


def _too_many_digits(digits: int, *, about: bool = False) -> str:
    return (
        f"a number of {'about ' if about else ''}{digits:,} digits is larger than any setting "
        f"takes; write one of at most {MAX_DIGITS} digits"
    )


# More decimal digits than Python turns into an integer (sys.get_int_max_str_digits()).
_HUGE_DECIMAL = re.compile(r"[0-9](?:_?[0-9]){4300,}")


def _unreadable(source: str, language: str, exc: ValueError, text: str) -> ConfigError:
    """A value the parser could not build. The only one JSON and TOML have: an integer longer
    than Python reads (4,300 digits), refused as any huge number is, at its line."""
    found = _HUGE_DECIMAL.search(text)
    if found is not None and "integer string conversion" in str(exc):
        digits = sum(c.isdigit() for c in found.group())
        line = text.count("\n", 0, found.start()) + 1
        return ConfigError(source, None, _too_many_digits(digits), line)
    why = str(exc).split("; use sys.set_int_max_str_digits()")[0]
    return ConfigError(source, None, f"invalid {language}: a value cannot be read ({why})")


def parse_raw(text: str, name: str, source: str) -> RawConfig:
    """``text`` read as a config file called ``name`` is read; ``source`` names it in errors
    (a path, or ``agentgate.yml at main (abc123)`` for the base's copy)."""
    suffix = PurePosixPath(name).suffix
    if name == "pyproject.toml":
        return _read_pyproject(text, source)
    if suffix == ".toml":
        return RawConfig(_load_toml(text, source), source)
    if suffix == ".json":
        return _read_workspace_json(text, source)
    return _read_yaml(text, source)


def _load_toml(text: str, source: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ConfigError(
            source, None, f"nested more than {MAX_DEPTH} levels deep; a configuration is flat"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        if found:
            line: int | None = int(found.group(1))
        else:  # "(at end of document)"
            line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
        raise ConfigError(source, None, f"invalid TOML: {exc}", line) from None
    except ValueError as exc:
        raise _unreadable(source, "TOML", exc, text) from None
    _check_document(data, source)
    return data


def _read_pyproject(text: str, source: str) -> RawConfig:
    data = _load_toml(text, source)
    tool = data.get("tool")
    table = tool.get("agentgate") if isinstance(tool, dict) else None
    if table is None:
        raise ConfigError(source, None, "has no [tool.agentgate] table")
    return RawConfig(table, f"{source} [tool.agentgate]")


def _read_yaml(text: str, source: str) -> RawConfig:
    import yaml

    try:
        # libyaml's parser where PyYAML has it (its wheels do): the same nodes, read ten times
        # faster; the document is still built by the safe constructor, after the checks.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_yaml(node, source)  # before anything is expanded
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except RecursionError:
        raise ConfigError(
            source, None, f"nested more than {MAX_DEPTH} levels deep; a configuration is flat"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc)
        if "maximum nesting depth" in problem:  # libyaml's own bound, below the recursion's
            raise ConfigError(
                source, None, f"nested more than {MAX_DEPTH} levels deep; a configuration is flat"
            ) from None
        raise ConfigError(source, None, f"invalid YAML: {problem}", line) from None
    if node is None:
        # Only comments, or nothing: almost always a file written by mistake or truncated.
        raise ConfigError(
            source, None, "the file is empty; configure `gates:` (`agentgate init` writes one)"
        )
    lines: dict[KeyPath, int] = {}
    _yaml_lines(node, (), lines, set())
    _check_document(data, source, lines)
    return RawConfig(data, source, lines)


# What a configuration never needs: deeper nesting, or more values once aliases are expanded
# (an 850-byte "billion laughs" expands to billions), or a number a float cannot hold (every
# comparison and message made of it must work; Python cannot even print 5,000 digits).
MAX_DEPTH = 64
MAX_EXPANDED = 100_000
MAX_NUMBER = 10**300
MAX_DIGITS = 300


def _check_yaml(root: Any, source: str) -> None:
    """Refuse duplicate keys, alias bombs, alias cycles, deep nesting and scalars YAML cannot
    build (``2026-13-45``, ``!!float abc``), naming the line, before the document is built.
    Nothing of a large value is quoted."""
    import yaml

    sizes: dict[int, int] = {}
    scalars = yaml.constructor.SafeConstructor()

    def size(node: Any, depth: int, active: set[int]) -> int:
        line = node.start_mark.line + 1
        if depth > MAX_DEPTH:
            raise ConfigError(source, None, f"nested more than {MAX_DEPTH} levels deep", line)
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in active:
            raise ConfigError(source, None, "an alias refers to a value that contains it", line)
        active.add(id(node))
        total = 1
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        raise ConfigError(
                            source,
                            str(key.value),
                            f"appears twice in one mapping (lines {seen[key.value]} and "
                            f"{key.start_mark.line + 1}); keep one",
                            key.start_mark.line + 1,
                        )
                    seen[key.value] = key.start_mark.line + 1
                total += size(key, depth + 1, active) + size(value, depth + 1, active)
        elif isinstance(node, yaml.SequenceNode):
            total += sum(size(item, depth + 1, active) for item in node.value)
        elif node.tag in _YAML_BUILT:
            _build_scalar(scalars, node, source)
        active.discard(id(node))
        if total > MAX_EXPANDED:
            raise ConfigError(
                source,
                None,
                f"expands to more than {MAX_EXPANDED:,} values once its aliases are followed "
                "(an alias bomb?); write the values out",
                line,
            )
        sizes[id(node)] = total
        return total

    size(root, 0, set())


# The scalars YAML builds into something other than text, each said as a setting would take it.
_YAML_BUILT = {
    "tag:yaml.org,2002:int": "a whole number",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:bool": "true or false",
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:timestamp": "a date",
    "tag:yaml.org,2002:binary": "base64",
}


def _build_scalar(constructor: Any, node: Any, source: str) -> None:
    """Build one scalar the way the document will be built, so that one YAML cannot build (the
    date 2026-13-45, ``!!float abc``, 5,000 digits) is an error at its line, not a traceback."""
    import yaml

    try:
        constructor.construct_object(node)
    except yaml.YAMLError:
        raise  # said by the parser, with its line
    except Exception as exc:  # PyYAML's constructors raise whatever Python did (KeyError, ...)
        line = node.start_mark.line + 1
        digits = sum(c.isdigit() for c in node.value)
        if "integer string conversion" in str(exc):
            raise ConfigError(source, None, _too_many_digits(digits), line) from None
        value = node.value if len(node.value) <= 40 else node.value[:40] + "..."
        # A date's reason is the user's ("month must be in 1..12"); the others are Python's.
        date = node.tag.endswith(":timestamp") and isinstance(exc, ValueError)
        why = f" ({exc})" if date else ""
        raise ConfigError(
            source,
            None,
            f"`{value}` is read as {_YAML_BUILT[node.tag]} and is not one{why}; quote it if it "
            "is text",
            line,
        ) from None


def _yaml_lines(node: Any, path: KeyPath, lines: dict[KeyPath, int], seen: set[int]) -> None:
    import yaml

    lines.setdefault(path, node.start_mark.line + 1)
    if id(node) in seen:  # an alias back into itself (`&a [*a]`) must not recurse forever
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            # Construction has already refused keys that are not scalars (unhashable).
            key = key_node.value
            lines[(*path, key)] = key_node.start_mark.line + 1
            _yaml_lines(value_node, (*path, key), lines, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _yaml_lines(item, (*path, index), lines, seen)


# -- the "workspace quality gates" JSON shape -----------------------------------------------

_WS_TOP = ("enabled", "profile", "gates", "tokenBudget", "rejection", "$schema")
_WS_GATE_KEYS: dict[str, dict[str, str]] = {
    "build": {
        "enabled": "enabled",
        "command": "command",
        "timeout": "timeout",
        "maxErrors": "max_errors",
    },
    "lint": {
        "enabled": "enabled",
        "command": "command",
        "timeout": "timeout",
        "maxErrors": "max_errors",
        "maxWarnings": "max_warnings",
        "reportPath": "report",
        "format": "format",
    },
    "test": {
        "enabled": "enabled",
        "command": "command",
        "timeout": "timeout",
        "minPassRate": "min_pass_rate",
        "reportPath": "report",
    },
    "coverage": {
        "enabled": "enabled",
        "command": "command",
        "timeout": "timeout",
        "reportPath": "report",
        "format": "format",
        "thresholds": "thresholds",
    },
}
_WS_CUSTOM_KEYS = {
    "name": "name",
    "enabled": "enabled",
    "command": "command",
    "timeout": "timeout",
    "maxSeverity": "max_severity",
    "reportPath": "report",
    "metric": "metric",
    "max": "max",
    "min": "min",
}
_WS_REJECTION = ("maxRetries", "escalateToUser")


def _read_workspace_json(text: str, source: str) -> RawConfig:
    try:
        data = json.loads(text)
    except RecursionError:
        raise ConfigError(
            source, None, f"nested more than {MAX_DEPTH} levels deep; a configuration is flat"
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(source, None, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except ValueError as exc:
        raise _unreadable(source, "JSON", exc, text) from None
    if not isinstance(data, dict):
        raise ConfigError(source, None, "expected a JSON object at the top")
    _check_document(data, source)
    raw = RawConfig({}, source, ms_timeouts=True)
    out: dict[str, Any] = raw.data
    for key, value in data.items():
        _check_key(key, _WS_TOP, "", source)
        if key in ("enabled", "profile"):
            out[key] = value
            raw.display[(key,)] = key
        elif key == "rejection":
            _ws_rejection(value, out, raw)
        elif key == "gates":
            out["gates"] = _ws_gates(_expect_mapping(value, "gates", source), raw)
    return raw


def _ws_rejection(value: Any, out: dict[str, Any], raw: RawConfig) -> None:
    for key, item in _expect_mapping(value, "rejection", raw.source).items():
        _check_key(key, _WS_REJECTION, "rejection.", raw.source)
        if key == "maxRetries":
            out["attempts"] = {"max": item}
            raw.display[("attempts", "max")] = "rejection.maxRetries"
        elif not isinstance(item, bool):
            raise ConfigError(raw.source, "rejection.escalateToUser", "expected true or false")


def _ws_gates(gates: Mapping[str, Any], raw: RawConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in gates.items():
        _check_key(name, (*_WS_GATE_KEYS, "custom"), "gates.", raw.source)
        if name == "custom":
            items = value if isinstance(value, list) else None
            if items is None:
                raise ConfigError(raw.source, "gates.custom", "expected a list of gates")
            out["custom"] = [
                _ws_translate(item, _WS_CUSTOM_KEYS, ("gates", "custom", i), raw)
                for i, item in enumerate(items)
            ]
            continue
        gate = _ws_translate(value, _WS_GATE_KEYS[name], ("gates", name), raw)
        thresholds = gate.pop("thresholds", None)
        if thresholds is not None:
            where = f"gates.{name}.thresholds"
            for metric, number in _expect_mapping(thresholds, where, raw.source).items():
                _check_key(metric, METRICS, where + ".", raw.source)
                gate[metric] = number
                raw.display[("gates", name, metric)] = f"{where}.{metric}"
        out[name] = gate
    return out


def _ws_translate(
    value: Any, keys: dict[str, str], path: KeyPath, raw: RawConfig
) -> dict[str, Any]:
    where = ".".join(str(p) for p in path)
    gate = {}
    for key, item in _expect_mapping(value, where, raw.source).items():
        _check_key(key, tuple(keys), where + ".", raw.source)
        gate[keys[key]] = item
        raw.display[(*path, keys[key])] = f"{where}.{key}"
    return gate


# -- validation -----------------------------------------------------------------------------


def _check_key(
    key: Any, valid: Sequence[str], prefix: str, source: str, line: int | None = None
) -> None:
    if key in valid:
        return
    close = difflib.get_close_matches(str(key), list(valid), n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'?" if close else "valid keys: " + ", ".join(valid)
    raise ConfigError(source, f"{prefix}{key}", f"unknown key; {hint}", line)


def _expect_mapping(
    value: Any, where: str, source: str, line: int | None = None
) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(
            source, where, f"expected a mapping of keys, got {describe_value(value)}", line
        )
    return value


def describe_value(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, float) and math.isnan(value):
        return ".nan (not a number)"
    if isinstance(value, float) and math.isinf(value):
        return f"{'-' if value < 0 else ''}.inf (infinity)"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return f"a {type(value).__name__}"
