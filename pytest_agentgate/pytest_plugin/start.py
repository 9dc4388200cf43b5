"""``sys.path`` and the modules loaded as pytest loaded its plugins, before any conftest.py.

Imported by the ``pytest11`` entry point (``entry.py``) when pytest loads it, so the snapshot
is taken then: ``python -m pytest`` has the current folder first (``witness.local_plugins``).
``entry.pytest_configure`` keeps it in the config's stash under :data:`START_KEY`. And where
pytest's arguments came from (:func:`option_sources`), which the entry point and the witness ask.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any

import pytest

START_PATH = tuple(sys.path)
# When pytest loaded its plugins, before any conftest ran: a file of the project's code changed
# after it was written during the run (``tampering._rewritten_in_run``).
START_TIME = time.time()
START_KEY = pytest.StashKey[tuple[str, ...]]()
# The interpreter's own questions for the tracer and profiler in place, as pytest loaded its
# plugins: a test that stubs ``sys.gettrace`` (to act as a debugger would) changes what the
# project's code is told, not which tracer runs (``tampering.foreign_tracer``).
TRACER_GETTERS = (
    ("sys.settrace", sys.gettrace),
    ("sys.setprofile", sys.getprofile),
    ("threading.settrace", threading.gettrace),
    ("threading.setprofile", threading.getprofile),
)


def files_of(modules: dict[str, Any]) -> dict[str, str]:
    """Each module's ``__file__`` by its name, for those that have one, read as stored."""
    found = {}
    for name, module in list(modules.items()):
        try:
            where = vars(module).get("__file__")
        except TypeError:  # not a module: nothing to say where it came from
            continue
        if isinstance(where, str):
            found[name] = where
    return found


# The modules this process had imported, by file, when pytest loaded agentgate's plugin: what ran
# before the tests' session, as the test tools started (pytest_plugin/tampering.py judges which
# of them are the project's files).
MODULES_AT_START = files_of(sys.modules)


COMMAND_LINE = "pytest's command line"
PROJECT_CODE = "the project's own code (a conftest.py or plugin set it)"


def option_sources(config: pytest.Config) -> list[tuple[str, list[str]]]:
    """Where pytest's arguments came from, in the order pytest put them together: the ini
    file's ``addopts``, ``PYTEST_ADDOPTS``, then the command line (the caller's)."""
    import shlex

    sources = []
    if addopts := list(config.getini("addopts") or ()):
        where = "the configuration"
        if config.inipath is not None:
            where = os.path.relpath(config.inipath, config.invocation_params.dir)
            if where.startswith(".."):
                where = str(config.inipath)
        sources.append((f"addopts ({where})", addopts))
    with contextlib.suppress(ValueError):
        if env := shlex.split(os.environ.get("PYTEST_ADDOPTS", "")):
            sources.append(("PYTEST_ADDOPTS", env))
    sources.append((COMMAND_LINE, [str(arg) for arg in config.invocation_params.args]))
    return sources
