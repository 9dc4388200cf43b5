"""Zero configuration: recognise a Python project and gate it with compileall, ruff, pytest
and coverage, the tools this package installs with itself."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from pytest_agentgate.linters import declared_linter
from pytest_agentgate.state.storage import STATE_DIR

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini")
SKIP_DIRS = {"node_modules", "build", "dist", "site-packages", "__pycache__", "htmlcov"}
TEST_DIRS = {"tests", "test", "testing"}


def _is_venv(path: Path) -> bool:
    """A virtualenv/venv (``pyvenv.cfg``) or a conda environment (``conda-meta/``)."""
    return (path / "pyvenv.cfg").exists() or (path / "conda-meta").is_dir()


def _skipped(entry: Path) -> bool:
    return (
        entry.name.startswith(".")
        or entry.name in SKIP_DIRS
        or entry.name.endswith(".egg-info")
        or _is_venv(entry)
    )


def _has_python(directory: Path, depth: int = 4) -> bool:
    """Python files in ``directory`` or a few levels below (namespace packages have no
    ``__init__.py``), never looking into environments, caches or hidden folders."""
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return False
    if any(e.suffix == ".py" and e.is_file() for e in entries):
        return True
    return depth > 1 and any(
        e.is_dir() and not _skipped(e) and _has_python(e, depth - 1) for e in entries
    )


def python_dirs(root: Path) -> list[str]:
    """Top-level directories holding Python code, tests included, in name order."""
    return [
        entry.name
        for entry in sorted(root.iterdir())
        if entry.is_dir() and not _skipped(entry) and _has_python(entry)
    ]


def _top_modules(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("*.py") if p.is_file())


def is_python_project(root: Path) -> str | None:
    """The file or folder that shows this is a Python project, or None."""
    for marker in PROJECT_MARKERS:
        if (root / marker).is_file():
            return marker
    modules = _top_modules(root)
    if modules:
        return modules[0]
    dirs = python_dirs(root)
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


def _has_coverage_config(root: Path) -> bool:
    if (root / ".coveragerc").is_file():
        return True
    for name, marker in (
        ("pyproject.toml", "[tool.coverage"),
        ("setup.cfg", "[coverage:"),
        ("tox.ini", "[coverage:"),
    ):
        path = root / name
        try:
            if path.is_file() and marker in path.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False


def _coverage_sources(root: Path) -> list[str]:
    if (root / "src").is_dir():
        return ["src"]
    dirs = [
        d for d in python_dirs(root) if d not in TEST_DIRS and (root / d / "__init__.py").exists()
    ]
    modules = [
        m.removesuffix(".py")
        for m in _top_modules(root)
        if not (m.startswith("test_") or m.endswith("_test.py") or m in ("conftest.py", "setup.py"))
    ]
    return dirs + modules


def python_defaults(root: Path, python: str | None = None) -> dict[str, Any]:
    """The config document a Python project gets when it has none (what `agentgate init` writes)."""
    py = python or "python"
    targets = python_dirs(root) + _top_modules(root) or ["."]
    cov = f"{py} -m coverage run --branch --data-file={STATE_DIR}/.coverage"
    if not _has_coverage_config(root) and (sources := _coverage_sources(root)):
        cov += " --source=" + ",".join(sources)
    junit = f"{STATE_DIR}/junit.xml"
    return {
        "profile": "strict",
        "gates": {
            "build": {"command": f"{py} -m compileall -q " + " ".join(map(shlex.quote, targets))},
            "lint": declared_linter(root).gate(py),
            "test": {
                "command": f"{cov} -m pytest -q --junitxml={junit} -o junit_family=xunit1",
                "report": junit,
            },
            "coverage": {"report": f"{STATE_DIR}/.coverage", "format": "coverage-data"},
        },
    }


def zero_config(root: Path) -> tuple[dict[str, Any], str] | None:
    """Defaults for the project at ``root`` run with this interpreter, and why it was detected."""
    marker = is_python_project(root)
    if marker is None:
        return None
    return python_defaults(root, shlex.quote(sys.executable)), marker
