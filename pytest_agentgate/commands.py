"""What agentgate knows about the commands a project configures: which tool a command runs, and
where it writes its report. One home, so the CLI and the pytest plugin read a command alike."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

PYTEST_NAMES = ("pytest", "py.test", "pytest.exe")
# Every command agentgate runs gets this run's id in this variable; agentgate's pytest plugin
# writes it into the JUnit report (pytest_plugin/witness.py), which the test gate checks.
RUN_ID_ENV = "AGENTGATE_RUN_ID"
# Why the pytest door ran no test (pytest_plugin/session.py): its integrity gate rejected the
# change before collection. The test gate says so, not "a partial run" (gates/test.py).
STOPPED_BY_INTEGRITY = "stopped before the first test by the integrity gate"
# The Python the gate's commands run with, when it is not the one agentgate runs in: the GitHub
# Action runs agentgate from a virtualenv of its own, where a pull request cannot put a copy of
# its own, and the project's commands with the Python the workflow set up (setup-python's, or a
# virtualenv it put on PATH), where the action installed agentgate's pytest plugin too.
COMMAND_PYTHON_ENV = "AGENTGATE_PYTHON"


def words(command: str) -> list[str]:
    """The command's words as the shell would split them; a command with unbalanced quotes is
    split on white space instead of being refused."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def runs_pytest(command: str | None) -> bool:
    """Whether ``command`` runs pytest (``pytest``, ``py.test``, ``python -m pytest``, a path)."""
    if not command:
        return False
    return "-m pytest" in command or any(Path(w).name in PYTEST_NAMES for w in words(command))


def command_python(environ: Mapping[str, str] | None = None) -> str | None:
    """The Python the gate's commands run with, named by ``AGENTGATE_PYTHON`` (absolute), when
    it is not the one agentgate runs in; None when it is not named."""
    python = (os.environ if environ is None else environ).get(COMMAND_PYTHON_ENV, "")
    return os.path.abspath(python) if python else None


def python_environment(python: str) -> str | None:
    """The virtual environment of the Python ``python`` (its folder's parent, when that has a
    ``pyvenv.cfg``); None for a Python of no virtual environment (setup-python's, a system's)."""
    prefix = os.path.dirname(os.path.dirname(python))
    return prefix if os.path.isfile(os.path.join(prefix, "pyvenv.cfg")) else None


def runs_this_interpreter(command: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``command`` runs pytest with the Python agentgate runs in, or with the one named
    for the gate's commands (:func:`command_python`), so that agentgate's own pytest plugin is
    loaded in it: ``python -m pytest`` or ``pytest`` from that environment."""
    split = words(command)
    if not split:
        return False
    search = (env or {}).get("PATH", os.environ.get("PATH", ""))
    found = shutil.which(split[0], path=search) if os.sep not in split[0] else split[0]
    if found is None:
        return False
    pythons = [sys.executable]
    if (named := command_python()) is not None:
        pythons.append(named)
    try:
        program = Path(found).resolve()
    except OSError:
        return False
    for python in pythons:
        folder = Path(python).parent
        if program.parent == folder.resolve() or Path(found).absolute().parent == folder:
            return True
    return False


def junit_in_command(command: str) -> str | None:
    """The path a command's own ``--junitxml`` / ``--junit-xml`` option writes, if any."""
    try:
        split = shlex.split(command)
    except ValueError:
        return None
    for index, word in enumerate(split):
        for option in ("--junitxml", "--junit-xml"):
            if word.startswith(option + "="):
                return word.split("=", 1)[1] or None
            if word == option and index + 1 < len(split):
                return split[index + 1]
    return None


# `coverage run` options (and pytest-cov's) that decide what is measured, as measurement options.
_COVERAGE_RUN_OPTIONS = {
    "--source": "source",
    "--include": "include",
    "--omit": "omit",
    "--rcfile": "rcfile",
    "--cov": "source",
    "--cov-config": "rcfile",
}


def coverage_options(command: str | None, root: Path) -> dict[str, Any] | None:
    """How the test command measures coverage, for a door that must measure the same itself:
    ``coverage run [--branch] [--source=..] [--include=..] [--omit=..] [--rcfile=..] -m pytest``
    or ``pytest --cov=.. [--cov-branch] [--cov-config=..]``. Paths are made absolute against
    ``root`` (the command's folder). None: the command measures no coverage (or cannot be read).

    Keys: ``root``; ``source``, ``include``, ``omit`` (lists, maybe empty); ``branch`` (True, or
    None for the project's own configuration); ``rcfile`` (a path, or None for coverage.py's
    defaults, found from ``root``).
    """
    if not command:
        return None
    try:
        split = shlex.split(command)
    except ValueError:
        return None
    names = [Path(w).name for w in split]
    coverage_run = "run" in split and any(
        n in ("coverage", "coverage3")
        or (n.startswith("python") and split[i + 1 : i + 3] == ["-m", "coverage"])
        for i, n in enumerate(names)
    )
    pytest_cov = runs_pytest(command) and any(w == "--cov" or w.startswith("--cov=") for w in split)
    if not (coverage_run or pytest_cov):
        return None
    found: dict[str, Any] = {
        "root": str(root),
        "source": [],
        "include": [],
        "omit": [],
        "branch": None,
        "rcfile": None,
    }
    words_left = iter(split)
    for word in words_left:
        if word in ("--branch", "--cov-branch"):
            found["branch"] = True
            continue
        option, eq, value = word.partition("=")
        key = _COVERAGE_RUN_OPTIONS.get(option)
        if key is None:
            continue
        if not eq:
            if option == "--cov":
                continue  # bare --cov: the project's own configuration says what to measure
            value = next(words_left, "")
        if key == "rcfile":
            found["rcfile"] = str(root / value)
        else:
            found[key].extend(_rooted(p, root, key) for p in value.split(",") if p)
    return found


def _rooted(value: str, root: Path, key: str) -> str:
    """A path or pattern made absolute against the command's folder; a ``source`` that is no
    folder there is a package name, as coverage.py reads it."""
    if value.startswith("*") or os.path.isabs(value):
        return value
    if key == "source" and not (root / value).exists():
        return value
    return str(root / value)


# -- the test command without coverage (agentgate verify --coverage-cost) ----------------------

_OPERATORS = frozenset({"&&", "||", ";", "|", "&"})
_COVERAGE_TOOLS = ("coverage", "coverage3")
# `coverage run` flags, and its options that take the next word as their value without "=".
_COVERAGE_RUN_FLAGS = frozenset(
    {"-a", "--append", "--branch", "-L", "--pylib", "-p", "--parallel-mode", "--timid"}
)
_COVERAGE_RUN_VALUED = frozenset(
    {
        "--concurrency",
        "--context",
        "--data-file",
        "--debug",
        "--include",
        "--omit",
        "--rcfile",
        "--save-signal",
        "--source",
    }
)
# pytest-cov's options (7.x) that take a value, and its flags; "--cov" takes a value only when
# the next word is no option. Another --cov-* option cannot be told apart from its value.
_PYTEST_COV_VALUED = frozenset(
    {"--cov-report", "--cov-config", "--cov-fail-under", "--cov-context", "--cov-precision"}
)
_PYTEST_COV_FLAGS = frozenset({"--cov-branch", "--cov-append", "--cov-reset"})
_JUNIT_OPTIONS = ("--junitxml", "--junit-xml")
# What the shell would expand: such a word cannot be quoted back as it was written.
_SHELL_SPECIAL = frozenset("$`*?[~")


class _Drop:
    """A step of the command that only runs coverage.py (``coverage xml``): left out."""


def without_coverage(command: str, env: Mapping[str, str] | None = None) -> str | None:
    """The test command with its coverage measurement left out: what ``agentgate verify
    --coverage-cost`` times against the test gate's own run.

    ``[python -m] coverage run [options] -m MODULE ARGS`` becomes ``python -m MODULE ARGS``
    (``coverage`` alone runs with the Python beside it on PATH); ``pytest --cov..`` loses its
    ``--cov`` options and gets ``--no-cov``; steps that only run coverage.py (``coverage xml``,
    ``coverage combine``) are dropped. pytest's ``--junitxml`` is dropped too, so the timed run
    writes no report the gate reads. None when the command cannot be read that way: no step
    measures coverage, a redirection or subshell, a line break, or a word the shell would
    expand.
    """
    split = _steps(command)
    if split is None:
        return None
    steps, joins = split
    kept: list[tuple[str, list[str]]] = []
    measured = False
    for join, step in zip(["", *joins], steps, strict=True):
        derived = _step_without_coverage(step, env)
        if derived is None:
            return None
        if isinstance(derived, _Drop):
            continue
        words_out, changed = derived
        measured = measured or changed
        kept.append((join, words_out))
    if not measured or not kept:
        return None
    parts: list[str] = []
    for index, (join, step) in enumerate(kept):
        if any(_SHELL_SPECIAL & set(word) for word in step):
            return None
        if index:
            parts.append(join)
        parts.append(" ".join(quote_word(word) for word in step))
    return " ".join(parts)


def _steps(command: str) -> tuple[list[list[str]], list[str]] | None:
    """The words of each step of a command list, and the operators between them; None for a
    command that is no plain list of commands (a redirection, a subshell, a comment, several
    lines, unbalanced quotes)."""
    if "\n" in command or "\r" in command:
        return None  # several commands, one per line: shlex would read them as one
    try:
        tokens = _shell_words(command, posix=True)
        # The same words with their quotes: a quoted `'&&'` is an argument, not an operator,
        # and the first list cannot tell them apart.
        quoted = _shell_words(command, posix=False)
    except ValueError:
        return None
    if [t for t in tokens if t in _OPERATORS] != [q for q in quoted if q in _OPERATORS]:
        return None
    steps: list[list[str]] = [[]]
    joins: list[str] = []
    for token in tokens:
        if token in _OPERATORS:
            joins.append(token)
            steps.append([])
        elif token and set(token) <= set("();<>|&"):
            return None  # a redirection or a subshell: not a plain list of commands
        elif token.startswith("#"):
            return None  # a comment: the shell would not run what follows
        else:
            steps[-1].append(token)
    return steps, joins


# -- the test command as a collection (the integrity gate's count at the base) ----------------

# agentgate's pytest plugin that writes what a collection selected (pytest_plugin/count.py),
# into the file this variable names. pytest's cache is left on: the collection runs in a
# checkout of its own, and a project's `--ff` or `--sw` in addopts needs it.
COUNT_PLUGIN = "pytest_agentgate.pytest_plugin.count"
COUNT_FILE_ENV = "AGENTGATE_COUNT_FILE"
# More test functions than this are not listed (the base's collected and deselected ones, the
# run's): no comparison by name, no huge file; the counts are still compared.
MAX_LISTED_TESTS = 20000
# The run's lists go further: a change that generates tests past the base's limit must not
# turn the comparison off (red team 39: 20,001 trivial tests, and the lists were null).
MAX_RUN_LISTED_TESTS = 10 * MAX_LISTED_TESTS
COUNT_OPTIONS = ("--collect-only", "-q", "-p", COUNT_PLUGIN)
# The gate's own options (pytest --agentgate): never part of a count.
_GATE_FLAGS = frozenset({"--agentgate-no-run"})
_GATE_VALUED = frozenset({"--agentgate-json"})


def collection_command(command: str, env: Mapping[str, str] | None = None) -> str | None:
    """The test command as a pytest collection that runs no test: what the integrity gate runs
    in a checkout of the base to count the tests the base selects.

    The command's one pytest step, without coverage and the JUnit report (as
    :func:`without_coverage` takes them out) and without the gate's own ``--agentgate``
    options, with :data:`COUNT_OPTIONS` added. Steps that only run coverage.py are left out.
    None when the command does not run pytest, runs anything else beside it (``cd sub &&``,
    ``make &&``), or cannot be read (see :func:`without_coverage`).
    """
    if not runs_pytest(command):
        return None
    split = _steps(command)
    if split is None:
        return None
    kept: list[list[str]] = []
    for step in split[0]:
        derived = _step_without_coverage(step, env)
        if derived is None:
            return None
        if not isinstance(derived, _Drop):
            kept.append(derived[0])
    if len(kept) != 1 or not runs_pytest(" ".join(kept[0])) or "--" in kept[0]:
        return None
    words_out = [*_without_gate_options(kept[0]), *COUNT_OPTIONS]
    if any(_SHELL_SPECIAL & set(word) for word in words_out):
        return None
    return " ".join(quote_word(word) for word in words_out)


def _shell_words(command: str, *, posix: bool) -> list[str]:
    lexer = shlex.shlex(command, posix=posix, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # a "#" inside a word is the word's; one starting a word is refused
    return list(lexer)


def _without_gate_options(args: list[str]) -> list[str]:
    dropped = _without_options(
        args, valued=_GATE_VALUED, optional=("--agentgate",), flags=_GATE_FLAGS
    )
    assert dropped is not None  # nothing is refused
    return dropped[0]


def _without_options(
    args: list[str],
    *,
    valued: Collection[str],
    optional: Collection[str],
    flags: Collection[str],
    refuse: Callable[[str], bool] = lambda option: False,
) -> tuple[list[str], set[str]] | None:
    """``args`` without the options named (and their values: always for ``valued``, the next
    word unless it is an option for ``optional``, none for ``flags``), and which of them were
    there; None when an option is one ``refuse`` says cannot be read."""
    out: list[str] = []
    seen: set[str] = set()
    index = 0
    while index < len(args):
        word = args[index]
        option = word.split("=", 1)[0]
        index += 1
        if option in optional:
            if "=" not in word and index < len(args) and not args[index].startswith("-"):
                index += 1  # `--cov src`: src is the option's value, not a test path
        elif option in valued:
            if "=" not in word:
                index += 1
        elif option in flags:
            pass
        elif refuse(option):
            return None
        else:
            out.append(word)
            continue
        seen.add(option)
    return out, seen


def quote_word(word: str) -> str:
    """A word quoted for ``sh``; a leading ``NAME=value`` assignment stays an assignment."""
    name, eq, value = word.partition("=")
    if eq and name.isidentifier() and not name.startswith("-"):
        return f"{name}={shlex.quote(value)}"
    return shlex.quote(word)


def _step_without_coverage(
    step: list[str], env: Mapping[str, str] | None
) -> tuple[list[str], bool] | _Drop | None:
    """One step of a command list: (its words, whether coverage was taken out), dropped, or
    None when it measures coverage in a way this cannot undo."""
    prefix: list[str] = []
    rest = list(step)
    while rest and "=" in rest[0] and rest[0].split("=", 1)[0].isidentifier():
        prefix.append(rest.pop(0))  # VAR=value before the program
    if not rest:
        return prefix, False
    program = Path(rest[0]).name
    if program.startswith("python") and rest[1:3] == ["-m", "coverage"]:
        python: str | None = rest[0]
        args = rest[3:]
    elif program in _COVERAGE_TOOLS:
        python = _python_beside(rest[0], env)
        args = rest[1:]
    else:
        if runs_pytest(" ".join(rest)):
            stripped = _pytest_without_cov(rest)
            return None if stripped is None else (prefix + stripped[0], stripped[1])
        return step, False
    if not args or args[0] != "run":
        return _Drop()  # coverage combine / xml / json / report / erase ...
    target = _coverage_run_target(args[1:])
    stripped = None if target is None else _pytest_without_cov(target)
    if stripped is None or python is None:
        return None
    return [*prefix, python, *stripped[0]], True


def _coverage_run_target(args: list[str]) -> list[str] | None:
    """What ``coverage run ARGS`` runs, as the words after ``python``; None if unreadable."""
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-m", "--module"):
            return ["-m", *args[index + 1 :]] if index + 1 < len(args) else None
        if word in _COVERAGE_RUN_FLAGS or (word.startswith("--") and "=" in word):
            index += 1
        elif word in _COVERAGE_RUN_VALUED:
            index += 2
        elif word.startswith("-"):
            return None  # an option this does not know: its value cannot be told apart
        else:
            return args[index:]
    return None


def _pytest_without_cov(args: list[str]) -> tuple[list[str], bool] | None:
    """A pytest command line without pytest-cov's options and the JUnit report option;
    ``--no-cov`` added when it had ``--cov`` (a ``--cov`` in the project's addopts is off too)."""
    dropped = _without_options(
        args,
        valued={*_PYTEST_COV_VALUED, *_JUNIT_OPTIONS},
        optional=("--cov",),
        flags=_PYTEST_COV_FLAGS,
        # An option this does not know: its value cannot be told apart.
        refuse=lambda option: option.startswith("--cov-"),
    )
    if dropped is None:
        return None
    out, seen = dropped
    had_cov = "--cov" in seen
    if had_cov:
        out.append("--no-cov")
    return out, had_cov


def _python_beside(script: str, env: Mapping[str, str] | None) -> str | None:
    """The interpreter a ``coverage`` script runs with: its ``#!`` line when that names an
    interpreter by path (as pip writes it), else the Python in the script's folder."""
    search = (env or {}).get("PATH", os.environ.get("PATH", ""))
    found = shutil.which(script, path=search) if os.sep not in script else script
    if found is None:
        return None
    try:
        with open(found, "rb") as handle:
            first = handle.readline(1024)
    except OSError:
        return None
    if first.startswith(b"#!"):
        named = first[2:].split()
        if named and Path(os.fsdecode(named[0])).name.startswith("python"):
            interpreter = os.fsdecode(named[0])
            return interpreter if os.path.isfile(interpreter) else None
    folder = Path(found).resolve().parent
    for name in ("python3", "python"):
        if (folder / name).is_file():
            return str(folder / name)
    return None
