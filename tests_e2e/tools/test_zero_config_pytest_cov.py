"""Zero-config's commands on real tools: coverage beside a project's own pytest-cov (the
project turns pytest-cov on in its pytest settings, `addopts = --cov=pkg`, and the gate's
`coverage run` must still be the one that measures: review 15, arrow's 99.93% read as 0%), and a
build gate that leaves the project's folders as they were."""

from __future__ import annotations

from pathlib import Path

import pytest
from _helpers import BRANCHED_ADD, NO_COV, PYTEST_OPTS, git, only_gate, verify_json

TEST = """\
from calc import add


def test_add():
    assert add(1, 2) == 3
    assert add(-1, 2) == 1
"""


def _committed(tmp_path: Path, addopts: str) -> Path:
    """The calc project with ``addopts`` in its pytest settings, committed on ``main``."""
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "calc"\nversion = "0.1"\n\n'
        f'[tool.pytest.ini_options]\naddopts = "{addopts}"\npythonpath = ["."]\n'
    )
    (root / "calc.py").write_text(BRANCHED_ADD)
    (root / "tests" / "test_calc.py").write_text(TEST)
    (root / ".gitignore").write_text(".agentgate/\n__pycache__/\n.coverage\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.mark.skipif(not NO_COV, reason="pytest-cov is not installed here")
def test_a_projects_own_cov_option_does_not_pause_the_gates_measurement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    root = _committed(
        tmp_path, "--cov=calc --cov-branch --cov-fail-under=99 --cov-report=term-missing"
    )
    code, verdict = verify_json(root)
    test, coverage = only_gate(verdict, "test"), only_gate(verdict, "coverage")
    assert coverage["actual"]["lines"] == 100.0 and coverage["actual"]["branches"] == 100.0
    assert code == 0, verdict
    assert test["command"].endswith(
        f"-m pytest{PYTEST_OPTS} --junitxml=.agentgate/junit.xml -o junit_family=xunit1"
    )


@pytest.mark.parametrize("addopts", ["-n 2", "-n 2 --cov=calc"])
def test_a_projects_xdist_workers_do_not_hide_the_tests_from_the_measurement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, addopts: str
) -> None:
    # Reviews 24 and 25: with `-n 2` in the project's addopts the tests ran in workers the
    # gate's `coverage run` did not measure: 0% of a fully covered package.
    pytest.importorskip("xdist")
    if "--cov" in addopts and not NO_COV:
        pytest.skip("pytest-cov is not installed here")
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    code, verdict = verify_json(_committed(tmp_path, addopts))
    coverage = only_gate(verdict, "coverage")
    assert coverage["actual"]["lines"] == 100.0, coverage
    assert code == 0, verdict


def test_the_build_gate_writes_no_bytecode_into_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review 16: compileall wrote `testing/data/__pycache__` in pycodestyle, whose own test
    then read that folder as a data file and failed to collect."""
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "project"
    (root / "tests" / "data").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0.1"\n')
    (root / "calc.py").write_text(BRANCHED_ADD)
    (root / "tests" / "test_calc.py").write_text(TEST)
    (root / "tests" / "data" / "sample.py").write_text("VALUE = 1\n")  # read, never imported
    (root / "tests" / "test_data.py").write_text(
        "from pathlib import Path\n\n\ndef test_every_sample_is_a_file():\n"
        "    for path in (Path(__file__).parent / 'data').iterdir():\n"
        "        assert path.is_file(), path\n"
    )
    (root / ".gitignore").write_text(".agentgate/\n__pycache__/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    _, verdict = verify_json(root)
    assert only_gate(verdict, "build")["status"] == "pass"
    assert not (root / "tests" / "data" / "__pycache__").exists()
    assert only_gate(verdict, "test")["status"] == "pass", only_gate(verdict, "test")
