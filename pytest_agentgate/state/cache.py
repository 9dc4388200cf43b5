"""The verdict cache: an unchanged tree is not judged twice.

An agent's stop hook gates every "done"; when nothing changed since the last full run (the same
commit and working tree, the same configuration, the same tools, the same environment), the
judged gates of that run are reused and the verdict is concluded afresh (the attempt counts as
any other). Anything uncertain is a miss, never a stale verdict:

- the key covers agentgate's own code, HEAD, every changed, untracked *and ignored* file in the
  repository (content hash for changed and untracked ones, size and time for ignored ones: a
  test may read an ignored file), the refs a base can come from, the whole configuration in
  force, the environment (but for shell and harness bookkeeping, with the values harnesses
  give it: an agent's shell and its stop hook differ there), and the command tools (resolved on
  the commands' PATH, with the site-packages folders beside them: installing a package changes
  them). PATH is not keyed as text; a run is reused only on a PATH that has every folder its
  PATH had;
- outside a git repository, in a tree with more than :data:`MAX_IGNORED` ignored files, or when
  anything cannot be read, there is no key and nothing is cached;
- entries live in the user's state directory, not in the project: deleting or writing files in
  the project cannot plant a verdict. Each entry is sealed (an HMAC with a secret made once in
  that directory, readable by the user alone): an entry edited by hand (red team 10 set a
  failing gate's status to "pass") is not reused, and the miss says so. Whoever reads the
  secret and agentgate's code can still forge one, as they can change the attempt counts;
- the session gate (the agent's words and transcript) is never cached: it is judged each time.

An entry keeps the digest of each part of its key (the environment by variable, salted), so a
run of the same tree and configuration that misses says what else differed: "the run at 14:02
... was not reused: the environment (PYTEST_ADDOPTS) differ(s)". Values are never kept or shown.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_agentgate.state import seal
from pytest_agentgate.state.env_keys import keyed_env, process_state
from pytest_agentgate.state.storage import STATE_DIR, user_state_home, write_atomic
from pytest_agentgate.verdict import Finding, GateResult

CACHE_DIR = "verdict-cache"
# Ignored files beyond this many make the key too costly to be sure of: no cache.
MAX_IGNORED = 100_000
# Changed or untracked files larger than this are keyed by size and time, not content.
HASHED_BYTES = 8 * 1024 * 1024
# Folders whose content never changes a verdict (caches the tools write themselves). Not
# `__pycache__`: Python runs a pyc whose header matches its source in the source's place, and
# one planted after a kept pass would be run by every later run (red team 25), so the
# project's own are keyed, as ignored files are; an installed library's, in site-packages,
# written the first time any program imports it, are not.
SKIPPED_DIRS = frozenset(
    {STATE_DIR, ".git", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis"}
)
_INSTALLED_PYCS = frozenset({"site-packages", "dist-packages"})


def _git(
    root: Path, *args: str, config: Sequence[str] = (), index: Path | None = None
) -> bytes | None:
    from pytest_agentgate.git import GIT_ENV, git_command, waits_forever

    if waits_forever(root) is not None:
        return None  # no key: nothing cached (the change's reading of git says why)
    try:
        done = subprocess.run(
            git_command(*args, config=config),
            cwd=root,
            capture_output=True,
            timeout=30,
            check=False,
            env={**os.environ, **GIT_ENV, **({"GIT_INDEX_FILE": str(index)} if index else {})},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _file_key(path: Path, *, content: bool) -> str:
    try:
        st = path.lstat()
    except OSError:
        return "missing"
    if not content or not path.is_file() or st.st_size > HASHED_BYTES:
        # The inode's change time too, which no one can set back as `touch -r` sets the
        # modification time (red team 23: a data file, and an 8 MiB module, swapped at the
        # same size and time after a passing run was kept).
        return f"{st.st_mode:o}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def tree_state(root: Path) -> tuple[str, str] | None:
    """The state of the repository holding ``root``: what the change is made of (HEAD, refs,
    changed and untracked files, by content) and the ignored files (by size and time, code and
    configuration by content), apart: a run writes ignored files itself (a coverage data file),
    so the cache keeps a verdict under the state the run left, and only when the run changed
    nothing else. Read past what the repository's settings hide from git, as the change is
    (git.py): index entries flagged unchanged are keyed by content, filters and fsmonitor are
    off. None: cannot be told."""
    from pytest_agentgate.git import (
        FILTERS_COMMAND,
        FLAGS_COMMAND,
        Blind,
        GitError,
        filter_overrides,
        flagged_on_disk,
        loads_code,
        outside_project,
        sparse,
        through_folders,
    )

    top, head, refs, filters, flags, staged = _git_many(
        root,
        ["rev-parse", "--show-toplevel"],
        ["rev-parse", "HEAD"],
        ["for-each-ref", "--format=%(refname) %(objectname)"],
        FILTERS_COMMAND,
        [*FLAGS_COMMAND, "--full-name"],
        ["ls-files", "-s", "-z", "--full-name"],
    )
    if top is None or head is None or refs is None or flags is None or staged is None:
        return None
    repo = Path(top.decode().strip())
    overrides = filter_overrides((filters or b"").decode(errors="surrogateescape"))
    listing = flags.decode(errors="surrogateescape")
    # Through an index that knows nothing of the files' sizes and times, as the change is
    # read (git.py's Blind.index): an edit git's own index takes as unchanged is keyed too.
    try:
        with Blind(overrides).index(
            repo, staged.decode(errors="surrogateescape"), sparse(listing, repo)
        ) as index:
            status = _git(
                repo,
                "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=traditional",
                config=overrides, index=index,
            )  # fmt: skip
    except GitError:
        return None
    if status is None:
        return None
    work = hashlib.sha256(head + b"\0" + refs + b"\0")
    ignored_files = hashlib.sha256()
    ignored = 0
    entries = [(e[:2].decode(), e[3:]) for e in status.split(b"\0") if len(e) >= 4]
    flagged = flagged_on_disk(listing, repo)
    entries += [("F ", name.encode(errors="surrogateescape")) for name in flagged]
    for code, raw in entries:
        name = raw.decode(errors="surrogateescape")
        parts = Path(name).parts
        if left_out(parts):
            continue
        if "__pycache__" in parts and code == "??":
            # A project that ignores no pycs: they are the run's to write, as ignored files
            # are, and keyed as those (a run that wrote them is still kept).
            code = "!!"
        digest = ignored_files if code == "!!" else work
        if code == "!!":
            ignored += 1
            if ignored > MAX_IGNORED:
                return None
        # `--untracked-files=all` lists each ignored file (never a folder): all are keyed.
        digest.update(f"{code} {name}\0".encode(errors="surrogateescape"))
        # An ignored file of the project's code (a conftest.py a private exclude hides) by
        # content too: its time can be set back.
        content = code != "!!" or (loads_code(name) and not outside_project(name))
        digest.update(_file_key(repo / name, content=content).encode() + b"\0")
        folder = name.endswith("/") or ((repo / name).is_symlink() and (repo / name).is_dir())
        if code != "!!" and folder:
            # A nested repository or a link to a folder: what pytest would collect in it, by
            # content (git.py reads the change the same way).
            try:
                inside = through_folders(repo, [name])
            except GitError:
                return None
            for inner in inside:
                digest.update(
                    f"{inner}\0{_file_key(repo / inner, content=True)}\0".encode(
                        errors="surrogateescape"
                    )
                )
    return work.hexdigest(), ignored_files.hexdigest()


def left_out(parts: Sequence[str]) -> bool:
    """Whether the key of the tree leaves out the file whose path in the project has ``parts``:
    what is in a tool's cache folder (:data:`SKIPPED_DIRS`), and the pycs of installed libraries
    (in a `site-packages` folder's `__pycache__`). The witness keeps what the tests read there
    (pytest_plugin/compiled.py), which the verdict cache keys as it keys the files they read
    outside the project (red teams 28 and 29)."""
    if not SKIPPED_DIRS.isdisjoint(parts):
        return True
    return (
        bool(parts)
        and parts[-1].endswith(".pyc")
        and "__pycache__" in parts
        and not _INSTALLED_PYCS.isdisjoint(parts)
    )


def _git_many(root: Path, *commands: list[str]) -> list[bytes | None]:
    """:func:`_git` for each command, side by side."""
    from pytest_agentgate.git import side_by_side

    return side_by_side([functools.partial(_git, root, *command) for command in commands])


def path_folders(environ: Mapping[str, str]) -> list[str]:
    """The folders of PATH that exist, resolved, in order, once each."""
    seen: dict[str, None] = {}
    for entry in environ.get("PATH", os.defpath).split(os.pathsep):
        if entry and os.path.isdir(entry):
            seen.setdefault(os.path.realpath(entry))
    return list(seen)


def tools_key(commands: Sequence[tuple[str, str]]) -> str:
    """The command tools as found on each command's PATH (``commands``: the command and its
    PATH), and the site-packages beside them."""
    seen: set[str] = set()
    parts: list[str] = [sys.executable]
    for folder in sys.path:
        if folder.endswith("site-packages"):
            parts.append(f"{folder}:{_file_key(Path(folder), content=False)}")
    for command, path in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        for word in words[:1] + [w for w in words if "python" in os.path.basename(w)]:
            found = shutil.which(word, path=path)
            if found is None or found in seen:
                continue
            seen.add(found)
            real = Path(found).resolve()
            parts.append(f"{found}->{real}:{_file_key(real, content=False)}")
            for site in sorted(Path(found).parent.parent.glob("lib/python*/site-packages")):
                parts.append(f"{site}:{_file_key(site, content=False)}")
    return hashlib.sha256("\n".join(parts).encode(errors="surrogateescape")).hexdigest()


@dataclass(frozen=True)
class CacheKey:
    """A run's cache key, and the parts it is made of: a miss can then say what differed."""

    digest: str
    # Per part (agentgate's code, project, tree, ignored files, configuration, tools, base): its
    # digest. The environment is kept apart, by variable, and stored only as salted digests.
    parts: dict[str, str]
    env: dict[str, str]
    # PATH's folders (:func:`path_folders`): a later run must have each of them.
    path: list[str] = field(default_factory=list)


# What each part of the key is, for a miss's explanation.
PART_NAMES = {
    "code": "agentgate's own code",
    "project": "the project folder",
    "tree": "the tree (HEAD, refs, changed or untracked files)",
    "ignored": "ignored files",
    "config": "the configuration",
    "tools": "the tools on the commands' PATH",
    "base": "the base, or the task's test environment",
    "process": "the process settings the commands inherit (umask, limits, signals, priority)",
}


def cache_key(
    root: Path,
    config_text: str,
    commands: Sequence[tuple[str, str]],
    environ: Mapping[str, str],
    tree: tuple[str, str],
    extra: str = "",
) -> CacheKey:
    """The key of a run: ``commands`` are the gate commands with the PATH each runs with."""
    env = keyed_env(environ)
    parts = {
        "code": own_code_key(),
        "project": _digest(str(root)),
        "tree": tree[0],
        "ignored": tree[1],
        "config": _digest(config_text),
        "tools": tools_key(commands),
        "base": _digest(extra),
        "process": _digest(process_state()),
    }
    digest = hashlib.sha256()
    for name in PART_NAMES:
        digest.update(parts[name].encode() + b"\0")
    for name, value in sorted(env.items()):
        digest.update(f"{name}={value}".encode(errors="surrogateescape") + b"\0")
    return CacheKey(digest.hexdigest(), parts, env, path_folders(environ))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode(errors="surrogateescape")).hexdigest()


def _salted(salt: str, name: str, value: str) -> str:
    """A variable's value as stored: salted, so a secret is not kept in a guessable form."""
    return _digest(f"{salt}\0{name}={value}")[:32]


def own_code_key() -> str:
    """agentgate's own code, as installed: an upgrade (or an edit of an editable install)
    changes what a verdict means."""
    package = Path(__file__).resolve().parent.parent
    parts = [
        f"{p.relative_to(package)}:{_file_key(p, content=False)}"
        for p in sorted(package.rglob("*.py"))
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _entry_path(root: Path) -> Path:
    name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:32]
    return user_state_home() / CACHE_DIR / f"{name}.json"


def read_entry(root: Path) -> dict[str, Any] | None:
    """The verdict kept for reuse for the project at ``root``, as stored (unchecked: for what
    it says of earlier runs, never to be reused as it is)."""
    return _read_entry(root)


def _read_entry(root: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(_entry_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


# What a miss says of an entry whose seal does not match.
EDITED = "it was changed after agentgate wrote it (by hand?), so it is not trusted"


def load(root: Path, key: CacheKey) -> tuple[list[GateResult], float] | None:
    """The judged gates stored under ``key`` for this project, and when they were judged."""
    data = _read_entry(root)
    if data is None or data.get("key") != key.digest or _path_lost(data, key):
        return None
    if not seal.intact(data) or _outside_changed(data):
        return None
    try:
        return [gate_from_dict(g) for g in data["gates"]], float(data["made_at"])
    except (ValueError, KeyError, TypeError):
        return None


def why_missed(root: Path, key: CacheKey) -> tuple[float, list[str]] | None:
    """When the project's last kept run was judged and what differs from it now (the names of
    the parts, environment variables by name); None when there is no earlier run to compare."""
    data = _read_entry(root)
    if data is None:
        return None
    if not seal.intact(data):
        made_at = data.get("made_at")
        when = float(made_at) if isinstance(made_at, (int, float)) else 0.0
        return when, [EDITED]
    if data.get("key") == key.digest and not _path_lost(data, key):
        changed = _outside_changed(data)
        if not changed:
            return None
        made_at = data.get("made_at")
        shown = ", ".join(changed[:3]) + (
            f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        )
        when = float(made_at) if isinstance(made_at, (int, float)) else 0.0
        return when, [f"files the tests read outside the project ({shown})"]
    parts, env, salt = data.get("parts"), data.get("env"), data.get("salt")
    made_at = data.get("made_at")
    if not (
        isinstance(parts, dict)
        and isinstance(env, dict)
        and isinstance(salt, str)
        and isinstance(made_at, (int, float))
    ):
        return None
    differs = [PART_NAMES[name] for name in PART_NAMES if parts.get(name) != key.parts[name]]
    lost = _path_lost(data, key)
    if lost:
        shown = ", ".join(lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
        differs.append(f"PATH (the run's had {shown}, this one does not)")
    names = sorted(
        {n for n in env if n not in key.env}
        | {n for n, v in key.env.items() if env.get(n) != _salted(salt, n, v)}
    )
    if names:
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        differs.append(f"the environment ({shown})")
    return float(made_at), differs


def _outside_changed(data: Mapping[str, Any]) -> list[str]:
    """The files and folders outside the project that the kept run's tests read and that are
    not as they were then (all of them, when the entry cannot say)."""
    kept = data.get("outside", {})
    if not isinstance(kept, dict):
        return ["(unknown)"]
    return [
        str(name)
        for name, was in kept.items()
        if not isinstance(was, str) or _file_key(Path(str(name)), content=False) != was
    ]


def _path_lost(data: Mapping[str, Any], key: CacheKey) -> list[str]:
    """The folders the kept run's PATH had that this run's PATH lacks (all when unknown)."""
    kept = data.get("path")
    if not isinstance(kept, list):
        return ["(unknown)"]
    here = set(key.path)
    return [str(folder) for folder in kept if folder not in here]


def store(
    root: Path, key: CacheKey, gates: Sequence[GateResult], outside: Sequence[str] = ()
) -> None:
    """Keep ``gates`` under ``key``, with ``outside``, the files and folders outside the
    project the tests read, as they are now (their size, times and inode: a write changes the
    inode's change time, which no one sets back)."""
    path = _entry_path(root)
    salt = secrets.token_hex(16)
    document = {
        "key": key.digest,
        "made_at": time.time(),
        "parts": key.parts,
        "salt": salt,
        "env": {name: _salted(salt, name, value) for name, value in key.env.items()},
        "path": key.path,
        "outside": {name: _file_key(Path(name), content=False) for name in outside},
        "gates": [{**g.to_dict(), "notes": list(g.notes)} for g in gates],
    }
    document = seal.sealed(document)
    if seal.FIELD not in document:
        return  # an entry no one can tell from a forged one is not kept
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(document, ensure_ascii=False), mode=0o600)


def gate_from_dict(data: Mapping[str, Any]) -> GateResult:
    findings = [
        Finding(
            message=f["message"],
            path=f.get("path"),
            line=f.get("line"),
            code=f.get("code"),
            name=f.get("name"),
            severity=f.get("severity", "error"),
            tool=f.get("tool"),
            column=f.get("column"),
        )
        for f in data.get("findings", [])
    ]
    return GateResult(
        name=data["name"],
        kind=data["kind"],
        status=data["status"],
        summary=data["summary"],
        blocking=bool(data.get("blocking", True)),
        expected=dict(data.get("expected") or {}),
        actual=dict(data.get("actual") or {}),
        findings=findings,
        command=data.get("command"),
        exit_code=data.get("exit_code"),
        duration_s=data.get("duration_s"),
        problems=list(data.get("problems") or []),
        notes=list(data.get("notes") or []),
        threshold_sources=dict(data.get("threshold_sources") or {}),
        escalate=list(data.get("escalate") or []),
    )
