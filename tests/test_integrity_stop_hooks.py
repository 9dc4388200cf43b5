"""Rule stop-hook-removed: the change takes agentgate's stop hook out of a harness's settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _helpers import git

from pytest_agentgate.cli.main import main


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'r'\n")
    (root / "agentgate.yml").write_text('gates:\n  build:\n    command: python -c "pass"\n')
    monkeypatch.chdir(root)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    git(root, "init", "-q", "-b", "main")
    for harness in ("claude", "copilot", "gemini"):
        assert main(["install-hook", harness]) == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base: the agent cannot stop until the gate passes")
    git(root, "checkout", "-q", "-b", "agent")
    return root


def integrity(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    main(["verify", "--format", "json", "--no-cache"])
    verdict = json.loads(capsys.readouterr().out)
    gate: dict[str, Any] = next(g for g in verdict["gates"] if g["name"] == "integrity")
    return gate


def test_taking_the_hook_out_is_tampering(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["install-hook", "claude", "--uninstall"])
    (repo / ".github" / "hooks" / "agentgate.json").unlink()
    gate = integrity(capsys)
    assert gate["status"] == "fail"
    found = [(f["code"], f["path"], f["message"]) for f in gate["findings"]]
    assert (
        "stop-hook-removed",
        ".claude/settings.json",
        "agentgate's Claude Code stop hook was taken out of .claude/settings.json",
    ) in found
    assert any(p == ".github/hooks/agentgate.json" for c, p, _ in found if c == "stop-hook-removed")


def test_cutting_the_timeout_is_tampering(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"] = 1000
    path.write_text(json.dumps(settings))
    gate = integrity(capsys)
    messages = [f["message"] for f in gate["findings"] if f["code"] == "stop-hook-removed"]
    assert messages == [
        "agentgate's Gemini CLI stop hook timeout was cut from 120 s to 1 s in "
        ".gemini/settings.json: the harness lets the agent stop when it runs out"
    ]


def test_other_edits_of_the_settings_are_fine(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["permissions"] = {"allow": ["Bash(pytest)"]}
    settings["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 300  # more time is fine
    path.write_text(json.dumps(settings, indent=4))
    assert main(["install-hook", "cursor"]) == 0  # a new harness too
    gate = integrity(capsys)
    assert [f for f in gate["findings"] if f["code"] == "stop-hook-removed"] == []
