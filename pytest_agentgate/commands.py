"""What agentgate knows about the commands a project configures: which tool a command runs, and
where it writes its report. One home, so the CLI and the pytest plugin read a command alike."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


# `coverage run` options (and pytest-cov's) that decide what is measured, as measurement options.
_COVERAGE_RUN_OPTIONS = {
    "--source": "source",
    "--include": "include",
    "--omit": "omit",
    "--rcfile": "rcfile",
    "--cov": "source",
    "--cov-config": "rcfile",
}


def coverage_options(command: str | None, root: Path) -> dict[str, Any] | None:
    """How the test command measures coverage, for a door that must measure the same itself:
    ``coverage run [--branch] [--source=..] [--include=..] [--omit=..] [--rcfile=..] -m pytest``
    or ``pytest --cov=.. [--cov-branch] [--cov-config=..]``. Paths are made absolute against
    ``root`` (the command's folder). None: the command measures no coverage (or cannot be read).

    Keys: ``root``; ``source``, ``include``, ``omit`` (lists, maybe empty); ``branch`` (True, or
    None for the project's own configuration); ``rcfile`` (a path, or None for coverage.py's
    defaults, found from ``root``).
    """
    if not command:
        return None
    try:
        split = shlex.split(command)
    except ValueError:
        return None
    names = [Path(w).name for w in split]
    coverage_run = "run" in split and any(
        n in ("coverage", "coverage3")
        or (n.startswith("python") and split[i + 1 : i + 3] == ["-m", "coverage"])
        for i, n in enumerate(names)
    )
    pytest_cov = runs_pytest(command) and any(w == "--cov" or w.startswith("--cov=") for w in split)
    if not (coverage_run or pytest_cov):
        return None
    found: dict[str, Any] = {
        "root": str(root),
        "source": [],
        "include": [],
        "omit": [],
        "branch": None,
        "rcfile": None,
    }
    words_left = iter(split)
    for word in words_left:
        if word in ("--branch", "--cov-branch"):
            found["branch"] = True
            continue
        option, eq, value = word.partition("=")
        key = _COVERAGE_RUN_OPTIONS.get(option)
        if key is None:
            continue
        if not eq:
            if option == "--cov":
                continue  # bare --cov: the project's own configuration says what to measure
            value = next(words_left, "")
        if key == "rcfile":
            found["rcfile"] = str(root / value)
        else:
            found[key].extend(_rooted(p, root, key) for p in value.split(",") if p)
    return found


def _rooted(value: str, root: Path, key: str) -> str:
    """A path or pattern made absolute against the command's folder; a ``source`` that is no
    folder there is a package name, as coverage.py reads it."""
    if value.startswith("*") or os.path.isabs(value):
        return value
    if key == "source" and not (root / value).exists():
        return value
    return str(root / value)
