"""Test tools and pytest plugins installed in the tests' environment while the task ran:
``environment-changed``.

The run names each distribution it loaded a pytest plugin or a test tool's module from (the
witness's, or the pytest door's, ``installs``: pytest_plugin/startup.py). Against the
environment the task began with (state/task_env.py):

- a test tool (pytest, pluggy, coverage.py, xdist, pytest-cov, agentgate) installed again
  since the task began (the environment had it, with another ``RECORD`` or another version):
  the tests run on tools the task did not begin with, and pip vouches for whatever the wheel
  held (a pytest whose ``reports.py`` passes every test). A person who means to upgrade a
  tool does it between tasks. A tool the environment did not have yet is its set-up;
- a pytest plugin installed since, from anywhere (a package index, a wheel file, a
  ``RECORD`` written by hand), that the project does not declare as a dependency (its
  ``pyproject.toml``, requirements files, ``setup.cfg``, ``setup.py``, ``tox.ini``, ``Pipfile``
  name it), or a plugin installed again: the modules its ``RECORD`` lists are read as a
  conftest's hooks are judged (integrity/hooks.py); one that can alter outcomes (the result,
  the selection, the exit) is a finding, and so is one whose code cannot be read to tell (a
  sourceless ``.pyc``, an extension module, a module too large or that does not parse, more
  modules than are read). A plugin that only adds fixtures is not, and neither
  is a plugin the project declares (or what a declared distribution requires), installed or
  synced from an index, a wheel file or a VCS URL (pytest-cov for the base's `--cov`). The
  project itself installed (``pip install .``) is the change's; agentgate itself is never a
  finding (an agent that replaces the gate has its stops fail open, and says so).

Only a task has a beginning: ``agentgate verify`` without ``--task`` and the pytest door run
by hand compare nothing here. Reads the record (I/O): the pipeline calls it once the test
gate's evidence is in, and the integrity gate's evidence gets what it finds
(gates/integrity.with_installs).
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse

from pytest_agentgate.state import task_env

RULE = "environment-changed"
# A new plugin's modules read, at most (more is a plugin too large to judge); a module read
# whole up to MAX_MODULE, and MAX_TOTAL of them all (past either, it cannot be judged).
MAX_FILES = 200
MAX_MODULE = 8 << 20
MAX_TOTAL = 32 << 20
MAX_READ = 1 << 20


def changes(
    root: Path,
    task: str,
    installs: Iterable[tuple[str, str, str, str, str]],
    at_base: Callable[[list[Path]], dict[Path, str | None]] | None = None,
) -> list[tuple[str, str]]:
    """Each install the task did not begin with that is a finding: (the dist-info's path,
    the message). The folders the record does not have yet are kept now (the task's first
    verdict, or a folder first seen). ``at_base``: the texts of project files at the change's
    base (None where a file was not there): a dependency the base's files declare is the
    project's; one only the change declares is judged as an undeclared one (red team 44:
    pytest-expect, declared in a requirements file the change added, marked failing tests
    xfail)."""
    installs = list(installs)
    folders = sorted({folder for folder, *_ in installs})
    venvs = sorted({v for f in folders if (v := task_env.venv_of(f)) is not None})
    start = task_env.pin(root, task, folders, verdict=True, venvs=venvs)
    if start.problem is not None:
        return [(str(task_env.record_path(root, task)), start.problem)]
    found: list[tuple[str, str]] = [
        (
            os.path.join(venv, "pyvenv.cfg"),
            "the virtual environment's pyvenv.cfg changed what it includes after the task "
            "began (include-system-site-packages: the machine's and the user's site folders, "
            "whose code agentgate leaves to the machine): the tests run in another "
            "environment than the task began with",
        )
        for venv in start.venvs_changed
    ]
    declared: set[str] | None = None
    declared_now: set[str] | None = None
    for folder, dist, record, plugin, tool in installs:
        began = start.folders.get(folder)
        if began is None or began.get(dist) == record:
            continue
        source = _project_source(folder, dist, root)
        if source is not None:
            # The project's own (`pip install .`): its code is the change's, judged in the
            # tree. What the build put there that is no file of the project (red team 48: a
            # backend of the change's own wrote a plugin from a .txt) is read as a plugin's.
            why = _alters_outcomes(folder, dist, source=source, plugin=plugin) if plugin else None
            if why is not None:
                found.append(
                    (
                        os.path.join(folder, dist),
                        f"pytest plugin {plugin} ({_name(dist)}), installed from the project's "
                        f"folder, holds code that is no file of the project, and {why.text}",
                    )
                )
            continue
        again = any(project(d) == project(dist) for held in start.folders.values() for d in held)
        how = "installed again" if again else "installed"
        where = os.path.join(folder, dist)
        if tool == "pytest_agentgate":
            # agentgate itself, installed again (a venv made again, from an index or a
            # checkout): an agent that replaces the gate has its stops fail open, and says so.
            continue
        by_the_change = False
        if not _from_a_folder(folder, dist):
            everywhere = [*start.folders, *folders]
            if declared is None:
                declared = _with_requirements(_declared(root, at_base), everywhere, root)
            if project(dist) in declared:
                continue  # the project's dependencies, installed or synced from an index
            if at_base is not None and declared_now is None:
                declared_now = _with_requirements(_declared(root), everywhere, root)
            by_the_change = declared_now is not None and project(dist) in declared_now
        if tool:
            if again:
                found.append(
                    (
                        where,
                        f"{_name(dist)}, a test tool the tests ran on ({tool}), was {how} in "
                        "the tests' environment after the task began: the task is judged on "
                        "the test tools it began with",
                    )
                )
            continue
        # A plugin only the change declares is judged as one it does not: a hook that runs
        # the tests its way can as well swallow their failures (red team 45: a
        # `pytest_pyfunc_call` that catches AssertionError, declared in a requirements file).
        why = _alters_outcomes(folder, dist, plugin=plugin) if plugin else None
        if why is not None:
            said = ", which only this change declares," if by_the_change else ""
            approve = (
                f": a person approves a new test plugin (its declaration merged on the base "
                f"branch, then a new task, or `agentgate reset --task {task}`)"
                if by_the_change or why.unjudged
                else ""
            )
            found.append(
                (
                    where,
                    f"pytest plugin {plugin} ({_name(dist)}){said} was {how} in the tests' "
                    f"environment after the task began, and {why.text}{approve}",
                )
            )
    return found


class _Why(NamedTuple):
    """What in a plugin's distribution can alter test outcomes; ``unjudged`` when it is code
    agentgate cannot read to tell (compiled, cut off, too much of it): a person approves it."""

    text: str
    unjudged: bool = False


def _alters_outcomes(
    folder: str, dist: str, source: str | None = None, plugin: str = ""
) -> _Why | None:
    """What in the modules the distribution's ``RECORD`` lists can alter test outcomes, as a
    conftest's hooks are judged; None when nothing can. The plugin's entry-point modules
    (``plugin``, the one the run loaded, and its ``pytest11`` entry points) are read first,
    then what they import, then the rest. Code that cannot be judged is a finding, never
    "nothing found" (red team 50): a module that is no Python source (a sourceless ``.pyc``,
    an extension module), one larger than :data:`MAX_MODULE` or that does not parse, and a
    distribution with more modules than :data:`MAX_FILES`. ``source``: the folder it was
    built from; a module the same as a file there (or under its ``src/``) is that file,
    judged in the project's tree, and passed over here."""
    from pytest_agentgate.integrity.hooks import plugin_findings
    from pytest_agentgate.texts import decode

    try:
        with open(os.path.join(folder, dist, "RECORD"), "rb") as handle:
            record = handle.read(task_env.MAX_BYTES + 1)
    except OSError:
        return _Why(f"its {dist}/RECORD cannot be read: what it installed cannot be judged", True)
    if len(record) > task_env.MAX_BYTES:
        return _Why(f"its {dist}/RECORD is too large to read: it cannot be judged", True)
    modules = _modules(record)
    order = _judging_order(modules, [plugin, *_entry_modules(folder, dist)], folder)
    budget = MAX_TOTAL
    for count, (name, kind) in enumerate(order):
        if count >= MAX_FILES:
            return _Why(
                f"it holds more than {MAX_FILES} modules, more than agentgate reads to judge a "
                "plugin: it is too large to judge",
                True,
            )
        if kind == "compiled":
            return _Why(f"{name} is {_compiled(name)}, whose code cannot be judged", True)
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as handle:
                data = handle.read(min(MAX_MODULE, budget) + 1)
        except OSError:
            continue
        if len(data) > min(MAX_MODULE, budget):
            return _Why(
                f"{name} is larger than agentgate reads to judge a plugin: it cannot be judged",
                True,
            )
        budget -= len(data)
        if source is not None and _in_source(source, name, data):
            continue
        text = decode(name, data)
        findings = plugin_findings(path, text) if text is not None else None
        if findings is None:
            if kind == "data":
                continue  # a .py file no import names (a template): never imported as it is
            return _Why(
                f"{name} is not Python source agentgate can read (it does not decode or "
                "parse): what it does cannot be judged",
                True,
            )
        if findings:
            return _Why(findings[0])
    return None


def _compiled(name: str) -> str:
    if name.endswith(".pyc"):
        return "bytecode without its source beside it (a sourceless .pyc)"
    return "an extension module (compiled code)"


# Where a module's file is, by the kind of file: Python source, code that is no source.
_EXTENSIONS = (*importlib.machinery.EXTENSION_SUFFIXES, ".so", ".pyd")


def _modules(record: bytes) -> dict[str, tuple[str, str]]:
    """The files of a ``RECORD`` Python can import, each by its path: (its module name, or ""
    when no import names it; its kind: "source", "compiled" or "data"), in the ``RECORD``'s
    order. Bytecode in ``__pycache__`` is its source's (read instead); files outside the site
    folder (console scripts) are not modules."""
    found: dict[str, tuple[str, str]] = {}
    for line in record.splitlines():
        name = line.partition(b",")[0].decode("utf-8", "replace")
        if name.startswith(("..", "/")) or "/__pycache__/" in "/" + name:
            continue
        parts = name.split("/")
        if name.endswith(".py"):
            kind, stem = "source", parts[-1][:-3]
        elif name.endswith(".pyc"):
            kind, stem = "compiled", parts[-1][:-4]
        elif name.endswith(_EXTENSIONS):
            kind, stem = "compiled", parts[-1].partition(".")[0]
        else:
            continue
        dotted = [*parts[:-1], stem] if stem != "__init__" else parts[:-1]
        importable = bool(dotted) and all(part.isidentifier() for part in dotted)
        if kind == "source" and not importable:
            kind = "data"
        found[name] = (".".join(dotted) if importable else "", kind)
    return found


def _entry_modules(folder: str, dist: str) -> list[str]:
    """The modules the distribution's ``pytest11`` entry points name (``entry_points.txt``)."""
    try:
        with open(os.path.join(folder, dist, "entry_points.txt"), "rb") as handle:
            text = handle.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return []
    found: list[str] = []
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip()
        elif section == "pytest11" and "=" in line:
            found.append(line.partition("=")[2].partition(":")[0].strip())
    return found


def _judging_order(
    modules: dict[str, tuple[str, str]], entries: list[str], folder: str
) -> list[tuple[str, str]]:
    """(path, kind) of each module of ``modules``: the entry modules first, then what they
    import (read from their source, as far as the distribution has it), then the rest in the
    ``RECORD``'s order, the files no import names last."""
    by_name = {dotted: path for path, (dotted, _) in modules.items() if dotted}
    ordered: dict[str, None] = {}
    todo = [e for e in entries if e]
    while todo and len(ordered) < MAX_FILES:
        wanted = todo.pop(0)
        path = by_name.get(wanted)
        if path is None or path in ordered:
            continue
        ordered[path] = None
        if modules[path][1] == "source":
            package = wanted if path.endswith("__init__.py") else wanted.rpartition(".")[0]
            todo.extend(_imported(os.path.join(folder, path), package))
    rest = [p for p, (_, kind) in modules.items() if p not in ordered and kind != "data"]
    data = [p for p, (_, kind) in modules.items() if kind == "data"]
    return [(path, modules[path][1]) for path in [*ordered, *rest, *data]]


def _imported(path: str, package: str) -> list[str]:
    """The module names the Python file ``path`` (a module of ``package``) imports, each
    package on the way included; [] when it cannot be read (judged as it is read later)."""
    from pytest_agentgate.integrity.patches import parse_python
    from pytest_agentgate.syntax import imported
    from pytest_agentgate.texts import decode

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_MODULE + 1)
    except OSError:
        return []
    text = decode(path, data) if len(data) <= MAX_MODULE else None
    tree = parse_python(text) if text is not None else None
    if tree is None:
        return []
    found: list[str] = []
    for name in imported(tree, package.split(".") if package else []):
        parts = name.split(".")
        found.extend(".".join(parts[: i + 1]) for i in range(len(parts)) if parts[0])
    return list(dict.fromkeys(found))


def project(dist: str) -> str:
    """The normalized project name of ``pytest_cov-7.1.0.dist-info``: ``pytest-cov``."""
    name = dist.removesuffix(".dist-info").rpartition("-")[0] or dist
    return re.sub(r"[-_.]+", "-", name).lower()


# Files a Python project declares its dependencies in, at its root (and requirements/).
_DECLARING = (
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "noxfile.py",
    "Pipfile",
    "Pipfile.lock",
    "poetry.lock",
    "pdm.lock",
    "uv.lock",
    "environment.yml",
    "environment.yaml",
    "*requirements*.txt",
    "*requirements*.in",
    "*constraints*.txt",
    "requirements/**/*.txt",
    "requirements/**/*.in",
    "*/*requirements*.txt",
    "*/*requirements*.in",
    "hatch.toml",
    "pixi.toml",
)
# A requirements file's include of another: `-r other.txt`, `-c constraints.txt`.
_INCLUDE = re.compile(r"^\s*(?:-r|-c|--requirement|--constraint)[\s=]+(\S+)", re.MULTILINE)
# Files read, at most, with the includes they name.
MAX_DECLARING = 100


def _declared(
    root: Path, at_base: Callable[[list[Path]], dict[Path, str | None]] | None = None
) -> set[str]:
    """The names (normalized) the project's dependency files mention (its ``pyproject.toml``,
    lock files, requirements files of any name and the files their ``-r`` and ``-c`` lines
    include): a plugin among them was installed because the project asks for it. With
    ``at_base``, the files as the base has them (one the change adds declares nothing)."""
    words: set[str] = set()
    todo = [path for pattern in _DECLARING for path in sorted(root.glob(pattern))[:50]]
    seen: set[Path] = set()
    while todo and len(seen) < MAX_DECLARING:
        batch = [p for p in dict.fromkeys(todo) if p not in seen][: MAX_DECLARING - len(seen)]
        todo = []
        seen.update(batch)
        texts = at_base(batch) if at_base is not None else {p: _read(p) for p in batch}
        for path in batch:
            text = texts.get(path)
            if text is None:
                continue
            words.update(re.sub(r"[-_.]+", "-", w).lower() for w in _WORD.findall(text))
            todo.extend(path.parent / included for included in _INCLUDE.findall(text))
    return words


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_READ).decode("utf-8", "replace")
    except OSError:
        return None


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9]")


def _with_requirements(
    names: set[str], folders: Iterable[str], root: Path | None = None
) -> set[str]:
    """``names`` and every distribution they require, as the installed distributions in
    ``folders`` say (their ``Requires-Dist``, whatever the marker): anyio's pytest plugin came
    with httpx, which the project declares."""
    requires: dict[str, set[str]] = {}
    for folder in dict.fromkeys(folders):
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if not entry.endswith(".dist-info"):
                continue
            if root is not None and _from_project(folder, entry, root):
                # The project itself, installed from its folder: its requirements are the
                # working tree's (review 28: a plugin added to its test extra, then
                # `pip install -e '.[test]'`), not what the base declares.
                continue
            try:
                with open(os.path.join(folder, entry, "METADATA"), "rb") as handle:
                    text = handle.read(MAX_READ).decode("utf-8", "replace")
            except OSError:
                continue
            head = text.partition("\n\n")[0]
            needed = requires.setdefault(project(entry), set())
            for line in head.splitlines():
                if line.startswith("Requires-Dist:"):
                    found = _REQUIREMENT.match(line, len("Requires-Dist:"))
                    if found is not None:
                        needed.add(re.sub(r"[-_.]+", "-", found.group(1)).lower())
    closure, todo = set(names), list(names)
    while todo:
        for name in requires.get(todo.pop(), ()):
            if name not in closure:
                closure.add(name)
                todo.append(name)
    return closure


_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def direct_url(dist_info: str) -> dict[str, Any] | None:
    """pip's ``direct_url.json`` of an installed distribution (PEP 610), when there is one;
    ``{}`` when it is there but not what an installer writes."""
    try:
        with open(os.path.join(dist_info, "direct_url.json"), "rb") as handle:
            said = json.loads(handle.read(MAX_READ))
    except OSError:
        return None
    except (ValueError, RecursionError):
        return {}
    return said if isinstance(said, dict) and isinstance(said.get("url"), str) else {}


def local_folder(said: dict[str, Any]) -> str | None:
    """The local path a ``direct_url.json`` (:func:`direct_url`) names (``file://``), or None."""
    url = said.get("url")
    if not isinstance(url, str) or not url.startswith("file://"):
        return None
    return unquote(urlparse(url).path)


def the_projects_folder(local: str, root: str) -> bool:
    """Whether a distribution installed from the local folder ``local`` is the project's own
    (``pip install .``): its folder is the project's (``root``) or a folder of it that is
    there and that git does not ignore, so that the change shows what was installed. A
    git-ignored folder of the project (``.venv/plugsrc``), or one gone since, is not (red team
    13)."""
    real = os.path.realpath(local)
    top = os.path.realpath(root)
    if real == top:
        return True
    from pytest_agentgate.git import ignored_here

    return real.startswith(top + os.sep) and os.path.isdir(real) and not ignored_here(top, real)


def _from_a_folder(folder: str, dist: str) -> bool:
    """Whether pip installed the distribution from a local folder (its ``direct_url.json``
    says ``dir_info``; a ``direct_url.json`` no installer wrote counts too): not what a
    package index, or a wheel file from one, serves."""
    said = direct_url(os.path.join(folder, dist))
    if said is None:
        return False
    # A wheel or sdist file, or a VCS checkout pip built (`git+https://...`): as an index's.
    return not said or (
        said["url"].startswith("file:") and not ({"archive_info", "vcs_info"} & set(said))
    )


def _project_source(folder: str, dist: str, root: Path) -> str | None:
    """The folder of the project the distribution was installed from (pip's
    ``direct_url.json``: ``pip install .``, editable or not), or None."""
    said = direct_url(os.path.join(folder, dist))
    local = local_folder(said) if said else None
    return local if local is not None and the_projects_folder(local, str(root)) else None


def _in_source(source: str, name: str, data: bytes) -> bool:
    """Whether the installed module ``name`` holds ``data`` as the source folder's own file of
    that name does (or its ``src/`` one)."""
    for candidate in (os.path.join(source, name), os.path.join(source, "src", name)):
        try:
            with open(candidate, "rb") as handle:
                if handle.read(MAX_MODULE + 1) == data:
                    return True
        except OSError:
            continue
    return False


def _from_project(folder: str, dist: str, root: Path) -> bool:
    """Whether the distribution was installed from the project's own folder."""
    return _project_source(folder, dist, root) is not None


def _name(dist: str) -> str:
    """``pytest 8.3.3`` for ``pytest-8.3.3.dist-info``."""
    name, _, version = dist.removesuffix(".dist-info").rpartition("-")
    return f"{name} {version}" if name else dist
