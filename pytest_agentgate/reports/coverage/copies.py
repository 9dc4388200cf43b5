"""The project's code measured in a copy of it.

A src-layout project installed non-editable (``pip install .``, as tox builds its environments)
is tested from ``site-packages``: coverage.py measures the files there, and the project's own
files under ``src/`` show as never run. coverage.py's answer is a ``[paths]`` remapping
(https://coverage.readthedocs.io/en/latest/config.html#paths); this module finds the one the
data needs, for copies with exactly the bytes of the project's files. A copy that differs is
another program than the project's: it is not counted at all, and a note says so.

Used where coverage.py reports: the child process that reads a data file
(``coveragepy._EXPORT_SCRIPT``) and the pytest door's own measurement. Plain I/O, no coverage.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

# The folders an installer puts packages in.
_INSTALLED = ("site-packages", "dist-packages")
# Where, under the project's root, its importable code may be: src layout first.
_LAYOUTS = ("src", "")
# Glob characters: coverage.py reads a [paths] pattern as a glob, so a folder named with them
# cannot be one exactly.
_GLOB = frozenset("*?[]")


def _copy_of(path: str, root: str) -> tuple[str, str, str] | None:
    """``(folder, layout, rest)`` when ``path`` is a copy of the project's file
    ``ROOT/LAYOUT/REST`` kept in ``folder`` (its path is ``folder/REST``): a file under an
    installer's folder (``.../site-packages/REST``, in the project's own virtualenv too), or a
    file outside the project whose longest tail names one of the project's files. None for the
    project's own files and any other."""
    parts = path.split(os.sep)
    inside = path.startswith(root + os.sep)
    starts: Iterable[int]
    installed = [i + 1 for i in range(len(parts) - 1) if parts[i] in _INSTALLED]
    if installed:
        starts = installed[-1:]
    elif inside:
        return None
    else:
        starts = range(1, len(parts) - 1)
    for start in starts:
        rest = os.sep.join(parts[start:])
        for layout in _LAYOUTS:
            if os.path.isfile(os.path.join(root, layout, rest)):
                return os.sep.join(parts[:start]), layout, rest
    return None


def _same_bytes(one: str, other: str) -> bool:
    try:
        if os.path.getsize(one) != os.path.getsize(other):
            return False
        with open(one, "rb") as a, open(other, "rb") as b:
            return a.read() == b.read()
    except OSError:
        return False


class Copies(NamedTuple):
    """What the report does with the measured files of copies of the project's code."""

    # ``[paths]`` entries: copies with the project's bytes, reported as the project's files.
    aliases: dict[str, list[str]]
    # ``[report] omit`` patterns: the other copies, which are not the project's code.
    omit: list[str]
    # What was done, and why.
    notes: list[str]


def copies_of_the_project(measured: Iterable[str], root: str) -> Copies:
    """The ``[paths]`` entries that report the measured files of copies of the project's code
    as the project's files, the copies left out, and notes saying which.

    A copy (:func:`_copy_of`) is the project's when it has the bytes of the project's file. A
    folder of copies is mapped only when every measured copy in it is the same: one that
    differs is another program (a stale install, a copy put first on ``sys.path``), and none
    of that folder's copies is counted, neither as the project's files nor as files of their
    own (the project's files then show what the tests did not run of them).
    """
    root = os.path.abspath(root)
    if _GLOB & set(root):
        return Copies({}, [], [])
    found: dict[str, dict[str, list[str]]] = {}  # folder -> layout -> the copies there
    differ: dict[str, list[str]] = {}
    paths: dict[str, list[str]] = {}
    for path in sorted(set(measured)):
        # Relative paths (``relative_files``) are left alone: a pattern of them would be too.
        copy = _copy_of(path, root) if os.path.isabs(path) else None
        if copy is None:
            continue
        folder, layout, rest = copy
        paths.setdefault(folder, []).append(path)
        found.setdefault(folder, {}).setdefault(layout, []).append(rest)
        if not _same_bytes(path, os.path.join(root, layout, rest)):
            differ.setdefault(folder, []).append(os.path.join(layout, rest))
    aliases: dict[str, list[str]] = {}
    omit: list[str] = []
    notes: list[str] = []
    for folder, layouts in found.items():
        shown = _shown(folder, root)
        if folder in differ or _GLOB & set(folder):
            omit += [p for p in paths[folder] if not _GLOB & set(p)]
            notes.append(
                f"the tests ran a copy of the project's code ({shown}) whose files differ from "
                f"the project's ({_listed(differ.get(folder, []))}): its coverage is not the "
                "project's; install the project again (`pip install -e .`, or `pip install .`) "
                "and run the tests"
            )
            continue
        for layout, files in layouts.items():
            aliases[f"agentgate-copy-{len(aliases)}"] = [
                os.path.join(root, layout, ""),
                os.path.join(folder, ""),
            ]
            tops = sorted({f.split(os.sep, 1)[0] for f in files})
            notes.append(
                f"{_listed(tops)} measured in the copy in {shown}, whose {len(files)} measured "
                f"file(s) are byte for byte the project's ({os.path.join(layout, '') or './'}): "
                "counted as the project's files"
            )
    return Copies(aliases, omit, notes)


def _listed(names: list[str], most: int = 3) -> str:
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _shown(folder: str, root: str) -> str:
    relative = os.path.relpath(folder, root)
    return folder if relative.startswith("..") else relative
