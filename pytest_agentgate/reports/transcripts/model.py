"""What a harness transcript tells the gate, in one shape for every harness."""

from __future__ import annotations

from dataclasses import dataclass, field

# The shell tools of the harnesses: a call's command is what it ran.
SHELL_TOOLS = frozenset(
    {"Bash", "exec_command", "shell", "local_shell", "run_shell_command", "bash", "powershell"}
)
# Tools that write a file, and the argument that names it.
EDIT_TOOLS: dict[str, tuple[str, ...]] = {
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "Write": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "replace": ("file_path",),
    "write_file": ("file_path",),
    "edit": ("path", "file_path"),
    "create": ("path", "file_path"),
    "str_replace_editor": ("path",),
}
# A call's display is clipped to this many characters.
SUMMARY_CHARS = 160


@dataclass(slots=True)
class ToolCall:
    """One tool call of the agent, and how it ended.

    ``key`` identifies the call with its whole input (two calls with the same key did the same
    thing); ``summary`` is what a person reads (``Bash: pytest -q``). ``failed`` is None while no
    result was seen (the transcript lags, or the call was cut off).
    """

    id: str
    name: str
    key: int
    summary: str
    command: str | None = None
    paths: tuple[str, ...] = ()
    failed: bool | None = None
    exit_code: int | None = None


@dataclass
class Session:
    """A transcript, read: the agent's tool calls, its last words, what it spent."""

    harness: str
    source: str
    calls: list[ToolCall] = field(default_factory=list)
    # The agent's last message in the transcript (the event's own claim is preferred to it).
    final_message: str | None = None
    model: str | None = None
    # Tokens the model processed (prompt and output), each model response counted once.
    tokens: int = 0
    # The last model call's prompt and output: how full the context window is now.
    context_tokens: int | None = None
    context_window: int | None = None
    # Seconds since the epoch of the first and the last timestamped line.
    started: float | None = None
    ended: float | None = None
    lines: int = 0
    # Lines that could not be read (not JSON, too long); they are counted, never fatal.
    skipped: int = 0
    # Why some lines were skipped, first few only.
    notes: list[str] = field(default_factory=list)

    @property
    def duration_s(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return max(0.0, self.ended - self.started)
