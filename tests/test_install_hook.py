"""`agentgate install-hook`: the settings each harness reads, merged, idempotent, backed up."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate.cli.main import main
from pytest_agentgate.harness.install import agentgate_argv
from pytest_agentgate.harness.managed import PATH_VARIABLE, managed_settings_path


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "agentgate.yml").write_text('gates:\n  build:\n    command: python -c "pass"\n')
    monkeypatch.chdir(root)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv(PATH_VARIABLE, str(tmp_path / "etc/claude-code/managed-settings.json"))
    return root


def install(*args: str) -> int:
    return main(["install-hook", *args])


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def command(harness: str) -> str:
    return shlex.join([*agentgate_argv(), "hook", harness])


def start(harness: str) -> str:
    return shlex.join([*agentgate_argv(), "hook", harness, "--session-start"])


def managed_hook() -> dict[str, Any]:
    """The Stop hook of the managed settings: every session on the machine runs it."""
    stop = f"{command('claude')} --managed"
    return {"Stop": [{"hooks": [{"type": "command", "command": stop, "timeout": 120}]}]}


def test_claude_project_settings(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert install("claude") == 0
    assert read(proj / ".claude/settings.json") == {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": command("claude"), "timeout": 120}]}
            ],
            "SessionStart": [
                {"hooks": [{"type": "command", "command": start("claude"), "timeout": 30}]}
            ],
        }
    }
    out = capsys.readouterr().out
    assert "wrote .claude/settings.json: Stop hook" in out
    assert "timeout 120 s (agentgate answers within 100 s)" in out
    assert (
        f"  and SessionStart hook `{start('claude')}`, timeout 30 s: pins the commit the task is "
        "judged against when the session starts\n"
    ) in out
    assert "review the new hook with /hooks" in out


def test_the_command_is_an_absolute_path(proj: Path) -> None:
    install("codex")
    written = read(proj / ".codex/hooks.json")["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert Path(shlex.split(written)[0]).is_absolute()
    assert shlex.split(written)[-2:] == ["hook", "codex"]


def test_each_harness_gets_its_own_shape_and_a_timeout_above_the_budget(proj: Path) -> None:
    (proj / "agentgate.yml").write_text(
        'gates:\n  build:\n    command: python -c "pass"\nhook:\n  budget: 50\n'
    )
    for harness in ("gemini", "copilot", "cursor"):
        assert install(harness) == 0
    assert read(proj / ".gemini/settings.json")["hooks"]["AfterAgent"] == [
        {
            "hooks": [
                {
                    "type": "command",
                    "name": "agentgate",
                    "command": command("gemini"),
                    "timeout": 70000,
                }
            ]
        }
    ]
    assert read(proj / ".gemini/settings.json")["hooks"]["SessionStart"] == [
        {
            "hooks": [
                {
                    "type": "command",
                    "name": "agentgate",
                    "command": start("gemini"),
                    "timeout": 30000,
                }
            ]
        }
    ]
    assert read(proj / ".github/hooks/agentgate.json") == {
        "version": 1,
        "hooks": {
            "agentStop": [{"type": "command", "bash": command("copilot"), "timeoutSec": 70}],
            "sessionStart": [{"type": "command", "bash": start("copilot"), "timeoutSec": 30}],
        },
    }
    # Cursor's sessionStart could not be checked against a real Cursor: the stop hook alone.
    assert read(proj / ".cursor/hooks.json") == {
        "version": 1,
        "hooks": {"stop": [{"command": command("cursor"), "timeout": 70, "loop_limit": 8}]},
    }


def test_other_settings_and_hooks_are_kept_and_a_backup_is_made(
    proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = proj / ".claude/settings.json"
    settings.parent.mkdir()
    mine = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
        },
    }
    original = json.dumps(mine, indent=4)
    settings.write_text(original)
    assert install("claude") == 0
    merged = read(settings)
    assert merged["permissions"] == mine["permissions"]
    assert merged["hooks"]["PreToolUse"] == mine["hooks"]["PreToolUse"]
    assert merged["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]
    assert merged["hooks"]["Stop"][1]["hooks"][0]["command"] == command("claude")
    backups = list(settings.parent.glob("settings.json.agentgate-*.bak"))
    assert [b.read_text() for b in backups] == [original]
    assert (
        "the previous file is kept as .claude/settings.json.agentgate-" in capsys.readouterr().out
    )


def test_installing_twice_changes_nothing(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install("codex")
    first = (proj / ".codex/hooks.json").read_text()
    capsys.readouterr()
    assert install("codex") == 0
    assert (proj / ".codex/hooks.json").read_text() == first
    assert "already installed in .codex/hooks.json; nothing changed" in capsys.readouterr().out
    assert list((proj / ".codex").glob("*.bak")) == []


def test_an_old_entry_is_updated_in_place_never_listed_twice(proj: Path) -> None:
    """Codex and Copilot run an entry listed twice twice: one entry, the current one."""
    path = proj / ".github/hooks/agentgate.json"
    path.parent.mkdir(parents=True)
    old = {"type": "command", "bash": "/old/venv/bin/agentgate hook copilot", "timeoutSec": 30}
    path.write_text(json.dumps({"version": 1, "hooks": {"agentStop": [old, dict(old)]}}))
    install("copilot")
    entries = read(path)["hooks"]["agentStop"]
    assert entries == [{"type": "command", "bash": command("copilot"), "timeoutSec": 120}]


def test_uninstall_takes_out_only_agentgate(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = proj / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}})
    )
    install("claude")
    assert install("claude", "--uninstall") == 0
    assert read(settings) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]}
    }
    assert (
        "removed the Claude Code stop and session-start hooks from .claude/settings.json"
        in capsys.readouterr().out
    )
    assert install("claude", "--uninstall") == 0
    assert "not there" in capsys.readouterr().out


def test_a_malformed_settings_file_is_an_error_and_is_left_alone(
    proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = proj / ".gemini/settings.json"
    settings.parent.mkdir()
    settings.write_text('{"theme": "dark",\n')
    assert install("gemini") == 2
    err = capsys.readouterr().err
    assert f"agentgate: error: {settings}: is not valid JSON" in err
    assert "nothing was changed" in err
    assert settings.read_text() == '{"theme": "dark",\n'


@pytest.mark.parametrize(
    "content", ['["a list"]', '{"hooks": []}', '{"hooks": {"Stop": {"not": "a list"}}}']
)
def test_a_settings_file_of_the_wrong_shape_is_an_error(
    content: str, proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = proj / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text(content)
    assert install("claude") == 2
    assert "nothing was changed" in capsys.readouterr().err
    assert settings.read_text() == content


def test_user_settings(proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install("claude", "--user")
    install("copilot", "--user")
    home = tmp_path / "home"
    assert read(home / ".claude/settings.json")["hooks"]["Stop"]
    assert read(home / ".copilot/hooks/agentgate.json")["hooks"]["agentStop"]
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    install("codex", "--user")
    assert read(tmp_path / "codex-home/hooks.json")["hooks"]["Stop"]
    assert not (proj / ".claude").exists()


def test_codex_is_told_both_trust_steps(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install("codex")
    out = capsys.readouterr().out
    assert "approve agentgate's Stop and SessionStart hooks when asked" in out
    assert f'[projects."{proj}"]' in out and 'trust_level = "trusted"' in out
    assert ".agentgate/escalations/" in out


@pytest.mark.parametrize(
    ("harness", "step"),
    [
        ("gemini", "trust this folder when Gemini asks"),
        ("copilot", "--allow-all alone is not enough"),
        ("cursor", "restart Cursor"),
    ],
)
def test_the_trust_step_is_printed(
    harness: str, step: str, proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(harness)
    assert step in capsys.readouterr().out


def test_a_broken_configuration_still_installs_with_the_default_budget(
    proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "agentgate.yml").write_text("gates: [\n")
    assert install("claude") == 0
    assert "the configuration cannot be read" in capsys.readouterr().out
    assert read(proj / ".claude/settings.json")["hooks"]["Stop"][0]["hooks"][0]["timeout"] == 120


def test_an_install_without_the_session_start_hook_gets_it(
    proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agentgate that wrote the stop hook alone: installing again adds the session-start hook
    beside it (backed up first), and once there, nothing changes."""
    path = proj / ".codex/hooks.json"
    path.parent.mkdir()
    stop = {"type": "command", "command": command("codex"), "timeout": 120}
    old = {"hooks": {"Stop": [{"hooks": [stop]}]}}
    path.write_text(json.dumps(old))
    assert install("codex") == 0
    hooks = read(path)["hooks"]
    assert hooks["Stop"] == old["hooks"]["Stop"]
    assert hooks["SessionStart"] == [
        {"hooks": [{"type": "command", "command": start("codex"), "timeout": 30}]}
    ]
    assert [json.loads(b.read_text()) for b in proj.glob(".codex/*.bak")] == [old]
    capsys.readouterr()
    assert install("codex") == 0
    assert (
        "hooks already installed in .codex/hooks.json; nothing changed" in capsys.readouterr().out
    )


def test_other_session_start_hooks_are_kept_and_ours_is_never_listed_twice(proj: Path) -> None:
    settings = proj / ".claude/settings.json"
    settings.parent.mkdir()
    theirs = {"matcher": "startup", "hooks": [{"type": "command", "command": "load-context"}]}
    stale = {
        "hooks": [{"type": "command", "command": "/old/bin/agentgate hook claude --session-start"}]
    }
    settings.write_text(json.dumps({"hooks": {"SessionStart": [theirs, stale, stale]}}))
    install("claude")
    assert read(settings)["hooks"]["SessionStart"] == [
        theirs,
        {"hooks": [{"type": "command", "command": start("claude"), "timeout": 30}]},
    ]
    install("claude", "--uninstall")
    assert read(settings) == {"hooks": {"SessionStart": [theirs]}}


@pytest.mark.parametrize(
    ("harness", "path", "event"),
    [
        ("codex", ".codex/hooks.json", "SessionStart"),
        ("gemini", ".gemini/settings.json", "SessionStart"),
        ("copilot", ".github/hooks/agentgate.json", "sessionStart"),
    ],
)
def test_uninstall_takes_both_hooks_out(harness: str, path: str, event: str, proj: Path) -> None:
    install(harness)
    assert event in read(proj / path)["hooks"]
    assert install(harness, "--uninstall") == 0
    assert "hooks" not in read(proj / path)


def test_an_agentgate_inside_the_project_is_noted(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 12: the hook runs the project's own .venv/bin/agentgate, whose libraries the
    # agent can edit so that every stop is agentgate's own trouble (which lets it stop).
    assert install("claude") == 0
    assert "inside the project" not in capsys.readouterr().out  # this suite's agentgate
    inside = proj / ".venv" / "bin" / "agentgate"
    inside.parent.mkdir(parents=True)
    inside.write_text("#!/bin/sh\n")
    monkeypatch.setattr("sys.argv", [str(inside)])
    assert install("codex") == 0
    out = capsys.readouterr().out
    assert f"agentgate: note: the hook runs {inside}, inside the project" in out
    assert "`pipx install pytest-agentgate`" in out


# Claude Code 2.1.197 applies the project's settings `env` as soon as the file changes: with
# CLAUDE_CODE_SHELL_PREFIX=true the Stop hook prints nothing and the agent stops in the same
# session; the managed settings' `env` is applied last and wins (red team 51, in the lab).
PINNED = {
    "CLAUDE_CODE_SHELL_PREFIX": "",
    "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "8",
    "CLAUDE_CODE_SIMPLE": "",  # red team 52: set, no hook runs at all
}


def test_claude_is_told_to_pin_its_environment_in_the_managed_settings(
    proj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    managed = tmp_path / "etc/claude-code/managed-settings.json"
    assert install("claude") == 0
    out = capsys.readouterr().out
    assert "Claude Code's managed settings win over the project's" in out
    assert (
        f"    sudo {shlex.join([*agentgate_argv(), 'install-hook', 'claude', '--managed'])}\n"
        in out
    )
    written = {"env": PINNED, "hooks": managed_hook()}
    assert f"which merges into {managed}:\n        {json.dumps(written)}" in out
    assert 'the file deleted, agentgate\'s entry taken out, `"disableAllHooks": true`' in out
    assert not managed.exists()
    assert install("claude", "--managed") == 0
    capsys.readouterr()
    (proj / ".claude/settings.json").unlink()
    assert install("claude") == 0
    assert "managed settings" not in capsys.readouterr().out  # pinned: nothing left to do


def test_managed_writes_the_managed_settings_alone(
    proj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    managed = tmp_path / "etc/claude-code/managed-settings.json"
    assert install("claude", "--managed") == 0
    assert read(managed) == {"hooks": managed_hook(), "env": PINNED}
    assert managed.stat().st_mode & 0o777 == 0o644  # every user's Claude Code reads it
    assert managed.parent.stat().st_mode & 0o777 == 0o755
    assert not (proj / ".claude").exists()
    out = capsys.readouterr().out
    assert "now run agentgate's Stop hook (in projects whose own settings run it)" in out
    assert f"in {managed}:\n" in out
    assert f"  Stop hook {command('claude')} --managed\n" in out
    assert (
        '  CLAUDE_CODE_SHELL_PREFIX=""\n  CLAUDE_CODE_STOP_HOOK_BLOCK_CAP="8"\n'
        '  CLAUDE_CODE_SIMPLE=""\n'
    ) in out
    assert install("claude", "--managed") == 0
    assert "already set in" in capsys.readouterr().out
    assert list(managed.parent.glob("*.bak")) == []


def test_managed_merges_with_what_is_there_and_keeps_a_backup(
    proj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    managed = tmp_path / "etc/claude-code/managed-settings.json"
    managed.parent.mkdir(parents=True)
    theirs = {
        "permissions": {"deny": ["WebFetch"]},
        "env": {"HTTPS_PROXY": "http://proxy:3128", "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "20"},
    }
    original = json.dumps(theirs)
    managed.write_text(original)
    managed.chmod(0o640)
    assert install("claude", "--managed") == 0
    assert read(managed) == {
        "permissions": {"deny": ["WebFetch"]},
        "env": {"HTTPS_PROXY": "http://proxy:3128", **PINNED},
        "hooks": managed_hook(),
    }
    assert managed.stat().st_mode & 0o777 == 0o640
    assert [b.read_text() for b in managed.parent.glob("*.agentgate-*.bak")] == [original]
    out = capsys.readouterr().out
    assert 'CLAUDE_CODE_STOP_HOOK_BLOCK_CAP="8" (was "20")' in out
    assert "the previous file is kept as " in out
    assert install("claude", "--managed", "--uninstall") == 0
    assert read(managed) == {
        "permissions": {"deny": ["WebFetch"]},
        "env": {"HTTPS_PROXY": "http://proxy:3128"},
    }
    out = capsys.readouterr().out
    assert "CLAUDE_CODE_SHELL_PREFIX unpinned" in out
    assert f"Stop hook {command('claude')} --managed removed" in out
    assert install("claude", "--managed", "--uninstall") == 0
    assert "not there" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["{not json", '["a list"]', '{"env": ["A=1"]}'])
def test_a_managed_settings_file_agentgate_cannot_read_is_left_alone(
    content: str, proj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    managed = tmp_path / "etc/claude-code/managed-settings.json"
    managed.parent.mkdir(parents=True)
    managed.write_text(content)
    assert install("claude", "--managed") == 2
    err = capsys.readouterr().err
    assert f"agentgate: error: {managed}: " in err and "nothing was changed" in err
    assert managed.read_text() == content


def test_a_managed_settings_file_that_cannot_be_written_says_to_use_sudo(
    proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refused(src: object, dst: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("pytest_agentgate.harness.install.os.replace", refused)
    managed = tmp_path / "etc/claude-code/managed-settings.json"
    assert install("claude", "--managed") == 2
    assert capsys.readouterr().err == (
        f"agentgate: error: {managed}: cannot be written (Permission denied); it is the "
        "machine's, for its administrator: run the command with sudo\n"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["codex", "--managed"], "--managed is for claude only"),
        (["claude", "--managed", "--user"], "--managed writes the machine's settings"),
    ],
)
def test_managed_is_for_claude_and_the_machine_only(
    args: list[str], error: str, proj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert install(*args) == 2
    assert error in capsys.readouterr().err
    assert not (tmp_path / "etc").exists()


@pytest.mark.parametrize(
    ("platform", "path"),
    [
        ("linux", "/etc/claude-code/managed-settings.json"),
        ("darwin", "/Library/Application Support/ClaudeCode/managed-settings.json"),
    ],
)
def test_the_managed_settings_are_where_claude_code_reads_them(
    platform: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PATH_VARIABLE, raising=False)
    monkeypatch.setattr("pytest_agentgate.harness.managed.sys.platform", platform)
    assert managed_settings_path() == Path(path)
