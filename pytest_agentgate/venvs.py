"""What a virtual environment is, for the readers that leave one out of the project's files.

A folder the project holds is a virtual environment only when it holds one whole: a
``pyvenv.cfg`` (a regular file) naming the Python it was made from (``home``), an interpreter
in ``bin`` (``Scripts`` on Windows), and nothing Python imports at its top (a module, an
extension module, a ``.pth``), where an environment keeps none. A ``pyvenv.cfg`` alone, added
to a folder of the project's tests, took the conftest.py beside it out of the change (red team
30); the readers that walk the project (``git.Repo.change``, the integrity gate's bytecode
walk, the witness's snapshot, the snapshot of a project outside git, the pinned-tool runner)
all ask here.
"""

from __future__ import annotations

import os
import stat

from pytest_agentgate.modules import module_stem

_INTERPRETERS = ("bin/python", "bin/python3", "Scripts/python.exe")


def an_environment(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` holds a virtual environment (see the module's docstring)."""
    folder = os.fspath(folder)
    try:
        if not stat.S_ISREG(os.lstat(os.path.join(folder, "pyvenv.cfg")).st_mode):
            return False
        names = os.listdir(folder)
    except OSError:
        return False
    return (
        home(folder) is not None
        and any(os.path.lexists(os.path.join(folder, name)) for name in _INTERPRETERS)
        and not any(module_stem(name) is not None or name.endswith(".pth") for name in names)
    )


def home(folder: str | os.PathLike[str]) -> str | None:
    """What the ``home`` line of ``folder``'s ``pyvenv.cfg`` says (the folder of the Python the
    environment was made from; empty when the line is), or None when it has none."""
    try:
        with open(os.path.join(folder, "pyvenv.cfg"), encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, value = line.partition("=")
                if sep and key.strip().lower() == "home":
                    return value.strip()
    except OSError:
        return None
    return None
