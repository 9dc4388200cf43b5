"""The test environment a task began with: the distributions installed where its tests run.

The witness vouches for a pytest plugin or a test tool that an installer put in the tests'
environment (its ``RECORD`` hashes its files, and no local folder is named as where it came
from): what a package index serves is not the agent's. But the environment is the agent's to
write. A ``RECORD`` can be written by hand with the right hashes, and ``pip install`` of a wheel
the agent built, or of a folder of them, makes pip itself vouch for a plugin that turns every
failure into a pass, or for a pytest whose ``reports.py`` does (red team 10).

So a task keeps the environment it began with: for each site folder its tests run from, each
``*.dist-info`` installed there and the digest of its ``RECORD``. A harness session keeps it when
it starts (``agentgate hook NAME --session-start``, the virtual environments in the project);
else, and for a folder first seen later, the task's first verdict keeps what it finds. A
distribution a later run loads a plugin or a test tool from, and that the task did not begin
with (new, or its ``RECORD`` changed: installed again), is judged as the change would be
(``integrity/installs.py``).

The record lives in the user's state directory (``task-environments/``), keyed by project and
task, and the project's ``.agentgate/task-environments.json`` keeps its digest
(:class:`~pytest_agentgate.state.storage.Anchors`): deleting the record alone does not give a
fresh one, silently; the integrity gate says it is gone. ``agentgate reset --task ID`` removes
both with the task's attempts.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from pytest_agentgate.state.storage import Anchors, user_state_home, write_atomic

PIN_DIR = "task-environments"
ANCHORS = "task-environments.json"
# Bounds: the record read, the RECORD files hashed per folder.
MAX_BYTES = 4 << 20
MAX_DISTS = 5_000

# A folder's distributions: the *.dist-info name, the sha256 of its RECORD ("" without one).
Listing = dict[str, str]


class AtStart(NamedTuple):
    """What the task began with, per site folder (a real path); ``problem`` when the record
    cannot be trusted (gone while the project's anchor holds its digest, or changed)."""

    folders: dict[str, Listing]
    problem: str | None = None


def listing(folder: str) -> Listing:
    """The distributions installed in ``folder`` now."""
    found: Listing = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found
    for name in names:
        if not name.endswith(".dist-info") or len(found) >= MAX_DISTS:
            continue
        found[name] = record_digest(os.path.join(folder, name))
    return found


def record_digest(dist_info: str) -> str:
    """The sha256 of the distribution's ``RECORD``, "" when it has none."""
    try:
        with open(os.path.join(dist_info, "RECORD"), "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return ""


def project_site_folders(root: Path) -> list[str]:
    """The site folders of the virtual environments in the project's folder (a folder of it
    with a ``pyvenv.cfg``: ``.venv``, ``venv``), as real paths."""
    found: list[str] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        with contextlib.suppress(OSError):
            if not entry.is_dir() or not os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
                continue
        patterns = ("lib/python*/site-packages", "lib64/python*/site-packages", "Lib/site-packages")
        for pattern in patterns:
            for folder in sorted(glob.glob(os.path.join(glob.escape(entry.path), pattern))):
                real = os.path.realpath(folder)
                if os.path.isdir(real) and real not in found:
                    found.append(real)
    return found


def pin(root: Path, task: str, folders: Iterable[str], verdict: bool = False) -> AtStart:
    """The environment ``task`` began with, for the project at ``root``: the record's folders,
    with each of ``folders`` the record does not have yet kept now with what it holds, until
    the task's first verdict (``verdict``: a verdict asks). A folder first seen after that
    (a ``.pth`` line added since, pointing at a folder of the agent's) began empty: all it
    holds was installed since. Best effort: a state directory that cannot be written leaves
    the folders as they are now (no change is seen; the run's own checks still hold)."""
    path = record_path(root, task)
    anchors = Anchors(root, ANCHORS)
    key = path.stem
    recorded = anchors.get(key)
    kept, judged, readable = _read(path)
    if not readable:
        return AtStart(
            {},
            f"the record of the test environment the task began with ({path}) cannot be read",
        )
    if kept is None and recorded is not None:
        return AtStart(
            {},
            f"the record of the test environment the task began with ({path}) is gone, while "
            f"the project's {anchors.path.parent.name}/{ANCHORS} keeps its digest",
        )
    kept = kept or {}
    if recorded is not None and recorded != _digest(kept, judged):
        return AtStart(
            {},
            f"the record of the test environment the task began with ({path}) is not what the "
            f"project's {anchors.path.parent.name}/{ANCHORS} says it was: one of them was "
            "changed",
        )
    added = False
    for folder in folders:
        if folder not in kept:
            kept[folder] = {} if judged else listing(folder)
            added = True
    if added or recorded is None or (verdict and not judged):
        judged = judged or verdict
        doc = {"folders": kept, "judged": judged, "at": time.time(), "project": str(root)}
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(path, json.dumps(doc, sort_keys=True) + "\n", mode=0o600)
            anchors.put(key, _digest(kept, judged))
    return AtStart(kept)


def changed_since(root: Path, task: str) -> str:
    """A digest of what differs between the task's record and the folders it keeps now ("" when
    nothing does, or there is no record): the verdict cache keys on it, so a verdict made
    without the task (the agent's own ``agentgate verify``) is not reused for a task whose
    environment changed."""
    kept, _, _ = _read(record_path(root, task))
    if not kept:
        return ""
    now = {folder: listing(folder) for folder in kept}
    if now == kept:
        return ""
    return _digest(now, True)[:16]


def forget(root: Path, task: str) -> bool:
    """Remove the task's record and the project's anchor of it (``agentgate reset``)."""
    path = record_path(root, task)
    had = Anchors(root, ANCHORS).drop(path.stem)
    try:
        path.unlink()
    except OSError:
        return had
    return True


def record_path(root: Path, task: str) -> Path:
    """Where the record of the task's environment is kept."""
    project = hashlib.sha256(str(root.resolve()).encode(errors="surrogateescape")).hexdigest()
    name = hashlib.sha256(task.encode(errors="surrogateescape")).hexdigest()
    return user_state_home() / PIN_DIR / project[:32] / f"{name[:32]}.json"


def _read(path: Path) -> tuple[dict[str, Listing] | None, bool, bool]:
    """(the record's folders, or None when there is no record; whether a verdict of the task
    was judged against it; whether it could be read)."""
    try:
        with path.open("rb") as handle:
            doc = json.loads(handle.read(MAX_BYTES))
    except FileNotFoundError:
        return None, False, True
    except (OSError, ValueError):
        return None, False, False
    folders = doc.get("folders") if isinstance(doc, dict) else None
    if not isinstance(folders, dict):
        return None, False, False
    kept: dict[str, Listing] = {}
    for folder, dists in folders.items():
        if not isinstance(folder, str) or not isinstance(dists, dict):
            return None, False, False
        kept[folder] = {str(k): str(v) for k, v in dists.items()}
    return kept, doc.get("judged") is True, True


def _digest(folders: dict[str, Listing], judged: bool) -> str:
    said = {"folders": folders, "judged": judged}
    return hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()
