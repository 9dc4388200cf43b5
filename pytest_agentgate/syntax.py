"""Python syntax trees walked without recursion.

Python compiles code nested deeper than a recursive walk of its tree can go under the
interpreter's stack limit: an ``elif`` chain of a thousand branches, a sum of a thousand
terms, a long attribute chain. ``ast.NodeTransformer``, ``ast.dump`` and ``ast.unparse``
recurse; a gate that fails on such code blocks honest work. These do the same with loops.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
A = TypeVar("A", bound=ast.AST)


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)`` as deep as Python itself reads the file: the parser's
    depth limit counts the frames under it, so code that ``ast.parse`` refuses deep in the
    gate's stack (``RecursionError``) is read again in a thread of its own, at the top of
    its stack, where a module's import compiles it. What is deeper still raises."""
    try:
        return ast.parse(source, filename)
    except RecursionError:
        pass
    found: list[ast.Module | BaseException] = []

    def read() -> None:
        try:
            found.append(ast.parse(source, filename))
        except BaseException as exc:  # SyntaxError, RecursionError: the caller's to handle
            found.append(exc)

    thread = threading.Thread(target=read, name="agentgate-parse", daemon=True)
    thread.start()
    thread.join()
    if isinstance(found[0], BaseException):
        raise found[0]
    return found[0]


def imported(tree: ast.AST, package: Sequence[str]) -> Iterator[str]:
    """The module names a module (of ``package``, its dotted parts) imports: ``import a.b``'s
    ``a.b``; ``from .m import x``'s ``package.m`` and ``package.m.x`` (``x`` may be a
    module), relative ones resolved from ``package``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = list(package[: len(package) - node.level + 1] if node.level > 1 else package)
                base = ".".join([*up, base] if base else up)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names if alias.name != "*")


def children_first(tree: ast.AST) -> list[ast.AST]:
    """Every node of the tree, each after all of its children (no recursion)."""
    order: list[ast.AST] = []
    stack = [tree]
    while stack:  # parents before children: reversed, every node follows its children
        node = stack.pop()
        order.append(node)
        for name in node._fields:  # ast.iter_child_nodes, without its generators' cost
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(item for item in value if isinstance(item, ast.AST))
    order.reverse()
    return order


def walk_within(
    tree: ast.AST, context: T, inner: Callable[[ast.AST, T], T]
) -> Iterator[tuple[ast.AST, T]]:
    """Every node under ``tree``, in the order recursion would visit them, with the context
    its parent gives it: ``inner(node, context)`` is what the node gives its children (the
    class a method is in, the function a call is made in). A loop, not recursion."""
    stack = [(child, context) for child in reversed(list(ast.iter_child_nodes(tree)))]
    while stack:
        node, outer = stack.pop()
        yield node, outer
        within = inner(node, outer)
        stack.extend((child, within) for child in reversed(list(ast.iter_child_nodes(node))))


def unparsed(node: ast.AST) -> str:
    """``ast.unparse(node)``; for code nested deeper than it goes (a sum of a thousand terms,
    which Python compiles), :func:`dumped`."""
    try:
        return ast.unparse(node)
    except RecursionError:
        return dumped(node)


def dumped(tree: ast.AST) -> str:
    """The tree as text, as ``ast.dump(tree, annotate_fields=False)`` writes it but every field
    shown and without recursion: two trees dump alike when they are the same code."""
    out: list[str] = []
    stack: list[Any] = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            out.append(item.text)
        elif isinstance(item, ast.AST):
            values = [getattr(item, field, None) for field in item._fields]
            stack.append(_Text(")"))
            for index, value in reversed(list(enumerate(values))):
                stack.append(value)
                if index:
                    stack.append(_Text(", "))
            out.append(f"{type(item).__name__}(")
        elif isinstance(item, list):
            stack.append(_Text("]"))
            for index, value in reversed(list(enumerate(item))):
                stack.append(value)
                if index:
                    stack.append(_Text(", "))
            out.append("[")
        else:
            out.append(repr(item))
    return "".join(out)


class _Text:
    """Punctuation :func:`dumped` writes as it is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def copied(tree: A) -> A:
    """A copy of a tree (``copy.deepcopy``'s generality costs several times as much): each
    node made empty, then filled from a stack, its children made empty in their turn."""
    root = tree.__class__()
    stack: list[tuple[ast.AST, ast.AST]] = [(tree, root)]
    while stack:
        node, new = stack.pop()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                child = value.__class__()
                stack.append((value, child))
                value = child
            elif isinstance(value, list):
                items: list[Any] = []
                for item in value:
                    if isinstance(item, ast.AST):
                        child = item.__class__()
                        stack.append((item, child))
                        item = child
                    items.append(item)
                value = items
            setattr(new, name, value)
        for name in node._attributes:
            if hasattr(node, name):
                setattr(new, name, getattr(node, name))
    return root


def rewrite(tree: ast.AST, change: Callable[[ast.AST], ast.AST]) -> ast.AST:
    """What :class:`ast.NodeTransformer` does with ``change`` as every ``visit_*`` that
    visits its children first, without recursion: Python that compiles may nest deeper
    (an ``elif`` chain, a sum of a thousand terms) than the interpreter's stack allows."""
    done: dict[int, ast.AST] = {}
    for node in children_first(tree):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                value[:] = [done.get(id(item), item) for item in value]
            elif isinstance(value, ast.AST):
                setattr(node, field, done.get(id(value), value))
        done[id(node)] = change(node)
    return done[id(tree)]
