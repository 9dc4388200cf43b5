"""The project's own Python, not a Python: ``interpreter-replaced``.

The gate's commands name ``python`` (``python -m coverage run -m pytest``), and agentgate puts
the project's virtual environment first on their PATH (``engine.command_environment``): a
harness does not activate it. The environment is git-ignored and the agent's to write. A
``.venv/bin/python`` replaced by a shell script that runs the real interpreter decides, for the
test command alone, its environment, its arguments and the files it sees (red team 25: it set
``PYTHONPYCACHEPREFIX`` to a folder of fixed bytecode, then mounted one over ``__pycache__`` in
a mount namespace of its own), while agentgate itself, started through ``python3``, runs clean.

A virtual environment's interpreters are the base Python's executable, linked or copied
(``python -m venv``, ``virtualenv``, ``uv venv``): a program in a machine format (ELF, Mach-O,
PE). One that is a script, or any other text, is no interpreter a tool installed.

The linters the gates' commands run from that environment are programs too (``python -m
ruff`` runs ``.venv/bin/ruff``): their files must be as their ``RECORD`` hashes them
(:func:`linters_replaced`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_agentgate.commands import command_python, python_environment
from pytest_agentgate.integrity.model import IntegrityFinding, Scan

if TYPE_CHECKING:
    from pytest_agentgate.integrity.bytecode import Remembered

RULE = "interpreter-replaced"
# python, python3, python3.12, pythonw, pypy3, python.exe: not python3-config, a script anyway.
# What `python -m venv`, virtualenv and uv put in every environment's bin/.
_ALWAYS = frozenset({"python", "python3"})
_INTERPRETER = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)?)?w?(?:\.exe)?", re.IGNORECASE)
# How executables begin: ELF; Mach-O (32 and 64 bit, both byte orders, universal); PE.
_MACHINE_FORMATS = (
    b"\x7fELF",
    b"\xfe\xed\xfa\xce",
    b"\xfe\xed\xfa\xcf",
    b"\xce\xfa\xed\xfe",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
    b"MZ",
)


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    yield from findings(scan.root, scan.environ or None)
    commands = [g.command for g in scan.config.gates if g.command and g.enabled]
    yield from linters_replaced(scan.root, commands, scan.environ or None)


def findings(project: Path, environ: Mapping[str, str] | None = None) -> Iterator[IntegrityFinding]:
    """The interpreters of the project's virtual environment that the gate's commands run
    (agentgate's own, whose ``bin`` it puts first on their PATH, or the one activated) that are
    no programs, or that a shell passes over. Another environment in the project's folder is
    not run (review 16: python-slugify's stale `venv39/`, its pyenv Python uninstalled)."""
    root = project.resolve()
    env = os.environ if environ is None else environ
    python = command_python(env)
    if python is not None and (made := not_a_program(python)) is not None:
        # Wherever it is (red team 47: a script outside the project, named through a harness's
        # settings, that ran the tests and rewrote their report).
        yield IntegrityFinding(
            RULE,
            f"{python}, the interpreter AGENTGATE_PYTHON names for the gate's commands, is "
            f"{made}, not a Python",
            None,
        )
    for venv in _venvs_run(root, env):
        for path in interpreters(venv):
            made = not_a_program(path) or not_the_base(path, venv)
            if made is None:
                continue
            shown = Path(os.path.relpath(path, root)).as_posix()
            yield IntegrityFinding(
                RULE,
                f"{shown}, the interpreter the gate's commands run, is {made}, not a Python "
                "its environment was made with",
                shown,
            )


def _venvs_run(root: Path, env: Mapping[str, str]) -> list[str]:
    """The virtual environments in the project's folder that the gate's commands run:
    agentgate's own, the one activated (``VIRTUAL_ENV``), the one of the Python named for the
    commands (``AGENTGATE_PYTHON``: the Action's)."""
    from pytest_agentgate.state.task_env import project_venvs

    running = {os.path.realpath(sys.prefix)}
    if env.get("VIRTUAL_ENV"):
        running.add(os.path.realpath(env["VIRTUAL_ENV"]))
    python = command_python(env)
    if python is not None and (venv := python_environment(python)):
        running.add(os.path.realpath(venv))
    return [venv for venv in project_venvs(root) if venv in running]


# The linters a gate's command can name, each with the distributions whose files decide what
# it reports (flake8 runs pyflakes' and pycodestyle's checks; pylint, astroid's reading).
LINTERS: dict[str, tuple[str, ...]] = {
    "ruff": ("ruff",),
    "flake8": ("flake8", "pyflakes", "pycodestyle", "mccabe"),
    "pyflakes": ("pyflakes",),
    "pycodestyle": ("pycodestyle",),
    "pylint": ("pylint", "astroid"),
    "mypy": ("mypy",),
}
_LINTER_NAMED = re.compile(rf"(?<![\w.-])({'|'.join(LINTERS)})(?![\w-])")


def linters_replaced(
    project: Path, commands: list[str], environ: Mapping[str, str] | None = None
) -> Iterator[IntegrityFinding]:
    """The linters the gates' ``commands`` name (ruff, flake8, pylint, mypy, pycodestyle),
    installed in a virtual environment of the project's that the commands run, whose files
    are not as their ``RECORD`` has them (red team 50: ``.venv/bin/ruff``, the program ruff's
    ``python -m ruff`` runs, replaced by a script that printed ``[]``: zero errors), or
    that no installed package put there. Each file is hashed once as it is (a digest of its
    size, times and inode remembered, sealed, in the user's state directory): ruff's program
    is some 30 MB, and this runs at every verdict."""
    tools = sorted({t for command in commands for t in _LINTER_NAMED.findall(command)})
    if not tools:
        return
    root = project.resolve()
    for venv in _venvs_run(root, os.environ if environ is None else environ):
        for tool in tools:
            for path, made in _unlike_record(venv, tool):
                shown = _shown(path, root)
                yield IntegrityFinding(
                    RULE,
                    f"{shown}, of the {tool} a gate's command runs, is {made}: the linter "
                    f"reports what that file says, not what the code has; install it again "
                    f"(`pip install --force-reinstall {tool}`) and run the checks again",
                    shown if not shown.startswith("/") else None,
                )


def _shown(path: str, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path


def _unlike_record(venv: str, tool: str) -> Iterator[tuple[str, str]]:
    """(file, what it is) for the first file of each of ``tool``'s distributions in ``venv``
    that is not as its ``RECORD`` hashes it; for a ``tool`` no distribution installed, the
    program or package of that name there that no ``RECORD`` lists."""
    import glob

    from pytest_agentgate.integrity.bytecode import Remembered

    # The site folder of the venv's own Python: one made again for another Python keeps the
    # old one's folder, whose RECORDs hash the programs as they were (review 31).
    version = _venv_version(venv) or "*"
    sites = [
        os.path.realpath(f)
        for pattern in (
            f"lib/python{version}/site-packages",
            f"lib64/python{version}/site-packages",
        )
        for f in sorted(glob.glob(os.path.join(glob.escape(venv), pattern)))
    ]
    sites = list(dict.fromkeys(sites))
    wanted = set(LINTERS[tool])
    remembered = Remembered(Path(venv))
    found_dist = False
    for site in sites:
        for entry in _listdir(site):
            if not entry.endswith(".dist-info") or _dist_name(entry) not in wanted:
                continue
            found_dist = found_dist or _dist_name(entry) == tool
            unlike = _unlike(site, entry, remembered)
            if unlike is not None:
                yield unlike
    remembered.save()
    if found_dist:
        return
    for place in [
        os.path.join(venv, "bin", tool),
        *(os.path.join(site, name) for site in sites for name in (tool, f"{tool}.py")),
    ]:
        if os.path.lexists(place):
            yield place, "not installed by any package (no RECORD lists it)"
            return


def _venv_version(venv: str) -> str | None:
    """``3.11``: the Python version a virtual environment's ``pyvenv.cfg`` names, if any."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), "rb") as handle:
            text = handle.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        found = re.fullmatch(r"(\d+)\.(\d+)(?:\.\S*)?", value.strip())
        if key.strip().lower() in ("version", "version_info") and found:
            return f"{found[1]}.{found[2]}"
    return None


def _unlike(site: str, entry: str, remembered: Remembered) -> tuple[str, str] | None:
    """The first file the distribution's ``RECORD`` hashes that is not as hashed (bytecode
    gone is not: Python compiles the source again), with what it is; None when all are."""
    import hashlib

    from pytest_agentgate.state.task_env import file_digest, record_entries

    try:
        with open(os.path.join(site, entry, "RECORD"), "rb") as handle:
            record = handle.read(_MAX_RECORD + 1)
    except OSError:
        return os.path.join(site, entry, "RECORD"), "gone or unreadable"
    if len(record) > _MAX_RECORD:
        return os.path.join(site, entry, "RECORD"), "larger than agentgate reads"
    files: list[tuple[str, str]] = []
    stats: list[str] = []
    for name, digest in record_entries(record):
        path = os.path.normpath(os.path.join(site, name))
        try:
            st = os.stat(path)
        except OSError:
            if name.endswith(".pyc"):
                continue
            return path, "missing"
        files.append((path, digest))
        stats.append(
            f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{st.st_dev}\0{st.st_ctime_ns}"
        )
    key = (
        "record:"
        + hashlib.sha256(record + "\n".join(stats).encode("utf-8", "surrogateescape")).hexdigest()
    )
    if key in remembered:
        return None
    for path, digest in files:
        said = file_digest(path)
        if said is None:
            return path, "unreadable"
        if said != digest and not _compiled_again(path, remembered):
            return path, f"not as {entry}/RECORD hashes it (as it was installed)"
    remembered.add(key)
    return None


_MAX_RECORD = 4 << 20


def _compiled_again(path: str, remembered: Remembered) -> bool:
    """Whether the pyc ``path`` in ``__pycache__``, not the one the installer wrote, is one
    Python wrote again from its source (an environment copied without its files' times), or
    one it does not load (its header says its source changed): either way the source runs."""
    from pytest_agentgate.integrity.bytecode import read_unlike

    pyc = Path(path)
    tag = sys.implementation.cache_tag
    if pyc.suffix != ".pyc" or pyc.parent.name != "__pycache__" or f".{tag}." not in pyc.name:
        return False  # (another Python's bytecode: this one cannot tell)
    source = pyc.parent.parent / (pyc.name.partition(".")[0] + ".py")
    return source.is_file() and not read_unlike(source, pyc, remembered)


def _dist_name(entry: str) -> str:
    """``flake8`` for ``flake8-7.1.1.dist-info``."""
    name = entry.removesuffix(".dist-info").rpartition("-")[0] or entry
    return re.sub(r"[-_.]+", "_", name).lower()


def _listdir(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def interpreters(venv: str) -> list[str]:
    """The interpreters of the virtual environment ``venv``: its ``bin/python*`` (Windows:
    ``Scripts/python*.exe``), and the ``bin/python`` and ``bin/python3`` every environment has,
    whether they are there or not."""
    found: list[str] = []
    for folder in ("bin", "Scripts"):
        try:
            names = set(os.listdir(os.path.join(venv, folder)))
        except OSError:
            continue
        if folder == "bin":
            names |= _ALWAYS
        found.extend(
            os.path.join(venv, folder, n) for n in sorted(names) if _INTERPRETER.fullmatch(n)
        )
    return found


def not_the_base(path: str, venv: str) -> str | None:
    """What the program ``path`` is when it is not the Python ``venv`` was made from (see
    :func:`_made_from`): neither a link into that folder (or to what one of its interpreters
    links to, or to a Python elsewhere in its installation: a macOS framework's
    `Resources/Python.app/Contents/MacOS/Python`), nor a copy of one of them, byte for byte
    (red team 30: a compiled wrapper that ran the real interpreter and then rewrote the JUnit
    report). None when it is; on Windows, whose environments run a launcher of their own
    (``venvlauncher``), never."""
    if os.name != "posix":
        return None
    home = _made_from(venv)
    if home is None:
        return (
            "a program in an environment whose pyvenv.cfg names no Python it was made from "
            f"outside it (`home = {_home(venv)}`), to compare it with"
        )
    real = os.path.realpath(path)
    folder = os.path.join(os.path.realpath(home), "")
    if real.startswith(folder):
        return None
    installation = os.path.join(os.path.dirname(os.path.realpath(home)), "")
    if real.startswith(installation) and _INTERPRETER.fullmatch(os.path.basename(real)):
        return None
    try:
        names = [n for n in os.listdir(home) if _INTERPRETER.fullmatch(n)]
    except OSError:
        return None
    import filecmp

    for name in names:
        theirs = os.path.join(home, name)
        if os.path.realpath(theirs) == real:
            return None
        with contextlib.suppress(OSError):
            if os.path.getsize(theirs) == os.path.getsize(real) and filecmp.cmp(
                theirs, real, shallow=False
            ):
                return None
    copied = not os.path.islink(path)
    return (
        f"a program that is none of the Pythons its environment was made from ({home}), "
        "neither linked nor copied"
        + (
            " (a copy made before that Python was upgraded in place? `python -m venv "
            "--upgrade` copies it again)"
            if copied
            else ""
        )
    )


def _made_from(venv: str) -> str | None:
    """The folder of the Python ``venv`` was made from. For the environment agentgate runs in,
    the one whose standard library its interpreter found (``sys.base_prefix``), which no line
    of pyvenv.cfg decides (red team 31: `home` pointed at the environment's own `bin`, where a
    wrapper was); for another, its pyvenv.cfg's ``home``, when that is a folder outside it."""
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return os.path.join(sys.base_prefix, "bin")
    home = _home(venv)
    if home is None or not os.path.isdir(home):
        return None
    inside = os.path.join(os.path.realpath(venv), "")
    return None if os.path.join(os.path.realpath(home), "").startswith(inside) else home


def _home(venv: str) -> str | None:
    """The ``home`` ``venv``'s ``pyvenv.cfg`` names: the folder of the Python it was made from."""
    from pytest_agentgate.venvs import home

    return home(venv) or None


def not_a_program(path: str) -> str | None:
    """What ``path`` is when it is not a program in a machine format that runs: "a script
    (#!...)", "a file in no executable format"; or when a shell passes over it for the next
    ``python`` on PATH (red team 26: a link to nothing, then pyenv's shim ran a wrapper of the
    agent's): "missing", "a link to nothing", "a folder", "not executable". None when it is
    a program that runs."""
    if not os.path.lexists(path):
        return "missing (a shell finds the next `python` on PATH)"
    if not os.path.exists(path):
        target = os.readlink(path) if os.path.islink(path) else "?"
        return f"a link to nothing ({target}: a shell finds the next `python` on PATH)"
    if os.path.isdir(path):
        return "a folder (a shell finds the next `python` on PATH)"
    if os.name == "posix" and not os.access(path, os.X_OK):
        return "not executable (a shell finds the next `python` on PATH)"
    try:
        with open(path, "rb") as handle:
            head = handle.read(128)
    except OSError:
        return "a file that cannot be read"
    if head.startswith(_MACHINE_FORMATS):
        return None
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].strip().decode("utf-8", "replace")
        return f"a script (#!{line[:60]})"
    return "a file in no executable format"
