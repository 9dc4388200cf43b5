"""The project's own Python, not a Python: ``interpreter-replaced``.

The gate's commands name ``python`` (``python -m coverage run -m pytest``), and agentgate puts
the project's virtual environment first on their PATH (``engine.command_environment``): a
harness does not activate it. The environment is git-ignored and the agent's to write. A
``.venv/bin/python`` replaced by a shell script that runs the real interpreter decides, for the
test command alone, its environment, its arguments and the files it sees (red team 25: it set
``PYTHONPYCACHEPREFIX`` to a folder of fixed bytecode, then mounted one over ``__pycache__`` in
a mount namespace of its own), while agentgate itself, started through ``python3``, runs clean.

A virtual environment's interpreters are the base Python's executable, linked or copied
(``python -m venv``, ``virtualenv``, ``uv venv``): a program in a machine format (ELF, Mach-O,
PE). One that is a script, or any other text, is no interpreter a tool installed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from pytest_agentgate.integrity.model import IntegrityFinding, Scan

RULE = "interpreter-replaced"
# python, python3, python3.12, pythonw, pypy3, python.exe: not python3-config, a script anyway.
_INTERPRETER = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)?)?w?(?:\.exe)?", re.IGNORECASE)
# How executables begin: ELF; Mach-O (32 and 64 bit, both byte orders, universal); PE.
_MACHINE_FORMATS = (
    b"\x7fELF",
    b"\xfe\xed\xfa\xce",
    b"\xfe\xed\xfa\xcf",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
    b"MZ",
)


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    yield from findings(scan.root)


def findings(project: Path) -> Iterator[IntegrityFinding]:
    """The interpreters of the project's virtual environments that are no programs."""
    from pytest_agentgate.state.task_env import project_venvs

    root = project.resolve()
    for venv in project_venvs(root):
        for path in interpreters(venv):
            made = not_a_program(path)
            if made is None:
                continue
            shown = Path(os.path.relpath(path, root)).as_posix()
            yield IntegrityFinding(
                RULE,
                f"{shown}, the interpreter the gate's commands run, is {made}, not a Python "
                "its environment was made with",
                shown,
            )


def interpreters(venv: str) -> list[str]:
    """The interpreters of the virtual environment ``venv``: its ``bin/python*`` (Windows:
    ``Scripts/python*.exe``)."""
    found: list[str] = []
    for folder in ("bin", "Scripts"):
        try:
            names = sorted(os.listdir(os.path.join(venv, folder)))
        except OSError:
            continue
        found.extend(os.path.join(venv, folder, n) for n in names if _INTERPRETER.fullmatch(n))
    return found


def not_a_program(path: str) -> str | None:
    """What ``path`` is when it is not a program in a machine format: "a script (#!...)",
    "a text file"; None when it is one, or cannot be read (a link to nothing: not run)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(128)
    except OSError:
        return None
    if head.startswith(_MACHINE_FORMATS):
        return None
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].strip().decode("utf-8", "replace")
        return f"a script (#!{line[:60]})"
    return "a file in no executable format"
