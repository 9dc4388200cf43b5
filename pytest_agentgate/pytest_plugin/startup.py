"""Code the Python environment runs at every start that no installed distribution put there.

Python's ``site`` module runs, before any test, each line starting with ``import`` of every
``*.pth`` file in the site-packages folders, then the ``sitecustomize`` and ``usercustomize``
modules. A file written there (say in the project's own ``.venv``, git-ignored, so the change
never shows it) can replace the project's function under test with one that returns what the
test expects, or patch pytest's reporting from a file that counts as installed code. The
witness and the pytest door ask :func:`planted` in the interpreter that runs the tests; the
integrity gate reports each entry (``startup-code-planted``).

What is not planted:

- a ``.pth`` file listed in the ``RECORD`` of a distribution installed in the same folder, with
  the content that ``RECORD`` hashes (editable installs' ``__editable__*.pth`` and ``_NAME.pth``,
  setuptools' ``distutils-precedence.pth``, coverage.py's ``a1_coverage.pth``); the same for a
  ``sitecustomize``/``usercustomize`` module a distribution installed;
- virtualenv's and uv's ``_virtualenv.pth`` (``import _virtualenv``, which their ``venv`` writes
  with no distribution), in an environment whose ``pyvenv.cfg`` names virtualenv or uv;
- a ``sitecustomize`` module in the interpreter's own standard library folder (Debian's and
  Ubuntu's, owned by the operating system's package, not by the project's environment);
- coverage.py's line that measures subprocesses (:data:`COVERAGE_LINES`: the one its
  documentation gave to write by hand, the one coverage.py 7.10 writes while it runs with
  ``patch = subprocess``);
- a ``.pth`` file with path lines only: a path is added to ``sys.path``, no code runs (legacy
  develop installs, conda and many tools write them; a module of the tools loaded from the
  project is found apart, ``tampering.replaced``).

Cheap: it lists the site folders, reads the ``.pth`` files that have code, and reads ``RECORD``
files only while one of them is unaccounted for.

The same holds for the pytest plugins loaded from outside the project (:func:`planted_plugins`):
a plugin is code pytest runs in every test run, and one can rewrite any test's result. A
``zz-0.1.dist-info`` with a ``pytest11`` entry point and a module written beside it in the
virtual environment's site-packages (no installer, so no ``RECORD``), in a folder a ``.pth``
path line there puts on the path, or in a git-ignored folder of the project, is planted; so is
an installed file edited since (its hash is not the ``RECORD``'s). Folders outside the
environment and the project (``PYTHONPATH`` set by whoever runs the gate, the machine's
packages) are not judged, as for startup code. A plugin installed from a local folder rather
than a package index (pip's ``direct_url.json``: an editable install of another checkout, or
``pip install ./folder``) is read: it is planted when one of its hooks can alter test outcomes
as a conftest's would be judged (``integrity.hooks``), or when its code cannot be read
(an extension module, a module too large or that does not parse). A plugin module that is
bytecode without its source (a sourceless ``.pyc``) is planted however it was installed. The
project's own plugins are the integrity gate's to judge in the change.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import os
import re
import site
import sys
import sysconfig
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urlparse

from pytest_agentgate.testcode import TEST_TOOLS

if TYPE_CHECKING:
    from pytest_agentgate.integrity.bytecode import Remembered

# Bounds: a .pth file or RECORD read, the code shown, the entries kept.
MAX_READ = 1 << 20
# A test tool's compiled extension module, read whole to be hashed.
MAX_BINARY = 64 << 20
MAX_SHOWN = 120
MAX_FOUND = 20
# The modules of a plugin's distribution read, at most; a plugin module's source, whole.
MAX_FILES = 200
MAX_SOURCE = 8 << 20
# What a plugin's code that is compiled, cut off or too much of it is (red team 50).
CANNOT_JUDGE = "agentgate cannot read what it does, so it cannot be judged"
CUSTOMIZE = ("sitecustomize", "usercustomize")


class Startup(NamedTuple):
    """One piece of startup code: the file, its line, and the code (shortened); ``system``
    when the file is the machine's, not the tests' environment's (:func:`_system`)."""

    path: str
    line: int
    code: str
    system: bool = False


class _Look:
    """What one look at the environment reads once: the folders judged, the ``RECORD`` files,
    and which installed files are as installed (:func:`recorded`)."""

    def __init__(self) -> None:
        self.folders: tuple[list[str], list[str]] | None = None
        self.records = _Records()
        self.recorded: dict[str, bool | None] = {}


# The look under way (:func:`one_look`), if any.
_LOOKS: list[_Look] = []


@contextlib.contextmanager
def one_look() -> Iterator[None]:
    """Within it, the environment is read once: the witness's look at the end of collection,
    and its look at the end of the session, each see the environment as it is then, and each
    reads its folders and ``RECORD`` files once however many modules and functions ask
    (the test tools' modules hold about ten thousand). Nested looks are the outer one."""
    if _LOOKS:
        yield
        return
    _LOOKS.append(_Look())
    try:
        yield
    finally:
        _LOOKS.clear()


def _records() -> _Records:
    """The look's RECORD files, or a reader of its own outside a look."""
    return _LOOKS[0].records if _LOOKS else _Records()


@one_look()
def planted() -> list[Startup]:
    """The startup code of this interpreter that no installed distribution put there."""
    found: list[Startup] = []
    records = _records()
    for folder in _site_folders():
        for name in _listdir(folder):
            if not name.endswith(".pth") or name.startswith("."):
                continue  # site skips hidden .pth files
            path = os.path.join(folder, name)
            data = _read(path)
            if data is None:
                continue
            code = list(_code_lines(data))
            if not code:
                continue
            if records.owns(folder, name, data) or _virtualenvs(name, data):
                # Its lines are the package's; what they import must be too (red team 13:
                # setuptools' own distutils-precedence.pth imports `_distutils_hack`, edited).
                if not _system(folder):
                    found.extend(_imported_at_start(path, list(_code_lines(data, True)), name))
                continue
            system = _system(folder)
            found.extend(Startup(path, line, text, system) for line, text in code)
    for module_name in CUSTOMIZE:
        where = getattr(sys.modules.get(module_name), "__file__", None)
        if not isinstance(where, str) or _in_stdlib(where):
            continue
        folder, name = os.path.split(where)
        data = _read(where)
        if data is not None and records.owns(folder, name, data):
            continue
        found.append(Startup(where, 1, f"import {module_name}", _system(folder)))
    return found[:MAX_FOUND]


class Install(NamedTuple):
    """A distribution installed in the tests' environment that the run loaded a pytest plugin
    (``plugin``, its module's name) or a test tool's module (``tool``, the tool's name) from:
    its site folder (a real path), its ``*.dist-info`` and the sha256 of its ``RECORD``. The
    integrity gate compares it with the environment the task began with
    (state/task_env.py)."""

    folder: str
    dist: str
    record: str
    plugin: str = ""
    tool: str = ""


def _imported_at_start(path: str, code: list[tuple[int, str]], pth: str) -> Iterator[Startup]:
    """The modules the ``import`` lines of an installed ``.pth`` file imported that are not as
    their packages installed them (``virtualenv``'s ``_virtualenv``, which no package
    installs, is read instead: it may touch no test tool and no environment variable)."""
    for line, text in code:
        for name in dict.fromkeys(a or b for a, b in _IMPORTED.findall(text)):
            module = sys.modules.get(name.partition(".")[0])
            where = getattr(module, "__file__", None)
            if not isinstance(where, str):
                continue
            if name == "_virtualenv" and pth == "_virtualenv.pth":
                said = (_read(where) or b"").decode("utf-8", "replace")
                if not _TOUCHES.search(said):
                    continue
            elif recorded(where) is not False:
                continue
            yield Startup(
                where,
                0,
                f"{name}, imported by {os.path.basename(path)} (line {line}) at every start, "
                "not as its package installed it",
            )


# What a `.pth` line imports: `import a` and `from a import b` in each statement, and
# `__import__('a')` (setuptools' distutils-precedence.pth) or `import_module("a")` anywhere.
_IMPORTED = re.compile(
    r"(?:^|;)\s*(?:import|from)\s+([A-Za-z_][\w.]*)"
    r"|(?:__import__|import_module)\(\s*['\"]([A-Za-z_][\w.]*)['\"]"
)
# What virtualenv's `_virtualenv.py` (distutils' and setuptools' configuration) never touches.
_TOUCHES = re.compile(r"pytest|pluggy|coverage|xdist|environ|getenv|PYTEST|COVERAGE")


@one_look()
def planted_plugins(
    plugins: Iterable[object], project: str, installs: list[Install] | None = None
) -> list[Startup]:
    """The pytest plugins among ``plugins`` (what pytest's plugin manager holds) that no
    installed distribution put where they are loaded from (see the module's docstring); each
    as a :class:`Startup` at line 0, its code ``pytest plugin NAME``. The machine's own folders
    (outside the virtual environment, or every folder without one) are not judged, as for
    startup code. ``installs``, when given, gets each distribution the plugins and the test
    tools' modules were loaded from (:class:`Install`)."""
    root = os.path.realpath(project) + os.sep
    _editable_folders.cache_clear()  # read once per look: an install since is seen
    sites, on_path = _judged_folders()
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
    records = _records()
    found: list[Startup] = []
    seen: set[str] = set()
    for plugin in plugins:
        where = getattr(plugin, "__file__", None) if isinstance(plugin, ModuleType) else None
        if isinstance(plugin, ModuleType) and where is None and _made_in_memory(plugin):
            # Registered by name from a module no file holds (red team 13: `sys.modules`
            # filled and `PYTEST_PLUGINS` set at start by an edited installed module).
            found.append(Startup(f"<{plugin.__name__}>", 0, f"pytest plugin {plugin.__name__}"))
            continue
        if not isinstance(where, str):
            continue
        # A plugin that is no Python source (a sourceless .pyc, an extension module) is judged
        # too, as code that cannot be read (red team 50: a .pyc plugin was passed over).
        real = os.path.realpath(where)
        seen.add(real)
        name = plugin.__name__ if isinstance(plugin, ModuleType) else "?"
        if real.startswith(stdlib):
            parts = real[len(stdlib) :].split(os.sep)
            if "site-packages" in parts or "dist-packages" in parts:
                continue  # the machine's Python's own packages, not judged
            # No module of Python's own is a pytest plugin: one there was written there (red
            # team 13: a user-writable standard library folder).
            shown = f"pytest plugin {name}, in the standard library's folder"
            found.append(Startup(where, 0, shown))
            continue
        code = _unvetted(real, name, root, sites, on_path, records)
        if code is not None:
            found.append(Startup(where, 0, code))
            if len(found) >= MAX_FOUND:
                return found
        elif installs is not None:
            installs.extend(_installed(real, sites + on_path, records, plugin=name))
    found.extend(_tools_replaced(root, sites, on_path, records, seen, installs))
    if installs is not None:
        installs[:] = _merged(installs)
    return found[:MAX_FOUND]


def _made_in_memory(module: ModuleType) -> bool:
    """Whether a module has no file, and is no module of the interpreter's own (built in, or
    frozen) nor a namespace package (folders, no code of its own)."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if module.__name__ in sys.builtin_module_names or origin in ("built-in", "frozen"):
        return False
    locations = getattr(spec, "submodule_search_locations", None)
    return not (origin is None and locations is not None and list(locations))


def _installed(
    real: str, folders: list[str], records: _Records, plugin: str = "", tool: str = ""
) -> list[Install]:
    """The distribution in one of ``folders`` whose RECORD vouches for the file ``real``."""
    folder = next((f for f in folders if real.startswith(f)), None)
    data = _read(real, MAX_READ if real.endswith(".py") else MAX_BINARY) if folder else None
    if folder is None or data is None:
        return []
    owner = records.owner(folder, os.path.relpath(real, folder), data)
    if owner is None:
        return []
    return [Install(folder.rstrip(os.sep), owner, records.digest(folder, owner), plugin, tool)]


def _merged(installs: list[Install]) -> list[Install]:
    """One :class:`Install` per distribution: its first plugin, its first tool."""
    merged: dict[tuple[str, str], Install] = {}
    for install in installs:
        key = (install.folder, install.dist)
        kept = merged.get(key, install)
        merged[key] = kept._replace(
            plugin=kept.plugin or install.plugin, tool=kept.tool or install.tool
        )
    return sorted(merged.values())


def _tools_replaced(
    root: str,
    sites: list[str],
    on_path: list[str],
    records: _Records,
    seen: set[str],
    installs: list[Install] | None,
) -> Iterator[Startup]:
    """The test tools' own modules not as their packages installed them: an edit of pluggy's
    ``_callers.py`` in the environment (red team 10) rewrites every result, from no plugin; so
    does a pyc of pytest's ``reports.py`` that Python loads in its place (red team 11), or a
    sourceless ``reports.pyc`` where the source was."""
    from pathlib import Path

    from pytest_agentgate.integrity.bytecode import Remembered, unlike_pycs

    remembered = Remembered(Path(sys.prefix))
    looked: set[str] = set()
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) if isinstance(module, ModuleType) else None
        if name.partition(".")[0] not in TOOLS or not isinstance(where, str):
            continue
        real = os.path.realpath(where)
        folder = next((s for s in sites + on_path if real.startswith(s)), None)
        if folder is None or real in looked:
            continue
        looked.add(real)
        first = real not in seen  # pytest's own modules are plugins too: judged above
        seen.add(real)
        in_site = any(real.startswith(s) for s in sites)
        if not in_site and (real.startswith(root) or _editable_from(real) is not None):
            continue  # the tool's own repository (pluggy's src/, installed editable)
        data = _read(real, MAX_READ if real.endswith(".py") else MAX_BINARY)
        if data is None:
            continue
        if records.owner(folder, os.path.relpath(real, folder), data) is None:
            if first:
                yield Startup(
                    where, 0, f"{name}, a module of the test tools, not as its package installed it"
                )
        else:
            if installs is not None:
                tool = name.partition(".")[0]
                installs.extend(_installed(real, [folder], records, tool=tool))
            pycs = unlike_pycs(Path(real), remembered) if real.endswith(".py") else []
            for pyc in pycs:
                yield Startup(
                    where,
                    0,
                    f"{name}, a module of the test tools, loaded from __pycache__/{pyc}, "
                    "which is not compiled from it",
                )
    remembered.save()


def installed_by(path: str) -> str | None:
    """The ``*.dist-info`` folder (its path) of the distribution whose ``RECORD`` lists the
    file ``path`` as it is, in the folders judged; "" when the file is in one of them and no
    ``RECORD`` lists it so; None when it is in none (the machine's)."""
    real = os.path.realpath(path)
    sites, on_path = _judged_folders()
    folder = next((f for f in sites + on_path if real.startswith(f)), None)
    if folder is None:
        return None
    data = _read(real, MAX_READ if real.endswith(".py") else MAX_BINARY)
    # An empty file is a file (review 29: a package's empty `__init__.py`, installed by pip).
    owner = (
        _records().owner(folder, os.path.relpath(real, folder), data) if data is not None else None
    )
    return "" if owner is None else os.path.join(folder, owner)


def recorded(path: str) -> bool | None:
    """Whether the file ``path`` in the tests' environment is as a distribution's ``RECORD``
    says it installed it, and the bytecode Python loads for it is compiled from it; None when
    the file is in none of the folders judged (the machine's, the standard library's). The
    witness asks it of the code that replaced a test tool's function from another installed
    file: an edit of ``packaging/version.py`` in the environment that patches pytest's report
    maker is installed code no installer wrote."""
    look = _LOOKS[0] if _LOOKS else None
    if look is not None and path in look.recorded:
        return look.recorded[path]
    real = os.path.realpath(path)
    try:
        stat = os.stat(real)
    except OSError:
        found = None
    else:
        found = _recorded(real, stat.st_mtime_ns, stat.st_size)
    if look is not None:
        look.recorded[path] = found
    return found


@functools.lru_cache(maxsize=1024)
def _recorded(real: str, mtime_ns: int, size: int) -> bool | None:
    """:func:`recorded`, once per file as it is."""
    sites, on_path = _judged_folders()
    folder = next((f for f in sites + on_path if real.startswith(f)), None)
    data = _read(real, MAX_READ if real.endswith(".py") else MAX_BINARY) if folder else None
    if folder is None or data is None:
        return None
    if _records().owner(folder, os.path.relpath(real, folder), data) is None:
        return False
    if not real.endswith(".py"):
        return True
    from pathlib import Path

    from pytest_agentgate.integrity.bytecode import unlike_pycs

    remembered = _remembered()
    unlike = unlike_pycs(Path(real), remembered)
    remembered.save()  # writes only what it found alike since
    return not unlike


@functools.lru_cache(maxsize=1)
def _remembered() -> Remembered:
    """The source and pyc pairs of this environment found alike (integrity/bytecode.py)."""
    from pathlib import Path

    from pytest_agentgate.integrity.bytecode import Remembered

    return Remembered(Path(sys.prefix))


# The test tools whose modules decide what a run reports, less the standard library's
# unittest, which no environment installs.
TOOLS = TEST_TOOLS - {"unittest"}


def _judged_folders() -> tuple[list[str], list[str]]:
    """(the environment's site folders, the folders their ``.pth`` files' path lines add): the
    places a plugin is judged in, the longest first. Not the machine's (:func:`_system`).
    Read once per look (:func:`one_look`)."""
    if _LOOKS and _LOOKS[0].folders is not None:
        return _LOOKS[0].folders
    from pytest_agentgate.state.task_env import pth_folders

    sites: set[str] = set()
    added: set[str] = set()
    for folder in _site_folders():
        if _system(folder):
            continue
        sites.add(os.path.realpath(folder) + os.sep)
        added.update(path + os.sep for path in pth_folders(folder))
    longest = functools.partial(sorted, key=len, reverse=True)
    folders = longest(sites), longest(added)
    if _LOOKS:
        _LOOKS[0].folders = folders
    return folders


def _unvetted(
    real: str, name: str, root: str, sites: list[str], on_path: list[str], records: _Records
) -> str | None:
    """What makes the plugin module at ``real`` planted (the code of its :class:`Startup`), or
    None when an installation put it there, it is the project's own, or the machine's."""
    site = next((s for s in sites if real.startswith(s)), None)
    if site is None and real.startswith(root):
        if os.path.basename(real) == "conftest.py" or not _ignored_by_git(root, real):
            return None  # a module of the project's (a conftest or addopts names it): the change's
        # A git-ignored folder of the project: judged as any folder on the path (`pip install
        # --target .deps` writes its RECORDs beside what it installs).
        entry = _path_entry(real)
        folder = entry if entry is not None and entry.startswith(root) else None
        if folder is None:
            return f"pytest plugin {name}"
    else:
        folder = site or next((s for s in on_path if real.startswith(s)), None)
    if folder is not None and real.endswith(".pyc"):
        # Python runs a pyc named as the module's file only when no source is beside it: code
        # no one can read, whoever installed it (red team 50).
        return f"pytest plugin {name}, bytecode without its source beside it: {CANNOT_JUDGE}"
    data = _read(real, _bound(real))
    if data is None:
        return None
    owner = records.owner(folder, os.path.relpath(real, folder), data) if folder else None
    if owner is not None:
        if _dist_name(owner) == "pytest_agentgate" and name.startswith("pytest_agentgate."):
            return None  # agentgate itself, however installed (its files: the tools' check)
        local = _installed_from(os.path.join(folder or "", owner))
        from pytest_agentgate.integrity.installs import the_projects_folder

        if local is None or the_projects_folder(local, root):
            return None  # from a package index, or the project itself (`pip install .`)
        where = folder or ""
        why = _alters_outcomes(
            real,
            data,
            lambda path: (
                path.startswith(where) and records.lists(where, owner, os.path.relpath(path, where))
            ),
        )
        return None if why is None else f"pytest plugin {name}, installed from {local}: {why}"
    mapped = _editable_from(real)
    if mapped is not None:
        if (mapped + os.sep).startswith(root) or real.startswith(
            os.path.join(mapped, "pytest_agentgate", "")
        ):
            return None  # the project itself, or agentgate, installed editable
        why = _alters_outcomes(real, data, lambda path: path.startswith(mapped + os.sep))
        return (
            None
            if why is None
            else f"pytest plugin {name}, installed editable from {mapped}: {why}"
        )
    return None if folder is None else f"pytest plugin {name}"  # else the machine's


def _path_entry(real: str) -> str | None:
    """The longest folder of ``sys.path`` the file ``real`` is in (a real path, ending in the
    separator)."""
    entries = {os.path.realpath(p or os.curdir) + os.sep for p in sys.path if isinstance(p, str)}
    return max((e for e in entries if real.startswith(e)), key=len, default=None)


def _ignored_by_git(root: str, real: str) -> bool:
    """Whether git ignores the file (a plugin in a git-ignored folder of the project, put on the
    path by a ``.pth`` line, is seen by no change); False without git."""
    from pytest_agentgate.git import ignored_here

    return ignored_here(root, real)


def _direct_url(dist_info: str) -> dict[str, Any] | None:
    from pytest_agentgate.integrity.installs import direct_url

    return direct_url(dist_info)


def _installed_from(dist_info: str) -> str | None:
    """The local folder a distribution was installed from (pip's ``direct_url.json``), or
    None when it came from a package index, or from a wheel or sdist file (`pip install
    ./wheels/*.whl`, what offline builds do: a package as an index serves it)."""
    said = _direct_url(dist_info)
    if said is None:
        return None
    if not said:
        return dist_info  # a direct_url.json no installer wrote: local, whatever it says
    parsed = urlparse(said["url"])
    return unquote(parsed.path) if parsed.scheme == "file" and "archive_info" not in said else None


def _editable_from(real: str) -> str | None:
    """The folder an editable install of a distribution (``direct_url.json`` saying
    ``"editable": true``) maps, when the file ``real`` is in it."""
    return next((m for m in _editable_folders() if real.startswith(m + os.sep)), None)


@functools.lru_cache(maxsize=1)
def _editable_folders() -> tuple[str, ...]:
    """The folders the environment's editable installs map (read once per run)."""
    found: list[str] = []
    for folder in _site_folders():
        for entry in _listdir(folder):
            if not entry.endswith(".dist-info"):
                continue
            said = _direct_url(os.path.join(folder, entry))
            info = said.get("dir_info") if said else None
            if said and isinstance(info, dict) and info.get("editable") is True:
                parsed = urlparse(said["url"])
                if parsed.scheme == "file":
                    found.append(os.path.realpath(unquote(parsed.path)).rstrip(os.sep))
    return tuple(found)


def _alters_outcomes(path: str, data: bytes, same: Callable[[str], bool]) -> str | None:
    """What in the plugin's source can alter test outcomes, as a conftest's hooks are judged
    (the result, the selection, the exit), or None. The modules of its distribution the run
    imported (``same``: whether a file is one) are read too: a plugin module that is only
    ``from .impl import *`` has its hooks, and its patches, in ``impl.py`` (red team 10)."""
    from pytest_agentgate.integrity.hooks import plugin_findings
    from pytest_agentgate.texts import decode

    files = {path: data}
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None) if isinstance(module, ModuleType) else None
        if not isinstance(where, str):
            continue
        real = os.path.realpath(where)
        if real in files or not same(real):
            continue
        if len(files) >= MAX_FILES:
            return f"it imported more than {MAX_FILES} modules of its own: {CANNOT_JUDGE}"
        files[real] = _read(real, _bound(real)) or b""
    for file, text in files.items():
        shown = os.path.basename(file)
        if not file.endswith(".py"):
            return f"{shown} is compiled code, no Python source: {CANNOT_JUDGE}"
        decoded = decode(file, text) if len(text) <= MAX_SOURCE else None
        findings = plugin_findings(file, decoded) if decoded is not None else None
        if findings is None:
            return f"{shown} is not Python source agentgate can read whole: {CANNOT_JUDGE}"
        if findings:
            return findings[0]
    return None


def _bound(real: str) -> int:
    """How much of the file ``real`` is read: a source whole (one byte more than
    :data:`MAX_SOURCE`, to tell one too large), compiled code to be hashed."""
    return MAX_SOURCE + 1 if real.endswith(".py") else MAX_BINARY


def _system(folder: str) -> bool:
    """Whether ``folder`` is the machine's rather than the environment the tests run in: in a
    virtual environment, a folder outside it (the base interpreter's site-packages, the user's
    site); without one, every site folder (it is the machine's Python the tests run on).
    Startup code found there was put by whoever set the machine up (a certificate injected at
    every start, a debugger's hook): shown, not judged. What is in the virtual environment (or
    in the project, whatever Python runs) is judged."""
    if sys.prefix == sys.base_prefix:
        return True
    prefix = os.path.realpath(sys.prefix)
    real = os.path.realpath(folder)
    return not (real == prefix or real.startswith(prefix + os.sep))


def _site_folders() -> list[str]:
    folders = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    # The operating system's own package folder (Debian's and Ubuntu's, written by dpkg).
    system = os.path.realpath(os.path.join(sys.base_prefix, "lib", "python3", "dist-packages"))
    seen: dict[str, str] = {}
    for folder in folders:
        seen.setdefault(os.path.realpath(folder), folder)
    return [f for real, f in seen.items() if real != system and os.path.isdir(f)]


def _listdir(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _read(path: str, limit: int = MAX_READ) -> bytes | None:
    try:
        with open(path, "rb") as file:
            return file.read(limit)
    except OSError:
        return None


# coverage.py's measurement of subprocesses, which starts coverage only when the environment
# names its settings (COVERAGE_PROCESS_START, judged by environment-loosened): the line its
# documentation long gave to write by hand, and the one coverage.py 7.10 writes itself, while
# it runs, in ``subcover_PID.pth`` with ``[run] patch = subprocess`` (later versions install
# ``a1_coverage.pth``, in their RECORD).
_COVERAGE_PTH_CODE = (
    "try:\n    import coverage\nexcept:\n    pass\nelse:\n    coverage.process_startup()\n"
)
COVERAGE_LINES = frozenset(
    {
        b"import coverage; coverage.process_startup()",
        f"import sys; exec({_COVERAGE_PTH_CODE!r})".encode(),
    }
)


def _code_lines(data: bytes, whole: bool = False) -> Iterator[tuple[int, str]]:
    """The lines ``site`` executes: those starting with ``import`` and a space or a tab (but
    coverage.py's subprocess measurement, :data:`COVERAGE_LINES`); shortened to be shown,
    unless ``whole``."""
    for number, raw in enumerate(data.splitlines(), start=1):
        if raw.startswith((b"import ", b"import\t")) and raw.strip() not in COVERAGE_LINES:
            text = raw.decode("utf-8", "replace").strip()
            yield number, text if whole or len(text) <= MAX_SHOWN else _shortened(text)


def _shortened(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


class _Records:
    """The RECORD files of each folder's installed distributions, each read once, when asked."""

    def __init__(self) -> None:
        self._read: dict[str, bytes] = {}
        self._digests: dict[str, str] = {}
        self._infos: dict[str, list[tuple[str, str]]] = {}
        # Per folder, every file its RECORDs list: path -> (dist-info, hash field).
        self._index: dict[str, dict[bytes, list[tuple[str, bytes]]]] = {}

    def owns(self, folder: str, name: str, data: bytes) -> bool:
        """Whether a distribution installed in ``folder`` lists ``name`` in its RECORD with the
        hash of ``data`` (a file it wrote, unchanged since). The distributions whose name the
        file's name or text mentions are asked first (``a1_coverage.pth``, coverage's): most
        often one RECORD is read."""
        return self.owner(folder, name, data) is not None

    def owner(self, folder: str, name: str, data: bytes) -> str | None:
        """The ``*.dist-info`` folder (its name) of the distribution that :meth:`owns` the
        file, or None."""
        name = name.replace(os.sep, "/")
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        wanted = name.encode("utf-8", "surrogateescape") + b",sha256=" + digest + b","
        # A .pth file's text names its package (coverage's a1_coverage.pth); a module's path
        # does (`_pytest/reports.py`). A module's text is not read for names: it is long.
        text = data.decode("utf-8", "replace") if name.endswith(".pth") else ""
        said = (name + text).lower().replace("-", "_")
        if folder not in self._infos:
            self._infos[folder] = [
                (_dist_name(entry), entry)
                for entry in _listdir(folder)
                if entry.endswith(".dist-info")
            ]
        for _, entry in [info for info in self._infos[folder] if info[0] in said]:
            record = self._record(folder, entry)
            if record.startswith(wanted) or b"\n" + wanted in record:
                return entry
        # No distribution the file names: every RECORD of the folder, read once into an index.
        if folder not in self._index:
            index: dict[bytes, list[tuple[str, bytes]]] = {}
            for _, entry in self._infos[folder]:
                for line in self._record(folder, entry).splitlines():
                    path, _, rest = line.partition(b",")
                    index.setdefault(path, []).append((entry, rest.partition(b",")[0]))
            self._index[folder] = index
        listed = self._index[folder].get(name.encode("utf-8", "surrogateescape"), [])
        return next((entry for entry, field in listed if field == b"sha256=" + digest), None)

    def lists(self, folder: str, entry: str, name: str) -> bool:
        """Whether the RECORD of the distribution ``entry`` in ``folder`` lists ``name``."""
        wanted = name.replace(os.sep, "/").encode("utf-8", "surrogateescape") + b","
        record = self._record(folder, entry)
        return record.startswith(wanted) or b"\n" + wanted in record

    def digest(self, folder: str, entry: str) -> str:
        """The digest of the files the distribution's RECORD hashes (state/task_env.py)."""
        from pytest_agentgate.state.task_env import digest_of_record

        key = os.path.join(folder, entry)
        if key not in self._digests:
            self._digests[key] = digest_of_record(self._record(folder, entry))
        return self._digests[key]

    def _record(self, folder: str, entry: str) -> bytes:
        path = os.path.join(folder, entry, "RECORD")
        if path not in self._read:
            self._read[path] = _read(path) or b""
        return self._read[path]


def _dist_name(entry: str) -> str:
    """``coverage`` for ``coverage-7.6.1.dist-info``."""
    name = entry.removesuffix(".dist-info").rpartition("-")[0] or entry
    return name.lower().replace("-", "_").replace(".", "_")


def _virtualenvs(name: str, data: bytes) -> bool:
    """virtualenv's (and uv's) ``_virtualenv.pth``, in the environment they made."""
    if name != "_virtualenv.pth" or data.strip() != b"import _virtualenv":
        return False
    config = _read(os.path.join(sys.prefix, "pyvenv.cfg")) or b""
    keys = {line.partition(b"=")[0].strip() for line in config.splitlines()}
    return bool(keys & {b"virtualenv", b"uv"})


def _in_stdlib(path: str) -> bool:
    """Whether ``path`` is in the interpreter's standard library folder (a link there, as
    Debian's ``sitecustomize.py`` to ``/etc``, counts where it is, not where it leads)."""
    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib") if key in paths}
    return os.path.realpath(os.path.dirname(os.path.abspath(path))) in stdlib
