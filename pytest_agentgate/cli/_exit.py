"""The exit codes of ``agentgate``, and the one table from a verdict's status to its code.

0 pass, 1 fail (keep working), 2 usage or configuration error, 3 escalate. An error agentgate
raises on purpose carries its own code (:attr:`pytest_agentgate.errors.AgentgateError.exit_code`,
2 unless it says otherwise); :func:`pytest_agentgate.cli.main.main` is where it is applied.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pytest_agentgate import __version__

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


def internal_error(exc: BaseException) -> str:
    """What a user sees of a bug in agentgate: what broke, where, and what to do about it."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    what = " ".join(str(exc).split())[:300] or "(no message)"
    return (
        f"agentgate: internal error: {type(exc).__name__}{where}: {what}. This is a bug in "
        f"agentgate {__version__}, not in your project: nothing was judged. Please report it "
        "with the command you ran; run it again with AGENTGATE_DEBUG=1 to see the traceback."
    )
