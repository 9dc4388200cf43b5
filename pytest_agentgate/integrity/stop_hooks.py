"""The agent's own leash: agentgate's stop hook in a harness's project settings.

``stop-hook-removed``: at the base, a harness's project settings (``.claude/settings.json``,
``.codex/hooks.json``, ``.gemini/settings.json``, ``.github/hooks/*.json``,
``.cursor/hooks.json``) run ``agentgate hook``, and the change takes that entry out, or gives it
a timeout shorter than it had (a harness that times the hook out lets the agent stop). Codex,
Gemini CLI and Copilot CLI keep the hooks their session started with, so an agent that edits the
file cannot stop the hook of the session it runs in; Claude Code reads its settings again
mid-session, and only its managed settings hold its hook there (harness/managed.py). Either way
the edit would stop every session after it; the finding keeps it out of the pull request. The
same holds for the session-start hook (``agentgate hook NAME --session-start``, which pins each
session's base before its agent can move it). An entry still naming agentgate but no longer the
command ``install-hook`` writes (red team 38: ``... hook claude --session-start`` as the stop
hook, ``... hook codex > /dev/null``, ``true # ... hook gemini``), an entry that runs another
program than the base's (red team 43: ``tools/agentgate hook claude``), Cursor's ``loop_limit``
lowered, and Claude Code's ``"disableAllHooks": true`` added (in its project settings, or in its
local ones, which git ignores as a rule) are findings too, as are a handler added to the stop
event beside agentgate's, whose answer can end the turn whatever agentgate answers, and Claude
Code's settings ``env`` changed where it decides how the hook runs or how many blocks Claude
Code takes (red team 50).
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import shlex
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any

from pytest_agentgate.harness.install import (
    PROJECT_SETTINGS,
    command_of,
    handlers_of,
    is_ours,
    our_entries,
    settings_path,
    timeout_of,
)
from pytest_agentgate.harness.protocols import CURSOR_DEFAULT_LOOP_LIMIT, HARNESSES, Harness
from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.state.task_env import installed_unlike_record, project_venvs
from pytest_agentgate.texts import toml_document

RULE = "stop-hook-removed"


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    for path in sorted(scan.touched):
        for name, pattern in PROJECT_SETTINGS.items():
            if not fnmatch.fnmatch(path, pattern):
                continue
            harness = HARNESSES[name]
            if name == "claude" and _all_disabled(scan, path):
                yield _disabled(path)
            if our_entries(harness, scan.sources.at_base(path)) or our_entries(
                harness, scan.sources.at_base(path), harness.start_event
            ):
                yield from _switches(scan, path, harness)
            yield from _entry(scan, path, harness, harness.event, "stop hook")
            if harness.start_event is not None:
                yield from _entry(scan, path, harness, harness.start_event, "session-start hook")
            yield from _beside(scan, path, harness)
            if name == "claude" and our_entries(harness, scan.sources.at_base(path)):
                yield from _claude_env(scan, path, path)
    # Claude Code's local settings are the user's, and git ignores them as a rule: read
    # whether the change touches them or not, while the project's settings arm agentgate.
    local = CLAUDE_LOCAL_SETTINGS
    if _all_disabled(scan, local) and our_entries(
        HARNESSES["claude"], scan.sources.at_base(PROJECT_SETTINGS["claude"])
    ):
        yield _disabled(local)
    if our_entries(HARNESSES["claude"], scan.sources.at_base(PROJECT_SETTINGS["claude"])):
        yield from _claude_env(scan, local, PROJECT_SETTINGS["claude"])
    yield from _programs_edited(scan)
    codex = PROJECT_SETTINGS["codex"]
    if CODEX_CONFIG in scan.touched and our_entries(
        HARNESSES["codex"], scan.sources.at_base(codex)
    ):
        was = _hook_features(scan.sources.at_base(CODEX_CONFIG))
        now = _hook_features(scan.sources.now(CODEX_CONFIG))
        if _offs(now) - _offs(was):
            yield IntegrityFinding(
                RULE,
                f"{CODEX_CONFIG} changes Codex's hook settings ({_shown_change(was, now)}): "
                "they decide whether agentgate's Codex hooks run",
                CODEX_CONFIG,
            )


# Codex's project configuration: its `[features]` (and a `[hooks]` table of its own) decide
# whether the hooks in .codex/hooks.json run (red team 45: `[features] hooks = false`).
CODEX_CONFIG = ".codex/config.toml"


def _hook_features(text: str | None) -> dict[str, Any]:
    """The settings of a Codex configuration that name hooks: each ``[features]`` key with
    "hook" in its name, and any key of a ``hooks`` table that is no list of handlers."""
    document = toml_document(text or "") or {}
    found: dict[str, Any] = {}
    features = document.get("features")
    if isinstance(features, dict):
        found.update({f"features.{k}": v for k, v in features.items() if "hook" in k.lower()})
    hooks = document.get("hooks")
    if isinstance(hooks, dict):
        found.update({f"hooks.{k}": v for k, v in hooks.items() if not isinstance(v, list)})
    elif hooks is not None:
        found["hooks"] = hooks
    return found


def _switches(scan: Scan, path: str, harness: Harness) -> Iterator[IntegrityFinding]:
    """A settings file's own switches for its hooks, changed: Gemini CLI's ``hooksConfig``
    (``enabled``, ``disabled`` names), keys of ``hooks`` that are no event's list of handlers,
    and keys Codex does not know at the top of ``.codex/hooks.json`` (it refuses such a file,
    and runs none of its hooks) (red team 45)."""
    was = _hook_switches(harness, scan.sources.at_base(path))
    now = _hook_switches(harness, scan.sources.now(path))
    unknown = {k for k in now if k.startswith(_UNKNOWN)} - set(was)
    if _offs(now) - _offs(was) or unknown:
        yield IntegrityFinding(
            RULE,
            f"{path} changes how {harness.title} runs its hooks ({_shown_change(was, now)}): "
            "it may no longer run agentgate's",
            path,
        )


def _hook_switches(harness: Harness, text: str | None) -> dict[str, Any]:
    try:
        document = json.loads(text or "")
    except ValueError:
        return {}
    if not isinstance(document, dict):
        return {}
    found: dict[str, Any] = {}
    hooks = document.get("hooks")
    if isinstance(hooks, dict):
        found.update({f"hooks.{k}": v for k, v in hooks.items() if not isinstance(v, list)})
    if harness.name == "gemini" and "hooksConfig" in document:
        found["hooksConfig"] = document["hooksConfig"]
    if harness.name == "codex":
        found.update({_UNKNOWN + k: v for k, v in document.items() if k != "hooks"})
    return found


# A key at the top of .codex/hooks.json other than `hooks`: Codex refuses the file.
_UNKNOWN = "\0"
# How a setting says "off".
_OFF = frozenset({"false", "off", "0", "no", "none", "disabled"})


def _offs(settings: dict[str, Any], prefix: str = "") -> set[str]:
    """The settings that turn hooks off, or agentgate's among them: a false value (``enabled:
    false``, ``hooks = false``), a list naming agentgate (Gemini's ``disabled``); read into
    tables. Another value of a hook setting (``enabled: true``, ``notifications: false`` is
    not one of a hook switch's names) is no finding (review 28)."""
    found: set[str] = set()
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            found |= _offs(value, f"{name}.")
        elif isinstance(value, list):
            if any(isinstance(v, str) and "agentgate" in v for v in value):
                found.add(f"{name}[agentgate]")
        elif _switch(key) and (value is False or value == 0 or str(value).lower() in _OFF):
            found.add(name)
    return found


def _switch(key: str) -> bool:
    """Whether a setting's name makes it a switch for hooks (``enabled``, ``hooks``,
    ``codex_hooks``, ``enableHooks``), not another setting in the same table."""
    last = key.rpartition(".")[2].lower()
    return last in ("enabled", "enable", "hooks") or "hook" in last


def _shown_change(was: dict[str, Any], now: dict[str, Any]) -> str:
    keys = sorted(k for k in {*was, *now} if was.get(k, _NONE) != now.get(k, _NONE))
    return ", ".join(
        f"{k.lstrip(_UNKNOWN)}: {json.dumps(was[k], default=str) if k in was else 'none'} -> "
        f"{json.dumps(now[k], default=str) if k in now else 'none'}"
        for k in keys[:3]
    )


_NONE = object()


def _programs_edited(scan: Scan) -> Iterator[IntegrityFinding]:
    """agentgate installed in a virtual environment inside the project (one the project's
    hook settings run, or any other there) whose files are not as its ``RECORD`` has them
    (red team 43: ``.venv/bin/agentgate`` rewritten to answer ``{}`` to every stop, and to run
    agentgate for anything else). The hook of the session that did it answers nothing of
    agentgate's; this is what a later verdict finds."""
    venvs: dict[Path, str] = {Path(v): "" for v in project_venvs(scan.root)}
    for name, pattern in PROJECT_SETTINGS.items():
        harness = HARNESSES[name]
        paths = [pattern] if "*" not in pattern else _matching(scan.root, pattern)
        events = [harness.event, *([harness.start_event] if harness.start_event else [])]
        for path in paths:
            for event in events:
                for entry in our_entries(harness, scan.sources.now(path), event):
                    venv = _project_venv(scan.root, command_of(harness, entry))
                    if venv is not None and not venvs.get(venv):
                        venvs[venv] = f" that {path} runs as the {harness.title} hook"
    for venv, runs in venvs.items():
        edited = installed_unlike_record(venv, "pytest_agentgate")
        if edited is not None:
            shown = _relative(edited, scan.root)
            yield IntegrityFinding(
                RULE,
                f"{shown}, of the agentgate{runs or ' installed in the project'}, is not as it "
                "was installed (its RECORD's hash): a hook that answers the stop without "
                "agentgate lets the agent go; install agentgate again, outside the project",
                shown,
            )


def _matching(root: Path, pattern: str) -> list[str]:
    folder, _, glob = pattern.rpartition("/")
    try:
        names = sorted(p.name for p in (root / folder).iterdir())
    except OSError:
        return []
    return [f"{folder}/{n}" for n in names if fnmatch.fnmatch(n, glob)]


def _project_venv(root: Path, command: Any) -> Path | None:
    """The virtual environment inside the project whose program ``command`` runs."""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return None
    if not words:
        return None
    program = Path(words[0])
    venv = (program if program.is_absolute() else root / program).parent.parent
    try:
        venv.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return None  # outside the project: where the agent is not meant to write
    return Path(os.path.realpath(venv)) if (venv / "pyvenv.cfg").is_file() else None


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


# Claude Code's settings for this user and project only (red team 43: `disableAllHooks` there
# turns the project's hooks off as well).
CLAUDE_LOCAL_SETTINGS = ".claude/settings.local.json"


def _disabled(path: str) -> IntegrityFinding:
    return IntegrityFinding(
        RULE,
        f'"disableAllHooks": true in {path} turns agentgate\'s Claude Code hooks off',
        path,
    )


def _entry(
    scan: Scan, path: str, harness: Harness, event: str, what: str
) -> Iterator[IntegrityFinding]:
    before = our_entries(harness, scan.sources.at_base(path), event)
    if not before:
        return
    after = our_entries(harness, scan.sources.now(path), event)
    if not after:
        yield IntegrityFinding(
            RULE, f"agentgate's {harness.title} {what} was taken out of {path}", path
        )
        return
    start = event != harness.event
    if any(_armed(harness, e, start) for e in before) and not any(
        _armed(harness, e, start) for e in after
    ):
        shown = command_of(harness, after[0])
        wanted = f"agentgate hook {harness.name}" + (" --session-start" if start else "")
        yield IntegrityFinding(
            RULE,
            f"agentgate's {harness.title} {what} in {path} no longer runs `{wanted}` as "
            f"install-hook writes it (`{shown}`): anything else may let the agent go",
            path,
        )
        return
    # The program that answers is the base's to choose (red team 43: `tools/agentgate hook
    # claude`, a script of the change's named like agentgate, answering `{}` to every stop).
    commands = {command_of(harness, e) for e in after}
    moved = [
        command_of(harness, e)
        for e in before
        if _armed(harness, e, start) and command_of(harness, e) not in commands
    ]
    if moved:
        yield IntegrityFinding(
            RULE,
            f"agentgate's {harness.title} {what} in {path} runs another program than the "
            f"base's (a change on the base branch moves it): `{command_of(harness, after[0])}` "
            f"where the base runs `{moved[0]}`",
            path,
        )
        return
    # The handler's other settings, as the base has them (red team 48: `"async": true` on
    # Claude Code's, whose decision then counts for nothing; `args`, `shell`).
    shapes = {_shape(e) for e in after}
    other = [e for e in before if _armed(harness, e, start) and _shape(e) not in shapes]
    if other:
        was = json.loads(_shape(other[0]))
        now = json.loads(_shape(after[0]))
        yield IntegrityFinding(
            RULE,
            f"agentgate's {harness.title} {what} in {path} no longer has the settings it has "
            f"at the base ({_shown_change(was, now)}): the harness may run it so that it "
            "cannot hold the agent",
            path,
        )
        return
    if harness.name == "cursor" and start is False:
        was_limit = max(_loop_limit(e) for e in before)
        limit = max(_loop_limit(e) for e in after)
        if limit < was_limit:
            yield IntegrityFinding(
                RULE,
                f"agentgate's Cursor stop hook's loop_limit was cut from {was_limit:g} to "
                f"{limit:g} in {path}: Cursor lets the agent stop after that many blocks, "
                "before agentgate's attempts run out",
                path,
            )
    was = max((timeout_of(harness, e) or 0 for e in before), default=0)
    now = max((timeout_of(harness, e) or 0 for e in after), default=0)
    if now < was:
        consequence = (
            "the harness lets the agent stop when it runs out"
            if what == "stop hook"
            else "the session's base is not pinned when it runs out"
        )
        yield IntegrityFinding(
            RULE,
            f"agentgate's {harness.title} {what} timeout was cut from {was:g} s to "
            f"{now:g} s in {path}: {consequence}",
            path,
        )


def _beside(scan: Scan, path: str, harness: Harness) -> Iterator[IntegrityFinding]:
    """A handler the change adds to the stop event beside agentgate's (red team 50): a stop
    hook's answer can end the turn whatever agentgate answers (Claude Code's
    ``{"continue": false}`` wins over any block)."""
    armed = settings_path(harness, Path(), user=False).as_posix()
    if not (
        our_entries(harness, scan.sources.at_base(path))
        or our_entries(harness, scan.sources.at_base(armed))  # Copilot reads every file
    ):
        return
    was = {_shape(e) for e in handlers_of(harness, scan.sources.at_base(path))}
    for entry in handlers_of(harness, scan.sources.now(path)):
        if _shape(entry) not in was and not is_ours(harness, command_of(harness, entry)):
            yield IntegrityFinding(
                RULE,
                f"{path} adds a {harness.title} {harness.event} handler beside agentgate's "
                f"(`{command_of(harness, entry)}`): its answer can let the agent stop whatever "
                "agentgate answers",
                path,
            )
            return


# Variables of Claude Code's settings `env` (applied to its hooks, and re-read mid-session)
# that decide whether and how it runs agentgate's hook, read in Claude Code 2.1.197's binary:
# its cap on blocks in a row (8 unset: `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=1` lets the agent stop
# at the second block, red team 50), the prefix and shell it runs hook commands with
# (`CLAUDE_CODE_SHELL_PREFIX=true` runs `true '<the hook>'`, red team 51), where it reads its
# settings (managed ones included) and what environment its commands inherit; agentgate's
# own, and how a shell or Node.js finds and starts a program. Claude Code's other variables
# (`BASH_DEFAULT_TIMEOUT_MS`, `CLAUDE_CODE_USE_BEDROCK`, `NODE_EXTRA_CA_CERTS`) are the
# project's (review 31).
_HOOK_ENV = frozenset(
    {"PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "NODE_OPTIONS", "NODE_PATH", "CLAUDE_ENV_FILE"}
)
_HOOK_ENV_PREFIXES = ("AGENTGATE_", "PYTHON", "LD_", "DYLD_", "BASH_FUNC_")
_CLAUDES_OWN = (
    "HOOK", "SHELL", "SETTINGS", "CONFIG_DIR", "MANAGED", "INHERIT_ENV", "ENV_SCRUB",
    "SIMPLE", "SAFE_MODE",  # `--bare` and `--safe-mode`: no hook runs (red team 52)
)  # fmt: skip
# Claude Code's own variables a team sets in its project settings that do not touch how hooks
# run (all read in Claude Code 2.1.197): in the project's settings every other `CLAUDE_*` is
# judged, since a new one may switch hooks off as `CLAUDE_CODE_SIMPLE` does (red team 52).
_CLAUDE_HARMLESS = frozenset(
    {
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY", "CLAUDE_CODE_SKIP_BEDROCK_AUTH", "CLAUDE_CODE_SKIP_VERTEX_AUTH",
        "CLAUDE_CODE_ENABLE_TELEMETRY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "CLAUDE_CODE_API_KEY_HELPER_TTL_MS", "CLAUDE_CODE_SUBAGENT_MODEL",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE", "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL",
        "CLAUDE_CODE_AUTO_CONNECT_IDE", "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY",
        "CLAUDE_CODE_EFFORT_LEVEL", "CLAUDE_CODE_MAX_RETRIES", "CLAUDE_CODE_CLIENT_CERT",
        "CLAUDE_CODE_CLIENT_KEY", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY",
        "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR",
    }
)  # fmt: skip


def _governs_hooks(key: str, every_claude: bool) -> bool:
    """Whether a settings `env` variable decides how Claude Code runs hooks: with
    ``every_claude`` (the project's settings) each of Claude Code's own but the harmless
    ones; else (the user's own file) those known to."""
    if key.startswith("CLAUDE_"):
        if every_claude:
            return key not in _CLAUDE_HARMLESS
        return "HOOK" in key or any(word in key for word in _CLAUDES_OWN)
    return key in _HOOK_ENV or key.startswith(_HOOK_ENV_PREFIXES) or "HOOK" in key


def _claude_env(scan: Scan, path: str, armed: str) -> Iterator[IntegrityFinding]:
    """Claude Code's settings ``env`` (applied to the hooks it runs) changed where it decides
    how agentgate's hook runs (red team 50)."""

    def env(text: str | None) -> dict[str, Any]:
        try:
            document = json.loads(text or "")
        except ValueError:
            return {}
        found = document.get("env") if isinstance(document, dict) else None
        return found if isinstance(found, dict) else {}

    was, now = env(scan.sources.at_base(path)), env(scan.sources.now(path))
    changed = sorted(
        key
        for key in set(was) | set(now)
        if was.get(key, _NONE) != now.get(key, _NONE) and _governs_hooks(key, path == armed)
    )
    if not changed:
        return
    shown = ", ".join(f"{key}={now.get(key, '(removed)')}" for key in changed)
    what = (
        "decides whether and how Claude Code runs agentgate's stop hook (the shell and prefix "
        "it runs hook commands with, how many blocks it takes, where it reads its settings)"
    )
    if path == armed:
        text = (
            f"{path} changes the environment Claude Code gives its hooks ({shown}), which "
            f"{what}: put it back as the base has it; a person changes it on the base branch"
        )
    else:  # the user's own file, which git ignores: no base to put it back to
        text = (
            f"{path}, this machine's own Claude Code settings, sets the environment Claude Code "
            f"gives the hooks of {armed} ({shown}), which {what}: take it out of that file"
        )
    yield IntegrityFinding(RULE, text, path)


def _armed(harness: Harness, entry: dict[str, Any], start: bool) -> bool:
    """Whether a handler runs agentgate's hook as ``install-hook`` writes it: the agentgate
    program (or ``python -m pytest_agentgate``), ``hook NAME``, ``--session-start`` for the
    session-start hook, and nothing else."""
    command = command_of(harness, entry)
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    tail = ["hook", harness.name, *(["--session-start"] if start else [])]
    if len(words) == len(tail) + 1 and PurePath(words[0]).name in ("agentgate", "agentgate.exe"):
        return words[1:] == tail
    return words[1:3] == ["-m", "pytest_agentgate"] and words[3:] == tail


# A handler's settings that only say how long the harness waits, or how often it blocks:
# judged on their own (a shorter timeout, a lower loop_limit).
_MEASURES = frozenset({"timeout", "timeoutSec", "loop_limit"})


def _shape(entry: dict[str, Any]) -> str:
    """A handler's settings but its timeout and loop limit, as one comparable text."""
    return json.dumps(
        {k: v for k, v in entry.items() if k not in _MEASURES}, sort_keys=True, default=str
    )


def _loop_limit(entry: dict[str, Any]) -> float:
    """How many blocks in a row Cursor takes from the hook: its ``loop_limit`` (5 when not
    written, none when null); a value Cursor cannot read counts as none taken."""
    value = entry.get("loop_limit", CURSOR_DEFAULT_LOOP_LIMIT)
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return float(value)


def _all_disabled(scan: Scan, path: str) -> bool:
    """Whether the change turns on Claude Code's ``disableAllHooks`` in ``path``."""

    def disabled(text: str | None) -> bool:
        try:
            document = json.loads(text or "")
        except ValueError:
            return False
        return isinstance(document, dict) and document.get("disableAllHooks") is True

    return disabled(scan.sources.now(path)) and not disabled(scan.sources.at_base(path))
