"""The source Python compiled for each file of the project while a gated run goes on.

Python raises the audit event ``compile`` with the source and the file's name whenever it
compiles a module it imports (PEP 578). :func:`watch` adds an audit hook, before pytest imports
the project's conftest.py files, that keeps the SHA-256 of every source given as bytes (what the
import system reads from the file) for each ``.py`` file in the project's folder. An audit hook
cannot be removed once added.

``tampering._rewritten_in_run`` compares these with the file as it is when the witness looks: a
conftest that writes a correct ``calc.py`` before the tests import it and puts the broken text
back afterwards leaves a source compiled that the file no longer holds, whatever differed (a
function, a constant, a default argument, a lambda in a dict). Text given as ``str`` (what
coverage.py compiles to measure a file) is not kept: it was decoded, and may differ from the
file's bytes in its line endings without being other code.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys

# The most sources kept per file, and files kept: enough for a module reloaded a few times.
_PER_FILE = 8
_FILES = 20_000
_sources: dict[str, list[str]] = {}
_watched: list[str] = []


def watch(project: str) -> None:
    """Keep, from now on, the sources compiled for the ``.py`` files under ``project``."""
    root = os.path.realpath(project) + os.sep
    if root in _watched:
        return
    _watched.append(root)
    if len(_watched) > 1:
        return  # one hook serves every folder watched
    sys.addaudithook(_hook)


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event == "compile":
        with contextlib.suppress(Exception):  # a hook never raises into the code it watches
            _keep(*args)


def _keep(source: object, filename: object) -> None:
    if not isinstance(source, bytes) or not isinstance(filename, str):
        return
    if not filename.endswith(".py"):
        return
    real = os.path.realpath(filename)
    if not any(real.startswith(root) for root in _watched):
        return
    kept = _sources.get(real)
    if kept is None:
        if len(_sources) >= _FILES:
            return
        kept = _sources[real] = []
    digest = hashlib.sha256(source).hexdigest()
    if digest not in kept and len(kept) < _PER_FILE:
        kept.append(digest)


def sources_compiled(path: str) -> list[str]:
    """The SHA-256 of each source compiled for the file ``path`` (a real path) since
    :func:`watch`; empty when none was, or nothing is watched."""
    return list(_sources.get(path, ()))
