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


def test_taking_the_session_start_hook_out_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It pins each later session's base before its agent can move it: an agent that takes it
    out cannot unpin its own session, but would every session after it."""
    claude = repo / ".claude" / "settings.json"
    settings = json.loads(claude.read_text())
    del settings["hooks"]["SessionStart"]
    claude.write_text(json.dumps(settings))
    copilot = repo / ".github" / "hooks" / "agentgate.json"
    settings = json.loads(copilot.read_text())
    settings["hooks"]["sessionStart"][0]["timeoutSec"] = 1
    copilot.write_text(json.dumps(settings))
    gate = integrity(capsys)
    assert gate["status"] == "fail"
    messages = sorted(f["message"] for f in gate["findings"] if f["code"] == "stop-hook-removed")
    assert messages == [
        "agentgate's Claude Code session-start hook was taken out of .claude/settings.json",
        "agentgate's Copilot CLI session-start hook timeout was cut from 30 s to 1 s in "
        ".github/hooks/agentgate.json: the session's base is not pinned when it runs out",
    ]


def test_adding_the_session_start_hook_to_an_older_install_is_fine(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The base as an older agentgate wrote it: the stop hook alone.
    git(repo, "checkout", "-q", "main")
    path = repo / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    del settings["hooks"]["SessionStart"]
    path.write_text(json.dumps(settings))
    git(repo, "commit", "-qam", "the stop hook alone")
    git(repo, "checkout", "-q", "-B", "agent")
    assert main(["install-hook", "gemini"]) == 0
    gate = integrity(capsys)
    assert [f for f in gate["findings"] if f["code"] == "stop-hook-removed"] == []
    assert "SessionStart" in json.loads(path.read_text())["hooks"]


@pytest.mark.parametrize(
    ("harness", "path", "event", "edit"),
    [
        ("claude", ".claude/settings.json", "Stop", "{} --session-start"),
        ("gemini", ".gemini/settings.json", "AfterAgent", "true # {}"),
        ("copilot", ".github/hooks/agentgate.json", "agentStop", "{} > /dev/null"),
    ],
)
def test_a_hook_that_still_names_agentgate_but_runs_something_else_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str], harness: str, path: str, event: str, edit: str
) -> None:
    # Red team 38: the entry kept the words `agentgate hook NAME`, so it read as agentgate's,
    # and let the agent stop in every later session.
    settings = json.loads((repo / path).read_text())
    entries = settings["hooks"][event]
    handler = entries[0]["hooks"][0] if "hooks" in entries[0] else entries[0]
    key = "bash" if harness == "copilot" else "command"
    handler[key] = edit.format(handler[key])
    (repo / path).write_text(json.dumps(settings))
    gate = integrity(capsys)
    messages = [f["message"] for f in gate["findings"] if f["code"] == "stop-hook-removed"]
    assert len(messages) == 1, messages
    assert (
        messages[0].startswith("agentgate's ")
        and f"stop hook in {path} no longer runs " in (messages[0])
    )
    assert messages[0].endswith(f"(`{handler[key]}`): anything else may let the agent go")


def test_turning_every_claude_hook_off_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["disableAllHooks"] = True
    path.write_text(json.dumps(settings))
    gate = integrity(capsys)
    messages = [f["message"] for f in gate["findings"] if f["code"] == "stop-hook-removed"]
    assert messages == [
        '"disableAllHooks": true in .claude/settings.json turns agentgate\'s Claude Code hooks off'
    ]
