"""Gemini CLI's chat: ``~/.gemini/tmp/<project>/chats/session-*.jsonl``.

A header line (``sessionId``, ``startTime``), then message records (``id``, ``timestamp``,
``type``: ``user`` or ``gemini``, ``content``, ``tokens``, ``toolCalls``) and ``{"$set": ...}``
updates. A message is written again when its tool calls are added, with the same id: tokens and
calls are counted once per id. A shell call's exit code is in its output ("Exit Code: 1").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_agentgate.reports.transcripts.build import Builder

# Gemini 2.x and later models' window.
WINDOW = 1_048_576


class GeminiReader(Builder):
    harness = "gemini"

    def feed(self, record: Mapping[str, Any]) -> None:
        update = record.get("$set")
        if isinstance(update, Mapping):
            messages = update.get("messages")
            if isinstance(messages, list):
                for message in messages:
                    if isinstance(message, Mapping):
                        self._message(message)
            return
        self.time(record.get("startTime"))
        self._message(record)

    def _message(self, message: Mapping[str, Any]) -> None:
        self.time(message.get("timestamp"))
        if message.get("type") != "gemini":
            return
        model = message.get("model")
        if isinstance(model, str):
            self.session.model = model
            if model.startswith("gemini-"):
                self.session.context_window = WINDOW
        tokens = message.get("tokens")
        if isinstance(tokens, Mapping):
            total = _int(tokens.get("total")) or (
                _int(tokens.get("input")) + _int(tokens.get("output"))
            )
            context = _int(tokens.get("input")) + _int(tokens.get("output"))
            msg_id = message.get("id")
            self.usage(msg_id if isinstance(msg_id, str) else None, total, context)
        for call in message.get("toolCalls") or ():
            if isinstance(call, Mapping):
                self._tool_call(call)
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(
                str(p.get("text")) for p in content if isinstance(p, Mapping) and "text" in p
            )
        self.final(content)

    def _tool_call(self, call: Mapping[str, Any]) -> None:
        call_id = str(call.get("id"))
        self.call(call_id, str(call.get("name")), call.get("args"))
        status = call.get("status")
        output = []
        for part in call.get("result") or ():
            response = part.get("functionResponse") if isinstance(part, Mapping) else None
            if isinstance(response, Mapping) and isinstance(response.get("response"), Mapping):
                output.append(str(response["response"].get("output", "")))
                if "error" in response["response"]:
                    status = "error"
        if status in ("error", "cancelled"):
            self.result(call_id, failed=True, text="\n".join(output))
        elif status == "success":
            self.result(call_id, failed=None, text="\n".join(output))
            if self._calls[call_id].failed is None:
                self._calls[call_id].failed = False


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
