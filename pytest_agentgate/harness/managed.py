"""Claude Code's managed settings: the environment a project's settings cannot change.

Claude Code sets its own process's environment from the settings' ``env``, in this order:
user, project (``.claude/settings.json``), local (``.claude/settings.local.json``), flags,
then the managed (policy) settings; the last one to set a variable wins. It does so again when
a settings file changes in the session, and every hook it runs gets that environment. Two of
those variables decide whether agentgate's Stop hook can keep the agent working:

- ``CLAUDE_CODE_SHELL_PREFIX``: when it is not empty, every hook command is run as its argument
  (``true '<agentgate hook claude>'`` for a prefix ``true``), so the hook prints nothing and the
  agent stops, in the same session;
- ``CLAUDE_CODE_STOP_HOOK_BLOCK_CAP``: the blocks in a row after which Claude Code lets the
  agent stop (8 when unset; ``1`` lets it stop at the second block).

Pinned in the managed settings, a project's ``env`` cannot change them (checked with the real
Claude Code 2.1.197 in the harness lab, red team 51): an empty prefix is no prefix, and the cap
is Claude Code's own default, the one agentgate escalates under (``protocols.Harness.block_cap``).

Claude Code reads its hooks again too when a settings file changes: an agent that deletes
``.claude/settings.json``, takes agentgate's entry out of it or writes ``"disableAllHooks":
true`` there frees the session it runs in (seen in the lab with Claude Code 2.1.197, three
seconds after the edit; Codex, Gemini CLI and Copilot CLI keep the hooks their session started
with). A Stop hook in the managed settings is kept through all three. So the managed settings
also hold agentgate's Stop hook, ``agentgate hook claude --managed``, which every session on
the machine runs: it gates a project only where the project runs agentgate's own Stop hook,
or a session already seen in such a project wherever its shell has gone since (harness/door.py),
and answers nothing elsewhere. Where both run, they gate one stop once
(state/stops.py): the block is given twice, the attempt counted once.

The managed settings file is the machine's, for every user and project, and only its
administrator can write it. Where Claude Code 2.1.197 reads it, by platform (its own code):
Linux ``/etc/claude-code/managed-settings.json``, macOS ``/Library/Application
Support/ClaudeCode/managed-settings.json``, Windows ``C:\\Program
Files\\ClaudeCode\\managed-settings.json``. ``AGENTGATE_CLAUDE_MANAGED_SETTINGS`` names another
file (for tests: Claude Code itself reads only its own).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pytest_agentgate.harness.protocols import HARNESSES

# The one list of the variables agentgate pins, with the value each is pinned to.
CLAUDE_PINNED_ENV: dict[str, str] = {
    "CLAUDE_CODE_SHELL_PREFIX": "",
    "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": str(HARNESSES["claude"].block_cap),
    # `--bare`'s variable: set, Claude Code runs no hook at all (red team 52); "" is unset.
    "CLAUDE_CODE_SIMPLE": "",
}

PATH_VARIABLE = "AGENTGATE_CLAUDE_MANAGED_SETTINGS"


def managed_settings_path() -> Path:
    """The managed settings file Claude Code reads on this platform."""
    given = os.environ.get(PATH_VARIABLE)
    if given:
        return Path(given)
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    if sys.platform == "win32":
        return Path("C:/Program Files/ClaudeCode/managed-settings.json")
    return Path("/etc/claude-code/managed-settings.json")


# The flag of the managed settings' Stop hook: ``agentgate hook claude --managed``.
MANAGED_FLAG = "--managed"


def pinned_document(stop_handler: dict[str, Any]) -> dict[str, Any]:
    """What the managed settings must hold: the JSON the user is shown."""
    return {"env": dict(CLAUDE_PINNED_ENV), "hooks": {"Stop": [{"hooks": [stop_handler]}]}}
