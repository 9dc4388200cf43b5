"""``agentgate install-hook``: write a harness's settings so it calls ``agentgate hook``.

Two entries per harness: the stop hook (``agentgate hook NAME``, on the harness's stop event),
and, where the harness has one, the session-start hook (``agentgate hook NAME
--session-start``, on its session-start event: it pins the task's base before the agent can
move it, harness/start.py). Cursor gets the stop hook alone.

The settings are merged: every other setting and hook stays as it is, an entry of agentgate's
already there is updated in place (never listed twice: Codex and Copilot would run it twice),
and a file that changes is backed up first. The command is the absolute path of this
agentgate: a harness does not activate the project's virtualenv.

Where each harness reads its hooks (checked with the real CLIs, 2026-11):

=========  ==================================  ======================================
harness    project                             user (``--user``)
=========  ==================================  ======================================
claude     ``.claude/settings.json``           ``~/.claude/settings.json``
codex      ``.codex/hooks.json``               ``$CODEX_HOME/hooks.json`` (``~/.codex``)
gemini     ``.gemini/settings.json``           ``~/.gemini/settings.json``
copilot    ``.github/hooks/agentgate.json``    ``~/.copilot/hooks/agentgate.json``
cursor     ``.cursor/hooks.json``              ``~/.cursor/hooks.json``
=========  ==================================  ======================================
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_agentgate.config.model import DEFAULT_HOOK_BUDGET_S
from pytest_agentgate.errors import AgentgateError
from pytest_agentgate.harness.managed import (
    CLAUDE_PINNED_ENV,
    MANAGED_FLAG,
    managed_settings_path,
    pinned_document,
)
from pytest_agentgate.harness.protocols import CURSOR_LOOP_LIMIT, HARNESSES, Harness
from pytest_agentgate.harness.start import START_TIMEOUT_S

# The harness's hook timeout is agentgate's budget plus this margin, so agentgate always
# answers first (Copilot's default, 30 s, would silently let the agent stop).
TIMEOUT_MARGIN_S = 20


class InstallError(AgentgateError):
    """A settings file agentgate will not touch: not JSON, or not the shape it should have."""


@dataclass
class Installed:
    """What install-hook did, for the user."""

    path: Path
    changed: bool
    backup: Path | None = None
    lines: list[str] = field(default_factory=list)


def settings_path(harness: Harness, root: Path, *, user: bool, home: Path | None = None) -> Path:
    home = home if home is not None else Path.home()
    if harness.name == "codex" and user:
        return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "hooks.json"
    project, user_path = {
        "claude": (".claude/settings.json", ".claude/settings.json"),
        "codex": (".codex/hooks.json", ".codex/hooks.json"),
        "gemini": (".gemini/settings.json", ".gemini/settings.json"),
        "copilot": (".github/hooks/agentgate.json", ".copilot/hooks/agentgate.json"),
        "cursor": (".cursor/hooks.json", ".cursor/hooks.json"),
    }[harness.name]
    return (home / user_path) if user else (root / project)


def hook_command(harness: Harness) -> str:
    """``'/abs/path/agentgate' hook NAME``: the agentgate that is running now."""
    return shlex.join([*agentgate_argv(), "hook", harness.name])


def start_command(command: str) -> str:
    """The session-start hook's command, from the stop hook's: ``... hook NAME
    --session-start``."""
    return f"{command} --session-start"


def agentgate_argv() -> list[str]:
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "agentgate" and script.is_file():
        return [str(script.absolute())]
    beside = Path(sys.executable).with_name("agentgate")
    if beside.is_file():
        return [str(beside)]
    return [sys.executable, "-m", "pytest_agentgate"]


def is_ours(harness: Harness, command: Any) -> bool:
    """An entry agentgate wrote for this harness (any install of agentgate, any path)."""
    if not isinstance(command, str):
        return False
    return (
        re.search(rf"(agentgate|pytest_agentgate)\S*\s+hook\s+{harness.name}\b", command)
        is not None
    )


def handler(harness: Harness, command: str, timeout_s: int) -> dict[str, Any]:
    """One hook handler in the harness's own shape."""
    if harness.name == "gemini":  # milliseconds
        return {
            "type": "command",
            "name": "agentgate",
            "command": command,
            "timeout": timeout_s * 1000,
        }
    if harness.name == "copilot":
        return {"type": "command", "bash": command, "timeoutSec": timeout_s}
    if harness.name == "cursor":
        return {"command": command, "timeout": timeout_s, "loop_limit": CURSOR_LOOP_LIMIT}
    return {"type": "command", "command": command, "timeout": timeout_s}


def command_of(harness: Harness, entry: Any) -> Any:
    if not isinstance(entry, dict):
        return None
    return entry.get("bash" if harness.name == "copilot" else "command")


# The project settings files each harness reads its stop hooks from (patterns, project-relative).
PROJECT_SETTINGS = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "copilot": ".github/hooks/*.json",
    "cursor": ".cursor/hooks.json",
}


def timeout_of(harness: Harness, entry: Mapping[str, Any]) -> float | None:
    """A handler's timeout in seconds, as the harness reads it."""
    key = {"copilot": "timeoutSec"}.get(harness.name, "timeout")
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value / 1000 if harness.name == "gemini" else float(value)


def our_entries(
    harness: Harness, text: str | None, event: str | None = None
) -> list[dict[str, Any]]:
    """agentgate's handlers of ``event`` (the stop event when None) in a settings file's text
    (none when it is not JSON)."""
    return [
        item
        for item in handlers_of(harness, text, event)
        if is_ours(harness, command_of(harness, item))
    ]


def handlers_of(
    harness: Harness, text: str | None, event: str | None = None
) -> list[dict[str, Any]]:
    """Every handler of ``event`` (the stop event when None) in a settings file's text,
    agentgate's and others' (none when it is not JSON)."""
    try:
        document = json.loads(text or "")
    except ValueError:
        return []
    hooks = document.get("hooks") if isinstance(document, dict) else None
    entries = hooks.get(event or harness.event) if isinstance(hooks, dict) else None
    found: list[dict[str, Any]] = []
    for entry in entries if isinstance(entries, list) else []:
        inner = entry.get("hooks") if isinstance(entry, dict) else None
        for item in inner if isinstance(inner, list) else [entry]:
            if isinstance(item, dict):
                found.append(item)
    return found


def merge(
    harness: Harness,
    document: dict[str, Any],
    new: dict[str, Any] | None,
    shown: str,
    event: str | None = None,
) -> dict[str, Any]:
    """``document`` with agentgate's handler of ``event`` (the stop event when None) set to
    ``new`` (None: removed), all else kept."""
    event = event or harness.event
    hooks = document.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(
            f"{shown}: `hooks` is not a mapping; fix it by hand, nothing was changed"
        )
    entries = hooks.setdefault(event, [])
    if not isinstance(entries, list):
        raise InstallError(
            f"{shown}: `hooks.{event}` is not a list; fix it by hand, nothing was changed"
        )
    grouped = harness.name in ("claude", "codex", "gemini")  # [{"hooks": [handler, ...]}, ...]
    placed = False
    kept: list[Any] = []
    for entry in entries:
        if grouped and isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
            inner = []
            for item in entry["hooks"]:
                if is_ours(harness, command_of(harness, item)):
                    if new is not None and not placed:
                        inner.append(new)
                        placed = True
                    continue
                inner.append(item)
            if inner or not entry["hooks"]:
                kept.append({**entry, "hooks": inner})
            continue
        if not grouped and is_ours(harness, command_of(harness, entry)):
            if new is not None and not placed:
                kept.append(new)
                placed = True
            continue
        kept.append(entry)
    if new is not None and not placed:
        kept.append({"hooks": [new]} if grouped else new)
    if kept:
        hooks[event] = kept
    else:
        del hooks[event]
    if not hooks:
        del document["hooks"]
    if harness.name in ("copilot", "cursor") and document and "version" not in document:
        document = {"version": 1, **document}
    return document


def install(
    harness: Harness,
    path: Path,
    *,
    command: str,
    timeout_s: int,
    uninstall: bool = False,
) -> Installed:
    """Merge agentgate's stop hook (``command``) and session-start hook into ``path`` (or take
    both out); write only on a change."""
    before, document = _read(path)
    if before is None and uninstall:
        return Installed(path, changed=False)
    shown = str(path)
    new = None if uninstall else handler(harness, command, timeout_s)
    merged = merge(harness, json.loads(json.dumps(document)), new, shown)
    if harness.start_event is not None:
        start = None if uninstall else handler(harness, start_command(command), START_TIMEOUT_S)
        merged = merge(harness, merged, start, shown, harness.start_event)
    if before is not None and before.strip() and merged == document:
        return Installed(path, changed=False)
    return Installed(path, changed=True, backup=_write(path, before, merged))


def managed_stop_handler() -> dict[str, Any]:
    """The managed settings' Stop hook: ``'/abs/agentgate' hook claude --managed``, with
    Claude Code's timeout above agentgate's default budget (which the managed hook keeps to,
    whatever a project's configuration says: harness/door.py)."""
    claude = HARNESSES["claude"]
    command = f"{hook_command(claude)} {MANAGED_FLAG}"
    return handler(claude, command, int(DEFAULT_HOOK_BUDGET_S) + TIMEOUT_MARGIN_S)


def pin_managed(path: Path, *, uninstall: bool = False) -> Installed:
    """Merge ``CLAUDE_PINNED_ENV`` and agentgate's managed Stop hook into Claude Code's
    managed settings at ``path`` (or take agentgate's values and hook out); write only on a
    change. ``lines`` says what changed."""
    before, document = _read(path, hint=_AS_ROOT)
    if before is None and uninstall:
        return Installed(path, changed=False)
    claude = HARNESSES["claude"]
    merged = merge(
        claude,
        json.loads(json.dumps(document)),
        None if uninstall else managed_stop_handler(),
        str(path),
    )
    lines = []
    if merged.get("hooks") != document.get("hooks"):
        stop = f"Stop hook {managed_stop_handler()['command']}"
        lines.append(f"{stop} removed" if uninstall else stop)
    env = merged.setdefault("env", {})
    if not isinstance(env, dict):
        raise InstallError(f"{path}: `env` is not a mapping; fix it by hand, nothing was changed")
    for key, value in CLAUDE_PINNED_ENV.items():
        if uninstall:
            if key in env and env[key] == value:
                del env[key]
                lines.append(f"{key} unpinned")
            continue
        if key not in env:
            lines.append(f"{key}={json.dumps(value)}")
        elif env[key] != value:
            lines.append(f"{key}={json.dumps(value)} (was {json.dumps(env[key])})")
        env[key] = value
    if not env:
        del merged["env"]
    if not lines:
        return Installed(path, changed=False)
    backup = _write(path, before, merged, mode=0o644, hint=_AS_ROOT)
    return Installed(path, changed=True, backup=backup, lines=lines)


def is_pinned(path: Path) -> bool:
    """Whether ``path`` pins every variable to agentgate's value and runs agentgate's managed
    Stop hook (False when it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8")
        document = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    env = document.get("env") if isinstance(document, dict) else None
    if not isinstance(env, dict):
        return False
    if any(env.get(key) != value for key, value in CLAUDE_PINNED_ENV.items()):
        return False
    stop = our_entries(HARNESSES["claude"], text)
    return any(str(command_of(HARNESSES["claude"], e)).endswith(MANAGED_FLAG) for e in stop)


_AS_ROOT = "it is the machine's, for its administrator: run the command with sudo"


def managed_step(managed: Path) -> str:
    """The step that pins Claude Code's environment and agentgate's Stop hook in its managed
    settings."""
    names = ", ".join(CLAUDE_PINNED_ENV)
    return (
        f"An agent can switch the Stop hook off in the session itself: Claude Code reads "
        f".claude/settings.json (and settings.local.json) again as soon as it changes, so the "
        f'file deleted, agentgate\'s entry taken out, `"disableAllHooks": true`, or {names} '
        f"in its `env` (CLAUDE_CODE_SHELL_PREFIX=true: the hook prints nothing) let the agent "
        f"stop unverified. Claude Code's managed settings win over the project's: pin the "
        f"environment and run agentgate's Stop hook from there, for every session on this "
        f"machine (it gates only projects that run agentgate's hook themselves), with\n"
        f"    sudo {shlex.join([*agentgate_argv(), 'install-hook', 'claude', '--managed'])}\n"
        f"which merges into {managed}:\n"
        f"    {json.dumps(pinned_document(managed_stop_handler()))}"
    )


def _read(path: Path, *, hint: str = "") -> tuple[str | None, dict[str, Any]]:
    """A settings file's text (None when there is none) and its JSON object ({} when empty)."""
    shown = str(path)
    if not path.exists():
        return None, {}
    try:
        before = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        extra = f"; {hint}" if hint and isinstance(exc, PermissionError) else ""
        raise InstallError(f"{shown}: cannot be read ({exc}){extra}; nothing was changed") from None
    if not before.strip():
        return before, {}
    try:
        loaded = json.loads(before)
    except ValueError as exc:
        raise InstallError(
            f"{shown}: is not valid JSON ({exc}); fix it or move it away, nothing was changed"
        ) from None
    if not isinstance(loaded, dict):
        raise InstallError(f"{shown}: is not a JSON object; nothing was changed")
    return before, loaded


def _write(
    path: Path, before: str | None, document: dict[str, Any], *, mode: int = 0, hint: str = ""
) -> Path | None:
    """Write ``document`` to ``path``, the previous file kept first: the backup's path. A new
    file gets ``mode`` when one is given (a file every user's harness reads)."""
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    backup = None
    try:
        if mode and not path.parent.exists():
            path.parent.mkdir(parents=True)
            path.parent.chmod(0o755)
        path.parent.mkdir(parents=True, exist_ok=True)
        if before is not None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            backup = path.with_name(f"{path.name}.agentgate-{stamp}.bak")
            shutil.copy2(path, backup)
        tmp = path.with_name(f".{path.name}.agentgate.tmp")
        tmp.write_text(text, encoding="utf-8")
        if before is not None:
            shutil.copymode(path, tmp)
        elif mode:
            tmp.chmod(mode)
        os.replace(tmp, path)
    except OSError as exc:
        extra = f"; {hint}" if hint and isinstance(exc, PermissionError) else ""
        raise InstallError(f"{path}: cannot be written ({exc.strerror or exc}){extra}") from None
    return backup


def trust_steps(harness: Harness, root: Path, *, user: bool) -> list[str]:
    """What the user must still do in the harness before it runs the hook."""
    if harness.name == "claude":
        steps = [
            "Claude Code reads it when a session starts; in a session already open, review the "
            "new hook with /hooks."
        ]
        managed = managed_settings_path()
        if not is_pinned(managed):
            steps.append(managed_step(managed))
        return steps
    if harness.name == "codex":
        steps = [
            "Codex runs a hook only once you have trusted it: start `codex` in the project and "
            "approve agentgate's Stop and SessionStart hooks when asked (until then Codex "
            "silently runs neither)."
        ]
        if not user:
            steps.append(
                "Codex ignores .codex/hooks.json in a project it does not trust: trust the project "
                "when Codex asks, or add to $CODEX_HOME/config.toml (default ~/.codex):\n"
                f'    [projects."{root}"]\n    trust_level = "trusted"'
            )
        steps.append(
            "`codex exec` shows no hook message: an escalation's report is in "
            ".agentgate/escalations/ and `agentgate stats` lists it."
        )
        return steps
    if harness.name == "gemini":
        return [
            "Gemini CLI runs no hook in an untrusted folder: trust this folder when Gemini asks "
            "(or with /permissions)."
        ]
    if harness.name == "copilot":
        return [
            "Copilot CLI loads a repository's hooks only in a trusted folder: answer yes when it "
            "asks to trust this folder, or pass --trust-folder (--allow-all alone is not enough)."
        ]
    return ["Cursor reads .cursor/hooks.json when it starts: restart Cursor."]
