"""How many tests a pytest collection selects: the integrity gate's count at the base.

agentgate collects the base commit's suite (``--collect-only``, in a checkout of its own, see
:mod:`pytest_agentgate.integrity.base_count`) with ``-p pytest_agentgate.pytest_plugin.count``
and ``AGENTGATE_COUNT_FILE`` naming a file. At the end of the session this plugin writes there,
as JSON: ``selected`` (the items left to run once collection is finished: what pytest would
run), ``deselected`` (``-k``, ``-m``, ``--deselect`` and the project's own deselection),
``errors`` (collectors that failed: a file that does not import), ``status`` (pytest's exit
status), and two lists of test functions, as node ids without their parameters (null past
``commands.MAX_LISTED_TESTS``): ``tests``, those collected (selected or deselected), each
followed by a tab and where its code is defined (:func:`definition`), and
``deselected_tests``, those none of whose cases is left to run. The integrity gate asks
whether a test of the base is still collected, and still selected, in the run. Counting from
pytest's hooks, not from its printed output, keeps the figure exact whatever the verbosity or
the plugins that print. It imports nothing but pytest and :mod:`pytest_agentgate.commands`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_agentgate.commands import COUNT_FILE_ENV, MAX_LISTED_TESTS

# The modules whose calls of ``pytest_deselected`` are pytest's selection: ``-m`` and ``-k``
# (``_pytest.mark``), ``--deselect`` (``_pytest.main``). Not ``--lf``/``--sw`` (the cache: a
# checkout of the base has none) nor a plugin's (pytest-testmon deselects what a change does
# not touch).
SELECTION_MODULES = frozenset({"_pytest.mark", "_pytest.main"})


def function_id(item: pytest.Item) -> str:
    """A test's node id without its parameters: ``tests/test_a.py::TestB::test_c``. Only a
    parametrized item loses its ``[...]`` (red team 39: `globals()["test_x[zero]"]`, a test
    named as if it were a case of `test_x`, stood in for the real one)."""
    if getattr(item, "callspec", None) is None:
        return item.nodeid
    head, sep, last = item.nodeid.rpartition("::")
    name = getattr(item, "originalname", None) or last.split("[", 1)[0]
    return f"{head}{sep}{name}"


def has_cases(item: pytest.Item) -> bool:
    """False for the item pytest makes of a test with an empty parameter set (it skips it):
    the function has no case to run (red team 39: `metafunc.parametrize([], [])` in a
    `pytest_generate_tests` of the test module took a failing test of the base out)."""
    return not item.nodeid.endswith("[NOTSET]")


def listed(names: set[str], limit: int = MAX_LISTED_TESTS) -> list[str] | None:
    """``names`` sorted, or None past ``limit``."""
    return sorted(names) if len(names) <= limit else None


def by_selection(frame: Any) -> bool:
    """Whether the call of ``pytest_deselected`` whose hook implementation's caller is
    ``frame`` comes from pytest's selection: the first caller outside pluggy."""
    for _ in range(64):
        if frame is None:
            return False
        module = str(frame.f_globals.get("__name__", ""))
        if module == "pluggy" or module.startswith("pluggy."):
            frame = frame.f_back
            continue
        return module in SELECTION_MODULES
    return False


def counted(item: pytest.Item) -> bool:
    """Whether ``item`` is a test function with a case to run: not a doctest, nor another
    plugin's item (pytest-ruff's `::ruff`, review 24), nor an empty parameter set's."""
    return isinstance(item, pytest.Function) and has_cases(item)


# The folders installed packages are in: a virtual environment inside the project is outside
# the base's checkout, and its files are the same on both sides.
_INSTALLED = frozenset({"site-packages", "dist-packages"})


def definition(item: pytest.Item) -> str:
    """Where the code ``item`` runs is defined: its file (relative to pytest's rootdir) and
    the function's ``__qualname__``: the same for a test a renamed subclass inherits, an
    assigned test renamed, a state machine's case (review 24)."""
    function = getattr(item, "function", None)
    code = getattr(function, "__code__", None)
    if code is None or hasattr(function, "__wrapped__"):
        # A wrapper names itself after what it wraps (`functools.wraps`): red team 41 gave a
        # new test the failing one's name that way. No definition to match by.
        return ""
    module = sys.modules.get(str(getattr(function, "__module__", "")))
    if getattr(function, "__globals__", None) is not getattr(module, "__dict__", None):
        # The code run with other globals (red team 42: `type(f)(f.__code__, {...})` with
        # another `ZERO`): not the test it was copied from.
        return ""
    where = _where(str(code.co_filename or ""), str(item.config.rootpath))
    # The code object's own name, not `__qualname__`, which anyone may assign (red team 41).
    found = f"{where}::{getattr(code, 'co_qualname', code.co_name)}"
    bound = _bound_values(function, str(item.config.rootpath))
    if bound:  # what a factory gave the code: its defaults and closure
        found += "#" + bound
    cls = getattr(item, "cls", None)
    if cls is not None:  # its class's own data decides what the code checks
        found += "@" + _class_data(cls, str(item.config.rootpath))
    return found


@functools.lru_cache(maxsize=4096)
def _where(filename: str, root: str) -> str:
    """A test's file as :func:`definition` names it: an installed package's from its
    ``site-packages``, the project's relative to pytest's rootdir (once per file)."""
    if not filename:
        return filename
    parts = filename.replace(os.sep, "/").split("/")
    at = next((i for i, p in enumerate(parts) if p in _INSTALLED), None)
    if at is not None:  # an installed package's, wherever the environment is
        return "/".join(parts[at:])
    with contextlib.suppress(ValueError):
        relative = os.path.relpath(filename, root)
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
    return filename


@functools.lru_cache(maxsize=4096)
def _class_data(cls: type, root: str) -> str:
    """A digest of the data a test class sets itself (not its functions): a subclass that
    inherits a test and sets `rate = 0.0` runs other checks than one setting `rate = 1.0`,
    and a class renamed with the same body runs the same ones. Each value as
    :func:`_shown`: the same data gives the same digest in another process and another
    checkout (review 26: a set's order, a path under the project's folder)."""
    data = []
    for name, value in sorted(vars(cls).items()):
        if name.startswith("__") or callable(value):
            continue
        if isinstance(value, (staticmethod, classmethod, property)):
            continue
        data.append((name, _shown(value, root)))
    return hashlib.sha256(repr(data).encode("utf-8", "replace")).hexdigest()[:12]


def _bound_values(function: Any, root: str) -> str:
    """A digest of the values a function's code runs with besides its module's globals: its
    defaults and its closure's cells (empty when it has none)."""
    values: list[str] = []
    for default in getattr(function, "__defaults__", None) or ():
        values.append(_shown(default, root))
    for name, default in sorted((getattr(function, "__kwdefaults__", None) or {}).items()):
        values.append(f"{name}={_shown(default, root)}")
    for cell in getattr(function, "__closure__", None) or ():
        try:
            values.append(_shown(cell.cell_contents, root))
        except ValueError:  # an empty cell
            values.append("<empty>")
    if not values:
        return ""
    return hashlib.sha256(repr(values).encode("utf-8", "replace")).hexdigest()[:12]


def _shown(value: object, root: str, depth: int = 0) -> str:
    """``value`` as text that does not depend on the process: sets and dicts in sorted order,
    no object addresses, the project's folder as ``<root>``."""
    try:
        if depth < 4 and isinstance(value, (set, frozenset)):
            return "{" + ", ".join(sorted(_shown(v, root, depth + 1) for v in value)) + "}"
        if depth < 4 and isinstance(value, dict):
            items = (
                f"{_shown(k, root, depth + 1)}: {_shown(v, root, depth + 1)}"
                for k, v in value.items()
            )
            return "{" + ", ".join(sorted(items)) + "}"
        if depth < 4 and isinstance(value, (list, tuple)):
            return "[" + ", ".join(_shown(v, root, depth + 1) for v in value) + "]"
        text = repr(value)
    except Exception:  # a repr of the project's that fails: the name still counts
        return "?"
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", text)
    return (text.replace(root, "<root>") if root else text)[:500]


def entry(item: pytest.Item) -> str:
    """A collected test function as the lists give it: its function id, a tab, its
    :func:`definition`."""
    return f"{function_id(item)}\t{definition(item)}"


class Tests:
    """The test functions of a collection: those deselected (by anything, and by pytest's
    selection), and, given the items left to run, those collected (each with where its code
    is defined: :func:`entry`) and those with no case left to run."""

    def __init__(self) -> None:
        self.deselected: dict[str, str] = {}  # function id -> entry
        self.by_selection: set[str] = set()

    def deselect(self, items: Sequence[pytest.Item], caller: Any) -> None:
        found = {function_id(item): entry(item) for item in items if counted(item)}
        self.deselected.update(found)
        if by_selection(caller):
            self.by_selection.update(found)

    def lists(
        self, selected: Sequence[pytest.Item], *, only_selection: bool, limit: int
    ) -> tuple[list[str] | None, list[str] | None]:
        """(collected, fully deselected), each None past ``limit``."""
        kept = {function_id(item): entry(item) for item in selected if counted(item)}
        gone = self.by_selection if only_selection else set(self.deselected)
        collected = listed({*kept.values(), *self.deselected.values()}, limit)
        return collected, listed({n for n in gone if n not in kept}, limit)


_selected: int | None = None
_deselected = 0
_tests = Tests()
_lists: tuple[list[str] | None, list[str] | None] = ([], [])
_errors = 0


def pytest_sessionstart(session: pytest.Session) -> None:
    global _selected, _deselected, _tests, _lists, _errors
    _selected, _deselected, _tests, _lists, _errors = None, 0, Tests(), ([], []), 0


def pytest_collectreport(report: pytest.CollectReport) -> None:
    global _errors
    if report.failed:
        _errors += 1


def pytest_deselected(items: Sequence[pytest.Item]) -> None:
    global _deselected
    _deselected += len(items)
    _tests.deselect(items, sys._getframe(1))


def pytest_collection_finish(session: pytest.Session) -> None:
    global _selected, _lists
    _selected = len(session.items)
    _lists = _tests.lists(session.items, only_selection=False, limit=MAX_LISTED_TESTS)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get(COUNT_FILE_ENV)
    if not path:
        return
    document = {
        "selected": _selected,
        "deselected": _deselected,
        "tests": _lists[0],
        "deselected_tests": _lists[1],
        "errors": _errors,
        "status": int(exitstatus),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
