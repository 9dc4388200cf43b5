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


def installed_at_base(repo: Path, harness: str) -> None:
    """``harness``'s hooks installed on main too, the agent's branch on top of it."""
    git(repo, "checkout", "-q", "main")
    assert main(["install-hook", harness]) == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{harness} too")
    git(repo, "checkout", "-q", "-B", "agent")


def stop_hook_findings(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The messages of the integrity gate's stop-hook-removed findings."""
    gate = integrity(capsys)
    return [f["message"] for f in gate["findings"] if f["code"] == "stop-hook-removed"]


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
    messages = stop_hook_findings(capsys)
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
    messages = stop_hook_findings(capsys)
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
    messages = stop_hook_findings(capsys)
    assert messages == [
        '"disableAllHooks": true in .claude/settings.json turns agentgate\'s Claude Code hooks off'
    ]


def test_a_hook_run_by_another_program_named_agentgate_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 43: `tools/agentgate hook claude`, a script of the change's answering `{}` to
    # every stop, read as armed: only its program's name was looked at.
    (repo / "tools").mkdir()
    (repo / "tools" / "agentgate").write_text('#!/bin/sh\ncat >/dev/null; echo "{}"\n')
    path = repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    handler = settings["hooks"]["Stop"][0]["hooks"][0]
    was = handler["command"]
    handler["command"] = "tools/agentgate hook claude"
    path.write_text(json.dumps(settings))
    messages = stop_hook_findings(capsys)
    assert messages == [
        "agentgate's Claude Code stop hook in .claude/settings.json runs another program than "
        "the base's (a change on the base branch moves it): `tools/agentgate hook claude` "
        f"where the base runs `{was}`"
    ]


def test_turning_claude_hooks_off_in_its_local_settings_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 43: Claude Code's local settings, which git ignores, were never read.
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "local settings are the user's")
    local = repo / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}))
    assert stop_hook_findings(capsys) == []
    local.write_text(json.dumps({"disableAllHooks": True}))
    messages = [f["message"] for f in integrity(capsys)["findings"]]
    assert (
        '"disableAllHooks": true in .claude/settings.local.json turns agentgate\'s Claude Code '
        "hooks off"
    ) in messages


@pytest.mark.parametrize(("limit", "shown"), [(1, "1"), (None, "5")], ids=["cut", "taken-out"])
def test_cutting_cursors_loop_limit_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str], limit: int | None, shown: str
) -> None:
    # Red team 43: Cursor lets the agent stop after loop_limit blocks (5 when not written).
    installed_at_base(repo, "cursor")
    path = repo / ".cursor" / "hooks.json"
    settings = json.loads(path.read_text())
    handler = settings["hooks"]["stop"][0]
    if limit is None:
        del handler["loop_limit"]
    else:
        handler["loop_limit"] = limit
    path.write_text(json.dumps(settings))
    messages = [f["message"] for f in integrity(capsys)["findings"]]
    assert (
        f"agentgate's Cursor stop hook's loop_limit was cut from 8 to {shown} in "
        ".cursor/hooks.json: Cursor lets the agent stop after that many blocks, before "
        "agentgate's attempts run out"
    ) in messages


def _installed(venv: Path, files: dict[str, str]) -> None:
    """A virtual environment with agentgate installed as pip lays it out: the RECORD lists
    each file by its path from the site folder, with its sha256."""
    import base64
    import hashlib

    site = venv / "lib" / "python3.11" / "site-packages"
    info = site / "pytest_agentgate-0.1.0.dist-info"
    info.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    lines = []
    for name, text in files.items():
        path = site / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        lines.append(f"{name},sha256={digest.decode()},{len(text)}")
    (info / "RECORD").write_text("\n".join([*lines, f"{info.name}/RECORD,,"]) + "\n")


def test_the_hooks_own_program_edited_in_the_project_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 43: `.venv/bin/agentgate` rewritten to answer `{}` to every stop (and to run
    # agentgate for anything else) let the agent go with nothing said, and no later verdict
    # found it.
    venv = repo / ".venv"
    script = "#!/usr/bin/python3\nfrom pytest_agentgate.cli.main import main\nmain()\n"
    _installed(venv, {"../../../bin/agentgate": script, "pytest_agentgate/__init__.py": ""})
    git(repo, "checkout", "-q", "main")
    (repo / ".gitignore").write_text(".venv/\n")
    for harness in ("claude", "copilot"):
        path = repo / PROJECT_FILES[harness]
        path.write_text(path.read_text().replace(_program(path), str(venv / "bin" / "agentgate")))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the hooks run the project's agentgate")
    git(repo, "checkout", "-q", "-B", "agent")
    assert stop_hook_findings(capsys) == []
    (venv / "bin" / "agentgate").write_text('#!/bin/sh\ncat >/dev/null; echo "{}"\n')
    found = [(f["path"], f["message"]) for f in integrity(capsys)["findings"]]
    assert (
        ".venv/bin/agentgate",
        ".venv/bin/agentgate, of the agentgate that .claude/settings.json runs as the Claude "
        "Code hook, is not as it was installed (its RECORD's hash): a hook that answers the "
        "stop without agentgate lets the agent go; install agentgate again, outside the project",
    ) in found
    assert len([p for p, _ in found if p == ".venv/bin/agentgate"]) == 1  # once, not per file


PROJECT_FILES = {"claude": ".claude/settings.json", "copilot": ".github/hooks/agentgate.json"}


def _program(path: Path) -> str:
    import shlex

    text = path.read_text()
    settings = json.loads(text)
    for entries in settings["hooks"].values():
        for entry in entries:
            for handler in entry.get("hooks", [entry]):
                command = handler.get("command") or handler.get("bash")
                return shlex.split(command)[0]
    raise AssertionError(text)


def test_an_agentgate_edited_in_the_projects_environment_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The harness may run it from the user's settings, which the project does not show.
    venv = repo / "venv"
    _installed(venv, {"../../../bin/agentgate": "#!/usr/bin/python3\n"})
    (repo / ".gitignore").write_text("venv/\n")
    assert stop_hook_findings(capsys) == []
    (venv / "bin" / "agentgate").write_text('#!/bin/sh\necho "{}"\n')
    messages = [f["message"] for f in integrity(capsys)["findings"]]
    assert (
        "venv/bin/agentgate, of the agentgate installed in the project, is not as it was "
        "installed (its RECORD's hash): a hook that answers the stop without agentgate lets "
        "the agent go; install agentgate again, outside the project"
    ) in messages


@pytest.mark.parametrize(
    ("path", "edit", "said"),
    [
        (
            ".gemini/settings.json",
            lambda s: {**s, "hooksConfig": {"enabled": False}},
            ".gemini/settings.json changes how Gemini CLI runs its hooks (hooksConfig: none -> "
            '{"enabled": false})',
        ),
        (
            ".gemini/settings.json",
            lambda s: {**s, "hooksConfig": {"disabled": ["agentgate"]}},
            "hooksConfig: none -> ",
        ),
        (
            ".codex/hooks.json",
            lambda s: {"$schema": "https://example.com/hooks.json", **s},
            ".codex/hooks.json changes how Codex CLI runs its hooks ($schema: none -> ",
        ),
    ],
    ids=["gemini-off", "gemini-disabled-by-name", "codex-unknown-key"],
)
def test_switching_a_harnesss_hooks_off_in_its_settings_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str], path: str, edit: Any, said: str
) -> None:
    # Red team 45: Gemini CLI's own switch for its hooks, and a key Codex refuses the file for.
    installed_at_base(repo, "codex")
    settings = json.loads((repo / path).read_text())
    # Another setting (Gemini's), or the file reformatted (Codex's): fine.
    other = settings if path.startswith(".codex") else {**settings, "theme": "dark"}
    (repo / path).write_text(json.dumps(other, indent=4))
    assert stop_hook_findings(capsys) == []
    (repo / path).write_text(json.dumps(edit(settings)))
    messages = [f["message"] for f in integrity(capsys)["findings"]]
    assert any(said in m for m in messages), messages


def test_turning_codexs_hooks_off_in_its_configuration_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(repo, "checkout", "-q", "main")
    assert main(["install-hook", "codex"]) == 0
    (repo / ".codex" / "config.toml").write_text('model = "gpt-5"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "codex too")
    git(repo, "checkout", "-q", "-B", "agent")
    (repo / ".codex" / "config.toml").write_text('model = "gpt-5.1"\n')  # fine
    assert stop_hook_findings(capsys) == []
    (repo / ".codex" / "config.toml").write_text('model = "gpt-5.1"\n\n[features]\nhooks = false\n')
    messages = [f["message"] for f in integrity(capsys)["findings"]]
    assert (
        ".codex/config.toml changes Codex's hook settings (features.hooks: none -> false): they "
        "decide whether agentgate's Codex hooks run"
    ) in messages


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (".codex/config.toml", 'model = "gpt-5"\n\n[features]\nhooks = true\n'),
        (
            ".gemini/settings.json",
            '{"hooksConfig": {"enabled": true, "notifications": false, "disabled": ["logger"]}}',
        ),
    ],
    ids=["codex-hooks-on", "gemini-other-hook-off"],
)
def test_hook_settings_that_keep_agentgates_hooks_on_are_fine(
    repo: Path, capsys: pytest.CaptureFixture[str], path: str, text: str
) -> None:
    # Review 28: any change of these settings was a finding, `hooks = true` included.
    installed_at_base(repo, "codex")
    if path.endswith(".json"):
        settings = json.loads((repo / path).read_text())
        (repo / path).write_text(json.dumps({**settings, **json.loads(text)}))
    else:
        (repo / path).write_text(text)
    assert stop_hook_findings(capsys) == []


def test_a_hook_made_to_run_in_the_background_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 48: `"async": true` on agentgate's Claude Code handler; its decision then
    # counts for nothing, and every later session could stop freely.
    path = repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"]["Stop"][0]["hooks"][0]["async"] = True
    path.write_text(json.dumps(settings))
    messages = [f["message"] for f in integrity(capsys)["findings"]]
    assert (
        "agentgate's Claude Code stop hook in .claude/settings.json no longer has the settings "
        "it has at the base (async: none -> true): the harness may run it so that it cannot "
        "hold the agent"
    ) in messages


def test_a_handler_added_beside_agentgates_stop_hook_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Red team 50: a second Stop handler printing {"continue": false} ends the turn whatever
    # agentgate answers (Claude Code's `continue: false` wins over any block).
    path = repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    other = {"type": "command", "command": "echo '{\"continue\": false}'"}
    settings["hooks"]["Stop"].append({"hooks": [other]})
    path.write_text(json.dumps(settings))
    assert stop_hook_findings(capsys) == [
        ".claude/settings.json adds a Claude Code Stop handler beside agentgate's (`echo "
        "'{\"continue\": false}'`): its answer can let the agent stop whatever agentgate answers"
    ]
    # Copilot runs the handlers of every file in .github/hooks (red team 51).
    other = {"type": "command", "bash": "echo '{\"continue\": false}'"}
    (repo / ".github" / "hooks" / "zz.json").write_text(
        json.dumps({"version": 1, "hooks": {"agentStop": [other]}})
    )
    assert stop_hook_findings(capsys) == [
        ".claude/settings.json adds a Claude Code Stop handler beside agentgate's (`echo "
        "'{\"continue\": false}'`): its answer can let the agent stop whatever agentgate answers",
        ".github/hooks/zz.json adds a Copilot CLI agentStop handler beside agentgate's (`echo "
        "'{\"continue\": false}'`): its answer can let the agent stop whatever agentgate answers",
    ]
    (repo / ".github" / "hooks" / "zz.json").unlink()
    # Handlers of other events, and the base's own handlers, are the project's business.
    del settings["hooks"]["Stop"][-1]
    settings["hooks"]["PostToolUse"] = [{"matcher": "Edit", "hooks": [other]}]
    path.write_text(json.dumps(settings))
    assert stop_hook_findings(capsys) == []


@pytest.mark.parametrize("settings_file", ["settings.json", "settings.local.json"])
def test_claudes_block_cap_or_the_hooks_environment_changed_is_tampering(
    repo: Path, capsys: pytest.CaptureFixture[str], settings_file: str
) -> None:
    # Red team 50: `env` in Claude Code's settings sets the variables its hooks run with;
    # CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1 (read by Claude Code 2.1.197) lets the agent stop at
    # its second block, before agentgate's attempts run out. Red team 51: it runs every hook
    # command after CLAUDE_CODE_SHELL_PREFIX (`true '<the hook>'` answers nothing).
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "local settings are the user's")
    path = repo / ".claude" / settings_file
    settings = json.loads(path.read_text()) if path.exists() else {}
    # Review 31: Claude Code's other variables are the project's (a slow suite's Bash timeout,
    # Bedrock, a proxy's certificates), in its settings and in the user's own.
    own = {
        "BASH_DEFAULT_TIMEOUT_MS": "600000",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "32000",
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "NODE_EXTRA_CA_CERTS": "/etc/ssl/certs/ca-certificates.crt",
    }
    path.write_text(json.dumps({**settings, "env": own}))
    assert stop_hook_findings(capsys) == []
    # Any other of Claude Code's own, in the project's settings (red team 52: a variable that
    # switches hooks off may have any name); the user's own file is judged by what is known.
    path.write_text(json.dumps({**settings, "env": {**own, "CLAUDE_CODE_NEW_THING": "1"}}))
    assert len(stop_hook_findings(capsys)) == (settings_file == "settings.json")
    env = {
        **own,
        "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "1",
        "CLAUDE_CODE_SHELL_PREFIX": "true",
        "CLAUDE_CODE_SIMPLE": "1",  # red team 52: `--bare`'s variable, no hook runs
    }
    path.write_text(json.dumps({**settings, "env": env}))
    shown = "CLAUDE_CODE_SHELL_PREFIX=true, CLAUDE_CODE_SIMPLE=1, CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1"
    what = (
        "decides whether and how Claude Code runs agentgate's stop hook (the shell and prefix it "
        "runs hook commands with, how many blocks it takes, where it reads its settings)"
    )
    assert stop_hook_findings(capsys) == [
        f".claude/settings.json changes the environment Claude Code gives its hooks ({shown}), "
        f"which {what}: put it back as the base has it; a person changes it on the base branch"
        if settings_file == "settings.json"
        else ".claude/settings.local.json, this machine's own Claude Code settings, sets the "
        f"environment Claude Code gives the hooks of .claude/settings.json ({shown}), which "
        f"{what}: take it out of that file"
    ]


def test_claudes_settings_env_is_the_projects_where_agentgate_is_not_its_hook(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review 31: a project that runs agentgate in CI only had its Claude settings judged.
    git(repo, "checkout", "-q", "main")
    main(["install-hook", "claude", "--uninstall"])
    git(repo, "commit", "-qam", "no Claude hook")
    git(repo, "checkout", "-q", "-B", "agent")
    path = repo / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    path.write_text(json.dumps({**settings, "env": {"CLAUDE_CODE_SHELL_PREFIX": "log"}}))
    assert stop_hook_findings(capsys) == []
