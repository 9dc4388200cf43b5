"""Claude Code's transcript: ``~/.claude/projects/<project>/<session>.jsonl``.

One line per message part: an assistant message with text and a tool call is written as two
lines with the same ``message.id`` (and the same usage), so usage is counted once per id. Tool
results come back in ``user`` lines (``tool_result`` with ``is_error``). Lines of a sub-agent
(``isSidechain``) count their calls and tokens, never the final message.
"""

from __future__ import annotations

from typing import Any

from pytest_agentgate.reports.transcripts.build import Builder, token_count

# Claude's window, unless the model's name says it has the 1M-token one.
WINDOW = 200_000
LONG_WINDOW = 1_000_000


class ClaudeReader(Builder):
    harness = "claude"
    # A third of a session's bytes are attachments (agent listings, hook output, file
    # snapshots) and prompt bookkeeping: lines without a message.
    skip = (b'{"type":"last-prompt",',)
    skip_head = (b'"attachment":{',)

    def feed(self, record: dict[str, Any]) -> None:
        self.time(record.get("timestamp"))
        kind = record.get("type")
        message = record.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        if kind == "assistant":
            self._assistant(record, message, content)
        elif kind == "user" and isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    text = _text(part.get("content"))
                    error = part.get("is_error") is True  # absent: the call succeeded
                    self.result(
                        str(part.get("tool_use_id")), failed=error, text=text if error else None
                    )

    def _assistant(self, record: dict[str, Any], message: dict[str, Any], content: Any) -> None:
        model = message.get("model")
        if isinstance(model, str) and model != "<synthetic>" and model != self.session.model:
            self.session.model = model
            if self.session.context_window != LONG_WINDOW:
                self.session.context_window = LONG_WINDOW if "[1m]" in model else WINDOW
        usage = message.get("usage")
        if isinstance(usage, dict):
            get = usage.get
            total = (
                token_count(get("input_tokens"))
                + token_count(get("cache_creation_input_tokens"))
                + token_count(get("cache_read_input_tokens"))
                + token_count(get("output_tokens"))
            )
            msg_id = message.get("id")
            self.usage(msg_id if isinstance(msg_id, str) else None, total, total)
            if total > WINDOW:  # the transcript does not name the 1M window; usage shows it
                self.session.context_window = LONG_WINDOW
        if not isinstance(content, list):
            return
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "tool_use":
                self.call(str(part.get("id")), str(part.get("name")), part.get("input"))
            elif part.get("type") == "text" and not record.get("isSidechain"):
                self.final(part.get("text"))


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and "text" in p)
    return None
