"""A task: what a verdict's attempts count against, and the limits of its attempts."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_agentgate.config.model import Config
from pytest_agentgate.errors import AgentgateError

DEFAULT_GLOBAL_MAX = 6
MAX_TASK_ID = 200


class LedgerError(AgentgateError, ValueError):
    """A usage mistake: an empty task id, an unknown blocker reason, a bad --since."""


@dataclass(frozen=True)
class TaskRef:
    """Which task a verdict belongs to, and through which door it came."""

    id: str
    source: str = "cli"

    def __post_init__(self) -> None:
        check_task_id(self.id)


def check_task_id(task_id: str) -> str:
    if not task_id or not task_id.strip():
        raise LedgerError("a task id cannot be empty")
    if len(task_id) > MAX_TASK_ID or any(ch in task_id for ch in "\r\n\0"):
        raise LedgerError(f"a task id is one line of at most {MAX_TASK_ID} characters")
    try:
        task_id.encode("utf-8")
    except UnicodeEncodeError:  # bytes the terminal could not decode (a non-UTF-8 argument)
        raise LedgerError(
            "a task id must be text (UTF-8); this one holds undecodable bytes"
        ) from None
    return task_id


@dataclass(frozen=True)
class Limits:
    max: int = 3
    global_max: int = DEFAULT_GLOBAL_MAX

    @classmethod
    def of(cls, config: Config) -> Limits:
        return cls(
            max=config.attempts_max,
            global_max=getattr(config, "attempts_global_max", DEFAULT_GLOBAL_MAX),
        )
