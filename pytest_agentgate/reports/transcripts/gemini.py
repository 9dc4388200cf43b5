"""Gemini CLI's chat: ``~/.gemini/tmp/<project>/chats/session-*.jsonl``.

A header line (``sessionId``, ``startTime``), then message records (``id``, ``timestamp``,
``type``: ``user`` or ``gemini``, ``content``, ``tokens``, ``toolCalls``) and ``{"$set": ...}``
updates. A message is written again when its tool calls are added, with the same id: tokens and
calls are counted once per id. A shell call's exit code is in its output ("Exit Code: 1").
"""

from __future__ import annotations

from typing import Any

from pytest_agentgate.reports.transcripts.build import Builder, token_count

# Gemini 2.x and later models' window.
WINDOW = 1_048_576


class GeminiReader(Builder):
    harness = "gemini"
    # Every message is followed by a line that only moves `lastUpdated`; a user message (the
    # prompt, a tool's response) says nothing its gemini message's toolCalls do not.
    skip = (b'{"$set":{"lastUpdated":',)
    skip_head = (b'"type":"user"',)
    # A rewrite of the whole history (a resumed session) may start with a user message.
    keep = (b'{"$set":{"messages":',)
    # A message is written again, whole, when its tool calls are added.
    rewritten = b'{"id":"'

    def feed(self, record: dict[str, Any]) -> None:
        update = record.get("$set")
        if isinstance(update, dict):
            messages = update.get("messages")
            if isinstance(messages, list):
                for message in messages:
                    if isinstance(message, dict):
                        self._message(message)
            return
        self.time(record.get("startTime"))
        self._message(record)

    def _message(self, message: dict[str, Any]) -> None:
        self.time(message.get("timestamp"))
        if message.get("type") != "gemini":
            return
        model = message.get("model")
        if model != self.session.model and isinstance(model, str):
            self.session.model = model
            if model.startswith("gemini-"):
                self.session.context_window = WINDOW
        tokens = message.get("tokens")
        if isinstance(tokens, dict):
            context = token_count(tokens.get("input")) + token_count(tokens.get("output"))
            msg_id = message.get("id")
            self.usage(
                msg_id if isinstance(msg_id, str) else None,
                token_count(tokens.get("total")) or context,
                context,
            )
        calls = message.get("toolCalls")
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict):
                self._tool_call(call)
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(
                str(p.get("text")) for p in content if isinstance(p, dict) and "text" in p
            )
        self.final(content)

    def _tool_call(self, call: dict[str, Any]) -> None:
        call_id = str(call.get("id"))
        known = self._calls.get(call_id)
        if known is not None and known.failed is not None:
            return  # the same call, in the message written again
        self.call(call_id, str(call.get("name")), call.get("args"))
        status = call.get("status")
        output = []
        parts = call.get("result")
        for part in parts if isinstance(parts, list) else ():
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict) and isinstance(response.get("response"), dict):
                output.append(str(response["response"].get("output", "")))
                if "error" in response["response"]:
                    status = "error"
        if status in ("error", "cancelled"):
            self.result(call_id, failed=True, text="\n".join(output))
        elif status == "success":
            self.result(call_id, failed=None, text="\n".join(output))
            if self._calls[call_id].failed is None:
                self._calls[call_id].failed = False
