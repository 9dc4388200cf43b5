"""What agentgate knows about the commands a project configures: which tool a command runs, and
where it writes its report. One home, so the CLI and the pytest plugin read a command alike."""

from __future__ import annotations

import shlex
from pathlib import Path

PYTEST_NAMES = ("pytest", "py.test", "pytest.exe")


def words(command: str) -> list[str]:
    """The command's words as the shell would split them; a command with unbalanced quotes is
    split on white space instead of being refused."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def runs_pytest(command: str | None) -> bool:
    """Whether ``command`` runs pytest (``pytest``, ``py.test``, ``python -m pytest``, a path)."""
    if not command:
        return False
    return "-m pytest" in command or any(Path(w).name in PYTEST_NAMES for w in words(command))


def junit_in_command(command: str) -> str | None:
    """The path a command's own ``--junitxml`` / ``--junit-xml`` option writes, if any."""
    try:
        split = shlex.split(command)
    except ValueError:
        return None
    for index, word in enumerate(split):
        for option in ("--junitxml", "--junit-xml"):
            if word.startswith(option + "="):
                return word.split("=", 1)[1] or None
            if word == option and index + 1 < len(split):
                return split[index + 1]
    return None
