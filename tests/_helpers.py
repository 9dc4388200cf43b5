"""Constants and types the test modules share (fixtures live in conftest.py).

Test modules import this module, never ``conftest``: ``tests/data`` holds a conftest.py of its
own, and whichever is imported first would own the name.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
# The interpreter running these tests: gate commands use its pytest, ruff and coverage.
PY = shlex.quote(sys.executable)


@dataclass
class CliRun:
    """What one in-process ``agentgate`` call returned and printed."""

    code: int
    out: str
    err: str

    def verdict(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.out)
        return doc

    def gate(self, name: str) -> dict[str, Any]:
        return next(g for g in self.verdict()["gates"] if g["name"] == name)
