"""Code and settings the change adds that alter results, selection or the exit, or disarm the gate.

- **result-rewritten**: a new or changed ``pytest_runtest_makereport``,
  ``pytest_report_teststatus``, ``pytest_runtest_call``/``pytest_pyfunc_call``, a
  ``pytest_runtest_logreport`` or ``pytest_terminal_summary`` that writes to the report or the
  stats, a ``pytest_sessionfinish`` that sets the exit status: in a conftest or a plugin module.
- **selection-narrowed**: a ``pytest_collection_modifyitems`` that removes items, a new
  ``pytest_ignore_collect``/``pytest_collect_file`` hook, ``collect_ignore``
  gaining entries; selection options set from code (``config.option.keyword = ...``,
  ``config.option.deselect``, ``config.args``); ``-k``, ``-m``, ``--deselect``, ``--ignore``,
  ``-x``, ``--lf``... new in the pytest configuration's ``addopts`` (the base's own selection
  is the suite).
- **skip-added**: a skip or xfail mark added to collected tests by a conftest's hook or fixture
  (``item.add_marker(pytest.mark.xfail(...))``, ``request.applymarker(...)``), unless its
  condition asks the platform or the Python version and is false here.
- **exit-forced**: ``pytest.exit``, ``os._exit``, ``sys.exit``, ``exit``/``quit``,
  ``os.kill``/``signal``, ``atexit.register`` new in conftest or plugin code.
- **guard-forged**: an ``AGENTGATE_*`` variable set in code or configuration, ``-p
  no:agentgate`` or ``--agentgate-no-run`` in a configuration file.
- **rerun-added**: ``--reruns``/``--only-rerun``/``reruns =`` new in the pytest configuration.

A hook is judged as the hook pytest calls it for: its name, or the hook pluggy's ``specname=``
names (``@pytest.hookimpl(specname="pytest_runtest_makereport") def pytest_known_issues``).

Compared with the base by AST (a hook whose body did not change is not a finding; reformatting is
not a finding) and, for settings, by the options they hold.
"""

from __future__ import annotations

import ast
import contextlib
import fnmatch
import functools
import json
import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import PurePosixPath

from pytest_agentgate import syntax
from pytest_agentgate.git import GitError
from pytest_agentgate.integrity import pytest_files
from pytest_agentgate.integrity.model import IntegrityFinding, Scan, past_the_base
from pytest_agentgate.integrity.patches import (
    TOOLS,
    assigned,
    attributes_set,
    parse_python,
    patched,
)
from pytest_agentgate.integrity.tests_python import (
    Module,
    Settings,
    environmental,
    matches_python_files,
    read_mark,
    read_settings,
    truthy,
)
from pytest_agentgate.syntax import dumped, unparsed

RESULT_HOOKS = {"pytest_runtest_makereport", "pytest_report_teststatus"}
# Hooks that run a test, or the whole of its protocol (a `tryfirst` pytest_runtest_protocol
# that runs the test again and logs reports of its own: red team 10).
CALL_HOOKS = {
    "pytest_runtest_call", "pytest_pyfunc_call", "pytest_runtest_protocol",
    # items made by the code itself, with whatever it passes as their function (red team 11)
    "pytest_pycollect_makeitem",
    # the loop that runs every item, and a module's collector of the code's own: they choose
    # what runs under each test's name (red team 27)
    "pytest_runtestloop", "pytest_pycollect_makemodule",
}  # fmt: skip
REPORT_WRITERS = {"pytest_runtest_logreport", "pytest_terminal_summary"}
# pytest_collect_file is not one: it adds collectors beside pytest's own, never removes one.
# (`pytest_deselected` is told what was deselected: implementing it selects nothing; calling it
# is what deselection does, judged in `pytest_collection_modifyitems`.)
SELECTION_HOOKS = {"pytest_ignore_collect"}
EXIT_CALLS = {
    "pytest.exit",
    "os._exit",
    "sys.exit",
    "exit",
    "quit",
    "os.kill",
    "os.abort",
    "signal.signal",
    "atexit.register",
}
SELECTION_OPTIONS = (
    "-k",
    "-m",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "-x",
    "--exitfirst",
    "--maxfail",
    "--lf",
    "--last-failed",
    "--sw",
    "--stepwise",
    "--co",
    "--collect-only",
)
RERUN_OPTIONS = ("--reruns", "--only-rerun", "--reruns-delay")
GUARD_WORDS = re.compile(r"AGENTGATE_\w+|no:agentgate|--agentgate-no-run|no:pytest_agentgate")
SETTINGS_FILES = pytest_files.FILES


def analyze(scan: Scan) -> Iterable[IntegrityFinding]:
    hidden = _Hidden(scan)
    for path, status in sorted(scan.touched.items()):
        if status == "deleted":
            continue
        now = scan.sources.now(path)
        if now is None:
            continue
        before = scan.sources.at_base(scan.renamed_from.get(path, path)) or ""
        name = PurePosixPath(path).name
        if path.endswith(".py"):
            # Only a file that defines a hook (`def pytest_...`) or names an AGENTGATE_ variable
            # can be a finding here: the rest of a large change is not parsed at all.
            hooks = name == "conftest.py" or "pytest_" in now
            guard = "AGENTGATE" in now
            if not (hooks or guard):
                continue
            now_tree, before_tree = _parse(now), _parse(before)
            if now_tree is None:
                continue
            if name == "conftest.py" or (hooks and _defines_hooks(now_tree)):
                yield from _hook_findings(path, now_tree, before_tree, hidden)
                yield from _exit_findings(path, now_tree, before_tree)
                yield from _report_findings(path, now_tree, before_tree)
                yield from _option_findings(path, now_tree, before_tree)
                yield from _test_code_replaced(path, now_tree, before_tree)
                if not name.startswith("test_") and not name.endswith("_test.py"):
                    yield from _mark_findings(path, now_tree, before_tree, _marked_at_base(scan))
            if guard:
                yield from _guard_in_code(path, now_tree, before_tree)
        elif name in SETTINGS_FILES:
            yield from _settings_findings(path, name, now, before)
            yield from _warning_imports(scan, path, name, now, before)
        elif name.endswith((".ini", ".cfg", ".toml", ".yml", ".yaml", ".env", ".json")):
            yield from _guard_in_text(path, now, before)


# -- hooks -----------------------------------------------------------------------------------


def _parse(text: str) -> ast.Module | None:
    try:
        return syntax.parse(text)
    except (SyntaxError, ValueError):
        return None


def _defines_hooks(tree: ast.Module) -> bool:
    return any(is_hook_name(name) for name in _hooks(tree))


def is_hook_name(name: str) -> bool:
    """A hook pytest (or pytest-xdist) calls: not merely a name that starts with ``pytest_``
    (``pytest_plugins``, a helper ``def pytest_in(...)``, a local ``pytest_version``)."""
    return name in _hook_names() or name.startswith("pytest_xdist_")


@functools.lru_cache(maxsize=1)
def _hook_names() -> frozenset[str]:
    try:
        import _pytest.hookspec as spec
    except ImportError:  # pragma: no cover - pytest is a dependency
        return frozenset()
    names = {n for n in dir(spec) if n.startswith("pytest_")}
    # pytest-xdist's and pytest-cov's, which a project's conftest may implement too.
    names |= {"pytest_configure_node", "pytest_testnodedown", "pytest_testnodeready"}
    return frozenset(names)


def _hooks(tree: ast.Module | None) -> dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The module's hook functions by hook name: each ``def pytest_*``, and each function a
    module-level assignment to a hook's name binds (``pytest_runtest_makereport =
    hookimpl(...)(_wrap)``, an alias of another name), judged as if it were defined under the
    hook's name."""
    found: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    defined: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    markers = _specname_markers(tree)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.setdefault(node.name, node)
            spec = next(
                (s for d in node.decorator_list if (s := _specname(d, markers)) is not None), None
            )
            if spec is not None:
                found.setdefault(spec, []).append(node)
            elif node.name.startswith("pytest_"):
                found.setdefault(node.name, []).append(node)
    for node in tree.body if tree is not None else ():
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        spec = _specname(node.value, markers)
        for target in targets:
            if isinstance(target, ast.Name) and spec and target.id.startswith("pytest_"):
                target = ast.Name(spec)  # judged as the hook pluggy calls it for
            if isinstance(target, ast.Name) and is_hook_name(target.id):
                bound = [
                    defined[n.id]
                    for n in ast.walk(node.value)
                    if isinstance(n, ast.Name) and n.id in defined
                ]
                if not bound:  # a lambda (its body returned), or a function from elsewhere
                    stand_in = ast.parse(f"def {target.id}(): return _elsewhere").body[0]
                    assert isinstance(stand_in, ast.FunctionDef)
                    if isinstance(node.value, ast.Lambda):
                        stand_in.body = [ast.Return(node.value.body)]
                    stand_in.lineno = node.lineno
                    bound = [stand_in]
                found.setdefault(target.id, []).extend(bound)
    return found


def _specname_markers(tree: ast.Module | None) -> dict[str, str]:
    """Module-level names bound to a hookimpl marker that names its hook
    (``known = pytest.hookimpl(specname="pytest_runtest_makereport")``), by name."""
    found: dict[str, str] = {}
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Assign):
            spec = _specname(node.value, found)
            if spec is not None:
                found.update((t.id, spec) for t in node.targets if isinstance(t, ast.Name))
    return found


def _specname(node: ast.expr, markers: dict[str, str]) -> str | None:
    """The hook a decorator or a bound hookimpl names with pluggy's ``specname=``: pluggy calls
    the function for that hook whatever its own name (``@pytest.hookimpl(wrapper=True,
    specname="pytest_runtest_makereport") def pytest_known_issues(...)``)."""
    if isinstance(node, ast.Name):
        return markers.get(node.id)
    if not isinstance(node, ast.Call):
        return None
    for keyword in node.keywords:
        if keyword.arg == "specname":
            value = keyword.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
            return "pytest_runtest_makereport"  # a name it computes: judged as the worst one
    return _specname(node.func, markers)


def _hook_shape(node: ast.AST) -> str:
    """A hook's code as a comparable text, without its docstrings (and those of what it
    defines): a reworded docstring leaves the hook doing what it did (a third review on real
    projects: pytest-rerunfailures' own protocol hook)."""
    import copy

    node = copy.deepcopy(node)
    for inner in ast.walk(node):
        if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = inner.body[0] if inner.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                inner.body = inner.body[1:] or [ast.Pass()]
    return _shape(node)


def _shape(node: ast.AST) -> str:
    return dumped(node)


def _hook_findings(
    path: str, now: ast.Module, before: ast.Module | None, hidden: _Hidden | None = None
) -> Iterator[IntegrityFinding]:
    old = {name: Counter(_hook_shape(f) for f in funcs) for name, funcs in _hooks(before).items()}
    for name, funcs in sorted(_hooks(now).items()):
        unchanged = Counter(old.get(name, Counter()))
        for func in funcs:
            shape = _hook_shape(func)
            if unchanged[shape] > 0:
                unchanged[shape] -= 1
                continue
            finding = _judge_hook(path, name, func, now)
            if finding is not None and name in old:
                # The base has this hook: a refactor of it reads as one (review 19: wrapt's
                # collection hook, its version parsing moved into a helper).
                finding.message = finding.message.replace(
                    f"new or changed {name} in {PurePosixPath(path).name}",
                    f"{name} in {PurePosixPath(path).name}, changed since the base,",
                )
            if finding is not None:
                yield finding
    for line, what in past_the_base(_hooks_attached(now), _hooks_attached(before)):
        yield IntegrityFinding(
            "result-rewritten",
            f"{PurePosixPath(path).name} attaches {what} with setattr: a hook pytest calls "
            "whatever its function's name, judged as the worst one",
            path,
            line,
        )
    yield from _collect_ignore(path, now, before, hidden)


def _hooks_attached(tree: ast.Module | None) -> list[tuple[int, str]]:
    """``setattr(obj, "pytest_runtest_" + "makereport", f)``: a hook attached to an object
    (a plugin the code then registers) under a name built at run time, which no ``def`` shows
    (red team 11)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree) if tree is not None else ():
        if not (
            isinstance(node, ast.Call)
            and _dotted(node.func).rsplit(".", 1)[-1] in ("setattr", "__setattr__")
            and len(node.args) >= 2
        ):
            continue
        name = node.args[1]
        pieces = [
            c.value
            for c in ast.walk(name)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        ]
        if any(piece.startswith("pytest_") for piece in pieces) or (
            not isinstance(name, ast.Constant) and any("pytest" in p for p in pieces)
        ):
            shown = "".join(pieces) if pieces else "a hook"
            found.append((node.lineno, f"`{shown}`"))
    return found


def plugin_findings(path: str, text: str) -> list[str] | None:
    """What each hook of a plugin module outside the project (its source ``text``) can alter,
    judged as a conftest's new hooks are, and the skip or xfail marks it adds to collected
    tests (red team 44: pytest-expect's ``item.add_marker(pytest.mark.xfail)``, in a method of
    the plugin object it registers): the messages, in the file's order. None when the text does
    not parse (cut off, or not Python): it cannot be judged, which is no "nothing found" (red
    team 50)."""
    tree = parse_python(text)
    if tree is None:
        return None
    found = sorted(
        [*_hook_findings(path, tree, None), *_mark_findings(path, tree, None)],
        key=lambda f: f.line or 0,
    )
    messages = [f.message.removeprefix("new or changed ") for f in found]
    # No hook at all: the test tools' code replaced as the plugin is imported (red team 10:
    # `_pytest.runner.call_and_report = ...`).
    messages.extend(
        f"{PurePosixPath(path).name} patches {target}, code of the test tools"
        for target, _ in patched(tree, TOOLS - {"pytest_agentgate"})
    )
    return messages


def _judge_hook(
    path: str, name: str, func: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module
) -> IntegrityFinding | None:
    where = f"{name} in {PurePosixPath(path).name}"
    if not is_hook_name(name):
        return None  # a helper named like a hook: pytest never calls it
    if name == "pytest_runtest_makereport" and not _alters_the_report(func, tree):
        pass  # reads the report (a plugin attaching it to the item): alters nothing
    elif name in RESULT_HOOKS or name in CALL_HOOKS:
        return IntegrityFinding(
            "result-rewritten", f"new or changed {where} can alter test outcomes", path, func.lineno
        )
    if name in REPORT_WRITERS and _writes_attributes(func):
        return IntegrityFinding(
            "result-rewritten", f"{where} writes to reports or stats", path, func.lineno
        )
    if _assigns(func, {"exitstatus", "testsfailed", "testscollected"}):
        return IntegrityFinding(
            "result-rewritten", f"{where} sets the session's exit status", path, func.lineno
        )
    if _report_lines(func):
        return IntegrityFinding(
            "result-rewritten",
            f"{where} reaches for the JUnit report or its writer, which the gate reads",
            path,
            func.lineno,
        )
    if name == "pytest_collection_modifyitems" and _removes_items(func):
        return IntegrityFinding(
            "selection-narrowed", f"{where} removes collected tests from the run", path, func.lineno
        )
    if name in SELECTION_HOOKS:
        return IntegrityFinding(
            "selection-narrowed",
            f"new or changed {where} decides what is collected",
            path,
            func.lineno,
        )
    if name == "pytest_runtest_setup" and _skips_here(func, path, tree):
        return IntegrityFinding(
            "selection-narrowed", f"{where} skips tests as they start", path, func.lineno
        )
    return None


_SKIPS = {"pytest.skip", "skip"}


def _skips_here(func: ast.AST, path: str, tree: ast.Module) -> bool:
    """Whether a hook may call ``pytest.skip`` here. A skip only under a condition that asks
    where it runs (the platform, the OS, the Python version) and is false here skips nothing
    here, as a ``skipif`` mark on such a condition does not (``tests_python``'s reading of
    conditions); a skip under any other condition, or one that cannot be told, may."""
    if not _calls(func, _SKIPS):
        return False
    module = Module(path, tree, Settings())
    return any(True for _ in _live_skips(func, module))


def _live_skips(
    node: ast.AST, module: Module, match: Callable[[ast.Call], bool] | None = None
) -> Iterator[ast.Call]:
    """The skip calls (or the calls ``match`` picks) under ``node`` that may run here."""
    if match is None:
        match = _is_skip_call
    if isinstance(node, ast.If) and environmental(node.test, module):
        test = truthy(node.test, module)
        yield from _live_skips(node.test, module, match)
        for branch, taken in ((node.body, test is not False), (node.orelse, test is not True)):
            if taken:
                yield from _live_body(branch, module, match)
        return
    if isinstance(node, ast.Call) and match(node):
        yield node
    for _, field in ast.iter_fields(node):
        if isinstance(field, list):
            if field and all(isinstance(item, ast.stmt) for item in field):
                yield from _live_body(field, module, match)
            else:
                for item in field:
                    if isinstance(item, ast.AST):
                        yield from _live_skips(item, module, match)
        elif isinstance(field, ast.AST):
            yield from _live_skips(field, module, match)


def _is_skip_call(call: ast.Call) -> bool:
    return _dotted(call.func) in _SKIPS


def _live_body(
    body: list[ast.stmt], module: Module, match: Callable[[ast.Call], bool] | None = None
) -> Iterator[ast.Call]:
    """The live skips of a block, up to a platform check that returns here
    (``if sys.platform != "win32": return``): what follows it runs elsewhere."""
    for stmt in body:
        yield from _live_skips(stmt, module, match)
        if isinstance(stmt, ast.If) and environmental(stmt.test, module):
            test = truthy(stmt.test, module)
            taken = stmt.body if test is True else stmt.orelse if test is False else None
            if taken and isinstance(taken[-1], ast.Return):
                return


# -- skips and xfails added to collected tests --------------------------------------------------

_MARKING = frozenset({"add_marker", "applymarker"})
_SKIP_MARK_NAMES = frozenset({"skip", "skipif", "xfail"})


def _mark_findings(
    path: str,
    now: ast.Module,
    before: ast.Module | None,
    marked_at_base: Callable[[str], bool] = lambda name: False,
) -> Iterator[IntegrityFinding]:
    """A skip or xfail mark the change makes a conftest or plugin add to tests
    (``item.add_marker(pytest.mark.xfail(...))`` in a collection hook, an autouse fixture's
    ``request.applymarker(...)``): the test then counts as skipped or xfailed, not failed, as
    a mark written on it does. Not a finding: another mark (``pytest.mark.slow``), a mark whose
    condition asks the platform or the Python version and is false here, or one added only
    under such a check."""
    had = _marks_added(path, before, marked_at_base) if before is not None else []
    for line, what in past_the_base(_marks_added(path, now, marked_at_base), had):
        yield IntegrityFinding(
            "skip-added",
            f"{PurePosixPath(path).name} adds {what} to collected tests: they count as "
            "skipped or xfailed, not failed",
            path,
            line,
        )


def _marks_added(
    path: str, tree: ast.Module, marked_at_base: Callable[[str], bool] = lambda name: False
) -> list[tuple[int, str]]:
    """(line, mark as written) of each skip or xfail mark the module's code may add here:
    by ``add_marker``/``applymarker``, or into a node's ``own_markers``, the list pytest's
    skipping plugin reads (``item.own_markers.append(pytest.mark.skip().mark)``, ``extend``,
    ``insert``, ``+=``, assigned)."""
    if not any(
        isinstance(n, ast.Attribute) and (n.attr in _MARKING or n.attr == _OWN_MARKERS)
        for n in ast.walk(tree)
    ):
        return []
    module = Module(path, tree, Settings())
    skipping_here = _skip_marks_here(tree, module)
    opt_in = _opt_in_marks(tree, marked_at_base)
    given = [
        (call.lineno, arg)
        for call in _live_skips(tree, module, lambda call: bool(_marks_given(call)))
        if not opt_in(call)
        for arg in _marks_given(call)
    ]
    for statement in ast.walk(tree):  # item.own_markers += [...], item.own_markers = [...]
        targets: list[ast.expr]
        if isinstance(statement, ast.AugAssign):
            targets, value = [statement.target], statement.value
        elif isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        else:
            continue
        if any(isinstance(t, ast.Attribute) and t.attr == _OWN_MARKERS for t in targets):
            given.extend((statement.lineno, arg) for arg in _elements(value))
    found = []
    for line, arg in given:
        node = module.alias(arg)
        if isinstance(node, ast.Attribute) and node.attr == "mark":  # MarkDecorator.mark
            node = module.alias(node.value)
        if isinstance(node, ast.Call) and (module.dotted(node.func) or "").endswith("Mark"):
            node = node.args[0] if node.args else node  # Mark("skip", (), {})
        if isinstance(node, ast.Constant):  # add_marker("xfail")
            if node.value in _SKIP_MARK_NAMES:
                found.append((line, f"pytest.mark.{node.value}"))
            continue
        marker = read_mark(node, module)
        if marker is not None:
            if marker.category == "skip" and marker.here is not False:
                found.append((line, _written(node)))
        elif not _a_mark(node, module) and skipping_here:
            # A mark the code picks (`MARKS[item.name]`) in a module that builds skips.
            found.append((line, skipping_here[0]))
    return found


_OWN_MARKERS = "own_markers"
_LIST_ADDS = frozenset({"append", "extend", "insert", "__iadd__"})


def _marks_given(call: ast.Call) -> list[ast.expr]:
    """The marks a call gives a test node: ``add_marker(m)``, ``applymarker(m)``, or a list
    method of its ``own_markers`` (``append(m)``, ``insert(0, m)``, ``extend([m, ...])``)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return []
    if func.attr in _MARKING:
        arg = call.args[0] if call.args else next((k.value for k in call.keywords), None)
        return [] if arg is None else [arg]
    if not (
        func.attr in _LIST_ADDS
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == _OWN_MARKERS
    ):
        return []
    given = call.args[1:2] if func.attr == "insert" else call.args[:1]
    if func.attr in ("extend", "__iadd__") and given:
        return _elements(given[0])
    return given


def _elements(node: ast.expr) -> list[ast.expr]:
    """The items of a list, tuple or set display, or of two joined by ``+``; else the node."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _elements(node.left) + _elements(node.right)
    return [node]


def _opt_in_marks(
    tree: ast.Module, marked_at_base: Callable[[str], bool]
) -> Callable[[ast.Call], bool]:
    """Whether a mark call is pytest's documented opt-in (``--runslow``): added only when a
    command-line option the module itself defines (``pytest_addoption``) says so
    (``config.getoption("--runslow")``, ``config.option.runslow``) and only to tests that carry
    a marker (``"slow" in item.keywords``, ``item.get_closest_marker("slow")``) that no test of
    the base carries. A test the change marks and the run skips is caught at run time; a mark
    keyed on the test's name, on a marker tests of the base carry (they ran there and would be
    skipped unseen), or added under no such condition, is not an opt-in."""
    options = _own_options(tree)
    if not options:
        return lambda call: False
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def opt_in(call: ast.Call) -> bool:
        tests: list[ast.expr] = []
        node: ast.AST = call
        while node in parents:
            parent = parents[node]
            if isinstance(parent, ast.If) and node is not parent.test:
                tests.append(parent.test)
            for field in ("body", "orelse"):
                block = getattr(parent, field, None)
                if isinstance(block, list) and node in block:
                    # `if config.getoption("--runslow"): return` before it
                    for stmt in block[: block.index(node)]:
                        if (
                            isinstance(stmt, ast.If)
                            and stmt.body
                            and isinstance(stmt.body[-1], (ast.Return, ast.Continue))
                        ):
                            tests.append(stmt.test)
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                break
            node = parent
        markers = [m for t in tests for m in _markers_asked(t)]
        return (
            any(_asks_option(t, options) for t in tests)
            and bool(markers)
            and not any(marked_at_base(m) for m in markers)
        )

    return opt_in


def _own_options(tree: ast.Module) -> set[str]:
    """The options (``--runslow``) and their ``dest`` names (``runslow``) the module's
    ``pytest_addoption`` defines."""
    found: set[str] = set()
    for func in tree.body:
        if not (isinstance(func, ast.FunctionDef) and func.name == "pytest_addoption"):
            continue
        for call in ast.walk(func):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "addoption"
            ):
                continue
            names = [
                a.value
                for a in call.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value[:1] == "-"
            ]
            found.update(names)
            dest = next((k.value for k in call.keywords if k.arg == "dest"), None)
            if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
                found.add(dest.value)
            else:
                long = [n for n in names if n.startswith("--")]
                if long:
                    found.add(long[0][2:].replace("-", "_"))
    return found


def _asks_option(test: ast.expr, options: set[str]) -> bool:
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("getoption", "getvalue")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in options
        ):
            return True
        if (
            isinstance(node, ast.Attribute)
            and node.attr in options
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "option"
        ):
            return True
    return False


def _markers_asked(test: ast.expr) -> list[str]:
    """The markers ``test`` asks a test for: ``"slow" in item.keywords``,
    ``item.get_closest_marker("slow")``, ``item.iter_markers("slow")``; a marker's name, not
    the test's (``"test_x" in item.keywords`` names the test: keywords hold its name too)."""
    found = []
    for node in ast.walk(test):
        name: ast.expr | None = None
        if (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and isinstance(node.comparators[0], ast.Attribute)
            and node.comparators[0].attr == "keywords"
        ):
            name = node.left
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get_closest_marker", "iter_markers")
        ):
            name = node.args[0] if node.args else next((k.value for k in node.keywords), None)
        if (
            isinstance(name, ast.Constant)
            and isinstance(name.value, str)
            and name.value.isidentifier()
            and not name.value.lower().startswith("test")
        ):
            found.append(name.value)
    return found


def _marked_at_base(scan: Scan) -> Callable[[str], bool]:
    """Whether a Python file of the base's names a marker (``mark.slow``): the tests it marks
    ran at the base. Read once, only when asked."""
    texts: list[str] | None = None

    def marked(name: str) -> bool:
        nonlocal texts
        if texts is None:
            try:
                tracked = scan.repo.tracked_at(scan.change.base)
            except (GitError, OSError):
                tracked = []
            paths = [scan.change.relative(p, scan.root) for p in tracked]
            texts = [
                text
                for p in paths
                if p is not None and p.endswith(".py")
                for text in [scan.sources.at_base(p)]
                if text is not None and "mark." in text
            ]
        pattern = re.compile(rf"\bmark\.{re.escape(name)}\b")
        return any(pattern.search(text) for text in texts)

    return marked


def _written(node: ast.AST) -> str:
    text = " ".join(unparsed(node).split())
    return text if len(text) <= 70 else text[:67] + "..."


def _a_mark(node: ast.expr, module: Module) -> bool:
    """``pytest.mark.NAME`` or ``pytest.mark.NAME(...)`` of a name that is no skip."""
    call = node.func if isinstance(node, ast.Call) else node
    name = module.dotted(call) or ""
    return name.startswith("pytest.mark.") and name.rsplit(".", 1)[-1] not in _SKIP_MARK_NAMES


def _skip_marks_here(tree: ast.Module, module: Module) -> list[str]:
    """The skip and xfail marks the module writes anywhere that may apply here."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Call)):
            marker = read_mark(node, module)
            if marker is not None and marker.category == "skip" and marker.here is not False:
                found.append(_written(node))
    return found


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _calls(node: ast.AST, names: set[str]) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and _dotted(n.func) in names]


# What a makereport hook changes when it rewrites a result.
REPORT_FIELDS = frozenset({"outcome", "longrepr", "wasxfail", "excinfo", "when"})
RESULT_SETTERS = frozenset({"force_result", "set_result", "force_exception", "_result"})


def _alters_the_report(
    func: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module | None = None
) -> bool:
    """Whether a makereport hook writes a report's outcome, hands pluggy a result of its own, or
    (not a wrapper) returns a report: what reading it, to keep it on the item, never does. The
    module's own functions it calls are read as its body (red team 11: the report handed to a
    helper that writes `report.outcome`)."""
    wrapper = any(
        isinstance(k, ast.keyword) and k.arg in ("hookwrapper", "wrapper")
        for d in func.decorator_list
        if isinstance(d, ast.Call)
        for k in d.keywords
    )
    helpers = {
        node.name: node
        for node in (tree.body if tree is not None else [])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    bodies: list[ast.AST] = [func]
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            helper = helpers.get(node.func.id)
            if helper is not None and helper is not func and helper not in bodies:
                bodies.append(helper)
    for owner, node in ((body, inner) for body in bodies for inner in ast.walk(body)):
        if assigned(node):
            if any(
                (isinstance(t, ast.Attribute) and t.attr in REPORT_FIELDS)
                or (isinstance(t, ast.Subscript) and _a_namespace(t.value))
                for t in assigned(node)
            ):
                return True
        elif isinstance(node, ast.Call):
            called = _dotted(node.func).rsplit(".", 1)[-1]
            if called in RESULT_SETTERS:
                return True
            if (
                called in ("update", "__setitem__", "setdefault")
                and isinstance(node.func, ast.Attribute)
                and _a_namespace(node.func.value)
            ):
                return True  # `vars(report).update(outcome="passed")` (red team 10)
            # `setattr(report, name, v)`, `object.__setattr__(report, name, v)` (red team 11),
            # `report.__setattr__(name, v)`: the name is the one before the value.
            if (
                called in ("setattr", "__setattr__")
                and len(node.args) >= 2
                and _may_name_a_field(node.args[-2])
            ):
                return True
        elif (
            isinstance(node, ast.Return)
            and owner is func  # (what a helper returns is the helper's)
            and node.value is not None
            and not wrapper
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            return True
    return False


def _a_namespace(node: ast.expr) -> bool:
    """An object's attributes as a mapping: ``vars(x)``, ``x.__dict__``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__"
    return isinstance(node, ast.Call) and _dotted(node.func) == "vars" and len(node.args) == 1


def _may_name_a_field(name: ast.expr) -> bool:
    """Whether a ``setattr`` name may be one of :data:`REPORT_FIELDS`: ``"rep_" + when`` (the
    pytest docs' recipe keeping the report on the item) never is."""
    if isinstance(name, ast.Constant):
        return name.value in REPORT_FIELDS
    if isinstance(name, ast.BinOp) and isinstance(name.left, ast.Constant):
        prefix = name.left.value
        return not (
            isinstance(prefix, str)
            and prefix
            and not any(field.startswith(prefix) for field in REPORT_FIELDS)
        )
    if isinstance(name, ast.JoinedStr) and name.values and isinstance(name.values[0], ast.Constant):
        return _may_name_a_field(ast.BinOp(name.values[0], ast.Add(), ast.Constant("")))
    return True


def _writes_attributes(func: ast.AST) -> bool:
    for node in ast.walk(func):
        if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in assigned(node)):
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("pop", "clear", "remove", "update", "__setitem__")
        ):
            return True
    return False


# What a hook names to reach the JUnit report pytest wrote (and the gate reads): its path in
# pytest's options, its writer, agentgate's own report folder.
REPORT_NAMES = frozenset({"xmlpath", "junitxml", "xml_key", "LogXML", "junit_xml", "_xml"})


def _report_lines(tree: ast.AST | None) -> list[int]:
    """The lines that name the JUnit report, its path or its writer (:data:`REPORT_NAMES`)."""
    lines = []
    for node in ast.walk(tree) if tree is not None else ():
        named = (isinstance(node, ast.Attribute) and node.attr in REPORT_NAMES) or (
            isinstance(node, ast.Name) and node.id in REPORT_NAMES
        )
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            named = ".agentgate" in text or text in REPORT_NAMES
        if named:
            lines.append(getattr(node, "lineno", 0))
    return sorted(lines)


def _report_findings(
    path: str, now: ast.Module, before: ast.Module | None
) -> Iterator[IntegrityFinding]:
    """Code of a conftest or plugin, outside its hooks too (an ``atexit`` handler), that the
    change makes name the JUnit report: it can rewrite the report after pytest wrote it."""
    new, old = _report_lines(now), _report_lines(before)
    if len(new) > len(old):
        yield IntegrityFinding(
            "result-rewritten",
            f"{PurePosixPath(path).name} reaches for the JUnit report or its writer, which the "
            "gate reads: it can rewrite the results after pytest wrote them",
            path,
            new[len(old)],
        )


# What a test item runs (pytest's ``Item.runtest``, ``Function.obj``): a conftest that assigns
# one runs something else in the test's name.
_ITEM_CODE = frozenset({"runtest", "obj", "_obj"})


def _test_code_replaced(
    path: str, now: ast.Module, before: ast.Module | None
) -> Iterator[IntegrityFinding]:
    """Code of a conftest or plugin that the change makes replace what a test item runs
    (``item.runtest = lambda: None``, ``item.obj = ...``, ``setattr(item, "runtest", ...)``):
    the test then passes without running. A custom item's own ``self.obj`` is its definition."""
    for line, what in past_the_base(_item_code_writes(now), _item_code_writes(before)):
        yield IntegrityFinding(
            "result-rewritten",
            f"{PurePosixPath(path).name} replaces {what}: the test passes without running its "
            "own code",
            path,
            line,
        )


# The names pytest's hooks and fixtures give a test item (``request.node``, ``item``).
_ITEM_NAMES = frozenset({"item", "pyfuncitem", "node", "function", "test_item", "child"})


def _a_test_item(node: ast.expr, aliases: frozenset[str] = frozenset()) -> bool:
    """``item``, ``pyfuncitem``, ``request.node``, ``items[0]``: a test item, as hooks and
    fixtures name it (not ``ctx.obj`` of a click context, or a custom item's ``self``), or
    a name ``aliases`` holds (:func:`_item_aliases`)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id in _ITEM_NAMES or node.id == "items" or node.id in aliases
    return isinstance(node, ast.Attribute) and node.attr in ("node", "parent")


def _item_aliases(tree: ast.Module) -> frozenset[str]:
    """Names bound to the collected items under any name: ``for case in items``, ``for n,
    case in enumerate(session.items)``, ``case = items[0]`` (red team 10: ``case.obj =
    wrapper(case.obj)``)."""

    def the_items(node: ast.expr) -> bool:
        while isinstance(node, ast.Call) and node.args:  # list(...), sorted(...), enumerate(...)
            node = node.args[0]
        if isinstance(node, ast.Subscript):
            node = node.value
        return (isinstance(node, ast.Name) and node.id == "items") or (
            isinstance(node, ast.Attribute) and node.attr == "items"
            and not isinstance(node.value, ast.Call)  # `d.items()` is called: not these
        )  # fmt: skip

    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and the_items(node.iter):
            names.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Subscript)
            and the_items(node.value)
        ):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def _item_code_writes(tree: ast.Module | None) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    aliases = _item_aliases(tree) if tree is not None else frozenset()
    for node in ast.walk(tree) if tree is not None else ():
        found.extend(
            (line, f"the test item's {attr}")
            for owner, attr, line in attributes_set(node)
            if attr in _ITEM_CODE and _a_test_item(owner, aliases)
        )
    return found


# pytest's options (their `dest`) that choose which tests run: `-k`, `-m`, `--deselect`,
# `--ignore`, `--ignore-glob`, `--lf`, `-x`, `--maxfail`, `--sw`, `--co`, `-o`, the paths.
SELECTION_DESTS = frozenset(
    {
        "keyword", "markexpr", "deselect", "ignore", "ignore_glob", "lf",
        "last_failed_no_failures", "exitfirst", "maxfail", "stepwise", "stepwise_skip",
        "collectonly", "override_ini", "file_or_dir", "pyargs", "confcutdir", "noconftest",
    }
)  # fmt: skip
_SETTINGS_TABLES = ("_inicache", "inicfg", "_override_ini")
_LIST_WRITERS = frozenset(
    {"append", "extend", "insert", "remove", "pop", "clear", "__setitem__", "__delitem__"}
)


def _option_findings(
    path: str, now: ast.Module, before: ast.Module | None
) -> Iterator[IntegrityFinding]:
    """Code of a conftest or plugin that the change makes set pytest's selection options
    (``config.option.keyword = "not test_x"``, ``config.option.deselect``, ``config.args``):
    pytest then deselects or leaves out tests itself, and the run looks like the whole suite."""
    for line, what in past_the_base(_option_writes(now), _option_writes(before)):
        yield IntegrityFinding(
            "selection-narrowed",
            f"{PurePosixPath(path).name} sets {what}: pytest runs only the tests it selects, "
            "and the base's whole suite must run",
            path,
            line,
        )


def _option_writes(tree: ast.Module | None) -> list[tuple[int, str]]:
    """(line, what) of each write to a selection option of pytest's ``config.option`` (or
    ``known_args_namespace``), to ``config.args``, or to its ini values."""
    if tree is None:
        return []
    owners: set[str] = set()
    for node in ast.walk(tree):  # `opt = config.option`: `opt.keyword = ...`
        if isinstance(node, ast.Assign) and _is_options(node.value, owners):
            owners.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def options_dict(node: ast.expr) -> bool:  # vars(config.option), config.option.__dict__
        if isinstance(node, ast.Call) and _dotted(node.func) == "vars" and node.args:
            return _is_options(node.args[0], owners)
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "__dict__"
            and _is_options(node.value, owners)
        )

    def key_name(key: ast.expr) -> str:
        return str(key.value) if isinstance(key, ast.Constant) else "..."

    def selection_key(key: ast.expr | None) -> bool:
        if isinstance(key, ast.Constant):
            return key.value in SELECTION_DESTS
        return True  # a name the code computes: may be any of them

    def args_list(node: ast.expr) -> bool:
        dotted = _dotted(node)
        return dotted == "config.args" or dotted.endswith(".config.args")

    def settings_table(node: ast.expr) -> bool:
        return isinstance(node, ast.Attribute) and node.attr in _SETTINGS_TABLES

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            for part in ast.walk(target) if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                if isinstance(part, ast.Attribute):
                    if part.attr in SELECTION_DESTS and _is_options(part.value, owners):
                        found.append((line, f"config.option.{part.attr}"))
                    elif part.attr == "args" and args_list(part):
                        found.append((line, "config.args"))
                elif isinstance(part, ast.Subscript):
                    if options_dict(part.value) and selection_key(part.slice):
                        found.append((line, f"config.option.{key_name(part.slice)}"))
                    elif args_list(part.value):
                        found.append((line, "config.args"))
                    elif settings_table(part.value):
                        found.append((line, "an ini value"))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if _dotted(func) == "setattr" and len(node.args) >= 2:
            if _is_options(node.args[0], owners) and selection_key(node.args[1]):
                found.append((line, f"config.option.{key_name(node.args[1])}"))
        elif isinstance(func, ast.Attribute):
            if func.attr in ("update", "setdefault", "__setitem__") and options_dict(func.value):
                keys: list[ast.expr | None] = [
                    ast.Constant(k.arg) if k.arg else None for k in node.keywords
                ]
                for arg in node.args[:1]:
                    keys.extend(arg.keys if isinstance(arg, ast.Dict) else [None])
                if any(selection_key(k) for k in keys):
                    found.append((line, "config.option"))
            elif func.attr in _LIST_WRITERS and args_list(func.value):
                found.append((line, "config.args"))
            elif func.attr in ("update", "setdefault", "__setitem__") and settings_table(
                func.value
            ):
                found.append((line, "an ini value"))
    return sorted(found)


def _is_options(node: ast.expr, owners: set[str]) -> bool:
    """``config.option``, ``session.config.known_args_namespace``, or a name bound to one."""
    if isinstance(node, ast.Name):
        return node.id in owners
    return isinstance(node, ast.Attribute) and node.attr in ("option", "known_args_namespace")


def _assigns(func: ast.AST, attrs: set[str]) -> bool:
    for node in ast.walk(func):
        if any(isinstance(t, ast.Attribute) and t.attr in attrs for t in assigned(node)):
            return True
    return False


def _removes_items(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Assign)
            and any(
                isinstance(t, ast.Subscript) and _dotted(t.value) == "items" for t in node.targets
            )
            and not _reorders_items(node)
        ):
            return True
        if isinstance(node, ast.Delete) and any(
            isinstance(t, ast.Subscript) and _dotted(t.value) == "items" for t in node.targets
        ):
            return True
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in ("items.remove", "items.pop", "items.clear") or name.endswith(
                "pytest_deselected"
            ):
                return True
    return False


def _reorders_items(node: ast.Assign) -> bool:
    """``items[:] = sorted(items, key=...)``, ``reversed(items)``, ``list(reversed(items))``,
    ``items[::-1]``: the same tests in another order, none removed."""
    whole = all(
        isinstance(t, ast.Subscript)
        and isinstance(t.slice, ast.Slice)
        and t.slice.lower is None
        and t.slice.upper is None
        and t.slice.step is None
        for t in node.targets
    )
    return whole and _permutes_items(node.value)


def _permutes_items(value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        return value.id == "items"
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        cut = value.slice
        step = cut.step
        return (
            cut.lower is None
            and cut.upper is None
            and (step is None or (isinstance(step, ast.UnaryOp) and _one(step.operand)))
            and _permutes_items(value.value)
        )
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("sorted", "reversed", "list", "tuple")
        and len(value.args) == 1
    ):
        return _permutes_items(value.args[0]) and (value.func.id == "sorted" or not value.keywords)
    return False


def _one(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1


def _collect_ignore(
    path: str, now: ast.Module, before: ast.Module | None, hidden: _Hidden | None
) -> Iterator[IntegrityFinding]:
    """A ``collect_ignore`` or ``collect_ignore_glob`` entry the conftest gains that covers a
    test: a test file (``python_files``), a folder holding one, or a file the base collected.
    One that covers only other files (pytest's docs' ``collect_ignore = ["setup.py"]`` when
    ``--doctest-modules`` is added) hides no test. A value that is not a literal list of
    strings is judged by every string in it, each a test's name maybe."""

    def assignments(tree: ast.Module | None) -> Iterator[ast.Assign | ast.AugAssign]:
        for node in tree.body if tree is not None else ():
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(_dotted(t) in ("collect_ignore", "collect_ignore_glob") for t in targets):
                    yield node

    def entries(tree: ast.Module | None) -> Counter[tuple[str, bool | None]]:
        found: Counter[tuple[str, bool | None]] = Counter()
        for node in assignments(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            glob = any(_dotted(t) == "collect_ignore_glob" for t in targets)
            value = node.value
            if isinstance(value, ast.List | ast.Tuple) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
            ):
                found.update(
                    (str(e.value), glob) for e in value.elts if isinstance(e, ast.Constant)
                )
            else:  # computed: each string in it may name tests
                found.update(
                    (_shape(e), None) for e in ast.walk(value) if isinstance(e, ast.Constant)
                )
        return found

    added = entries(now) - entries(before)
    folder = PurePosixPath(path).parent.as_posix()
    hiding = [
        entry
        for (entry, glob), count in added.items()
        for _ in range(count)
        if glob is None or hidden is None or hidden.covers_tests(folder, entry, glob)
    ]
    if hiding:
        line = next(node.lineno for node in assignments(now))
        shown = ", ".join(dict.fromkeys(hiding))
        yield IntegrityFinding(
            "selection-narrowed",
            f"collect_ignore gained {len(hiding)} entries that cover tests ({_short(shown)}): "
            "those tests are never collected",
            path,
            line,
        )


class _Hidden:
    """What a conftest's ``collect_ignore`` entry hides: the files of the project (tracked at
    the base, and those the change adds), read once and only when asked."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self._files: list[str] | None = None
        self._everything: bool | None = None
        self._settings: tuple[Settings, Settings] | None = None

    def files(self) -> list[str]:
        if self._files is None:
            found: dict[str, None] = {}
            with contextlib.suppress(Exception):  # a snapshot, or git failing: the change alone
                for name in self.scan.repo.tracked_at(self.scan.change.base):
                    relative = self.scan.change.relative(name, self.scan.root)
                    if relative is not None:
                        found[relative] = None
            for name, status in self.scan.touched.items():
                if status != "deleted":
                    found[name] = None
            self._files = list(found)
        return self._files

    def covers_tests(self, folder: str, entry: str, glob: bool) -> bool:
        """Whether ``entry`` of the conftest in ``folder`` (resolved against it, as pytest
        does) covers a file that is a test on either side, or one the base collected."""
        resolved = posixpath.normpath(posixpath.join(folder, entry.removeprefix("./")))
        if resolved == ".." or resolved.startswith("../") or posixpath.isabs(resolved):
            return True  # outside the project: what is there is not known
        if self.everything():
            return True
        for name in self.files():
            if glob:
                paths = [name, *(p.as_posix() for p in PurePosixPath(name).parents)]
                covered = any(fnmatch.fnmatch(p, resolved) for p in paths if p != ".")
            else:
                covered = resolved == "." or name == resolved or name.startswith(resolved + "/")
            if covered and self._a_test(name):
                return True
        return False

    def everything(self) -> bool:
        """The base collects what agentgate cannot tell apart: a conftest of its with a
        ``pytest_collect_file`` hook, a plugin's option that collects every file (``--mypy``,
        ``--flake8``): any file may be a test."""
        if self._everything is None:
            options = {w.split("=")[0] for s in self.settings() for w in s.addopts.split()}
            self._everything = bool(options & _COLLECTING_OPTIONS) or any(
                "pytest_collect_file" in (self.scan.sources.at_base(name) or "")
                for name in self.files()
                if PurePosixPath(name).name == "conftest.py"
            )
        return self._everything

    def settings(self) -> tuple[Settings, Settings]:
        """pytest's settings at the base, and now."""
        if self._settings is None:
            self._settings = (
                read_settings(self.scan.sources.at_base),
                read_settings(self.scan.sources.now),
            )
        return self._settings

    def _a_test(self, name: str) -> bool:
        """A test file by either side's ``python_files``, a doctest file, a conftest, or a
        module whose doctests the base ran."""
        base, now = self.settings()
        pure = PurePosixPath(name)
        if pure.name == "conftest.py":
            return True  # its fixtures and hooks: what the tests there need
        if name.endswith(".py") and any(
            matches_python_files(pure, pattern) for s in (base, now) for pattern in s.python_files
        ):
            return True
        globs = ["test*.txt", *_doctest_globs(base.addopts), *_doctest_globs(now.addopts)]
        if any(fnmatch.fnmatch(pure.name, g) for g in globs):
            return True
        if name.endswith(".py") and "--doctest-modules" in base.addopts.split():
            return ">>>" in (self.scan.sources.at_base(name) or "")  # the base ran its doctests
        return False


# Options of plugins that collect every file of the project as an item of their own.
_COLLECTING_OPTIONS = frozenset(
    {"--mypy", "--flake8", "--pylint", "--ruff", "--ruff-format", "--black", "--isort"}
    | {"--pycodestyle", "--pydocstyle", "--mccabe", "--codestyle", "--docstyle", "--pyright"}
)


def _doctest_globs(addopts: str) -> list[str]:
    """The ``--doctest-glob`` patterns of an addopts."""
    words = addopts.split()
    found = [w.split("=", 1)[1] for w in words if w.startswith("--doctest-glob=")]
    found += [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--doctest-glob"]
    return found


def _short(text: str) -> str:
    return text if len(text) <= 120 else text[:117] + "..."


def _exit_findings(
    path: str, now: ast.Module, before: ast.Module | None
) -> Iterator[IntegrityFinding]:
    def exits(tree: ast.Module | None) -> list[tuple[int, str]]:
        if tree is None:
            return []
        return [
            (c.lineno, _dotted(c.func))
            for c in _calls(tree, EXIT_CALLS)
            if not _under_main_guard(tree, c) and _ends_the_run(tree, c)
        ]

    for line, name in past_the_base(exits(now), exits(before)):
        yield IntegrityFinding(
            "exit-forced",
            f"{name}() in {PurePosixPath(path).name} can end the run before its verdict",
            path,
            line,
        )


# Calls that register a function to run later: a finding only when what they register ends the
# run (`atexit.register(os._exit, 0)`), not for a timeout fixture's alarm or a cleanup.
REGISTERING = {"signal.signal", "atexit.register"}


def _ends_the_run(tree: ast.Module, call: ast.Call) -> bool:
    name = _dotted(call.func)
    if name == "os.kill":
        return _targets_the_run(call)
    if name not in REGISTERING:
        return True
    ending = EXIT_CALLS - REGISTERING
    local = {
        n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        if _dotted(arg) in ending or _calls(arg, ending):
            return True  # atexit.register(os._exit, 0), signal.signal(s, lambda *a: os._exit(0))
        body = local.get(_dotted(arg))
        if body is not None and _calls(body, ending):
            return True
    return False


def _targets_the_run(call: ast.Call) -> bool:
    """``os.kill`` of the run itself (``os.getpid()``, its parent, its group: 0 or a negative
    pid), or of a pid the code does not name plainly; not of a subprocess a fixture started
    (``os.kill(proc.pid, signal.SIGTERM)``)."""
    if not call.args:
        return True
    pid = call.args[0]
    if isinstance(pid, ast.Call):
        return _dotted(pid.func) in ("os.getpid", "os.getppid", "getpid", "getppid")
    if isinstance(pid, ast.Constant):
        return not isinstance(pid.value, int) or pid.value <= 0
    if isinstance(pid, ast.UnaryOp) and isinstance(pid.op, ast.USub):
        return True
    return not isinstance(pid, ast.Attribute)  # `proc.pid`: another process


def _under_main_guard(tree: ast.Module, call: ast.Call) -> bool:
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and _dotted(node.test.left) == "__name__"
            and node.lineno <= call.lineno <= (node.end_lineno or node.lineno)
        ):
            return True
    return False


# -- the guard -------------------------------------------------------------------------------


def _guard_in_code(
    path: str, now: ast.Module, before: ast.Module | None
) -> Iterator[IntegrityFinding]:
    def settings(tree: ast.Module | None) -> list[tuple[int, str]]:
        found = []
        for node in ast.walk(tree) if tree is not None else ():
            for name in _agentgate_vars(node):
                found.append((getattr(node, "lineno", 0), name))
        return found

    for line, name in past_the_base(settings(now), settings(before)):
        yield IntegrityFinding(
            "guard-forged",
            f"sets {name}: agentgate decides when it runs and where it counts",
            path,
            line,
        )


def _agentgate_vars(node: ast.AST) -> Iterator[str]:
    """Names of AGENTGATE_* variables ``node`` sets in the environment."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and _dotted(target.value) in (
                "os.environ",
                "environ",
            ):
                yield from _literal_names(target.slice)
    elif isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name.endswith(("environ.setdefault", "putenv", ".setenv")) and node.args:
            yield from _literal_names(node.args[0])
        elif name.endswith("environ.update"):
            for arg in node.args:
                if isinstance(arg, ast.Dict):
                    for key in arg.keys:
                        if key is not None:
                            yield from _literal_names(key)
            for keyword in node.keywords:
                if keyword.arg and keyword.arg.startswith("AGENTGATE_"):
                    yield keyword.arg


def _literal_names(node: ast.AST) -> Iterator[str]:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("AGENTGATE_")
    ):
        yield node.value


# agentgate's variables a CI workflow sets for its own runner (where state and caches live, how
# much to say): the workflow's runs are a person's, not the agent's under the gate.
CI_SETTINGS = frozenset({"AGENTGATE_STATE_HOME", "AGENTGATE_CACHE_HOME", "AGENTGATE_DEBUG"})


def _guard_in_text(path: str, now: str, before: str) -> Iterator[IntegrityFinding]:
    excess = Counter(GUARD_WORDS.findall(_decoded(now))) - Counter(
        GUARD_WORDS.findall(_decoded(before))
    )
    if path.startswith(".github/workflows/"):
        excess = Counter({w: n for w, n in excess.items() if w not in CI_SETTINGS})
    for word, count in sorted(excess.items()):
        line = _line_of(now, word)
        for _ in range(count):
            yield IntegrityFinding(
                "guard-forged",
                f"{word} in {PurePosixPath(path).name} disarms or redirects the gate",
                path,
                line,
            )


def _decoded(text: str) -> str:
    """A JSON document's strings as JSON reads them (its keys and values, one per line), else
    ``text``: a key spelled with escapes (red team 47: ``"\\u0041GENTGATE_PYTHON"`` in Claude
    Code's settings ``env``) is the name the harness gives the variable. Both sides of a
    change are read the same way, so a mention the base has is counted once (review 29)."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return text
    strings: list[str] = []
    todo = [document]
    while todo and len(strings) < 100_000:
        item = todo.pop()
        if isinstance(item, dict):
            strings.extend(k for k in item if isinstance(k, str))
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, str):
            strings.append(item)
    return "\n".join(strings)


def _line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None


# -- pytest settings --------------------------------------------------------------------------


def _settings_findings(path: str, name: str, now: str, before: str) -> Iterator[IntegrityFinding]:
    yield from _guard_in_text(path, now, before)
    new, old = _pytest_settings(name, now), _pytest_settings(name, before)
    if new is None:
        return
    old = old or {}
    added = Counter(_options(new.get("addopts", ""))) - Counter(_options(old.get("addopts", "")))
    line = _line_of(now, "addopts")
    for option in sorted(added):
        if option in SELECTION_OPTIONS:
            yield IntegrityFinding(
                "selection-narrowed",
                f"addopts gained {option}: the base's whole suite must run",
                path,
                line,
            )
        elif option in RERUN_OPTIONS:
            yield IntegrityFinding(
                "rerun-added",
                f"addopts gained {option}: failures are retried until they pass",
                path,
                line,
            )

    loaded = Counter(_plugins(new.get("addopts", ""))) - Counter(_plugins(old.get("addopts", "")))
    for plugin in sorted(p for p in loaded if not _installed_plugin(p)):
        yield IntegrityFinding(
            "result-rewritten",
            f"addopts gained -p {plugin}: pytest loads a plugin the base's configuration does "
            "not name, and a plugin can rewrite any result",
            path,
            line,
        )
    if "reruns" in new and new.get("reruns") != old.get("reruns"):
        yield IntegrityFinding(
            "rerun-added", "reruns set in the pytest configuration", path, _line_of(now, "reruns")
        )


def _warning_imports(
    scan: Scan, path: str, name: str, now: str, before: str
) -> Iterator[IntegrityFinding]:
    """A warning class of the project's own that the change names in ``filterwarnings`` or in
    a ``-W`` of ``addopts``: pytest 9.2 imports it as it starts, before its plugins, so the
    module runs where agentgate's witness does not look (its base's entries are the
    project's: review 25's marshmallow). Read as pytest reads an entry: the third of its
    ``:``-separated fields, stripped (red team 41: `default:: invoice.compat.X`)."""
    new = _warning_categories(name, now)
    if new is None:
        return
    old = _warning_categories(name, before) or set()
    for category in sorted(new - old):
        top = category.split(".", 1)[0]
        if any((scan.root / where / top).exists() for where in (".", "src")) or any(
            (scan.root / where / f"{top}.py").is_file() for where in (".", "src")
        ):
            yield IntegrityFinding(
                "result-rewritten",
                f"filterwarnings gained {category}, a class of the project's: pytest imports "
                "its module as it starts, before agentgate's plugin can watch what it does",
                path,
                _line_of(now, "filterwarnings") or _line_of(now, "addopts"),
            )


def _warning_categories(name: str, text: str) -> set[str] | None:
    """The dotted warning classes a pytest settings file names: ``filterwarnings`` entries
    and the ``-W`` options of ``addopts``; None when it holds no pytest settings."""
    if not text:
        return None
    table = pytest_files.read(name, text)
    if table is None:
        return None
    raw = table.values.get("filterwarnings")
    entries = [str(e) for e in raw] if isinstance(raw, list) else str(raw or "").splitlines()
    addopts = pytest_files.as_text(table.values.get("addopts", ""))
    try:
        words = shlex.split(addopts)
    except ValueError:
        words = addopts.split()
    for at, word in enumerate(words):
        if word in ("-W", "--pythonwarnings") and at + 1 < len(words):
            entries.append(words[at + 1])
        elif word.startswith("--pythonwarnings="):
            entries.append(word.split("=", 1)[1])
        elif word.startswith("-W") and len(word) > 2:
            entries.append(word[2:])
    found = set()
    for entry in entries:
        parts = entry.split(":")
        category = parts[2].strip() if len(parts) > 2 else ""
        if "." in category:
            found.add(category)
    return found


def _installed_plugin(name: str) -> bool:
    """Whether ``-p NAME`` names one of pytest's own plugins (``pytester``) or a module an
    installed package provides: not code of the project, nor of a folder it put on the path.
    Looked up without importing anything."""
    import importlib.machinery
    import site
    import sysconfig

    try:
        from _pytest.config import builtin_plugins
    except ImportError:  # pragma: no cover - pytest is a dependency
        builtin_plugins = set()
    if name in builtin_plugins:
        return True
    installed = {sysconfig.get_paths()[key] for key in ("stdlib", "purelib", "platlib")}
    installed.update(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    top = name.split(".", 1)[0]
    return importlib.machinery.PathFinder.find_spec(top, sorted(installed)) is not None


def _plugins(addopts: str) -> list[str]:
    """The plugins ``-p NAME`` (or ``-pNAME``) loads; ``-p no:NAME`` leaves one out instead."""
    try:
        words = shlex.split(addopts)
    except ValueError:
        words = addopts.split()
    found = []
    for i, word in enumerate(words):
        if word == "-p" and i + 1 < len(words):
            found.append(words[i + 1])
        elif word.startswith("-p") and not word.startswith("--") and len(word) > 2:
            found.append(word[2:])
    return [name for name in found if not name.startswith("no:")]


def _options(addopts: str) -> list[str]:
    try:
        words = shlex.split(addopts)
    except ValueError:
        words = addopts.split()
    return [w.split("=", 1)[0] for w in words if w.startswith("-")]


def _pytest_settings(name: str, text: str) -> dict[str, str] | None:
    """The pytest ini options a configuration file holds (None: it holds none, or is broken)."""
    if not text:
        return None
    table = pytest_files.read(name, text)
    if table is None:
        return None
    return {key: " ".join(pytest_files.as_text(v).split()) for key, v in table.values.items()}
