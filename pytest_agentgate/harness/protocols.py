"""Each harness's hook protocol: what its events say, and how an answer must be written.

Facts checked against the real CLIs (Claude Code 2.1, Codex CLI 0.169, Gemini CLI 0.61,
Copilot CLI 1.0, headless, 2026-11); Cursor from its published protocol:

- All four CLIs read ``{"decision": "block", "reason": R}`` on stdout (exit 0) as "keep
  working" and hand R to the model as its next user message. Cursor's ``stop`` hook reads
  ``{"followup_message": R}`` instead.
- Codex drops a block whose answer has any key besides ``continue, decision, reason,
  stopReason, suppressOutput, systemMessage`` (the agent then stops): answers use no other key.
- What the user sees: Claude Code and Gemini CLI show ``systemMessage``; Copilot CLI shows only
  the stderr of a hook that exits 2, and still lets the agent stop (exit 2 blocks in the other
  three); headless Codex shows no hook message at all.
- Claude Code and Copilot CLI let the agent stop at the 9th consecutive block; Cursor after the
  hook's ``loop_limit`` (written as :data:`CURSOR_LOOP_LIMIT` by ``install-hook``). agentgate
  must escalate before that (``block_cap``).

The session's start (``start_event``; checked with the same four CLIs, 2026-11): Claude Code,
Codex and Gemini CLI send ``SessionStart`` (snake_case, ``hook_event_name``, ``session_id``,
``cwd``, ``source``; Codex adds ``model`` and ``permission_mode``, Gemini ``timestamp``),
Copilot CLI ``sessionStart`` (camelCase: ``sessionId``, ``cwd``, ``timestamp``, ``source``,
``initialPrompt``, and no event name), and Copilot runs a Claude-style ``SessionStart`` hook from
``.claude/settings.json`` too, after its own, with ``hook_event_name``. The session id is the one
the session's stop events carry. Each of the four runs the hook before its first request to the
model, and waits for it. Empty stdout with exit 0 changes nothing: Claude Code and Codex give
any other stdout to the model as context, Gemini CLI shows it to the user; stderr with exit 0
reaches no model. Cursor's ``sessionStart`` could not be run (no headless Cursor): it has none
here.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

# Keys an answer may carry: Codex refuses the rest, so every harness gets only these.
ANSWER_KEYS = frozenset(
    {"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}
)
# The loop_limit install-hook writes for Cursor: its default would end the loop first.
CURSOR_LOOP_LIMIT = 8
CURSOR_DEFAULT_LOOP_LIMIT = 5


class EventError(ValueError):
    """The hook's stdin is not an event this harness sends."""


@dataclass(frozen=True)
class HookEvent:
    """What a harness told the hook about the stop, in the same terms for every harness."""

    harness: str
    session: str
    cwd: str
    transcript: str | None
    # The agent's final message when the event carries it (Claude Code, Codex), else None.
    message: str | None
    # Gemini CLI sends every reply of the session so far; the door keeps the new part.
    replies: str | None = None
    # False for a stop that is not the end of an agent's turn (Cursor: aborted, error).
    judge: bool = True
    # When the harness says the stop happened, in milliseconds: Copilot CLI gives its own hook
    # and the Claude-style one the same instant for one stop (one as a number, one as text).
    stamp: int | None = None
    # The event is the session's start, by its own name (``hook_event_name``), not a stop.
    start: bool = False


# The most of a hook event read from stdin (Gemini's accumulates every reply of a session).
MAX_EVENT_BYTES = 8 * 1024 * 1024
# The keys of an event cut at MAX_EVENT_BYTES that are read from what is there: each a string.
_HEAD_KEYS = (
    "session_id", "sessionId", "conversation_id", "cwd", "transcript_path", "transcriptPath",
    "hook_event_name", "timestamp", "status",
)  # fmt: skip
_HEAD_VALUE = re.compile(
    rb'"(' + b"|".join(k.encode() for k in _HEAD_KEYS) + rb')"\s*:\s*("(?:[^"\\]|\\.)*")'
)


def _head_of(raw: bytes) -> dict[str, Any] | None:
    """The string values of an event cut at :data:`MAX_EVENT_BYTES` (red team 38: a Gemini
    session whose replies outgrew it made every stop "not JSON", which lets the agent go):
    its session, folder and transcript come before the replies. A key is read where it is a
    key: inside a JSON string its quotes are escaped."""
    found: dict[str, Any] = {}
    for match in _HEAD_VALUE.finditer(raw):
        key = match.group(1).decode()
        if key in found:
            continue
        try:
            found[key] = json.loads(match.group(2))
        except ValueError:
            continue
    return found or None


def _whole_characters(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings (JSON's ``"\\ud83d"``, half of a
    character) replaced by U+FFFD: such a string cannot be written or hashed as UTF-8, and red
    team 38's final message `"Done \\ud83d"` made every stop an internal error, which lets
    the agent go."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return value
    if isinstance(value, dict):
        return {_whole_characters(k): _whole_characters(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_characters(v) for v in value]
    return value


@dataclass(frozen=True)
class Answer:
    """What the hook process writes and how it exits."""

    stdout: str
    stderr: str = ""
    exit_code: int = 0


@dataclass(frozen=True)
class Harness:
    """One harness: its name, its stop event, its session-start event, and its answers."""

    name: str
    title: str
    event: str
    # Consecutive blocks after which the harness lets the agent stop by itself; None: no cap.
    block_cap: int | None
    # The event a session starts with (``agentgate hook NAME --session-start``); None: none
    # agentgate uses.
    start_event: str | None = None

    # -- reading -----------------------------------------------------------------------------

    def parse(self, raw: bytes) -> HookEvent:
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            data = _head_of(raw) if len(raw) >= MAX_EVENT_BYTES else None
            if data is None:
                raise EventError(f"the hook's stdin is not JSON ({exc})") from None
        except RecursionError:
            raise EventError("the hook's stdin is JSON nested too deeply to read") from None
        if not isinstance(data, dict):
            raise EventError(f"the hook's stdin is a JSON {type(data).__name__}, not an object")
        data = _whole_characters(data)
        if self.name == "cursor":
            return _cursor_event(data)
        if self.name == "copilot" and "sessionId" in data:
            return _copilot_event(data)
        return _claude_shaped_event(self, data)

    # -- answering ---------------------------------------------------------------------------

    def allow(self, message: str | None = None) -> Answer:
        """Let the agent stop; ``message``, when given, is for the user (not the model)."""
        if message is None:
            return Answer("{}")
        if self.name == "copilot":
            # Copilot shows nothing of a hook's stdout; the stderr of exit 2 is its one channel
            # to the user, and exit 2 does not block it.
            return Answer("{}", message + "\n", 2)
        if self.name == "cursor":
            return Answer("{}", message + "\n")
        return Answer(_json({"systemMessage": message}))

    def block(self, reason: str, status_line: str | None = None) -> Answer:
        """Send the agent back to work with ``reason`` as its next instruction."""
        if self.name == "cursor":
            return Answer(_json({"followup_message": reason}))
        answer: dict[str, Any] = {"decision": "block", "reason": reason}
        if status_line and self.name != "copilot":
            answer["systemMessage"] = status_line
        return Answer(_json(answer))


def _json(answer: Mapping[str, Any]) -> str:
    from pytest_agentgate.verdict import json_text

    return json_text(answer)


def _text(data: Mapping[str, Any], key: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise EventError(f"the event has no {key!r} (a non-empty string)")
    return value


def _claude_shaped_event(harness: Harness, data: Mapping[str, Any]) -> HookEvent:
    """Claude Code's ``Stop``; Codex's ``Stop`` (the same keys and more); Gemini's
    ``AfterAgent``; and Copilot running a Claude-style hook (snake_case, Claude's keys). Their
    ``SessionStart`` too: ``session_id`` and ``cwd`` are there, the rest is left None."""
    message = _text(data, "last_assistant_message", required=False)
    replies = _text(data, "prompt_response", required=False) if harness.name == "gemini" else None
    return HookEvent(
        harness=harness.name,
        session=_text(data, "session_id") or "",
        cwd=_text(data, "cwd") or "",
        transcript=_text(data, "transcript_path", required=False),
        message=message,
        replies=replies,
        stamp=_stamp(data.get("timestamp")),
        start=data.get("hook_event_name") == "SessionStart",
    )


def _stamp(value: Any) -> int | None:
    """A harness's timestamp in milliseconds: epoch milliseconds, or ISO 8601 text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an integer too large for a float: no time
            return None
        return round(value) if finite else None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return round(moment.timestamp() * 1000)
    return None


def _copilot_event(data: Mapping[str, Any]) -> HookEvent:
    """Copilot CLI's ``agentStop``: camelCase, and no message (its transcript has it). Its
    ``sessionStart`` has ``sessionId`` and ``cwd`` too (and no event name: the command says
    which event it is)."""
    return HookEvent(
        harness="copilot",
        session=_text(data, "sessionId") or "",
        cwd=_text(data, "cwd") or "",
        transcript=_text(data, "transcriptPath", required=False),
        message=None,
        stamp=_stamp(data.get("timestamp")),
    )


def _cursor_event(data: Mapping[str, Any]) -> HookEvent:
    """Cursor's ``stop``: ``conversation_id``, ``workspace_roots``, ``status``, ``loop_count``."""
    roots = data.get("workspace_roots")
    cwd = data.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        if not isinstance(roots, list) or not roots or not isinstance(roots[0], str):
            raise EventError("the event has no 'workspace_roots' (a list of folders)")
        cwd = roots[0]
    status = data.get("status", "completed")
    return HookEvent(
        harness="cursor",
        session=_text(data, "conversation_id") or "",
        cwd=cwd,
        transcript=_text(data, "transcript_path", required=False),
        message=None,
        # An aborted or failed turn is the user's or the harness's doing, not a claim of done.
        judge=status == "completed",
    )


HARNESSES: dict[str, Harness] = {
    h.name: h
    for h in (
        Harness("claude", "Claude Code", "Stop", block_cap=8, start_event="SessionStart"),
        Harness("codex", "Codex CLI", "Stop", block_cap=None, start_event="SessionStart"),
        Harness("gemini", "Gemini CLI", "AfterAgent", block_cap=None, start_event="SessionStart"),
        Harness("copilot", "Copilot CLI", "agentStop", block_cap=8, start_event="sessionStart"),
        Harness("cursor", "Cursor", "stop", block_cap=CURSOR_LOOP_LIMIT),
    )
}
