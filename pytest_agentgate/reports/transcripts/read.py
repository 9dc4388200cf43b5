"""Reading a transcript: find the harness from the content, stream the lines, bounded.

Memory stays bounded whatever the file's size: lines are read one at a time, a line longer than
:data:`MAX_LINE` is skipped (counted, never kept), and what is kept per line is a few numbers and
a short summary of each tool call. A transcript is read, never trusted to be well formed: a
line that is not JSON (the harness was writing it as it was read) is counted and skipped.

Time is bounded too: the transcript is the agent's to write, and a stop hook has a budget. A
file with holes (``truncate -s 400G``: 4 KB on disk) is no transcript a harness appended to,
and one not read within :data:`READ_TIME_S` is given up; both are a :class:`ReportError`, which
turns the session's signals off with a warning (red team 33: the hook's budget ran out on a
sparse transcript, and the stop was let through unverified, on every stop).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.reports.transcripts.build import Builder
from pytest_agentgate.reports.transcripts.claude import ClaudeReader
from pytest_agentgate.reports.transcripts.codex import CodexReader
from pytest_agentgate.reports.transcripts.copilot import CopilotReader
from pytest_agentgate.reports.transcripts.gemini import GeminiReader
from pytest_agentgate.reports.transcripts.model import Session

_fast_loads: Callable[[bytes], Any] | None
try:  # orjson parses a line 2-3x faster than json; without it (PyPy) json reads the same
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - installed wherever it has a wheel
    _fast_loads = None

READERS: dict[str, type[Builder]] = {
    "claude": ClaudeReader,
    "codex": CodexReader,
    "gemini": GeminiReader,
    "copilot": CopilotReader,
}
# A line longer than this is skipped: a tool's huge output is not worth the memory.
MAX_LINE = 16 * 1024 * 1024
# Lines looked at to recognise the format.
SNIFF_LINES = 20
# How long a transcript is read before it is given up: a long session's is read in a second or
# two; the rest of the stop hook's budget is the gates'.
READ_TIME_S = 20.0
# Lines read between two looks at the clock.
_CLOCK_LINES = 4096
_CHUNK = 1024 * 1024
# How far into a line ``Builder.skip_head`` is looked for.
_HEAD = 160
_BACKSLASH = ord("\\")
_DECODER = json.JSONDecoder()
_RAW_DECODE = _DECODER.raw_decode
_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "queue-operation", "attachment", "progress"}
)


def harness_of(record: dict[str, Any]) -> str | None:
    """The harness that wrote a transcript line, from its shape; None when it says nothing."""
    kind = record.get("type")
    if not isinstance(kind, str):  # any JSON value; a list or an object cannot be looked up
        kind = None
    if "payload" in record and kind in ("session_meta", "response_item", "event_msg"):
        return "codex"
    if kind is not None and "." in kind and "data" in record:
        return "copilot"
    if "$set" in record or "projectHash" in record or kind == "gemini":
        return "gemini"
    if kind in _CLAUDE_TYPES and ("uuid" in record or "sessionId" in record):
        return "claude"
    return None


def read_transcript(
    path: Path, *, harness: str | None = None, source: str | None = None
) -> Session:
    """The session a transcript records.

    ``harness`` is a hint (the door's name): the content decides when it can, because one
    harness may hand over another's file (Copilot runs Claude's hooks with its own events).
    A missing, unreadable or unrecognisable file is a :class:`ReportError`.
    """
    shown = source or str(path)
    try:  # without blocking: a FIFO in the transcript's place is refused, not waited on
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ReportError(shown, "transcript not found") from None
    except IsADirectoryError:  # where a directory cannot be opened at all
        raise ReportError(shown, "is a directory, not a transcript") from None
    except OSError as exc:
        raise ReportError(shown, f"transcript cannot be read: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ReportError(shown, "is a directory, not a transcript")
        raise ReportError(shown, "is not a regular file")
    hole = _first_hole(fd, info.st_size)
    if hole is not None:
        os.close(fd)
        raise ReportError(
            shown,
            f"has a hole at byte {hole} of its {info.st_size}: bytes never written, which a "
            "harness appending its lines never leaves (made by `truncate`?); not read",
        )
    with open(fd, "rb") as handle, _collector_paused():
        reading = _Reading(harness, shown)
        reading.stream(handle, time.monotonic() + READ_TIME_S)
    return reading.session()


def _first_hole(fd: int, size: int) -> int | None:
    """Where the file's first hole starts, when it has one before its end; None where the
    system does not say (no ``SEEK_HOLE``, a file system that keeps no holes)."""
    seek_hole = getattr(os, "SEEK_HOLE", None)
    if seek_hole is None or size == 0:
        return None
    try:
        hole = os.lseek(fd, 0, seek_hole)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        return None
    return hole if hole < size else None


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while the lines are read. What JSON makes holds no
    cycles, so the collector would find nothing; the hundreds of thousands of objects a big
    transcript makes would have it run over and over, for about a tenth of the time."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


class _Reading:
    """One pass over a transcript: the first lines find the harness, the rest are fed to it."""

    def __init__(self, hint: str | None, shown: str) -> None:
        self.hint = hint
        self.shown = shown
        self.builder: Builder | None = None
        self.pending: list[dict[str, Any]] = []
        self.lines = self.not_json = self.too_long = 0

    def stream(self, handle: BinaryIO, deadline: float) -> None:
        readline = handle.readline
        record_of = self._record
        feed: Callable[[dict[str, Any]], object] = self._sniff
        # Set once the reader is chosen and the first time is known: lines with only a time
        # are then skipped unread, and a line written again is read once.
        skipping = False
        skip: tuple[bytes, ...] = ()
        heads: tuple[bytes, ...] = ()
        keep: tuple[bytes, ...] = ()
        head = b""  # the one head a reader has, else ``heads``
        mark = rewrites = b""
        # The last line skipped unread that has a time in it, and how many times had been
        # read then: when no line read after it had one, its time is the session's end.
        timed_skip: bytes | None = None
        stamps = 0
        # A line that starts with ``Builder.rewritten`` and says nothing yet is held unread
        # until the next line is seen: when that one is the same record written again, only
        # the later one is read (the earlier is kept aside, in case the later is cut off).
        held: bytes | None = None
        held_id = b""
        earlier: bytes | None = None

        def release() -> None:
            nonlocal held, earlier
            if held is not None:
                record = record_of(held)
                if record is None and earlier is not None:
                    record = record_of(earlier)
                if record is not None:
                    feed(record)
                held = earlier = None

        lines = 0
        builder: Builder | None = None
        while raw := readline(MAX_LINE + 1):
            lines += 1
            if not lines % _CLOCK_LINES:
                self._in_time(deadline, handle, lines)
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):  # read past the rest, never keep it
                    raw = readline(_CHUNK)
                    self._in_time(deadline, handle, lines)
                self.too_long += 1
                continue
            if skipping:
                if (
                    raw.startswith(skip)
                    or (head and raw.find(head, 0, _HEAD) >= 0)
                    or (heads and _has_head(raw, heads))
                ) and not raw.startswith(keep):
                    if mark in raw and builder is not None:
                        release()
                        timed_skip, stamps = raw, builder.stamps
                    continue
                if rewrites and raw.startswith(rewrites):
                    cut = raw.find(b'"', len(rewrites))
                    if cut > len(rewrites) and raw[cut - 1] != _BACKSLASH:  # a plain id
                        line_id = raw[:cut]
                        if held is not None and line_id == held_id:
                            earlier = held  # written again: read only if this one is cut off
                        else:
                            release()
                        held, held_id = raw, line_id
                        if _says_nothing_more(raw):
                            continue  # may be written again by the next line
                        release()
                        continue
                if held is not None:
                    release()
            elif builder is not None and builder.timed:
                skipping = True
            record = record_of(raw)
            if record is not None and feed(record) and self.builder is not None:
                builder = self.builder
                feed = builder.feed
                skip, keep, mark = builder.skip, builder.keep, builder.time_mark
                rewrites = builder.rewritten
                if len(builder.skip_head) == 1:
                    head = builder.skip_head[0]
                else:
                    heads = builder.skip_head
                skipping = builder.timed
        release()
        self.lines = lines
        if timed_skip is None or builder is None or builder.stamps != stamps:
            return
        if (record := record_of(timed_skip)) is not None:
            feed(record)

    def _in_time(self, deadline: float, handle: BinaryIO, lines: int) -> None:
        if time.monotonic() > deadline:
            raise ReportError(
                self.shown,
                f"was not read within {READ_TIME_S:g} s ({lines} lines, {handle.tell()} bytes "
                "read): given up, the stop hook's time is the gates'",
            )

    def _record(self, raw: bytes) -> dict[str, Any] | None:
        """A line's JSON object; None (counted when the line is not blank) for anything else."""
        if _fast_loads is not None:
            try:
                record = _fast_loads(raw)
            except ValueError:  # orjson is stricter (bad UTF-8, NaN, huge numbers): json decides
                return self._read(raw)
            if isinstance(record, dict):
                return record
            self.not_json += 1
            return None
        return self._read(raw)

    def _read(self, raw: bytes) -> dict[str, Any] | None:
        """:meth:`_record` by the standard library's parser."""
        text = raw.decode("utf-8", "replace")
        try:
            record, end = _RAW_DECODE(text)
            if end != len(text) and text[end:].strip():
                raise ValueError("text after the JSON value")
        except (ValueError, RecursionError):  # not JSON, or nested too deeply to read
            try:  # white space before the value: what JSONDecoder.decode allows
                record = _DECODER.decode(text)
            except (ValueError, RecursionError):
                if raw.strip():
                    self.not_json += 1
                return None
        if not isinstance(record, dict):
            self.not_json += 1
            return None
        return record

    def _sniff(self, record: dict[str, Any]) -> bool:
        """Keep the first lines until one shows the harness; True once the reader is chosen."""
        self.pending.append(record)
        if harness_of(record) is None and len(self.pending) < SNIFF_LINES:
            return False
        self.builder = _start(self.pending, self.hint, self.shown)
        return True

    def session(self) -> Session:
        if self.builder is None:
            if not self.pending and self.not_json:
                raise ReportError(
                    self.shown, f"has no JSON line in its {self.lines} lines: not a transcript"
                )
            if not self.pending:
                raise ReportError(self.shown, "is empty: the harness has written nothing yet")
            self.builder = _start(self.pending, self.hint, self.shown)
        session = self.builder.finish()
        session.lines = self.lines
        session.skipped = self.not_json + self.too_long
        if self.not_json:
            session.notes.append(
                f"{self.not_json} lines of the transcript were not JSON and were skipped"
            )
        if self.too_long:
            session.notes.append(
                f"{self.too_long} lines of the transcript were longer than "
                f"{MAX_LINE / 2**20:g} MB and were skipped"
            )
        return session


def _says_nothing_more(raw: bytes) -> bool:
    """Whether a record written again says nothing the gate reads that its later writing does
    not: it has no tool calls and no text yet (Gemini's message as the model starts it). Only
    such a line is left unread when the same record follows; one with calls or text is read,
    so a later writing can add to what it said, never take it back."""
    return raw.find(b'"content":""', 0, _HEAD * 2) >= 0 and b'"toolCalls"' not in raw


def _has_head(raw: bytes, heads: tuple[bytes, ...]) -> bool:
    return any(raw.find(head, 0, _HEAD) >= 0 for head in heads)


def _start(pending: list[dict[str, Any]], hint: str | None, shown: str) -> Builder:
    """The reader of the harness the first lines show (else the hint), fed those lines."""
    name = next((h for r in pending if (h := harness_of(r)) is not None), hint)
    if name not in READERS:
        raise ReportError(
            shown,
            "is not a transcript agentgate reads (the JSON Lines of Claude Code, Codex CLI, "
            "Gemini CLI or Copilot CLI)",
        )
    builder = READERS[name](shown)
    for record in pending:
        builder.feed(record)
    pending.clear()
    return builder
