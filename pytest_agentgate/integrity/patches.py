"""Code that patches the test tools themselves: ``result-rewritten`` without a hook.

A conftest.py, a plugin, or a test module runs its code when pytest imports it, so it can
replace pytest's own functions with no ``pytest_*`` hook at all::

    import _pytest.reports
    _pytest.reports.TestReport.from_item_and_call = classmethod(always_passed)

and every test after it passes, in the JUnit report and in agentgate's witness alike. The same
goes for coverage.py, pluggy, pytest-xdist, pytest-cov, unittest and agentgate's own plugin.
This module finds, in the change's Python files, each assignment, ``del``, ``setattr``/``delattr``,
``monkeypatch.setattr``/``delattr``, or ``mock.patch``/``patch.object`` whose target belongs to
one of those tools, and that the base did not have. Reading them (importing a class for a type
hint, calling a function) is not a finding. A project's own package is never a tool here: its
tests patch it as tests do (agentgate's own suite patches agentgate).
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_agentgate import syntax
from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.modules import is_package_init, module_stem
from pytest_agentgate.syntax import unparsed
from pytest_agentgate.testcode import TEST_TOOLS

RULE = "result-rewritten"
# The tools whose code decides what a test run reports, by their top-level module.
TOOLS = TEST_TOOLS  # testcode.py, light enough for the witness to import
# The linters whose code decides what a lint gate reports: a flake8 plugin of the project's
# own folder (`[flake8:local-plugins]`) runs inside flake8, and one that replaced
# `StyleGuide.handle_error` made every finding vanish (red team 34).
LINT_TOOLS = frozenset({"flake8", "pycodestyle", "pyflakes", "mccabe", "pylint", "astroid"})
# Calls that patch their first argument (an object, or a dotted name as text).
PATCHERS = frozenset({"setattr", "delattr"})


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    yield from shadowing(scan)
    yield from rebound_at_run_time(scan)
    tools = (TOOLS | LINT_TOOLS) - own_packages(scan.root)
    if "coverage" in tools:
        yield from _coverage_data_written(scan)
    for path, status in sorted(scan.touched.items()):
        if status == "deleted" or not path.endswith(".py"):
            continue
        now = scan.sources.now(path)
        if not now or not any(tool in now for tool in tools):
            continue
        before = scan.sources.at_base(scan.renamed_from.get(path, path)) or ""
        old = {target for target, _ in patched(parse_python(before), tools)}
        seen: set[str] = set()
        for target, line in patched(parse_python(now), tools):
            if target in old or target in seen or only_adds(target):
                continue
            seen.add(target)
            lint = target.split(".", 1)[0] in LINT_TOOLS
            yield IntegrityFinding(
                RULE,
                f"{PurePosixPath(path).name} patches {target}, code of the "
                + (
                    "lint tools: it can rewrite what they report"
                    if lint
                    else "test tools: it can rewrite results without a hook"
                ),
                path,
                line,
            )


def rebound_at_run_time(scan: Scan) -> Iterator[IntegrityFinding]:
    """A test module of the change that binds its own names at run time where its text does not
    show it (``globals()["check"] = print``, ``vars()[...]``, ``globals().update(...)``,
    ``setattr(sys.modules[__name__], ...)``): its tests then call what the file does not show
    (red team 57 made an asserting helper of the base's tests print instead). A test written
    into ``globals()`` by a name that starts with ``test`` (tests generated in a loop) is none."""
    from pytest_agentgate.gates.changed import is_test_file

    for path, status in sorted(scan.touched.items()):
        if status == "deleted" or not path.endswith(".py") or not is_test_file(path):
            continue
        now = scan.sources.now(path) or ""
        if not any(word in now for word in _RUN_TIME_WORDS):
            continue
        before = scan.sources.at_base(scan.renamed_from.get(path, path)) or ""
        had = Counter(what for what, _ in _run_time_bindings(parse_python(before)))
        for what, line in _run_time_bindings(parse_python(now)):
            if had[what] > 0:
                had[what] -= 1
                continue
            yield IntegrityFinding(
                RULE,
                f"{PurePosixPath(path).name} binds {what} at run time: its tests call what "
                "the file's text does not show",
                path,
                line,
            )


# Words without which a module's text binds nothing at run time that its text does not show.
_RUN_TIME_WORDS = (
    "globals",
    "vars",
    "setattr",
    "sys.modules",
    "f_globals",
    "__code__",
    "__defaults__",
    "__wrapped__",
    "assert",
    "addTypeEqualityFunc",
)
# A function's attributes that decide what calling it runs.
CODE_ATTRIBUTES = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__wrapped__"})


def _run_time_bindings(tree: ast.Module | None) -> Iterator[tuple[str, int]]:
    """Where a module writes its own namespace at run time, or what its tests' checks run:
    (what, as written; line). Its namespace through ``globals()``, ``vars()``, a frame's
    ``f_globals``, ``globals`` itself handed on (``_g = globals``); a function's code or
    defaults (``check.__code__ = ...``); unittest's ``assert*`` methods bound again (in a class
    body, on ``self``) or given another comparison (``addTypeEqualityFunc``): red team 58."""
    if tree is None:
        return
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        target: ast.expr | None = None
        if (
            isinstance(node, ast.Name)
            and node.id in ("globals", "vars")
            and isinstance(node.ctx, ast.Load)
            and id(node) not in called
        ):
            yield f"{node.id} handed on", node.lineno
            continue
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            if node.attr in CODE_ATTRIBUTES or (
                node.attr.startswith("assert")
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                yield unparsed(node)[:80], node.lineno
            continue
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                names = [t for t in getattr(stmt, "targets", [getattr(stmt, "target", None)]) if t]
                if isinstance(stmt, ast.Assign | ast.AnnAssign) and any(
                    isinstance(t, ast.Name) and t.id.startswith("assert") for t in names
                ):
                    yield f"{node.name}.{unparsed(names[0])}"[:80], stmt.lineno
            continue
        if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            if own_namespace(node.value):
                target = node.slice
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "addTypeEqualityFunc":
                yield unparsed(node.func)[:80], node.lineno
                continue
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("update", "setdefault", "__setitem__")
                and own_namespace(func.value)
            ):
                yield f"{unparsed(func)}(...)", node.lineno
                continue
            named = node.args[1] if isinstance(func, ast.Name) and len(node.args) > 1 else None
            if (
                isinstance(func, ast.Name)
                and func.id == "setattr"
                and isinstance(named, ast.Constant)
                and (
                    named.value in CODE_ATTRIBUTES
                    or (str(named.value).startswith("assert") and unparsed(node.args[0]) == "self")
                )
            ):
                yield unparsed(node)[:80], node.lineno
                continue
            if (
                isinstance(func, ast.Name)
                and func.id in ("setattr", "delattr")
                and node.args
                and module_object(node.args[0])
            ):
                target = named
        else:
            continue
        if target is None:
            continue
        if isinstance(target, ast.Constant) and str(target.value).startswith("test"):
            continue  # a test generated by name
        if (
            isinstance(target, ast.JoinedStr)
            and target.values
            and isinstance(target.values[0], ast.Constant)
            and str(target.values[0].value).startswith("test")
        ):
            continue
        yield unparsed(node)[:80], node.lineno


def own_namespace(node: ast.expr) -> bool:
    """A module's own namespace, written as an object: ``globals()``, ``vars()``, ``locals()``
    (no argument), a frame's ``f_globals``, ``sys.modules[...].__dict__``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        return node.func.id in ("globals", "vars", "locals")
    if isinstance(node, ast.Attribute):
        return node.attr == "f_globals" or (node.attr == "__dict__" and module_object(node.value))
    return False


def module_object(node: ast.expr) -> bool:
    """``sys.modules[...]`` or ``importlib.import_module(...)``: a module, written as an object."""
    if isinstance(node, ast.Subscript):
        return dotted_name(node.value) == "sys.modules"
    return isinstance(node, ast.Call) and dotted_name(node.func) in (
        "importlib.import_module",
        "sys.modules.get",
    )


# coverage.py's calls that put measurements into its data: code of the project that calls
# them writes what the coverage gate reads (red team 40: an `atexit` handler of a test module
# adding every arc of an untested file to `.agentgate/.coverage` after `coverage run` saved).
COVERAGE_DATA_WRITES = frozenset(
    {"add_lines", "add_arcs", "add_file_tracers", "touch_file", "touch_files", "update"}
)


def _coverage_data_written(scan: Scan) -> Iterator[IntegrityFinding]:
    """Calls the change adds, in a Python file that uses coverage.py's API (``CoverageData``,
    ``Coverage.current()``, ``get_data()``), of what writes its measurements."""
    for path, status in sorted(scan.touched.items()):
        if status == "deleted" or not path.endswith(".py"):
            continue
        now = scan.sources.now(path)
        if not now or not re.search(r"\b(CoverageData|get_data|Coverage)\b", now):
            continue
        before = scan.sources.at_base(scan.renamed_from.get(path, path)) or ""

        def writes(text: str) -> list[tuple[int, str]]:
            tree = parse_python(text)
            if tree is None:
                return []
            return [
                (node.lineno, node.func.attr)
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in COVERAGE_DATA_WRITES
                and (node.func.attr != "update" or _coverage_data(node.func.value))
            ]

        tree = parse_python(now)
        if tree is None or _in_memory_only(tree):
            continue  # data kept in memory (`no_disk=True`, a tool's own tests: review 26)
        old = {name for _, name in writes(before)}
        for line, name in writes(now):
            if name in old:
                continue
            yield IntegrityFinding(
                RULE,
                f"{PurePosixPath(path).name} calls coverage.py's {name}(): the project's code "
                "writes the measurements the coverage gate reads",
                path,
                line,
            )
            break


def _in_memory_only(tree: ast.Module) -> bool:
    """Whether every ``CoverageData`` the file makes is ``no_disk=True`` and it reaches no
    measuring coverage's data (``get_data``): what it adds is never on a disk. A data file
    named (SQLite writes at each ``add_lines``) is not."""
    made = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and (unparsed(node.func).rsplit(".", 1)[-1] == "CoverageData")
    ]
    if not made or "get_data" in unparsed(tree):
        return False
    return all(
        any(
            k.arg == "no_disk" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in call.keywords
        )
        for call in made
    )


def _coverage_data(node: ast.expr) -> bool:
    """Whether ``node`` reads as coverage.py's data (``get_data()``, a ``CoverageData``)."""
    text = unparsed(node)
    return "get_data" in text or "CoverageData" in text


def only_adds(dotted: str) -> bool:
    """Whether ``dotted`` names an attribute the installed tool does not have: a helper hung on
    it (``pytest.assert_same_items = ...``, ``unittest.TestCase.assertSameItems = ...``), which
    no code of the tool calls. A dunder is never only added (Python calls those); a name that
    cannot be looked up is taken for a replacement."""
    import importlib

    parts = dotted.split(".")
    attr = parts[-1]
    if len(parts) < 2 or (attr.startswith("__") and attr.endswith("__")):
        return False
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # not a module (a class's name), or not installed here
            continue
        try:
            for name in parts[cut:-1]:
                found = getattr(found, name)
            return not hasattr(found, attr)
        except Exception:  # an attribute that raises when looked up: not known
            return False
    return False


# What the gates run as ``python -m NAME``: a module or package of that name the change adds at
# the project's root is imported in place of the installed one (the current folder comes first).
RUN_AS_MODULES = TOOLS | {"ruff", "mypy", "pylint", "flake8", "pycodestyle", "pyflakes"}
# What pytest imports of its dependencies in every run (red team 20 copied `iniconfig` into the
# project's top with a payload): a package of that name the change adds at the project's top,
# or at the top of `src/`, is imported in place of the installed one.
TOOLS_NEEDS = frozenset({"iniconfig", "packaging", "pygments", "exceptiongroup", "tomli", "py"})


@functools.lru_cache(maxsize=1)
def tools_start_with() -> frozenset[str]:
    """The top-level modules of the test tools installed here and of what they require, all the
    way down: pytest's and its plugins' (a ``pytest11`` entry point), which pytest imports as
    it starts, before any check of agentgate's can look (red team 32: a `py.py` at the
    project's top ran in place of pytest's `py` shim, then put the real one back). Read from
    the installed distributions' metadata; none when it cannot be read."""
    import importlib.metadata as metadata

    try:
        starts = {"pytest"} | {
            ep.dist.name for ep in metadata.entry_points(group="pytest11") if ep.dist is not None
        }
    except Exception:  # metadata an installer left broken: nothing more than the names above
        return frozenset()
    names: set[str] = set()
    seen: set[str] = set()
    queue = sorted(starts)
    while queue and len(seen) < 500:
        wanted = re.split(r"[\s\[<>=!~;(]", queue.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if not wanted or wanted in seen:
            continue
        seen.add(wanted)
        try:
            dist = metadata.distribution(wanted)
        except Exception:  # not installed (an extra's, a platform's)
            continue
        names.update(_top_level(dist))
        for requirement in dist.requires or ():
            if "extra ==" not in requirement:
                queue.append(requirement)
    return frozenset(n for n in names if n.isidentifier())


def _top_level(dist: Any) -> set[str]:
    text = dist.read_text("top_level.txt")
    if text:
        return {line.strip() for line in text.splitlines() if line.strip()}
    found = set()
    for path in dist.files or ():
        top = str(path).split("/", 1)[0]
        stem = module_stem(top) if "/" not in str(path) else top
        if stem and not top.endswith((".dist-info", ".data")) and top != "__pycache__":
            found.add(stem)
    return found


def shadowing(scan: Scan) -> Iterator[IntegrityFinding]:
    """Modules the change adds at the project's root under a tool's name."""
    seen: set[str] = set()
    for path, status in sorted(scan.touched.items()):
        if status == "deleted":
            continue
        src = path.startswith("src/")
        top, _, rest = path.removeprefix("src/").partition("/")
        name = (module_stem(top) or "") if not rest else top
        wanted = TOOLS_NEEDS if src else RUN_AS_MODULES | TOOLS_NEEDS
        if not name or name in seen:
            continue
        if name not in wanted and (src or name not in tools_start_with()):
            continue
        top = f"src/{top}" if src else top
        where = top
        if rest:
            try:
                inits = sorted(n for n in os.listdir(scan.root / top) if is_package_init(n))
            except OSError:
                inits = []
            if not inits:
                continue  # a folder with no __init__: the installed package still wins
            # Any __init__ Python imports, an extension module's too (red team 31).
            where = f"{top}/{inits[0]}"
        if scan.sources.at_base(where) is not None:
            continue  # the project's own, at the base too
        seen.add(name)
        how = (
            f"`python -m {name}` runs the project's copy"
            if name in RUN_AS_MODULES
            else "the test tools import it as they start, and run the project's copy"
        )
        yield IntegrityFinding(
            RULE,
            f"{top}{'/' if rest else ''} at the project's "
            f"{'src/' if src else 'root'} shadows the installed {name}: {how}",
            where,
        )


def own_packages(root: Path) -> frozenset[str]:
    """The project's own top-level packages or modules among :data:`TOOLS` and
    :data:`LINT_TOOLS` (in its root or ``src/``): flake8's own repository patches flake8 in
    its tests (review 22), and pycodestyle is one module."""
    return frozenset(
        name
        for name in TOOLS | LINT_TOOLS
        if any(
            (folder / name / "__init__.py").is_file() or (folder / f"{name}.py").is_file()
            for folder in (root, root / "src")
        )
    )


def patched(tree: ast.Module | None, tools: frozenset[str]) -> Iterator[tuple[str, int]]:
    """Each target of the tools that ``tree`` patches, as a dotted name, with its line."""
    if tree is None:
        return
    names = _tool_names(tree, tools)  # none: patches by name (`patch("_pytest.x")`) still count
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = _patch_call(node, names, tools)
            if called is not None:
                yield called, node.lineno
            continue
        targets: list[ast.expr] = []
        plain = False
        if isinstance(node, ast.Assign):
            targets, plain = node.targets, _plain_value(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets, plain = [node.target], _plain_value(node.value)
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            for part in _unpacked(target):
                if not isinstance(part, (ast.Attribute, ast.Subscript)):
                    continue
                dotted = _rooted(part, names)
                # unittest's settings (`TestCase.maxDiff = None`) change how a failure reads,
                # never whether it fails; pytest's and agentgate's data may decide it.
                if dotted is not None and not (plain and dotted.startswith("unittest.")):
                    yield dotted, getattr(node, "lineno", 0)


def _plain_value(value: ast.expr | None) -> bool:
    """A constant, or a container of constants: data, not a function."""
    if value is None or isinstance(value, ast.Constant):
        return True
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return all(_plain_value(v) for v in value.elts)
    if isinstance(value, ast.Dict):
        return all(_plain_value(v) for v in [*value.keys, *value.values] if v is not None)
    return False


def _tool_names(tree: ast.Module, tools: frozenset[str]) -> dict[str, str]:
    """The names the module binds to the tools' modules and objects, each with what it is."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in tools:
                    bound = alias.asname or alias.name.split(".")[0]
                    names[bound] = alias.name if alias.asname else bound
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and not node.level
            and node.module.split(".")[0] in tools
        ):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _patch_call(call: ast.Call, names: dict[str, str], tools: frozenset[str]) -> str | None:
    """The target of ``setattr(X, ...)``, ``monkeypatch.setattr(X, ...)``, ``patch("x.y")``,
    ``patch.object(X, ...)`` when it is one of the tools'."""
    func = dotted_name(call.func)
    last = func.rsplit(".", 1)[-1]
    if not call.args:
        return None
    first = call.args[0]
    by_name = last in PATCHERS and func not in PATCHERS  # monkeypatch.setattr("a.b.c", v)
    by_name = by_name or func == "patch" or func.endswith(".patch")  # mock.patch("a.b.c")
    by_object = last in PATCHERS or func.endswith("patch.object")
    if by_name or by_object:
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            text = first.value
            return text if by_name and text.split(".")[0] in tools else None
        dotted = _rooted(first, names)
        if dotted is not None and len(call.args) > 1 and _is_text(call.args[1]):
            name = call.args[1].value  # type: ignore[attr-defined]
            return f"{dotted}.{name}"
        return dotted
    return None


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _rooted(node: ast.expr, names: dict[str, str]) -> str | None:
    """``node`` as a dotted name when its root is one of ``names`` (else None)."""
    parts: list[str] = []
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            parts.append("[]")
            node = node.value
        else:
            node = node.func
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    return ".".join([names[node.id], *reversed(parts)]).replace(".[]", "[]")


def _unpacked(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _unpacked(element)
    elif isinstance(target, ast.Starred):
        yield from _unpacked(target.value)
    else:
        yield target


def assigned(node: ast.AST) -> list[ast.expr]:
    """What an assignment (``=``, ``+=``, annotated, a ``for`` loop's or a comprehension's
    target, ``with ... as``) assigns to, each element of a tuple or list target on its own
    (``rep.outcome, rep.longrepr = "passed", None``); [] for any other node."""
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension)):
        targets = [node.target]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        targets = [node.optional_vars]
    else:
        return []
    found: list[ast.expr] = []
    while targets:
        target = targets.pop(0)
        if isinstance(target, (ast.Tuple, ast.List)):
            targets[:0] = target.elts
        elif isinstance(target, ast.Starred):
            targets.insert(0, target.value)
        else:
            found.append(target)
    return found


def attributes_set(node: ast.AST) -> list[tuple[ast.expr, str, int]]:
    """The attributes ``node`` sets, as (the object, the attribute's name, the line): each
    attribute target of an assignment (:func:`assigned`), and ``setattr(x, "name", v)``."""
    found = [
        (target.value, target.attr, target.lineno)
        for target in assigned(node)
        if isinstance(target, ast.Attribute)
    ]
    if (
        isinstance(node, ast.Call)
        and dotted_name(node.func) == "setattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        found.append((node.args[0], node.args[1].value, node.lineno))
    return found


def dotted_name(node: ast.AST) -> str:
    """``a.b.c`` for a name or an attribute chain; "" for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):  # a loop: a chain may be longer than the stack
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


def parse_python(text: str) -> ast.Module | None:
    """The module's AST; None for text that is not Python (or nested too deeply to read)."""
    try:
        return syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
