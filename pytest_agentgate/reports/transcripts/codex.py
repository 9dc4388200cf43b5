"""Codex CLI's rollout: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Each line is ``{timestamp, type, payload}``. Tool calls are ``response_item`` lines
(``function_call``, ``custom_tool_call``) and their outputs (``function_call_output``, whose text
says "Process exited with code N"); ``event_msg`` lines carry the command's exit code
(``item_completed``), the files a patch changed (``FileChange``), token counts and the context
window (``token_count``); ``token_usage_record`` has each response's usage once.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_agentgate.reports.transcripts.build import (
    Builder,
    token_count,
    whole_number,
    window_size,
)
from pytest_agentgate.reports.transcripts.model import Session


class CodexReader(Builder):
    harness = "codex"

    def __init__(self, source: str) -> None:
        super().__init__(source)
        self._records = False  # token_usage_record lines seen: token_count totals not needed
        self._total = 0

    def feed(self, record: dict[str, Any]) -> None:
        self.time(record.get("timestamp"))
        kind = record.get("type")
        payload = record.get("payload")
        if not isinstance(payload, dict):
            return
        if kind == "response_item":
            self._item(payload)
        elif kind == "event_msg":
            self._event(payload)
        elif kind == "turn_context" and isinstance(payload.get("model"), str):
            self.session.model = payload["model"]
        elif kind == "token_usage_record":
            usage = payload.get("usage")
            if isinstance(usage, dict):
                self._records = True
                response = payload.get("response_id")
                self.usage(
                    response if isinstance(response, str) else None,
                    token_count(usage.get("input_tokens"))
                    + token_count(usage.get("output_tokens")),
                )

    def _item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "function_call":
            arguments = item.get("arguments")
            try:
                args = json.loads(arguments) if isinstance(arguments, str) else arguments
            except (ValueError, RecursionError):  # not JSON, or nested too deeply to read
                args = {"input": arguments}
            self.call(str(item.get("call_id")), str(item.get("name")), args)
        elif kind == "custom_tool_call":
            self.call(str(item.get("call_id")), str(item.get("name")), {"input": item.get("input")})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            self.result(str(item.get("call_id")), failed=None, text=text)
        elif kind == "message" and item.get("role") == "assistant":
            content = item.get("content")
            if isinstance(content, list):
                self.final(
                    "".join(
                        str(p.get("text"))
                        for p in content
                        if isinstance(p, dict) and p.get("type") == "output_text"
                    )
                )

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "token_count":
            info = event.get("info")
            if not isinstance(info, dict):
                return
            window = window_size(info.get("model_context_window"))
            if window is not None:
                self.session.context_window = window
            last = info.get("last_token_usage")
            if isinstance(last, dict):
                self.session.context_tokens = token_count(last.get("total_tokens"))
            total = info.get("total_token_usage")
            if isinstance(total, dict):
                self._total = token_count(total.get("total_tokens"))
        elif kind == "item_completed":
            item = event.get("item")
            if not isinstance(item, dict):
                return
            if item.get("type") == "CommandExecution":
                code = whole_number(item.get("exit_code"))
                if code is not None:
                    self.result(str(item.get("id")), failed=code != 0, text=f"exit code {code}")
            elif item.get("type") == "FileChange" and isinstance(item.get("changes"), dict):
                call = self._calls.get(str(item.get("id")))
                if call is not None:
                    call.paths = tuple(str(p) for p in item["changes"])
        elif kind == "task_complete":
            self.final(event.get("last_agent_message"))

    def finish(self) -> Session:
        session = super().finish()
        if not self._records:
            session.tokens = self._total
        return session
