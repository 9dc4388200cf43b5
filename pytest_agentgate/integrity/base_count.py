"""The integrity gate's count at the base: how many tests the base commit's suite selects.

The static rules read what the change did to the test files (``tests_python.py``). Some drops
only a collection shows: parametrized cases a function builds (``parametrize("x",
make_cases())`` where ``make_cases()`` now returns fewer), a test file renamed out of a
collection pattern set where agentgate does not read it (the command's ``-o python_files=``).
So the base's suite is collected too, and the integrity gate compares its count with what the
test run selects now (``gates/integrity.py``):

- the base's files are written into a temporary folder (:meth:`pytest_agentgate.git.Repo.export`:
  a checkout through an index of its own), removed afterwards whatever happens. Not ``git
  worktree add``, which registers the folder in the repository (left behind if agentgate is
  killed) and runs its post-checkout hook; not ``git archive``, which leaves out the files a
  project marks ``export-ignore`` (often its tests);
- there, the test gate's command runs as a collection (:func:`commands.collection_command`:
  ``--collect-only``, coverage and the JUnit report left out) with agentgate's count plugin
  (:mod:`pytest_agentgate.pytest_plugin.count`), which writes how many tests pytest selected;
- under a timeout (the gate's, at most :data:`TIMEOUT_S`) that kills its process group
  (``process.py``), at a lower priority than the gates' commands it runs beside;
- the figure is kept (``state/base_counts.py``): a base commit never changes.

A version file the project's build writes from git's metadata (hatch-vcs's ``version-file``,
setuptools-scm's ``version_file`` or ``write_to``) is not committed: the package imports it,
and without it no test of the base collects. The base's ``pyproject.toml`` names it; agentgate
writes it into the checkout (:func:`_copy_version_files`), with a version of its own and the
plain values the working tree's copy binds: never the change's file as it is, and never none
(the change can delete its copy).

Anything that keeps the base from being counted (no git, no pytest command, an error collecting
the base, the timeout) is a reason, never a figure: the gate says it and blocks nothing.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import stat
import threading
import time
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_agentgate.commands import (
    COUNT_FILE_ENV,
    RUN_ID_ENV,
    collection_command,
    quote_word,
    runs_pytest,
    words,
)
from pytest_agentgate.git import EMPTY_TREE, Base, GitError, Repo
from pytest_agentgate.process import CommandResult, CommandSpec, run_command, temporary_folder
from pytest_agentgate.state import base_counts
from pytest_agentgate.texts import toml_document

# At most this long to check the base out and collect it (the gate's own timeout if shorter).
TIMEOUT_S = 120.0
# Below the gates' commands, which it runs beside: the tests are what the user waits for.
NICENESS = 10
OUTPUT_LIMIT = 64 * 1024
# Part of every key: counts kept before the deselected test functions were kept are collected again.
KEY_VERSION = "tests-defined"
# The figures, and the lists of test functions (state/base_counts.py bounds them).
COUNT_FILE_BYTES = base_counts.MAX_NAMES_BYTES + 4096


@dataclass(frozen=True)
class Target:
    """A test gate whose base is counted: its command, where it runs, its environment."""

    gate: str
    command: str
    cwd: Path
    env: Mapping[str, str] | None = None
    timeout: float | None = None


@dataclass(frozen=True)
class BaseCount:
    """The tests the base's suite selects for one test gate, or why that is not known."""

    gate: str
    commit: str
    selected: int | None
    why_not: str | None = None
    cached: bool = False  # read from the state directory, not collected now
    seconds: float | None = None  # how long collecting the base took, when it ran now
    # The test functions the base's collection collected, and those its selection left with
    # no case to run (function node ids: count.function_id); None when not known (too many).
    tests: frozenset[str] | None = None
    deselected: frozenset[str] | None = None


def count_at_base(
    root: Path,
    base: Base,
    targets: Sequence[Target],
    cancel: threading.Event | None = None,
    *,
    collect: bool = True,
) -> dict[str, BaseCount]:
    """Each target's count at ``base``: kept from an earlier verdict, else collected now in one
    checkout of the base (``collect=False``: not collected, and no figure for those targets).
    Never raises for what the project or its base holds."""
    if not targets:
        return {}

    def none(why: str) -> dict[str, BaseCount]:
        return {t.gate: BaseCount(t.gate, base.sha, None, why) for t in targets}

    if base.sha == EMPTY_TREE:
        return none("the base is an empty repository, with no test to count")
    repo = Repo.find(root)
    if repo is None:
        return none("not a git repository: a task's snapshot holds no suite to collect")
    found: dict[str, BaseCount] = {}
    to_collect: list[tuple[Target, str, str, str]] = []
    for target in targets:
        derived = collection_command(target.command, target.env)
        if derived is None:
            found[target.gate] = BaseCount(target.gate, base.sha, None, _no_collection(target))
            continue
        derived = _program_from(derived, target.cwd)
        try:
            folder = target.cwd.resolve().relative_to(repo.toplevel).as_posix()
        except (OSError, ValueError):
            why = f"the test command runs outside the repository ({target.cwd})"
            found[target.gate] = BaseCount(target.gate, base.sha, None, why)
            continue
        digest = _key(base.sha, derived, folder, target.env)
        kept = base_counts.load(root, digest, base.sha)
        if kept is not None:
            found[target.gate] = BaseCount(
                target.gate,
                base.sha,
                kept.selected,
                cached=True,
                tests=kept.tests,
                deselected=kept.deselected,
            )
        else:
            to_collect.append((target, derived, folder, digest))
    if to_collect and collect:
        found.update(_collect(root, repo, base, to_collect, cancel))
    return {t.gate: found[t.gate] for t in targets if t.gate in found}


def _no_collection(target: Target) -> str:
    if not runs_pytest(target.command):
        return "the test command does not run pytest"
    return (
        f"agentgate cannot run `{target.command}` as one pytest collection (it reads one "
        "pytest step, with coverage.py steps beside it, without redirections or variables)"
    )


def _program_from(command: str, cwd: Path) -> str:
    """The command with a program named by a relative path (``.venv/bin/python``, which the
    project has and the base's checkout does not: it is not committed) made absolute against
    the folder the gate runs in."""
    split = words(command)
    index = 0
    while index < len(split) and "=" in split[index]:
        if not split[index].split("=", 1)[0].isidentifier():
            break
        index += 1
    if index >= len(split):
        return command
    program = split[index]
    if os.sep not in program or os.path.isabs(program) or not (cwd / program).is_file():
        return command
    split[index] = str((cwd / program).absolute())
    return " ".join(quote_word(word) for word in split)


def _key(commit: str, command: str, folder: str, env: Mapping[str, str] | None) -> str:
    """What decides a collection's figure: the commit, the command, the folder it runs in, the
    program it starts (as installed now) and the gate's environment (PATH but through the
    program: a harness's PATH differs from the agent's shell's)."""
    kept_env = sorted((k, v) for k, v in (env or {}).items() if k not in (RUN_ID_ENV, "PATH"))
    return base_counts.key(
        commit, command, folder, _program(command, env), json.dumps(kept_env), KEY_VERSION
    )


def _program(command: str, env: Mapping[str, str] | None) -> str:
    """The program the command starts, resolved, with its size and time: another interpreter
    or another pytest installed is another collection."""
    split = words(command)
    while split and "=" in split[0] and split[0].split("=", 1)[0].isidentifier():
        split.pop(0)
    if not split:
        return ""
    search = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
    found = shutil.which(split[0], path=search) if os.sep not in split[0] else split[0]
    if found is None:
        return split[0]
    try:
        real = os.path.realpath(found)
        stat = os.stat(real)
    except OSError:
        return found
    return f"{real}:{stat.st_size}:{stat.st_mtime_ns}"


def _collect(
    root: Path,
    repo: Repo,
    base: Base,
    plans: list[tuple[Target, str, str, str]],
    cancel: threading.Event | None,
) -> dict[str, BaseCount]:
    """Check the base out once, collect each target's suite there, remove the checkout."""
    started = time.monotonic()
    with temporary_folder("agentgate-base-") as folder:
        tree = folder / "tree"
        if cancel is not None and cancel.is_set():
            why = "the run was stopped before the base was collected"
            return {t.gate: BaseCount(t.gate, base.sha, None, why) for t, *_ in plans}
        try:
            repo.export(base.sha, tree, folder / "index", timeout=TIMEOUT_S)
        except GitError as exc:
            why = f"the base could not be checked out: {exc}"
            return {t.gate: BaseCount(t.gate, base.sha, None, why) for t, *_ in plans}
        _copy_version_files(root, repo.toplevel, tree)
        found = {}
        for index, (target, derived, relative, digest) in enumerate(plans):
            budget = min(target.timeout or TIMEOUT_S, TIMEOUT_S) - (time.monotonic() - started)
            found[target.gate] = _collect_one(
                root,
                base,
                target,
                derived,
                tree / relative,
                folder / f"count-{index}.json",
                digest,
                _base_import_path(target, tree / relative, tree, repo.toplevel),
                max(budget, 1.0),
                cancel,
            )
        return found


def _collect_one(
    root: Path,
    base: Base,
    target: Target,
    command: str,
    cwd: Path,
    count_file: Path,
    digest: str,
    import_path: str,
    timeout: float,
    cancel: threading.Event | None,
) -> BaseCount:
    def not_counted(why: str, seconds: float | None = None) -> BaseCount:
        return BaseCount(target.gate, base.sha, None, why, seconds=seconds)

    if not cwd.is_dir():
        return not_counted(f"the folder the tests run in is not at the base ({cwd.name})")
    env = {
        **(target.env or {}),
        COUNT_FILE_ENV: str(count_file),
        # The base's modules are imported from the checkout: no cache is written anywhere.
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": import_path,
    }
    env.pop(RUN_ID_ENV, None)  # not a run of the gates: no report signed as one
    spec = CommandSpec(
        key=f"{target.gate} (count at the base)",
        command=command,
        cwd=cwd,
        timeout=timeout,
        env=env,
        stdout_limit=OUTPUT_LIMIT,
        output_limit=OUTPUT_LIMIT,
        kill_grace=1.0,
        niceness=NICENESS,
    )
    result = run_command(spec, cancel=cancel)
    seconds = round(result.duration_s, 3)
    figures, tests, deselected = _read_count(count_file)
    selected, why = _outcome(result, figures, timeout)
    if selected is None:
        return not_counted(why or "no count", seconds)
    base_counts.save(root, digest, base.sha, selected, tests, deselected)
    return BaseCount(
        target.gate, base.sha, selected, seconds=seconds, tests=tests, deselected=deselected
    )


# A version file larger than this is no generated version file.
VERSION_FILE_BYTES = 64 * 1024
# The version the base's checkout is given: its own is not known there (no tag is read), and
# no test's count depends on it. A valid PEP 440 version, as a package may parse its own.
UNKNOWN_VERSION = "0+unknown"
# What setuptools-scm's and hatch-vcs's version files bind, as the base's checkout gets them.
STANDARD_BINDINGS: dict[str, object] = {
    "__version__": UNKNOWN_VERSION,
    "version": UNKNOWN_VERSION,
    "__version_tuple__": (0, "unknown"),
    "version_tuple": (0, "unknown"),
    "__commit_id__": None,
    "commit_id": None,
}


def _copy_version_files(root: Path, toplevel: Path, tree: Path) -> None:
    """Write into the base's checkout ``tree`` each version file the base's ``pyproject.toml``
    says its build writes, that the base does not hold.

    Such a file is written by the build backend (hatch-vcs, setuptools-scm) from git's
    metadata, the version the last tag and commit give, and kept out of git: it is not the
    change's code, and the base's package imports it (``from ._version import __version__``).
    The names are the base's (the change cannot add one), and each must stay inside the
    project. The working tree's file is the change's to write, or to delete (red team 56: the
    agent deleted it and made its own package's import of it optional, and the base, which
    could not import, was not counted). So a Python one is never copied: agentgate writes it,
    with what setuptools-scm's template binds (:data:`STANDARD_BINDINGS`, the version
    :data:`UNKNOWN_VERSION`), and the other names the working tree's file binds at its top
    level to plain literals, in a regular file of the project (a custom template's), each
    written back as its literal: a file that imports, whatever the working tree holds. Another
    file (a ``VERSION`` text) is copied when it holds one version-like line, else written with
    :data:`UNKNOWN_VERSION`."""
    try:
        folder = root.resolve().relative_to(toplevel)
    except (OSError, ValueError):
        return
    project = tree / folder
    try:
        text = (project / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    document = toml_document(text)
    if document is None:
        return
    for name in _version_files(document):
        _write_version_file(root, project, name)


def _version_files(document: dict[str, object]) -> list[str]:
    """The version files a ``pyproject.toml`` names, relative to its folder: hatch-vcs's build
    hook ``version-file`` (every target's too), the ``version_file`` of its ``raw-options``
    (setuptools-scm writes it; hatch-vcs drops ``write_to``), setuptools-scm's
    ``version_file`` and ``write_to`` (relative to its ``root``)."""
    tool = _table(document, "tool")
    hatch = _table(tool, "hatch")
    build = _table(hatch, "build")
    found: list[object] = [_table(_table(build, "hooks"), "vcs").get("version-file")]
    for target in _table(build, "targets").values():
        hooks = _table(target if isinstance(target, dict) else {}, "hooks")
        found.append(_table(hooks, "vcs").get("version-file"))
    version = _table(hatch, "version")
    if version.get("source") == "vcs":
        found.append(_table(version, "raw-options").get("version_file"))
    scm = _table(tool, "setuptools_scm")
    found.append(scm.get("version_file"))
    write_to = scm.get("write_to")
    scm_root = scm.get("root", ".")
    if isinstance(write_to, str) and isinstance(scm_root, str):
        found.append(os.path.join(scm_root, write_to))
    return list(dict.fromkeys(name for name in found if isinstance(name, str) and name))


def _table(document: object, key: str) -> dict[str, object]:
    value = document.get(key) if isinstance(document, dict) else None
    return value if isinstance(value, dict) else {}


def _write_version_file(root: Path, project: Path, name: str) -> None:
    relative = os.path.normpath(name)
    if os.path.isabs(relative) or relative.split(os.sep)[0] in ("..", "."):
        return  # outside the project, or the project itself
    target = project / relative
    if os.path.lexists(target):
        return  # the base holds it: the base's own
    real_project = os.path.realpath(project)
    if os.path.commonpath([os.path.realpath(target.parent), real_project]) != real_project:
        return
    data = _working_copy(root, relative)
    if relative.endswith(".py"):
        written = _version_module(data).encode()
    elif data is not None and _VERSION_LINE.fullmatch(data):
        written = data
    else:
        written = f"{UNKNOWN_VERSION}\n".encode()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(written)
    except OSError:
        return


# A version written as text: one line of what a version (PEP 440, or a tag's name) is made of.
_VERSION_LINE = re.compile(rb"[0-9A-Za-z.+!_-]{1,200}\r?\n?")


def _working_copy(root: Path, relative: str) -> bytes | None:
    """The working tree's file at ``relative``: a regular file of the project (not through a
    link), within :data:`VERSION_FILE_BYTES`; None otherwise."""
    source = root / relative
    if os.path.realpath(source) != os.path.join(os.path.realpath(root), relative):
        return None
    try:
        if not stat.S_ISREG(os.lstat(source).st_mode):
            return None
        with source.open("rb") as handle:
            data = handle.read(VERSION_FILE_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= VERSION_FILE_BYTES else None


def _version_module(data: bytes | None) -> str:
    """The version file the base's checkout gets: :data:`STANDARD_BINDINGS`, and the names
    ``data`` (the working tree's file, if any) binds at its top level to plain literals."""
    bindings = _literal_bindings(data) if data is not None else {}
    bindings.update(STANDARD_BINDINGS)
    lines = [
        "# written by agentgate for the base's collection: the build generates this file from",
        "# git, and the working tree's copy is the change's (integrity/base_count.py)",
        "",
        *(f"{name} = {value!r}" for name, value in bindings.items()),
    ]
    return "\n".join(lines) + "\n"


def _literal_bindings(data: bytes) -> dict[str, object]:
    """The names Python source ``data`` binds at its top level to literals (``x = y = '1.0'``),
    the last binding of each; never a name a module's machinery reads (:data:`_MODULE_NAMES`),
    nor a value whose text does not read back as itself. Nothing in ``data`` is run."""
    try:
        module = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, object] = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if len(names) != len(targets) or any(n in _MODULE_NAMES for n in names):
            continue
        literal = _literal(value)
        if literal is _NOT_LITERAL:
            continue
        for name in names:
            found[name] = literal
    return found


_NOT_LITERAL = object()
# Names the import system or Python gives a module a meaning of (``__path__`` makes it a
# package, ``__getattr__`` answers for names it lacks): a version file's literal binds none.
_MODULE_NAMES = frozenset(
    {
        *dir(types.ModuleType("version")),
        "__all__",
        "__builtins__",
        "__cached__",
        "__file__",
        "__path__",
        "__getattr__",
        "__dir__",
        "__annotations__",
        "__class__",
        "__dict__",
    }
)


def _literal(node: ast.expr) -> object:
    """The value of a literal expression, if its ``repr`` reads back as it (not ``1e999``, a
    float ``repr`` gives as ``inf``); :data:`_NOT_LITERAL` otherwise."""
    try:
        value = ast.literal_eval(node)
        same = ast.literal_eval(repr(value)) == value
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL
    return value if same else _NOT_LITERAL


def _base_import_path(target: Target, folder: Path, tree: Path, toplevel: Path) -> str:
    """``PYTHONPATH`` for the collection at the base (run in ``folder`` of the checkout
    ``tree``): the base's own code before any install of today's.

    An editable install (a ``.pth`` naming the project's ``src/`` or the project itself) and a
    ``PYTHONPATH`` into the repository point at today's code: the base's tests would import it
    and count today's cases on both sides. The checkout's ``src/`` and its own folder come
    first (what ``python -m pytest`` run there puts first anyway), and an entry of the gate's
    ``PYTHONPATH`` inside the repository is read in the checkout instead."""
    given = (target.env or {}).get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    entries = [str(path) for path in (folder / "src", folder) if path.is_dir()]
    for entry in given.split(os.pathsep) if given else ():
        path = Path(entry)
        real = Path(os.path.realpath(path)) if path.is_absolute() else path
        if real == toplevel or toplevel in real.parents:
            path = tree / real.relative_to(toplevel)
        entries.append(str(path))
    return os.pathsep.join(dict.fromkeys(entries))


_Names = frozenset[str] | None


def _read_count(path: Path) -> tuple[dict[str, int] | None, _Names, _Names]:
    """The count plugin's figures (None when it wrote none that read), and the test functions
    it says were collected and deselected (None when not known)."""
    try:
        with path.open("rb") as handle:
            doc = json.loads(handle.read(COUNT_FILE_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None, None, None
    if not isinstance(doc, dict):
        return None, None, None
    figures = {}
    for name in ("selected", "deselected", "errors", "status"):
        value = doc.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return None, None, None
        figures[name] = value
    return (
        figures,
        base_counts.names(doc.get("tests")),
        base_counts.names(doc.get("deselected_tests")),
    )


def _outcome(
    result: CommandResult, figures: dict[str, int] | None, timeout: float
) -> tuple[int | None, str | None]:
    """The tests the base selects, or why its collection gives no count."""
    if result.cancelled:
        return None, "the run was stopped before the base was collected"
    if result.timed_out:
        return None, f"collecting the base's tests took longer than {timeout:.0f} s"
    if result.start_error:
        return None, f"the collection at the base could not start: {result.start_error}"
    said = _said(result)
    if figures is None:
        return None, f"the collection at the base gave no count (exit {result.exit_code}){said}"
    if figures["errors"]:
        return None, f"{figures['errors']} error(s) collecting the base's tests{said}"
    if figures["status"] not in (0, 5):  # 5: no tests collected, a count of 0
        return None, f"the collection at the base exited {figures['status']}{said}"
    # What the suite holds, deselected tests included (as the run's figure is counted).
    return figures["selected"] + figures["deselected"], None


def _said(result: CommandResult) -> str:
    """What the collection said last (the first ERROR line, else its last line), bounded."""
    lines = [line.strip() for line in result.tail(40).splitlines() if line.strip()]
    line = next((x for x in lines if x.startswith(("ERROR", "E "))), lines[-1] if lines else "")
    return f": {line[:200]}" if line else ""
