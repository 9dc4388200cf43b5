"""The errors agentgate raises on purpose, and the exit code each one stands for.

Every mistake agentgate reports to a person (a bad configuration, an unreadable report, a bad
task id, a file it cannot write) is an :class:`AgentgateError`: its message names the thing
that is wrong and says what to do, and ``agentgate`` prints it without a traceback and exits
with the error's :attr:`~AgentgateError.exit_code`. The subclasses live next to the code that
raises them (``ConfigError`` in ``config``, ``ReportError`` in ``reports``, ``LedgerError`` in
``state.ledger``); this module holds the root and the errors of no one module.

Kept free of imports from the rest of the package, so that any module can import it.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["AgentgateError", "OutputError"]


class AgentgateError(Exception):
    """The root of every error agentgate raises on purpose.

    ``exit_code`` is what ``agentgate`` exits with when the error reaches it: 2, a usage or
    configuration error, unless a subclass says otherwise.
    """

    exit_code: ClassVar[int] = 2


class OutputError(AgentgateError):
    """A file agentgate was asked to write (``--output FILE``) that cannot be written.

    The message names the option and the file, says what went wrong and what to do.
    """

    def __init__(self, path: str, problem: str, hint: str = "", option: str = "--output") -> None:
        self.path = path
        self.problem = problem
        self.hint = hint
        self.option = option
        text = f"{option} {path}: {problem}"
        if hint:
            text += f"; {hint}"
        super().__init__(text)
