"""Shared helpers for the report parsers: read a file or JSON text, or fail with a ReportError.

Every parser promises one failure type, :class:`ReportError`, whose message names the report and
says what to do. These helpers turn the many ways of failing (missing file, directory, permission,
not UTF-8, empty, not JSON, truncated JSON, wrong shape, impossible numbers) into that one type.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from pathlib import Path
from typing import Any

from pytest_agentgate.reports.model import ReportError


def read_bytes(path: str | os.PathLike[str], *, hint: str = "") -> bytes:
    """The content of ``path``; a missing or unreadable file is a ReportError carrying ``hint``."""
    name = os.fspath(path)
    try:
        return Path(name).read_bytes()
    except FileNotFoundError:
        raise ReportError(name, "file not found", hint) from None
    except IsADirectoryError:
        raise ReportError(name, "is a directory, not a report file", hint) from None
    except PermissionError:
        raise ReportError(name, "permission denied", "make the report readable") from None
    except OSError as exc:
        # Windows reports a directory as PermissionError or a generic OSError; keep it clean.
        if Path(name).is_dir():
            raise ReportError(name, "is a directory, not a report file", hint) from None
        raise ReportError(name, f"cannot be read: {exc.strerror or exc}", hint) from None


def decode_text(data: bytes, source: str) -> str:
    """UTF-8 text (a byte order mark is tolerated, PowerShell writes one)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReportError(
            source,
            f"is not UTF-8 text (undecodable byte at offset {exc.start})",
            "point the gate at the report file itself, not a binary or compressed file",
        ) from None


def read_text(path: str | os.PathLike[str], *, hint: str = "") -> str:
    return decode_text(read_bytes(path, hint=hint), os.fspath(path))


def load_json(text: str, source: str, *, empty_hint: str = "", hint: str = "") -> Any:
    """Parse JSON text. Empty, truncated and malformed text are ReportErrors naming ``source``."""
    if not text.strip():
        raise ReportError(source, "is empty: no JSON to read", empty_hint or hint)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if not text[exc.pos :].strip():
            # The parser ran out of input: a report cut off by a crash, a full disk or a timeout.
            problem = f"is truncated JSON (it ends at line {exc.lineno}, column {exc.colno})"
        else:
            problem = f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        raise ReportError(source, problem, hint) from None
    except RecursionError:
        raise ReportError(source, "is JSON nested too deeply to read", hint) from None
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        raise ReportError(source, f"is not valid JSON ({exc})", hint) from None


def kind(value: object) -> str:
    """A JSON-ish name for the type of ``value``, for wrong-shape messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def shape_error(
    source: str, where: str, expected: str, value: object, hint: str = ""
) -> ReportError:
    return ReportError(
        source, f"unexpected shape: {where} should be {expected}, got {kind(value)}", hint
    )


# No report counts more than this (lines, hits, tests, branches): a larger count is not credible.
MAX_COUNT = 10**15


def count(value: object, source: str, where: str, hint: str = "") -> int:
    """A non-negative whole number from a report, or a ReportError saying where it was wrong."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise shape_error(source, where, "a whole number", value, hint)
    if isinstance(value, float):
        if not value.is_integer():
            raise ReportError(source, f"{where} should be a whole number, got {value!r}", hint)
        value = int(value)
    if value < 0:
        raise ReportError(source, f"{where} is negative ({value})", hint)
    if value > MAX_COUNT:
        raise ReportError(
            source,
            f"{where} is {_short(value)}, more than any report can count: not credible",
            hint,
        )
    return value


def whole_number(text: str) -> int | None:
    """A count as text reports write it ("12", "12.0"): None unless it is a finite whole number
    from 0 to :data:`MAX_COUNT` (never inf, nan, 1e308 or 5,000 digits)."""
    text = text.strip()
    if len(text) > 32:
        return None
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return None
        if not number.is_integer():  # inf and nan are not integers either
            return None
        value = int(number)
    return value if 0 <= value <= MAX_COUNT else None


def _short(value: int) -> str:
    text = str(value) if value < 10**30 else f"a {len(str(value))}-digit number"
    return text


def optional_int(value: object) -> int | None:
    """A line or column number if the report gives a usable one (a whole number from 0 to
    :data:`MAX_COUNT`), else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_COUNT else None


def display_path(
    path: str, base: str | os.PathLike[str] | None = None, *, follow_links: bool = True
) -> str:
    """``path`` relative to ``base`` (default: the working directory) when it lies under it.

    Tools write absolute paths; findings read better, and match across machines, relative to the
    project. Paths outside ``base``, and relative paths, are returned unchanged. With
    ``follow_links`` false the answer is computed from the strings alone (no file is looked at),
    as the judges need.
    """
    if not path or not os.path.isabs(path):
        return path
    return _display_path(path, os.fspath(os.getcwd() if base is None else base), follow_links)


@functools.lru_cache(maxsize=4096)
def _display_path(path: str, base: str, follow_links: bool) -> str:
    """:func:`display_path`, once per path: a report names the same files again and again (a
    million findings in a few hundred files), and resolving a link costs a system call a part."""
    relative = _under(Path(path), Path(base))
    if relative is None and follow_links:
        # A symlinked working directory (macOS /tmp, bind mounts) against a tool's resolved path.
        # A path that cannot be resolved (a NUL byte in it is a ValueError) is compared as written.
        with contextlib.suppress(OSError, ValueError):
            relative = _under(Path(path).resolve(), Path(base).resolve())
    return path if relative is None else relative


def _under(absolute: Path, root: Path) -> str | None:
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return None
    return str(relative) if relative.parts else "."


# --- XML ----------------------------------------------------------------------------------------


class XmlRejected(Exception):
    """Raised from an expat handler to stop reading a report (a DTD, or the wrong root element)."""

    def __init__(self, problem: str, hint: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint


def _refuse_entities(*_args: object) -> None:
    raise XmlRejected(
        "DTD entity declarations are not allowed in a report",
        "a test or coverage report never needs one; refusing it keeps entity expansion and "
        "external entities out; regenerate the report with the tool",
    )


def _refuse_doctype(*_args: object) -> None:
    raise XmlRejected(
        "DTD/entity declarations are not allowed in a JUnit report",
        "a JUnit report never needs one; refusing it keeps entity expansion and external "
        "entities out; regenerate the report with the test tool",
    )


def _doctype_without_subset(
    _name: str, _system_id: str | None, _public_id: str | None, has_internal_subset: int
) -> None:
    # istanbul's Cobertura reporter writes <!DOCTYPE coverage SYSTEM "...coverage-04.dtd">: a
    # bare reference, never fetched (no external entity handler, parameter entities off). An
    # internal subset is where entities would be declared, so it is refused.
    if has_internal_subset:
        _refuse_entities()


def hardened_expat(*, names: tuple[str, ...] = (), allow_doctype: bool = False) -> Any:
    """A pyexpat parser that never expands a declared entity nor fetches anything.

    ``allow_doctype`` False refuses any ``<!DOCTYPE>``; True tolerates a bare external reference
    (never loaded) but still refuses an internal subset and every entity declaration. Handlers
    raise :class:`XmlRejected`; callers turn it into a ReportError naming the file. ``names``
    pre-seed expat's name cache, so a handler can compare tags by identity cheaply.
    """
    from xml.parsers import expat

    parser = expat.ParserCreate(intern={name: name for name in names})
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _doctype_without_subset if allow_doctype else _refuse_doctype
    parser.EntityDeclHandler = _refuse_entities
    parser.UnparsedEntityDeclHandler = _refuse_entities
    # typeshed types this handler as returning int; it never returns here, it raises.
    parser.ExternalEntityRefHandler = _refuse_entities  # type: ignore[assignment]
    return parser
