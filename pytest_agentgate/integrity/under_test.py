"""Code that behaves one way under the tests and another for its users.

- **test-detected** (code, not tests): the change makes the code ask whether it runs under
  pytest (``PYTEST_CURRENT_TEST``, ``PYTEST_VERSION`` in the environment, ``"pytest" in
  sys.modules``, agentgate's own run id), so that a "fix" can apply
  only while the tests look: ``return price + (0 if os.environ.get("PYTEST_CURRENT_TEST") else
  1.5)``.
- **suppression-added**: ``TYPE_CHECKING`` given a value of the project's own. coverage.py leaves
  ``if TYPE_CHECKING:`` blocks out of its figures, as code that never runs; with
  ``TYPE_CHECKING = True`` the block runs for every user, and is measured by no one
  (``TYPE_CHECKING = False``, a shim for old Pythons, and documentation's settings are fine).
- **tested-code-mocked** (a conftest.py or test module): the project's own function replaced for
  every test by plain assignment (``calc.tax = lambda x: 0``, ``setattr(calc, "tax", f)``,
  ``vars(calc)["tax"] = f``, ``calc.__dict__["tax"] = f``) when the file is imported, without
  ``monkeypatch``, or its code swapped (``calc.tax.__code__ = f.__code__``): the tests then
  check the stand-in. A module the change adds in a folder of the tests under the name of a
  top-level package or module of the project (``tests/calc/__init__.py``) is imported in its
  place. Settings
  (a constant, a dict entry) are not functions, and are not findings. And a
  test that imported a name from the project's code at the base and now imports it from a
  module of the tests (``from tests.fixed_calc import tax``): a corrected copy under test.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.integrity.patches import dotted_name, parse_python

# What only code that wants to know whether the tests are looking reads (a string of its own).
UNDER_TEST = frozenset(
    {
        # Not PYTEST_XDIST_WORKER: code reads it to give each worker its own database or port.
        "PYTEST_CURRENT_TEST", "PYTEST_VERSION", "_called_from_test",
        "AGENTGATE_RUN_ID", "AGENTGATE_RUNNING",
    }
)  # fmt: skip


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    for path, status in sorted(scan.touched.items()):
        if status == "deleted" or not path.endswith(".py"):
            continue
        now = scan.sources.now(path)
        if not now:
            continue
        before = scan.sources.at_base(scan.renamed_from.get(path, path)) or ""
        name = PurePosixPath(path).name
        # Each question is asked only of a file whose text could answer it: a change touches
        # many files, and parsing each again would cost more than the rest of the gate.
        if is_test_code(path):
            if (
                _ASSIGNS_AN_ATTRIBUTE.search(now)
                or "setattr" in now
                or "__dict__" in now
                or "vars(" in now
            ):
                yield from _replaced_project_code(scan.root, path, now, before)
            if not before:
                yield from _shadows_the_project(scan, path)
            if before and _IMPORTS.findall(now) != _IMPORTS.findall(before):
                yield from _imported_elsewhere(scan.root, path, now, before)
            continue
        if "sys.modules" in now or any(word in now for word in UNDER_TEST):
            yield from _asks_for_the_tests(path, now, before)
        documentation = name == "conf.py" or PurePosixPath(path).parts[0] in ("docs", "doc")
        if "TYPE_CHECKING" in now and not documentation:
            yield from _type_checking_set(path, name, now, before)


# `calc.tax = ...` at a line's start; `from a import b` and `import a` lines.
_ASSIGNS_AN_ATTRIBUTE = re.compile(r"^[ \t]*[A-Za-z_][\w.]*\.\w+[ \t]*=[^=]", re.MULTILINE)
_IMPORTS = re.compile(r"^[ \t]*(?:from[ \t]+\S+[ \t]+import|import)[ \t].*$", re.MULTILINE)


def is_test_code(path: str) -> bool:
    """A test, a conftest, or a helper of the tests: in a folder named ``test*``
    (``tests/``, ``tests_e2e/``, ``testing/``), or a module named ``testing`` or ``test_*``."""
    pure = PurePosixPath(path)
    return (
        pure.name == "conftest.py"
        or pure.name.startswith("test_")
        or pure.name.endswith("_test.py")
        or pure.stem == "testing"
        or any(part.startswith("test") for part in pure.parent.parts)
    )


def _asks_for_the_tests(path: str, now: str, before: str) -> Iterator[IntegrityFinding]:
    tree = parse_python(now)
    words = _words(tree)
    extra = Counter(word for word, _ in words) - Counter(
        word for word, _ in _words(parse_python(before))
    )
    for word, line in words:
        if extra[word] > 0:
            extra[word] -= 1
            yield IntegrityFinding(
                "test-detected",
                f"{PurePosixPath(path).name} reads {word}: the code can behave one way under the "
                "tests and another for its users",
                path,
                line,
            )
    asked, asked_before = _pytest_in_modules(tree), _pytest_in_modules(parse_python(before))
    for line in asked[len(asked_before) :]:
        yield IntegrityFinding(
            "test-detected",
            f"{PurePosixPath(path).name} asks whether pytest is loaded: the code can behave one "
            "way under the tests and another for its users",
            path,
            line,
        )


def _words(tree: ast.Module | None) -> list[tuple[str, int]]:
    """Each string of the code that is one of :data:`UNDER_TEST` (docstrings hold none)."""
    found = []
    for node in ast.walk(tree) if tree is not None else ():
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in UNDER_TEST
        ):
            found.append((node.value, node.lineno))
    return sorted(found, key=lambda item: item[1])


def _pytest_in_modules(tree: ast.Module | None) -> list[int]:
    """Lines of ``"pytest" in sys.modules`` and ``sys.modules.get("pytest")``, in order (the
    change's new ones are those past the base's count: a line moved is not a new question)."""
    found: list[int] = []
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Compare) and any(
            dotted_name(c) == "sys.modules" for c in node.comparators
        ):
            if isinstance(node.left, ast.Constant) and str(node.left.value).lstrip("_") == "pytest":
                found.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and dotted_name(node.func) in ("sys.modules.get", "sys.modules.__contains__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).lstrip("_") == "pytest"
        ):
            found.append(node.lineno)
    return sorted(found)


def _type_checking_set(path: str, name: str, now: str, before: str) -> Iterator[IntegrityFinding]:
    def assigned(tree: ast.Module | None) -> list[int]:
        lines = []
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.stmt):
                continue
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            value = getattr(node, "value", None)
            if isinstance(value, ast.Constant) and value.value is False:
                continue  # `TYPE_CHECKING = False`: a shim for old Pythons, never a block that runs
            if any(dotted_name(t).rsplit(".", 1)[-1] == "TYPE_CHECKING" for t in targets):
                lines.append(node.lineno)
        return lines

    new, old = assigned(parse_python(now)), assigned(parse_python(before))
    for line in new[len(old) :]:
        yield IntegrityFinding(
            "suppression-added",
            f"{name} gives TYPE_CHECKING a value of its own: coverage leaves `if TYPE_CHECKING:` "
            "blocks out as code that never runs, and this one runs",
            path,
            line,
        )


def _replaced_project_code(
    root: Path, path: str, now: str, before: str
) -> Iterator[IntegrityFinding]:
    new = _replacements(parse_python(now), root)
    old = Counter(target for target, _ in _replacements(parse_python(before), root))
    for target, line in new:
        if old[target] > 0:
            old[target] -= 1
            continue
        yield IntegrityFinding(
            "tested-code-mocked",
            f"{PurePosixPath(path).name} replaces {target} for every test (without monkeypatch): "
            "the tests check the stand-in, not the code",
            path,
            line,
        )


def _replacements(tree: ast.Module | None, root: Path) -> list[tuple[str, int]]:
    """Functions of the project's own modules replaced by assignment or setattr."""
    if tree is None:
        return []
    names = _project_names(tree, root)
    if not names:
        return []
    defined = {
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    found: list[tuple[str, int]] = []
    # A function's code (or its defaults) swapped, anywhere: no fixture undoes that by accident,
    # and monkeypatch restores the function object, whose code is the stand-in's all the same.
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                dotted = dotted_name(target)
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr in _FUNCTION_INNARDS
                    and dotted.split(".")[0] in names
                ):
                    found.append((dotted, node.lineno))
        elif (
            isinstance(node, ast.Call)
            and dotted_name(node.func).rsplit(".", 1)[-1] == "setattr"
            and len(node.args) >= 2
            and dotted_name(node.args[0]).split(".")[0] in names
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in _FUNCTION_INNARDS
        ):
            found.append((f"{dotted_name(node.args[0])}.{node.args[1].value}", node.lineno))
    # At the module's level: what runs when pytest imports the file, for every test after it
    # (a fixture's assignment is the fixture's business, and often undone by it).
    for node in _module_level(tree):
        if isinstance(node, ast.Assign) and _callable_value(node.value, defined):
            for target in node.targets:
                dotted = dotted_name(target)
                if isinstance(target, ast.Attribute) and dotted.split(".")[0] in names:
                    found.append((dotted, node.lineno))
                namespace = _namespace_entry(target, names)
                if namespace is not None:
                    found.append((namespace, node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("update", "__setitem__", "setdefault")
            and _namespace_of(node.func.value, names) is not None
        ):
            module = _namespace_of(node.func.value, names)
            for keyword in node.keywords:
                if keyword.arg and _callable_value(keyword.value, defined):
                    found.append((f"{module}.{keyword.arg}", node.lineno))
            if node.args and isinstance(node.args[0], ast.Dict):
                for key, item in zip(node.args[0].keys, node.args[0].values, strict=False):
                    if isinstance(key, ast.Constant) and _callable_value(item, defined):
                        found.append((f"{module}.{key.value!s}", node.lineno))
            elif (
                len(node.args) >= 2
                and isinstance(node.args[0], ast.Constant)
                and _callable_value(node.args[1], defined)
            ):
                found.append((f"{module}.{node.args[0].value!s}", node.lineno))
        elif (
            isinstance(node, ast.Call)
            and dotted_name(node.func) == "setattr"
            and len(node.args) >= 3
            and dotted_name(node.args[0]).split(".")[0] in names
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _callable_value(node.args[2], defined)
        ):
            found.append((f"{dotted_name(node.args[0])}.{node.args[1].value}", node.lineno))
    return found


# What a function runs and with which defaults: replaced, the function object stays the
# project's and its name is untouched, yet it runs the stand-in's code.
_FUNCTION_INNARDS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})


def _namespace_of(node: ast.expr, names: set[str]) -> str | None:
    """The project module whose namespace ``node`` is: ``vars(calc)``, ``calc.__dict__``."""
    if isinstance(node, ast.Call) and dotted_name(node.func) == "vars" and len(node.args) == 1:
        inner = dotted_name(node.args[0])
    elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
        inner = dotted_name(node.value)
    else:
        return None
    return inner if inner and inner.split(".")[0] in names else None


def _namespace_entry(target: ast.expr, names: set[str]) -> str | None:
    """``vars(calc)["tax"]`` or ``calc.__dict__["tax"]`` as an assignment's target."""
    if not isinstance(target, ast.Subscript):
        return None
    module = _namespace_of(target.value, names)
    if module is None:
        return None
    key = target.slice
    return f"{module}.{key.value!s}" if isinstance(key, ast.Constant) else f"{module}...."


# Files a project keeps at its root that a test folder has its own of, never imported by name.
_NOT_SHADOWS = frozenset({"conftest", "setup", "noxfile", "__main__"})


def _shadows_the_project(scan: Scan, path: str) -> Iterator[IntegrityFinding]:
    """A module the change adds in a folder of the tests under the name of one of the
    project's own top-level packages or modules (``tests/calc/__init__.py``, ``tests/calc.py``):
    pytest's default import mode puts a test folder that is no package first on ``sys.path``,
    and ``import calc`` then imports the tests' module, not the project's."""
    pure = PurePosixPath(path)
    if pure.name == "__init__.py":
        name, folder = pure.parent.name, pure.parent.parent
    elif pure.suffix == ".py":
        name, folder = pure.stem, pure.parent
    else:
        return
    if not name or str(folder) == "." or not is_test_code(f"{folder}/x"):
        return
    if name in _NOT_SHADOWS or name.startswith("test"):
        return  # pytest's own per-folder files, and tests, are never imported by name
    if (scan.root / folder / "__init__.py").is_file():
        return  # a package of the tests: its modules are `tests.calc`, never `calc`
    if not _is_project(name, scan.root) or folder.parts[0] == "src":
        return
    yield IntegrityFinding(
        "tested-code-mocked",
        f"{path} is imported as the project's {name}: pytest puts {folder}/ first on sys.path, "
        "and the tests check this module, not the project's code",
        path,
        1,
    )


def _imported_elsewhere(root: Path, path: str, now: str, before: str) -> Iterator[IntegrityFinding]:
    was, is_now = _imports(parse_python(before)), _imports(parse_python(now))
    for name, (module, line) in sorted(is_now.items()):
        old = was.get(name)
        if old is None or old[0] == module:
            continue
        if _is_project(old[0].split(".")[0], root) and is_test_code(module.replace(".", "/")):
            yield IntegrityFinding(
                "tested-code-mocked",
                f"{PurePosixPath(path).name} imported {name} from {old[0]} at the base and now "
                f"from {module}: the test checks that copy, not the project's code",
                path,
                line,
            )


def _imports(tree: ast.Module | None) -> dict[str, tuple[str, int]]:
    """Each name ``from MODULE import NAME`` binds: its module and line (absolute imports)."""
    found: dict[str, tuple[str, int]] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, node.lineno)
    return found


def _module_level(tree: ast.Module) -> Iterator[ast.AST]:
    """The module's own statements, and what is in them, but not inside functions or classes."""
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _callable_value(value: ast.expr, defined: set[str]) -> bool:
    """A value that stands in for a function: a lambda, a function of this file, a mock."""
    if isinstance(value, ast.Lambda):
        return True
    if isinstance(value, ast.Name):
        return value.id in defined
    if isinstance(value, ast.Call):
        name = dotted_name(value.func).rsplit(".", 1)[-1]
        return name in ("Mock", "MagicMock", "AsyncMock", "create_autospec", "partial") or (
            name in ("classmethod", "staticmethod") and bool(value.args)
        )
    return False


def _project_names(tree: ast.Module, root: Path) -> set[str]:
    """Names the module binds to the project's own modules (found in its root or ``src/``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_project(alias.name.split(".")[0], root):
                    names.add(alias.asname or alias.name.split(".")[0])
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and not node.level
            and _is_project(node.module.split(".")[0], root)
        ):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _is_project(top: str, root: Path) -> bool:
    return any(
        (folder / top).is_dir() or (folder / f"{top}.py").is_file()
        for folder in (root, root / "src")
    )


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return None if index < 0 else text.count("\n", 0, index) + 1
