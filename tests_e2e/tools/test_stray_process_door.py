"""A process the tests leave running outside their session, through ``agentgate verify``.

A conftest wrote a correct ``calc.py`` for the run and left a daemon (``setsid``) to put the
broken one back once the verdict was given: the gate passed, and a few seconds later the tree
was broken again. agentgate's own process now adopts what its commands leave running, and stops
it once they are over, saying so in the verdict: the tree it judged is the tree left behind.
A suite that starts and stops its own daemon is not touched."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from _helpers import STRICT_TESTS, gated_project, only_gate, verify_json

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a child subreaper: Linux"
)

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
PUT_BACK_LATER = f"""\
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).parent.parent
CALC = ROOT / "calc.py"
KEEP = CALC.read_text()
CALC.write_text({FIXED!r})
LATER = (
    "import os, pathlib, sys, time\\n"
    "pathlib.Path(sys.argv[1]).write_text(str(os.getpid()))\\n"
    "time.sleep(30)\\n"
    "pathlib.Path(sys.argv[2]).write_text(sys.argv[3])\\n"
)
subprocess.Popen(
    [sys.executable, "-c", LATER, str(ROOT / "later.pid"), str(CALC), KEEP],
    start_new_session=True,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
"""
OWN_SERVER = """\
import os
import signal
import subprocess
import sys
import time


def test_a_server_started_and_stopped():
    server = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True
    )
    time.sleep(0.2)
    assert server.poll() is None
    os.killpg(server.pid, signal.SIGTERM)
    assert server.wait(timeout=5) == -signal.SIGTERM
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = gated_project(
        tmp_path / "p", STRICT_TESTS, {"calc.py": FIXED, "tests/test_calc.py": TEST}
    )
    (root / ".gitignore").write_text("later.pid\n")
    (root / "calc.py").write_text(BROKEN)  # the change breaks add
    return root


def test_a_daemon_left_to_put_the_code_back_is_stopped(project: Path) -> None:
    (project / "tests" / "conftest.py").write_text(PUT_BACK_LATER)
    status, verdict = verify_json(project)
    assert status == 0, verdict  # the tests ran on the fixed file, which the tree now holds
    [notice] = [n for n in verdict["notices"] if "kept running after them" in n]
    later = int((project / "later.pid").read_text())
    assert f"pid {later}: " in notice and "was stopped" in notice
    with pytest.raises(ProcessLookupError):
        os.kill(later, 0)
    # So the tree judged is the tree left: the fixed file stays.
    assert (project / "calc.py").read_text() == FIXED


def test_a_suite_that_stops_its_own_server_is_left_alone(project: Path) -> None:
    (project / "calc.py").write_text(FIXED)
    (project / "tests" / "test_server.py").write_text(OWN_SERVER)
    status, verdict = verify_json(project)
    assert status == 0, only_gate(verdict, "test")
    assert not [n for n in verdict["notices"] if "kept running" in n]
