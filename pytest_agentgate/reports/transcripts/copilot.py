"""Copilot CLI's events: ``~/.copilot/session-state/<session>/events.jsonl``.

Each line is ``{type, data, id, timestamp}``. ``assistant.message`` carries the text and the
``toolRequests``; ``tool.execution_complete`` how each ended (``success``, the shell's
``exitCode``, ``fileEdits``); ``session.usage_record`` one model call's tokens (``apiCallId``)
and the prompt's limit (``maxPromptTokens``).
"""

from __future__ import annotations

from typing import Any

from pytest_agentgate.reports.transcripts.build import (
    Builder,
    token_count,
    whole_number,
    window_size,
)


class CopilotReader(Builder):
    harness = "copilot"

    def feed(self, record: dict[str, Any]) -> None:
        self.time(record.get("timestamp"))
        kind = record.get("type")
        data = record.get("data")
        if not isinstance(data, dict):
            return
        if kind == "assistant.message":
            requests = data.get("toolRequests")
            for request in requests if isinstance(requests, list) else ():
                if isinstance(request, dict):
                    self.call(
                        str(request.get("toolCallId")),
                        str(request.get("name")),
                        request.get("arguments"),
                    )
            if isinstance(data.get("model"), str):
                self.session.model = data["model"]
            if not data.get("parentToolCallId"):
                self.final(data.get("content"))
        elif kind == "tool.execution_complete":
            self._complete(data)
        elif kind == "session.usage_record":
            usage = data.get("usage")
            if not isinstance(usage, dict):
                return
            tokens = token_count(usage.get("inputTokens")) + token_count(usage.get("outputTokens"))
            call_id = usage.get("apiCallId")
            self.usage(call_id if isinstance(call_id, str) else None, tokens, tokens)
            window = window_size(usage.get("maxPromptTokens"))
            if window is not None:
                self.session.context_window = window

    def _complete(self, data: dict[str, Any]) -> None:
        call_id = str(data.get("toolCallId"))
        shell = data.get("shellExecution")
        code = whole_number(shell.get("exitCode")) if isinstance(shell, dict) else None
        success = data.get("success")
        if code is not None:
            self.result(call_id, failed=code != 0 or success is False, text=f"exit code {code}")
        elif isinstance(success, bool):
            self.result(call_id, failed=not success)
        edits = data.get("fileEdits")
        call = self._calls.get(call_id)
        if call is not None and isinstance(edits, list):
            paths = [str(e.get("path")) for e in edits if isinstance(e, dict) and e.get("path")]
            if paths:
                call.paths = tuple(paths)
