"""A repository git refuses to read is no "not a repository": the change is not judged, and
the integrity gate says so (a cheap way past it was `git config core.repositoryformatversion
99`, after which agentgate saw no repository, no base and no integrity gate)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import STRICT_TESTS, CliRun, gated_project, git

Agentgate = Callable[..., CliRun]

TESTS = "def test_add():\n    assert 1 + 1 == 2\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    root = gated_project(tmp_path / "proj", STRICT_TESTS, {"tests/test_add.py": TESTS})
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("core.repositoryformatversion", "99", "Expected git repo version"),
        ("core.bare", "true", "must be run in a work tree"),
    ],
)
def test_a_repository_git_cannot_read_fails_the_integrity_gate(
    repo: Path, agentgate: Agentgate, key: str, value: str, said: str
) -> None:
    git(repo, "config", key, value)
    run = agentgate("verify", "--format", "json", "--no-cache")
    gate = run.gate("integrity")
    assert run.code == 1 and gate["status"] == "fail", gate
    problems = " ".join(gate["problems"])
    assert f"git cannot read the repository at {repo}" in problems and said in problems


def test_an_empty_git_folder_is_still_no_repository(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the unit tests' own projects use to stop configuration lookup: no HEAD, no repository.
    (tmp_path / ".git").mkdir()
    (tmp_path / "agentgate.yml").write_text("gates:\n  build:\n    command: 'true'\n")
    monkeypatch.chdir(tmp_path)
    run = agentgate("verify", "--format", "json", "--no-cache")
    assert run.code == 0 and [g["name"] for g in run.verdict()["gates"]] == ["build"]
