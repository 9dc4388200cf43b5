"""Zero configuration: recognise a Python project and gate it with compileall, ruff, pytest
and coverage, the tools this package installs with itself.

In a repository, what is detected in the project's files at the change's base is the law
(:func:`python_defaults` with ``base``, tree.py): the change may add to it, never narrow it."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from pytest_agentgate.commands import command_python
from pytest_agentgate.linters import Linter, declared_linter, pre_commit_exclude
from pytest_agentgate.state.storage import STATE_DIR
from pytest_agentgate.tree import Files, OnDisk

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini")
SKIP_DIRS = {"node_modules", "build", "dist", "site-packages", "__pycache__", "htmlcov"}
TEST_DIRS = {"tests", "test", "testing"}


def _is_venv(files: Files, path: str) -> bool:
    """A virtualenv/venv (``pyvenv.cfg``) or a conda environment (``conda-meta/``)."""
    return files.is_file(f"{path}/pyvenv.cfg") or files.is_dir(f"{path}/conda-meta")


def _skipped(files: Files, path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith(".")
        or name in SKIP_DIRS
        or name.endswith(".egg-info")
        or _is_venv(files, path)
    )


def _has_python(files: Files, directory: str, depth: int = 4) -> bool:
    """Python files in ``directory`` or a few levels below (namespace packages have no
    ``__init__.py``), never looking into environments, caches or hidden folders."""
    entries = files.entries(directory)
    if any(name.endswith(".py") and not folder for name, folder in entries):
        return True
    return depth > 1 and any(
        folder
        and not _skipped(files, f"{directory}/{name}")
        and _has_python(files, f"{directory}/{name}", depth - 1)
        for name, folder in entries
    )


def python_dirs(root: Path | Files) -> list[str]:
    """Top-level directories holding Python code, tests included, in name order."""
    files = _files(root)
    return [
        name
        for name, folder in files.entries("")
        if folder and not _skipped(files, name) and _has_python(files, name)
    ]


def _top_modules(files: Files) -> list[str]:
    return [name for name, folder in files.entries("") if not folder and name.endswith(".py")]


def _files(root: Path | Files) -> Files:
    return OnDisk(root) if isinstance(root, Path) else root


def is_python_project(root: Path | Files) -> str | None:
    """The file or folder that shows this is a Python project, or None."""
    files = _files(root)
    for marker in PROJECT_MARKERS:
        if files.is_file(marker):
            return marker
    modules = _top_modules(files)
    if modules:
        return modules[0]
    dirs = python_dirs(files)
    return f"{dirs[0]}/" if dirs else None


# What marks the top of a project outside a repository: never looked above by discovery.
BOUND_MARKERS = (*PROJECT_MARKERS, "package.json")


def repository_top(start: Path) -> Path | None:
    """The nearest folder from ``start`` up that holds ``.git``; None outside a repository."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def project_root(start: Path) -> Path:
    """The project that contains ``start``: the nearest folder from ``start`` up with a project
    file, looking no higher than the repository's top level.

    Outside a repository the same walk is bounded by the nearest project file; the home folder
    and the filesystem root are never a project (a stray ``setup.cfg`` in a home directory must
    not become one). Without any, ``start`` is the project.
    """
    top = repository_top(start)
    home = _home()
    for directory in (start, *start.parents):
        if top is None and directory in (home, Path(directory.anchor)):
            break
        markers = PROJECT_MARKERS if top is not None else BOUND_MARKERS
        if any((directory / marker).is_file() for marker in markers):
            return directory
        if directory == top:
            break
    return start


def discovery_top(start: Path) -> Path | None:
    """The highest folder configuration discovery looks in from ``start``: the repository's top
    level, else (outside a repository) the project's folder when one is found, else no bound."""
    top = repository_top(start)
    if top is not None:
        return top
    root = project_root(start)
    if root != start or any((start / marker).is_file() for marker in BOUND_MARKERS):
        return root
    return None


def _home() -> Path | None:
    try:
        return Path.home()
    except (KeyError, RuntimeError):
        return None


def _has_coverage_config(files: Files) -> bool:
    if files.is_file(".coveragerc") or files.is_file(".coveragerc.toml"):
        return True
    for name, marker in (
        ("pyproject.toml", "[tool.coverage"),
        ("setup.cfg", "[coverage:"),
        ("tox.ini", "[coverage:"),
    ):
        if marker in (files.read(name) or ""):
            return True
    return False


def coverage_sources(files: Files) -> list[str]:
    """What zero-config measures: ``src``, else the top-level packages and modules that are not
    tests."""
    if files.is_dir("src"):
        return ["src"]
    dirs = [
        d for d in python_dirs(files) if d not in TEST_DIRS and files.is_file(f"{d}/__init__.py")
    ]
    modules = [
        m.removesuffix(".py")
        for m in _top_modules(files)
        if not (m.startswith("test_") or m.endswith("_test.py") or m in ("conftest.py", "setup.py"))
    ]
    return dirs + modules


def _src_packages(now: Files, sources: list[str]) -> list[str]:
    """With ``src`` measured, the packages and modules in it by name too: coverage.py measures
    a folder only where it is, and a src-layout project installed with ``pip install .`` (as
    tox builds its environments) is tested from its installed copy, which a name finds
    (reports/coverage/copies.py counts a copy with the project's bytes as the project's).
    A name that is also a folder or file at the root would be read as that, so it is left out."""
    if "src" not in sources:
        return []
    names = [
        name
        for name, folder in now.entries("src")
        if (folder and _holds_python(now, f"src/{name}")) or (not folder and name.endswith(".py"))
    ]
    out = []
    for name in sorted(names):
        module = name.removesuffix(".py")
        shadowed = now.is_dir(module) or now.is_file(module) or now.is_file(f"{module}.py")
        ours = module.isidentifier() and not module.startswith(("__", "test_"))
        if ours and module not in ("conftest", "setup") and not shadowed and module not in sources:
            out.append(module)
    return out


def _holds_python(files: Files, folder: str, depth: int = 3) -> bool:
    """Whether ``folder`` is a package, or a namespace package's folder (opentelemetry's
    ``src/opentelemetry``, review 13): Python files in it or in folders below, a few deep."""
    entries = files.entries(folder)
    if any(not sub and name.endswith(".py") for name, sub in entries):
        return True
    return depth > 1 and any(
        sub and name.isidentifier() and _holds_python(files, f"{folder}/{name}", depth - 1)
        for name, sub in entries
    )


def _lint_gate(linter: Linter, py: str, law: Files) -> dict[str, Any]:
    """The lint gate of zero-config. With no linter the project declares (ruff's error rules
    alone), the folders its pytest settings keep pytest out of are left out too: files kept
    broken on purpose fail ruff's syntax check as they fail compileall."""
    gate = linter.gate(py)
    skipped = _kept_out(law)
    if linter.tool == "ruff" and linter.config is None and skipped:
        excludes = " ".join(f"--extend-exclude {shlex.quote(name)}" for name in skipped)
        gate["command"] = gate["command"].removesuffix(" .") + f" {excludes} ."
    return gate


def _kept_out(law: Files) -> list[str]:
    """The folders (names or paths, globs) the base's pytest settings keep pytest out of
    (``norecursedirs``), besides pytest's defaults and hidden names (``.*`` would match
    ``./``)."""
    from pytest_agentgate.integrity.tests_python import DEFAULT_NORECURSE, read_settings

    return sorted(
        {
            n.strip("/")
            for n in read_settings(law.read).norecursedirs
            if n not in DEFAULT_NORECURSE and n.strip("/") and not n.startswith(".")
        }
    )


def _not_compiled(law: Files) -> str | None:
    """compileall's ``-x``: the folders the project's own pytest settings keep pytest out of
    (``norecursedirs``, where a parser's tests keep files that do not compile on purpose: parso's
    ``normalizer_issue_files``), and the files its pre-commit configuration gives none of its
    hooks (the top-level ``exclude:``: pycodestyle's ``^testing/data/``, review 16); None when
    there are none. Read from the base (``law``): the change cannot hide a file of its own so.
    compileall matches the paths it makes from the folders it is given (``testing/data/E90.py``),
    the paths pre-commit matches."""
    found: list[str] = []
    flags = ""
    exclude = pre_commit_exclude(law)
    if exclude is not None:
        # Global flags (pre-commit's verbose `(?x)^(...)$` blocks) must open the expression.
        match = re.match(r"\(\?[aiLmsux]+\)", exclude)
        if match is not None:
            flags, exclude = match.group(), exclude[match.end() :]
        # A verbose expression may end in a comment, which would swallow the group's close.
        found.append(f"(?:{exclude}\n)" if "x" in flags else f"(?:{exclude})")
    names = _kept_out(law)
    if names:
        globs = "|".join(
            "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in name)
            for name in names
        )
        found.append(f"(^|/)({globs})/")
    if not found:
        return None
    combined = flags + "|".join(found)
    try:
        re.compile(combined)
    except (re.error, RecursionError, OverflowError):
        return None if not names else found[-1]
    return combined


def python_defaults(
    root: Path, python: str | None = None, base: Files | None = None
) -> dict[str, Any]:
    """The config document a Python project gets when it has none (what `agentgate init` writes).

    ``base``: the project's files at the change's base, whose detection is the law (tree.py):
    its linter lints (the change's own, if another tool, is added as a gate ``lint-TOOL``), its
    coverage settings decide whether agentgate names what coverage measures, and the change may
    add folders to compile and packages to measure, never take the base's away but by deleting
    them."""
    py = python or "python"
    now = OnDisk(root)
    sides: list[Files] = [now] if base is None else [base, now]
    law = sides[0]
    targets = _still_there(
        now, [t for side in sides for t in python_dirs(side) + _top_modules(side)]
    )
    cov = f"{py} -m coverage run --branch --data-file={STATE_DIR}/.coverage"
    sources = _still_there(now, [s for side in sides for s in coverage_sources(side)], module=True)
    if not _has_coverage_config(law) and sources:
        cov += " --source=" + ",".join(sources + _src_packages(now, sources))
    junit = f"{STATE_DIR}/junit.xml"
    skip = _not_compiled(law)
    build = f"{py} -m compileall -q " + (f"-x {shlex.quote(skip)} " if skip else "")
    gates: dict[str, Any] = {
        "build": {
            "command": build + " ".join(map(shlex.quote, targets or ["."])),
            # The bytecode compileall writes goes to agentgate's folder, never into the
            # project's: a `__pycache__` in a folder of test data broke pycodestyle's own tests
            # (review 16).
            "env": {"PYTHONPYCACHEPREFIX": f"{STATE_DIR}/pycache"},
        },
        "lint": _lint_gate(declared_linter(law), py, law),
        "test": {
            "command": f"{cov} -m pytest{_NO_COV if _has_pytest_cov() else ''}"
            f"{_IN_PROCESS if _runs_xdist(law) else ''} --junitxml={junit} -o junit_family=xunit1",
            "report": junit,
        },
        "coverage": {"report": f"{STATE_DIR}/.coverage", "format": "coverage-data"},
    }
    if base is not None:
        added = added_linter(root, base)
        if added is not None:
            gates[f"lint-{added.tool}"] = {"kind": "lint", **added.gate(py)}
    return {"profile": "strict", "gates": gates}


# pytest-cov, when the project's pytest settings turn it on (`addopts = --cov=pkg`, or a plugin
# such as pytest-enabler), starts a coverage.py of its own inside the tests' process, which
# pauses the gate's `coverage run` for the whole session: the gate's data held what ran before
# (review 15: arrow's 99.93% read as 0%, jaraco.functools' 100% as 32%). Its own thresholds
# (`--cov-fail-under`) are replaced by the gate's.
_NO_COV = " --no-cov"


# pytest-xdist, when the project's settings turn it on (`addopts = -n 2`), runs the tests in
# worker processes `coverage run` does not measure: 0% of a fully covered package (reviews 24
# and 25). `-n 0` after the project's options runs them in the measured process.
_IN_PROCESS = " -n 0"


def _runs_xdist(files: Files) -> bool:
    """Whether the project's pytest settings hand its tests to pytest-xdist's workers (``-n``,
    ``--numprocesses``, ``--dist`` in ``addopts``), and xdist is installed beside agentgate
    (``-n`` is an option of its own: review 26's `-p no:xdist` project refused it)."""
    if importlib.util.find_spec("xdist") is None:
        return False
    for name in ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml",
                 "tox.ini", "setup.cfg"):  # fmt: skip
        text = files.read(name) or ""
        for line in re.findall(r"^\s*addopts\s*=.*(?:\n[ \t]+.*)*", text, re.MULTILINE):
            if "no:xdist" in line:
                return False
            if re.search(r"(?:^|[\s\"'=\[,])(?:-n\s*\S|--numprocesses|--dist)", line):
                return True
    return False


def _has_pytest_cov() -> bool:
    """Whether pytest-cov is installed beside agentgate, where zero-config's commands run
    (``--no-cov`` is an option of pytest-cov's: pytest refuses it where pytest-cov is not)."""
    return importlib.util.find_spec("pytest_cov") is not None


def added_linter(root: Path, base: Files) -> Linter | None:
    """The linter the project declares now when it is another tool than the one its files at
    ``base`` declare: it lints too, beside the base's."""
    law, now = declared_linter(base), declared_linter(root)
    return now if now.tool != law.tool else None


def _still_there(now: Files, names: list[str], *, module: bool = False) -> list[str]:
    """``names`` once each, in order, those on the disk now (a folder, a file; with ``module``,
    a module ``NAME.py`` too)."""
    out: list[str] = []
    for name in names:
        there = now.is_dir(name) or now.is_file(name) or (module and now.is_file(f"{name}.py"))
        if there and name not in out:
            out.append(name)
    return out


def zero_config(root: Path, base: Files | None = None) -> tuple[dict[str, Any], str] | None:
    """Defaults for the project at ``root`` run with this interpreter (or the one named for the
    gate's commands, ``AGENTGATE_PYTHON``: the GitHub Action's), and why it was detected;
    ``base``: its files at the change's base (:func:`python_defaults`), where detection is the
    law: a project the base has is one whatever the change does to its files (red team 56 took
    pyproject.toml away and marked each code folder as a virtual environment: nothing was
    gated)."""
    marker = (is_python_project(base) if base is not None else None) or is_python_project(root)
    if marker is None:
        return None
    python = command_python() or sys.executable
    return python_defaults(root, shlex.quote(python), base), marker
