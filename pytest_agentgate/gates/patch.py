"""Patch coverage: of the lines a change adds or modifies, the share the tests ran.

Counted as diff-cover counts it, so the two give the same figure on the same change and report:

- the changed lines are the ``+`` lines of ``git diff -U0`` from the base to the working tree
  (modified lines are new lines; deleted lines are nothing), every line of an untracked file;
- a changed line counts when the coverage report measures it (an executable line: a statement
  for coverage.py, a ``<line>`` for Cobertura, a ``DA`` line for lcov, with diff-cover's extra
  lcov lines, see ``CoverageDetail.implied_lines``); it is covered when it ran;
- a changed file the report does not know adds nothing to either count. Those that are code
  (Python, JavaScript, TypeScript) and not tests are listed in a note, since a module no test
  imports is absent from a report made without ``source`` / ``--cov=PACKAGE``. One exception,
  where agentgate counts what diff-cover does not: a Python file in a folder with no
  ``__init__.py`` inside a folder the report measures files of (a namespace folder of the
  package, which coverage.py leaves out of its report when no test imports it) counts its
  changed statements as run by no test (:func:`add_unreported`).

This module is pure: the collector gives it the parsed report and the change (and, for
:func:`imported_unmeasured`, the text of the measured files it names).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_agentgate.gates.changed import ChangedFiles, NoBase, is_code, is_test_file
from pytest_agentgate.reports._io import display_path
from pytest_agentgate.reports.model import CoverageReport, FileCoverage, Ratio

NO_LINE_DATA_HINT = (
    "write a report with line numbers: lcov or Cobertura (istanbul/nyc/c8/jest/vitest: add the "
    "`lcov` or `cobertura` reporter; coverage.py: `coverage json`, `coverage xml` or the data "
    "file), or set `patch: null`"
)


@dataclass
class PatchFile:
    """One changed file the report measures: its uncovered changed lines."""

    path: str  # relative to the project root
    measured: int
    covered: int
    uncovered: list[int] = field(default_factory=list)


@dataclass
class PatchCoverage:
    """What the tests covered of the change, or why that is not known.

    ``ratio`` is None when not measured; ``no_base`` then says the reason is that there is no
    change to look at (no repository, no base, a door that passed none), ``why`` says it in
    words and ``how`` says what would measure it.
    """

    base: str | None = None
    ratio: Ratio | None = None
    files: list[PatchFile] = field(default_factory=list)
    # Changed code files (not tests) the report does not measure: (path, changed lines).
    unmeasured: list[tuple[str, int]] = field(default_factory=list)
    # Of those, each one a measured file of the change imports: (path, the importer). Code
    # moved out of what coverage measures, and called from it, escapes every figure.
    imported: list[tuple[str, str]] = field(default_factory=list)
    no_base: bool = False
    why: str | None = None
    how: str | None = None

    @classmethod
    def without_base(cls, why: str, how: str) -> PatchCoverage:
        return cls(no_base=True, why=why, how=how)


def measure_patch(report: CoverageReport, changed: ChangedFiles | NoBase) -> PatchCoverage:
    """The patch coverage of ``changed`` in ``report`` (see the module's docstring)."""
    if isinstance(changed, NoBase):
        return PatchCoverage.without_base(
            changed.reason,
            "gate inside a git repository whose base is there (set `base:` or pass --base)",
        )
    base = changed.base.describe()
    source = display_path(report.source, changed.root, follow_links=False)
    no_lines = f"{source} ({report.format}) has no line numbers"
    if all(file.line_hits is None for file in report.files):
        return PatchCoverage(base=base, why=no_lines, how=NO_LINE_DATA_HINT)
    by_path: dict[str, FileCoverage] = {}
    for file in report.files:
        entry = changed.find(file.path)
        if entry is not None and entry.lines:
            if file.line_hits is None:
                return PatchCoverage(base=base, why=no_lines, how=NO_LINE_DATA_HINT)
            known = by_path.get(entry.path)
            if known is None or known.line_hits is None:
                by_path[entry.path] = file
            else:  # two spellings of one file: a line ran when either says so
                merged = dict(known.line_hits)
                for line, ran in file.line_hits.items():
                    merged[line] = merged.get(line, False) or ran
                by_path[entry.path] = FileCoverage(known.path, line_hits=merged)
    total = Ratio(0, 0)
    result = PatchCoverage(base=base)
    for entry in changed.files():
        if not entry.lines:
            continue
        found = by_path.get(entry.path)
        inside = changed.change.relative(entry.path, changed.root)
        if found is None or found.line_hits is None:
            # Another project's files in the same repository are not this report's to measure.
            if inside is not None and is_code(inside) and not is_test_file(inside):
                result.unmeasured.append((inside, len(entry.lines)))
            continue
        path = inside or entry.path
        hits = found.line_hits
        measured = [n for n in entry.lines if n in hits]
        if not measured:
            continue
        uncovered = sorted(n for n in measured if not hits[n])
        covered = len(measured) - len(uncovered)
        total += Ratio(covered, len(measured))
        result.files.append(PatchFile(path, len(measured), covered, uncovered))
    result.ratio = total
    result.files.sort(key=lambda f: (-len(f.uncovered), f.path))
    return result


def folders_measured(report: CoverageReport, changed: ChangedFiles) -> set[str]:
    """The top folders of the project (``pkg``, ``src``) that hold a file the report measures."""
    folders = set()
    for file in report.files:
        entry = changed.find(file.path)
        inside = changed.change.relative(entry.path, changed.root) if entry is not None else None
        path = inside or file.path
        if "/" in path and not path.startswith(("/", "../")):
            folders.add(path.split("/", 1)[0])
    return folders


def in_measured_folder(path: str, folders: set[str]) -> bool:
    """Whether an unmeasured changed file sits in a folder coverage measures files of: a Python
    file there that no test imported (a namespace folder's, with no ``__init__.py``) is code
    coverage.py leaves out of its report, not code outside what it measures."""
    return path.endswith(".py") and "/" in path and path.split("/", 1)[0] in folders


def add_unreported(
    patch: PatchCoverage, changed: ChangedFiles, statements: dict[str, set[int]]
) -> None:
    """Count, as run by no test, the changed statements (``statements``: path -> the lines of
    its statements) of unmeasured files that sit in a measured folder."""
    if patch.ratio is None or not statements:
        return
    lines: dict[str, list[int]] = {}
    for entry in changed.files():
        inside = changed.change.relative(entry.path, changed.root)
        if inside in statements:
            lines[inside] = sorted(n for n in entry.lines if n in statements[inside])
    for path, changed_statements in lines.items():
        if not changed_statements:
            continue
        patch.unmeasured = [(p, n) for p, n in patch.unmeasured if p != path]
        patch.files.append(PatchFile(path, len(changed_statements), 0, changed_statements))
        patch.ratio += Ratio(0, len(changed_statements))
    patch.files.sort(key=lambda f: (-len(f.uncovered), f.path))


def module_names(path: str) -> list[str]:
    """The names ``import`` finds a project file by: ``pricing.py`` as ``pricing``,
    ``src/shop/tax.py`` as ``shop.tax`` (and ``src.shop.tax``), a package by its folder."""
    parts = path[:-3].split("/") if path.endswith(".py") else []
    if not parts:
        return []
    if parts[-1] == "__init__":
        parts = parts[:-1]
    names = [".".join(parts)] if parts else []
    if len(parts) > 1 and parts[0] in ("src", "lib"):
        names.append(".".join(parts[1:]))
    return names


def imported_unmeasured(patch: PatchCoverage, texts: dict[str, str]) -> list[tuple[str, str]]:
    """The unmeasured changed files that a measured changed file (``texts``: its path and
    text) imports by absolute name: an ``import`` or ``from`` statement anywhere in it, read by
    Python's parser (red team 35: ``from \\`` and the name on the next line hid the import
    from a pattern), or ``importlib.import_module`` with the name written out."""
    imports = {path: _imported_names(text) for path, text in sorted(texts.items())}
    found = []
    for path, _ in patch.unmeasured:
        for name in module_names(path):
            importer = next((p for p, names in imports.items() if _names_import(names, name)), None)
            if importer is not None and importer != path:
                found.append((path, importer))
                break
    return found


def _names_import(names: set[str], name: str) -> bool:
    """Whether a module importing ``names`` (absolute, dotted) imports the module ``name``."""
    return name in names or any(n.startswith(f"{name}.") for n in names)


def _imported_names(text: str) -> set[str]:
    """The absolute module names a Python text imports (``from a.b import c`` gives ``a.b``
    and ``a.b.c``), by statement or by a call of ``import_module``/``__import__`` under any
    name bound to them (red team 40: `from importlib import import_module as _load`)."""
    import ast

    from pytest_agentgate import syntax

    try:
        tree = syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    loaders = {"import_module", "__import__"}
    nodes = list(ast.walk(tree))
    for node in nodes:  # the names the loaders are bound to, in any order
        if isinstance(node, ast.ImportFrom) and node.module == "importlib":
            loaders.update(a.asname for a in node.names if a.name == "import_module" and a.asname)
        elif isinstance(node, ast.Assign) and _a_loader(node.value, loaders):
            loaders.update(t.id for t in node.targets if isinstance(t, ast.Name))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and _a_loader(node.func, loaders)
        ):
            names.add(node.args[0].value)
    return names


def _a_loader(node: object, loaders: set[str]) -> bool:
    import ast

    if isinstance(node, ast.Attribute):
        return node.attr == "import_module"
    return isinstance(node, ast.Name) and node.id in loaders
