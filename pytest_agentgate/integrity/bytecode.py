"""Bytecode that Python runs in place of its source: ``stale-bytecode``.

Python trusts a ``__pycache__/NAME.cpython-XY.pyc`` whose header records the source's
modification time and size, and never reads the source again (pytest does the same with its
``-pytest-X.Y.pyc`` of a rewritten test module). So an agent can fix a module, import it (the
pyc now holds the fixed code), put the broken text back at the same size and give the file its
old time (``touch -r``): git shows the file unchanged, and the tests run the fixed code. A pyc
built by hand does the same, with a header of the file's time and size, or of its hash (pytest
9 checks only that), as does an "unchecked" hash-based one (Python never looks at its source).

For each Python file of the project (tracked at the base, or added by the change), each pyc of
this interpreter that Python or pytest would load for it is compiled again from the source and
compared, code object for code object. A pair of source and pyc found alike is remembered in the
user's state directory by their digests, so a later verdict compiles only what changed. Pycs of
another interpreter version are not read (agentgate cannot compile for it).

A ``NAME.pyc`` outside ``__pycache__`` with no ``NAME.py`` beside it (sourceless bytecode) is
imported by Python as module ``NAME`` from any folder on ``sys.path``: in such a folder of the
project (its root, ``src``, a folder pytest's settings or its ``prepend`` import mode put there,
or a package below one of them) it is a finding at its own path, whatever it holds. One in any
other folder (a test-data file a test reads) is imported by no one.
"""

from __future__ import annotations

import contextlib
import dis
import hashlib
import importlib.util
import json
import marshal
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from fnmatch import fnmatch
from importlib.machinery import EXTENSION_SUFFIXES as _EXTENSIONS
from pathlib import Path, PurePosixPath
from types import CodeType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the witness imports this module in the tests' pytest: kept light there
    from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate import syntax
from pytest_agentgate.modules import is_package_init
from pytest_agentgate.texts import read_regular, read_regular_text
from pytest_agentgate.venvs import an_environment

RULE = "stale-bytecode"
CACHE_DIR = "bytecode"
# Source files looked at, at most: a project larger than this is looked at in part.
MAX_FILES = 20_000
# Source and pyc pairs remembered as alike, per project.
MAX_REMEMBERED = 50_000
# What "alike" means, in the remembered pairs' keys: pairs an older agentgate found alike by
# less (before the exception table was compared) are compared again.
_ALIKE = "2"
_FLAG_HASH = 0b01
_FLAG_CHECK = 0b10


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    tag = sys.implementation.cache_tag
    if tag is None:  # pragma: no cover - an interpreter that writes no bytecode
        return
    remembered = Remembered(scan.root)
    pytest_tail = _pytest_tail(tag)
    folders: dict[Path, list[str]] = {}
    for path in _python_files(scan)[:MAX_FILES]:
        source_path = scan.root / path
        cache = source_path.parent / "__pycache__"
        if cache not in folders:
            try:
                folders[cache] = os.listdir(cache)
            except OSError:
                folders[cache] = []
        names = folders[cache]
        if not names:
            continue
        stem = source_path.stem
        for name in names:
            kind = _kind(name, stem, tag, pytest_tail)
            if kind is None:
                continue
            finding = _check(scan.root, path, source_path, cache / name, kind, remembered)
            if finding is not None:
                yield finding
    remembered.save()
    yield from _sourceless(scan.root, lambda: _builds_extensions(scan))


# Folders no import of the project's code reads from: tools' caches, version control, the
# JavaScript side, and (by their `pyvenv.cfg`, or their name) installed environments.
_NOT_IMPORTED = frozenset(
    {
        ".git", ".hg", ".svn", ".tox", ".nox", ".agentgate", ".mypy_cache", ".ruff_cache",
        ".pytest_cache", ".hypothesis", "node_modules", "site-packages", "dist-packages",
        "__pycache__",
    }
)  # fmt: skip
# Folders looked at, at most, for pycs outside `__pycache__`.
MAX_FOLDERS = 20_000


# The names Python imports an extension module from, on this machine and the others.
EXTENSION_SUFFIXES = (*_EXTENSIONS, ".so", ".pyd")
# The sources of compiled extension modules: C, C++, Cython, Rust, Fortran, Zig, SWIG, CUDA.
COMPILED_SOURCES = (
    ".c", ".cc", ".cpp", ".cxx", ".c++", ".pyx", ".rs", ".f", ".f90", ".zig", ".i", ".cu",
)  # fmt: skip


# Files of a build that compiles code (Meson, CMake, Cargo).
_BUILD_FILES = frozenset({"meson.build", "CMakeLists.txt", "Cargo.toml"})
# Words of a packaging file whose build compiles extension modules.
_BUILDS_COMPILED = (
    "ext_modules", "Extension(", "cythonize", "mypycify", "build_ext", "cffi_modules",
    "rust_extensions", "mypyc", "setuptools-rust", "setuptools_rust", "mesonpy",
    "scikit_build", "maturin", "hatch-cython", "ext-modules",
)  # fmt: skip


def _builds_extensions(scan: Scan) -> bool:
    """Whether the project could build extension modules at the base: a source of one was
    tracked there, or an extension module itself; also when git cannot say."""
    from pytest_agentgate.git import GitError

    try:
        tracked = scan.repo.tracked_at(scan.change.base)
    except (GitError, OSError):
        return True
    suffixes = (*COMPILED_SOURCES, *EXTENSION_SUFFIXES)
    if any(path.lower().endswith(suffixes) for path in tracked):
        return True
    names = {path.rsplit("/", 1)[-1] for path in tracked}
    if names & _BUILD_FILES:
        return True
    # A build that compiles the project's own Python (pydantic 1's `cythonize` of its .py
    # files, mypyc, review 13), or names extensions, in the base's packaging files.
    for name in ("setup.py", "pyproject.toml", "setup.cfg"):
        text = scan.sources.at_base(name) or ""
        if any(word in text for word in _BUILDS_COMPILED):
            return True
    return False


def _sourceless(
    root: Path, builds_extensions: Callable[[], bool] = lambda: True
) -> Iterator[IntegrityFinding]:
    """Each ``NAME.pyc`` outside ``__pycache__`` with no ``NAME.py`` beside it, in a folder
    Python or pytest imports from, outside the project's virtual environments: Python imports
    such a file as module ``NAME`` in place of the project's module of that name, and git,
    ignoring ``*.pyc``, shows nothing of it. A pyc in any other folder (test data) is imported
    by no one. Likewise each extension module (``NAME.cpython-311-x86_64-linux-gnu.so``) there,
    when the project did not build them at the base (``builds_extensions``): machine code the
    change's text does not show (red team 21: one in the product's package asked whether
    pytest was loaded), and that git, ignoring ``*.so``, shows nothing of either."""
    from pytest_agentgate.integrity.model import IntegrityFinding

    listing: dict[Path, set[str]] = {}
    for folder, dirs, files in os.walk(root):
        if len(listing) >= MAX_FOLDERS:
            break
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in _NOT_IMPORTED
            and not d.endswith(".egg-info")
            and not an_environment(here / d)
        )
        listing[here] = set(files)
    roots = _import_roots(root, listing)
    compiled: list[Path] = []
    for here, names in listing.items():
        if not _importable(here, roots, listing):
            continue
        compiled += [here / n for n in sorted(names) if n.endswith(EXTENSION_SUFFIXES)]
        for name in sorted(names):
            if not name.endswith(".pyc") or name[: -len(".pyc")] + ".py" in names:
                continue
            shown = (here / name).relative_to(root).as_posix()
            module = name[: -len(".pyc")]
            if module == "__init__":
                module = here.name
            yield IntegrityFinding(
                RULE,
                f"{shown} is bytecode with no source beside it: Python imports it as "
                f"{module} from a folder on sys.path (pytest puts the tests' folders there), in "
                "place of the project's module of that name, and the change never shows it",
                shown,
            )
    if compiled and not builds_extensions():
        for path in compiled:
            shown = path.relative_to(root).as_posix()
            yield IntegrityFinding(
                "compiled-code-added",
                f"{shown} is an extension module, machine code Python imports from a folder "
                "of the project's code, and the project had no source to build one at the "
                "base: what it does, the change does not show",
                shown,
            )


def _is_package(names: set[str]) -> bool:
    """Whether a folder holding ``names`` is a package: an ``__init__`` of any suffix Python
    imports (an extension module's too: red team 31)."""
    return any(is_package_init(name) for name in names)


def _import_roots(root: Path, listing: dict[Path, set[str]]) -> set[Path]:
    """The folders Python or pytest puts on ``sys.path``: the project and its ``src``, the
    folders pytest's settings name in ``pythonpath``, and, as pytest's default ``prepend``
    import mode does, the first folder upward from each test module or ``conftest.py`` that is
    no package."""
    roots = {root, root / "src"}
    settings = _pytest_settings(root)
    for entry in _split_words(settings.get("pythonpath")):
        roots.add(Path(os.path.normpath(root / entry)))
    patterns = _split_words(settings.get("python_files")) or ["test_*.py", "*_test.py"]
    for here, names in listing.items():
        if not any(
            n == "conftest.py" or (n.endswith(".py") and any(fnmatch(n, p) for p in patterns))
            for n in names
        ):
            continue
        folder = here
        while folder != root and _is_package(listing.get(folder, set())):
            folder = folder.parent
        roots.add(folder)
    return roots


def _importable(folder: Path, roots: set[Path], listing: dict[Path, set[str]]) -> bool:
    """Whether modules of ``folder`` are imported: it is on ``sys.path``, or a package (an
    ``__init__``) importable from a folder that is."""
    while folder not in roots:
        if not _is_package(listing.get(folder, set())) or folder.parent == folder:
            return False
        folder = folder.parent
    return True


def _pytest_settings(root: Path) -> dict[str, Any]:
    """The settings pytest reads from the project's folder, in pytest's order."""
    from pytest_agentgate.integrity import pytest_files

    for name in pytest_files.FILES:
        try:
            text = read_regular_text(root / name)
        except (OSError, ValueError):
            continue
        table = pytest_files.read(name, text)
        if table is not None:
            return table.values
    return {}


def _split_words(value: Any) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else [value] if value else []
    return [w for item in items for w in str(item).split()]


def _python_files(scan: Scan) -> list[str]:
    """The project's Python files: tracked at the base, and those the change adds or edits."""
    found: dict[str, None] = {}
    with contextlib.suppress(Exception):  # a snapshot, or git failing: the change alone
        for path in scan.repo.tracked_at(scan.change.base):
            relative = scan.change.relative(path, scan.root)
            if relative is not None and relative.endswith(".py"):
                found[relative] = None
    for path, status in scan.touched.items():
        if status != "deleted" and path.endswith(".py"):
            found[path] = None
    return list(found)


def _pytest_tail(tag: str) -> str | None:
    """The end of the name of the pycs pytest's assertion rewriting writes, by its version: the
    imported pytest's (the witness's), else the installed one's, read without importing it (a
    fifth of a second of the hook's time)."""
    loaded = sys.modules.get("pytest")
    version = getattr(loaded, "__version__", None)
    if not isinstance(version, str):
        from importlib import metadata

        try:
            version = metadata.version("pytest")
        except metadata.PackageNotFoundError:
            return None
    return f".{tag}-pytest-{version}.pyc"


def _kind(name: str, stem: str, tag: str, pytest_tail: str | None) -> str | None:
    """What a pyc in ``__pycache__`` is for ``stem``: ``"0"``, ``"1"``, ``"2"`` (the
    optimization level of Python's own) or ``"pytest"``; None when it is not this
    interpreter's pyc of this file."""
    if not name.startswith(stem + "."):
        return None
    rest = name[len(stem) :]
    if rest == f".{tag}.pyc":
        return "0"
    if rest in (f".{tag}.opt-1.pyc", f".{tag}.opt-2.pyc"):
        return rest[-5]
    if pytest_tail is not None and rest == pytest_tail:
        return "pytest"
    return None


def unlike_pycs(source_path: Path, remembered: Remembered) -> list[str]:
    """The names of the pycs in ``__pycache__`` beside the installed module ``source_path``
    that Python or pytest loads in its place (their headers say they are up to date) and that
    are not compiled from it: the witness asks this of the test tools' modules, whose sources
    their packages' ``RECORD`` vouches for, but not the bytecode Python runs (red team 11: a
    pyc of pytest's ``reports.py`` that passes every test, with the header of the untouched
    file)."""
    tag = sys.implementation.cache_tag or ""  # "" on an interpreter that writes no bytecode
    pytest_tail = _pytest_tail(tag) if tag else None
    try:
        names = sorted(os.listdir(source_path.parent / "__pycache__")) if tag else []
    except OSError:
        return []
    unlike: list[str] = []
    stem = source_path.stem
    for name in names:
        kind = _kind(name, stem, tag, pytest_tail)
        if kind is None:
            continue
        pyc = source_path.parent / "__pycache__" / name
        if _loaded_unlike(source_path, pyc, kind, remembered):
            unlike.append(name)
    return unlike


def read_unlike(source_path: Path, pyc: Path, remembered: Remembered) -> bool:
    """Whether ``pyc``, a pyc of Python's own (or pytest's) that the import system read for
    ``source_path`` (wherever it was: ``sys.pycache_prefix`` puts it outside ``__pycache__``),
    says it is up to date and is not compiled from it."""
    tag = sys.implementation.cache_tag
    kind = _kind(pyc.name, source_path.stem, tag, _pytest_tail(tag)) if tag else None
    return kind is not None and _loaded_unlike(source_path, pyc, kind, remembered)


def _check(
    root: Path, path: str, source_path: Path, pyc: Path, kind: str, remembered: Remembered
) -> IntegrityFinding | None:
    if not _loaded_unlike(source_path, pyc, kind, remembered):
        return None
    from pytest_agentgate.integrity.model import IntegrityFinding

    shown = PurePosixPath(path).parent / "__pycache__" / pyc.name
    loader = "pytest" if kind == "pytest" else "Python"
    return IntegrityFinding(
        RULE,
        f"{shown} is not compiled from {PurePosixPath(path).name}, and {loader} loads it in its "
        "place (its header says it is up to date): the tests run code that is not in the file",
        path,
    )


def _loaded_unlike(source_path: Path, pyc: Path, kind: str, remembered: Remembered) -> bool:
    """Whether Python (or pytest, for ``kind`` ``"pytest"``) loads ``pyc`` in place of
    ``source_path`` (its header says it is up to date) and it is not compiled from it."""
    try:
        stat = source_path.stat()
        unchanged = _unchanged_key(stat, pyc.stat())
        if unchanged in remembered:
            return False  # both files as they were when found alike: neither is read again
        data = read_regular(pyc)
        source = read_regular(source_path)
    except OSError:
        return False
    if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
        return False  # another interpreter's: not loaded by this one
    flags = int.from_bytes(data[4:8], "little")
    if flags & _FLAG_HASH:  # pytest 9 writes checked ones; Python unchecked ones on request
        if flags & _FLAG_CHECK and data[8:16] != importlib.util.source_hash(source):
            return False  # checked against its source, and stale: compiled again
    else:
        mtime = int.from_bytes(data[8:12], "little")
        size = int.from_bytes(data[12:16], "little")
        if mtime != int(stat.st_mtime) & 0xFFFFFFFF or size != stat.st_size & 0xFFFFFFFF:
            return False  # stale by its header: Python compiles the source again
    key = hashlib.sha256(_ALIKE.encode() + b"\0" + source + b"\0" + data).hexdigest()[:32]
    if key in remembered:
        remembered.add(unchanged)
        return False
    try:
        loaded = marshal.loads(data[16:])
        alike = isinstance(loaded, CodeType) and any(
            _behaviour(loaded) == _behaviour(compiled)
            or _behaviour(loaded, _instructions) == _behaviour(compiled, _instructions)
            for compiled in _compiled(source, source_path, kind)
        )
    except (ValueError, EOFError, TypeError, SyntaxError, RecursionError, MemoryError):
        alike = False
    if alike:
        remembered.add(key)
        remembered.add(unchanged)
    return not alike


def _unchanged_key(*stats: os.stat_result) -> str:
    """A key of files as they are: where they are (device, inode), their size, and when their
    content and their inode last changed. The inode's change time is the kernel's: no user
    sets it (``touch`` sets the other times, and changes it to now), so a file written since,
    even given its old modification time back, has another key."""
    fields = [(s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns) for s in stats]
    return f"stat{_ALIKE}:" + hashlib.sha256(repr(fields).encode()).hexdigest()[:32]


def _code_bytes(code: CodeType) -> tuple[bytes, bytes]:
    """A code object's instructions as bytes, with its exception table (Python 3.11 and later):
    where each instruction's exception goes is control flow too (red team 26 sent a failing
    assert's ``raise`` to the function's ``return None`` by one entry added to a pyc's table)."""
    return code.co_code, getattr(code, "co_exceptiontable", b"")


def _behaviour(
    code: CodeType, instructions: Callable[[CodeType], object] = _code_bytes
) -> tuple[Any, ...]:
    """What a code object does, without where its lines are: a patch release of Python may
    number lines differently (a fixed line table) under the same magic number. Its
    ``instructions`` are its bytes and exception table, or (:func:`_instructions`) what they
    do."""
    consts = tuple(
        _behaviour(c, instructions) if isinstance(c, CodeType) else c for c in code.co_consts
    )
    return (
        instructions(code),
        consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_flags,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_name,
    )


_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(getattr(dis, "hasjump", ()))
_GOTO = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP"})
_FILLER = frozenset({"CACHE", "NOP", "EXTENDED_ARG"})


def _instructions(code: CodeType) -> tuple[tuple[str, object], ...]:
    """The instructions of ``code`` as what they do: each name and argument, a jump's target
    as the place it ends at (through jumps to jumps), counted in instructions, without the
    interpreter's fillers. Patch releases of Python under one magic number compile some code
    apart this way only (3.11.2 jumps to a jump that 3.11.7 threads through: pytest's
    ``terminal.py``), and a pyc of another patch release is loaded as it is."""
    every = list(dis.get_instructions(code))
    listed = [i for i in every if i.opname not in _FILLER]
    at: dict[int, int] = {}  # an offset: the instruction that runs there (fillers skipped)
    runs = 0
    for instruction in every:
        at[instruction.offset] = runs
        runs += instruction.opname not in _FILLER
    shown: list[tuple[str, object]] = []
    for instruction in listed:
        argument: object = instruction.argval
        if instruction.opcode in _JUMPS and isinstance(argument, int):
            target, hops = at.get(argument, -1), 0
            while 0 <= target < len(listed) and listed[target].opname in _GOTO and hops < 64:
                following = listed[target].argval
                if not isinstance(following, int):
                    break
                target, hops = at.get(following, -1), hops + 1
            argument = ("to", target)
        elif isinstance(argument, CodeType):
            argument = _behaviour(argument, _instructions)
        shown.append((instruction.opname, argument))
    # Where an exception raised in each range of instructions goes, counted as they are.
    entries = getattr(dis.Bytecode(code), "exception_entries", ())
    for entry in entries:
        span = (at.get(entry.start, -1), at.get(entry.end, runs), at.get(entry.target, -1))
        shown.append(("except", (*span, entry.depth, entry.lasti)))
    return tuple(shown)


def _compiled(source: bytes, path: Path, kind: str) -> Iterator[CodeType]:
    """The code Python (or pytest, rewriting asserts) makes of ``source``. What the compiler
    warns of (``assert (x, "msg")``: "assertion is always true") is the project's to hear from
    its own tools, not printed by agentgate."""
    if kind != "pytest":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = compile(source, str(path), "exec", dont_inherit=True, optimize=int(kind))
        yield code
        return
    from _pytest.assertion.rewrite import rewrite_asserts

    for pass_hook in (False, True):  # `enable_assertion_pass_hook`, as the project sets it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = syntax.parse(source, str(path))
            rewrite_asserts(tree, source, str(path), _Ini(pass_hook))  # type: ignore[arg-type]
            code = compile(tree, str(path), "exec", dont_inherit=True)
        yield code


class _Ini:
    """The one ini value assertion rewriting reads from pytest's config."""

    def __init__(self, pass_hook: bool) -> None:
        self.pass_hook = pass_hook

    def getini(self, name: str) -> Any:
        return self.pass_hook if name == "enable_assertion_pass_hook" else None


class Remembered:
    """Source and pyc pairs found alike, by digest, in the user's state directory."""

    def __init__(self, root: Path) -> None:
        from pytest_agentgate.state.storage import user_state_home

        project = hashlib.sha256(str(root.resolve()).encode(errors="surrogateescape"))
        self.path = user_state_home() / CACHE_DIR / f"{project.hexdigest()[:32]}.json"
        self.keys: set[str] = set()
        self.added = False
        from pytest_agentgate.state import seal

        with contextlib.suppress(OSError, ValueError, RecursionError):
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            # Sealed (state/seal.py): a key written in by hand (red team 18 added its forged
            # pyc's) is not a pair found alike; the pairs are compared again.
            kept = doc.get("keys") if isinstance(doc, dict) and seal.intact(doc) else None
            if isinstance(kept, list):
                self.keys = {k for k in kept if isinstance(k, str)}

    def __contains__(self, key: str) -> bool:
        return key in self.keys

    def add(self, key: str) -> None:
        self.keys.add(key)
        self.added = True

    def save(self) -> None:
        if not self.added:
            return
        from pytest_agentgate.state import seal
        from pytest_agentgate.state.storage import write_atomic

        keys = sorted(self.keys)[-MAX_REMEMBERED:]
        self.added = False
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(self.path, json.dumps(seal.sealed({"keys": keys})), mode=0o600)
