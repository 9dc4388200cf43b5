"""The test tools' own code, replaced while pytest runs: what the witness checks.

A conftest.py, a test module or a plugin can replace a function of pytest itself (say
``TestReport.from_item_and_call``, so that every failure is reported as a pass) with no hook and
in ways no reading of the source finds (``importlib.import_module`` and ``setattr`` with
computed names). At run time the replacement shows: the function's code was written somewhere
else. :func:`replaced` lists each function, method and class of the tools' loaded modules whose
code lives outside every installed package, the standard library, and the tool's own folder:
code of the project, or of a file it wrote (the tests' ``monkeypatch`` undoes its patches
before the witness looks).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import itertools
import os
import re
import site
import sys
import sysconfig
import types
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_agentgate import syntax
from pytest_agentgate.pytest_plugin.startup import one_look
from pytest_agentgate.syntax import dumped
from pytest_agentgate.testcode import TEST_TOOLS as TOOLS
from pytest_agentgate.texts import read_regular

# The most findings kept: one is enough to fail the gate.
MAX_FOUND = 20


@one_look()
def replaced(
    plugins: Iterable[object] = (), project: str | None = None, *, compared_after: bool = False
) -> list[str]:
    """Each of the tools' functions or classes whose code is not where installed code lives,
    as ``module.Class.name (file:line)``; sorted, at most :data:`MAX_FOUND`. ``plugins``: the
    plugin objects pytest registered; a tool's instance among them (the JUnit writer) is looked
    at too (``LogXML.pytest_runtest_logreport`` set on the object itself). ``project``: the
    project's folder (pytest's rootdir); a tool's module loaded from a file in it, other than the
    project's own package of that name, is a module put in the tool's place."""
    roots = _installed_roots()
    found: dict[str, str] = {}
    if project is not None:
        for name, origin in _shadows(project):
            found[name] = f"{name} (loaded from {origin}, in place of the installed one)"
        for label, why in _data_the_tests_wrote(project):
            found.setdefault(label, f"{label} ({why})")
        for name, origin in _ran_as_the_tools_started(project, plugins):
            found.setdefault(
                name,
                f"{name} (the project's {origin} ran as the test tools started, before the "
                "tests' session: an import of theirs found it; nothing of the project runs "
                "there)",
            )
        for label, why in _project_replaced(project, compared_after):
            found[label] = f"{label} ({why})"
            if len(found) >= MAX_FOUND:
                return sorted(found.values())
    plugins = list(plugins)
    if project is not None:
        for label, why in _hooks_not_written(plugins, project):
            found[label] = f"{label} ({why})"
    # A test tool's own repository (pluggy's, installed editable): its package is the project.
    project_tools = _project_tools(project)
    for label, why in _coverage_settings_changed(plugins):
        found[label] = f"{label} ({why})"
    for plugin in plugins:
        kind = type(plugin)
        name = getattr(kind, "__module__", "") or ""
        module = sys.modules.get(name)
        where = getattr(module, "__file__", None)
        if name.split(".", 1)[0] not in TOOLS or not isinstance(where, str):
            continue
        own = (*roots, _package_folder(name, where), *project_tools)
        for attr, value in list(getattr(plugin, "__dict__", {}).items()):
            place = _written_at(value) if callable(value) else None
            label = f"{name}.{kind.__qualname__}().{attr}"
            if place is not None and not _inside(place[0], own):
                found[label] = f"{label} ({place[0]}:{place[1]})"
            elif callable(value) and place is None and _made_at_run_time(value, None, attr):
                found[label] = f"{label} (code made at run time)"
    project_plugins = _project_plugin_files(plugins, project)
    for name, module in list(sys.modules.items()):
        if name.split(".", 1)[0] not in TOOLS or not isinstance(module, ModuleType):
            continue
        where = getattr(module, "__file__", None)
        if not isinstance(where, str):
            continue
        folder = _package_folder(name, where)
        own = (*roots, folder, *project_tools)
        home = _tool_home(name, where)
        # Per file the module's code comes from: (not as installed, outside its own places).
        # A module's ten thousand functions come from a few files.
        judged: dict[str, tuple[bool, bool]] = {}
        for label, value, owner in _members(name, module):
            place = _written_at(value)
            verdict = None if place is None else judged.get(place[0])
            if place is not None and verdict is None:
                not_installed = _not_as_installed(place[0], home, project_tools)
                verdict = judged[place[0]] = (not_installed, not _inside(place[0], own))
            if place is not None and verdict is not None and verdict[0]:
                found[label] = f"{label} ({place[0]}:{place[1]}, not as its package installed it)"
            elif place is not None and verdict is not None and verdict[1]:
                if _real(place[0]) in project_plugins:
                    continue  # the project is a pytest plugin: its plugin's doing (pytest-mock)
                attr = label.rpartition(".")[2]
                if owner is None and _imported_by_the_tool(where, attr, value):
                    continue  # `from iniconfig import SectionWrapper` in pytest's own file
                if _added_to_the_tool(where, owner, attr):
                    continue  # `pytest.assert_same_items = ...`: a helper nothing of it calls
                if label in _SETTINGS_OF_THE_TOOLS:
                    continue  # a documented setting that orders tests, judges none (sh's)
                found[label] = f"{label} ({place[0]}:{place[1]})"
            elif place is None and _made_at_run_time(value, owner, label.rpartition(".")[2]):
                found[label] = (
                    f"{label} (code made at run time, {_unwrap(value).__code__.co_filename})"
                )
            if len(found) >= MAX_FOUND:
                return sorted(found.values())
    return sorted(found.values())


# The test tools' documented settings a project may give a function of its own: they order
# the tests and decide no outcome (review 16: sh sets unittest's TestLoader.sortTestMethodsUsing).
_SETTINGS_OF_THE_TOOLS = frozenset({"unittest.loader.TestLoader.sortTestMethodsUsing"})


def _project_tools(project: str | None) -> tuple[str, ...]:
    """The folders of the test tools' packages loaded from the project (the project is pluggy,
    pytest or another tool, installed editable): their code is the project's own."""
    if project is None:
        return ()
    root = _real(project)
    found = []
    for name in TOOLS:
        where = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(where, str) and _inside(where, (root,)):
            found.append(_package_folder(name, where))
    return tuple(found)


def _project_plugin_files(plugins: Iterable[object], project: str | None) -> frozenset[str]:
    """The files of the project's own code (not its tests) that pytest loaded as plugins: a
    project that is a pytest plugin (pytest-mock wraps ``unittest.mock``'s asserts, as it is
    documented to); the integrity gate judges what the change does to them."""
    if project is None:
        return frozenset()
    from pytest_agentgate.testcode import is_test_code

    root = _real(project)
    found = set()
    packages = []
    for plugin in plugins:
        where = getattr(plugin, "__file__", None) if isinstance(plugin, ModuleType) else None
        if (
            isinstance(where, str)
            and _inside(where, (root,))
            and not is_test_code(os.path.relpath(_real(where), root))
        ):
            found.add(_real(where))
            if os.path.basename(where) == "__init__.py":
                packages.append(os.path.dirname(_real(where)))
    # A plugin that is a package does its work in its modules too (review 14: pytest-mock's
    # wrappers live in pytest_mock/plugin.py, pytest registers pytest_mock).
    for module in list(sys.modules.values()) if packages else ():
        where = _file_of(module) if isinstance(module, ModuleType) else None
        if (
            where is not None
            and _inside(where, tuple(packages))
            and not is_test_code(os.path.relpath(_real(where), root))
        ):
            found.add(_real(where))
    return frozenset(found)


def _as_installed(path: str) -> bool:
    """Whether an installed file is as its distribution installed it, or not judged (the
    machine's, the standard library's): ``startup.recorded``. A ``sitecustomize`` or
    ``usercustomize`` module no distribution installed is never installed code, wherever it
    is (red team 13: one written into the interpreter's own standard library folder, which a
    pyenv or a user-built Python lets its user write, patched pytest's report maker)."""
    from pytest_agentgate.pytest_plugin.startup import CUSTOMIZE, recorded

    found = recorded(path)
    if found is None and os.path.basename(path).removesuffix(".py") in CUSTOMIZE:
        return False
    return found is not False


def _hooks_not_written(plugins: Iterable[object], project: str) -> Iterator[tuple[str, str]]:
    """The hooks of the project's plugin modules (its conftest files, its plugins) that the
    module's file does not write: a name made at run time (``globals()["pytest_runtest_" +
    "makereport"] = wrap``) or code compiled from text (``exec(base64...)``). pytest calls
    them as any hook, and the integrity gate judges the hooks a file writes (red team 13)."""
    root = _real(project)
    installed = _installed_roots()
    for plugin in plugins:
        where = _file_of(plugin) if isinstance(plugin, ModuleType) else None
        if where is None or not _inside(where, (root,)) or _inside(where, installed):
            continue
        bound = _names_in(where, "")
        if bound is None:
            continue
        star = _star_imports(where)
        shown = os.path.relpath(_real(where), root)
        for attr, value in list(vars(plugin).items()):
            if not attr.startswith("pytest_") or not callable(value) or attr in bound:
                continue
            place = _written_at(value)
            if (
                star
                and place is not None
                and getattr(_unwrap(value), "__name__", "") == attr
                and attr in (_names_in(place[0], "") or ())
            ):
                continue  # `from .hooks import *`: written in that file, under its name
            made = "code compiled from text" if place is None else f"{place[0]}:{place[1]}"
            yield (
                f"{shown}:{attr}",
                f"a hook that {shown} does not write, bound at run time to {made}",
            )


@functools.lru_cache(maxsize=256)
def _star_imports(path: str) -> bool:
    """Whether the file ``path`` has a ``from MODULE import *``."""
    import ast

    try:
        tree = syntax.parse(read_regular(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(
        isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        for node in ast.walk(tree)
    )


def foreign_tracer(project: str) -> str | None:
    """The tracer or profiler in place (``sys.gettrace()``, ``sys.getprofile()``, the
    ``threading`` ones for new threads), when its code is the tests' (a conftest's, a test
    module's, or a file outside the project) or installed code not as its package installed
    it: one can skip the code under test's lines (``frame.f_lineno += 1``) or change its
    variables while a test runs, however it was set (red team 14). coverage.py's (its C tracer
    has no Python code; its Python tracer is installed code), a debugger's or Hypothesis's
    (installed) are not; nor is the project's own (a tracing library tested with its tracer
    on: its code is the change's to judge). Asked of the interpreter itself, as pytest loaded
    its plugins: a test's stub of ``sys.gettrace`` (a debugger made up, review 12) says nothing
    of the tracer in place."""
    from pytest_agentgate.pytest_plugin.start import TRACER_GETTERS

    root = _real(project)
    for setter, getter in TRACER_GETTERS:
        tracer = getter()
        place = _written_at(tracer) if tracer is not None else None
        if place is None:
            continue
        if _inside(place[0], _installed_roots()):
            foreign = not _as_installed(place[0])
        elif _inside(place[0], (root,)):
            foreign = _test_code(os.path.relpath(_real(place[0]), root))
        else:
            foreign = os.path.isfile(place[0])  # a file of the tests' writing, elsewhere
        if foreign:
            return f"{TRACER_FOUND} ({place[0]}:{place[1]}, set by {setter})"
    return None


TRACER_FOUND = "a tracer the tests ran under"


def look_as_it_runs(item: Any, replaced: set[str], *, before: bool) -> None:
    """Add to ``replaced`` what is in place as the test ``item`` runs (``before`` its body,
    else after): a tracer of the tests' (:func:`foreign_tracer`, once: the first one found is
    enough), and, before its body, a name of its module set by the tests to something else
    than what the module imports (:func:`namespace_replaced`)."""
    project = str(item.config.rootpath)
    if not any(entry.startswith(TRACER_FOUND) for entry in replaced):
        found = foreign_tracer(project)
        if found is not None:
            replaced.add(found)
    if before and len(replaced) < MAX_FOUND:
        replaced.update(namespace_replaced(item, project))


def namespace_replaced(item: Any, project: str) -> list[str]:
    """The names a test's module imports from the project's code (``from invoice.tax import
    apply_tax``) that hold, as the test starts, a function or class the tests wrote instead
    (red team 15: an autouse fixture's ``ns = request.module.__dict__; ns["apply_tax"] =
    stand_in``, a spelling no reading of the source follows). The test's own body, whose
    edits the change shows, is not looked at: only what its fixtures and conftests did."""
    module = getattr(item, "module", None)
    where = _file_of(module) if isinstance(module, ModuleType) else None
    if module is None or where is None:
        return []
    root = _real(project)
    found: list[str] = []
    for alias, (source, name) in _imports_of(where).items():
        held = vars(module).get(alias)
        origin = sys.modules.get(source)
        home = _file_of(origin)
        if held is None or home is None or held is getattr(origin, name, None):
            continue
        if not _inside(home, (root,)) or _test_code(os.path.relpath(_real(home), root)):
            continue  # not the project's code under test
        place = _written_at(held)
        shown = os.path.relpath(_real(where), root)
        if _made_for_the_run(held, place):
            # Compiled from text, or under the name of a file that does not hold it (red team
            # 17: `exec(compile(src, "/usr/lib/python3/rules.py", "exec"))`).
            found.append(
                f"{shown}:{alias} (set for the test to code made at run time, not the "
                f"{source}.{name} it imports)"
            )
        elif place is not None and (
            _test_code(os.path.relpath(_real(place[0]), root))
            if _inside(place[0], (root,))
            else not _inside(place[0], _installed_roots()) or not _as_installed(place[0])
        ):
            # The tests' code, or a file outside the project that no installer wrote (red team
            # 18: a `def` in a file the conftest wrote to /tmp).
            found.append(
                f"{shown}:{alias} (set for the test to {place[0]}:{place[1]}, not the "
                f"{source}.{name} it imports)"
            )
    return found


def _autospecced(value: Any) -> bool:
    """Whether ``value`` is the function ``unittest.mock.create_autospec`` compiles for a
    function (it checks the arguments, then calls its mock): a mock, as a ``MagicMock`` set
    in the same place is."""
    mock = sys.modules.get("unittest.mock")
    space = getattr(value, "__globals__", None)
    code = getattr(value, "__code__", None)
    return (
        mock is not None
        and isinstance(space, dict)
        and isinstance(space.get("mock"), mock.NonCallableMock)
        and getattr(code, "co_names", None) == ("_checksig_", "mock")
    )


def _made_for_the_run(value: Any, place: tuple[str, int] | None) -> bool:
    """Whether a function's code was compiled at run time: its file is ``<string>`` or another
    ``<...>`` name, or a file whose line it names starts no ``def``, decorator or lambda (a
    name given to ``compile``). A class, or an object with no code, is not."""
    code = getattr(_unwrap(value), "__code__", None)
    if code is None or isinstance(value, type) or _autospecced(value):
        return False
    if place is None:
        return True
    import linecache

    # The file must hold this function where its code says: a `def` of its name there (after
    # its decorators), or a lambda. A `def` of another name (red team 18 padded the text so
    # that its `def` fell on json's `def dumps(` line) is not it.
    name = getattr(code, "co_name", "")
    if name == "<lambda>":
        return "lambda" not in linecache.getline(place[0], place[1])
    for number in range(place[1], place[1] + 30):
        line = linecache.getline(place[0], number).lstrip()
        if line.startswith("@") or (not line.strip() and number > place[1]):
            continue
        return not re.match(rf"(?:async\s+)?def\s+{re.escape(name)}\s*\(", line)
    return True


def _not_as_installed(path: str, home: str, project_tools: tuple[str, ...]) -> bool:
    """Whether code of a tool's module whose package is ``home`` (:func:`_tool_home`) comes
    from another installed file (not the tool's own package, nor the project's) that is not
    as its distribution installed it (``startup.recorded``): code in site-packages counts as
    installed only as installed."""
    if _inside(path, (home, *project_tools)) or not _inside(path, _installed_roots()):
        return False
    return not _as_installed(path)


@functools.lru_cache(maxsize=1024)
def _tool_home(name: str, where: str) -> str:
    """The folder of the top-level package of the module ``name`` (its file ``where``), or
    the file of a top-level module of one file."""
    home = _real(where)
    top = name.partition(".")[0]
    while os.path.basename(home) != top and os.path.dirname(home) != home:
        home = os.path.dirname(home)
    return home if os.path.basename(home) == top else _real(where)


def _imported_by_the_tool(where: str, attr: str, value: Any) -> bool:
    """Whether the tool's own file ``where`` binds ``attr`` by importing it from a module
    (``from iniconfig import SectionWrapper`` in ``_pytest/legacypath.py``) and ``value`` is
    that module's object still: the tool's dependency, developed here, is no replacement."""
    source = _imports_of(_real(where)).get(attr)
    if source is None:
        return False
    module_name, original = source
    home = sys.modules.get(module_name)
    try:
        return home is not None and getattr(home, original) is value
    except Exception:  # a lazy module that raises when asked
        return False


def _added_to_the_tool(where: str, owner: type | None, attr: str) -> bool:
    """Whether ``attr`` is a name the tool's source never defines (in the module's file, or in
    the body of ``owner`` or of a class it inherits from): a helper the tests hang on it
    (``unittest.TestCase.assertSameItems``), which the tool's own code never calls. A dunder
    is never only added (Python calls those)."""
    if attr.startswith("__") and attr.endswith("__"):
        return False
    if owner is None:
        names = _names_in(_real(where), "")
        return names is not None and attr not in names and "__getattr__" not in names
    for klass in owner.__mro__:
        if klass is object:
            continue
        module = sys.modules.get(getattr(klass, "__module__", "") or "")
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return False  # a class of C code, or of no file: nothing to read, so not known
        names = _names_in(_real(path), klass.__qualname__)
        if names is None or attr in names or "__getattr__" in names:
            return False
    return True


@functools.lru_cache(maxsize=256)
def _names_in(path: str, qualname: str) -> frozenset[str] | None:
    """Every name the file ``path`` binds at its top level (``qualname`` "") or in the body of
    the class ``qualname`` (:func:`_file_bindings`); None when nothing is known."""
    found = _file_bindings(path, qualname)
    return None if found is None else found[0] | found[1]


@functools.lru_cache(maxsize=256)
def _imports_of(path: str) -> dict[str, tuple[str, str]]:
    """The names a file binds with ``from MODULE import NAME [as ALIAS]``: ALIAS -> (MODULE,
    NAME); absolute imports only."""
    import ast

    try:
        tree = syntax.parse(read_regular(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
    return found


# What coverage.py leaves out of its figures, by the settings' attribute names.
_COVERAGE_LEAVES_OUT = (
    "exclude_list", "partial_list", "partial_always_list", "run_omit", "report_omit",
)  # fmt: skip


def _coverage_settings_changed(plugins: Iterable[object]) -> Iterator[tuple[str, str]]:
    """pytest-cov's coverage objects whose settings leave out more than the settings file they
    were read from does: changed while the tests ran (``cov.exclude("def clamp")`` from a
    conftest, a plugin's configurer)."""
    for plugin in plugins:
        controller = getattr(plugin, "cov_controller", None)
        if controller is None:
            continue
        for attr in ("cov", "combining_cov"):
            config = getattr(getattr(controller, attr, None), "config", None)
            config_file = getattr(config, "config_file", None)
            if config is None:
                continue
            with contextlib.suppress(Exception):  # a settings file coverage itself refused
                fresh = _fresh_coverage_config(config_file)
                for key in _COVERAGE_LEAVES_OUT:
                    now, was = getattr(config, key, None), getattr(fresh, key, None)
                    if isinstance(now, list) and isinstance(was, list):
                        gained = [p for p in now if p not in was]
                        if gained:
                            yield f"coverage.{key}", f"gained {gained!r} while the tests ran"


def _fresh_coverage_config(config_file: str | None) -> Any:
    """coverage.py's settings as a new Coverage object reads them from ``config_file``, with
    the plugins they name configured as the live one's were (covdefaults adds exclusions)."""
    import coverage

    fresh = coverage.Coverage(config_file=config_file or False, data_file=None)
    fresh._init()  # loads the settings' plugins and runs their configurers
    return fresh.config


def _project_replaced(project: str, compared_after: bool = False) -> Iterator[tuple[str, str]]:
    """The project's own code, not as its files hold it while the tests run: a top-level module
    of the project (``<project>/calc.py``, ``<project>/src/calc/``) loaded from another file, or
    by a loader the project's code defines (an import hook that rewrites the source); and a
    function or class member of a module of the project's code whose code belongs to no module
    of it (a conftest's, a test's, ``compile``-d code, a file written elsewhere). An object
    that raises when looked at (a proxy outside its context) is passed over."""
    root = _real(project)
    installed = _installed_roots()
    modules = [(n, m) for n, m in list(sys.modules.items()) if isinstance(m, ModuleType)]
    by_name = dict(modules)
    for name, expected in _top_level_modules(root):
        where = _origin_of(by_name.get(name))
        held = sys.modules.get(name)
        if where is not None and _compiled_form(where, expected):
            continue  # built in place from the file (Cython): `compiled-code-added` judges it
        if where is not None and _package_from(held, expected, where):
            continue  # a package that copied a module's globals, `__file__` too, into its own
        if held is not None and where is None:
            # `sys.modules["calc"] = types.ModuleType("calc")` filled from other source
            yield (
                name,
                (
                    f"the project's {os.path.relpath(expected, root)} imported as "
                    f"{type(held).__name__} {name!r}, which no file made"
                ),
            )
            continue
        if where is not None and _real(where) != expected and not _inside(where, installed):
            elsewhere = f"the project's {os.path.relpath(expected, root)} loaded from {where}"
            if _installed_editable(where):
                elsewhere += (
                    ": an editable install of another checkout; `pip install -e .` here makes "
                    "the tests import this one"
                )
            yield name, elsewhere
        elif where is not None and _real(where) != expected:
            stale = _stale_copy(name, where, expected, root, modules)
            if stale is not None:
                yield name, stale
    for name, module in modules:
        # Where the import system found it, as the top-level check reads it: a stand-in with
        # the package's spec and no `__file__` has its members judged too (red team 24).
        where = _origin_of(module)
        if where is None or not _inside(where, (root,)) or _inside(where, installed):
            continue
        if _test_code(os.path.relpath(_real(where), root)):
            continue
        if type(module) is not ModuleType and _the_tests_type(module, root):
            # `calc.__class__ = Patched` whose __getattribute__ answers other code
            yield name, f"its class set to {type(module).__qualname__} by the tests' code"
            continue
        own_loader = None
        with contextlib.suppress(Exception):
            loader = getattr(getattr(module, "__spec__", None), "loader", None)
            made = _written_at(type(loader)) if loader is not None else None
            if made is not None and _inside(made[0], (root,)) and not _inside(made[0], installed):
                own_loader = f"loaded by {type(loader).__qualname__} of {made[0]}"
        why = own_loader or _rewritten_in_run(name, module, where, root, compared_after)
        if why is None:
            why = _reexport_rebound(module, where, root)
        if why is not None:
            yield name, why
        for label, value, owner in _members(name, module, safe=True):
            try:
                why = _replaced_why(value, owner, label, module, root, installed)
                if why is None:
                    why = _dispatch_replaced(value, owner, label, module, root, installed)
            except Exception:  # a proxy or lazy object that raises when looked at
                continue
            if why is not None:
                yield label, why
    yield from _test_bytecode_unlike(root)
    for remembered in _REMEMBERED.values():
        remembered.save()  # the pairs found alike in this run: not compared again


def _test_bytecode_unlike(root: str) -> Iterator[tuple[str, str]]:
    """The tests' own modules run from a pyc (pytest's, of the module its rewriter made) that
    is not compiled from them, wherever it was: under ``sys.pycache_prefix`` the integrity
    gate's reading of ``__pycache__`` does not see it (red team 26 sent a failing assert to
    ``return None`` with one exception-table entry). A pyc written during the run was compiled
    from the file by the run itself."""
    from pytest_agentgate.pytest_plugin import compiled

    for source, pyc in sorted(compiled.bytecode_reads().items()):
        shown = os.path.relpath(source, root)
        if not _inside(source, (root,)) or not _test_code(shown):
            continue
        with contextlib.suppress(OSError):
            if not _changed_in_run(pyc) and _read_unlike(source, pyc, root):
                yield shown, f"the tests ran bytecode ({pyc}) that is not compiled from {shown}"


def _origin_of(module: ModuleType | None) -> str | None:
    """Where the import system found the module (its spec's origin), else its ``__file__``:
    a package may copy another module's globals, ``__file__`` included, into its own (review
    13: icecream's ``__init__`` takes ``__version__``'s)."""
    try:
        origin = getattr(vars(module).get("__spec__"), "origin", None) if module else None
    except TypeError:
        origin = None
    if isinstance(origin, str) and os.path.isabs(origin):
        return origin
    return _file_of(module)


def _package_from(held: object, expected: str, where: str) -> bool:
    """Whether ``held`` is the package of the project's ``expected`` ``__init__.py`` (its
    ``__path__`` is that folder) whose ``__file__`` and spec name a module of its own folder:
    icecream's ``__init__`` copies its ``__version__``'s globals into its own (review 13)."""
    if os.path.basename(expected) != "__init__.py":
        return False
    folder = os.path.dirname(expected)
    try:
        paths = vars(held).get("__path__")
    except TypeError:
        return False
    return (
        isinstance(paths, list)
        and [_real(p) for p in paths if isinstance(p, str)] == [folder]
        and os.path.dirname(_real(where)) == folder
    )


def _compiled_form(where: str, expected: str) -> bool:
    """Whether ``where`` is an extension module built beside the project's ``expected``
    file from it (``__init__.cpython-311-x86_64-linux-gnu.so`` beside ``__init__.py``)."""
    from importlib.machinery import EXTENSION_SUFFIXES

    real = _real(where)
    folder, name = os.path.split(real)
    stem = os.path.basename(expected).removesuffix(".py")
    return (
        folder == os.path.dirname(expected)
        and name.endswith(tuple(EXTENSION_SUFFIXES))
        and name.split(".", 1)[0] == stem
    )


def _dispatch_replaced(
    value: Any,
    owner: type | None,
    label: str,
    module: ModuleType,
    root: str,
    installed: tuple[str, ...],
) -> str | None:
    """Why a ``functools.singledispatch`` function (or ``singledispatchmethod``) of the
    project's code is not the project's: a case registered for a type by code that is not the
    project's (red team 22: a conftest's `@tax.apply_tax.register` for float answered every
    test's call in the function's place)."""
    # Looked up as stored, never through `__getattr__`: a lazy object (six's moved modules)
    # would import what it stands for, and the witness must change nothing it looks at.
    if isinstance(value, functools.singledispatchmethod):
        value = inspect.getattr_static(value, "dispatcher", None)
    if not inspect.isfunction(value):
        return None
    registry = inspect.getattr_static(value, "registry", None)
    if not isinstance(registry, Mapping) or len(registry) > 1000:
        return None
    for kind, case in list(registry.items()):
        why = _replaced_why(case, owner, label, module, root, installed)
        if why is not None:
            shown = getattr(kind, "__qualname__", repr(kind))
            return f"its case for {shown}, registered by other code: {why}"
    return None


# Files a build writes the version into (setuptools-scm, hatch-vcs, versioneer): an installed
# copy's may differ from the project's by the version alone.
_VERSION_FILES = frozenset({"_version.py", "version.py", "__version__.py", "_version_info.py"})


def _stale_copy(
    name: str, where: str, expected: str, root: str, modules: list[tuple[str, ModuleType]]
) -> str | None:
    """Why the project's module ``name``, which the tests import from an installed copy
    (``pip install .`` of the project, a src layout), is not the project's code: a module of
    the copy the run loaded whose file differs from the project's file of the same place.
    An agent installs its fixed code, puts the broken file back, and the change is empty."""
    installed_home, project_home = os.path.dirname(_real(where)), os.path.dirname(expected)
    single = not os.path.basename(expected).startswith("__init__.")
    if single == os.path.basename(where).startswith("__init__."):
        return None  # a package where the project has a module (or the other way): not it
    from pytest_agentgate.pytest_plugin.startup import installed_by

    owner = installed_by(where)
    if owner == "":
        return (
            f"the project's {os.path.relpath(expected, root)} loaded from {_real(where)}, "
            "which no installed package put there"
        )
    if owner is None or not _the_projects(owner, root):
        return None  # another distribution's module of that name (PyYAML's `yaml`)
    for module_name, module in modules:
        if module_name != name and not module_name.startswith(name + "."):
            continue
        loaded = _file_of(module)
        if loaded is None or not loaded.endswith(".py"):
            continue
        real = _real(loaded)
        if single and real != _real(where):
            continue
        if not single and not real.startswith(installed_home + os.sep):
            continue
        source = (
            expected
            if single
            else os.path.join(project_home, os.path.relpath(real, installed_home))
        )
        if os.path.basename(source) in _VERSION_FILES or not os.path.isfile(source):
            continue
        try:
            ours, theirs = read_regular(source), read_regular(real)
        except OSError:
            continue
        if ours != theirs and not _same_but_the_version(ours, theirs):
            return (
                f"the project's {os.path.relpath(source, root)} is tested from an installed "
                f"copy, {real}, that is not the file: the tests run other code than the "
                "change's; install the project again (`pip install .`), or editable "
                "(`pip install -e .`)"
            )
    return None


def _same_but_the_version(ours: bytes, theirs: bytes) -> bool:
    """Whether two versions of a module differ only in the values of the version its build
    writes in (``__version__ = "1.4.2"``: poetry-dynamic-versioning, a second review), as
    Python reads them."""
    import ast

    def without(text: bytes) -> str | None:
        try:
            tree = syntax.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        tree.body = [
            node
            for node in tree.body
            if not (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and isinstance(node.value, (ast.Constant, ast.Tuple))
                and all(
                    isinstance(t, ast.Name) and "version" in t.id.lower()
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                )
            )
        ]
        return dumped(tree)

    left = without(ours)
    return left is not None and left == without(theirs)


def _the_projects(dist_info: str, root: str) -> bool:
    """Whether an installed distribution is the project's: installed from its folder (pip's
    ``direct_url.json``), or of the name its ``pyproject.toml`` gives it."""
    import re

    from pytest_agentgate.integrity.installs import direct_url, local_folder

    said = direct_url(dist_info)
    local = local_folder(said) if said else None
    if local is not None and _inside(local, (root,)):
        return True
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return False
    try:
        doc = tomllib.loads(read_regular(Path(root, "pyproject.toml")).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return False
    named = doc.get("project", {}).get("name") if isinstance(doc.get("project"), dict) else None
    if not isinstance(named, str):
        return False

    def normal(text: str) -> str:
        return re.sub(r"[-_.]+", "-", text).lower()

    installed = os.path.basename(dist_info).removesuffix(".dist-info").rpartition("-")[0]
    return normal(installed) == normal(named)


def _rewritten_in_run(
    name: str, module: ModuleType, where: str, root: str, compared_after: bool = False
) -> str | None:
    """Why the tests ran other code than the module's file holds, or None.

    From what :mod:`.compiled` saw while the run went on: code compiled under the file's name
    from a source the file did not hold then; a source imported that the file no longer holds
    (written back before the witness looks: the file's change time, which no program can set
    back, is after pytest loaded its plugins), or did not hold before the run's code wrote it
    (a copy put back only as the interpreter exits). A module Python compiled nothing for was
    loaded from bytecode: when that bytecode was written during the run (or is gone), each
    function of the module must be among the code of its file compiled again.

    ``compared_after``: the files are compared again once the run is over (``agentgate
    verify``'s test gate, ``agentgate_sources``), so a file that still holds what the tests
    imported is judged then: a conftest that generates a module at every run (its text in
    another order each time) is honest when it leaves it so, and a copy put back later is seen.
    The pytest door judges in the run, before the interpreter exits."""
    from pytest_agentgate.pytest_plugin import compiled

    if not compiled.watching():
        return None
    real = _real(where)
    shown = os.path.relpath(real, root)
    rewritten = "the file was rewritten while they ran"
    try:
        if compiled.compiled_elsewhere(real) - {"project"}:
            # (a module that compiles code itself, under its own name, does so by its file)
            return f"the tests ran code compiled under the name of {shown} that it does not hold"
        made = _not_as_imported(name, module, real, shown) or _rebound(module, real, root)
        if made is not None:
            return made
        ran = compiled.sources_compiled(real)
        if ran:
            digest = None
            if _changed_in_run(where):
                digest = hashlib.sha256(read_regular(where)).hexdigest()
                if any(source != digest for source in ran):
                    return f"the tests imported other code than {shown} holds: {rewritten}"
            before = compiled.held_before(real)
            if before is None or all(source == before for source in ran):
                return None
            if compared_after and digest is not None:
                return None  # it holds what the tests imported: compared again after the run
            return f"the tests imported code that {shown} did not hold before the run: {rewritten}"
        read = compiled.bytecode_read(real)
        if read is not None:
            if _changed_in_run_or_gone(read):
                why = (
                    "the bytecode it was imported from was written while the tests ran, or is gone"
                )
                return _functions_not_the_files(name, module, where, shown, why)
            if _read_unlike(real, read, root):
                return f"the tests ran bytecode ({read}) that is not compiled from {shown}"
        if _compiles_code(real):
            return None
        if _made_without_importing(module, real):
            why = "the tests made the module without importing the file"
            return _functions_not_the_files(name, module, where, shown, why)
        if _bytecode_of_the_run(module):
            why = "its bytecode was written while the tests ran"
            return _functions_not_the_files(name, module, where, shown, why)
    except Exception:  # gone, not Python any more, too deep to compile: nothing to compare
        return None
    return None


def _not_as_imported(name: str, module: ModuleType, real: str, shown: str) -> str | None:
    """A function of the module whose code says it is the file's, but is not among the code the
    import of the file made (``add.__code__`` given fixed code whose ``co_filename`` was made to
    say ``calc.py``; an AST compiled under that name and run in the module). Code the module
    compiles itself (six's ``exec_``), and, when no code of the tests compiled one, what a
    library recompiled from the file's AST (typeguard's ``@typechecked``), are its own."""
    from pytest_agentgate.pytest_plugin import compiled

    codes = compiled.imported_code(real)
    if codes is None:
        return None
    for _, value, _ in _members(name, module, safe=True):
        try:
            func = _static_unwrap(value)
            claims = inspect.isfunction(func) and _real(func.__code__.co_filename) == real
            if not claims or func.__code__ in codes:
                continue
            if compiled.made_at_run_time_by("<string>", func.__code__.co_name) == {"project"}:
                continue  # code the project made from text, then relabelled (hypothesis's)
        except Exception:  # a proxy or lazy object that raises when looked at
            continue
        made_by = compiled.ast_compiled_by()
        if compiled.compiled_elsewhere(real) == {"project"} or (
            "project" in made_by and "tests" not in made_by
        ):
            return None  # the module compiling its own code; typeguard instrumenting it
        return f"{func.__qualname__} runs code that the import of {shown} did not make"
    return None


def _rebound(module: ModuleType, real: str, root: str) -> str | None:
    """A name the file defines with ``def`` at its top level, or in the body of a class it
    defines there, whose value is no longer that function, nor holds it (a decorator's
    wrapper, ``__wrapped__``, an object keeping it), when the file does not bind the name
    otherwise (``from ._speedups import add``): ``calc.add`` or ``calc.Calculator.add`` set to a
    callable object, a builtin, or another module's function by the tests."""
    from pytest_agentgate.pytest_plugin import compiled

    code = compiled.module_code(real)
    if code is None:
        return None
    shown = os.path.relpath(real, root)
    spaces: list[tuple[str, dict[str, Any], types.CodeType, frozenset[str]]] = [
        ("", vars(module), code, _bound_otherwise(real))
    ]
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and not const.co_flags & inspect.CO_NEWLOCALS:
            cls = vars(module).get(const.co_name)  # a class body's code
            if isinstance(cls, type) and cls.__module__ == module.__name__:
                bound = _bound_otherwise(real, const.co_name)
                spaces.append((f"{cls.__qualname__}.", dict(vars(cls)), const, bound))
    for prefix, space, body, bound in spaces:
        defined: dict[str, list[types.CodeType]] = {}
        for const in body.co_consts:
            if isinstance(const, types.CodeType) and const.co_flags & inspect.CO_NEWLOCALS:
                defined.setdefault(const.co_name, []).append(const)
        for attr, codes in defined.items():
            if attr not in space or not attr.isidentifier() or attr in bound:
                continue
            value = space[attr]
            if _overloads_only(value):
                continue  # a Protocol's method written as `@overload`s alone (tenacity's)
            if any(_holds(value, c) for c in codes) and not _the_tests_type(value, root):
                continue  # (an object of the tests' that keeps the function may ignore it)
            if _made_in_its_place(value, module.__name__, attr, real):
                continue
            if _made_by_the_file(value, module, real):
                continue
            kind = type(value).__qualname__
            return (
                f"{prefix}{attr} is no longer the function {shown} defines, but a {kind} set in "
                "its place"
            )
    return None


def _reexport_rebound(module: ModuleType, where: str, root: str) -> str | None:
    """A name the file imports from another module of the project at its top level (``from
    invoice.tax import apply_tax`` in ``invoice/__init__.py``) whose value is now a function of
    a third file (red team 24: a conftest's ``invoice.apply_tax = rates.apply_tax``), when the
    file binds the name no other way."""
    import ast
    import importlib.util

    real = _real(where)
    try:
        tree = syntax.parse(read_regular(real))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    package = module.__name__
    if not real.endswith("__init__.py"):
        package = package.rpartition(".")[0]
    imported: dict[str, tuple[str, str]] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.ImportFrom):
            continue
        relative = "." * statement.level + (statement.module or "")
        try:
            source = importlib.util.resolve_name(relative, package)
        except (ImportError, ValueError):
            continue
        for alias in statement.names:
            if alias.name != "*":
                imported[alias.asname or alias.name] = (source, alias.name)
    if not imported:
        return None
    defined = (_file_bindings(real) or (frozenset(), frozenset()))[0]
    assigned = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    space = vars(module)
    for name, (source, attr) in sorted(imported.items()):
        held = sys.modules.get(source)
        if name in defined or name in assigned or not isinstance(held, ModuleType):
            continue
        expected, actual = vars(held).get(attr), space.get(name)
        if expected is None or actual is None or actual is expected:
            continue
        given = _static_unwrap(actual)
        if not inspect.isfunction(given) or not inspect.isfunction(_static_unwrap(expected)):
            continue
        home = given.__code__.co_filename
        if _inside(home, (root,)) and _real(home) not in (_real(_file_of(held) or ""), real):
            shown = os.path.relpath(real, root)
            return (
                f"{name} is no longer what {shown} imports from {source}, but "
                f"{os.path.relpath(_real(home), root)}'s {given.__qualname__} set in its place"
            )
    return None


def _overloads_only(value: Any) -> bool:
    """Whether ``value`` is what ``@typing.overload`` leaves in a name that has overloads and no
    implementation (a Protocol's method, a stub): typing's placeholder, or typing_extensions'."""
    for name in ("typing", "typing_extensions"):
        dummy = getattr(sys.modules.get(name), "_overload_dummy", None)
        if dummy is not None and _static_unwrap(value) is dummy:
            return True
    return False


def _the_tests_type(value: Any, root: str) -> bool:
    """Whether ``value`` is an object of a class the tests' code (or code outside the project
    and installed code) defines."""
    if inspect.isfunction(_static_unwrap(value)):
        return False  # a function's own code is judged by _replaced_why
    where = _written_at(type(value))
    if where is None:
        return False
    path = where[0]
    if _inside(path, _installed_roots()):
        return False
    return not _inside(path, (root,)) or _test_code(os.path.relpath(_real(path), root))


def _made_in_its_place(value: Any, module: str, attr: str, real: str) -> bool:
    """A function a decorator made in place of the one defined, naming itself as it: compiled
    again from the file (typeguard's ``@typechecked``), or generated at run time by the
    project's code or a library for it (makefun's ``@with_signature``), never by the tests'."""
    from pytest_agentgate.pytest_plugin.compiled import made_at_run_time_by

    func = _static_unwrap(value)
    if not inspect.isfunction(func) or func.__module__ != module or func.__name__ != attr:
        return False
    name = func.__code__.co_filename
    if not name.startswith("<"):
        return _real(name) == real
    made = made_at_run_time_by(name, func.__name__)
    return bool(made) and "tests" not in made


def tests_replaced(items: Iterable[object], project: str) -> list[str]:
    """Each test pytest collected whose function is not the function its module's file defines
    under the test's name, nor holds it (a decorator's wrapper, ``__wrapped__``): the test's
    body stays as written while another test runs in its place (``globals()["test_zero"] =
    test_standard``, ``test_zero.__code__ = test_standard.__code__``, ``@(lambda f:
    test_standard)``). Judged from the code the import of each test module made (:mod:`.compiled`,
    in a gated run); a test made at run time under a name no ``def`` in its file has (a factory
    that fills ``globals()``) is what it is. At most :data:`MAX_FOUND`."""
    from pytest_agentgate.pytest_plugin import compiled

    if not compiled.watching():
        return []
    found: list[str] = []
    defined: dict[tuple[str, str | None], dict[str, list[types.CodeType]]] = {}
    for item in items:
        try:
            entry = _test_not_its_own(item, project, defined)
        except Exception:  # an item of a plugin's own kind that answers nothing asked here
            continue
        if entry is not None:
            found.append(entry)
            if len(found) >= MAX_FOUND:
                break
    return found


def _test_not_its_own(
    item: object,
    project: str,
    defined: dict[tuple[str, str | None], dict[str, list[types.CodeType]]],
) -> str | None:
    import pytest

    from pytest_agentgate.pytest_plugin import compiled

    if not isinstance(item, pytest.Function):
        return _other_kind_in_its_place(item, project)
    name = item.originalname
    real = os.path.realpath(str(item.path))
    cls = item.cls.__qualname__ if item.cls is not None else None
    key = (real, cls)
    if key not in defined:
        code = compiled.module_code(real)
        defined[key] = {} if code is None else _defs(code, cls)
    codes = defined[key].get(name)
    if not codes:
        return None
    func = item.obj
    with contextlib.suppress(Exception):
        func = inspect.unwrap(func)
    if any(_holds(item.obj, c) or _holds(func, c) for c in codes):
        return None
    shown = os.path.relpath(real, project)
    inner = _static_unwrap(func)
    code = getattr(inner, "__code__", None)
    runs = getattr(inner, "__qualname__", type(inner).__qualname__)
    if isinstance(code, types.CodeType) and code.co_name != getattr(inner, "__name__", None):
        runs = f"{runs}, holding the code of {code.co_name}"  # `test.__code__ = other.__code__`
    return (
        f"{item.nodeid} (pytest runs {runs}, not the function {shown} defines as {name}: the "
        "test was replaced)"
    )


def _other_kind_in_its_place(item: object, project: str) -> str | None:
    """An item of another kind than pytest's test functions, named as a test function its
    Python file defines: it runs in that test's place, under its node id, and never calls it
    (red team 27: a `pytest.Item` whose `runtest` passes, made by a conftest's module collector
    or written over the test's item in `pytest_collection_modifyitems`). Plugins' own items of
    a test file are named otherwise (a doctest's `module.name`, pytest-mypy's `mypy`)."""
    path = str(getattr(item, "path", "") or "")
    name = str(getattr(item, "name", "") or "").partition("[")[0]
    if not path.endswith(".py") or not name:
        return None
    real = os.path.realpath(path)
    if not _inside(real, (_real(project),)):
        return None
    nodeid = str(getattr(item, "nodeid", ""))
    cls = ".".join(nodeid.split("::")[1:-1])
    found = _file_bindings(real, cls)
    if found is None or name not in found[0]:
        return None
    shown = os.path.relpath(real, project)
    return (
        f"{nodeid} (pytest runs a {type(item).__qualname__}, not the function {shown} defines "
        f"as {name}: the test was replaced)"
    )


def _defs(code: types.CodeType, cls: str | None) -> dict[str, list[types.CodeType]]:
    """The functions a module's code defines in its body (``cls`` None) or in the body of the
    class ``cls`` (a qualified name: ``TestA.TestB``), by name."""
    body = code
    for part in cls.split(".") if cls else ():
        inner = [
            c
            for c in body.co_consts
            if isinstance(c, types.CodeType)
            and c.co_name == part
            and not c.co_flags & inspect.CO_NEWLOCALS
        ]
        if len(inner) != 1:
            return {}  # no class body of that name, or several: nothing to tell
        body = inner[0]
    found: dict[str, list[types.CodeType]] = {}
    for const in body.co_consts:
        if isinstance(const, types.CodeType) and const.co_flags & inspect.CO_NEWLOCALS:
            found.setdefault(const.co_name, []).append(const)
    return found


def _holds(value: Any, code: types.CodeType, depth: int = 3) -> bool:
    """Whether ``value`` is the function of ``code``, or reaches it: ``__wrapped__``, a method's
    or a partial's function, a closure's cells, the object's and its class's attributes."""
    seen: list[Any] = [value]
    for _ in range(depth):
        more: list[Any] = []
        for item in seen:
            if inspect.isfunction(item) and item.__code__ == code:
                return True
            more.extend(_reached(item))
        seen = more[:200]
    return any(inspect.isfunction(item) and item.__code__ == code for item in seen)


def _reached(item: Any) -> list[Any]:
    found: list[Any] = []
    with contextlib.suppress(Exception):
        item = _static_unwrap(item)
        found.append(item)
        if isinstance(item, (list, tuple, set, frozenset)):
            # A builder keeps what its decorator is given in a list and returns itself:
            # pyparsing's `@rule.add_parse_action` (review 20).
            found.extend(itertools.islice(item, 50))
        elif isinstance(item, dict):
            found.extend(itertools.islice(item.values(), 50))
        elif inspect.isfunction(item):
            wrapped = item.__dict__.get("__wrapped__")
            if wrapped is not None:
                found.append(wrapped)
            found.extend(c.cell_contents for c in item.__closure__ or () if _filled(c))
            # What the function keeps as attributes: Hypothesis's `@given` wrapper, made by
            # exec, reaches the test only through `wrapper.hypothesis.inner_test`.
            found.extend(v for k, v in list(item.__dict__.items())[:20] if k != "__wrapped__")
            found.extend(_exec_namespace(item))
        elif not isinstance(item, (type, ModuleType)):
            found.extend(list(getattr(item, "__dict__", {}).values())[:50])
            found.extend(list(vars(type(item)).values())[:50])
            found.extend(_slot_values(item))
    return found


def _slot_values(item: Any) -> list[Any]:
    """What an object keeps in its ``__slots__`` (a decorator class with slots keeps the
    function there: structlog's ``_ReadOnly``), the first few."""
    found: list[Any] = []
    for kind in type(item).__mro__[:10]:
        slots = vars(kind).get("__slots__", ())
        for name in [slots] if isinstance(slots, str) else list(slots)[:20]:
            if isinstance(name, str) and name not in ("__dict__", "__weakref__"):
                with contextlib.suppress(Exception):
                    found.append(getattr(item, name))
    return found


def _exec_namespace(func: types.FunctionType) -> list[Any]:
    """What a wrapper a library or the project compiled from text (``"<string>"``) reaches
    through the namespace it was made in: SQLAlchemy's ``decorator`` writes a wrapper of the
    test's signature with ``exec(code, {"fn": test, ...})`` (a third review: alembic's tests).
    Not a module's namespace, and not code the tests compiled."""
    from pytest_agentgate.pytest_plugin.compiled import compiled_in_a_library

    code = func.__code__
    space = func.__globals__
    if code.co_filename != "<string>" or "__name__" in space or len(space) > 50:
        return []
    return list(space.values()) if compiled_in_a_library(code.co_name) else []


def _filled(cell: types.CellType) -> bool:
    try:
        return cell.cell_contents is not cell  # an empty cell raises
    except ValueError:
        return False


@functools.lru_cache(maxsize=1024)
def _bound_otherwise(path: str, in_class: str = "") -> frozenset[str]:
    """The names the source file ``path`` binds at its top level (in its ``if``, ``try`` and
    ``with`` blocks too) by an import or an assignment, and those its functions declare
    ``global``; not a function's locals. ``in_class``: in the body of that top-level class,
    and the class's attributes the file sets anywhere (``Cls.name = f``, ``setattr(Cls,
    "name", f)``)."""
    found = _file_bindings(path, in_class)
    return frozenset() if found is None else found[1]


def _file_bindings(path: str, qualname: str = "") -> tuple[frozenset[str], frozenset[str]] | None:
    """What the source file ``path`` binds in its body (``qualname`` "") or in the body of the
    class ``qualname`` (``A.B``), in ``if``, ``try`` and ``with`` blocks too: (the names it
    defines with ``def`` or ``class``, the names it binds otherwise: imports, assignments,
    ``global`` in its functions, and for a class the attributes the file sets on it anywhere:
    jinja2's ``NodeType.__new__ = staticmethod(_failing_new)`` at the end of nodes.py). None
    when the file cannot be read or holds no such class."""
    import ast

    try:
        tree = syntax.parse(read_regular(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defined: set[str] = set()
    names: set[str] = set()
    body = tree.body
    for part in qualname.split(".") if qualname else ():
        classes = [n for n in body if isinstance(n, ast.ClassDef) and n.name == part]
        if not classes:
            return None
        body = classes[0].body
    owner = qualname.rpartition(".")[2]
    for node in ast.walk(tree) if owner else ():
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == owner
        ):
            names.add(node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == owner
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            names.add(node.args[1].value)
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            names.update(n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names)
        elif isinstance(node, ast.stmt):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    todo.append(child)
                elif isinstance(child, ast.ExceptHandler):
                    todo.extend(child.body)
                else:
                    names.update(
                        n.id
                        for n in ast.walk(child)
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                    )
    return frozenset(defined), frozenset(names)


def _changed_in_run(path: str) -> bool:
    """Whether the file's inode changed after pytest loaded its plugins."""
    from pytest_agentgate.pytest_plugin.start import START_TIME

    return os.stat(path).st_ctime > START_TIME


def _changed_in_run_or_gone(path: str) -> bool:
    try:
        return _changed_in_run(path)
    except FileNotFoundError:
        return True


# The project's source and pyc pairs found alike (integrity/bytecode.py), per project.
_REMEMBERED: dict[str, Any] = {}


def _read_unlike(real: str, pyc: str, root: str) -> bool:
    """Whether the pyc the import system read for the project's file ``real`` is not compiled
    from it (its header says it is up to date): a pyc that ``sys.pycache_prefix`` put outside
    the ``__pycache__`` folder the integrity gate reads, or one only the tests' process sees
    (a folder mounted over ``__pycache__`` for the test command alone, red team 25)."""
    from pytest_agentgate.integrity.bytecode import Remembered, read_unlike

    remembered = _REMEMBERED.get(root)
    if remembered is None:
        remembered = _REMEMBERED[root] = Remembered(Path(root))
    return read_unlike(Path(real), Path(pyc), remembered)


def _bytecode_of_the_run(module: ModuleType) -> bool:
    """Whether the module came from bytecode written during the run, or since removed: what
    the standard loader of a source file runs when Python compiled nothing for it."""
    import importlib.machinery

    spec = getattr(module, "__spec__", None)
    if type(getattr(spec, "loader", None)) is not importlib.machinery.SourceFileLoader:
        return False  # pytest's rewriter, an import hook: bytecode of their own
    cached = getattr(spec, "cached", None)
    if not isinstance(cached, str):
        return False
    try:
        return _changed_in_run(cached)
    except FileNotFoundError:
        return True


def _made_without_importing(module: ModuleType, real: str) -> bool:
    """Whether nothing the import system executed made the module: no import of the file was
    seen (``importlib.util.module_from_spec`` filled by ``exec`` of code whose ``co_filename``
    was made to say ``calc.py``), and the module was not there before the run's conftest.py
    files were imported. A module an import hook of an installed library (another loader than
    the standard ones) made is its own."""
    from pytest_agentgate.pytest_plugin import compiled

    if compiled.imported_code(real) is not None or compiled.imported_before(real):
        return False
    loader = getattr(getattr(module, "__spec__", None), "loader", None)
    made = _written_at(type(loader)) if loader is not None else None
    parts = made[0].split(os.sep) if made is not None else ()
    return "site-packages" not in parts and "dist-packages" not in parts


def _functions_not_the_files(
    name: str, module: ModuleType, where: str, shown: str, why: str
) -> str | None:
    now = compile(read_regular(where), where, "exec", dont_inherit=True)
    from pytest_agentgate.pytest_plugin.compiled import code_tree

    codes = set(code_tree(now))
    for _, value, _ in _members(name, module, safe=True):
        try:
            func = _static_unwrap(value)
            compiled_here = inspect.isfunction(func) and func.__code__.co_filename == where
        except Exception:  # a proxy or lazy object that raises when looked at
            continue
        if compiled_here and func.__code__ not in codes:
            return f"{func.__qualname__} ran as other code than {shown} holds: {why}"
    return None


def _file_of(module: ModuleType | None) -> str | None:
    try:
        where = getattr(module, "__file__", None)
    except Exception:  # a module object whose __getattr__ raises
        return None
    return where if isinstance(where, str) else None


def _replaced_why(
    value: Any,
    owner: type | None,
    label: str,
    module: ModuleType,
    root: str,
    installed: tuple[str, ...],
) -> str | None:
    """Why the function ``value`` of a module of the project's code is not the project's, or
    None when it is (its code is in a file of the project's code or of installed code)."""
    func = _static_unwrap(value)
    if not inspect.isfunction(func):
        return None
    code = func.__code__.co_filename
    if not code.startswith("<") and os.path.isfile(code):
        if _inside(code, installed) and _as_installed(code):
            return None
        if _inside(code, (root,)) and not _test_code(os.path.relpath(_real(code), root)):
            return None  # the project's own code, wherever its module object came from
        shown = f"the project's function, replaced by code of {code}"
        return shown + (", not as its package installed it" if _inside(code, installed) else "")
    attr = label.rpartition(".")[2]
    if owner is not None and attr.startswith("__") and _generated_for(owner):
        return None  # what dataclasses, attrs or namedtuple wrote for the class
    if code.startswith("<"):
        from pytest_agentgate.pytest_plugin.compiled import made_at_run_time_by

        made = made_at_run_time_by(code, func.__code__.co_name)
        if "tests" in made:
            return f"the project's function, replaced by code the tests made at run time ({code})"
        if made:
            return None  # the project's code, or a library for it, made it (makefun, attrs)
    space = func.__globals__
    if space is vars(module) and _compiles_code(_file_of(module)):
        # Code the module compiled into its own namespace (six's `exec_("def raise_from...")`):
        # the module's own doing, as its file says. A module whose file compiles nothing had
        # it done to it (a conftest's `exec(fixed, vars(calc))`).
        return None
    home = sys.modules.get(str(space.get("__name__", "")))
    home_file = _file_of(home) if isinstance(home, ModuleType) else None
    if home_file is not None and _inside(home_file, installed) and _as_installed(home_file):
        return None  # generated by an installed library (SQLAlchemy's mapped __init__)
    if not code.startswith("<"):
        return f"the project's function, from {code}, which is no file"
    if (
        home_file is not None
        and _inside(home_file, (root,))
        and not _test_code(os.path.relpath(_real(home_file), root))
        and _compiles_code(home_file)
    ):
        return None  # code the project's own module generated
    return f"the project's function, replaced by code made at run time ({code})"


@functools.lru_cache(maxsize=1024)
def _made_by_the_file(value: Any, module: ModuleType, real: str) -> bool:
    """A function made at run time in the module's own namespace by a module whose file makes
    code itself (six: `exec("def raise_from(value, from_value): ...")` under PY3, its `def`
    for PY2 never run). Code a conftest made there is the tests' doing, found as such by the
    rest of the witness (its compile, its frames)."""
    func = _static_unwrap(value)
    code = getattr(func, "__code__", None)
    return (
        inspect.isfunction(func)
        and isinstance(code, types.CodeType)
        and code.co_filename.startswith("<")
        and func.__globals__ is vars(module)
        and _compiles_code(real)
    )


def _compiles_code(path: str | None) -> bool:
    """Whether the code of the source file ``path`` names ``exec``, ``eval``, ``compile`` or
    six's ``exec_``: it may make code at run time. A comment or a string saying so does not."""
    if path is None:
        return False
    import ast

    try:
        tree = syntax.parse(read_regular(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _CODE_MAKERS:
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("exec", "exec_"):
            return True  # builtins.exec, six.exec_; not re.compile or a template's eval
    return False


_CODE_MAKERS = frozenset({"exec", "eval", "compile", "exec_"})


def _static_unwrap(value: Any, *, any_func: bool = False) -> Any:
    """The function inside a method, classmethod, property or partial, by type alone: asking
    an object for ``__func__`` runs its ``__getattr__`` (six's lazy moves import a module).
    ``any_func``: follow any object's ``__func__`` too (:func:`_unwrap`)."""
    for _ in range(4):  # a few layers: classmethod(partial(f)), property.fget
        if isinstance(value, (classmethod, staticmethod)):
            value = value.__func__
        elif isinstance(value, property):
            value = value.fget
        elif isinstance(value, functools.partial):
            value = value.func
        elif isinstance(value, types.MethodType) or (
            any_func and hasattr(value, "__func__") and not isinstance(value, type)
        ):
            value = value.__func__  # a bound method; with any_func, any object's
        else:
            break
    return value


def _generated_for(owner: type) -> bool:
    try:
        return any(key in vars(owner) for key in _GENERATED_FOR)
    except TypeError:
        return False


def project_sources(project: str, limit: int = 5000) -> dict[str, str]:
    """``{path: sha256}`` of the files of the project's code its loaded modules were read
    from (real absolute paths), as the files are now (the first ``limit``). Compared with the
    files after the run, a difference is a file that held other code while the tests ran."""
    import hashlib

    root = _real(project)
    installed = _installed_roots()
    found: dict[str, str] = {}
    for module in list(sys.modules.values()):
        where = _file_of(module) if isinstance(module, ModuleType) else None
        if where is None or not where.endswith(".py"):
            continue
        if not _inside(where, (root,)) or _inside(where, installed):
            continue
        real = _real(where)
        if real in found or _test_code(os.path.relpath(real, root)):
            continue
        try:
            with open(real, "rb") as handle:
                found[real] = hashlib.sha256(handle.read()).hexdigest()
        except OSError:
            continue
        if len(found) >= limit:
            break
    return found


def _top_level_modules(root: str) -> Iterator[tuple[str, str]]:
    """(name, real path of its file) of the project's top-level modules and packages, in its
    folder and its ``src/``."""
    for folder in (root, os.path.join(root, "src")):
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".py") and entry.is_file() and entry.name != "conftest.py":
                name = entry.name[:-3]
                if name.isidentifier() and not _test_code(name + ".py"):
                    yield name, _real(entry.path)
            elif (
                entry.is_dir()
                and entry.name.isidentifier()
                and not _test_code(entry.name + "/m.py")
            ):
                init = os.path.join(entry.path, "__init__.py")
                if os.path.isfile(init):
                    yield entry.name, _real(init)


def _test_code(relative: str) -> bool:
    from pytest_agentgate.testcode import is_test_code

    return relative.startswith("..") or is_test_code(relative.replace(os.sep, "/"))


def _shadows(project: str) -> Iterator[tuple[str, str]]:
    """The tools' top-level modules loaded from a file of the project that is not its own
    package of that name (``<project>/NAME/`` or ``<project>/src/NAME/``), and the standard
    library's loaded from any file of the project (red teams 19 and 20: a `cmd.py` or
    `cmd/__init__.py` at the project's top, which pytest's `pdb` imports, patched the function
    under test). What the run imported, not what a name could clash with."""
    from pytest_agentgate.integrity.patches import TOOLS_NEEDS

    root = _real(project)
    stdlib = frozenset(getattr(sys, "stdlib_module_names", ())) - {"__main__"}
    # The test tools' own dependencies, as much theirs as their code: the project's own package
    # of that name is its own (review 18: iniconfig and packaging are projects too); one the
    # change adds is the integrity gate's `result-rewritten` (patches.shadowing).
    for name in sorted(TOOLS | TOOLS_NEEDS | stdlib):
        module = sys.modules.get(name)
        where = getattr(module, "__file__", None)
        if not isinstance(where, str) or not _inside(where, (root,)):
            continue
        if _inside(where, _installed_roots()):
            continue  # a virtualenv inside the project: installed
        own = (os.path.join(root, name), os.path.join(root, "src", name))
        if name in stdlib or not _inside(where, own):
            yield name, where


def _data_the_tests_wrote(project: str) -> Iterator[tuple[str, str]]:
    """The data files of the project's code the tests' code wrote while the run went on
    (``compiled.data_written``): the code ran on data its users do not have, whatever the file
    holds once the run is over."""
    from pytest_agentgate.pytest_plugin.compiled import data_written

    root = _real(project)
    for path, where in sorted(data_written().items()):
        if _inside(path, (root,)):
            yield (
                os.path.relpath(path, root),
                f"a data file of the project's code, written by the tests' code at {where} "
                "while they ran: the code ran on data its users do not have",
            )


def _ran_as_the_tools_started(project: str, plugins: Iterable[object]) -> Iterator[tuple[str, str]]:
    """The project's modules already imported when pytest loaded agentgate's plugin
    (``start.MODULES_AT_START``): what the test tools' own start imported from the project's
    files, before any conftest.py, test or fixture ran (red team 21: an `org/python/core.py`
    that the standard library's `copy` probes for Jython, setting what the product reads).
    Not the project's pytest plugins and what their packages hold (a project that is a pytest
    plugin, pyfakefs), nor a coverage.py plugin its configuration names, nor anything when the
    project's own script started the run (``__main__`` is its file)."""
    from pytest_agentgate.pytest_plugin.start import MODULES_AT_START

    root = _real(project)
    installed = _installed_roots()
    main = MODULES_AT_START.get("__main__")
    if main is not None and _inside(main, (root,)) and not _inside(main, installed):
        return
    early = {
        name: where
        for name, where in MODULES_AT_START.items()
        if _inside(where, (root,)) and not _inside(where, installed)
    }
    if not early:
        return
    plugins = list(plugins)
    tops = set(TOOLS) | _coverage_plugins() | _warning_categories(plugins)
    # A plugin that is a top-level module imports its siblings: modules of its distribution
    # (hypothesis's `_hypothesis_pytestplugin` imports `_hypothesis_globals`, review 13).
    beside: set[str] = set()
    for plugin in plugins:
        name = plugin.__name__ if isinstance(plugin, ModuleType) else type(plugin).__module__
        where = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(name, str) and isinstance(where, str) and _inside(where, (root,)):
            tops.add(name.split(".", 1)[0])
            if "." not in name and not where.endswith("__init__.py"):
                beside.add(os.path.dirname(_real(where)))
    from pytest_agentgate.integrity.patches import TOOLS_NEEDS

    own = _project_tools(project)
    found: dict[str, list[str]] = {}
    for name, where in sorted(early.items()):
        top = name.split(".", 1)[0]
        sibling = "." not in name and os.path.dirname(_real(where)) in beside
        if sibling and not where.endswith("__init__.py"):
            continue
        if top in TOOLS_NEEDS and _inside(
            where, (os.path.join(root, top), os.path.join(root, "src", top))
        ):
            continue  # the project is a dependency of pytest's, which pytest imports (review 18)
        if top not in tops and name != "__main__" and not _inside(where, own):
            found.setdefault(top, []).append(where)
    for top, files in found.items():
        more = f" and {len(files) - 1} more" if len(files) > 1 else ""
        yield top, f"{files[-1]}{more}"


def _warning_categories(plugins: Iterable[object]) -> set[str]:
    """The top-level packages of the warning classes pytest's ``filterwarnings`` settings and
    ``-W`` options name (``error::marshmallow.warnings.RemovedInMarshmallow4Warning``): pytest
    9.2 imports them as it starts, before its plugins (review 25: marshmallow's unchanged base
    read as its code run by the test tools). The integrity gate judges such an entry the change
    adds (``hooks.py``)."""
    import pytest

    config = next((p for p in plugins if isinstance(p, pytest.Config)), None)
    if config is None:
        return set()
    entries: list[str] = []
    with contextlib.suppress(Exception):
        entries += [str(e) for e in config.getini("filterwarnings")]
    with contextlib.suppress(Exception):
        entries += [str(e) for e in config.known_args_namespace.pythonwarnings or []]
    tops = set()
    for entry in entries:
        parts = entry.split(":")
        category = parts[2].strip() if len(parts) > 2 else ""
        if "." in category:
            tops.add(category.split(".", 1)[0])
    return tops


def _coverage_plugins() -> set[str]:
    """The top-level names of the coverage.py plugins the measuring coverage's configuration
    names (``[run] plugins``): coverage.py imports them as it starts."""
    coverage = sys.modules.get("coverage")
    current = getattr(getattr(coverage, "Coverage", None), "current", None)
    try:
        names = current().config.plugins if callable(current) and current() else []
    except Exception:
        return set()
    return {str(name).split(".", 1)[0] for name in names}


def _members(
    name: str, module: ModuleType, *, safe: bool = False
) -> Iterator[tuple[str, Any, type | None]]:
    """The module's attributes, and the attributes of the classes it defines (with the class).
    ``safe``: an attribute that raises when asked what it is (a proxy outside its context) is
    passed over."""
    for attr, value in list(vars(module).items()):
        yield f"{name}.{attr}", value, None
        try:
            own_class = isinstance(value, type) and value.__module__ == name
        except Exception:
            if not safe:
                raise
            continue
        if own_class:
            for inner, member in list(vars(value).items()):
                yield f"{name}.{value.__qualname__}.{inner}", member, value


def _unwrap(value: Any) -> Any:
    """The function inside a method, classmethod, property or partial (a few layers deep).
    Unlike :func:`_static_unwrap` (the project's scan), it follows any object's ``__func__``:
    a callable object put in a tool's place that carries one is found by it."""
    return _static_unwrap(value, any_func=True)


# What dataclasses, attrs and namedtuple write for a class of their own, with no file.
_GENERATED_FOR = ("__dataclass_fields__", "__attrs_attrs__", "_fields")


def _made_at_run_time(value: Any, owner: type | None, attr: str) -> bool:
    """Whether a tool's function is code compiled at run time (``exec``, ``eval``: its file is
    ``<string>`` or another ``<...>`` name) that its module did not make for itself. What
    dataclasses, attrs and namedtuple write for a class is: a dunder method of a class they
    made, under its own name. A frozen standard-library module's function (``<frozen
    posixpath>``) is, when it is that module's own."""
    func = _unwrap(value)
    code = getattr(func, "__code__", None)
    filename = getattr(code, "co_filename", None)
    if not isinstance(filename, str) or not filename.startswith("<"):
        return False
    if filename.startswith("<frozen "):  # the interpreter's own, when its module is
        space = getattr(func, "__globals__", None)
        module = sys.modules.get(space.get("__name__", "")) if isinstance(space, dict) else None
        spec = getattr(module, "__spec__", None)
        return (
            module is None or vars(module) is not space or getattr(spec, "origin", "") != "frozen"
        )
    return not (
        owner is not None
        and attr.startswith("__")
        and attr.endswith("__")
        and getattr(func, "__qualname__", None) == f"{owner.__qualname__}.{attr}"
        and any(name in vars(owner) for name in _GENERATED_FOR)
    )


def _written_at(value: Any) -> tuple[str, int] | None:
    """Where the code of a function (or method, classmethod, property, partial) or class was
    written; None for what has no Python code of its own (builtins, data) or was compiled at run
    time (:func:`_made_at_run_time`)."""
    if type(value) is types.FunctionType:  # most of them: no layer to unwrap
        function_code = value.__code__
        name = function_code.co_filename
        return None if name.startswith("<") else (name, function_code.co_firstlineno)
    value = _unwrap(value)
    if isinstance(value, type):
        module = sys.modules.get(getattr(value, "__module__", "") or "")
        where = getattr(module, "__file__", None)
        return (where, 0) if isinstance(where, str) else None
    code = getattr(value, "__code__", None)
    if code is None and callable(value):
        # An object called in the function's place: its class's `__call__` is the code that
        # runs (red team 13: an instance of a conftest's class as pytest's report maker).
        call = next(
            (vars(k)["__call__"] for k in type(value).__mro__ if "__call__" in vars(k)), None
        )
        code = getattr(call, "__code__", None)
    filename = getattr(code, "co_filename", None)
    if not isinstance(filename, str) or filename.startswith("<"):
        return None  # a builtin, or generated code (dataclasses, attrs): "<string>"
    return filename, int(getattr(code, "co_firstlineno", 0))


@functools.lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    """Where installed code and the standard library live."""
    paths = set(sysconfig.get_paths().values())
    paths.update(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    paths.add(site.getusersitepackages())
    installed = ("site-packages", "dist-packages")
    paths.update(p for p in sys.path if os.path.basename(p.rstrip(os.sep)) in installed)
    return tuple(sorted({os.path.realpath(p) for p in paths if p}))


def _installed_editable(where: str) -> bool:
    """Whether ``where`` is on the path by an editable install: a folder named in a ``.pth`` of
    the installed code's folders, or mapped by setuptools' ``__editable___*_finder.py``."""
    real = _real(where)
    for folder in _installed_roots():
        try:
            names = [
                n for n in os.listdir(folder) if n.endswith(".pth") or n.endswith("_finder.py")
            ]
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    text = f.read(1_000_000)
            except OSError:
                continue
            if name.endswith(".pth"):
                lines = [line.strip() for line in text.splitlines()]
                entries = [line for line in lines if line and not line.startswith(("#", "import"))]
                if any(_inside(real, (_real(os.path.join(folder, e)),)) for e in entries):
                    return True
            elif name.startswith("__editable__") and (
                real in text or os.path.dirname(real) in text
            ):
                return True
    return False


def _package_folder(name: str, where: str) -> str:
    """The folder of a module's top-level package (an editable install of a tool lives there)."""
    folder = os.path.dirname(_real(where))
    for _ in range(name.count(".")):
        folder = os.path.dirname(folder)
    return folder


@functools.lru_cache(maxsize=4096)
def _real(path: str) -> str:
    return os.path.realpath(path)


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    real = _real(path)
    return any(real == root or real.startswith(root + os.sep) for root in roots)
