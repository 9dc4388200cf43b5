"""Evidence under pytest-xdist: the workers' counts sign the report the controller writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_evidence import TESTS, Agentgate, WriteConfig, config, properties


@pytest.fixture
def suite(project: Path) -> Path:
    (project / "test_calc.py").write_text(TESTS)
    return project


def test_under_xdist_the_workers_counts_sign_the_report(
    suite: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    # Each worker collects the whole suite; the controller, which writes the report, gets their
    # counts: the test gate checks the executed set, and the integrity gate has its count.
    (suite / "test_more.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('x', range(5))\ndef test_x(x):\n"
        "    assert x >= 0\n"
    )
    command = (
        '"{py} -m pytest -q -p no:cacheprovider -n 2 -k \\"not broken\\" --junitxml=junit.xml"'
    )
    write_config(config(command))
    run = agentgate("verify", "--format", "json")
    gate = run.gate("test")
    assert (gate["actual"]["passed"], gate["actual"]["failed"]) == (7, 0)
    signed = properties(suite / "junit.xml")
    assert (signed["agentgate_collected"], signed["agentgate_selected"]) == ("8", "7")
    assert signed["agentgate_deselected"] == "1"
    assert not any("dropped" in p or "never ran" in p for p in gate["problems"])
