"""exit-forced: a conftest.py the change makes end the pytest run itself.

A conftest.py runs inside pytest. A hook that calls ``os._exit(0)`` ends the process with status
0 before any test report or verdict exists, and nothing in the process can stop it; ``sys.exit``
and ``pytest.exit`` end the run early too. This analyzer reports each call to ``os._exit``,
``sys.exit`` or ``pytest.exit`` (under any name an import gives it) on a line the change adds to
a ``conftest.py``, at file:line. The pytest plugin judges the integrity gate before the
conftest's hooks run, so such a conftest is rejected before it can end the run.

Deliberately minimal: other ways out (``raise SystemExit``, ``os.kill``, ``os.exec*``) and other
files are not looked at here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import PurePosixPath

from pytest_agentgate import syntax
from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.syntax import walk_within

RULE = "exit-forced"
# module -> its functions that end the run
EXITS = {"os": ("_exit",), "sys": ("exit",), "pytest": ("exit",)}


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    for path, status in sorted(scan.touched.items()):
        if status == "deleted" or PurePosixPath(path).name != "conftest.py":
            continue
        added = scan.change.added_lines(_repo_path(scan, path))
        text = scan.sources.now(path)
        if not added or text is None:
            continue
        try:
            tree = syntax.parse(text, path)
        except (SyntaxError, ValueError):  # pytest cannot import it either: no run to end
            continue
        for call, name, where in forced_exits(tree):
            lines = range(call.lineno, (call.end_lineno or call.lineno) + 1)
            if added.isdisjoint(lines):
                continue
            place = f" in {where}()" if where else " at import"
            yield IntegrityFinding(
                RULE,
                f"{name}(){place} ends the pytest run from the project's own code, "
                "before the verdict",
                path=path,
                line=call.lineno,
            )


def forced_exits(tree: ast.AST) -> Iterator[tuple[ast.Call, str, str | None]]:
    """Each call that ends the run: the call, its qualified name (``os._exit``) and the
    function it is in (None at module level)."""
    modules: dict[str, str] = {}  # local name -> module
    functions: dict[str, str] = {}  # local name -> qualified name
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in EXITS:
                    modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module in EXITS and not node.level:
            for alias in node.names:
                if alias.name in EXITS[node.module]:
                    functions[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node, where in walk_within(tree, None, _in_function):
        if isinstance(node, ast.Call):
            name = _exit_name(node.func, modules, functions)
            if name is not None:
                yield node, name, where


def _in_function(node: ast.AST, where: str | None) -> str | None:
    return node.name if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else where


def _exit_name(func: ast.expr, modules: dict[str, str], functions: dict[str, str]) -> str | None:
    if isinstance(func, ast.Name):
        return functions.get(func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        module = modules.get(func.value.id)
        if module is not None and func.attr in EXITS[module]:
            return f"{module}.{func.attr}"
    return None


def _repo_path(scan: Scan, path: str) -> str:
    """``path`` (project-relative) as the change names it (repository-relative)."""
    try:
        prefix = scan.root.resolve().relative_to(scan.repo.toplevel).as_posix()
    except ValueError:
        return path
    return path if prefix == "." else f"{prefix}/{path}"
