"""The exit codes of ``agentgate``, and the one table from a verdict's status to its code.

0 pass, 1 fail (keep working), 2 usage or configuration error, 3 escalate. An error agentgate
raises on purpose carries its own code (:attr:`pytest_agentgate.errors.AgentgateError.exit_code`,
2 unless it says otherwise); :func:`pytest_agentgate.cli.main.main` is where it is applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pytest_agentgate.verdict import VerdictStatus

EXIT_PASS: Final = 0
EXIT_FAIL: Final = 1
EXIT_USAGE: Final = 2
EXIT_ESCALATE: Final = 3
EXIT_INTERRUPTED: Final = 130  # 128 + SIGINT, as a shell reports Ctrl-C

EXIT_BY_STATUS: Final[Mapping[VerdictStatus, int]] = {
    "pass": EXIT_PASS,
    "fail": EXIT_FAIL,
    "escalate": EXIT_ESCALATE,
}
