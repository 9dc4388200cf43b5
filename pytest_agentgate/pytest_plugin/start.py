"""``sys.path`` as pytest loaded its plugins, before any conftest.py changed it.

Imported by the ``pytest11`` entry point (``entry.py``) when pytest loads it, so the snapshot
is taken then: ``python -m pytest`` has the current folder first (``witness.local_plugins``).
``entry.pytest_configure`` keeps it in the config's stash under :data:`START_KEY`.
"""

from __future__ import annotations

import sys
import time

import pytest

START_PATH = tuple(sys.path)
# When pytest loaded its plugins, before any conftest ran: a file of the project's code changed
# after it was written during the run (``tampering._rewritten_in_run``).
START_TIME = time.time()
START_KEY = pytest.StashKey[tuple[str, ...]]()
