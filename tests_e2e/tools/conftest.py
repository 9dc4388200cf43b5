"""The unit suite's fixtures, for the tests that run real environments and tools end to end
(virtualenvs made and packages installed, the linters themselves, the interpreter under -O,
the test command run twice to measure coverage's cost or under pytest-xdist, a time budget or
a held lock waited out) and for the ways past the gate tried through `agentgate verify` and
`pytest --agentgate` in processes of their own, whose rules the unit suite tries in process:
too slow for the unit suite's budget, run by `.ci/run`."""

from __future__ import annotations

import sys
from importlib import util
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2] / "tests"
sys.path.insert(0, str(TESTS))  # the unit suite's _helpers

_spec = util.spec_from_file_location("agentgate_unit_fixtures", TESTS / "conftest.py")
assert _spec is not None and _spec.loader is not None
_fixtures = util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
globals().update({k: v for k, v in vars(_fixtures).items() if not k.startswith("__")})
