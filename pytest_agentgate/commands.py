"""What agentgate knows about the commands a project configures: which tool a command runs, and
where it writes its report. One home, so the CLI and the pytest plugin read a command alike."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

PYTEST_NAMES = ("pytest", "py.test", "pytest.exe")
# Every command agentgate runs gets this run's id in this variable; agentgate's pytest plugin
# writes it into the JUnit report (pytest_plugin/witness.py), which the test gate checks.
RUN_ID_ENV = "AGENTGATE_RUN_ID"


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


def runs_this_interpreter(command: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``command`` runs pytest with the Python agentgate runs in (so agentgate's own
    pytest plugin is loaded in it): ``python -m pytest`` or ``pytest`` from this environment."""
    split = words(command)
    if not split:
        return False
    search = (env or {}).get("PATH", os.environ.get("PATH", ""))
    found = shutil.which(split[0], path=search) if os.sep not in split[0] else split[0]
    if found is None:
        return False
    here = Path(sys.executable).parent.resolve()
    try:
        program = Path(found).resolve()
    except OSError:
        return False
    return program.parent == here or Path(found).absolute().parent == Path(sys.executable).parent


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
