"""The source Python compiled for each file of the project while a gated run goes on.

Python raises the audit event ``compile`` with the source and the file's name whenever it
compiles a module it imports (PEP 578), and whenever any code calls ``compile``. :func:`watch`
adds an audit hook, before pytest imports the project's conftest.py files, that looks at each
source compiled under the name of a ``.py`` file in the project's folder. An audit hook cannot
be removed once added.

- A source given as bytes (what the import system reads from the file) is kept by its SHA-256.
  ``tampering._rewritten_in_run`` compares these with the file as it is when the witness looks:
  a conftest that writes a correct ``calc.py`` before the tests import it and puts the broken
  text back afterwards leaves a source compiled that the file no longer holds, whatever
  differed (a function, a constant, a default argument, a lambda in a dict).
- A source that does not read as the file reads at that moment (by Python's decoding and line
  endings) is other code run under the file's name: ``exec(compile(fixed, calc.__file__,
  "exec"), vars(calc))`` writes nothing, yet the tests run code the file does not hold. What
  coverage.py or pytest compile of the file to measure or rewrite it reads as the file does.

The same hook sees the project's ``.py`` files opened for writing, renamed, linked or copied
over by code of the run (the audit events ``open``, ``os.rename``, ``os.link``,
``shutil.copyfile``, ``os.truncate``) and keeps the SHA-256 of what each file held before the
first such write. A source compiled for the tests that the file did not hold before the run is a
swap even while the file still holds it (put back only as the interpreter exits, where nothing
in it can look any more). A file that did not exist before is not kept: a parser generator's
tables written on the first run are honest. What a process started by the run writes is not
seen, so the first time the run's code starts one (``subprocess.Popen``, ``os.system``, an
``exec``, a ``fork``), the project's ``.py`` files outside its tests are hashed as they are then.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys

# The most sources kept per file, and files kept: enough for a module reloaded a few times.
_PER_FILE = 8
_FILES = 20_000
_sources: dict[str, list[str]] = {}
_before: dict[str, str] = {}
_foreign: set[str] = set()
_watched: list[str] = []
# Events that write the file named by one of their arguments, and which argument.
_WRITES = {"os.rename": 1, "os.link": 1, "shutil.copyfile": 1, "os.truncate": 0}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# Events that start code that may write files this process never opens.
_SPAWNS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
     "os.forkpty"}
)  # fmt: skip
# Folders never walked for the snapshot: tools' caches, environments, version control.
_NOT_WALKED = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist"})
_spawned: list[bool] = []
_paused = False


def watch(project: str) -> None:
    """Keep, from now on, the sources compiled for the ``.py`` files under ``project``."""
    root = os.path.realpath(project) + os.sep
    if root in _watched:
        return
    _watched.append(root)
    if len(_watched) > 1:
        return  # one hook serves every folder watched
    sys.addaudithook(_audit)


def _audit(event: str, args: tuple[object, ...]) -> None:
    if not _paused:  # the hook's own tests call _hook with the events they make up
        _hook(event, args)


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event == "compile":
        with contextlib.suppress(Exception):  # a hook never raises into the code it watches
            _keep(*args)
    elif event == "open":
        with contextlib.suppress(Exception):
            path, mode, flags = args
            if (mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS) or (
                isinstance(mode, str) and any(c in mode for c in "wax+")
            ):
                _written(path)
    elif event in _WRITES:
        with contextlib.suppress(Exception):
            _written(args[_WRITES[event]])
    elif event in _SPAWNS and not _spawned:
        _spawned.append(True)
        with contextlib.suppress(Exception):
            _snapshot()


def _project_file(path: object) -> str | None:
    """The real path of ``path`` when it names a ``.py`` file in a watched folder."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        return None  # a file descriptor: its file was opened, and seen, before
    name = os.fsdecode(path)
    if not name.endswith(".py"):
        return None
    real = os.path.realpath(name)
    return real if any(real.startswith(root) for root in _watched) else None


def _snapshot() -> None:
    """What each ``.py`` file of the watched folders outside the tests holds now."""
    from pytest_agentgate.testcode import is_test_code

    for root in list(_watched):
        for folder, dirs, files in os.walk(root):
            dirs[:] = [
                d
                for d in dirs
                if not d.startswith(".")
                and d not in _NOT_WALKED
                and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
            ]
            for name in files:
                path = os.path.join(folder, name)
                if name.endswith(".py") and not is_test_code(os.path.relpath(path, root)):
                    _written(path)
                if len(_before) >= _FILES:
                    return


def _written(path: object) -> None:
    real = _project_file(path)
    if real is None or real in _before or len(_before) >= _FILES:
        return
    try:
        with open(real, "rb") as handle:  # a read: this hook passes over its own open
            _before[real] = hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return  # no file yet: nothing the run could have swapped


def _keep(source: object, filename: object) -> None:
    if not isinstance(source, (bytes, str)) or not isinstance(filename, str):
        return  # an AST (typeguard, pytest's rewriter): made from a source seen before
    real = _project_file(filename)
    if real is None:
        return
    if real not in _foreign and _as_read(source) != _file_text(real):
        _foreign.add(real)
    if not isinstance(source, bytes):
        return
    kept = _sources.get(real)
    if kept is None:
        if len(_sources) >= _FILES:
            return
        kept = _sources[real] = []
    digest = hashlib.sha256(source).hexdigest()
    if digest not in kept and len(kept) < _PER_FILE:
        kept.append(digest)


def _as_read(source: bytes | str) -> str | None:
    """The source as Python reads it: decoded by its declaration, with ``\n`` line ends. What
    coverage.py changes when it reads a file (form feeds as spaces, a last line end added) is
    not a difference."""
    import importlib.util

    try:
        text = importlib.util.decode_source(source) if isinstance(source, bytes) else source
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\f", " ").rstrip()


def _file_text(real: str) -> str | None:
    from pytest_agentgate.texts import read_regular

    try:
        return _as_read(read_regular(real))
    except OSError:
        return None


def watching() -> bool:
    """Whether :func:`watch` was called in this interpreter."""
    return bool(_watched)


def sources_compiled(path: str) -> list[str]:
    """The SHA-256 of each source compiled for the file ``path`` (a real path) since
    :func:`watch`; empty when none was, or nothing is watched."""
    return list(_sources.get(path, ()))


def held_before(path: str) -> str | None:
    """The SHA-256 of what the file ``path`` (a real path) held before the run's code first
    wrote it; None when the run's code did not write it (or it did not exist)."""
    return _before.get(path)


def compiled_elsewhere(path: str) -> bool:
    """Whether code was compiled under the name of the file ``path`` (a real path) from a
    source the file did not hold then."""
    return path in _foreign
