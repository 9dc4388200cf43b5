"""The pytest door gives the same numbers as `agentgate verify` for each profile."""

from __future__ import annotations

import json
import subprocess

import pytest
import test_plugin
from test_plugin import PY, make_cov_project, numbers, plugin_verdict

_clean_env = test_plugin._clean_env  # the suite's autouse fixture: a gated run here gates

pytest_plugins = ["pytester"]


@pytest.fixture
def cov_project(pytester: pytest.Pytester) -> pytest.Pytester:
    return make_cov_project(pytester)


def test_same_numbers_as_agentgate_verify_for_each_profile(cov_project: pytest.Pytester) -> None:
    plugin_side = {}
    for profile in ("strict", "standard", "relaxed"):
        plugin_side[profile] = plugin_verdict(cov_project, f"--agentgate={profile}")
    for index, profile in enumerate(("strict", "standard", "relaxed")):
        cli = [PY, "-m", "pytest_agentgate", "verify", "--format=json", f"--profile={profile}"]
        proc = subprocess.run(
            cli + (["--no-run"] if index else []),
            cwd=cov_project.path,
            capture_output=True,
            text=True,
            check=False,
        )
        verify = json.loads(proc.stdout)
        assert numbers(plugin_side[profile]) == numbers(verify), profile
    strict = numbers(plugin_side["strict"])
    assert strict["test"][1]["total"] == 11 and strict["test"][1]["errors"] == 1
    assert strict["coverage"][1]["branches"] == 50.0
    assert strict["coverage"][0] == "fail"
