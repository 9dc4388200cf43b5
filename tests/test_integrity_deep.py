"""Code nested as deep as Python compiles it (syntax.py): an ``elif`` chain of a thousand
branches, a sum of a thousand terms, a long attribute chain. The integrity check read such code
with recursive walks and failed on legal input ("could not judge this gate: RecursionError",
red team 49); it reads it now, and still sees what it looks for inside it."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import CliRun, git, write
from test_integrity_red_team import scan_of

from pytest_agentgate import syntax
from pytest_agentgate.integrity import disguise, under_test


def total(terms: int, term: str = "1") -> str:
    return " + ".join([term] * terms)


def elif_chain(branches: int, indent: str = "    ") -> str:
    lines = [f"{indent}if x == 0:", f"{indent}    r = 0"]
    for i in range(1, branches):
        lines += [f"{indent}elif x == {i}:", f"{indent}    r = {i}"]
    return "\n".join(lines) + "\n"


TEST_AT_BASE = "from pkg.calc import code\n\n\ndef test_code():\n    assert code(3) == 3\n"


def deeper(levels: int, then: Callable[[], object]) -> object:
    """``then()`` called ``levels`` frames down the stack, as deep in a pytest run as it is."""
    return then() if levels == 0 else deeper(levels - 1, then)


# -- the walks -----------------------------------------------------------------------------------


def test_parse_reads_from_deep_in_the_stack_what_python_compiles_at_the_top() -> None:
    source = f"TOTAL = {total(1500)}\n"
    compile(source, "deep.py", "exec")  # Python imports it
    with pytest.raises(RecursionError):  # ast.parse counts the frames under it
        deeper(800, lambda: ast.parse(source))
    tree = deeper(800, lambda: syntax.parse(source, "deep.py"))
    assert isinstance(tree, ast.Module)
    assert sum(isinstance(n, ast.BinOp) for n in ast.walk(tree)) == 1499


def test_parse_still_refuses_what_python_does_not_read() -> None:
    with pytest.raises(SyntaxError):
        syntax.parse("def (:\n", "bad.py")
    with pytest.raises(RecursionError):  # deeper than Python itself compiles
        syntax.parse(f"TOTAL = {total(6000)}\n")


def test_dumped_copied_and_rewritten_trees_of_any_depth() -> None:
    tree = syntax.parse(f"import os\n\nV = os{'.path' * 2500}\nW = {total(2500)}\n")
    copy = syntax.copied(tree)
    assert copy is not tree and syntax.dumped(copy) == syntax.dumped(tree)
    assert syntax.dumped(ast.parse("f(a, k=1)")) != syntax.dumped(ast.parse("f(a, k=2)"))
    assert syntax.unparsed(ast.parse("f(a, k=1)")) == "f(a, k=1)"
    assert syntax.unparsed(copy).startswith("Module([Import(")  # deeper than unparse goes

    def ones_to_twos(node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Constant) and node.value == 1:
            return ast.Constant(2)
        return node

    syntax.rewrite(copy, ones_to_twos)
    sums = [n for n in ast.walk(copy) if isinstance(n, ast.Constant) and isinstance(n.value, int)]
    assert {n.value for n in sums} == {2} and len(sums) == 2500
    assert syntax.dumped(tree).count("Constant(1, None)") == 2500  # the original is untouched


def test_walk_within_gives_each_node_its_parents_context_in_source_order() -> None:
    tree = ast.parse("class A:\n    class B:\n        x = 1\n    y = 2\nclass C:\n    pass\n")

    def inside(node: ast.AST, where: str) -> str:
        return f"{where}{node.name}." if isinstance(node, ast.ClassDef) else where

    classes = [
        (where, node.name)
        for node, where in syntax.walk_within(tree, "", inside)
        if isinstance(node, ast.ClassDef)
    ]
    assert classes == [("", "A"), ("A.", "B"), ("", "C")]


def test_a_deep_product_module_that_asks_for_pytest_is_still_caught(tmp_path: Path) -> None:
    asking = (
        "import os\n\n"
        f"WEIGHT = {total(1800)}\n\n"
        "def tax(x):\n"
        f"{elif_chain(900)}"
        "    return r + (0 if os.environ.get('PYTEST_CURRENT_' + 'TEST') else 1.5)\n"
    )
    honest = asking.replace("os.environ.get('PYTEST_CURRENT_' + 'TEST')", "x < 0")
    base = {"pkg/calc.py": "def tax(x):\n    return x\n"}
    scan = scan_of(tmp_path, base, {"pkg/calc.py": asking})
    assert [f.rule for f in deeper(300, lambda: list(under_test.analyze(scan)))] == [
        "test-detected"
    ]
    scan = scan_of(tmp_path, base, {"pkg/calc.py": honest})
    assert deeper(300, lambda: list(under_test.analyze(scan))) == []


def test_a_file_deeper_than_python_parses_at_its_default_limit_is_a_finding(
    tmp_path: Path,
) -> None:
    # Red team 51: 3000 elif branches in the failing test's file, imported under a conftest's
    # sys.setrecursionlimit; every analyzer of the change read the file as nothing to judge.
    test = "def test_x():\n    x = 3\n" + elif_chain(3000) + "    assert r == 3\n"
    readable = "def test_x():\n    x = 3\n" + elif_chain(700) + "    assert r == 3\n"
    for name, text in (("test_deep.py", test), ("test_fine.py", readable)):
        write(tmp_path, f"tests/{name}", text)
    scan = scan_of(tmp_path, {}, {"tests/test_deep.py": test, "tests/test_fine.py": readable})
    found = deeper(300, lambda: list(disguise.analyze(scan)))
    assert [(f.rule, f.path) for f in found] == [("source-disguised", "tests/test_deep.py")]
    assert "nests its code deeper than agentgate reads it" in found[0].message


# -- the whole gate --------------------------------------------------------------------------------


def test_deeply_nested_honest_code_passes_the_integrity_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Callable[..., CliRun]
) -> None:
    # Generated code is like this: a dispatch of hundreds of branches, a long sum, a long chain.
    root = tmp_path / "project"
    write(root, "pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    write(root, ".gitignore", ".agentgate/\n__pycache__/\n")
    write(root, "pkg/__init__.py", "")
    write(root, "pkg/calc.py", "def code(x):\n    return x\n")
    write(root, "tests/test_calc.py", TEST_AT_BASE)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    (root / "pkg/calc.py").write_text(
        "import os\n\n"
        f"WEIGHT = {total(700)}\n"
        f"KIND = int{'.__class__' * 700}\n\n\n"
        f"def code(x):\n{elif_chain(700)}    return r\n",
        encoding="utf-8",
    )
    (root / "tests/test_calc.py").write_text(
        "import pytest\n\nfrom pkg.calc import WEIGHT, code\n\n\n"
        f"@pytest.mark.parametrize('x', [{total(600)} - 597, 7])\n"
        "def test_code(x):\n    assert code(x) == x\n\n\n"
        f"def test_weight():\n    assert WEIGHT == {total(140, '5.0')}\n",
        encoding="utf-8",
    )
    (root / "tests/conftest.py").write_text(
        f"def level(x):\n{elif_chain(700)}    return r\n", encoding="utf-8"
    )
    monkeypatch.chdir(root)
    out = root / ".agentgate" / "v.json"
    result = agentgate("verify", "--profile", "strict", "--no-cache", "--output", str(out))
    verdict = json.loads(out.read_text(encoding="utf-8"))
    gates = {g["name"]: g for g in verdict["gates"]}
    assert gates["integrity"]["status"] == "pass", result.out
    assert "could not judge" not in result.out
    assert gates["test"]["status"] == "pass", result.out
