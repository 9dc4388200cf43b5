"""Each way past the gate that conftest and plugin code can take, through `pytest
--agentgate=strict` in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_integrity_hooks import TRICKS, project


@pytest.mark.parametrize(
    "trick",
    [
        "makereport rewrites failed to passed",
        "makereport under another name with specname",
        "modifyitems drops the failing test",
        "configure sets -k",
        "configure sets --deselect",
        "modifyitems marks the failing test xfail",
        "AGENTGATE_RUNNING set by a conftest",
        "-k in addopts",
    ],
)
def test_the_pytest_door_does_not_pass_them_either(trick: str, tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    name, text, rule, _ = TRICKS[trick]
    (root / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTGATE_")}
    env["AGENTGATE_STATE_HOME"] = str(tmp_path / "state")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--agentgate=strict", "-p", "no:cacheprovider"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0, proc.stdout
    assert rule in proc.stdout and name in proc.stdout
