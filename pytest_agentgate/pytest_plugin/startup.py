"""Code the Python environment runs at every start that no installed distribution put there.

Python's ``site`` module runs, before any test, each line starting with ``import`` of every
``*.pth`` file in the site-packages folders, then the ``sitecustomize`` and ``usercustomize``
modules. A file written there (say in the project's own ``.venv``, git-ignored, so the change
never shows it) can replace the project's function under test with one that returns what the
test expects, or patch pytest's reporting from a file that counts as installed code. The
witness and the pytest door ask :func:`planted` in the interpreter that runs the tests; the
integrity gate reports each entry (``startup-code-planted``).

What is not planted:

- a ``.pth`` file listed in the ``RECORD`` of a distribution installed in the same folder, with
  the content that ``RECORD`` hashes (editable installs' ``__editable__*.pth`` and ``_NAME.pth``,
  setuptools' ``distutils-precedence.pth``, coverage.py's ``a1_coverage.pth``); the same for a
  ``sitecustomize``/``usercustomize`` module a distribution installed;
- virtualenv's and uv's ``_virtualenv.pth`` (``import _virtualenv``, which their ``venv`` writes
  with no distribution), in an environment whose ``pyvenv.cfg`` names virtualenv or uv;
- a ``sitecustomize`` module in the interpreter's own standard library folder (Debian's and
  Ubuntu's, owned by the operating system's package, not by the project's environment);
- coverage.py's line that measures subprocesses (:data:`COVERAGE_LINES`: the one its
  documentation gave to write by hand, the one coverage.py 7.10 writes while it runs with
  ``patch = subprocess``);
- a ``.pth`` file with path lines only: a path is added to ``sys.path``, no code runs (legacy
  develop installs, conda and many tools write them; a module of the tools loaded from the
  project is found apart, ``tampering.replaced``).

Cheap: it lists the site folders, reads the ``.pth`` files that have code, and reads ``RECORD``
files only while one of them is unaccounted for.
"""

from __future__ import annotations

import base64
import hashlib
import os
import site
import sys
import sysconfig
from collections.abc import Iterator
from typing import NamedTuple

# Bounds: a .pth file or RECORD read, the code shown, the entries kept.
MAX_READ = 1 << 20
MAX_SHOWN = 120
MAX_FOUND = 20
CUSTOMIZE = ("sitecustomize", "usercustomize")


class Startup(NamedTuple):
    """One piece of startup code: the file, its line, and the code (shortened); ``system``
    when the file is the machine's, not the tests' environment's (:func:`_system`)."""

    path: str
    line: int
    code: str
    system: bool = False


def planted() -> list[Startup]:
    """The startup code of this interpreter that no installed distribution put there."""
    found: list[Startup] = []
    records = _Records()
    for folder in _site_folders():
        for name in _listdir(folder):
            if not name.endswith(".pth") or name.startswith("."):
                continue  # site skips hidden .pth files
            path = os.path.join(folder, name)
            data = _read(path)
            if data is None:
                continue
            code = list(_code_lines(data))
            if not code or records.owns(folder, name, data) or _virtualenvs(name, data):
                continue
            system = _system(folder)
            found.extend(Startup(path, line, text, system) for line, text in code)
    for module_name in CUSTOMIZE:
        where = getattr(sys.modules.get(module_name), "__file__", None)
        if not isinstance(where, str) or _in_stdlib(where):
            continue
        folder, name = os.path.split(where)
        data = _read(where)
        if data is not None and records.owns(folder, name, data):
            continue
        found.append(Startup(where, 1, f"import {module_name}", _system(folder)))
    return found[:MAX_FOUND]


def _system(folder: str) -> bool:
    """Whether ``folder`` is the machine's rather than the environment the tests run in: in a
    virtual environment, a folder outside it (the base interpreter's site-packages, the user's
    site); without one, every site folder (it is the machine's Python the tests run on).
    Startup code found there was put by whoever set the machine up (a certificate injected at
    every start, a debugger's hook): shown, not judged. What is in the virtual environment (or
    in the project, whatever Python runs) is judged."""
    if sys.prefix == sys.base_prefix:
        return True
    prefix = os.path.realpath(sys.prefix)
    real = os.path.realpath(folder)
    return not (real == prefix or real.startswith(prefix + os.sep))


def _site_folders() -> list[str]:
    folders = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    # The operating system's own package folder (Debian's and Ubuntu's, written by dpkg).
    system = os.path.realpath(os.path.join(sys.base_prefix, "lib", "python3", "dist-packages"))
    seen: dict[str, str] = {}
    for folder in folders:
        seen.setdefault(os.path.realpath(folder), folder)
    return [f for real, f in seen.items() if real != system and os.path.isdir(f)]


def _listdir(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as file:
            return file.read(MAX_READ)
    except OSError:
        return None


# coverage.py's measurement of subprocesses, which starts coverage only when the environment
# names its settings (COVERAGE_PROCESS_START, judged by environment-loosened): the line its
# documentation long gave to write by hand, and the one coverage.py 7.10 writes itself, while
# it runs, in ``subcover_PID.pth`` with ``[run] patch = subprocess`` (later versions install
# ``a1_coverage.pth``, in their RECORD).
_COVERAGE_PTH_CODE = (
    "try:\n    import coverage\nexcept:\n    pass\nelse:\n    coverage.process_startup()\n"
)
COVERAGE_LINES = frozenset(
    {
        b"import coverage; coverage.process_startup()",
        f"import sys; exec({_COVERAGE_PTH_CODE!r})".encode(),
    }
)


def _code_lines(data: bytes) -> Iterator[tuple[int, str]]:
    """The lines ``site`` executes: those starting with ``import`` and a space or a tab (but
    coverage.py's subprocess measurement, :data:`COVERAGE_LINES`)."""
    for number, raw in enumerate(data.splitlines(), start=1):
        if raw.startswith((b"import ", b"import\t")) and raw.strip() not in COVERAGE_LINES:
            text = raw.decode("utf-8", "replace").strip()
            yield number, text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


class _Records:
    """The RECORD files of each folder's installed distributions, each read once, when asked."""

    def __init__(self) -> None:
        self._read: dict[str, bytes] = {}
        self._infos: dict[str, list[tuple[str, str]]] = {}

    def owns(self, folder: str, name: str, data: bytes) -> bool:
        """Whether a distribution installed in ``folder`` lists ``name`` in its RECORD with the
        hash of ``data`` (a file it wrote, unchanged since). The distributions whose name the
        file's name or text mentions are asked first (``a1_coverage.pth``, coverage's): most
        often one RECORD is read."""
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        wanted = name.encode("utf-8", "surrogateescape") + b",sha256=" + digest + b","
        said = (name + data.decode("utf-8", "replace")).lower().replace("-", "_")
        if folder not in self._infos:
            self._infos[folder] = [
                (_dist_name(entry), entry)
                for entry in _listdir(folder)
                if entry.endswith(".dist-info")
            ]
        infos = sorted(self._infos[folder], key=lambda info: info[0] not in said)
        for _, entry in infos:
            path = os.path.join(folder, entry, "RECORD")
            if path not in self._read:
                self._read[path] = _read(path) or b""
            record = self._read[path]
            if record.startswith(wanted) or b"\n" + wanted in record:
                return True
        return False


def _dist_name(entry: str) -> str:
    """``coverage`` for ``coverage-7.6.1.dist-info``."""
    name = entry.removesuffix(".dist-info").rpartition("-")[0] or entry
    return name.lower().replace("-", "_").replace(".", "_")


def _virtualenvs(name: str, data: bytes) -> bool:
    """virtualenv's (and uv's) ``_virtualenv.pth``, in the environment they made."""
    if name != "_virtualenv.pth" or data.strip() != b"import _virtualenv":
        return False
    config = _read(os.path.join(sys.prefix, "pyvenv.cfg")) or b""
    keys = {line.partition(b"=")[0].strip() for line in config.splitlines()}
    return bool(keys & {b"virtualenv", b"uv"})


def _in_stdlib(path: str) -> bool:
    """Whether ``path`` is in the interpreter's standard library folder (a link there, as
    Debian's ``sitecustomize.py`` to ``/etc``, counts where it is, not where it leads)."""
    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib") if key in paths}
    return os.path.realpath(os.path.dirname(os.path.abspath(path))) in stdlib
