"""What the change does to the Python tests: removed, skipped, rerun, or asserting nothing.

Each test file the change touches is read by ``ast`` at the base and now (a reformat changes no
finding), each side with its own pytest settings (``python_files``, ``python_classes``,
``python_functions``, ``testpaths``, ``norecursedirs``, a conftest's ``collect_ignore``): a test
pytest does not collect now is removed, whether renamed to a name it does not collect, or its
file moved out of ``python_files`` or ``testpaths`` (tests moved along with the setting that
finds them are honest; a setting that narrows the run leaves its tests out, which is removal).
A skip counts when it applies here: ``skipif(sys.platform == "win32")`` is honest on Linux, and
a condition that cannot be evaluated is not a finding. An early ``return`` is judged the same
way: the asserts after ``if sys.platform != "win32": return`` never run here, nor those after a
return behind a condition on the module's names only (``if not ZERO.rate: return``), which no
run changes. See :mod:`pytest_agentgate.integrity.testfiles` for how the two sides are compared.
"""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import os
import re
import shlex
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache, partial
from pathlib import PurePosixPath
from typing import Any

from pytest_agentgate import syntax
from pytest_agentgate.integrity import pytest_files
from pytest_agentgate.integrity.model import EditedTest, IntegrityFinding, Scan
from pytest_agentgate.integrity.patches import CODE_ATTRIBUTES, module_object, own_namespace
from pytest_agentgate.integrity.testfiles import (
    FACTS,
    Body,
    Case,
    Category,
    Change,
    CodeRemoved,
    Made,
    Mark,
    Side,
    Words,
    compare,
    tokens,
)
from pytest_agentgate.syntax import copied, dumped, rewrite, unparsed, walk_within

Function = ast.FunctionDef | ast.AsyncFunctionDef

DEFAULT_FILES = ("test_*.py", "*_test.py")
DEFAULT_NORECURSE = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)
# Where pytest reads its settings, in the order it looks (the first that has a section wins).
CONFIG_FILES = pytest_files.FILES
# Directories and files whose helpers a test may call to assert (one level deep).
SUPPORT_DIRS = {"tests", "test", "testing", "__tests__"}


@dataclass(frozen=True)
class Settings:
    """The pytest settings that decide which files and functions are tests."""

    python_files: tuple[str, ...] = DEFAULT_FILES
    python_functions: tuple[str, ...] = ("test",)
    python_classes: tuple[str, ...] = ("Test",)
    testpaths: tuple[str, ...] = ()
    norecursedirs: tuple[str, ...] = DEFAULT_NORECURSE
    addopts: str = ""
    pythonpath: tuple[str, ...] = ()
    # addopts' last `-m` and `-k` expressions, as ("m" or "k", expression): the project's suite
    # is what they select.
    selection: tuple[tuple[str, str], ...] = ()

    def describe_files(self) -> str:
        where = f", testpaths ({', '.join(self.testpaths)})" if self.testpaths else ""
        return f"python_files ({', '.join(self.python_files)}){where}"


def analyze(scan: Scan) -> Iterable[IntegrityFinding]:
    paths = [p for p in scan.touched if p.endswith(".py")]
    paths += [old for new, old in scan.renamed_from.items() if old.endswith(".py")]
    if not paths:
        return []
    prefetch(scan, [*CONFIG_FILES, *_conftests_above(paths)])
    # Each side by its own settings: a test is gone when pytest does not collect it now. A
    # configuration that narrows what is collected hides nothing: its tests are gone too.
    which_base = TestFiles(read_settings(scan.sources.at_base), scan.sources.at_base)
    which_now = TestFiles(read_settings(scan.sources.now), scan.sources.now)
    settings = which_now.settings
    base = PySide(scan, scan.sources.at_base, which_base.settings)
    now = PySide(scan, scan.sources.now, settings)
    base_side, now_side = Side(), Side()
    origin: dict[str, str] = {}
    gone: dict[str, str] = {}
    for path, status in sorted(scan.touched.items()):
        base_path = None if status == "added" else scan.renamed_from.get(path, path)
        now_test = status != "deleted" and which_now.is_test(path)
        base_test = base_path is not None and which_base.is_test(base_path)
        if not (now_test or base_test):
            continue
        now_module = now.module(path) if now_test else None
        if now_test and now_module is None:
            continue  # it does not parse now: the test run fails on it, there is nothing to compare
        base_module = base.module(base_path) if base_test and base_path is not None else None
        base_plain = base_module.plain_imports if base_module is not None else set()
        if now_module is not None:
            origin[path] = base_path or path
            now.read_into(now_side, now_module, base_plain)
        if base_module is not None:
            base.read_into(base_side, base_module, base_module.plain_imports)
            if now_module is None and base_path is not None:
                gone[base_path] = (
                    "its file was deleted"
                    if status == "deleted"
                    else f"its file was renamed to {path}, which pytest does not collect "
                    f"({settings.describe_files()}, and the conftests' collect_ignore)"
                )
    if not base_side.tests and not now_side.tests and not now_side.marks:
        return []
    only_tests = all(
        which_now.is_test(path)
        or which_base.is_test(scan.renamed_from.get(path, path))
        or PurePosixPath(path).name == "conftest.py"
        or _does_the_same(scan, path)
        or _prose(scan, path)
        for path in scan.touched
    )
    change = Change(
        origin, gone, lambda: removed_code(scan, which_base, which_now), only_tests=only_tests
    )
    words = Words("pytest", settings.describe_files())
    edited: list[EditedTest] = []
    findings = compare(
        base_side,
        now_side,
        change,
        words,
        edited,
        scan.new_tests,
        scan.renamed_tests,
        scan.folded_tests,
        scan.deleted_classes,
        scan.check_hosts,
    )
    scan.edited_tests.extend(_could_skip_at_base(scan, test) for test in edited)
    return findings


_SKIPS = re.compile(r"\b(?:skip|skipif|importorskip|xfail|SkipTest|skipTest)\b")
_PYTESTMARK = re.compile(r"^pytestmark\b[^\n]*(?:\n[ \t)\]][^\n]*)*", re.MULTILINE)
_USEFIXTURES = re.compile(r"usefixtures\(([^)]*)\)")


def _could_skip_at_base(scan: Scan, test: EditedTest) -> EditedTest:
    """``test`` marked as one the base could skip already: by a skip of its own, a
    ``pytestmark`` of its module that skips, or a fixture it took at the base whose definition
    (in its module or a conftest.py above it, at the base) can skip: a test that needs a
    database skips where there is none, before and after an honest edit."""
    if test.skipped_at_base:
        return test
    module = scan.sources.at_base(test.base_path) or ""
    if any(_SKIPS.search(m.group(0)) for m in _PYTESTMARK.finditer(module)):
        return dataclasses.replace(test, skipped_at_base=True)
    if _marked_to_skip_at_base(scan, test, module):
        return dataclasses.replace(test, skipped_at_base=True)
    header = test.base_text.split("):", 1)[0]
    signature = header[header.rfind("def ") :]
    signature = signature[signature.find("(") + 1 :] if "(" in signature else ""
    names = {w.split(":")[0].split("=")[0].strip() for w in signature.split(",")}
    for used in _USEFIXTURES.findall(test.base_text):
        names.update(w.strip().strip("'\"") for w in used.split(","))
    # The helpers its body called at the base: one that skips where the machine lacks what it
    # needs (freezegun's `temp_locale` raising SkipTest) skipped it before the edit too.
    body = test.base_text.split("):", 1)[-1]
    names.update(re.findall(r"\b([A-Za-z_]\w*)\s*\(", body))
    names -= {"", "self", "cls"}
    if not names:
        return test
    folders = PurePosixPath(test.base_path).parents
    texts = [module] + [
        scan.sources.at_base(str(folder / "conftest.py").removeprefix("./")) or ""
        for folder in folders
    ]
    folder = PurePosixPath(test.base_path).parent
    for helper in re.findall(r"^from\s+\.?([A-Za-z_]\w*)\s+import\b", module, re.M)[:10]:
        texts.append(scan.sources.at_base(str(folder / f"{helper}.py").removeprefix("./")) or "")
    for name in names:
        pattern = re.compile(
            rf"^([ \t]*)def {re.escape(name)}\(.*?(?=^\1(?:def|class|@)|\Z)", re.M | re.S
        )
        if any(_SKIPS.search(m.group(0)) for text in texts for m in pattern.finditer(text)):
            return dataclasses.replace(test, skipped_at_base=True)
    return test


def _marked_to_skip_at_base(scan: Scan, test: EditedTest, module: str) -> bool:
    """Whether the base skipped the test by a mark not written on it as a skip (a review on
    real projects): a skip on its class (``@pytest.mark.skipif`` over ``class TestRich``); a
    mark kept in a name of the module (``needs_numpy = pytest.mark.skipif(...)``, then
    ``@needs_numpy``); or a mark a conftest.py above it at the base turns into a skip
    (pytest's documented ``--runslow``: ``@pytest.mark.slow`` and a
    ``pytest_collection_modifyitems`` that adds a skip to the tests marked so)."""
    tree = _parsed(module)
    if tree is None:
        return False
    owner = test.qualname.split("::")[0] if "::" in test.qualname else None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == owner:
            decorators = [ast.get_source_segment(module, d) or "" for d in node.decorator_list]
            if any(_SKIPS.search(text) for text in decorators):
                return True
    kept = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and _SKIPS.search(ast.get_source_segment(module, node) or "")
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    header = test.base_text.split("def ", 1)[0]
    used = set(re.findall(r"@\s*([A-Za-z_]\w*)", header))
    if used & kept:
        return True
    marks = set(re.findall(r"@\s*pytest\.mark\.([A-Za-z_]\w*)", header))
    if not marks:
        return False
    for folder in PurePosixPath(test.base_path).parents:
        conftest = scan.sources.at_base(str(folder / "conftest.py").removeprefix("./")) or ""
        named = any(re.search(rf"[\"']{re.escape(mark)}[\"']", conftest) for mark in marks)
        if named and "add_marker" in conftest and _SKIPS.search(conftest):
            return True
    return False


@lru_cache(maxsize=8)
def _parsed(text: str) -> ast.Module | None:
    """The base module's tree, read once for all its edited tests (read, never changed)."""
    try:
        return syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def prefetch(scan: Scan, paths: Iterable[str]) -> None:
    """Read these files of the base in one batch, where the sources can (CachedSources)."""
    fetch = getattr(scan.sources, "prefetch", None)
    if callable(fetch):
        fetch(list(dict.fromkeys(paths)))


# -- which files are tests ----------------------------------------------------------------------


def _does_the_same(scan: Scan, path: str) -> bool:
    """Whether the change leaves the Python file ``path`` doing what it did: the same code
    but for its imports, docstrings, comments and layout (an unused import removed for the
    linter). A test that expects another value in such a change still calls the same code
    (red team 9: `expectation-changed` hidden behind a lint fix)."""
    if not path.endswith(".py") or scan.touched.get(path) in ("added", "deleted"):
        return False
    before = scan.sources.at_base(scan.renamed_from.get(path, path))
    now = scan.sources.now(path)
    if before is None or now is None:
        return False
    shapes = [_behaviour(text) for text in (before, now)]
    return shapes[0] is not None and shapes[0] == shapes[1]


# Text for people: a changelog, a README, the docs. Requirements files change what runs.
_PROSE = frozenset({".md", ".markdown", ".rst", ".adoc", ".txt"})
_NOT_PROSE = re.compile(r"(?i)requirements|constraints")


def _prose(scan: Scan, path: str) -> bool:
    """Whether ``path`` is text for people, which no code imports: a changelog line beside a
    test's new expectation changes nothing the code does (red team 33: `CHANGELOG.md` added
    took `expectation-changed` out of the verdict). A text file in a package's folder may be
    the package's data (``importlib.resources``): not prose."""
    name = PurePosixPath(path)
    if name.suffix.lower() not in _PROSE or _NOT_PROSE.search(name.name):
        return False
    return not (scan.root / name.parent / "__init__.py").exists()


def _behaviour(text: str) -> str | None:
    """The module's code without the imports it never uses and, unless it reads ``__doc__``,
    its docstrings, as a comparable text. An import it uses (another rounding mode imported
    under the same name) and a docstring it shows (`description=__doc__`) are what it does
    (a third review on real projects)."""
    try:
        tree = syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    keep_docs = "__doc__" in text

    def unused(stmt: ast.stmt) -> bool:
        if not isinstance(stmt, ast.Import | ast.ImportFrom):
            return False
        bound = [(a.asname or a.name).split(".")[0] for a in stmt.names]
        return all(name not in used and name != "*" for name in bound)

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        kept = [
            stmt
            for at, stmt in enumerate(body)
            if not unused(stmt)
            and not (
                at == 0
                and not keep_docs
                and isinstance(
                    node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
                )
                and isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            )
        ]
        body[:] = kept or [ast.Pass()]
    return dumped(tree)


def read_settings(read: Callable[[str], str | None]) -> Settings:
    """pytest's settings on one side, from the first file pytest would read them from."""
    for name in CONFIG_FILES:
        text = read(name)
        if text is None:
            continue
        values = _pytest_section(name, text)
        if values is None:
            continue

        def get(key: str, default: tuple[str, ...], values: dict[str, Any] = values) -> Any:
            found = _words(values.get(key))
            return found if found else default

        return Settings(
            python_files=get("python_files", DEFAULT_FILES),
            python_functions=get("python_functions", ("test",)),
            python_classes=get("python_classes", ("Test",)),
            testpaths=tuple(p.strip("/").removeprefix("./") for p in get("testpaths", ())),
            norecursedirs=get("norecursedirs", DEFAULT_NORECURSE),
            addopts=" ".join(_words(values.get("addopts"))),
            pythonpath=tuple(w for v in _words(values.get("pythonpath")) for w in v.split()),
            selection=_selection(_words(values.get("addopts"))),
        )
    return Settings()


def _selection(words: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """addopts' last ``-m EXPR`` and ``-k EXPR`` (``-mEXPR``, and ``-qm EXPR`` clustered with
    pytest's flags: red team 36), as ("m" or "k", the expression)."""
    found: dict[str, str] = {}
    for at, word in enumerate(words):
        cluster = _SHORT.fullmatch(word)
        if cluster is None:
            continue
        option, glued = cluster.group(2), cluster.group(3)
        value = glued.removeprefix("=") if glued else (words[at + 1] if at + 1 < len(words) else "")
        if value:
            found[option] = value
    return tuple(sorted(found.items()))


# A short-option cluster ending in -m or -k: flags pytest takes without a value before it.
_SHORT = re.compile(r"-([qvslxr]*)([mk])(.*)")


def _matcher(mark: str | None, keyword: bool = False) -> Callable[..., bool]:
    """What pytest's expression asks of a test that carries ``mark`` alone (None: no mark):
    ``-m`` a mark's name, ``-k`` a word within it."""

    def matches(name: str, /, **kwargs: str | int | bool | None) -> bool:
        if mark is None:
            return False
        if keyword:
            return name.lower() in mark.lower()
        return name == mark and not kwargs

    return matches


def deselects(selection: tuple[tuple[str, str], ...], mark: str) -> str | None:
    """The option of ``selection`` that leaves out a test for having the mark ``mark`` (and
    keeps one without it), as written (``-m "not slow"``); None when none does. ``-k`` matches
    mark names too, a word within them. A mark the change puts on a test the suite ran takes
    it out of the run as a skip does (red team 35: `@pytest.mark.slow` under `-m "not slow"`)."""
    from _pytest.mark.expression import Expression

    for option, expression in selection:
        marked = _matcher(mark, keyword=option == "k")
        try:
            compiled = Expression.compile(expression)
            if compiled.evaluate(_matcher(None)) and not compiled.evaluate(marked):
                return f'-{option} "{expression}"'
        except Exception:  # an expression pytest refuses: it says so itself
            continue
    return None


def settings_file(read: Callable[[str], str | None]) -> str | None:
    """The file pytest reads its settings from on one side (project-relative), if any."""
    for name in CONFIG_FILES:
        text = read(name)
        if text is not None and _pytest_section(name, text) is not None:
            return name
    return None


def _pytest_section(name: str, text: str) -> dict[str, Any] | None:
    """The pytest section of one configuration file, or None if it has none (or is broken:
    pytest says so itself, and the defaults are then the best guess)."""
    table = pytest_files.read(name, text)
    return table.values if table is not None else None


def _words(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError:
            return tuple(value.split())
    return ()


def _conftests_above(paths: Iterable[str]) -> list[str]:
    """The conftest.py files that apply to ``paths``, from the root down."""
    return list(dict.fromkeys(name for path in paths for name in _conftest_chain(path)))


@cache
def _conftest_chain(path: str) -> tuple[str, ...]:
    return tuple(
        "conftest.py" if str(parent) == "." else f"{parent}/conftest.py"
        for parent in reversed(PurePosixPath(path).parents)
    )


class TestFiles:
    """Which files pytest collects, by one side's settings and conftests."""

    __test__ = False  # not a test class, for pytest's sake

    def __init__(self, settings: Settings, read: Callable[[str], str | None]) -> None:
        self.settings = settings
        self.read = read
        self._ignores: dict[str, tuple[list[str], list[str]]] = {}

    def is_test(self, path: str) -> bool:
        s = self.settings
        if not path.endswith(".py"):
            return False
        pure = PurePosixPath(path)
        if any(_match_any(part, s.norecursedirs) for part in pure.parent.parts):
            return False
        if s.testpaths and not any(
            fnmatch.fnmatch(str(p), tp) for p in (pure, *pure.parents) for tp in s.testpaths
        ):
            return False
        if not any(_file_matches(pure, pattern) for pattern in s.python_files):
            return False
        return not self._ignored(pure)

    def is_python_code(self, path: str) -> bool:
        """Code that is not a test (nor a conftest): where a feature lives."""
        return (
            path.endswith(".py")
            and PurePosixPath(path).name != "conftest.py"
            and not self.is_test(path)
        )

    def _ignored(self, path: PurePosixPath) -> bool:
        for parent in path.parents:
            plain, globs = self._ignore_lists(parent)
            rel = path.relative_to(parent).as_posix()
            if any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in plain):
                return True
            if any(fnmatch.fnmatch(rel, g) for g in globs):
                return True
        return False

    def _ignore_lists(self, directory: PurePosixPath) -> tuple[list[str], list[str]]:
        key = directory.as_posix()
        if key not in self._ignores:
            name = "conftest.py" if key == "." else f"{key}/conftest.py"
            self._ignores[key] = _collect_ignore(self.read(name))
        return self._ignores[key]


def matches_python_files(path: PurePosixPath, pattern: str) -> bool:
    """Whether a ``python_files`` pattern selects the file at ``path``."""
    return _file_matches(path, pattern)


def _file_matches(path: PurePosixPath, pattern: str) -> bool:
    if "/" not in pattern:
        return fnmatch.fnmatch(path.name, pattern)
    full = path.as_posix()
    return fnmatch.fnmatch(full, pattern) or fnmatch.fnmatch(full, "*/" + pattern)


def _match_any(name: str, patterns: Iterable[str]) -> bool:
    """pytest's python_functions / python_classes: a prefix, or a glob."""
    for pattern in patterns:
        if name.startswith(pattern):
            return True
        if any(c in pattern for c in "*?[") and fnmatch.fnmatch(name, pattern):
            return True
    return False


def _collect_ignore(text: str | None) -> tuple[list[str], list[str]]:
    """A conftest's literal ``collect_ignore`` and ``collect_ignore_glob`` lists."""
    plain: list[str] = []
    globs: list[str] = []
    if not text or "collect_ignore" not in text:
        return plain, globs
    try:
        tree = syntax.parse(text)
    except (SyntaxError, ValueError):
        return plain, globs
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign) and stmt.value:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            try:
                value = ast.literal_eval(stmt.value)
            except ValueError:
                continue
            if not isinstance(value, list | tuple):
                continue
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "collect_ignore":
                    plain += [str(v).removeprefix("./") for v in value]
                elif isinstance(target, ast.Name) and target.id == "collect_ignore_glob":
                    globs += [str(v).removeprefix("./") for v in value]
    return plain, globs


# -- one module ----------------------------------------------------------------------------------


class Module:
    """A test file's tree: its imports, constants, tests, helpers and fixtures."""

    def __init__(self, path: str, tree: ast.Module, settings: Settings, text: str = "") -> None:
        self.path = path
        self.tree = tree
        self.settings = settings
        self.lines = text.splitlines()
        self.imports: dict[str, str] = {}  # local name -> dotted name it stands for
        self.plain_imports: set[str] = set()  # top-level modules imported at module level
        self.consts: dict[str, ast.expr] = {}
        self.functions: dict[str, Function] = {}  # module level
        self.methods: dict[str, dict[str, Function]] = {}  # class qualname -> methods
        self.fixtures: dict[str, Function] = {}
        self.tests: dict[str, tuple[Function, str | None]] = {}  # qualname -> (def, class)
        self.uncollected: dict[str, str] = {}  # body key -> name
        self._units: set[str] = set()  # unittest.TestCase subclasses of this module
        for stmt in tree.body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self._import(stmt)
        self._collect(tree.body, "", None, False)
        # A constant is a name bound once at module level; one bound again may be anything.
        stores = _module_stores(tree.body)
        self.consts = {k: v for k, v in self.consts.items() if stores[k] == 1}

    # names

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                self.plain_imports.add(alias.name.split(".")[0])
                if alias.asname:
                    self.imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.imports[top] = top
            return
        module = "." * stmt.level + (stmt.module or "")
        if stmt.level == 0 and stmt.module:
            self.plain_imports.add(stmt.module.split(".")[0])
        for alias in stmt.names:
            sep = "" if module.endswith(".") else "."
            self.imports[alias.asname or alias.name] = f"{module}{sep}{alias.name}"

    def dotted(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.imports.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            inner = self.dotted(node.value)
            return None if inner is None else f"{inner}.{node.attr}"
        return None

    def alias(self, node: ast.expr) -> ast.expr:
        """A module-level name bound to an expression (``skip_me = pytest.mark.skip``)."""
        for _ in range(5):
            if isinstance(node, ast.Name) and node.id in self.consts:
                node = self.consts[node.id]
            else:
                break
        return node

    # what pytest collects

    def _collect(self, body: list[ast.stmt], prefix: str, cls: str | None, unit: bool) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = prefix + stmt.name
                if cls is None:
                    self.functions[stmt.name] = stmt
                else:
                    self.methods.setdefault(cls, {})[stmt.name] = stmt
                if self._is_fixture(stmt):
                    self.fixtures[stmt.name] = stmt
                    self.tests.pop(qualname, None)
                    continue
                collected = (
                    stmt.name.startswith("test")
                    if unit
                    else _match_any(stmt.name, self.settings.python_functions)
                )
                if collected:
                    self.tests[qualname] = (stmt, cls)
                else:
                    self.tests.pop(qualname, None)
                    self.uncollected[body_key(stmt)] = qualname
            elif isinstance(stmt, ast.ClassDef):
                qualname = prefix + stmt.name
                self._forget(qualname)
                bases = [self.dotted(b) or "" for b in stmt.bases]
                is_unit = any(b.endswith("TestCase") or b in self._units for b in bases)
                if is_unit:
                    self._units.add(stmt.name)
                if (is_unit or _match_any(stmt.name, self.settings.python_classes)) and (
                    self._collectable(stmt)
                ):
                    self._collect(stmt.body, qualname + "::", qualname, is_unit)
                else:
                    self._collect_helpers(stmt, qualname)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Delete):
                targets = (
                    stmt.targets if isinstance(stmt, ast.Assign | ast.Delete) else [stmt.target]
                )
                for target in targets:
                    self._assigned(target, stmt, prefix, cls)

    def _assigned(self, target: ast.expr, stmt: ast.stmt, prefix: str, cls: str | None) -> None:
        if isinstance(target, ast.Name):
            self.tests.pop(prefix + target.id, None)  # rebinding a test's name hides it
            self._forget(prefix + target.id)
            value = getattr(stmt, "value", None)
            if cls is None and isinstance(value, ast.expr) and isinstance(stmt, ast.Assign):
                self.consts[target.id] = value
        elif (
            isinstance(target, ast.Attribute)
            and target.attr == "__test__"
            and isinstance(target.value, ast.Name)
        ):
            self.tests.pop(prefix + target.value.id, None)  # test_x.__test__ = False
            self._forget(prefix + target.value.id)

    def _forget(self, qualname: str) -> None:
        for key in [k for k in self.tests if k.startswith(qualname + "::")]:
            del self.tests[key]

    def _collect_helpers(self, cls: ast.ClassDef, qualname: str) -> None:
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self.methods.setdefault(qualname, {})[stmt.name] = stmt
                self.uncollected[body_key(stmt)] = f"{qualname}::{stmt.name}"
                if self._is_fixture(stmt):
                    self.fixtures[stmt.name] = stmt

    def _is_fixture(self, func: Function) -> bool:
        for decorator in func.decorator_list:
            node = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = self.dotted(node) or ""
            if name == "fixture" or name.endswith(".fixture"):
                return True
        return False

    def _collectable(self, cls: ast.ClassDef) -> bool:
        """pytest skips a class with an ``__init__`` or ``__test__ = False``."""
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
                return False
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__test__" for t in stmt.targets
            ):
                return truthy(stmt.value, self) is not False
        return True


def _module_stores(body: list[ast.stmt]) -> Counter[str]:
    stores: Counter[str] = Counter()
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stores[stmt.name] += 1
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                stores[node.id] += 1
            elif isinstance(node, ast.Global | ast.Nonlocal):
                for name in node.names:
                    stores[name] += 2
    return stores


def body_key(func: Function) -> str:
    return dumped(ast.Module(body=_body(func), type_ignores=[]))


def _body(func: Function) -> list[ast.stmt]:
    body = list(func.body)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]  # the docstring
    return body


def parse(text: str | None, path: str, settings: Settings) -> Module | None:
    if text is None:
        return None
    try:
        return Module(path, syntax.parse(text, path), settings, text)
    except (SyntaxError, ValueError, RecursionError):
        return None


# -- conditions: does it apply here? ------------------------------------------------------------

_UNKNOWN: Any = object()


@cache
def _known() -> dict[str, Any]:
    """What a skip condition may ask of the running interpreter."""
    import platform  # only when a condition asks: it costs every gate process its import

    version = tuple(sys.version_info)
    return {
        "sys.platform": sys.platform,
        "os.name": os.name,
        "os.sep": os.sep,
        "sys.byteorder": sys.byteorder,
        "sys.maxsize": sys.maxsize,
        "sys.version_info": version,
        "sys.version_info.major": version[0],
        "sys.version_info.minor": version[1],
        "sys.version_info.micro": version[2],
        "sys.implementation.name": sys.implementation.name,
        "platform.system()": platform.system(),
        "platform.machine()": platform.machine(),
        "platform.python_implementation()": platform.python_implementation(),
    }


_STR_METHODS = {"startswith", "endswith", "lower", "upper", "casefold", "strip"}


def value(node: ast.AST, module: Module | None, depth: int = 0) -> Any:
    """The value of a condition's expression here, or ``_UNKNOWN``."""
    if depth > 30:
        return _UNKNOWN
    known = _known()
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name | ast.Attribute):
        name = module.dotted(node) if module is not None else _plain_dotted(node)
        if name in known:
            return known[name]
        if (
            module is not None
            and isinstance(node, ast.Name)
            and node.id in module.consts
            and node.id not in module.imports
        ):
            return value(module.consts[node.id], module, depth + 1)
        return _UNKNOWN
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        name = module.dotted(node.func) if module is not None else _plain_dotted(node.func)
        if f"{name}()" in known:
            return known[f"{name}()"]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = value(node.func.value, module, depth + 1)
        args = [value(a, module, depth + 1) for a in node.args]
        if (
            isinstance(owner, str)
            and node.func.attr in _STR_METHODS
            and not node.keywords
            and all(a is not _UNKNOWN for a in args)
        ):
            try:
                return getattr(owner, node.func.attr)(*args)
            except (TypeError, ValueError):
                return _UNKNOWN
        return _UNKNOWN
    if isinstance(node, ast.Subscript):
        owner = value(node.value, module, depth + 1)
        index = _index(node.slice, module, depth)
        if owner is _UNKNOWN or index is _UNKNOWN:
            return _UNKNOWN
        try:
            return owner[index]
        except (TypeError, IndexError, KeyError):
            return _UNKNOWN
    if isinstance(node, ast.Compare):
        left = value(node.left, module, depth + 1)
        if left is _UNKNOWN:
            return _UNKNOWN
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = value(right_node, module, depth + 1)
            if right is _UNKNOWN:
                return _UNKNOWN
            try:
                if not _compare(op, left, right):
                    return False
            except TypeError:
                return _UNKNOWN
            left = right
        return True
    if isinstance(node, ast.Tuple | ast.List):
        items = [value(e, module, depth + 1) for e in node.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else tuple(items)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = value(node.operand, module, depth + 1)
        return -inner if isinstance(inner, int | float) else _UNKNOWN
    if isinstance(node, ast.BoolOp | ast.UnaryOp):
        found = truthy(node, module, depth + 1)
        return _UNKNOWN if found is None else found
    return _UNKNOWN


def _index(node: ast.AST, module: Module | None, depth: int) -> Any:
    if isinstance(node, ast.Slice):
        parts = [
            None if p is None else value(p, module, depth + 1)
            for p in (node.lower, node.upper, node.step)
        ]
        return _UNKNOWN if any(p is _UNKNOWN for p in parts) else slice(*parts)
    return value(node, module, depth + 1)


def _compare(op: ast.cmpop, left: Any, right: Any) -> bool:
    operations: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
        ast.Eq: lambda a, b: bool(a == b),
        ast.NotEq: lambda a, b: bool(a != b),
        ast.Lt: lambda a, b: bool(a < b),
        ast.LtE: lambda a, b: bool(a <= b),
        ast.Gt: lambda a, b: bool(a > b),
        ast.GtE: lambda a, b: bool(a >= b),
        ast.In: lambda a, b: a in b,
        ast.NotIn: lambda a, b: a not in b,
        ast.Is: lambda a, b: a is b,
        ast.IsNot: lambda a, b: a is not b,
    }
    return operations[type(op)](left, right)


def _plain_dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _plain_dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def truthy(node: ast.AST, module: Module | None, depth: int = 0) -> bool | None:
    """Whether ``node`` is true here: True, False, or None when it cannot be told."""
    if depth > 30:
        return None
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        return bool(node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.keys) if all(k is not None for k in node.keys) else None
    if isinstance(node, ast.Lambda):
        return True
    if isinstance(node, ast.JoinedStr):
        parts = node.values
        if any(isinstance(p, ast.Constant) and p.value for p in parts):
            return True
        return False if not parts else None
    if isinstance(node, ast.BoolOp):
        found = [truthy(v, module, depth + 1) for v in node.values]
        if isinstance(node.op, ast.Or):
            return True if True in found else (False if all(f is False for f in found) else None)
        return False if False in found else (True if all(f is True for f in found) else None)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = truthy(node.operand, module, depth + 1)
        return None if inner is None else not inner
    if isinstance(node, ast.IfExp):
        test = truthy(node.test, module, depth + 1)
        body, orelse = truthy(node.body, module, depth + 1), truthy(node.orelse, module, depth + 1)
        if test is None:
            return body if body == orelse else None
        return body if test else orelse
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and dumped(node.left) == dumped(node.comparators[0])
    ):
        return isinstance(node.ops[0], ast.Eq | ast.Is | ast.LtE | ast.GtE)
    found = value(node, module, depth + 1)
    if found is _UNKNOWN:
        return None
    try:
        return bool(found)
    except Exception:  # pragma: no cover - a constant's __bool__ does not raise
        return None


def condition(node: ast.AST, module: Module) -> bool | None:
    """A skipif/xfail condition: an expression, or a string pytest evaluates."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            parsed = ast.parse(node.value.strip(), mode="eval").body
        except SyntaxError:
            return None
        return truthy(parsed, None)
    return truthy(node, module)


def environmental(node: ast.AST, module: Module | None) -> bool:
    """The condition asks where it runs: the platform, the OS, the Python version."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return environmental(ast.parse(node.value.strip(), mode="eval").body, None)
        except SyntaxError:
            return False
    known = _known()
    for sub in ast.walk(node):
        target = sub.func if isinstance(sub, ast.Call) else sub
        if not isinstance(target, ast.Name | ast.Attribute):
            continue
        name = module.dotted(target) if module is not None else _plain_dotted(target)
        if name in known or f"{name}()" in known:
            return True
    return False


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return True if a is True and b is True else None


# -- marks: skips, xfails, reruns ---------------------------------------------------------------

_SKIP_CALLS = {"pytest.skip", "pytest.xfail", "unittest.SkipTest", "pytest.skip.Exception"}
_RERUN = {"pytest.mark.flaky", "flaky", "flaky.flaky", "flaky.decorator.flaky"}


@dataclass
class Marker:
    """A mark expression, read."""

    category: Category
    what: str
    here: bool | None
    environmental: bool = False  # its condition asks the platform or the Python version
    # A finding only on a test of the base: a mark the suite's `-m` leaves out, on a new test,
    # is the project's own way to keep it out of the run.
    replaces_only: bool = False
    effect: str | None = None  # what it does, when it is not what its category does


def read_mark(node: ast.expr, module: Module) -> Marker | None:
    """``@pytest.mark.skip``, ``skipif(...)``, ``xfail``, ``unittest.skip*``, ``@flaky``."""
    node = module.alias(node)
    call = node if isinstance(node, ast.Call) else None
    name = module.dotted(call.func if call else node)
    if name is None:
        return None
    name = name.replace("unittest.case.", "unittest.")
    args = list(call.args) if call else []
    kwargs = {k.arg: k.value for k in call.keywords if k.arg} if call else {}
    what = _short(node)
    if name in ("pytest.mark.skip", "unittest.skip", "unittest.expectedFailure"):
        return Marker("skip", what, True)
    if name in ("pytest.mark.skipif", "pytest.mark.xfail"):
        conditions = args or ([kwargs["condition"]] if "condition" in kwargs else [])
        if not conditions:
            return Marker("skip", what, True)
        found = [condition(c, module) for c in conditions]
        here = True if True in found else (False if all(f is False for f in found) else None)
        return Marker("skip", what, here, any(environmental(c, module) for c in conditions))
    if name in ("unittest.skipIf", "unittest.skipUnless") and args:
        found_one = condition(args[0], module)
        if name == "unittest.skipUnless" and found_one is not None:
            found_one = not found_one
        return Marker("skip", what, found_one, environmental(args[0], module))
    if name in _RERUN:
        return Marker("rerun", what, True)
    mark = name.removeprefix("pytest.mark.").removesuffix(".with_args")
    left_out = deselects(module.settings.selection, mark) if mark != name else None
    if left_out is not None and mark.isidentifier():
        return Marker(
            "skip",
            what,
            True,
            replaces_only=True,
            effect=f"pytest's `{left_out}` leaves the test out of the run",
        )
    return None


def _short(node: ast.AST, limit: int = 70) -> str:
    text = " ".join(unparsed(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class MarkReader:
    """Every skip, xfail and rerun of a module, with the scope it applies to."""

    def __init__(
        self,
        module: Module,
        base_plain: set[str],
        is_project_module: Callable[[str], bool],
    ) -> None:
        self.module = module
        self.base_plain = base_plain
        self.is_project_module = is_project_module
        self.found: list[Mark] = []
        self._guards = 0  # how many platform or version checks the current code is under

    def read(self) -> list[Mark]:
        module = self.module
        self._statements(module.tree.body, "", True)
        self._scope_body(module.tree.body, "")
        return self.found

    def _add(self, scope: str, marker: Marker, line: int, effect: str | None = None) -> None:
        self.found.append(
            Mark(
                self.module.path,
                scope,
                marker.category,
                marker.what,
                line,
                marker.here,
                effect=effect or marker.effect,
                environmental=marker.environmental or self._guards > 0,
                replaces_only=marker.replaces_only,
            )
        )

    def _scope_body(self, body: list[ast.stmt], prefix: str) -> None:
        """Definitions (decorators, bodies) and ``pytestmark`` in a module or class body."""
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                scope = prefix + stmt.name
                self._decorators(stmt.decorator_list, scope)
                self._statements(stmt.body, scope, True)
            elif isinstance(stmt, ast.ClassDef):
                scope = prefix + stmt.name
                self._decorators(stmt.decorator_list, scope)
                self._scope_body(stmt.body, scope + "::")
            elif (marked := _marks_set_on(stmt)) is not None:
                # `test_x.pytestmark = [...]`, `setattr(test_x, "pytestmark", [...])`: what
                # pytest reads of the function (or class) as its marks.
                name, value_node = marked
                items = (
                    value_node.elts
                    if isinstance(value_node, ast.List | ast.Tuple)
                    else [value_node]
                )
                for item in items:
                    if isinstance(item, ast.Attribute) and item.attr == "mark":
                        item = item.value  # a MarkDecorator's Mark
                    marker = read_mark(item, self.module)
                    if marker is not None:
                        marker.what = f"{name}.pytestmark = {marker.what}"
                        self._add(prefix + name, marker, item.lineno)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets):
                    value_node = stmt.value
                    items = (
                        value_node.elts
                        if isinstance(value_node, ast.List | ast.Tuple)
                        else [value_node]
                    )
                    for item in items:
                        marker = read_mark(item, self.module)
                        if marker is not None:
                            marker.what = f"pytestmark = {marker.what}"
                            self._add(prefix.rstrip(":"), marker, item.lineno)
                else:
                    self._params(stmt.value, prefix.rstrip(":"))

    def _decorators(self, decorators: list[ast.expr], scope: str) -> None:
        for decorator in decorators:
            marker = read_mark(decorator, self.module)
            if marker is not None:
                marker.what = f"@{marker.what}"
                self._add(scope, marker, decorator.lineno)
            self._params(decorator, scope)

    def _params(self, node: ast.AST, scope: str) -> None:
        """``pytest.param(..., marks=pytest.mark.xfail)``: one case of a parametrized test."""
        for call in ast.walk(node):
            if not isinstance(call, ast.Call) or self.module.dotted(call.func) != "pytest.param":
                continue
            for keyword in call.keywords:
                if keyword.arg != "marks":
                    continue
                marks = keyword.value
                items = marks.elts if isinstance(marks, ast.List | ast.Tuple) else [marks]
                for item in items:
                    marker = read_mark(item, self.module)
                    if marker is not None and marker.replaces_only:
                        continue  # a case the suite's `-m` leaves out: new cases are (review 22)
                    if marker is not None:
                        marker.what = f"pytest.param(..., marks={marker.what})"
                        effect = "a parametrized case no longer counts"
                        self._add(scope, marker, item.lineno, effect)

    def _statements(self, body: list[ast.stmt], scope: str, here: bool | None) -> None:
        """Skips called in code (``pytest.skip()``, ``importorskip``), under their guards."""
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if scope:  # nested in a test or helper: part of it
                    self._statements(stmt.body, scope, here)
                continue
            if isinstance(stmt, ast.If):
                self._expression(stmt.test, scope, here)
                test = truthy(stmt.test, self.module)
                guard = int(environmental(stmt.test, self.module))
                self._guards += guard
                self._statements(stmt.body, scope, _and(here, test))
                self._statements(stmt.orelse, scope, _and(here, None if test is None else not test))
                self._guards -= guard
            elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                self._statements(getattr(stmt, "body", []), scope, here)
                for handler in getattr(stmt, "handlers", []):
                    self._statements(handler.body, scope, _and(here, None))
                self._statements(getattr(stmt, "orelse", []), scope, here)
                self._statements(getattr(stmt, "finalbody", []), scope, here)
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
                header = stmt.test if isinstance(stmt, ast.While) else stmt.iter
                self._expression(header, scope, here)
                self._statements(stmt.body, scope, _and(here, None))
                self._statements(stmt.orelse, scope, _and(here, None))
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                for item in stmt.items:
                    self._expression(item.context_expr, scope, here)
                self._statements(stmt.body, scope, here)
            elif isinstance(stmt, ast.Match):
                self._expression(stmt.subject, scope, here)
                for case in stmt.cases:
                    self._statements(case.body, scope, _and(here, None))
            elif isinstance(stmt, ast.Raise) and stmt.exc is not None:
                exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
                name = (self.module.dotted(exc) or "").replace("unittest.case.", "unittest.")
                if name in _SKIP_CALLS or name == "SkipTest" or name.endswith(".SkipTest"):
                    self._add(scope, Marker("skip", f"raise {_short(stmt.exc)}", here), stmt.lineno)
            else:
                self._expression(stmt, scope, here)

    def _expression(self, node: ast.AST, scope: str, here: bool | None) -> None:
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                marker = self._skip_call(call)
                if marker is not None:
                    marker.here = _and(here, marker.here)
                    self._add(scope, marker, call.lineno)

    def _skip_call(self, call: ast.Call) -> Marker | None:
        name = (self.module.dotted(call.func) or "").replace("unittest.case.", "unittest.")
        what = _short(call)
        if name in ("pytest.skip", "pytest.xfail"):
            return Marker("skip", what, True)
        if name in ("pytest.exit", "os._exit"):
            return Marker("exit", what, True)
        if name.endswith(".skipTest") or name == "skipTest":
            return Marker("skip", what, True)
        if name == "pytest.importorskip" and call.args:
            target = call.args[0]
            if isinstance(target, ast.Constant) and isinstance(target.value, str):
                top = target.value.split(".")[0]
                # A module the base imported plainly, or the project's own, must be there.
                must = top in self.base_plain or self.is_project_module(top)
                return Marker("skip", what, True if must else None)
            return None
        applied = isinstance(call.func, ast.Attribute) and call.func.attr in (
            "applymarker",
            "add_marker",
        )
        return read_mark(call.args[0], self.module) if applied and call.args else None


# -- assertions ---------------------------------------------------------------------------------

_EXACT_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_WEAK_METHODS = {"assertTrue", "assertFalse", "assertIsNotNone", "assertIsNone", "assertIsInstance"}
_EXACT_METHODS = {
    "assertEqual", "assertNotEqual", "assertIn", "assertNotIn", "assertAlmostEqual",
    "assertGreater", "assertGreaterEqual", "assertLess", "assertLessEqual", "assertCountEqual",
    "assertDictEqual", "assertListEqual", "assertSequenceEqual", "assertSetEqual",
    "assertRegex", "assertMultiLineEqual", "assertTupleEqual",
}  # fmt: skip


# Every value but the one written out passes: an exact expectation inverted.
_ALL_BUT_METHODS = {"assertNotEqual", "assertNotIn", "assertNotAlmostEqual"}


_COMPARING_CALLS = {
    "isclose", "allclose", "array_equal", "array_equiv", "equal", "equals", "match",
    "fullmatch", "search", "startswith", "endswith", "issubset", "issuperset", "isdisjoint",
    "compare_digest", "samefile", "cmp",
}  # fmt: skip


_PATCHERS = {"setattr", "patch", "object"}  # monkeypatch.setattr, mock.patch(.object), mocker
Target = tuple[str | None, str]  # (what it is an attribute of, as written; its name)


def _mocked(func: Function) -> list[tuple[int, str]]:
    """(line, name) of each function the test patches and then calls inside an assertion:
    ``monkeypatch.setattr(calc, "add", ...)`` or ``mocker.patch("pkg.calc.add", ...)`` followed
    by ``assert add(1, 2) == 3``. A name patched on one object and called on another
    (``requests.get`` and ``cache.get``) is not the same function."""
    patched: dict[Target, int] = {}
    asserted: set[Target] = set()
    for node in ast.walk(func):  # the test's decorators too: @mock.patch("pkg.calc.add")
        if isinstance(node, ast.Call) and node.args and _callee(node.func)[1] in _PATCHERS:
            target = _patched(node)
            if target is not None:
                patched.setdefault(target, node.lineno)
        if isinstance(node, ast.Assert) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _EXACT_METHODS | _WEAK_METHODS
        ):
            asserted.update(
                _callee(inner.func)
                for inner in ast.walk(node)
                if isinstance(inner, ast.Call) and inner is not node
            )
    return sorted(
        (line, name)
        for (owner, name), line in patched.items()
        if any(name == called and _same_owner(owner, of) for of, called in asserted)
    )


def _callee(func: ast.expr) -> Target:
    if isinstance(func, ast.Attribute):
        return _plain_dotted(func.value), func.attr
    return None, func.id if isinstance(func, ast.Name) else ""


def _same_owner(patched: str | None, called: str | None) -> bool:
    """``pkg.calc`` and ``calc`` (or an imported bare name) may be the same module."""
    if patched is None or called is None:
        return True
    return patched.rsplit(".", 1)[-1] == called.rsplit(".", 1)[-1]


def _patched(call: ast.Call) -> Target | None:
    """What a patching call replaces: ``patch("pkg.calc.add")``, ``setattr(calc, "add", f)``,
    ``patch.object(calc, "add")``, ``monkeypatch.setattr("pkg.calc.add", f)``."""
    first = call.args[0]
    if len(call.args) >= 2:
        second = call.args[1]
        if isinstance(second, ast.Constant) and isinstance(second.value, str):
            return _plain_dotted(first), second.value
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and "." in first.value:
        owner, name = first.value.rsplit(".", 1)
        return owner, name
    return None


def _params(module: Module, func: Function) -> list[tuple[int, str, tuple[str, ...] | None]]:
    """(line, argnames, each case as written) of every ``@pytest.mark.parametrize`` on the
    test; the cases are None unless a literal list or tuple (or a module constant bound to one)
    says them."""
    found = []
    for decorator in func.decorator_list:
        node = module.alias(decorator)
        if not isinstance(node, ast.Call) or module.dotted(node.func) != "pytest.mark.parametrize":
            continue
        kwargs = {k.arg: k.value for k in node.keywords if k.arg}
        names = node.args[0] if node.args else kwargs.get("argnames")
        cases = node.args[1] if len(node.args) > 1 else kwargs.get("argvalues")
        argnames = None if names is None else value(names, module)
        if isinstance(argnames, list | tuple):
            argnames = ",".join(str(n) for n in argnames)
        key = ",".join(n.strip() for n in argnames.split(",")) if isinstance(argnames, str) else "?"
        cases = None if cases is None else module.alias(cases)
        written = None
        elements = cases.elts if isinstance(cases, ast.List | ast.Tuple) and key != "?" else None
        if elements is not None and not any(isinstance(e, ast.Starred) for e in elements):
            written = tuple(" ".join(unparsed(e).split()) for e in elements)
        found.append((decorator.lineno, key, written))
    return found


def _marks_set_on(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    """(name, value) of ``name.pytestmark = value`` (``+=``) or ``setattr(name, "pytestmark",
    value)``: marks given to a function or class of the module after its definition."""
    if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr == "pytestmark"
                and isinstance(target.value, ast.Name)
            ):
                return target.value.id, stmt.value
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if (
            isinstance(call.func, ast.Name)
            and call.func.id == "setattr"
            and len(call.args) == 3
            and isinstance(call.args[0], ast.Name)
            and isinstance(call.args[1], ast.Constant)
            and call.args[1].value == "pytestmark"
        ):
            return call.args[0].id, call.args[2]
    return None


def _all_but(test: ast.Compare) -> bool:
    """``a != b``, ``a not in b``: a comparison every value but those written out passes."""
    return all(isinstance(op, (ast.NotEq, ast.NotIn)) for op in test.ops)


def _strength(test: ast.expr) -> str:
    """An assert's test: "exact" when it compares with a value (other than True, False or
    None), "weak" when it only checks truthiness, None-ness or a type, "loose" when it admits
    other values than the expected one: a wide tolerance (``pytest.approx(0.0, abs=2)``), one
    of values written out (``in (0.0, 1.5)``), or all but one (``!= 3``, ``not ... == 3``)."""
    if isinstance(test, ast.BoolOp):
        kinds = {_strength(value) for value in test.values}
        return "exact" if "exact" in kinds else "weak"
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        operand = test.operand
        if isinstance(operand, ast.Compare) and _all_but(operand):
            return "exact"  # `not (f(x) != 3)`: f(x) == 3
        kind = _strength(operand)
        return "loose" if kind == "exact" else kind  # `not f(x) == 3`: all values but one
    if isinstance(test, ast.Call):
        func = test.func
        name = func.id if isinstance(func, ast.Name) else None
        if name in ("any", "all") and test.args:
            inner = test.args[0]
            if isinstance(inner, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
                return _strength(inner.elt)
            return "weak"
        called = func.attr if isinstance(func, ast.Attribute) else name
        if called == "isclose" and _wide(test, "abs_tol", "rel_tol"):
            return "loose"
        # A function that compares two things: math.isclose(a, b), re.fullmatch(p, s).
        return "exact" if called in _COMPARING_CALLS else "weak"
    if isinstance(test, ast.Compare):
        sides = [test.left, *test.comparators]
        if any(isinstance(op, ast.Eq) for op in test.ops) and any(
            isinstance(side, ast.Call)
            and _plain_dotted(side.func) in ("pytest.approx", "approx")
            and _wide(side, "abs", "rel")
            for side in sides
        ):
            return "loose"
        if (
            len(test.ops) == 1
            and isinstance(test.ops[0], ast.In)
            and not isinstance(test.left, ast.Constant)
            and isinstance(test.comparators[0], ast.Tuple | ast.List | ast.Set)
            and len(test.comparators[0].elts) > 1
        ):
            return "loose"  # one of values written out: the expected one, or another
        if _all_but(test):
            return "loose"  # `!= 3`: every value but the one written out
        if all(isinstance(op, _ORDERING) for op in test.ops) and not any(
            _singleton(side) for side in sides
        ):
            return "loose"  # `<= 4.0`: a bound, which other values meet (red team 58)
        # `is`: `1 == True` in Python, and `== 1` is an exact expectation, not `== True`. Either
        # way round: `None == x` (unittest's `assertEqual(None, x)`) checks what `x is None` does.
        plain = all(_singleton(side) for side in test.comparators) or (
            len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq | ast.NotEq | ast.Is | ast.IsNot)
            and _singleton(test.left)
        )
        if any(isinstance(op, _EXACT_OPS) for op in test.ops) and not plain:
            return "exact"
        if any(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops) and not plain:
            return "exact"  # `is` a sentinel or an enum member
        return "weak"
    return "weak"  # `assert x`, `assert obj.ready`


def _singleton(node: ast.expr) -> bool:
    """``True``, ``False`` or ``None`` written out."""
    return isinstance(node, ast.Constant) and any(node.value is v for v in (True, False, None))


# unittest's assert* methods as the assert each stands for: ``self.assertEqual(a, b, msg)`` is
# ``assert a == b``, ``self.assertIsNone(x)`` is ``assert x is None``. (``assertAlmostEqual``,
# ``assertCountEqual`` and ``assertRegex`` have no plain spelling of the same strength.)
_AS_COMPARISON: dict[str, type[ast.cmpop]] = {
    "assertEqual": ast.Eq, "assertEquals": ast.Eq, "assertDictEqual": ast.Eq,
    "assertListEqual": ast.Eq, "assertTupleEqual": ast.Eq, "assertSetEqual": ast.Eq,
    "assertSequenceEqual": ast.Eq, "assertMultiLineEqual": ast.Eq, "assertNotEqual": ast.NotEq,
    "assertNotEquals": ast.NotEq, "assertIn": ast.In, "assertNotIn": ast.NotIn,
    "assertIs": ast.Is, "assertIsNot": ast.IsNot, "assertGreater": ast.Gt,
    "assertGreaterEqual": ast.GtE, "assertLess": ast.Lt, "assertLessEqual": ast.LtE,
}  # fmt: skip
_AS_TRUTH = {"assertTrue", "assert_", "failUnless"}
_AS_FALSITY = {"assertFalse", "failIf"}
_AS_SINGLETON: dict[str, type[ast.cmpop]] = {"assertIsNone": ast.Is, "assertIsNotNone": ast.IsNot}
_AS_ISINSTANCE = {"assertIsInstance": False, "assertNotIsInstance": True}


def standing_for(call: ast.Call, module: Module) -> ast.expr | None:
    """The test of the assert a ``self.assert*`` call of unittest stands for (its message left
    out): ``a == b`` for ``self.assertEqual(a, b)``, ``not x`` for ``self.assertFalse(x)``; None
    for another call, or one of a method the module defines again (what it checks is its
    body's)."""
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
        and not any(func.attr in methods for methods in module.methods.values())
        and all(k.arg == "msg" for k in call.keywords)
        and not any(isinstance(arg, ast.Starred) for arg in call.args)
    ):
        return None
    name, args = func.attr, call.args
    test: ast.expr | None = None
    if name in _AS_COMPARISON and len(args) in (2, 3):
        test = ast.Compare(args[0], [_AS_COMPARISON[name]()], [args[1]])
    elif name in _AS_ISINSTANCE and len(args) in (2, 3):
        test = ast.Call(ast.Name("isinstance", ast.Load()), [args[0], args[1]], [])
        if _AS_ISINSTANCE[name]:
            test = ast.UnaryOp(ast.Not(), test)
    elif name in _AS_SINGLETON and len(args) in (1, 2):
        test = ast.Compare(args[0], [_AS_SINGLETON[name]()], [ast.Constant(None)])
    elif name in _AS_TRUTH and len(args) in (1, 2):
        test = args[0]
    elif name in _AS_FALSITY and len(args) in (1, 2):
        test = ast.UnaryOp(ast.Not(), args[0])
    return None if test is None else ast.fix_missing_locations(ast.copy_location(test, call))


# A tolerance wider than this admits other values than the one expected: 5% of it, and 0.01 of
# nothing (floating point rounding is millionths of that).
_RELATIVE, _ABSOLUTE = 0.05, 0.01


def _wide(call: ast.Call, absolute: str, relative: str) -> bool:
    """``pytest.approx(expected, abs=, rel=)`` or ``isclose(a, b, abs_tol=, rel_tol=)`` with a
    tolerance wider than rounding: of 5% or more, or more than 0.01 and 5% of the expected."""
    tolerances = {k.arg: value(k.value, None) for k in call.keywords if k.arg}
    rel, tol = tolerances.get(relative), tolerances.get(absolute)
    if isinstance(rel, int | float) and not isinstance(rel, bool) and rel >= _RELATIVE:
        return True
    if not isinstance(tol, int | float) or isinstance(tol, bool):
        return False
    expected = [value(arg, None) for arg in call.args]
    sizes = [abs(e) for e in expected if isinstance(e, int | float) and not isinstance(e, bool)]
    return tol > _ABSOLUTE and tol >= _RELATIVE * max(sizes, default=0.0) and bool(sizes)


def _wide_almost(call: ast.Call) -> bool:
    """``assertAlmostEqual(a, b, delta=D)`` with a ``delta`` wider than rounding (as
    :func:`_wide` reads a tolerance), or ``places`` of 1 or none."""
    func = call.func
    if not (
        isinstance(func, ast.Attribute) and func.attr in ("assertAlmostEqual", "assertAlmostEquals")
    ):
        return False
    given = {k.arg: value(k.value, None) for k in call.keywords if k.arg}
    places = given.get("places", value(call.args[2], None) if len(call.args) > 2 else None)
    if isinstance(places, int) and not isinstance(places, bool) and places <= 1:
        return True
    if "delta" in given:
        probe = ast.Call(
            call.func, call.args[1:2], [ast.keyword("abs", ast.Constant(given["delta"]))]
        )
        return _wide(probe, "abs", "rel")
    return False


_RAISES = {"pytest.raises", "pytest.warns", "pytest.deprecated_call"}
_BROAD = {"AssertionError", "Exception", "BaseException"}


@dataclass
class Tally:
    """What a function asserts, and why not when it does not."""

    count: int = 0
    swallowed: str | None = None
    dead: int | None = None  # the line that returns before the asserts
    vacuous: int | None = None  # a line whose assert is always true
    uncalled: str | None = None  # a nested function with asserts that is never called


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
# Builtins that take a function without calling it.
_NOT_CALLING = {
    "print", "id", "repr", "str", "type", "isinstance", "issubclass", "hash", "bool", "callable",
    "len", "dir", "vars", "format", "ascii", "list", "tuple", "set", "frozenset", "dict",
    "object", "getattr", "hasattr", "staticmethod", "classmethod", "property",
}  # fmt: skip


@dataclass(eq=False)
class _Local:
    """A function or class defined inside the function scanned, not yet called."""

    node: Definition
    method: bool  # a method of a local class
    swallowed: str | None  # where its class was defined


class AssertScan:
    """Counts the assertions a function makes, as it would run."""

    def __init__(self, module: Module, helper: Callable[[ast.Call], bool | None] | None) -> None:
        self.module = module
        self.helper = helper
        self.tally = Tally()
        # (line, "exact" | "weak") of each assert and self.assert* call reached.
        self.checks: list[tuple[int, str]] = []
        # The lines of the asserts, assertion calls and ``pytest.raises`` it counts: reached,
        # not swallowed, not always true.
        self.counted: set[int] = set()
        # The functions and classes defined inside the function: their asserts count only when
        # the code that runs calls them (the name called, or handed to a call as a callback).
        self._locals: set[str] = set()
        self._asserting: set[str] = set()  # those of them with an assert in their body
        self._pending: list[_Local] = []
        self._used: dict[str, str | None] = {}  # local name -> swallowed where it is used
        self._attrs: dict[str, str | None] = {}  # names called as attributes: a class's methods
        # Names the test binds (its parameters, its variables): a condition on them may change
        # from run to run; one on the module's names and constants does not.
        self._bound: set[str] = set()
        self._guards: list[str] = []  # the conditions of the `if`s the statement is under

    def function(self, func: Function) -> Tally:
        defined = [
            node for stmt in func.body for node in ast.walk(stmt) if isinstance(node, Definition)
        ]
        self._locals = {node.name for node in defined}
        self._asserting = {node.name for node in defined if _has_assert(node.body)}
        self._bound = _bound_names(func)
        for decorator in func.decorator_list:
            self._expression(decorator, None)
        self._run(_body(func), None)
        return self.tally

    def _calls_asserting_local(self, body: list[ast.stmt]) -> bool:
        """``body`` calls a function the test defines that asserts: its asserts are there."""
        return any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in self._asserting
            for stmt in body
            for node in ast.walk(stmt)
        )

    def _run(self, body: list[ast.stmt], swallowed: str | None) -> bool:
        """A block, then the local definitions the code that runs calls (and those they call)."""
        ends = self._block(body, swallowed)
        while True:
            ready = [local for local in self._pending if self._called(local)]
            if not ready:
                break
            for local in ready:
                self._pending.remove(local)
                inner = self._where_used(local)
                if isinstance(local.node, ast.ClassDef):
                    self._class(local.node, inner)
                else:
                    self._block(_body(local.node), inner)
        if self.tally.uncalled is None:
            for local in self._pending:
                if _has_assert(local.node.body):
                    self.tally.uncalled = f"`{local.node.name}` (line {local.node.lineno})"
                    break
        return ends

    def _called(self, local: _Local) -> bool:
        name = local.node.name
        if local.method:  # a method of a local class: called by name, or by Python (__eq__)
            return name in self._attrs or (name.startswith("__") and name.endswith("__"))
        return name in self._used

    def _where_used(self, local: _Local) -> str | None:
        name = local.node.name
        if local.method:
            return self._attrs.get(name, local.swallowed)
        return self._used.get(name)

    def _define(self, node: Definition, swallowed: str | None, method: bool = False) -> None:
        for decorator in node.decorator_list:
            self._expression(decorator, swallowed)
        self._pending.append(_Local(node, method, swallowed))

    def _class(self, cls: ast.ClassDef, swallowed: str | None) -> None:
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._define(stmt, swallowed, method=True)
            elif isinstance(stmt, ast.ClassDef):
                self._define(stmt, swallowed)
            else:
                self._statement(stmt, swallowed)

    def _count(self, swallowed: str | None, line: int | None = None) -> None:
        if swallowed is None:
            self.tally.count += 1
            if line is not None:
                self.counted.add(line)
        elif self.tally.swallowed is None:
            self.tally.swallowed = swallowed

    def _block(self, body: list[ast.stmt], swallowed: str | None) -> bool:
        """Visit a block; True if it always ends the function (return, raise, skip)."""
        for index, stmt in enumerate(body):
            if self._statement(stmt, swallowed):
                rest = body[index + 1 :]
                if rest and self.tally.dead is None:
                    probe = AssertScan(self.module, None)
                    probe._locals, probe._asserting = self._locals, self._asserting
                    probe._bound = self._bound
                    probe._run(rest, None)
                    if probe.tally.count:
                        self.tally.dead = stmt.lineno
                return True
        return False

    def _statement(self, stmt: ast.stmt, swallowed: str | None) -> bool:
        module = self.module
        if isinstance(stmt, ast.Assert):
            self.checks.append((stmt.lineno, _strength(stmt.test)))
            self._expression(stmt.test, swallowed)
            # `if f(x) == 0: assert f(x) == 0` is true wherever it runs.
            guarded = _same_test(stmt.test) in self._guards
            if guarded or truthy(stmt.test, module) is True:
                if swallowed is None and self.tally.vacuous is None:
                    self.tally.vacuous = stmt.lineno
            else:
                self._count(swallowed, stmt.lineno)
            return False
        if isinstance(stmt, ast.Return):
            if stmt.value is not None:
                self._expression(stmt.value, swallowed)
            return True
        if isinstance(stmt, ast.Raise):
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            name = module.dotted(exc) if exc is not None else None
            if not (name and ("SkipTest" in name or name in _SKIP_CALLS)):
                self._count(swallowed)
            return True
        if isinstance(stmt, ast.If):
            self._expression(stmt.test, swallowed)
            # Where it runs decides which branch: elsewhere the other one runs.
            here = truthy(stmt.test, module)
            test = None if environmental(stmt.test, module) else here
            if test is True:
                return self._block(stmt.body, swallowed)
            if test is False:
                return self._block(stmt.orelse, swallowed)
            if self._returns_here(stmt, here):
                # An early return whose condition holds here (where the test runs: the
                # platform, the version), or that no test run changes (the module's names):
                # the asserts after it never run.
                return self._block(stmt.body, swallowed)
            self._guards.append(_same_test(stmt.test))
            ends = self._block(stmt.body, swallowed)
            self._guards.pop()
            return self._block(stmt.orelse, swallowed) and ends
        if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            header = stmt.test if isinstance(stmt, ast.While) else stmt.iter
            self._expression(header, swallowed)
            inner = swallowed
            if not isinstance(stmt, ast.While) and _maybe_no_items(stmt.iter):
                inner = swallowed or (
                    f"its asserts are in a loop over `{_short(stmt.iter, 50)}`, which may have "
                    "no items"
                )
            body_ends = self._block(stmt.body, inner)
            self._block(stmt.orelse, swallowed)
            leaves = any(isinstance(n, ast.Break | ast.Continue) for n in _walk_body(stmt.body))
            if isinstance(stmt, ast.While):
                # `while True:` with no break is left only by a return or a raise.
                return truthy(stmt.test, module) is True and not leaves
            # A loop over items written out runs its body once at least.
            return body_ends and not leaves and _some_items(stmt.iter)
        if isinstance(stmt, ast.With | ast.AsyncWith):
            inner = swallowed
            for item in stmt.items:
                inner = self._context(item.context_expr, stmt.body, inner, swallowed)
            return self._block(stmt.body, inner)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            return self._try(stmt, swallowed)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._define(stmt, swallowed)  # a callback or local helper: counted when called
            return False
        if isinstance(stmt, ast.Match):
            self._expression(stmt.subject, swallowed)
            for case in stmt.cases:
                self._block(case.body, swallowed)
            return False
        self._expression(stmt, swallowed)
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            name = module.dotted(stmt.value.func) or ""
            return name in ("pytest.skip", "pytest.xfail", "pytest.fail", "sys.exit", "os._exit")
        return False

    def _returns_here(self, stmt: ast.If, here: bool | None) -> bool:
        """``if COND: return`` whose condition holds here, or cannot change between runs: a
        condition on the module's names and attributes only (``if not ZERO.rate``)."""
        if stmt.orelse or not stmt.body or not isinstance(stmt.body[-1], ast.Return):
            return False
        if not all(_plain(s, self.module) for s in stmt.body[:-1]):
            return False
        if here is not None:
            return here
        names = [n for n in ast.walk(stmt.test) if isinstance(n, ast.Name)]
        changing = ast.Call | ast.Await | ast.NamedExpr | ast.Lambda | ast.comprehension
        if not names or any(isinstance(n, changing) for n in ast.walk(stmt.test)):
            return False
        return not any(n.id in self._bound for n in names)

    def _context(
        self,
        expr: ast.expr,
        body: list[ast.stmt],
        inner: str | None,
        swallowed: str | None,
    ) -> str | None:
        """A with-item: ``pytest.raises`` asserts; one that catches the asserts inside it, or
        ``contextlib.suppress(AssertionError)``, swallows them."""
        call = expr if isinstance(expr, ast.Call) else None
        name = self.module.dotted(call.func) if call is not None else None
        last = (name or "").rsplit(".", 1)[-1]
        expects = name in _RAISES or last.startswith(("assertRaises", "assertWarns"))
        if call is not None and expects:
            caught = call.args[0] if call.args else None
            if _catches_assertions(caught, self.module) and (
                _has_assert(body) or self._calls_asserting_local(body)
            ):
                return inner or (
                    f"its asserts are inside `with {_short(call, 50)}`, which expects them to fail"
                )
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                self._expression(arg, swallowed)
            self._count(swallowed, call.lineno)
            return inner
        if (
            call is not None
            and last == "suppress"
            and any(_catches_assertions(a, self.module) for a in call.args)
        ):
            return inner or f"its asserts are inside `with {_short(call, 50)}`, which swallows them"
        self._expression(expr, swallowed)
        return inner

    def _try(self, stmt: ast.stmt, swallowed: str | None) -> bool:
        handlers: list[ast.ExceptHandler] = getattr(stmt, "handlers", [])
        swallows = None
        for handler in handlers:
            if _catches_assertions(handler.type, self.module) and not _reraises(
                handler.body, self.module
            ):
                caught = "" if handler.type is None else f" {_short(handler.type, 40)}"
                swallows = f"its asserts are inside try/except{caught}, which swallows them"
                break
        body_ends = self._block(getattr(stmt, "body", []), swallowed or swallows)
        handlers_end = all([self._block(h.body, swallowed) for h in handlers])
        else_ends = self._block(getattr(stmt, "orelse", []), swallowed)
        final_ends = self._block(getattr(stmt, "finalbody", []), swallowed)
        return final_ends or ((body_ends or else_ends) and handlers_end and bool(handlers))

    def _use(self, name: str, swallowed: str | None) -> None:
        if self._used.get(name, "") is not None:  # once used where nothing swallows, it counts
            self._used[name] = swallowed

    def _expression(self, node: ast.AST, swallowed: str | None) -> None:
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            # A local function called, or handed to a call that may call it (a callback, a
            # thread's target, map); print(check) or id(check) does not.
            if isinstance(func, ast.Name) and func.id in self._locals:
                self._use(func.id, swallowed)
            if not (isinstance(func, ast.Name) and func.id in _NOT_CALLING):
                for arg in [*call.args, *(k.value for k in call.keywords)]:
                    if isinstance(arg, ast.Starred):
                        arg = arg.value
                    if isinstance(arg, ast.Name) and arg.id in self._locals:
                        self._use(arg.id, swallowed)
            if isinstance(func, ast.Attribute):
                if self._attrs.get(func.attr, "") is not None:
                    self._attrs[func.attr] = swallowed
                if isinstance(func.value, ast.Name) and func.value.id == "self":
                    standing = standing_for(call, self.module)
                    if standing is not None:  # rated as the assert it stands for
                        self.checks.append((call.lineno, _strength(standing)))
                    elif func.attr in _ALL_BUT_METHODS or _wide_almost(call):
                        # Every value but one; or near it by more than rounding: `delta=1`,
                        # `places=0` (red team 58).
                        self.checks.append((call.lineno, "loose"))
                    elif func.attr in _EXACT_METHODS:
                        self.checks.append((call.lineno, "exact"))
                    elif func.attr in _WEAK_METHODS:
                        self.checks.append((call.lineno, "weak"))
            if isinstance(func, ast.Name) and func.id in self._locals:
                continue  # a local function: judged by its body, when it is called
            # A helper of the project is judged by its body, whatever its name says.
            resolved = self.helper(call) if self.helper is not None else self._local(call)
            if resolved is None and is_assertion_call(call, self.module):
                standing = standing_for(call, self.module)
                # Always true as the assert it stands for is: `assertEqual(f(), f())`.
                if _vacuous_call(call) or (
                    standing is not None and truthy(standing, self.module) is True
                ):
                    if swallowed is None and self.tally.vacuous is None:
                        self.tally.vacuous = call.lineno
                else:
                    self._count(swallowed, call.lineno)
            elif resolved:
                self._count(swallowed, call.lineno)  # a helper that asserts, where it runs

    def _local(self, call: ast.Call) -> bool | None:
        """False for a call of this module's own function or method (not followed here)."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.module.functions:
            return False
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
            and any(func.attr in methods for methods in self.module.methods.values())
        ):
            return False
        return None


# pytest's LineMatcher (``pytester``'s ``result.stdout``): each fails the test when the output
# does not match (a review on real projects: structlog's pytester tests).
_LINE_MATCHERS = frozenset(
    {"fnmatch_lines", "re_match_lines", "no_fnmatch_line", "no_re_match_line"}
)


def is_assertion_call(call: ast.Call, module: Module) -> bool:
    """``self.assertEqual``, ``mock.assert_called_once``, ``pytest.raises(E, f)``, ...."""
    func = call.func
    name = module.dotted(func) or ""
    last = func.attr if isinstance(func, ast.Attribute) else name.rsplit(".", 1)[-1]
    if last.lower().startswith("assert") or last == "expect" or last in _LINE_MATCHERS:
        return True
    if name in _RAISES or name == "pytest.fail" or name.startswith("pytest_check."):
        return True
    return last == "fail" and isinstance(func, ast.Attribute) and name.startswith("self.")


def _vacuous_call(call: ast.Call) -> bool:
    """``self.assertTrue(True)``, ``self.assertEqual(1, 1)``: an assert* of constants that
    always holds."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    args = call.args
    if not args or not all(isinstance(a, ast.Constant) for a in args):
        return False
    values = [a.value for a in args if isinstance(a, ast.Constant)]
    if name in ("assertTrue", "assert_", "assertIsNotNone"):
        return bool(values[0]) if name != "assertIsNotNone" else values[0] is not None
    if name in ("assertFalse", "assertIsNone"):
        return not values[0] if name == "assertFalse" else values[0] is None
    if name in ("assertEqual", "assertEquals", "assert_equal") and len(values) >= 2:
        return bool(values[0] == values[1])
    return False


def _catches_assertions(node: ast.expr | None, module: Module) -> bool:
    if node is None:
        return True  # a bare except
    if isinstance(node, ast.Tuple):
        return any(_catches_assertions(e, module) for e in node.elts)
    name = module.dotted(node) or ""
    return name.rsplit(".", 1)[-1] in _BROAD


def _reraises(body: list[ast.stmt], module: Module) -> bool:
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call) and is_assertion_call(node, module):
            return True
    return False


def _walk_body(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a block, not those of the functions and classes it defines."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, Definition | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def _some_items(node: ast.expr) -> bool:
    """An iterable written out with at least one item: ``[1, 2]``, ``"ab"``, ``range(3)``."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return bool(node.elts) and not any(isinstance(e, ast.Starred) for e in node.elts)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str | bytes) and bool(node.value)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and len(node.args) == 1
        and not node.keywords
    ):
        arg = node.args[0]
        return isinstance(arg, ast.Constant) and type(arg.value) is int and arg.value > 0
    return False


def _maybe_no_items(node: ast.expr) -> bool:
    """A loop's iterable that may be empty although written out: ``[]``, or items written out
    filtered by a condition (``[r for r in (ZERO,) if r.rate]``)."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return not node.elts
    if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
        return any(
            generator.ifs and isinstance(generator.iter, ast.List | ast.Tuple | ast.Set)
            for generator in node.generators
        ) or any(_maybe_no_items(generator.iter) for generator in node.generators)
    return False


def _same_test(test: ast.expr) -> str:
    return dumped(test)


def _bound_names(func: Function) -> set[str]:
    """The parameters of ``func`` and the names its body binds."""
    arguments = func.args
    bound = {
        a.arg
        for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        + [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    }
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
    return bound


def _has_assert(body: list[ast.stmt]) -> bool:
    return any(isinstance(node, ast.Assert) for stmt in body for node in ast.walk(stmt))


# -- one side of the change ---------------------------------------------------------------------


@dataclass
class PySide:
    """The test files of one side (the base, or now), read lazily."""

    scan: Scan
    read: Callable[[str], str | None]
    settings: Settings
    _modules: dict[str, Module | None] = field(default_factory=dict)
    _fixtures: dict[str, dict[str, Function]] = field(default_factory=dict)
    _scans: dict[int, AssertScan] = field(default_factory=dict)

    def module(self, path: str) -> Module | None:
        if path not in self._modules:
            self._modules[path] = parse(self.read(path), path, self.settings)
        return self._modules[path]

    def read_into(self, side: Side, module: Module, base_plain: set[str]) -> None:
        for qualname, (func, cls) in module.tests.items():
            side.add(
                Case(
                    module.path,
                    qualname,
                    func.name,
                    func.lineno,
                    partial(_read_body, module, func, self._is_project_module),
                    partial(self.why_nothing, module, func, cls),
                    checks=partial(self._checks, module, func, cls),
                    mocked=partial(_mocked, func),
                    params=partial(_params, module, func),
                    written=partial(_written, module, func),
                    facts=cache(
                        partial(_facts, module, func, partial(self._helper, module, cls=cls))
                    ),
                    statements=cache(partial(_statements, module, func)),
                    cases=cache(partial(_instances, module, func)),
                    size=cache(partial(_size, module, func)),
                    part=cache(partial(_part, module, func)),
                    expects=cache(partial(_expects, module, func)),
                    made=cache(partial(self._made, module, func, cls)),
                )
            )
        side.uncollected[module.path] = dict(module.uncollected)
        for qualname, node in _classes(module.tree):
            side.classes[(module.path, qualname)] = cache(
                partial(_class_uses, module, qualname, node, self._is_project_module)
            )
        side.marks.extend(MarkReader(module, base_plain, self._is_project_module).read())

    def _is_project_module(self, name: str) -> bool:
        root = self.scan.root
        return any(
            (root / where / name).is_dir() or (root / where / f"{name}.py").is_file()
            for where in (".", "src")
        )

    # does a test assert something?

    def _scan(self, module: Module, func: Function, cls: str | None) -> AssertScan:
        """The test's assertions as it would run, its helpers followed (one level)."""
        if id(func) not in self._scans:
            helped = AssertScan(module, lambda call: self._helper_asserts(module, call, cls))
            helped.function(func)
            self._scans[id(func)] = helped
        return self._scans[id(func)]

    def _checks(self, module: Module, func: Function, cls: str | None) -> list[tuple[int, str]]:
        """(line, "exact" | "weak") of each assertion the test's own body reaches, in order: not
        one after a return, nor in a nested function it never calls; and those of each helper
        of the tests it calls (one level), at the call's line: an exact assert moved into a
        helper and made weak there is weakened all the same."""
        checks = list(self._scan(module, func, cls).checks)
        for node in _walk_body(_body(func)):
            if isinstance(node, ast.Call):
                found = self._helper(module, node, cls)
                if found is not None and found[1] is not func:
                    helped = AssertScan(found[0], None)
                    helped.function(found[1])
                    checks += [(node.lineno, kind) for _, kind in helped.checks]
        return sorted(checks)

    def _made(
        self, module: Module, func: Function, cls: str | None, cases: bool
    ) -> tuple[Made, ...]:
        """:func:`_made`; with ``cases``, those of each helper of the tests it calls (one
        level) too, the call's arguments put in for the helper's parameters: a check moved
        into a helper the test calls (``check_difference(3, 1, 2)``) is still made."""
        counted = self._scan(module, func, cls).counted
        own = tuple(check for check in _made(module, func, cases) if check.line in counted)
        if not cases:
            return own
        helped: list[Made] = []
        # Red team 53: a helper called under `if False:`, after a return, with its failure
        # swallowed, or under a condition of the data makes no check of the test's: only a
        # call the test's run counts, and not one that only some runs make.
        conditional = {
            id(node)
            for stmt in _walk_body(_body(func))
            if isinstance(stmt, ast.If | ast.While | ast.Try | ast.Match | ast.IfExp)
            for node in ast.walk(stmt)
            if node is not getattr(stmt, "test", None)
        }
        for node in _walk_body(_body(func)):
            if (
                not isinstance(node, ast.Call)
                or node.lineno not in counted
                or id(node) in conditional
            ):
                continue
            found = self._helper(module, node, cls)
            if found is None or found[1] is func:
                continue
            given = _arguments(found[1], node, found[2])
            if given is not None:
                body = _normalized(found[0], found[1], given, approx=True, inline=True)
                scan = AssertScan(found[0], None)
                scan.function(found[1])
                helped += [
                    check
                    for check in _made_in(found[0], found[1], [body])
                    if check.line in scan.counted
                ]
            if len(helped) >= CHECKS:
                break
        return own + tuple(helped)

    def why_nothing(self, module: Module, func: Function, cls: str | None) -> str | None:
        tally = self._scan(module, func, cls).tally
        if tally.count:
            return None
        for name in self._fixture_names(module, func):
            fixture = self._fixture(module, name, cls)
            if fixture is not None and _direct(fixture[0], fixture[1]).count:
                return None
        if tally.swallowed:
            return tally.swallowed
        if tally.dead is not None:
            return f"it returns on line {tally.dead}, before its asserts"
        if tally.uncalled is not None:
            return f"its asserts are in {tally.uncalled}, which it never calls"
        if tally.vacuous is not None:
            return f"its assert on line {tally.vacuous} is always true"
        if all(isinstance(s, ast.Pass) or _is_ellipsis(s) for s in _body(func)):
            return "its body is empty"
        return "no assert, pytest.raises or assert* call"

    def _helper_asserts(self, module: Module, call: ast.Call, cls: str | None) -> bool | None:
        """Whether the helper ``call`` calls asserts (one level); None if it is no helper of
        the project's tests (then its name says: ``assert_*``, ``pytest.raises``)."""
        found = self._helper(module, call, cls)
        return None if found is None else _direct(found[0], found[1]).count > 0

    def _helper(self, module: Module, call: ast.Call, cls: str | None) -> Helper | None:
        """The helper of the project's tests ``call`` calls: a function of the test's module,
        a method of its class (``self.check``), or one imported from a test-support module."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in module.functions:
            helper = module.functions[func.id]
            dynamic, bound = _module_bindings(module)
            if helper.decorator_list or dynamic or bound[func.id] != 1:
                # What the name runs is not the body as written: a decorator's function, or
                # one bound again (red team 58: `@_quiet` over the asserting `def check`).
                return None
            return module, helper, False
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
            and cls is not None
        ):
            method = module.methods.get(cls, {}).get(func.attr)
            return None if method is None else (module, method, True)
        found = self._imported_helper(module, func)
        return None if found is None else (*found, False)

    def _imported_helper(self, module: Module, func: ast.expr) -> tuple[Module, Function] | None:
        """A helper imported from a test-support module (tests/, testing.py, conftest)."""
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in module.imports:
            return None  # a local name, a builtin: not an imported helper
        dotted = module.dotted(func)
        if not dotted or "." not in dotted:
            return None
        target, _, name = dotted.rpartition(".")
        for path in _module_paths(target, module.path):
            if not _is_support(path):
                continue
            other = self.module(path)
            if other is not None and name in other.functions:
                return other, other.functions[name]
        return None

    def _fixture_names(self, module: Module, func: Function) -> list[str]:
        names = [a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]]
        names = [n for n in names if n not in ("self", "cls")]
        for decorator in func.decorator_list:
            if isinstance(decorator, ast.Call) and (module.dotted(decorator.func) or "").endswith(
                "mark.usefixtures"
            ):
                names += [
                    a.value
                    for a in decorator.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)
                ]
        return names

    def _fixture(
        self, module: Module, name: str, cls: str | None
    ) -> tuple[Module, Function] | None:
        if cls is not None and name in module.methods.get(cls, {}):
            method = module.methods[cls][name]
            if name in module.fixtures:
                return module, method
        if name in module.fixtures:
            return module, module.fixtures[name]
        for conftest in reversed(_conftests_above([module.path])):
            other = self.module(conftest)
            if other is not None and name in other.fixtures:
                return other, other.fixtures[name]
        return None


def _direct(module: Module, func: Function) -> Tally:
    """A helper's or fixture's own assertions (one level: its helpers are not followed)."""
    return AssertScan(module, None).function(func)


def _is_ellipsis(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and stmt.value.value is Ellipsis
    )


def _classes(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.ClassDef]]:
    """Every class of a module, wherever it is defined (under an `if`, in a function), by its
    qualname (``Outer::Inner``)."""
    for child, within in walk_within(node, prefix, _class_prefix):
        if isinstance(child, ast.ClassDef):
            yield within + child.name, child


def _class_prefix(node: ast.AST, prefix: str) -> str:
    return f"{prefix}{node.name}::" if isinstance(node, ast.ClassDef) else prefix


def _class_uses(
    module: Module, qualname: str, cls: ast.ClassDef, project: Callable[[str], bool]
) -> frozenset[str]:
    """The names of the project's code a class's body uses outside its own tests (its
    attributes, ``setUp``, its helpers, its bases' arguments): what a test it inherits runs
    with (``encode = staticmethod(codecs.caesar)`` for a mixin's tests)."""
    own = {
        stmt.name
        for stmt in cls.body
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
        and f"{qualname}::{stmt.name}" in module.tests
    }
    rest = [
        stmt
        for stmt in cls.body
        if not (isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name in own)
    ]
    given = [*cls.bases, *cls.keywords, *rest]
    return frozenset(name for node in given for name in _uses(module, node, project))


def _uses(module: Module, func: ast.AST, project: Callable[[str], bool]) -> Iterator[str]:
    """The names of the project's code the test uses: imported from the project
    (``from pkg.calc import add``; ``calc.add`` after ``from pkg import calc``; each name of
    ``pkg.calc.add`` after ``import pkg.calc``: review 27, cachetools' tests)."""
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id in module.imports:
            target = module.imports[node.id]
            if target.startswith(".") or project(target.split(".")[0]):
                yield target.rsplit(".", 1)[-1]
        elif isinstance(node, ast.Attribute):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if not isinstance(root, ast.Name) or root.id not in module.imports:
                continue
            target = module.imports[root.id]
            if target.startswith(".") or project(target.split(".")[0]):
                yield node.attr


def _written(module: Module, func: Function) -> str:
    """The test's text, decorators included: whether the change edited it."""
    first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
    return "\n".join(module.lines[first - 1 : func.end_lineno or func.lineno])


def _read_body(module: Module, func: Function, project: Callable[[str], bool]) -> Body:
    return Body(
        body_key(func),
        tokens(unparsed(ast.Module(body=_body(func), type_ignores=[]))),
        frozenset(_uses(module, func, project)),
        tuple(_strings(func)),
    )


_OPERATORS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">"}
_OPERATORS |= {ast.GtE: ">=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_EQUAL_METHODS = {"assertEqual", "assertEquals", "assertAlmostEqual", "assert_equal"}


def _expects(module: Module, func: Function) -> tuple[tuple[str, str, str, int], ...]:
    """(subject, "== expected" as compared, as written, line) of each assert of the test that
    compares a call of the code, written out (no variable of the test's own), with a literal;
    for a parametrized test, for each case, its values put in."""
    bindings: list[dict[str, ast.expr]] = [{}]
    for argnames, cases in _parametrized(module, func):
        found = _bindings(module, argnames, cases)
        if found is None:
            return ()
        bindings = [{**a, **b} for a in bindings for b in found][:CASES]
    out: list[tuple[str, str, str, int]] = []
    for bound in bindings:
        for stmt in _normalized(module, func, bound, approx=True):
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Assert | ast.Call):
                    continue
                pair = _compared(node)
                if pair is not None:
                    subject, op, expected = pair
                    if _literal(expected) and _self_contained(subject):
                        written = f"{op} {_short(expected, 100)}"
                        number = ast.literal_eval(expected)
                        same = written
                        if type(number) is float and number.is_integer():
                            same = f"{op} {int(number)!r}"  # 3.0 expects what 3 does
                        elif _singleton(expected) and op in ("==", "is", "!=", "is not"):
                            # `== None` expects what `is None` does (unittest's assertEqual).
                            same = f"{'is' if op in ('==', 'is') else 'is not'} {number!r}"
                        out.append((_short(subject, 200), same, written, node.lineno))
    return tuple(out)


def _compared(node: ast.Assert | ast.Call) -> tuple[ast.expr, str, ast.expr] | None:
    """(subject, operator, expected) of ``assert subject == expected`` (either way round) or
    ``self.assertEqual(subject, expected)``."""
    if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
        test = node.test
        if len(test.ops) != 1 or type(test.ops[0]) not in _OPERATORS:
            return None
        op = _OPERATORS[type(test.ops[0])]
        left, right = test.left, test.comparators[0]
        if _literal(left) and not _literal(right) and op in ("==", "!="):
            left, right = right, left
        return left, op, right
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _EQUAL_METHODS
        and len(node.args) >= 2
    ):
        return node.args[0], "==", node.args[1]
    return None


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _self_contained(subject: ast.expr) -> bool:
    """A call of the code with what it is given written out: not a variable of the test's."""
    nodes = list(ast.walk(subject))
    return any(isinstance(n, ast.Call) for n in nodes) and not any(
        isinstance(n, ast.Name) and n.id == "_" for n in nodes
    )


CHECKS = 2000  # at most this many checks of one test, its cases' together, are read


def _made(module: Module, func: Function, cases: bool) -> tuple[Made, ...]:
    """Each check the test's own body makes (not in a function it defines), nested blocks
    included: each part of an assert's ``and`` apart (``assert x == 1 and y == 2`` split in
    two asserts checks as much), its ``pytest.raises`` and ``warns`` blocks, its assert*
    calls; normalised as a move, a rename of its variables or a reformat keeps them. With
    ``cases``, each of its parametrized cases' checks too, the case's values put in, and
    those of its loops over values written out, for each value: where a check folded into
    a case, or a loop, is made."""
    bindings: list[dict[str, ast.expr]] = [{}]
    decorators = _parametrized(module, func) if cases else []
    argnames = {n for names, _ in decorators for n in names or ()}
    if decorators and not argnames & _bound_in(_body(func)):  # an argname bound again: no case
        combined: list[dict[str, ast.expr]] = [{}]
        for listed, values in decorators:
            found = _bindings(module, listed, values)
            if found is None:
                combined = []
                break
            combined = [{**a, **b} for a in combined for b in found][:CASES]
        bindings += [bound for bound in combined if bound]
    bodies = [
        _normalized(module, func, bound, approx=True, inline=True, spread=True)
        for bound in bindings
    ]
    if cases:
        bodies += _loop_bodies(module, func)
    plain = _plain_checks(module, func)
    return tuple(
        dataclasses.replace(check, plain=frozenset(plain.get(check.line, ())))
        for check in _made_in(module, func, bodies)
    )


def _plain_checks(module: Module, func: Function) -> dict[int, set[str]]:
    """The checks of the test's own body by line, as it writes them (its variables not put
    in): each one's key, what it checks, and the comparison it makes however it is spelled
    (``self.assertEqual(a, b)`` makes ``assert a == b``'s, either way round)."""
    out: dict[int, set[str]] = {}
    body = [rewrite(stmt, _fold) for stmt in _normalized(module, func, {}, approx=True)]
    for node in _walk_body([stmt for stmt in body if isinstance(stmt, ast.stmt)]):
        for key, subject, _, checked, line in _checks_in(node, module):
            said = out.setdefault(line, set())
            said.add(key)
            if subject is not None:
                said.add(repr(subject))
            pair = None
            if isinstance(checked, ast.Compare):
                pair = _compared(ast.Assert(checked))
            elif isinstance(checked, ast.Call):
                pair = _compared(checked)
            if pair is not None:
                sides = [dumped(pair[0]), dumped(pair[2])]
                if pair[1] in ("==", "!="):
                    sides.sort()
                said.add(f"compare {pair[1]} " + " | ".join(sides))
    return out


def _made_in(module: Module, func: Function, bodies: Iterable[list[ast.stmt]]) -> tuple[Made, ...]:
    """The checks (:func:`_made`) of ``func``'s body normalised in each of these ways."""
    body_names: frozenset[str] | None = None
    out: list[Made] = []
    for body in bodies:
        folded = [rewrite(stmt, _fold) for stmt in body]
        for node in _walk_body([stmt for stmt in folded if isinstance(stmt, ast.stmt)]):
            for key, subject, written, checked, line in _checks_in(node, module):
                used = _names_in(checked)
                if "_" in used:  # it reads a variable of the test: what the test calls
                    if body_names is None:
                        body_names = frozenset(_names_in(ast.Module(_body(func), [])))
                    used |= body_names
                used.discard("_")
                calls = frozenset(_calls_in(checked))
                out.append(Made(key, subject, written, line, frozenset(used), calls))
                if len(out) >= CHECKS:
                    return tuple(sorted(out, key=lambda made: made.line))
    return tuple(sorted(out, key=lambda made: made.line))


def _loop_bodies(module: Module, func: Function) -> list[list[ast.stmt]]:
    """The body of each loop of the test over values written out (``for a in (3, 4):``, or
    ``[x for x in (3, 4)]``), once for each value, put in for the loop's name."""
    out: list[list[ast.stmt]] = []
    for loop in _walk_body(_body(func)):
        if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name):
            continue
        items = loop.iter
        if (
            isinstance(items, ast.ListComp | ast.GeneratorExp)
            and len(items.generators) == 1
            and not items.generators[0].ifs
            and isinstance(items.elt, ast.Name)
            and isinstance(items.generators[0].target, ast.Name)
            and items.elt.id == items.generators[0].target.id
        ):
            items = items.generators[0].iter
        if not isinstance(items, ast.List | ast.Tuple) or not all(
            _literal(item) for item in items.elts
        ):
            continue
        name = loop.target.id
        for item in items.elts[:CASES]:
            body = [_put(copied(stmt), name, item) for stmt in loop.body]
            statements = [stmt for stmt in body if isinstance(stmt, ast.stmt)]
            out.append(
                _normalized(
                    module, func, {}, approx=True, inline=True, spread=True, body=statements
                )
            )
        if len(out) >= CASES:
            break
    return out


def _fold(node: ast.AST) -> ast.AST:
    """``3 - 1`` as ``2``: a value put in for a name, then computed (numbers, small ones)."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add | ast.Sub | ast.Mult)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.right, ast.Constant)
    ):
        left, right = _small(node.left.value), _small(node.right.value)
        if left is not None and right is not None:
            if isinstance(node.op, ast.Add):
                return ast.Constant(left + right)
            if isinstance(node.op, ast.Sub):
                return ast.Constant(left - right)
            return ast.Constant(left * right)
    return node


def _small(number: object) -> int | float | None:
    """A number (no bool) that computing with cannot make huge."""
    if type(number) is int or type(number) is float:
        return number if abs(number) < 1e9 else None
    return None


def _calls_in(node: ast.AST) -> Iterator[str]:
    """The functions a check calls, by their own names, but the checking ones
    (``assertEqual``, ``approx``, ``isclose``)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name and not name.lower().startswith("assert") and name not in _CHECKING:
                yield name


_CHECKING = {"approx", "isclose", "isinstance", "raises", "warns"}


def _checks_in(
    node: ast.AST, module: Module
) -> Iterator[tuple[str, tuple[str, str] | None, str, ast.AST, int]]:
    """(key, subject, as written, the node it checks, its line) of each check ``node`` is: an
    assert's parts, a ``pytest.raises`` block (at its ``pytest.raises``), an assert* call
    (:class:`Made`)."""
    if isinstance(node, ast.Assert):
        parts = _conjuncts(node.test)
        for part in parts:
            if not any(isinstance(sub, ast.Name) for sub in ast.walk(part)):
                continue  # `assert True`, `assert 3 - 1 == 2`: checks nothing of the code
            written = _as_written(module, node if len(parts) == 1 else part)
            if len(parts) > 1:
                written = f"assert {written}"
            yield "assert " + _canonical(part), _subject(part), written, part, node.lineno
    elif isinstance(node, ast.With | ast.AsyncWith) and (
        raises := [
            item.context_expr
            for item in node.items
            if isinstance(item.context_expr, ast.Call)
            and module.dotted(item.context_expr.func) in _RAISES
        ]
    ):
        code = ast.Module(node.body, [])
        first = _as_written(module, node.body[0]) if node.body else ""
        more = " ..." if len(node.body) > 1 else ""
        items = ", ".join(_as_written(module, item.context_expr) for item in node.items)
        written = f"with {items}: {first}{more}"
        yield "with " + dumped(node), ("raises", dumped(code)), written, node, raises[0].lineno
    elif (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and is_assertion_call(node.value, module)
    ):
        call = node.value
        standing = standing_for(call, module)
        if standing is not None:  # the same check as the assert it stands for
            written = _as_written(module, node)
            for part in _conjuncts(standing):
                if any(isinstance(sub, ast.Name) for sub in ast.walk(part)):
                    yield "assert " + _canonical(part), _subject(part), written, part, call.lineno
            return
        subject: tuple[str, str] | None = None
        pair = _compared(call)
        if pair is not None:
            subject = _subject(ast.Compare(pair[0], [ast.Eq()], [pair[2]]))
        elif isinstance(call.func, ast.Attribute) and call.func.attr in _TRUTH and call.args:
            subject = _subject(call.args[0])
        yield "call " + dumped(call), subject, _as_written(module, node), call, call.lineno


# unittest's assert* that check a value true, false or None: what `assert x` checks.
_TRUTH = {"assertTrue", "assertFalse", "assertIsNone", "assertIsNotNone", "assert_"}


def _conjuncts(test: ast.expr) -> list[ast.expr]:
    """The parts of ``a and b and c``, each an assert of its own would check."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [part for value in test.values for part in _conjuncts(value)]
    return [test]


def _canonical(test: ast.expr) -> str:
    """The test as text, ``b == a`` as ``a == b``."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq | ast.NotEq | ast.Is | ast.IsNot)
    ):
        sides = sorted([dumped(test.left), dumped(test.comparators[0])])
        return f"{type(test.ops[0]).__name__}({sides[0]}, {sides[1]})"
    return dumped(test)


def _subject(test: ast.expr) -> tuple[str, str] | None:
    """What an assert's test checks, as :attr:`Made.subject`: ("compare", ``tax(30)``) for
    ``tax(30) == 3.5`` or ``3.5 < tax(30)``; ("truth", ``tax(30)``) for ``tax(30)``, ``not
    tax(30)`` or ``tax(30) is None``; None for a comparison of two computed values (``tax(30)
    == tax(30)`` checks nothing of it), or of a variable of the test's alone (``_``: any
    other check of one would keep it)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    kind = "truth"
    if (
        isinstance(test, ast.Call)
        and _plain_dotted(test.func) in ("isclose", "math.isclose")
        and len(test.args) == 2
    ):
        test = ast.Compare(test.args[0], [ast.Eq()], [test.args[1]])
    if isinstance(test, ast.Compare):
        if len(test.ops) != 1:
            return None
        left, right = test.left, test.comparators[0]
        if _expected(left):
            left, right = right, left
        if _expected(left) or not _expected(right):
            return None
        plain = isinstance(right, ast.Constant) and any(
            right.value is v for v in (True, False, None)
        )
        kind = "truth" if plain else "compare"
        test = left
    elif _literal(test):
        return None
    if isinstance(test, ast.Name) and test.id == "_":
        return None
    return kind, dumped(test)


def _expected(node: ast.expr) -> bool:
    """A value written out, or ``pytest.approx`` of one with a tolerance."""
    if (
        isinstance(node, ast.Call)
        and _plain_dotted(node.func) in ("pytest.approx", "approx")
        and node.args
    ):
        node = node.args[0]
    return _literal(node)


def _names_in(node: ast.AST) -> set[str]:
    """The names a check uses: variables, functions, attributes and methods."""
    names: set[str] = set()
    for sub in _walk_body([node]) if isinstance(node, ast.stmt) else ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            names.add(sub.attr)
    return names


def _as_written(module: Module, node: ast.AST) -> str:
    """The source of ``node`` as the test's file writes it, on one line (its code unparsed
    where its place is not known); at most 200 characters."""
    first: int | None = getattr(node, "lineno", None)
    last: int | None = getattr(node, "end_lineno", None)
    start: int | None = getattr(node, "col_offset", None)
    end: int | None = getattr(node, "end_col_offset", None)
    text = ""
    if (
        first is not None
        and last is not None
        and start is not None
        and end is not None
        and 0 < first <= last <= len(module.lines)
    ):
        lines = [line.encode() for line in module.lines[first - 1 : last]]
        lines[-1] = lines[-1][:end]
        lines[0] = lines[0][start:]
        text = " ".join(b" ".join(lines).decode(errors="replace").split())
    if not text:
        text = " ".join(unparsed(node).split())
    return text if len(text) <= 200 else text[:197] + "..."


def _statements(module: Module, func: Function) -> tuple[str, ...]:
    """The test's statements as a fold into a parametrized test keeps them (see
    :func:`_instances`); none for a test that is itself parametrized."""
    if _parametrized(module, func):
        return ()
    body = _normalized(module, func, {}, approx=True, inline=True)
    return tuple(dumped(stmt) for stmt in body)


def _size(module: Module, func: Function) -> int:
    """How many statements the test's body has as written (no docstring); none for a test
    that is itself parametrized."""
    return 0 if _parametrized(module, func) else len(_body(func))


def _part(module: Module, func: Function, start: int, end: int) -> tuple[str, ...] | None:
    """The test's statements from ``start`` to ``end`` as :func:`_statements` reads a test of
    those alone; None where one of them reads a variable that the statements before
    ``start`` bound and these did not bind again first (run apart, it would read another
    value)."""
    body = _body(func)
    earlier = _bound_in(body[:start])
    bound: set[str] = set()
    for stmt in body[start:end]:
        read = {
            n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        if read & (earlier - bound):
            return None
        bound |= _bound_in([stmt])
    part = _normalized(module, func, {}, approx=True, inline=True, body=body[start:end])
    return tuple(dumped(stmt) for stmt in part)


CASES = 256  # at most this many cases of one parametrized test are read


def _instances(module: Module, func: Function) -> tuple[tuple[tuple[str, bool], ...], ...]:
    """Each case a test runs (a test that is not parametrized: one): its statements with the
    case's values put in for the argnames (``pytest.approx(x)`` as ``x``, the names it binds
    all ``_``), each with whether it is plain (cannot end the test: an assignment, an assert, a
    call that is no skip). Only literal cases count, and none with marks
    (``pytest.param(..., marks=...)``); an indirect parametrization is none."""
    decorators = _parametrized(module, func)
    names = {n for argnames, _ in decorators for n in argnames or ()}
    if any(
        isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in names
        for stmt in func.body
        for node in ast.walk(stmt)
    ):
        return ()  # the body binds an argname again: a case's value is not what runs (red team 41)
    combined: list[dict[str, ast.expr]] = [{}]
    for argnames, cases in decorators:
        bindings = _bindings(module, argnames, cases)
        if bindings is None:
            return ()
        combined = [{**a, **b} for a in combined for b in bindings][:CASES]
    out = []
    statements = _helpers_inlined(module, _body(func))
    for bound in combined:
        body = _normalized(module, func, bound, approx=True, inline=True, body=statements)
        out.append(tuple((dumped(stmt), _plain(stmt, module)) for stmt in body))
    return tuple(out)


def _helpers_inlined(module: Module, body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` with each statement that only calls a helper of the module put in as the
    helper's statements, its parameters replaced by the call's arguments: the same checks, run
    the same way (review 33: humanize split a parametrized test in two around a helper that
    asserts, and the cases that moved were in no test). Only a plain helper
    (:func:`_plain_helper`) called with as many plain arguments (names, literals) as it takes."""
    out: list[ast.stmt] = []
    for stmt in body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        helper = _plain_helper(module, call) if isinstance(call, ast.Call) else None
        if helper is None or not isinstance(call, ast.Call):
            out.append(stmt)
            continue
        params = [a.arg for a in (*helper.args.posonlyargs, *helper.args.args)]
        values = dict(zip(params, call.args, strict=True))

        def put_in(node: ast.AST, values: dict[str, ast.expr] = values) -> ast.AST:
            if isinstance(node, ast.Name) and node.id in values:
                return copied(values[node.id])
            return node

        for inner in _body(helper):
            done = rewrite(copied(inner), put_in)
            out.append(done if isinstance(done, ast.stmt) else inner)
    return out


@lru_cache(maxsize=64)
def _module_bindings(module: Module) -> tuple[bool, Counter[str]]:
    """Whether the module binds names of its own where its text does not show which
    (``globals()`` or ``vars()`` written to, ``globals`` handed on, a frame's ``f_globals``,
    ``setattr`` on a module object, a function's ``__code__`` or defaults assigned, ``exec``),
    and how many times it binds each name it can be read for, anywhere (a ``def``, an
    assignment, an import). Reading ``obj.__dict__`` or ``setattr`` on another object is none."""
    dynamic = False
    bound: Counter[str] = Counter()
    called = {id(node.func) for node in ast.walk(module.tree) if isinstance(node, ast.Call)}
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.Name)
            and node.id in ("globals", "vars")
            and isinstance(node.ctx, ast.Load)
            and id(node) not in called
        ) or (
            isinstance(node, ast.Attribute)
            and (
                node.attr == "f_globals"
                or (node.attr in CODE_ATTRIBUTES and not isinstance(node.ctx, ast.Load))
            )
        ):
            dynamic = True  # its namespace handed on, a frame's globals, a function's code
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound[node.name] += 1
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound[node.id] += 1
        elif isinstance(node, ast.alias):
            bound[(node.asname or node.name).split(".")[0]] += 1
        elif isinstance(node, ast.Call):
            function = node.func.id if isinstance(node.func, ast.Name) else None
            if (
                function in ("exec", "eval")
                or (
                    function in ("setattr", "delattr")
                    and node.args
                    and (module_object(node.args[0]) or _code_attribute(node.args[1:2]))
                )
                or (
                    isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("update", "setdefault", "__setitem__", "pop")
                    and own_namespace(node.func.value)
                )
            ):
                dynamic = True
        elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            dynamic = dynamic or own_namespace(node.value)
    return dynamic, bound


def _code_attribute(args: list[ast.expr]) -> bool:
    return bool(args) and isinstance(args[0], ast.Constant) and args[0].value in CODE_ATTRIBUTES


# What a helper put in a test's place may not hold: it would not run the same there.
_NOT_INLINED = (
    ast.Yield,
    ast.YieldFrom,
    ast.Global,
    ast.Nonlocal,
    ast.Lambda,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def _plain_helper(module: Module, call: ast.Call) -> Function | None:
    """The module-level function ``call`` calls, where putting its statements in its place
    runs the same: not a test or a fixture, undecorated, positional parameters only, as many as
    the call's plain arguments (names, literals); a body that binds none of them again, returns
    no value, and holds no ``yield``, ``global``, ``nonlocal``, lambda, function or class."""
    if not isinstance(call.func, ast.Name) or call.keywords:
        return None
    name = call.func.id
    helper = module.functions.get(name)
    if helper is None or name in module.fixtures or name in module.tests:
        return None
    dynamic, bound = _module_bindings(module)
    if dynamic or bound[name] != 1:
        # The name may mean something else when the test runs (red team 57: `globals()
        # ["check"] = print` after the asserting `def check`): not read in its place.
        return None
    args = helper.args
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    if (
        isinstance(helper, ast.AsyncFunctionDef)
        or args.vararg
        or args.kwarg
        or args.kwonlyargs
        or helper.decorator_list
        or len(params) != len(call.args)
        or not all(isinstance(a, ast.Name | ast.Constant) for a in call.args)
    ):
        return None
    for node in ast.walk(ast.Module(body=_body(helper), type_ignores=[])):
        if (
            isinstance(node, _NOT_INLINED)
            or (isinstance(node, ast.Return) and node.value is not None)
            or (
                isinstance(node, ast.Name)
                and node.id in params
                and not isinstance(node.ctx, ast.Load)
            )
        ):
            return None
    return helper


def _bindings(
    module: Module, argnames: list[str] | None, cases: ast.expr
) -> list[dict[str, ast.expr]] | None:
    """Each case of one parametrize: argname -> its value; None when they cannot be read."""
    if argnames is None or not isinstance(cases, ast.List | ast.Tuple):
        return None
    out = []
    for element in cases.elts:
        if isinstance(element, ast.Starred):
            return None
        values: list[ast.expr] = [element]
        if isinstance(element, ast.Call) and module.dotted(element.func) == "pytest.param":
            if any(k.arg == "marks" for k in element.keywords):
                continue  # skipped, xfailed or otherwise marked: it may not run as written
            values = list(element.args)
            if len(argnames) == 1 and len(values) == 1:
                out.append({argnames[0]: values[0]})
                continue
        elif len(argnames) == 1:
            out.append({argnames[0]: element})
            continue
        elif isinstance(element, ast.Tuple | ast.List):
            values = list(element.elts)
        if len(values) != len(argnames) or any(isinstance(v, ast.Starred) for v in values):
            return None
        out.append(dict(zip(argnames, values, strict=True)))
    return out


_ENDS = {"pytest.skip", "pytest.xfail", "pytest.fail", "pytest.exit", "sys.exit", "os._exit"}


def _plain(stmt: ast.stmt, module: Module) -> bool:
    """A statement that cannot end the test early: not a return, raise, branch, loop, with or
    try (whose effect depends), nor a skip."""
    if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Assert):
        return True
    if isinstance(stmt, ast.Expr):
        return not any(
            isinstance(node, ast.Call) and (module.dotted(node.func) or "") in _ENDS
            for node in ast.walk(stmt)
        )
    return False


# A helper of the tests a call reaches: its module, its function, whether it is a method.
Helper = tuple[Module, Function, bool]


def _facts(
    module: Module,
    func: Function,
    helper: Callable[[ast.Call], Helper | None] | None = None,
    bound: dict[str, ast.expr] | None = None,
) -> tuple[str, ...]:
    """What the test checks, as a rename, a move or a reformat keeps it: each call it makes
    with its arguments (``add(1, 2)``: what it is called on aside, ``c.add`` and ``calc.add``
    are one), each value it writes outside a call (``== 3``), its parametrized cases' values.
    The names it binds itself are one placeholder (a variable renamed is the same test), and
    ``pytest.approx(x)`` is ``x``. With ``helper``, the facts of each helper of the tests it
    calls (one level), the call's arguments put in for the helper's parameters: a test whose
    asserts moved into a helper it calls (``check_difference(3, 1, 2)`` asserting ``sub(a,
    b) == expected``) still checks ``sub(3, 1)`` against 2; a helper it never calls checks
    nothing for it."""
    found: list[str] = []
    calls = 0
    helped: list[tuple[ast.Call, Helper]] = []
    for stmt in _normalized(module, func, bound or {}, approx=True):
        inside: set[int] = set()
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                arguments = [*node.args, *node.keywords]
                inside.update(id(sub) for arg in arguments for sub in ast.walk(arg))
                if calls < FACTS:
                    calls += 1
                    found.append("call " + _expected_error(node))
                    reached = helper(node) if helper is not None else None
                    if reached is not None and reached[1] is not func:
                        helped.append((node, reached))
            elif isinstance(node, ast.Constant) and id(node) not in inside:
                found.append("value " + repr(node.value))
    for _, cases in _parametrized(module, func):
        for node in ast.walk(cases):
            if isinstance(node, ast.Constant):
                found.append("value " + repr(node.value))
    if bound is None:
        by_value, written = _calls_by_value(module, func)
        found.extend(by_value[: max(0, FACTS - calls)])
        # A loop's values are checked as the calls it makes with them, not apart: a test that
        # makes the same calls with other values, or fewer, keeps less of it.
        said = Counter(written)
        kept: list[str] = []
        for fact in found:
            if said[fact] > 0:
                said[fact] -= 1
            else:
                kept.append(fact)
        found = kept
    for call, (other, target, method) in helped:
        given = _arguments(target, call, method)
        if given is not None:
            found.extend(_facts(other, target, None, given))
    return tuple(found)


def _arguments(func: Function, call: ast.Call, method: bool) -> dict[str, ast.expr] | None:
    """The parameters of ``func`` bound to what ``call`` gives (defaults for the rest); None
    when that cannot be read (``*args``, ``**kwargs`` given or taken)."""
    spec = func.args
    if (
        any(isinstance(a, ast.Starred) for a in call.args)
        or any(k.arg is None for k in call.keywords)
        or spec.vararg is not None
        or spec.kwarg is not None
    ):
        return None
    positional = [p.arg for p in [*spec.posonlyargs, *spec.args]]
    with_default = positional[len(positional) - len(spec.defaults) :]
    defaults: dict[str, ast.expr] = dict(zip(with_default, spec.defaults, strict=True))
    defaults.update(
        (p.arg, d) for p, d in zip(spec.kwonlyargs, spec.kw_defaults, strict=True) if d is not None
    )
    names = positional[1:] if method else positional
    if len(call.args) > len(names):
        return None
    given = {**defaults, **dict(zip(names, call.args, strict=False))}  # fewer: defaults
    given.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    return given


def _calls_by_value(module: Module, func: Function) -> tuple[list[str], list[str]]:
    """The calls the test makes with each value a parametrized case or a loop over values
    written out gives them: ``case memoize(None)`` and ``case memoize(42)`` for
    ``memoize(cache)`` under ``@pytest.mark.parametrize("cache", [None, 42])``, as under ``for
    cache in (None, 42):``. What a test checks, however it goes over its values: a unittest
    loop made a parametrized test, renamed, keeps these (review 35); a test of other calls
    with the same values does not. A case, not a call of its own: a test that calls
    ``tax(10)`` once is not one whose cases include 10 (a fold into it is judged as a fold:
    testfiles._unfolded). And the values of such loops, as facts of their own (``value
    42``): those calls say them."""
    body = _body(func)
    local = _bound_in(body)
    found: list[str] = []
    written: list[str] = []

    def put(where: list[ast.stmt], cases: list[dict[str, ast.expr]]) -> bool:
        names = set(cases[0]) if cases else set()
        normal = _Normal(module, local - names, {}, approx=True)
        any_call = False
        for node in _walk_body(where):
            if not isinstance(node, ast.Call) or not any(
                isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)
            ):
                continue
            any_call = True
            for case in cases:
                given: ast.AST = copied(node)
                for name, value in case.items():
                    given = _put(given, name, value)
                called = normal.visit(given)
                if isinstance(called, ast.Call) and len(found) < FACTS:
                    found.append("case " + _expected_error(called))
        return any_call

    parametrized = _parametrized(module, func)
    argnames = {n for names, _ in parametrized for n in names or ()}
    combined: list[dict[str, ast.expr]] | None = [{}]
    for names, cases in parametrized:
        bindings = _bindings(module, names, cases)
        if bindings is None or combined is None:
            combined = None
            continue
        combined = [{**a, **b} for a in combined for b in bindings][:CASES]
    if combined and argnames and not argnames & local:  # an argname bound again: not the case
        put(body, combined)
    for loop in _walk_body(body):
        if not (
            isinstance(loop, ast.For)
            and isinstance(loop.target, ast.Name)
            and isinstance(loop.iter, ast.List | ast.Tuple)
            and 0 < len(loop.iter.elts) <= CASES
            and all(_literal(item) for item in loop.iter.elts)
        ):
            continue
        name = loop.target.id
        if any(
            isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
            for stmt in loop.body
            for n in ast.walk(stmt)
        ):
            continue  # the loop's body binds it again
        if put(loop.body, [{name: item} for item in loop.iter.elts]):
            written.extend(
                "value " + repr(node.value)
                for node in ast.walk(loop.iter)
                if isinstance(node, ast.Constant)
            )
    return found, written


# unittest's expected exceptions and warnings, as pytest's: ``self.assertRaisesRegex(E, "x")``
# checks what ``pytest.raises(E, match="x")`` does.
_EXPECTED = {
    "assertRaises": ("raises", 1),
    "assertRaisesRegex": ("raises", 2),
    "assertRaisesRegexp": ("raises", 2),
    "assertWarns": ("warns", 1),
    "assertWarnsRegex": ("warns", 2),
}


def _expected_error(call: ast.Call) -> str:
    """:func:`_called`, a unittest context manager that expects an exception or a warning
    written as pytest's (``raises(TypeError, match='callable')``)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    expected = _EXPECTED.get(name)
    if expected is None or len(call.args) != expected[1] or call.keywords:
        return _called(call)
    pytest_name, size = expected
    keywords = [ast.keyword("match", call.args[1])] if size == 2 else []
    return _called(ast.Call(ast.Name(pytest_name, ast.Load()), call.args[:1], keywords))


def _called(call: ast.Call) -> str:
    """``add(1, 2)`` for ``calc.add(1, 2)``: the function's own name and the arguments."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else _short(func, 100)
    return _short(ast.Call(ast.Name(name, ast.Load()), call.args, call.keywords), 400)


def _parametrized(module: Module, func: Function) -> list[tuple[list[str] | None, ast.expr]]:
    """(argnames, argvalues as written) of each ``@pytest.mark.parametrize`` of the test; the
    argnames are None when they are not a literal (or the parametrization is indirect: the
    values go to fixtures)."""
    found: list[tuple[list[str] | None, ast.expr]] = []
    arguments = func.args
    taken = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    for decorator in func.decorator_list:
        node = module.alias(decorator)
        if not isinstance(node, ast.Call) or module.dotted(node.func) != "pytest.mark.parametrize":
            continue
        kwargs = {k.arg: k.value for k in node.keywords if k.arg}
        names = node.args[0] if node.args else kwargs.get("argnames")
        cases = node.args[1] if len(node.args) > 1 else kwargs.get("argvalues")
        if cases is None:
            continue
        argnames = None if names is None else value(names, module)
        if isinstance(argnames, str):
            argnames = argnames.split(",")
        # `**{"indirect": [...]}` (red team 41) or a third argument: what goes to fixtures is
        # not readable, so no case is known.
        unread = any(k.arg is None for k in node.keywords) or len(node.args) > 2
        listed = (
            [str(n).strip() for n in argnames]
            if isinstance(argnames, list | tuple) and "indirect" not in kwargs and not unread
            else None
        )
        if listed is not None and set(listed) - taken:
            listed = None  # an argname the function does not take reads the module's name
        found.append((listed, module.alias(cases)))
    return found


def _bound_in(body: list[ast.stmt]) -> set[str]:
    """The names the statements bind themselves: variables, loop targets, nested functions
    and classes, caught exceptions."""
    local: set[str] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                local.add(node.id)
            elif isinstance(node, Definition | ast.ExceptHandler) and node.name is not None:
                local.add(node.name)
    return local


def _normalized(
    module: Module,
    func: Function,
    bound: dict[str, ast.expr],
    approx: bool,
    inline: bool = False,
    body: list[ast.stmt] | None = None,
    spread: bool = False,
) -> list[ast.stmt]:
    """The test's body (a copy) as a rename keeps it: the names it binds itself (variables,
    loop targets, nested functions) all ``_``; the names in ``bound`` replaced by the values
    they are bound to (a parametrized case); with ``approx``, ``pytest.approx(x)`` is ``x``;
    with ``inline``, its variables put in where they are used (:func:`_inlined`; with
    ``spread``, wherever they are). Given ``body``, those statements of the test read as its
    whole body."""
    body = [copied(stmt) for stmt in (_body(func) if body is None else body)]
    if inline:
        body = _inlined(body, set(bound), spread)
    normal = _Normal(module, _bound_in(body) - set(bound), bound, approx)
    # A statement stays one: only names and calls are replaced.
    return [done for done in map(normal.visit, body) if isinstance(done, ast.stmt)]


def _inlined(body: list[ast.stmt], bound: set[str], spread: bool = False) -> list[ast.stmt]:
    """``body`` with its variables put in where they are used, as a fold into a parametrized
    test writes them (``total = add(1, 2)`` then ``assert total == 3`` is ``assert add(1, 2) ==
    3``; ``amount = 0`` then ``assert tax(amount) == 0`` is ``assert tax(0) == 0``). Only a name
    bound once, by a plain assignment of the body's own, whose value's names are bound at most
    once: a literal is put in wherever it is used after; any other value only in the statement
    right after it, used there once (nothing runs between, nothing runs twice). With
    ``spread``, any value wherever it is used after: what each check checks, however the
    test keeps what it computed (``result = tax(0)`` read by two asserts), not what runs."""
    stores: Counter[str] = Counter(
        node.id
        for stmt in body
        for node in ast.walk(stmt)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    )
    out = list(body)
    index = 0
    while index < len(out):
        stmt = out[index]
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            index += 1
            continue
        name, value = stmt.targets[0].id, stmt.value
        names = [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
        later = [_loads(s, name) for s in out[index + 1 :]]
        literal = _literal(value)
        if (
            stores[name] != 1
            or name in bound
            or name in names
            or any(stores[n] > 1 for n in names)
            or any(_loads(s, name) for s in out[:index])
            or not any(later)
            or (not literal and not spread and (later[0] != 1 or any(later[1:])))
        ):
            index += 1
            continue
        put = (_put(s, name, value) for s in out[index + 1 :])
        out = [*out[:index], *(s for s in put if isinstance(s, ast.stmt))]
    return out


def _loads(node: ast.AST, name: str) -> int:
    return sum(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in ast.walk(node)
    )


def _put(tree: ast.AST, name: str, value: ast.expr) -> ast.AST:
    """The tree with a name's uses replaced by (copies of) its value."""

    def change(node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            return copied(value)
        return node

    return rewrite(tree, change)


class _Normal:
    """A test's code written one way: its own variables as ``_``, the bound ones as their
    values, ``pytest.approx(x)`` as ``x``."""

    def __init__(
        self, module: Module, local: set[str], bound: dict[str, ast.expr], approx: bool
    ) -> None:
        self.module = module
        self.local = local
        self.bound = bound
        self.approx = approx

    def visit(self, tree: ast.AST) -> ast.AST:
        approx = {
            id(node)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and self.approx
            and self.module.dotted(node.func) == "pytest.approx"
            and len(node.args) == 1
            and not node.keywords
        }
        return rewrite(tree, lambda node: self._normal(node, approx))

    def _normal(self, node: ast.AST, approx: set[int]) -> ast.AST:
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id in self.bound:
                return copied(self.bound[node.id])
            if node.id in self.local:
                return ast.Name("_", node.ctx)
        if isinstance(node, ast.Call) and id(node) in approx:
            return node.args[0]
        return node


def _strings(func: Function) -> Iterator[str]:
    for node in ast.walk(func):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def _module_paths(dotted: str, importer: str) -> list[str]:
    """Where the module ``dotted`` (as imported from ``importer``) may live in the project."""
    here = PurePosixPath(importer).parent
    if dotted.startswith("."):
        level = len(dotted) - len(dotted.lstrip("."))
        base = here
        for _ in range(level - 1):
            base = base.parent
        rest = dotted.lstrip(".").replace(".", "/")
        stem = (base / rest).as_posix() if rest else base.as_posix()
        stems = [stem]
    else:
        rest = dotted.replace(".", "/")
        stems = [(here / rest).as_posix(), rest, f"src/{rest}"]
    out: list[str] = []
    for stem in stems:
        stem = stem.removeprefix("./")
        out += [f"{stem}.py", f"{stem}/__init__.py"]
    return out


def _is_support(path: str) -> bool:
    pure = PurePosixPath(path)
    name = pure.name
    return (
        bool(SUPPORT_DIRS & set(pure.parent.parts))
        or name in ("conftest.py", "testing.py")
        or name.startswith("test")
        or name.endswith("_test.py")
    )


# -- what the change deletes from the code ------------------------------------------------------


def removed_code(scan: Scan, which_base: TestFiles, which_now: TestFiles) -> CodeRemoved:
    """What the change deletes from Python code that is not a test."""
    paths = [
        p
        for p in scan.touched
        if which_now.is_python_code(p) and which_base.is_python_code(scan.renamed_from.get(p, p))
    ]
    old = {p: scan.renamed_from.get(p, p) for p in paths if scan.touched[p] != "added"}
    prefetch(scan, old.values())
    texts = [
        (
            scan.sources.at_base(old[p]) if p in old else None,
            scan.sources.now(p) if scan.touched[p] != "deleted" else None,
        )
        for p in paths
    ]
    return CodeRemoved.of(texts, _defined, _changed_code, _bound)


def _changed_code(texts: list[tuple[str | None, str | None]]) -> frozenset[str]:
    """The names of the code whose definition the change changes, adds or deletes, its
    docstrings aside: functions, classes and methods, the names a module binds at its top
    (``RATE = 0.1``, its imports), and those its other top-level code names when that code
    changes; and, over and over, those of the code of these files that uses one of them (``tax``
    reading ``RATE``): what of the code a test's check calls that the change changes."""
    changed: set[str] = set()
    uses: list[tuple[str, set[str]]] = []
    for old, new in texts:
        before, after = _definitions(old), _definitions(new)
        for name in before.keys() | after.keys():
            if before.get(name, ("", set()))[0] != after.get(name, ("", set()))[0]:
                changed.add(name)
        uses += [(name, used) for name, (_, used) in after.items()]
    grew = True
    while grew:
        grew = False
        for name, used in uses:
            if name not in changed and used & changed:
                changed.add(name)
                grew = True
    return frozenset(changed)


def _definitions(text: str | None) -> dict[str, tuple[str, set[str]]]:
    """name -> (its definitions as text, docstrings aside; the names they use) for every
    function, class and method of a module, and every name its top-level code binds (its
    other top-level code under each name it reads). A module that does not parse defines
    nothing: all of the other side's names are changed."""
    if text is None:
        return {}
    try:
        tree = syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    found: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, Definition):
            found.setdefault(node.name, []).append(node)
    for index, stmt in enumerate(tree.body):
        if isinstance(stmt, Definition):
            continue
        if index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the module's docstring
        bound = _bound_in([stmt]) if isinstance(stmt, ast.Assign | ast.AnnAssign) else set()
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            bound = {(a.asname or a.name).split(".")[0] for a in stmt.names}
        if not bound:
            # Other top-level code changes what it names (`tax = cached(tax)`, `if PY2:`),
            # not every name of the module; a statement that names nothing (`...`) changes
            # nothing (red team 53: a `...` appended made every function "changed").
            bound = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        for name in bound:
            found.setdefault(name, []).append(stmt)
    out: dict[str, tuple[str, set[str]]] = {}
    for name, nodes in found.items():
        texts = sorted(dumped(_undocumented(node)) for node in nodes)
        used = {
            n.id if isinstance(n, ast.Name) else n.attr
            for node in nodes
            for n in ast.walk(node)
            if isinstance(n, ast.Name | ast.Attribute)
        }
        out[name] = ("\n".join(texts), used - {name})
    return out


def _undocumented(node: ast.AST) -> ast.AST:
    """A function or class without its docstring."""
    if not isinstance(node, Definition):
        return node
    body = node.body
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        node = copied(node)
        node.body = node.body[1:] or [ast.Pass()]
    return node


def _bound(text: str | None) -> set[str]:
    """Every name a module's own scope has in any form: assigned, imported, defined (under an
    ``if`` too), used, bound by a function's ``global``; with what its ``__getattr__`` serves.
    A test deleted with a name that is still here was not deleted with a feature."""
    if text is None:
        return set()
    try:
        tree = syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names = _defined(text)
    names.update(n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names)
    # The module's own scope: not a function's locals or parameters, nor a class's methods
    # (review 32: semver's `def match` method and a local `match` kept a deleted `match()`).
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.partition(".")[0])
        stack.extend(ast.iter_child_nodes(node))
    return names


def _defined(text: str | None) -> set[str]:
    """The names a module's code defines at its top: its functions and classes, and the
    attributes its ``__getattr__`` (PEP 562) serves (review 30: marshmallow's deprecated
    ``__version__``). Not a constant: one is inlined in a moment, and a failing test that
    reads one would go as a feature deleted with it."""
    if text is None:
        return set()
    try:
        tree = syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    names: set[str] = set()
    dicts: dict[str, set[str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(stmt.value, ast.Dict):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:  # a table `__getattr__` may serve names from
                if isinstance(target, ast.Name):
                    dicts[target.id] = _strings_of(stmt.value.keys)
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == "__getattr__":
            names |= _served(stmt, dicts)
    return names


def _served(func: ast.FunctionDef | ast.AsyncFunctionDef, dicts: dict[str, set[str]]) -> set[str]:
    """The attribute names a module's ``__getattr__`` serves: the strings it compares its
    parameter with (``name == "x"``, ``name in ("x", "y")``, ``case "x":``), and the keys of a
    dict of the module's that it looks the name up in (``_MOVED[name]``, ``_MOVED.get(name)``,
    ``name in _MOVED``)."""
    params = [*func.args.posonlyargs, *func.args.args]
    if not params:
        return set()
    param = params[0].arg

    def named(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Name) and node.id == param

    served: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(named(side) for side in sides):
                for side in sides:
                    if isinstance(side, ast.Name) and side.id in dicts:
                        served |= dicts[side.id]
                    elif isinstance(side, ast.Tuple | ast.List | ast.Set):
                        served |= _strings_of(side.elts)
                    else:
                        served |= _strings_of([side])
        elif isinstance(node, ast.Match) and named(node.subject):
            for case in node.cases:
                served |= {
                    n.value.value
                    for n in ast.walk(case.pattern)
                    if isinstance(n, ast.MatchValue)
                    and isinstance(n.value, ast.Constant)
                    and isinstance(n.value.value, str)
                }
        elif isinstance(node, ast.Subscript) and named(node.slice):
            if isinstance(node.value, ast.Name) and node.value.id in dicts:
                served |= dicts[node.value.id]
        elif isinstance(node, ast.Call) and any(named(arg) for arg in node.args[:1]):
            func_node = node.func
            if (
                isinstance(func_node, ast.Attribute)
                and func_node.attr == "get"
                and isinstance(func_node.value, ast.Name)
                and func_node.value.id in dicts
            ):
                served |= dicts[func_node.value.id]
    return served


def _strings_of(nodes: Iterable[ast.AST | None]) -> set[str]:
    return {
        node.value
        for node in nodes
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
