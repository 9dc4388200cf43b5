"""The agent's own leash: agentgate's stop hook in a harness's project settings.

``stop-hook-removed``: at the base, a harness's project settings (``.claude/settings.json``,
``.codex/hooks.json``, ``.gemini/settings.json``, ``.github/hooks/*.json``,
``.cursor/hooks.json``) run ``agentgate hook``, and the change takes that entry out, or gives
it a timeout shorter than it had (a harness that times the hook out lets the agent stop). An
agent that edits the file cannot stop the hook of the session it runs in, but it would stop
every session after it; the finding keeps that edit out of the pull request. The same holds
for the session-start hook (``agentgate hook NAME --session-start``, which pins each session's
base before its agent can move it).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from pytest_agentgate.harness.install import PROJECT_SETTINGS, our_entries, timeout_of
from pytest_agentgate.harness.protocols import HARNESSES, Harness
from pytest_agentgate.integrity.model import IntegrityFinding, Scan

RULE = "stop-hook-removed"


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    for path in sorted(scan.touched):
        for name, pattern in PROJECT_SETTINGS.items():
            if not fnmatch.fnmatch(path, pattern):
                continue
            harness = HARNESSES[name]
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
