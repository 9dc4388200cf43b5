"""Settings the environment gives the tools, past the project's files: ``environment-loosened``.

pytest and coverage.py read options from environment variables as well as from the project's
files: ``PYTEST_ADDOPTS="-k 'not slow'"`` deselects as ``addopts`` does, ``PYTEST_PLUGINS``
loads a plugin that can rewrite results, ``COVERAGE_RCFILE`` replaces the project's coverage
settings (an ``exclude_lines`` there hides whatever it names). A change to the files is judged
against the base; a variable set in the shell that runs ``agentgate verify``, or in a harness's
environment that runs the stop hook, is judged by no one, and the base's test count, collected
under the same environment, moves with it. So the variables that choose what is measured are
findings of the gate that runs under them, whichever door it is.

What stays allowed: options that only change how pytest reports (``--color=yes``, ``-v``,
``-n 4``), and ``COVERAGE_RCFILE`` or ``COVERAGE_PROCESS_START`` naming the project's own
coverage settings file. A project that means such a setting writes it in the gate's ``env:``
in ``agentgate.yml``, where the base's configuration governs it.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

from pytest_agentgate.integrity.hooks import RERUN_OPTIONS, SELECTION_OPTIONS
from pytest_agentgate.integrity.model import IntegrityFinding, Scan

RULE = "environment-loosened"
# pytest options that choose the configuration, the plugins or the conftest files pytest reads.
SETTINGS_OPTIONS = (
    "-c",
    "--config-file",
    "-o",
    "--override-ini",
    "-p",
    "--rootdir",
    "--confcutdir",
    "--noconftest",
    "--continue-on-collection-errors",
    "--pyargs",
)
# Variables that name a coverage settings file; the project's own may be named.
COVERAGE_FILES_ENV = ("COVERAGE_RCFILE", "COVERAGE_PROCESS_START")
COVERAGE_FILES = (".coveragerc", "setup.cfg", "tox.ini", "pyproject.toml")
# Short options that take a value, which may be written attached: `-knot slow`, `-rxs`.
_SHORT_VALUED = ("-k", "-m", "-c", "-o", "-p", "-r", "-W", "-n")


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    yield from findings(scan.environ, scan.root)


def findings(environ: Mapping[str, str], root: Path) -> Iterator[IntegrityFinding]:
    """The environment's settings that choose what pytest and coverage.py measure."""
    addopts = environ.get("PYTEST_ADDOPTS", "")
    for option in dict.fromkeys(_options(addopts)):
        if option in SELECTION_OPTIONS:
            what = "tests are left out by the caller, not by the project's suite"
        elif option in RERUN_OPTIONS:
            what = "failures are retried until they pass"
        elif option in SETTINGS_OPTIONS:
            what = "pytest reads settings, plugins or conftest files the project does not give it"
        else:
            continue
        yield IntegrityFinding(RULE, f"PYTEST_ADDOPTS in the environment has {option}: {what}")
    plugins = environ.get("PYTEST_PLUGINS", "").strip()
    if plugins:
        yield IntegrityFinding(
            RULE,
            f"PYTEST_PLUGINS={_shown(plugins)} in the environment loads plugins the project "
            "does not: a plugin can rewrite any test's result",
        )
    for name in COVERAGE_FILES_ENV:
        value = environ.get(name, "")
        if value and not _projects_own(value, root):
            yield IntegrityFinding(
                RULE,
                f"{name}={_shown(value)} in the environment: coverage.py reads its settings "
                "from that file, not from the project's",
            )


def _options(addopts: str) -> list[str]:
    """The options in a PYTEST_ADDOPTS value, by name: ``-knot slow`` and ``--deselect=x`` too."""
    try:
        words = shlex.split(addopts)
    except ValueError:
        words = addopts.split()
    found = []
    for word in words:
        if word.startswith("--"):
            found.append(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1:
            # `-vx` is -v and -x; `-knot` is -k with its value, `-vrx` is -v, then -r with its.
            for letter in word[1:]:
                found.append(f"-{letter}")
                if found[-1] in _SHORT_VALUED:
                    break
    return found


def _projects_own(value: str, root: Path) -> bool:
    path = Path(value) if Path(value).is_absolute() else root / value
    try:
        resolved = path.resolve()
        return resolved.parent == root.resolve() and resolved.name in COVERAGE_FILES
    except (OSError, RuntimeError):  # a link loop
        return False


def _shown(value: str) -> str:
    return value if len(value) <= 80 else value[:79] + "…"
