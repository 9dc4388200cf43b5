"""The pytest door under pytest-xdist: the same verdict as a serial run, crashed workers as errors,
and workers without pytest-cov said to be unmeasured."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import test_plugin
from test_plugin import PY, gate, init_project, make_cov_project, numbers, plugin_verdict

_clean_env = test_plugin._clean_env  # the suite's autouse fixture: a gated run here gates

pytest_plugins = ["pytester"]


@pytest.fixture
def cov_project(pytester: pytest.Pytester) -> pytest.Pytester:
    return make_cov_project(pytester)


def test_without_pytest_cov_xdist_workers_are_not_measured_and_the_verdict_says_so(
    tmp_path: Path,
) -> None:
    init_project(tmp_path)
    out = tmp_path / "plugin.json"
    subprocess.run(
        [PY, "-m", "pytest", "-n", "2", "--agentgate", f"--agentgate-json={out}"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    cov = gate(json.loads(out.read_text()), "coverage")
    assert cov["status"] == "fail" and cov["actual"]["lines"] is None
    assert "xdist workers" in cov["problems"][0] and "--cov=PACKAGE" in cov["problems"][0]


def test_xdist_gives_the_same_verdict_and_crashed_workers_are_errors(
    cov_project: pytest.Pytester,
) -> None:
    serial = plugin_verdict(cov_project, "--agentgate=strict")
    parallel = plugin_verdict(cov_project, "--agentgate=strict", "-n", "2")
    assert numbers(parallel) == numbers(serial)
    # A worker that dies mid-test is an error; -k under xdist is still a partial run.
    cov_project.makepyfile(test_crash="import os\n\ndef test_crash():\n    os._exit(3)\n")
    crashed = plugin_verdict(cov_project, "--agentgate=relaxed", "-n", "2", "-k", "not many")
    test = gate(crashed, "test")
    assert test["actual"]["errors"] == 2
    assert any("crashed" in f["message"] for f in test["findings"])
    assert "6 tests deselected" in test["summary"]
