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

The code the import system executes for a file (the audit event ``exec``) is kept as the
file's own: :func:`_by_the_import_system` knows the import system by its function objects,
taken when this module is imported (before any conftest), never by a frame's file name, which
any code can be compiled under (``<frozen importlib._bootstrap>``). A frame running under the
name of a file of the project is the project's only when the import system made its code
(:func:`_the_files_own`): a helper the tests compile under ``setup.py``'s name is theirs.

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
import importlib._bootstrap
import importlib._bootstrap_external
import importlib.util
import os
import re
import stat
import sys
from collections.abc import Callable, Sequence
from types import CodeType, FrameType

# The most sources kept per file, and files kept: enough for a module reloaded a few times.
_PER_FILE = 8
_FILES = 20_000
_sources: dict[str, list[str]] = {}
_before: dict[str, str] = {}
_foreign: dict[str, set[str]] = {}
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
# Per file of the project, the real path of the pyc last opened in its place: Python's own,
# and pytest's (of a module its assertion rewriter rewrote).
_pycs_read: dict[str, str] = {}
_pytest_pycs_read: dict[str, str] = {}
# pytest's pyc of a test module it rewrote: `test_x.cpython-311-pytest-9.2.0.pyc`.
_PYTEST_PYC = re.compile(r"(?P<stem>[^/\\]+)\.(?P<tag>[^./\\]+)-pytest-[^/\\]+\.pyc")
# Files and folders the run read outside the watched folders (read_outside), and whether
# there were more than could be kept.
_outside: set[str] = set()
_outside_overflow: list[bool] = []
# Names read in the watched folders or in the kernel's views, whose real paths are known only
# at the end (read_outside): a link in the project to a folder outside it, `/proc/self/root/...`
# (red team 28), and the files the project's code read in its tools' caches.
_through: set[str] = set()
_THROUGH = 200_000
# What the key of the tree leaves out (state/cache.py ``left_out``), taken when the hook is
# added: the hook imports nothing.
_LEFT_OUT: list[Callable[[Sequence[str]], bool]] = []
# The name of agentgate's own folder in the project (state/storage.py ``STATE_DIR``), likewise.
_STATE: list[str] = []
_MACHINES: list[str] = []
# The kernel's views of itself and of processes: nothing of the project's.
_KERNELS = ("/proc/", "/sys/")
# Files of code (imported, or loaded by the interpreter) in the interpreter's folders.
_CODE = (".py", ".pyc", ".pyi", ".pth", ".so", ".pyd", ".dylib", ".dll", ".typed")
# Events that list a folder, and read what it holds.
_LISTS = frozenset({"os.listdir", "os.scandir"})
# The folders pytest lists to number and clean its temporary folders (tmp_path): every pytest
# run, of any project, changes them. What the tests read in them is kept.
_PYTESTS_TEMPORARY = re.compile(r"[/\\]pytest-of-[^/\\]+(?:[/\\]pytest-\d+)?[/\\]?$")
# Per file of the project, the code objects the import system executed for it.
_imported: dict[str, set[CodeType]] = {}
# Per file of the project, the module code the import system last executed for it.
_module_code: dict[str, CodeType] = {}
# Whose code compiled an AST during the run: "tests", "project", "libraries" (_made_by).
_ast_compiled: set[str] = set()
# Per name of code made at run time ("<makefun-gen-1>"), whose code compiled it (_made_by).
_runtime: dict[str, set[str]] = {}
# Per function name a "<string>" compiled at run time defines, whose code compiled it.
_strings: dict[str, set[str]] = {}
# Per function name a "<string>" defines: whether installed code compiled each such text
# itself, for whoever called it (SQLAlchemy's `decorator` writing a wrapper of a test's
# signature).
_strings_in_libraries: dict[str, bool] = {}
_DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
# The start of a "<string>" source read for the names it defines.
_DEFINED_READ = 1 << 16
# A file bigger than this is not read for the snapshot (a generated table).
_MAX_BYTES = 16 * 1024 * 1024
_PACKAGES = frozenset({"site-packages", "dist-packages"})
_PLACES: list[tuple[str, ...]] = []
_paused = False
# The files of the project whose modules were imported before the hook was added: nothing was
# kept of how their code was made.
_at_start: set[str] = set()
# The code of the import system's own frames, taken before any conftest.py could replace a
# function (a name or a file's name can be given to any code; these objects cannot):
# ``_call_with_frames_removed``, which calls exec for the standard loaders' ``exec_module``.
_CALLED_FOR_IMPORT = vars(importlib._bootstrap)["_call_with_frames_removed"].__code__
_EXEC_MODULE = vars(importlib._bootstrap_external)["_LoaderBasics"].exec_module.__code__
# pytest's assertion rewriter's exec_module, when pytest is loaded as the hook is added.
_REWRITER: list[CodeType] = []
# What a loader may not have in its own __dict__, nor from a class of the project's or the
# tests': the methods that give exec_module its code.
_LOADER_METHODS = ("get_code", "get_data", "source_to_code", "path_stats", "get_filename")


def watch(project: str) -> None:
    """Keep, from now on, the sources compiled for the ``.py`` files under ``project``."""
    root = os.path.realpath(project) + os.sep
    if root in _watched:
        return
    _watched.append(root)
    for module in list(sys.modules.values()):
        with contextlib.suppress(Exception):  # a module object whose __getattr__ raises
            real = _project_file(getattr(module, "__file__", None))
            if real is not None:
                _at_start.add(real)
    if len(_watched) > 1:
        return  # one hook serves every folder watched
    from pytest_agentgate.state.cache import left_out
    from pytest_agentgate.state.storage import STATE_DIR

    _LEFT_OUT.append(left_out)
    _STATE.append(STATE_DIR)
    rewriter = getattr(sys.modules.get("_pytest.assertion.rewrite"), "AssertionRewritingHook", None)
    code = getattr(getattr(rewriter, "exec_module", None), "__code__", None)
    if isinstance(code, CodeType):
        _REWRITER.append(code)
    reader = getattr(
        getattr(sys.modules.get("_pytest.assertion.rewrite"), "_read_pyc", None), "__code__", None
    )
    if isinstance(reader, CodeType):
        _IMPORT_READS.add(reader)
    sys.addaudithook(_audit)


def _audit(event: str, args: tuple[object, ...]) -> None:
    if not _paused:  # the hook's own tests call _hook with the events they make up
        _hook(event, args)


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event == "compile":
        with contextlib.suppress(Exception):  # a hook never raises into the code it watches
            _keep(*args)
    elif event == "exec":
        with contextlib.suppress(Exception):
            _executed(args[0])
    elif event == "open":
        with contextlib.suppress(Exception):
            path, mode, flags = args
            if (mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS) or (
                isinstance(mode, str) and any(c in mode for c in "wax+")
            ):
                _written(path)
                _data_written(path)
            else:
                if isinstance(path, str) and path.endswith(".pyc"):
                    _bytecode_opened(path)
                _read_outside(path)
    elif event in _LISTS:
        with contextlib.suppress(Exception):
            _read_outside(args[0], listed=True)
    elif event == "sqlite3.connect":
        with contextlib.suppress(Exception):
            _read_outside(_sqlite_file(args[0]))
    elif event in _WRITES:
        with contextlib.suppress(Exception):
            _written(args[_WRITES[event]])
            _data_written(args[_WRITES[event]])
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


def _read_outside(path: object, listed: bool = False) -> None:
    """Keep a file or folder the run read outside the watched folders (:func:`read_outside`)."""
    if not isinstance(path, (str, bytes)):
        return  # a file descriptor: its file was opened, and seen, before
    name = os.fsdecode(path)
    if listed and _PYTESTS_TEMPORARY.search(name):
        return  # pytest listing its temporary folders to number and clean them
    if not os.path.isabs(name):
        name = os.path.join(os.getcwd(), name)
    if not listed and _another_process(name):
        # The environment another process was started with: the agent's own `agentgate
        # verify` and the stop hook differ there, in what the cache does not key (red team 45:
        # an ancestor's /proc/PID/environ read for NO_COLOR=1). A run that read it is kept for
        # no other.
        _outside_overflow.append(True)
        return
    if name.startswith(_KERNELS) or _in_watched(name):
        if listed and _agentgates_folder(name):
            # Listed by a walk of the project (pytest with no `.*` in `norecursedirs`): its
            # names change with every run, and no run of the project's decides them (review
            # 19). What the tests read in it is keyed as ever.
            return
        # Resolved at the end: a name may lead out of the project, or out of the kernel's
        # views (red team 28).
        if not (_left_out_by_the_tree(name) and _agentgates_own_read()):
            if name in _through or len(_through) < _THROUGH:
                _through.add(name)
            else:
                _outside_overflow.append(True)
        return
    if _not_keyed(name, listed) or (name.startswith(_state_home()) and _agentgates_own_read()):
        return
    if name.endswith(_CODE) and _in_machines(name) and _read_for_an_import():
        return  # code the interpreter imports from its own folders: keyed as the tools
    if _LEFT_OUT and _LEFT_OUT[0](name.split(os.sep)) and _agentgates_own_read():
        return  # its own state, in a project spelled another way (a link to it, `//home/...`)
    if name in _outside or len(_outside) < _FILES:
        _outside.add(name)
    else:
        _outside_overflow.append(True)


# What a process was started with, in the kernel's view of processes: /proc/PID/environ (a
# thread's too). Only that: reading another process's command line or state is what tests of
# process handling do (agentgate's own suite, psutil's children), and a run that read them is
# kept as any other.
_PROCESS_ENVIRON = re.compile(r"/proc/(\d+)/(?:task/\d+/)?environ")


def _another_process(name: str) -> bool:
    """Whether ``name`` is the environment of another process than this one, under /proc."""
    found = _PROCESS_ENVIRON.fullmatch(os.path.normpath(name))
    return found is not None and int(found.group(1)) != os.getpid()


def _left_out_by_the_tree(name: str) -> bool:
    """Whether ``name``, in a watched folder, is a file the key of the tree leaves out (a
    tool's cache folder, ``.git``, ...): what the tests read there is keyed as what they read
    outside the project (red team 28: a data file in `invoice/.mypy_cache`; red team 29: read
    from a worker thread, where no code of the project's is on the stack)."""
    root = next((r for r in _watched if name.startswith(r)), None)
    if root is None or not _LEFT_OUT:
        return False
    return _LEFT_OUT[0](name[len(root) :].split(os.sep))


def _agentgates_folder(name: str) -> bool:
    """Whether ``name`` is agentgate's own folder in a watched folder, or a folder in it."""
    root = next((r for r in _watched if name.startswith(r)), None)
    if root is None or not _STATE:
        return False
    return name[len(root) :].split(os.sep, 1)[0] == _STATE[0]


def _in_watched(name: str) -> bool:
    """Whether ``name`` is a watched folder or in one (the cache keys the project's files)."""
    return any(name.startswith(root) or name == root[:-1] for root in _watched)


def _not_keyed(name: str, listed: bool) -> bool:
    """Whether a read of ``name`` decides nothing the cache must key: the project's own files
    (keyed as the tree), the kernel's views, and the import system's looks at the folders of
    the interpreter's installation, of its site folders and of agentgate (the cache keys those
    folders as the tools). Files read there are keyed but the code the import system reads
    (:func:`_read_for_an_import`): the base Python's folder is the user's to write (pyenv,
    uv), and so is `/dev/shm` (red team 26)."""
    if name.startswith(_KERNELS) or _in_watched(name):
        return True
    return listed and _in_machines(name)


def _in_machines(name: str) -> bool:
    return os.path.join(name, "").startswith(_machines_own())


def _read_for_an_import() -> bool:
    """Whether the file being opened is read by the import system (its loaders' ``get_data``,
    known by the function's code object, taken before any conftest), not by code that reads a
    file named like code as data (red team 27: a `minimum.py` in the Python installation's
    folder read with `read_text`)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return frame is not None and frame.f_code in _IMPORT_READS


# The import system's own readers of the files it imports; pytest's assertion rewriter's
# reader of its pycs is added when the hook is added (:func:`watch`).
_IMPORT_READS = {
    vars(importlib._bootstrap_external)["FileLoader"].get_data.__code__,
    vars(importlib._bootstrap_external)["SourceLoader"].get_code.__code__,
}


def _agentgates_own_read() -> bool:
    """Whether the file being opened is opened by agentgate's own code (the witness reading
    its remembered pairs in the user's state directory), past the standard library's frames."""
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    library = _standard_library()
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        where = frame.f_code.co_filename
        if where != __file__ and not where.startswith(library) and not where.startswith("<"):
            return where.startswith(own)
        frame = frame.f_back
    return False


def _standard_library() -> str:
    import sysconfig

    return os.path.join(sysconfig.get_paths()["stdlib"], "")


def _state_home() -> str:
    from pytest_agentgate.state.storage import user_state_home

    return os.path.join(str(user_state_home()), "")


def _sqlite_file(database: object) -> object:
    """The file a ``sqlite3.connect`` opens (SQLite opens it in C: no ``open`` event; red team
    26 kept the value the product read in a database), from a path or a ``file:`` URI; None
    for a database in memory."""
    if isinstance(database, (bytes, os.PathLike)):
        database = os.fsdecode(database)
    if not isinstance(database, str) or database in ("", ":memory:"):
        return None
    if database.startswith("file:"):
        from urllib.parse import unquote, urlsplit

        return unquote(urlsplit(database).path) or None
    return database


def _machines_own() -> tuple[str, ...]:
    """The interpreter's installation and its environment's site folders, and agentgate's own
    package: where the code the run imports comes from (:func:`_not_keyed`)."""
    if not _MACHINES:
        folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        folders.update(p for p in sys.path if p.endswith(tuple(_PACKAGES)))
        folders.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        found = {os.path.join(f, "") for f in folders if f}
        found |= {os.path.join(os.path.realpath(f), "") for f in folders if f}
        _MACHINES.extend(sorted(found))
    return tuple(_MACHINES)


def read_outside() -> list[str] | None:
    """The files and folders outside the project that the run's code read (opened for reading,
    listed), as real paths; None when there were too many to keep. The verdict cache keys
    them: a pass kept while a file the code under test reads (``~/.config/app/charge``) held
    one value is not reused once it holds another (red team 25). Existence checks
    (``os.stat``) raise no audit event: a file only looked for is not seen; nor is what a
    library written in C opens itself (SQLite's is: its own event)."""
    if _outside_overflow:
        return None
    found = set()
    for name in _outside:
        real = os.path.realpath(name)
        if _in_watched(real):
            if _left_out_by_the_tree(real):
                found.add(real)  # the project's, spelled another way (`//home/...`: red team 29)
            continue
        if _not_keyed(real, os.path.isdir(real)) or _a_device(real):
            continue
        found.add(real)
        if real != os.path.normpath(name):
            # The name as it was opened too, keyed as a link: one pointed elsewhere since
            # changes no file it pointed at (red team 27).
            found.add(os.path.normpath(name))
    folders: dict[str, str] = {}
    for name in _through:
        folder, base = os.path.split(name)
        if folder not in folders:
            folders[folder] = os.path.realpath(folder)
        real = os.path.join(folders[folder], base)
        if os.path.islink(real):
            real = os.path.realpath(real)
        if _in_watched(real) and not _left_out_by_the_tree(real):
            continue  # the project's own file: keyed as the tree
        if real.startswith(_KERNELS) or _a_device(real):
            continue
        found.add(real)  # through a link, or in a tool's cache folder
    return sorted(found)


def _a_device(path: str) -> bool:
    """``/dev/null``, ``/dev/urandom``, a terminal: no content to key."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _bytecode_opened(path: str) -> None:
    """Keep the pyc read for a ``.py`` file of a watched folder: the bytecode the import system
    runs in its place, wherever ``sys.pycache_prefix`` (or ``PYTHONPYCACHEPREFIX``) put it at
    that moment (red team 25: a conftest pointed it at a folder holding fixed bytecode with the
    file's own header). The module's ``__spec__.cached`` is the module's to rewrite; this is
    what was opened."""
    folder, name = os.path.split(path)
    rewritten = _PYTEST_PYC.fullmatch(name)  # pytest's own, of a module it rewrites
    if rewritten is not None:
        path = os.path.join(folder, f"{rewritten['stem']}.{rewritten['tag']}.pyc")
    source = _project_file(importlib.util.source_from_cache(path))
    if source is None or not _read_for_an_import():
        return  # a pyc read as data (a test of bytecode), not run
    kept = _pytest_pycs_read if rewritten is not None else _pycs_read
    if source in kept or len(kept) < _FILES:
        kept[source] = os.path.realpath(os.path.join(folder, name))


def bytecode_read(path: str) -> str | None:
    """The pyc of Python's own the import system last opened for the project's file ``path``
    (a real path). pytest's, of a module its assertion rewriter rewrote, is not: a project
    that is a pytest plugin has its modules rewritten, asserts and all (:func:`bytecode_reads`
    has them, for the tests' own modules)."""
    return _pycs_read.get(path)


def bytecode_reads() -> dict[str, str]:
    """Each file of the project, and the pyc last opened in its place (pytest's first)."""
    return {**_pycs_read, **_pytest_pycs_read}


def _snapshot() -> None:
    """What each ``.py`` file of the watched folders outside the tests holds now."""
    from pytest_agentgate.testcode import is_test_code
    from pytest_agentgate.venvs import an_environment

    for root in list(_watched):
        for folder, dirs, files in os.walk(root):
            dirs[:] = [
                d
                for d in dirs
                if not d.startswith(".")
                and d not in _NOT_WALKED
                and not an_environment(os.path.join(folder, d))
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
    from pytest_agentgate.texts import read_regular

    try:
        if os.stat(real).st_size > _MAX_BYTES:
            return  # a generated table of hundreds of megabytes: not read whole for this
        # Only a regular file, opened without blocking (a FIFO named x.py would hang here);
        # a read: this hook passes over its own open.
        _before[real] = hashlib.sha256(read_regular(real)).hexdigest()
    except OSError:
        return  # no file yet: nothing the run could have swapped


# A data file of the project's code (not a module: `invoice/rates.json`) that the tests' code
# wrote while the run went on, and where the tests' code was (red team 22: a conftest's session
# fixture wrote the value the tests needed and put the file back after them).
_data: dict[str, str] = {}
# Files a package holds that are the tools' or Python's, not data the code reads.
_NOT_DATA = (".py", ".pyc", ".pyo", ".coverage", ".lock")


def _data_written(path: object) -> None:
    if len(_data) >= 100 or not isinstance(path, (str, bytes, os.PathLike)):
        return
    name = os.fsdecode(path)
    if name.endswith(_NOT_DATA):
        return
    real = os.path.realpath(name)
    root = next((r for r in _watched if real.startswith(r)), None)
    if root is None or real in _data:
        return
    from pytest_agentgate.testcode import is_test_code

    relative = os.path.relpath(real, root)
    parts = relative.split(os.sep)
    if is_test_code(relative) or any(p.startswith(".") or p in _NOT_WALKED for p in parts):
        return
    folder = os.path.dirname(real)
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return  # not in a package of the project's code: not what its modules read
    place = _tests_frame()
    if place is not None:
        _data[real] = place


def _tests_frame() -> str | None:
    """Where the tests' code is on the stack that makes this event (``file:line`` of its
    innermost frame): a conftest's, a test module's, or code outside the watched folders that
    is neither installed nor the standard library's."""
    from pytest_agentgate.testcode import is_test_code

    stdlib, installed = _places()
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(("<", *installed, *stdlib))):
            here = os.path.realpath(name)
            root = next((r for r in _watched if here.startswith(r)), "")
            if not root or is_test_code(os.path.relpath(here, root)):
                return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def data_written() -> dict[str, str]:
    """The data files of the project's code (real paths) the tests' code wrote during the
    run, each with where the tests' code was."""
    return dict(_data)


def _executed(code: object) -> None:
    """Code executed by the import system (its frame calls ``exec``) for a file of the
    project: every code object in it is the file's, as imported."""
    if not isinstance(code, CodeType):
        return
    real = _project_file(code.co_filename)
    if real is None:
        return
    caller = sys._getframe(3)  # _executed, _hook, _audit, then whoever called exec
    if not _by_the_import_system(caller):
        return
    kept = _imported.setdefault(real, set())
    if len(kept) < 100_000:
        kept.update(code_tree(code))
    if code.co_name == "<module>":
        _module_code[real] = code


def _by_the_import_system(caller: FrameType) -> bool:
    """Whether the frame that called exec is the import system executing a module: the
    standard loaders' ``exec_module`` (through ``_call_with_frames_removed``) with a loader
    that gets its code as the standard ones do, or pytest's assertion rewriter. Code the tests
    compile under ``<frozen importlib._bootstrap>``, the import system's function called by
    the tests' code (``_call_with_frames_removed(exec, fixed, vars(calc))``), and a loader the
    tests gave a ``get_code`` of their own are not."""
    if caller.f_code in _REWRITER:
        return True
    above = caller.f_back
    if caller.f_code is not _CALLED_FOR_IMPORT or above is None or above.f_code is not _EXEC_MODULE:
        return False
    loader = above.f_locals.get("self")
    own = getattr(loader, "__dict__", {})
    for name in _LOADER_METHODS:
        if name in own:
            return False
        method = getattr(getattr(type(loader), name, None), "__code__", None)
        if isinstance(method, CodeType) and _project_file(method.co_filename) is not None:
            return False  # a loader class of the project's or the tests'
    return True


def code_tree(code: CodeType) -> list[CodeType]:
    """The code object and every one nested in it (its functions', classes', lambdas')."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found.extend(code_tree(const))
    return found


def _made_by() -> str:
    """Whose code made this event: the first frame that is neither installed code, the
    standard library nor this module's. ``"tests"``: a test's, a conftest's or a file outside
    the watched folders; ``"project"``: the project's own (a module decorated as it is
    imported); ``"libraries"``: none, below installed code (pytest rewriting a test module it
    collects). A thread whose stack holds only the standard library's frames (a pool the tests
    started) is the tests' until shown otherwise."""
    from pytest_agentgate.testcode import is_test_code

    stdlib, installed = _places()
    below_a_library = False
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(installed):  # first: site-packages may lie inside the stdlib's
            below_a_library = True
        elif not (name.startswith("<") or name.startswith(stdlib)):
            here = os.path.realpath(name)
            root = next((r for r in _watched if here.startswith(r)), "")
            if not root or is_test_code(os.path.relpath(here, root)):
                return "tests"
            # Code the tests compiled under the name of a file of the project poses as it.
            return "project" if _the_files_own(frame.f_code, here) else "tests"
        frame = frame.f_back
    return "libraries" if below_a_library else "tests"


def _compiled_in_a_library() -> bool:
    """Whether the code that called ``compile`` (past the standard library and this module)
    is installed code: a library's own text, whoever asked for it."""
    stdlib, installed = _places()
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(installed):
            return True
        if not (name.startswith("<") or name.startswith(stdlib)):
            return False
        frame = frame.f_back
    return False


def compiled_in_a_library(function: str) -> bool:
    """Whether installed code compiled a ``"<string>"`` that defines ``function``, and no
    other code compiled one that does."""
    return _strings_in_libraries.get(function, False)


def _the_files_own(code: CodeType, path: str) -> bool:
    """Whether ``code``, running under the name of the project's file ``path``, is code the
    import system made for that file (or the file's module was imported before the hook was
    added, when nothing was kept of it)."""
    kept = _imported.get(path)
    if kept is None:
        return path in _at_start
    return code in kept


def _places() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the standard library and this module's folder, installed code): where code that only
    passes an event on lives."""
    if not _PLACES:
        import sysconfig

        paths = sysconfig.get_paths()
        stdlib = {paths.get("stdlib", ""), paths.get("platstdlib", ""), os.path.dirname(__file__)}
        installed = {paths.get("purelib", ""), paths.get("platlib", "")}
        installed.update(p for p in sys.path if os.path.basename(p) in _PACKAGES)
        for group in (stdlib, installed):
            group.discard("")
            group.update(os.path.realpath(p) for p in list(group))
            _PLACES.append(tuple(sorted(p.rstrip(os.sep) + os.sep for p in group)))
    return _PLACES[0], _PLACES[1]


def _keep(source: object, filename: object) -> None:
    if not isinstance(source, (bytes, str)):
        # An AST (Python names no file for it): what a library makes of a source seen before
        # (typeguard instrumenting a function), or the tests' own code compiling one.
        _ast_compiled.add(_made_by())
        return
    if not isinstance(filename, str):
        return
    if filename.startswith("<"):
        # Code made at run time under a name of its own (makefun: "<makefun-gen-1>"): whose.
        # "<string>", what `exec(text)` names everything, is told apart by the functions its
        # text defines (alembic's helper module writes `alembic.op`'s functions so).
        if filename == "<string>":
            text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
            names = set(_DEFINED.findall(text[:_DEFINED_READ]))
            if names and len(_strings) < _FILES:
                who, direct = _made_by(), _compiled_in_a_library()
                for name in names:
                    _strings.setdefault(name, set()).add(who)
                    _strings_in_libraries[name] = direct and _strings_in_libraries.get(name, True)
            return
        made = _runtime.setdefault(filename, set())
        if len(made) < 3 and len(_runtime) < _FILES:
            made.add(_made_by())
        return
    real = _project_file(filename)
    if real is None:
        return
    if len(_foreign.get(real, ())) < 3 and not _read_in(_as_read(source), _file_text(real)):
        _foreign.setdefault(real, set()).add(_made_by())
    # Python hands a str source to the hook as UTF-8 bytes: only what the import system read
    # from the file (its frame calls compile) is what the tests imported.
    caller = sys._getframe(3)  # _keep, _hook, _audit, then whoever called compile
    if not isinstance(source, bytes) or not caller.f_code.co_filename.startswith("<frozen"):
        return
    kept = _sources.get(real)
    if kept is None:
        if len(_sources) >= _FILES:
            return
        kept = _sources[real] = []
    digest = hashlib.sha256(source).hexdigest()
    if digest not in kept and len(kept) < _PER_FILE:
        kept.append(digest)


def _read_in(compiled: list[str] | None, text: list[str] | None) -> bool:
    """Whether the compiled source's lines are the file's, or a run of them (a snippet of a
    docstring that sybil or a doctest runner compiles under the file's name), compared without
    their indentation and blank lines. Code it adds is not, nor the file with lines left out
    (a broken line dropped)."""
    if compiled is None or text is None:
        return compiled == text
    if not compiled:
        return True
    count = len(compiled)
    first = compiled[0]
    return any(line == first and text[at : at + count] == compiled for at, line in enumerate(text))


def _as_read(source: bytes | str) -> list[str] | None:
    """The non-blank lines of the source as Python reads it, without their indentation: decoded
    by its declaration (or as UTF-8: Python hands a str source to the hook encoded so), line
    ends and form feeds as coverage.py reads them."""
    import importlib.util

    texts = []
    if isinstance(source, bytes):
        with contextlib.suppress(UnicodeDecodeError):
            texts.append(source.decode("utf-8"))
        with contextlib.suppress(SyntaxError, UnicodeDecodeError, LookupError):
            texts.append(importlib.util.decode_source(source))
    else:
        texts.append(source)
    if not texts:
        return None
    text = texts[-1] if len(texts) == 1 else texts[0]
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return [line.strip() for line in text.replace("\f", " ").split("\n") if line.strip()]


def _file_text(real: str) -> list[str] | None:
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


def compiled_elsewhere(path: str) -> frozenset[str]:
    """Whose code compiled code under the name of the file ``path`` (a real path) from a
    source the file did not hold then (see :func:`_made_by`); empty when none did."""
    return frozenset(_foreign.get(path, ()))


def imported_code(path: str) -> set[CodeType] | None:
    """The code objects the import system executed for the file ``path`` (a real path); None
    when it executed none (the module was made some other way, or nothing is watched)."""
    return _imported.get(path)


def ast_compiled_by() -> frozenset[str]:
    """Whose code compiled an AST during the run: ``"tests"``, ``"project"``,
    ``"libraries"``."""
    return frozenset(_ast_compiled)


def made_at_run_time_by(name: str, function: str = "") -> frozenset[str]:
    """Whose code compiled code named ``name`` (``"<makefun-gen-1>"``; for ``"<string>"``,
    the code that defines ``function``) during the run: ``"tests"``, ``"project"``,
    ``"libraries"``; empty when nothing watched saw it compiled."""
    if name == "<string>":
        return frozenset(_strings.get(function, ()))
    return frozenset(_runtime.get(name, ()))


def imported_before(path: str) -> bool:
    """Whether the module of the file ``path`` (a real path) was imported before the hook was
    added, when nothing was kept of how its code was made."""
    return path in _at_start


def module_code(path: str) -> CodeType | None:
    """The module code the import system last executed for the file ``path`` (a real path)."""
    return _module_code.get(path)
