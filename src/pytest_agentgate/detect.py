"""Zero configuration: recognise a Python project and gate it with compileall, ruff, pytest
and coverage, the tools this package installs with itself."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from .config import STATE_DIR

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini")
SKIP_DIRS = {"node_modules", "build", "dist", "site-packages", "__pycache__", "htmlcov"}
TEST_DIRS = {"tests", "test", "testing"}


def _is_venv(path: Path) -> bool:
    return (path / "pyvenv.cfg").exists()


def python_dirs(root: Path) -> list[str]:
    """Top-level directories holding Python code, tests included, in name order."""
    found = []
    for entry in sorted(root.iterdir()):
        if (
            not entry.is_dir()
            or entry.name.startswith(".")
            or entry.name in SKIP_DIRS
            or entry.name.endswith(".egg-info")
            or _is_venv(entry)
        ):
            continue
        if any(entry.glob("*.py")) or any(entry.glob("*/__init__.py")):
            found.append(entry.name)
    return found


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
        "profile": "standard",
        "gates": {
            "build": {"command": f"{py} -m compileall -q " + " ".join(map(shlex.quote, targets))},
            "lint": {"command": f"{py} -m ruff check --output-format json .", "format": "ruff"},
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
