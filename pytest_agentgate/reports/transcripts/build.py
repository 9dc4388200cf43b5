"""What every harness's reader shares: building a :class:`Session` from parsed lines."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pytest_agentgate.reports._io import MAX_COUNT
from pytest_agentgate.reports.transcripts.model import (
    EDIT_TOOLS,
    SHELL_TOOLS,
    SUMMARY_CHARS,
    Session,
    ToolCall,
)

_dumps: Callable[[Any], bytes] | None
try:  # where it has no wheel (PyPy) ``repr`` keys a call's input the same way
    from orjson import dumps as _dumps
except ImportError:
    _dumps = None

# "Exit code 1", "Exit Code: 1", "exited with code 1", "exit code 1>"
_EXIT = re.compile(r"\b(?:[Ee]xit(?:ed with)? [Cc]ode|[Ee]xit [Ss]tatus)[: ]+(-?\d+)")


class Builder:
    """Collects one transcript's facts as its lines are fed, in order."""

    harness = "unknown"
    # Lines that say nothing the gate reads but their time, known by their first bytes: not
    # parsed once the first time is known (the last line is read when it is one of them). A
    # line that starts with one of ``skip``, or has one of ``skip_head`` in its first 160 bytes.
    # A key written in a line's JSON is quoted with bare quotes; the same text inside a string
    # value has escaped ones, so no text a tool returns can make a line look skippable.
    skip: tuple[bytes, ...] = ()
    skip_head: tuple[bytes, ...] = ()
    # Lines that start with one of these are always read, whatever their first bytes hold.
    keep: tuple[bytes, ...] = ()
    # Lines that start with this and an id (``{"id":"a5cb...``) are records a harness writes
    # again when they change: of two such lines in a row with the same id, the earlier is not
    # read when it says nothing yet (no text, no calls) and the later parses (skipped lines
    # between them do not count).
    rewritten = b""
    # What a skipped line that carries a time has in it: the last such line is read after all,
    # when no line read after it had a time.
    time_mark = b'"timestamp":'

    def __init__(self, source: str) -> None:
        self.session = Session(self.harness, source)
        self._calls: dict[str, ToolCall] = {}
        # Tokens per model response id: a response written on several lines counts once.
        self._usage: dict[str, int] = {}
        self._first: Any = None
        self._last: Any = None
        # How many times were read: a reader can tell whether a line it fed had one.
        self.stamps = 0

    # -- what a harness's reader calls --------------------------------------------------------

    def feed(self, record: dict[str, Any]) -> None:  # pragma: no cover - every reader has one
        raise NotImplementedError

    def time(self, value: Any) -> None:
        """A line's timestamp (ISO 8601 text, or milliseconds since the epoch). A transcript is
        written in order: the first and the last are kept, and read when the file is done."""
        if value is not None:
            if self._first is None:
                self._first = value
            self._last = value
            self.stamps += 1

    @property
    def timed(self) -> bool:
        """Whether the first time is known: from then on, lines with only a time are skipped."""
        return self._first is not None

    def call(self, call_id: str, name: str, arguments: Any) -> ToolCall:
        """A tool call; a second line for the same id (a rewritten message) changes nothing."""
        known = self._calls.get(call_id)
        if known is not None:
            return known
        args = arguments if isinstance(arguments, dict) else {"input": arguments}
        command = shell_command(name, args) if name in SHELL_TOOLS else None
        shown = command if command is not None else _brief(args)
        call = ToolCall(
            id=call_id,
            name=name,
            # The input as the harness wrote it: a repeated call is written the same way.
            key=_input_key(name, args),
            summary=_clip(f"{name}: {shown}" if shown else name),
            command=command,
            paths=edited_paths(name, args, command),
        )
        self._calls[call_id] = call
        self.session.calls.append(call)
        return call

    def result(self, call_id: str, *, failed: bool | None, text: str | None = None) -> None:
        """How a call ended: ``failed`` as the harness says, else the exit code in ``text``."""
        call = self._calls.get(call_id)
        if call is None:
            return
        code = exit_code(text) if text else None
        if code is not None:
            call.exit_code = code
        if failed is None and code is not None:
            failed = code != 0
        if failed is not None:
            call.failed = failed

    def usage(self, response_id: str | None, tokens: int, context: int | None = None) -> None:
        """One model response's tokens; the last response's ``context`` is the window's fill."""
        key = response_id or f"#{len(self._usage)}"
        self._usage[key] = max(0, tokens)
        if context is not None:
            self.session.context_tokens = context

    def final(self, text: Any) -> None:
        if isinstance(text, str) and text.strip():
            self.session.final_message = text

    def finish(self) -> Session:
        session = self.session
        session.tokens = sum(self._usage.values())
        first, last = timestamp(self._first), timestamp(self._last)
        if first is not None and last is not None:
            session.started, session.ended = min(first, last), max(first, last)
        return session


def whole_number(value: Any) -> int | None:
    """A JSON integer; None for anything else. A float with nothing after the point counts: orjson
    reads an integer past 64 bits as a float, where json reads it as an int."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def token_count(value: Any) -> int:
    """A count of tokens as a harness writes it. What is no count (a string, 1.5, -1) counts as
    none; a count above ``MAX_COUNT``, more than any session spends, counts as ``MAX_COUNT``: a
    budget still sees it spent, and every percentage made of it stays a number."""
    if type(value) is int and 0 <= value <= MAX_COUNT:  # what harnesses write: read at once
        return value
    count = whole_number(value)
    return 0 if count is None else min(max(count, 0), MAX_COUNT)


def window_size(value: Any) -> int | None:
    """A model's context window in tokens: a whole number from 1 to ``MAX_COUNT``, else None (a
    window of 10**400 would make every context fill 0%)."""
    size = whole_number(value)
    return size if size is not None and 0 < size <= MAX_COUNT else None


def timestamp(value: Any) -> float | None:
    """Seconds since the epoch; None for what is no time (NaN, infinite, 10**400, year 99999)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            seconds = value / 1000.0 if value > 1e11 else float(value)
        except OverflowError:  # an integer too large for a float
            return None
        return seconds if math.isfinite(seconds) else None
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except (ValueError, OverflowError, OSError):  # out of the platform's range too
            return None
    return None


def shell_command(name: str, args: dict[str, Any]) -> str | None:
    if name not in SHELL_TOOLS:
        return None
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        parts = [str(p) for p in command]
        # ["bash", "-lc", "pytest -q"]: the script is what the agent wrote.
        if len(parts) == 3 and parts[1] in ("-c", "-lc"):
            return parts[2]
        return " ".join(parts)
    return command if isinstance(command, str) else None


_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
# `apply_patch` as a command word (`apply_patch <<'EOF'`, `cd x && apply_patch "..."`).
_RUNS_APPLY_PATCH = re.compile(r"(?:^|[\s;&|(\[\"'])apply_patch(?=[\s\"',\]])")


def edited_paths(name: str, args: dict[str, Any], command: str | None) -> tuple[str, ...]:
    """The files a call writes: an edit tool's path, or the files of an ``apply_patch`` (given
    as the tool's input, or in the shell ``command``)."""
    for key in EDIT_TOOLS.get(name, ()):
        value = args.get(key)
        if isinstance(value, str) and value:
            return (value,)
    text = args.get("input") if name == "apply_patch" else command
    if not isinstance(text, str) or "*** Begin Patch" not in text:
        return ()
    # A shell command edits files only when it runs apply_patch (red team 50: a no-op `: '***
    # Begin Patch ...'` naming one file 21 ways was 21 edits, and file thrash let the agent go).
    if name != "apply_patch" and not _RUNS_APPLY_PATCH.search(text, 0, text.index("*** Begin")):
        return ()
    return tuple(dict.fromkeys(p.strip() for p in _PATCH_FILE.findall(text)))


def exit_code(text: str) -> int | None:
    """The last exit code a tool's output reports, if it reports one."""
    tail = text[-2000:]
    at = len(tail)
    while (at := tail.rfind("xit", 0, at)) > 0:  # the last one is read, not every one
        found = _EXIT.match(tail, at - 1)
        if found is not None:
            return int(found.group(1))
    return None


def _input_key(name: str, args: dict[str, Any]) -> int:
    """A call's whole input as one number: orjson writes it 3x faster than ``repr``."""
    if _dumps is not None:
        try:
            return hash((name, _dumps(args)))
        except TypeError:  # an integer past 64 bits, read by json
            pass
    return hash((name, repr(args)))


def _brief(args: dict[str, Any]) -> str:
    for key in ("file_path", "path", "notebook_path", "pattern", "query", "url"):
        value = args.get(key)
        if isinstance(value, str):
            return value
    return ""


def _clip(text: str) -> str:
    if (
        len(text) <= SUMMARY_CHARS
        and text.isprintable()  # no white space but the space
        and "  " not in text
        and not text.startswith(" ")
        and not text.endswith(" ")
    ):
        return text  # one line with single spaces: the common case, kept as it is
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"
