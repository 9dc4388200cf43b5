"""The agent's own leash: agentgate's stop hook in a harness's project settings.

``stop-hook-removed``: at the base, a harness's project settings (``.claude/settings.json``,
``.codex/hooks.json``, ``.gemini/settings.json``, ``.github/hooks/*.json``,
``.cursor/hooks.json``) run ``agentgate hook``, and the change takes that entry out, or gives
it a timeout shorter than it had (a harness that times the hook out lets the agent stop). An
agent that edits the file cannot stop the hook of the session it runs in, but it would stop
every session after it; the finding keeps that edit out of the pull request. The same holds
for the session-start hook (``agentgate hook NAME --session-start``, which pins each session's
base before its agent can move it). An entry still naming agentgate but no longer the command
``install-hook`` writes (red team 38: ``... hook claude --session-start`` as the stop hook,
``... hook codex > /dev/null``, ``true # ... hook gemini``), and Claude Code's
``"disableAllHooks": true`` added, are findings too.
"""

from __future__ import annotations

import fnmatch
import json
import shlex
from collections.abc import Iterator
from pathlib import PurePath
from typing import Any

from pytest_agentgate.harness.install import (
    PROJECT_SETTINGS,
    command_of,
    our_entries,
    timeout_of,
)
from pytest_agentgate.harness.protocols import HARNESSES, Harness
from pytest_agentgate.integrity.model import IntegrityFinding, Scan

RULE = "stop-hook-removed"


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    for path in sorted(scan.touched):
        for name, pattern in PROJECT_SETTINGS.items():
            if not fnmatch.fnmatch(path, pattern):
                continue
            harness = HARNESSES[name]
            if name == "claude" and _all_disabled(scan, path):
                yield IntegrityFinding(
                    RULE,
                    f'"disableAllHooks": true in {path} turns agentgate\'s Claude Code hooks off',
                    path,
                )
            yield from _entry(scan, path, harness, harness.event, "stop hook")
            if harness.start_event is not None:
                yield from _entry(scan, path, harness, harness.start_event, "session-start hook")


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


def _all_disabled(scan: Scan, path: str) -> bool:
    """Whether the change turns on Claude Code's ``disableAllHooks`` in ``path``."""

    def disabled(text: str | None) -> bool:
        try:
            document = json.loads(text or "")
        except ValueError:
            return False
        return isinstance(document, dict) and document.get("disableAllHooks") is True

    return disabled(scan.sources.now(path)) and not disabled(scan.sources.at_base(path))
