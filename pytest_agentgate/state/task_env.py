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

import base64
import contextlib
import glob
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from pytest_agentgate.state import seal
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
    cannot be trusted (gone while the project's anchor holds its digest, or changed);
    ``venvs_changed``, the virtual environments whose ``pyvenv.cfg`` is not what it was (an
    edit that turns the user's or the machine's site folders on, whose code is then "the
    machine's")."""

    folders: dict[str, Listing]
    problem: str | None = None
    venvs_changed: tuple[str, ...] = ()


class _Record(NamedTuple):
    folders: dict[str, Listing]
    # Each virtual environment's folder: the sha256 of its pyvenv.cfg.
    venvs: dict[str, str]
    # Whether a verdict of the task was judged against it.
    judged: bool


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


# What an installer writes beside a distribution's own files, differently from one install to
# the next (pip's REQUESTED when the package was named, uv's own RECORD and INSTALLER).
_INSTALLERS_OWN = frozenset(
    {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "uv_cache.json"}
)


def record_digest(dist_info: str) -> str:
    """A digest of the files the distribution's ``RECORD`` lists with their hashes (its code and
    metadata, not what the installer adds, nor bytecode): the same wheel installed again, by
    pip or uv, has the same; "" when it has no ``RECORD``."""
    try:
        with open(os.path.join(dist_info, "RECORD"), "rb") as handle:
            record = handle.read(MAX_BYTES)
    except OSError:
        return ""
    return digest_of_record(record)


def digest_of_record(record: bytes) -> str:
    """:func:`record_digest` of a ``RECORD`` file's bytes ("" for none)."""
    if not record:
        return ""
    entries = []
    for line in record.splitlines():
        path, _, rest = line.partition(b",")
        digest = rest.partition(b",")[0]
        name = path.rpartition(b"/")[2].decode("utf-8", "replace")
        if digest and not path.endswith(b".pyc") and name not in _INSTALLERS_OWN:
            entries.append(path + b"," + digest)
    return hashlib.sha256(b"\n".join(sorted(entries))).hexdigest()


def installed_unlike_record(venv: Path, package: str) -> Path | None:
    """The first file of distribution ``package`` installed in ``venv`` (its code, its console
    scripts) whose sha256 is not the one its ``RECORD`` lists: edited since it was installed;
    None when every file is as listed, or the distribution is not there."""
    name = package.replace("-", "_").lower()
    for folder in site_folders(str(venv)):
        for info in sorted(glob.glob(os.path.join(glob.escape(folder), "*.dist-info"))):
            if os.path.basename(info).split("-", 1)[0].lower() != name:
                continue
            try:
                with open(os.path.join(info, "RECORD"), "rb") as handle:
                    record = handle.read(MAX_BYTES)
            except OSError:
                continue
            for path, digest in record_entries(record):
                file = Path(folder, path)
                if file_digest(file, MAX_BYTES) != digest:
                    return file
    return None


def record_entries(record: bytes) -> Iterator[tuple[str, str]]:
    """(path, ``sha256=...``) of each line of a ``RECORD`` that hashes its file."""
    for line in record.splitlines():
        path, _, rest = line.decode("utf-8", "surrogateescape").partition(",")
        digest = rest.partition(",")[0]
        if digest.startswith("sha256="):
            yield path, digest


def file_digest(path: Path | str, limit: int | None = None) -> str | None:
    """``sha256=<urlsafe base64, unpadded>`` of a regular file, as ``RECORD`` writes it, read
    in pieces; None for a file that is no regular file, unreadable, or over ``limit``."""
    sha = hashlib.sha256()
    try:
        found = os.stat(path)  # before opening: a FIFO would block the read
        if not stat.S_ISREG(found.st_mode) or (limit is not None and found.st_size > limit):
            return None
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                sha.update(chunk)
    except OSError:
        return None
    return "sha256=" + base64.urlsafe_b64encode(sha.digest()).rstrip(b"=").decode()


def project_venvs(root: Path) -> list[str]:
    """The virtual environments in the project's folder (a folder of it with a
    ``pyvenv.cfg``: ``.venv``, ``venv``), as real paths."""
    found: list[str] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_dir() and os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
                found.append(os.path.realpath(entry.path))
    return found


def site_folders(venv: str) -> list[str]:
    """The site folders of the virtual environment ``venv``, and the folders the path lines of
    their ``.pth`` files add (where a plugin can be installed beside them), as real paths."""
    found: list[str] = []
    patterns = ("lib/python*/site-packages", "lib64/python*/site-packages", "Lib/site-packages")
    for pattern in patterns:
        for folder in sorted(glob.glob(os.path.join(glob.escape(venv), pattern))):
            real = os.path.realpath(folder)
            if os.path.isdir(real) and real not in found:
                found.append(real)
    for site in list(found):
        for added in pth_folders(site):
            if added not in found:
                found.append(added)
    return found


def venv_of(folder: str) -> str | None:
    """The virtual environment a site folder belongs to (the nearest folder above it with a
    ``pyvenv.cfg``, a few levels up), or None."""
    here = folder
    for _ in range(5):
        here = os.path.dirname(here)
        if os.path.isfile(os.path.join(here, "pyvenv.cfg")):
            return here
    return None


def pin(
    root: Path,
    task: str,
    folders: Iterable[str],
    verdict: bool = False,
    venvs: Iterable[str] = (),
) -> AtStart:
    """The environment ``task`` began with, for the project at ``root``: the record's folders,
    with each of ``folders`` the record does not have yet kept now with what it holds, until
    the task's first verdict (``verdict``: a verdict asks). A folder first seen after that,
    or inside a virtual environment the record already had (a ``.pth`` line added since,
    pointing at a folder of the agent's), began empty: all it holds was installed since. Each
    of ``venvs`` not recorded yet gets its ``pyvenv.cfg`` recorded. Best effort: a state
    directory that cannot be written leaves the folders as they are now (no change is seen;
    the run's own checks still hold)."""
    path = record_path(root, task)
    anchors = Anchors(root, ANCHORS)
    key = path.stem
    recorded = anchors.get(key)
    record, readable = _read(path)
    if not readable:
        return AtStart(
            {},
            f"the record of the test environment the task began with ({path}) cannot be read, "
            "or was changed after agentgate wrote it",
        )
    if record is None and recorded is not None:
        return AtStart(
            {},
            f"the record of the test environment the task began with ({path}) is gone, while "
            f"the project's {anchors.path.parent.name}/{ANCHORS} keeps its digest",
        )
    record = record or _Record({}, {}, False)
    if recorded is not None and recorded != _digest(record):
        return AtStart(
            {},
            f"the record of the test environment the task began with ({path}) is not what the "
            f"project's {anchors.path.parent.name}/{ANCHORS} says it was: one of them was "
            "changed",
        )
    kept, kept_venvs, judged = dict(record.folders), dict(record.venvs), record.judged
    for folder in folders:
        if folder not in kept:
            late = judged or any(folder.startswith(v + os.sep) for v in record.venvs)
            kept[folder] = {} if late else listing(folder)
    for venv in venvs:
        kept_venvs.setdefault(venv, config_digest(venv))
    # A virtual environment gone (deleted, made again under another name: review 28) runs no
    # test: the one the tests run from now is judged as a folder first seen, which began empty.
    changed = tuple(
        v for v, was in sorted(record.venvs.items()) if config_digest(v) != was and os.path.isdir(v)
    )
    now = _Record(kept, kept_venvs, judged or verdict)
    if now != record or recorded is None:
        doc = {**now._asdict(), "at": time.time(), "project": str(root)}
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(path, json.dumps(seal.sealed(doc), sort_keys=True) + "\n", mode=0o600)
            anchors.put(key, _digest(now))
    return AtStart(kept, None, changed)


def config_digest(venv: str) -> str:
    """What the virtual environment's ``pyvenv.cfg`` says of the folders its Python reads
    besides its own: its ``include-system-site-packages`` ("true" or "false"; "" when it has
    no such file). A venv made again with another Python (its ``home`` and ``version``
    another) is the same environment to the gate; one that turns the machine's and the
    user's site folders on is not."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), "rb") as handle:
            text = handle.read(MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip().lower() == "include-system-site-packages":
            return "true" if value.strip().lower() == "true" else "false"
    return "false"


def pth_folders(site: str) -> list[str]:
    """The folders the path lines of the ``.pth`` files in ``site`` add (what ``site`` adds to
    ``sys.path``: a line that is no ``import``, naming a folder that exists)."""
    found: list[str] = []
    try:
        names = sorted(n for n in os.listdir(site) if n.endswith(".pth") and n[:1] != ".")
    except OSError:
        return found
    for name in names:
        try:
            with open(os.path.join(site, name), "rb") as handle:
                lines = handle.read(MAX_BYTES).splitlines()
        except OSError:
            continue
        for raw in lines:
            line = raw.strip()
            if not line or line.startswith((b"#", b"import ", b"import\t")):
                continue
            folder = os.path.realpath(os.path.join(site, os.fsdecode(line)))
            if os.path.isdir(folder) and folder not in found:
                found.append(folder)
    return found


def changed_since(root: Path, task: str) -> str:
    """A digest of what differs between the task's record and the folders it keeps now ("" when
    nothing does, or there is no record): the verdict cache keys on it, so a verdict made
    without the task (the agent's own ``agentgate verify``) is not reused for a task whose
    environment changed."""
    record, _ = _read(record_path(root, task))
    if record is None or not (record.folders or record.venvs):
        return ""
    now = _Record(
        {folder: listing(folder) for folder in record.folders},
        {venv: config_digest(venv) for venv in record.venvs},
        True,
    )
    if now.folders == record.folders and now.venvs == record.venvs:
        return ""
    return _digest(now)[:16]


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


def _read(path: Path) -> tuple[_Record | None, bool]:
    """(the record, or None when there is none; whether it could be read)."""
    try:
        with path.open("rb") as handle:
            doc = json.loads(handle.read(MAX_BYTES))
    except FileNotFoundError:
        return None, True
    except (OSError, ValueError):
        return None, False
    if not isinstance(doc, dict) or not seal.intact(doc):
        return None, False  # edited after agentgate wrote it (state/seal.py)
    folders = doc.get("folders")
    venvs = doc.get("venvs", {})
    if not isinstance(folders, dict) or not isinstance(venvs, dict):
        return None, False
    kept: dict[str, Listing] = {}
    for folder, dists in folders.items():
        if not isinstance(folder, str) or not isinstance(dists, dict):
            return None, False
        kept[folder] = {str(k): str(v) for k, v in dists.items()}
    configs = {str(k): str(v) for k, v in venvs.items()}
    return _Record(kept, configs, doc.get("judged") is True), True


def _digest(record: _Record) -> str:
    return hashlib.sha256(json.dumps(record._asdict(), sort_keys=True).encode()).hexdigest()
