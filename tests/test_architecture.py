"""The house rules of docs/ARCHITECTURE.md, checked on the code itself.

- No import circle between the package's modules, function-level imports included.
- Judges are pure: a gate kind's judge gives the same result with every file made unreadable.
- Front doors translate and never judge.
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import DATA

import pytest_agentgate
from pytest_agentgate.config.model import GateConfig
from pytest_agentgate.gates.base import CollectContext
from pytest_agentgate.process import CommandResult, CommandSpec
from pytest_agentgate.profiles import defaults_for
from pytest_agentgate.registry import Registry

PACKAGE = Path(pytest_agentgate.__file__).parent
DOORS = ("cli", "pytest_plugin", "harness", "github")
# The one package __init__ that re-exports its modules' names: the configuration's public API.
FACADE = "pytest_agentgate.config"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(name: str) -> set[str]:
    """Every package module ``name`` imports, anywhere in its body (functions and
    ``TYPE_CHECKING`` blocks included). ``from pkg import sub`` counts as importing ``pkg.sub``
    when ``sub`` is a module, else as importing ``pkg``."""
    path = MODULES[name]
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            # The longest package module the target names: a module, or the package it is in.
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def import_graph() -> dict[str, set[str]]:
    return {name: imports_of(name) for name in MODULES}


def test_the_checker_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_between_the_package_modules() -> None:
    found = cycles(import_graph())
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_package_init_files_import_none_of_their_own_modules() -> None:
    """A package's __init__ that imports its submodules makes every submodule's import of a
    sibling pull in all of them; here they stay thin (docstrings, or lazy functions)."""
    heavy = []
    for name, path in MODULES.items():
        if path.name != "__init__.py" or name == FACADE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only: a function may import lazily
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
                relative = isinstance(node, ast.ImportFrom) and node.level > 0
                if module.startswith(name + ".") or relative:
                    heavy.append(f"{name}: {ast.unparse(node)}")
    assert heavy == []


def test_no_module_of_the_package_imports_the_config_facade() -> None:
    """``pytest_agentgate.config`` re-exports the configuration's public names for the library's
    users; inside the package every module imports the module that holds the name."""
    assert [
        name for name in MODULES if FACADE in imports_of(name) and name != "pytest_agentgate"
    ] == []


def test_front_doors_never_judge() -> None:
    """Doors translate: they may hand evidence to the engine, never import the judges' helpers
    or call a judge themselves."""
    offenders = []
    for name, path in MODULES.items():
        if name.split(".")[1:2] and name.split(".")[1] in DOORS:
            text = path.read_text(encoding="utf-8")
            if "pytest_agentgate.gates.judging" in imports_of(name) or ".judge(" in text:
                offenders.append(name)
    assert offenders == []


def test_judges_helpers_do_no_io() -> None:
    io_modules = {"os", "glob", "shutil", "subprocess", "io", "tempfile", "sqlite3"}
    tree = ast.parse((PACKAGE / "gates" / "judging.py").read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    assert not imported & io_modules


# -- judges are pure ---------------------------------------------------------------------------


def _command(command: str, code: int, stdout: str = "", stderr: str = "") -> CommandResult:
    return CommandResult(
        CommandSpec(key="g", command=command, cwd=Path(".")), code, 0.5, stdout, stderr
    )


def scenarios(root: Path) -> list[tuple[str, dict[str, Any], CommandResult | None]]:
    """(kind, gate options, command result): the shapes each kind's judge sees."""
    ruff = (DATA / "python" / "ruff.json").read_text()
    junit = DATA / "junit" / "pytest-xunit1.xml"
    summary = DATA / "js" / "coverage-summary.json"
    (root / "custom.json").write_text('{"summary": {"high": 2}, "items": [{"severity": "low"}]}')
    return [
        ("build", {"command": "make"}, _command("make", 2, stderr="a.c:1:2: error: boom\n")),
        ("build", {"command": "make"}, _command("make", 0, "built\n")),
        ("lint", {"command": "ruff", "format": "ruff"}, _command("ruff", 1, ruff)),
        ("lint", {"command": "ruff", "format": "ruff"}, _command("ruff", 2, "not json")),
        ("test", {"reports": [str(junit)]}, None),
        ("test", {"reports": ["missing.xml"]}, None),
        ("coverage", {"reports": [str(summary)], "format": "istanbul-summary"}, None),
        ("coverage", {"reports": ["nope.json"]}, None),
        (
            "custom",
            {"command": "audit", "options": {"metric": "summary.high"}, "max": 1},
            _command("audit", 0, '{"summary": {"high": 2}}'),
        ),
        ("custom", {"reports": ["custom.json"], "max_severity": "moderate"}, None),
        ("custom", {"command": "true"}, _command("true", 0)),
    ]


def test_judges_touch_no_file(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    evidence = []
    for kind, spec, result in scenarios(tmp_path):
        options = dict(spec.get("options", {}))
        thresholds = {**defaults_for("strict", kind)}
        for key in ("max", "max_severity"):
            if key in spec:
                thresholds[key] = spec[key]
        config = GateConfig(
            name=kind,
            kind=kind,
            command=spec.get("command"),
            reports=list(spec.get("reports", [])),
            format=spec.get("format"),
            thresholds=thresholds,
            options=options,
        )
        context = CollectContext(config, tmp_path, result, True, 0.0, registry)
        gate_kind = registry.kinds[kind]
        evidence.append((gate_kind, config, gate_kind.collect(context)))
    expected = [k.judge(c, e).to_dict() for k, c, e in evidence]
    with monkeypatch.context() as patch:
        for owner, attr in (
            (builtins, "open"),
            (os, "stat"),
            (os, "lstat"),
            (os, "scandir"),
            (os, "listdir"),
            (Path, "resolve"),
            (Path, "stat"),
        ):
            patch.setattr(owner, attr, _refuse)
        judged = [k.judge(c, e).to_dict() for k, c, e in evidence]
    assert judged == expected
    statuses = {(e[1].kind, r["status"]) for e, r in zip(evidence, judged, strict=True)}
    assert {("build", "fail"), ("build", "pass"), ("lint", "fail"), ("test", "fail")} <= statuses


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"a judge touched the file system: {args!r}")


def test_no_file_names_a_design_document_outside_the_repository() -> None:
    """Comments and docs refer to docs/ARCHITECTURE.md, which the repository keeps."""
    root = PACKAGE.parent
    mentions = [
        str(path.relative_to(root))
        for path in [*PACKAGE.rglob("*.py"), root / "README.md"]
        if "DESIGN.md" in path.read_text(encoding="utf-8")
    ]
    assert mentions == []
    assert (root / "docs" / "ARCHITECTURE.md").is_file()
    assert sys.modules["pytest_agentgate"] is pytest_agentgate


def test_the_verdict_schema_names_the_profiles_there_are() -> None:
    from pytest_agentgate.profiles import PROFILE_NAMES

    schema = json.loads((PACKAGE / "schema" / "verdict.schema.json").read_text(encoding="utf-8"))
    assert tuple(schema["properties"]["profile"]["enum"]) == PROFILE_NAMES
