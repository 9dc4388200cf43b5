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
COVERAGE_FILES = (".coveragerc", ".coveragerc.toml", "setup.cfg", "tox.ini", "pyproject.toml")
# Short options that take a value, which may be written attached: `-knot slow`, `-rxs`.
_SHORT_VALUED = ("-k", "-m", "-c", "-o", "-p", "-r", "-W", "-n")


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    yield from findings(scan.environ, scan.root)


def findings(environ: Mapping[str, str], root: Path) -> Iterator[IntegrityFinding]:
    """The environment's settings that choose what pytest and coverage.py measure."""
    addopts = environ.get("PYTEST_ADDOPTS", "")
    said: set[str] = set()
    for option, value in option_pairs(addopts):
        if option in said:
            continue
        if option in SELECTION_OPTIONS:
            what = "tests are left out by the caller, not by the project's suite"
        elif option in RERUN_OPTIONS:
            what = "failures are retried until they pass"
        elif option in ("-p",) and not _loosening_plugin(value):
            continue  # pytest's own or an installed plugin; `no:cacheprovider`
        elif option in ("-o", "--override-ini") and not _loosening_ini(value):
            continue  # `-o cache_dir=...`, `-o console_output_style=...`
        elif option in SETTINGS_OPTIONS:
            what = "pytest reads settings, plugins or conftest files the project does not give it"
        else:
            continue
        said.add(option)
        yield IntegrityFinding(RULE, f"PYTEST_ADDOPTS in the environment has {option}: {what}")
    if (level := optimize_level(environ.get("PYTHONOPTIMIZE", ""))) > 0:
        plain = " and PYTEST_ADDOPTS has --assert=plain" if plain_asserts(addopts) else ""
        yield IntegrityFinding(
            RULE,
            f"PYTHONOPTIMIZE={_shown(environ['PYTHONOPTIMIZE'])} in the environment{plain}: "
            f"Python runs with -{'O' * min(level, 2)} and skips every assert statement pytest "
            "does not rewrite (the helpers' and the project's; with --assert=plain, the "
            "tests' own as well)",
        )
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


# pytest ini keys that choose what is collected, selected, or how a failure counts: a `-o` of
# one of these is the caller's suite, not the project's. The rest (cache_dir, log_*,
# console_output_style, junit_suite_name, ...) change where things go or how they read.
LOOSENING_INI = frozenset(
    {
        "addopts", "python_files", "python_classes", "python_functions", "testpaths",
        "norecursedirs", "pythonpath", "confcutdir", "filterwarnings", "xfail_strict",
        "usefixtures", "required_plugins", "empty_parameter_set_mark", "markers",
        "consider_namespace_packages", "collect_imported_tests", "strict_markers", "strict",
    }
)  # fmt: skip


def optimize_level(value: str) -> int:
    """The optimization level ``PYTHONOPTIMIZE=value`` gives Python: a number is the level,
    any other non-empty text is 1 (``-O``)."""
    value = value.strip()
    if not value:
        return 0
    try:
        return max(int(value), 0)
    except ValueError:
        return 1


def plain_asserts(options: str) -> bool:
    """Whether pytest options turn assertion rewriting off: ``--assert=plain``, ``--assert
    plain`` (the last one given wins)."""
    mode = None
    for option, value in option_pairs(options):
        if option == "--assert":
            mode = (value or "").strip()
    return mode == "plain"


def _loosening_ini(value: str | None) -> bool:
    key = (value or "").split("=", 1)[0].strip()
    return not key or key in LOOSENING_INI


def _loosening_plugin(value: str | None) -> bool:
    """``-p NAME``: a plugin neither pytest's own nor installed; ``-p no:NAME`` of agentgate's."""
    from pytest_agentgate.integrity.hooks import _installed_plugin

    name = (value or "").strip()
    if name.startswith("no:"):
        return "agentgate" in name
    return not name or not _installed_plugin(name)


def option_pairs(addopts: str) -> list[tuple[str, str | None]]:
    """Each option with its value where it takes one (``-p X``, ``-pX``, ``-o k=v``)."""
    try:
        words = shlex.split(addopts)
    except ValueError:
        words = addopts.split()
    pairs: list[tuple[str, str | None]] = []
    for i, word in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else None
        if word.startswith("--"):
            name, _, attached = word.partition("=")
            pairs.append((name, attached or following))
        elif word.startswith("-") and len(word) > 1:
            for j, letter in enumerate(word[1:], start=1):
                option = f"-{letter}"
                if option in _SHORT_VALUED:
                    pairs.append((option, word[j + 1 :] or following))
                    break
                pairs.append((option, None))
    return list(dict.fromkeys(pairs))


def _projects_own(value: str, root: Path) -> bool:
    path = Path(value) if Path(value).is_absolute() else root / value
    try:
        resolved = path.resolve()
        return resolved.parent == root.resolve() and resolved.name in COVERAGE_FILES
    except (OSError, RuntimeError):  # a link loop
        return False


def _shown(value: str) -> str:
    return value if len(value) <= 80 else value[:79] + "…"
