"""After `agentgate init`, `pytest --agentgate` measures coverage as `agentgate verify` does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import test_plugin as plugin_module
from test_plugin import PY, gate, init_project

# The unit suite's fixtures for these tests.
_clean_env = plugin_module._clean_env


def test_init_then_pytest_agentgate_measures_coverage_as_verify_does(tmp_path: Path) -> None:
    """The README's flow: `agentgate init`, then `pytest --agentgate` with no --cov. The session
    measures coverage as the configured `coverage run` would, to the same numbers."""
    init_project(tmp_path)
    out = tmp_path / "plugin.json"
    plugin = subprocess.run(
        [PY, "-m", "pytest", "-p", "no:cacheprovider", "--agentgate", f"--agentgate-json={out}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    plugin_cov = gate(json.loads(out.read_text()), "coverage")
    verify = subprocess.run(
        [PY, "-m", "pytest_agentgate", "verify", "--format=json", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    verify_cov = gate(json.loads(verify.stdout), "coverage")
    assert plugin_cov["actual"] == verify_cov["actual"], plugin.stdout
    assert plugin_cov["actual"]["lines"] == 75.0 and plugin_cov["actual"]["branches"] == 50.0
    assert plugin_cov["status"] == verify_cov["status"] == "fail"
    assert "--cov" not in " ".join(plugin_cov["problems"])
