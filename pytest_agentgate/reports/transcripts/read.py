"""Reading a transcript: find the harness from the content, stream the lines, bounded.

Memory stays bounded whatever the file's size: lines are read one at a time, a line longer than
:data:`MAX_LINE` is skipped (counted, never kept), and what is kept per line is a few numbers and
a short summary of each tool call. A transcript is read, never trusted to be well formed: a
line that is not JSON (the harness was writing it as it was read) is counted and skipped.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.reports.transcripts.build import Builder
from pytest_agentgate.reports.transcripts.claude import ClaudeReader
from pytest_agentgate.reports.transcripts.codex import CodexReader
from pytest_agentgate.reports.transcripts.copilot import CopilotReader
from pytest_agentgate.reports.transcripts.gemini import GeminiReader
from pytest_agentgate.reports.transcripts.model import Session

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
_CHUNK = 1024 * 1024
_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "queue-operation", "attachment", "progress"}
)


def harness_of(record: Mapping[str, Any]) -> str | None:
    """The harness that wrote a transcript line, from its shape; None when it says nothing."""
    kind = record.get("type")
    if "payload" in record and kind in ("session_meta", "response_item", "event_msg"):
        return "codex"
    if isinstance(kind, str) and "." in kind and "data" in record:
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
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the generator is done
    except FileNotFoundError:
        raise ReportError(shown, "transcript not found") from None
    except IsADirectoryError:
        raise ReportError(shown, "is a directory, not a transcript") from None
    except OSError as exc:
        raise ReportError(shown, f"transcript cannot be read: {exc.strerror or exc}") from None
    with handle:
        if not _regular(handle):
            raise ReportError(shown, "is not a regular file")
        lines = _lines(handle)
        pending: list[Mapping[str, Any]] = []
        builder: Builder | None = None
        skipped = too_long = 0
        count = 0
        for raw in lines:
            count += 1
            if raw is None:
                too_long += 1
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                skipped += 1
                continue
            if not isinstance(record, dict):
                skipped += 1
                continue
            if builder is None:
                pending.append(record)
                if harness_of(record) is None and len(pending) < SNIFF_LINES:
                    continue
                builder = _start(pending, harness, shown)
                continue
            builder.feed(record)
        if builder is None:
            if not pending:
                raise ReportError(shown, "is empty: the harness has written nothing yet")
            builder = _start(pending, harness, shown)
    session = builder.finish()
    session.lines = count
    session.skipped = skipped + too_long
    if skipped:
        session.notes.append(f"{skipped} lines of the transcript were not JSON and were skipped")
    if too_long:
        session.notes.append(
            f"{too_long} lines of the transcript were longer than {MAX_LINE / 2**20:g} MB "
            "and were skipped"
        )
    return session


def _start(pending: list[Mapping[str, Any]], hint: str | None, shown: str) -> Builder:
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


def _regular(handle: BinaryIO) -> bool:
    return stat.S_ISREG(os.fstat(handle.fileno()).st_mode)


def _lines(handle: BinaryIO) -> Iterator[bytes | None]:
    """Each line's bytes; None for a line longer than MAX_LINE (read past, never kept)."""
    readline = handle.readline
    while True:
        line = readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) <= MAX_LINE or line.endswith(b"\n"):
            if line.strip():
                yield line
            continue
        while line and not line.endswith(b"\n"):  # the rest of the long line, in chunks
            line = readline(_CHUNK)
        yield None
