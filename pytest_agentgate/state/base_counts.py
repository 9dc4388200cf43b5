"""The integrity gate's test counts at the base, kept so that a task pays for each once.

Counting the tests of a base commit means collecting its suite in a checkout of its own
(:mod:`pytest_agentgate.integrity.base_count`), which takes seconds. A commit never changes, so
the figure is kept in the user's state directory (``base-counts/``, one file per project), under
a key made of the base commit, the collection command, the folder it runs in, the program that
runs it and the gate's environment: the same base collected the same way. Every verdict of a
task against the same base reads it instead of collecting again.

The file is outside the project: the change cannot plant a figure (writing the state directory
by hand can, as it can change the attempt counts). A damaged file, or an entry that does not
read as a count, is no figure: the base is collected again and the file rewritten. Nothing here
raises for what the file holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_agentgate.commands import MAX_LISTED_TESTS
from pytest_agentgate.state import seal
from pytest_agentgate.state.storage import user_state_home, write_atomic

COUNTS_DIR = "base-counts"
# Entries kept per project, the most recent first: a task's base, the bases of recent tasks.
MAX_ENTRIES = 64
# Beyond this, a figure is no count (a file planted to make every change look honest).
MAX_TESTS = 10_000_000
# A file larger than this is damaged: 64 entries of a few hundred bytes each.
MAX_FILE_BYTES = 256 * 1024
# The test functions of one collection, kept in a file of their own beside (``<name>/<key>``):
# at most MAX_LISTED_TESTS names of at most MAX_ID_CHARS each, twice.
MAX_ID_CHARS = 1024
MAX_NAMES_BYTES = 2 * MAX_LISTED_TESTS * (MAX_ID_CHARS + 8)
_SHA = re.compile(r"[0-9a-f]{40,64}")


@dataclass(frozen=True)
class KeptCount:
    """A base's count as it was kept: the tests its collection selected, when it was made."""

    commit: str
    selected: int
    made_at: float
    # The test functions the base's collection collected, and those its selection left with
    # no case to run (count.function_id); None when not known.
    tests: frozenset[str] | None = None
    deselected: frozenset[str] | None = None
    # Whether its lists of test functions were kept beside it (they must then be read).
    listed: bool = False


def key(*parts: str) -> str:
    """The key of one collection: a digest of everything that decides its figure."""
    return hashlib.sha256(json.dumps(list(parts)).encode("utf-8")).hexdigest()


def counts_file(root: Path) -> Path:
    """Where the counts of the project at ``root`` are kept."""
    name = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:32]
    return user_state_home() / COUNTS_DIR / f"{name}.json"


def _entries(path: Path) -> dict[str, Any]:
    """The file's entries by key; empty when it is missing or damaged."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return {}
        doc = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    entries = doc.get("counts") if isinstance(doc, dict) else None
    return entries if isinstance(entries, dict) else {}


def _count(entry: Any) -> KeptCount | None:
    """One entry as a count; None for anything damaged."""
    if not isinstance(entry, dict):
        return None
    commit, selected, made_at = entry.get("commit"), entry.get("selected"), entry.get("made_at")
    if not (isinstance(commit, str) and _SHA.fullmatch(commit)):
        return None
    if isinstance(selected, bool) or not isinstance(selected, int):
        return None
    if not 0 <= selected <= MAX_TESTS:
        return None
    if isinstance(made_at, bool) or not isinstance(made_at, (int, float)):
        return None
    if not 0 <= made_at <= 32503680000.0:  # NaN fails this too
        return None
    return KeptCount(commit, selected, float(made_at), listed=entry.get("listed") is True)


def names(value: Any) -> frozenset[str] | None:
    """A list of test functions as the count plugin writes it; None for anything else."""
    if not isinstance(value, list) or len(value) > MAX_LISTED_TESTS:
        return None
    if not all(isinstance(v, str) and len(v) <= MAX_ID_CHARS for v in value):
        return None
    return frozenset(value)


def _names_file(path: Path, digest: str) -> Path:
    return path.with_suffix("") / f"{digest}.json"


def _load_names(
    path: Path, digest: str, commit: str
) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """The lists kept for ``digest``: sealed (state/seal.py) with their key and commit, so a
    list written or moved by hand is none."""
    try:
        with _names_file(path, digest).open("rb") as handle:
            data = handle.read(MAX_NAMES_BYTES + 1)
        doc = json.loads(data.decode("utf-8")) if len(data) <= MAX_NAMES_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None, None
    if not isinstance(doc, dict) or not seal.intact(doc):
        return None, None
    if doc.get("key") != digest or doc.get("commit") != commit:
        return None, None
    return names(doc.get("tests")), names(doc.get("deselected"))


def load(root: Path, digest: str, commit: str) -> KeptCount | None:
    """The count kept under ``digest`` for ``commit``; None when there is none, or it does not
    read as one. Never raises."""
    path = counts_file(root)
    kept = _count(_entries(path).get(digest))
    if kept is None or kept.commit != commit:
        return None
    tests, deselected = _load_names(path, digest, commit)
    if kept.listed and tests is None and deselected is None:
        return None  # its lists are gone (red team 39: a file put where they are kept)
    return dataclasses.replace(kept, tests=tests, deselected=deselected)


def save(
    root: Path,
    digest: str,
    commit: str,
    selected: int,
    tests: frozenset[str] | None = None,
    deselected: frozenset[str] | None = None,
) -> None:
    """Keep a count under ``digest``, beside the most recent others that still read (a
    damaged entry or file is dropped). A state directory that cannot be written only means the
    base is collected again next time."""
    path = counts_file(root)
    folder = path.with_suffix("")
    listed = tests is not None or deselected is not None
    if listed:
        # The lists first: a count kept without the lists it had would compare by count alone.
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            folder.mkdir(exist_ok=True, mode=0o700)
            lists = {
                "key": digest,
                "commit": commit,
                "tests": None if tests is None else sorted(tests),
                "deselected": None if deselected is None else sorted(deselected),
            }
            text = json.dumps(seal.sealed(lists)) + "\n"
            write_atomic(_names_file(path, digest), text, mode=0o600)
        except OSError:
            return
    entries = {d: c for d, e in _entries(path).items() if (c := _count(e)) is not None}
    entries[digest] = KeptCount(commit, selected, time.time(), listed=listed)
    newest = sorted(entries.items(), key=lambda item: item[1].made_at, reverse=True)
    document = {
        "root": str(root.resolve()),
        "counts": {
            d: {
                "commit": c.commit,
                "selected": c.selected,
                "made_at": round(c.made_at, 3),
                **({"listed": True} if c.listed else {}),
            }
            for d, c in newest[:MAX_ENTRIES]
        },
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(path, json.dumps(document, indent=1) + "\n", mode=0o600)
    with contextlib.suppress(OSError):
        kept = {f"{d}.json" for d, _ in newest[:MAX_ENTRIES]}
        for old in folder.iterdir() if folder.is_dir() else ():
            if old.name not in kept and old.is_file() and not old.is_symlink():
                old.unlink()
