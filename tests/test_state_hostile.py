"""The project's state folder in a shape agentgate did not make: never followed, fails closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentgate.cli.main import main

FAILING = 'gates:\n  build:\n    command: python -c "import sys; sys.exit(1)"\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "agentgate.yml").write_text(FAILING)
    monkeypatch.chdir(root)
    return root


def test_a_state_folder_that_is_a_link_is_not_followed(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".agentgate").symlink_to(elsewhere)
    code = main(["verify", "--task", "t"])
    out, err = capsys.readouterr()
    assert list(elsewhere.iterdir()) == []  # nothing written where the link points
    assert "is a symbolic link; remove it" in err
    assert code == 3  # attempts cannot be counted: a failing verdict escalates, never loops
    assert "ESCALATE" in out


def test_a_state_path_that_is_a_file_fails_closed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".agentgate").write_text("not a folder")
    assert main(["verify", "--task", "t"]) == 3
    out, _ = capsys.readouterr()
    assert "attempts could not be recorded" in out
    assert (project / ".agentgate").read_text() == "not a folder"  # nothing of the user's lost
