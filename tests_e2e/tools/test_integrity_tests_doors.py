"""The tricks on test files, through `pytest --agentgate=strict`, and edits hidden from git,
through both doors, in processes of their own."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_integrity_tests as integrity_tests_module
from _helpers import edit, pytest_agentgate
from test_integrity_tests import HIDE_FROM_GIT, Verify, assert_blocks, git, now_line

# The unit suite's fixtures for these tests.
repo = integrity_tests_module.repo
verify = integrity_tests_module.verify
template = integrity_tests_module.template


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (("def test_sub():", "@pytest.mark.skip\ndef test_sub():"), "skip-added"),
        (("def test_sub():\n    assert sub(3, 1) == 2\n", ""), "test-removed"),
        (("assert sub(3, 1) == 2", "assert True"), "assertion-removed"),
        (
            ("    assert sub(3, 1) == 2\n", "    def check():\n        assert sub(3, 1) == 2\n"),
            "assertion-removed",
        ),
        (("assert sub(3, 1) == 2", "assert sub(3, 1)"), "assertion-weakened"),
        (("[(2, 3, 6)]", "[]"), "tests-fewer"),
    ],
)
def test_pytest_agentgate_refuses_the_trick(repo: Path, change: tuple[str, str], rule: str) -> None:
    edit(repo, "tests/test_calc.py", *change)
    code, verdict, output = pytest_agentgate(repo)
    assert code != 0, output
    gate = next(g for g in verdict["gates"] if g["name"] == "integrity")
    assert gate["status"] == "fail", output
    assert rule in {f["code"] for f in gate["findings"]}, output
    # The gate fails on what the change did to the tests, judged before any of them ran.
    test_gate = next(g for g in verdict["gates"] if g["kind"] == "test")
    assert "stopped before the first test by the integrity gate" in test_gate["summary"], output


@pytest.mark.parametrize("trick", sorted(HIDE_FROM_GIT))
def test_an_edit_hidden_from_git_is_judged_by_both_doors(
    repo: Path, verify: Verify, trick: str
) -> None:
    # One git command after the edit made `git diff` (and the integrity gate) see no change.
    edit(repo, "tests/test_calc.py", "def test_sub():", "@pytest.mark.skip\ndef test_sub():")
    if trick == "clean-filter":
        (repo / ".git" / "info" / "attributes").write_text("*.py filter=same\n")
    git(repo, *HIDE_FROM_GIT[trick])
    assert git(repo, "diff", "--name-only", "HEAD") == ""
    line = now_line(repo, "tests/test_calc.py", "@pytest.mark.skip")
    assert_blocks(verify(), "skip-added", "tests/test_calc.py", line)
    code, verdict, output = pytest_agentgate(repo)
    assert code != 0, output
    gate = next(g for g in verdict["gates"] if g["name"] == "integrity")
    assert "skip-added" in {f["code"] for f in gate["findings"]}, output
