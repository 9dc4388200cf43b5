"""Run a linter at the version the project pins, installed apart, as pre-commit does.

``python -m pytest_agentgate.tools NAME[==VERSION] [--with PLUGIN]... ARGS...`` runs the tool
``NAME`` with ``ARGS`` in the working directory and exits with its exit code. With a version,
the tool is installed once into agentgate's cache (``$AGENTGATE_CACHE_HOME``, else
``$XDG_CACHE_HOME/agentgate``, else ``~/.cache/agentgate``), under ``tools/NAME-VERSION-pyX.Y``,
with pip, and never into the project's environment; later runs reuse it. Each ``--with``
requirement is installed beside it (a flake8 pre-commit hook's ``additional_dependencies``:
flake8-pyproject, flake8-bugbear), in a folder of its own per set of plugins. Without a
version, the tool installed beside agentgate runs. Zero-config writes these commands for the
linters a project declares (project.py); they can be written in agentgate.yml by hand too.

Only the tools zero-config knows are accepted (:data:`TOOLS`), and plugins only as
requirements (a name and version bounds, never a URL, a path or an option): a command line
must not become a way to install from anywhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

# Tool name -> how it is run once installed: a console script in bin/, or a module.
TOOLS: dict[str, tuple[str, str]] = {
    "ruff": ("script", "ruff"),
    "flake8": ("module", "flake8"),
    "pycodestyle": ("module", "pycodestyle"),
    "pylint": ("module", "pylint"),
}
_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")
_INSTALL_TIMEOUT_S = 600
# How long a gate waits for another's install of the same tool (inside the hook's budget).
_LOCK_WAIT_S = 60.0


class ToolError(Exception):
    """A tool that cannot be run; the message says why and what to do."""


def cache_home() -> Path:
    explicit = os.environ.get("AGENTGATE_CACHE_HOME")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "agentgate"


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``ruff==0.15.6`` -> ("ruff", "0.15.6"); ``ruff`` -> ("ruff", None)."""
    name, _, version = spec.partition("==")
    if name not in TOOLS:
        raise ToolError(f"unknown tool {name!r}: agentgate runs {', '.join(TOOLS)}")
    if version and not _VERSION.match(version):
        raise ToolError(f"{spec!r}: {version!r} is not a version")
    return name, version or None


def plugin_spec(spec: str) -> str:
    """A plugin's requirement as ``--with`` gives it (``flake8-pyproject``,
    ``flake8-bugbear>=24``): a name, extras and version bounds; never a URL, a path or an
    option."""
    from pytest_agentgate.linters import PLUGIN

    if not PLUGIN.fullmatch(spec):
        raise ToolError(f"--with {spec!r}: not a requirement (a name and version bounds)")
    return spec


def exclude_regex(pattern: str) -> str:
    """A pre-commit ``exclude:`` as ``--exclude-regex`` gives it: a regular expression."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ToolError(f"--exclude-regex {pattern!r}: not a regular expression ({exc})") from None
    return pattern


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One installer at a time per tool version (parallel gates, parallel projects), waited
    for as long as an install may take: a lock held longer (red team 38: a `flock` of the
    agent's on it ran the lint command out of the hook's time) is a ToolError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        end = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= end:
                    from pytest_agentgate.state.storage import lock_holder

                    holder = lock_holder(handle.fileno()) or "another process"
                    raise ToolError(
                        f"{path} is held by {holder} for longer than {_LOCK_WAIT_S:g} s: end "
                        "it and run the gate again"
                    ) from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def installed(name: str, version: str, plugins: Sequence[str] = ()) -> Path:
    """The folder holding ``name==version`` (with ``plugins``, the requirements its pre-commit
    hook installs beside it), installed there first if it is not yet."""
    python = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    tools = cache_home() / "tools"
    folder = f"{name}-{version}-{python}"
    if plugins:
        wanted = "\n".join(sorted(plugins)).encode()
        folder += "-" + hashlib.sha256(wanted).hexdigest()[:12]
    target = tools / folder
    if (target / ".complete").is_file():
        return target
    with _locked(tools / f".{folder}.lock"):
        if (target / ".complete").is_file():
            return target
        installer = _installer()
        if installer is None:
            raise ToolError(
                f"could not install {name} {version}, the version the project pins: the "
                f"environment of {sys.executable} has no pip (uv makes such environments) and "
                "uv is not on PATH. Add pip to it (`python -m ensurepip`), put uv on PATH, or "
                "set the lint gate's command in agentgate.yml"
            )
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-{version}-", dir=tools))
        try:
            done = subprocess.run(
                [*installer, "--target", str(staging), f"{name}=={version}", *plugins],
                capture_output=True,
                text=True,
                timeout=_INSTALL_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise ToolError(f"could not install {name} {version}: {exc}") from None
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            tail = " ".join(done.stderr.strip().splitlines()[-3:])
            with_plugins = f" with {', '.join(plugins)}" if plugins else ""
            raise ToolError(
                f"could not install {name} {version}{with_plugins}, the version the project "
                f"pins, into {tools}: pip said: {tail or 'nothing'}. Check the network and the "
                "pin, or set the lint gate's command in agentgate.yml"
            )
        (staging / ".complete").write_text(f"{name}=={version}\n", encoding="utf-8")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    return target


def _installer() -> list[str] | None:
    """The command that installs a pinned tool into a folder, for this interpreter: its pip;
    else the pip its standard library carries for ``ensurepip`` (a wheel pip runs from), as in
    an environment uv made (a third review: "No module named pip"); else uv's pip; None when
    there is none."""
    quiet = ["install", "--quiet", "--no-input", "--disable-pip-version-check"]
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", *quiet]
    spec = importlib.util.find_spec("ensurepip")
    if spec is not None and spec.origin:
        wheels = sorted(Path(spec.origin).parent.glob("_bundled/pip-*.whl"))
        if wheels:
            return [sys.executable, str(wheels[-1] / "pip"), *quiet]
    uv = shutil.which("uv")
    if uv is not None:
        return [uv, "pip", "install", "--quiet", "--python", sys.executable]
    return None


def command(
    name: str, version: str | None, args: Sequence[str], plugins: Sequence[str] = ()
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run the tool (with ``plugins`` installed beside a
    pinned one)."""
    how, entry = TOOLS[name]
    env = dict(os.environ)
    if version is None:
        if how == "script":
            script = Path(sys.executable).with_name(entry)
            return [str(script) if script.exists() else entry, *args], env
        if importlib.util.find_spec(entry) is None:
            raise ToolError(
                f"{name} is not installed in the environment of {sys.executable}: install it "
                "there, or pin its version in .pre-commit-config.yaml (agentgate then installs "
                "that version apart)"
            )
        return [sys.executable, *_run_module(entry), *args], env
    target = installed(name, version, plugins)
    if how == "script":
        return [str(target / "bin" / entry), *args], env
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(target), env.get("PYTHONPATH")) if p)
    return [sys.executable, *_run_module(entry), *args], env


# pycodestyle reads the user's configuration, and the first `setup.cfg` or `tox.ini` in the
# folders from the one it lints up, and has no option to read neither: run, it reads none of the
# user's, none above a project that has neither file (red team 34, flake8's twin), and the
# project's own from its top folder, where the run starts, never one in a folder it lints
# (red team 56: `calc/setup.cfg` saying `select = E9` replaced the project's settings).
_PYCODESTYLE = (
    "import sys, pycodestyle; pycodestyle.USER_CONFIG = None; "
    "pycodestyle.PROJECT_CONFIG = pycodestyle.PROJECT_CONFIG if {own} else (); "
    "read = getattr(pycodestyle, 'read_config', None); read and setattr(pycodestyle, "
    "'read_config', lambda options, args, *rest: read(options, ['.'], *rest)); "
    "sys.argv[0] = 'pycodestyle'; main = getattr(pycodestyle, '_main', None); "
    "sys.exit(main() if main else 'agentgate: this pycodestyle has no _main(): it cannot be "
    "run kept to the project configuration')"
)


def _run_module(entry: str) -> list[str]:
    """How the interpreter runs the tool ``entry``: ``-m``, but pycodestyle kept to the
    project's own configuration."""
    if entry != "pycodestyle":
        return ["-m", entry]
    own = any(os.path.isfile(name) for name in ("setup.cfg", "tox.ini"))
    return ["-c", _PYCODESTYLE.format(own=own)]


def _git_listed(*options: str) -> list[str] | None:
    """``git ls-files -z OPTIONS`` in the working directory; None outside git."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", *options], capture_output=True, timeout=60, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [name for name in os.fsdecode(listed).split("\0") if name]


def _ignored_folders() -> list[str]:
    """The folders of the project git ignores (a ``.venv``), for flake8's ``--extend-exclude``,
    as pre-commit lints only what git tracks (a review on real projects: termcolor's `flake8 .`
    read 43,226 errors in its git-ignored `.venv`); the project's own ``exclude`` still holds
    (flake8 applies it to the folder it walks, not to files named one by one)."""
    listed = _git_listed("--others", "--ignored", "--exclude-standard", "--directory") or []
    return sorted({name.rstrip("/") for name in listed if name.endswith("/")})


def _environments() -> list[str]:
    """The virtual environments in the project that git does not ignore (a ``.venv`` made as
    the project's README says, in a project with no ``.gitignore``: review 17, cachetools'
    14,571 flake8 findings, all in `.venv/lib`): the new folders git lists (outside git, the
    folders at the project's top) that hold a whole environment (venvs.py): a folder of the
    project's code cannot be left out so, nor a file added to one."""
    listed = _git_listed("--others", "--exclude-standard", "--directory")
    found: set[str] = set()
    if listed is not None:
        found = {name.rstrip("/") for name in listed if name.endswith("/")}
    else:
        with contextlib.suppress(OSError):
            found = {e.name for e in os.scandir() if e.is_dir(follow_symlinks=False)}
    from pytest_agentgate.venvs import an_environment

    return sorted(name for name in found if an_environment(name))


def _tops(left_out: set[str]) -> list[str]:
    """What pylint is given in place of ``.``: the folders and Python files at the project's
    top but those ``left_out`` (git-ignored folders, virtual environments), whose every
    option still applies to what it walks (red team 34: `pylint --recursive=y .` read the
    project's `.venv`, past the gate's time); ``.`` when nothing is left out."""
    if not left_out:
        return ["."]
    try:
        entries = sorted(os.scandir(), key=lambda e: e.name)
    except OSError:
        return ["."]
    kept = [
        e.name
        for e in entries
        if e.name not in left_out
        and e.name != ".git"
        and (e.is_dir(follow_symlinks=False) or e.name.endswith((".py", ".pyi")))
    ]
    return kept or ["."]


def _isolated(name: str, rest: list[str]) -> list[str]:
    """``rest`` with the option that keeps flake8 or pylint to the repository's configuration
    when neither the project's folder nor one above it in the repository has one, and the
    command names none: both look further up (flake8 to the home folder, pylint in it), where
    the change does not show (red team 34: a `setup.cfg` in the repository's parent folder
    ignored F401 and E501). A monorepo's configuration at its top is the project's (review 21)."""
    named = any(a.startswith(("--config", "--rcfile", "--isolated")) for a in rest)
    if named or name not in ("flake8", "pylint"):
        return rest
    if any(_own_config(name, folder) for folder in _folders_to_the_top()):
        return rest
    return ["--isolated", *rest] if name == "flake8" else [f"--rcfile={os.devnull}", *rest]


def _folders_to_the_top() -> list[Path]:
    """The working folder and those above it up to the repository's top (the working folder
    alone outside git)."""
    here = Path.cwd()
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            capture_output=True,
            timeout=60,
            check=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return [here]
    folders = [here]
    for parent in here.parents:
        if not top or not (parent == Path(top) or Path(top) in parent.parents):
            break
        folders.append(parent)
    return folders


def _section_of(name: str, section: str) -> bool:
    if name == "flake8":
        return section in ("flake8", "flake8:local-plugins")
    return section == name or section.startswith(f"{name}.")


def _own_config(name: str, folder: Path) -> bool:
    """Whether ``folder`` holds ``name``'s configuration (flake8's or pylint's)."""
    import configparser

    pylintrcs = ("pylintrc", ".pylintrc", "pylintrc.toml", ".pylintrc.toml")
    if name == "pylint" and any((folder / f).is_file() for f in pylintrcs):
        return True
    # As each tool tells its own: flake8 takes a `[flake8]` or `[flake8:local-plugins]` section,
    # and skips a file it cannot parse, looking further up (red team 36); pylint its `[pylint.*]`.
    for file in (
        ("setup.cfg", "tox.ini", ".flake8") if name == "flake8" else ("setup.cfg", "tox.ini")
    ):
        parser = configparser.RawConfigParser()
        try:
            parser.read(folder / file, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if any(_section_of(name, section) for section in parser.sections()):
            return True
    from pytest_agentgate.texts import toml_document

    try:
        document = toml_document((folder / "pyproject.toml").read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError):
        return False
    tool = document.get("tool")
    return isinstance(tool, dict) and name in tool


def _flake8_extend_exclude() -> list[str]:
    """The ``extend-exclude`` of the configuration flake8 reads in this folder (the first of
    setup.cfg, tox.ini and .flake8 with a ``[flake8]`` section; else ``[tool.flake8]`` in
    pyproject.toml, which flake8-pyproject gives it): a ``--extend-exclude`` on the command
    line replaces it, and the project's vendored code was linted (review 18)."""
    import configparser

    for name in ("setup.cfg", "tox.ini", ".flake8"):
        parser = configparser.RawConfigParser()
        try:
            parser.read(name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section("flake8"):
            for key in ("extend-exclude", "extend_exclude"):
                if parser.has_option("flake8", key):
                    return [v for v in re.split(r"[,\s]+", parser.get("flake8", key)) if v]
            return []
    from pytest_agentgate.texts import toml_document

    try:
        with open("pyproject.toml", encoding="utf-8") as handle:
            document = toml_document(handle.read()) or {}
    except (OSError, UnicodeDecodeError):
        return []
    table = (
        document.get("tool", {}).get("flake8") if isinstance(document.get("tool"), dict) else None
    )
    value = (
        table.get("extend-exclude", table.get("extend_exclude"))
        if isinstance(table, dict)
        else None
    )
    if isinstance(value, str):
        return [v for v in re.split(r"[,\s]+", value) if v]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def excluded(patterns: Sequence[str]) -> list[str]:
    """The project's files (tracked, or new and not ignored) that one of ``patterns``, the
    regular expressions of pre-commit's ``exclude:``, matches (``re.search`` on the path from
    the project's folder, as pre-commit does), as folders where every file in one matches:
    what pre-commit never gives its hooks. A name with a comma cannot be said in a list
    separated by commas, and is linted."""
    if not patterns:
        return []
    compiled = [re.compile(p) for p in patterns]
    files = _git_listed("--cached", "--others", "--exclude-standard") or []
    matched = {name for name in files if any(p.search(name) for p in compiled)}
    whole: dict[str, bool] = {}  # folder -> every file in it matched
    for name in files:
        parts = name.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            whole[folder] = whole.get(folder, True) and name in matched
    found = set()
    for name in matched:
        parts = name.split("/")
        folders = ("/".join(parts[:depth]) for depth in range(1, len(parts)))
        found.add(next((folder for folder in folders if whole[folder]), name))
    return sorted(name for name in found if "," not in name)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m pytest_agentgate.tools NAME[==VERSION] ARGS...", file=sys.stderr)
        return 2
    try:
        name, version = parse_spec(args[0])
        rest = args[1:]
        plugins: list[str] = []
        patterns: list[str] = []
        while rest[:1] in (["--with"], ["--exclude-regex"]) and len(rest) > 1:
            if rest[0] == "--with":
                plugins.append(plugin_spec(rest[1]))
            else:
                patterns.append(exclude_regex(rest[1]))
            rest = rest[2:]
        if plugins and version is None:
            raise ToolError("--with installs plugins beside a pinned tool: give NAME==VERSION")
        from pytest_agentgate.linters import EXCLUDES_BY_REGEX

        if patterns and name not in EXCLUDES_BY_REGEX:
            raise ToolError(f"--exclude-regex: {name} is not given files to leave out")
        if name in EXCLUDES_BY_REGEX and rest[-1:] == ["."]:
            left_out = excluded(patterns) + _environments()
            if name == "flake8":
                # flake8's --extend-exclude replaces its configuration's: both are given.
                left_out += _ignored_folders() + _flake8_extend_exclude()
            if left_out:
                rest = [*rest[:-1], "--extend-exclude", ",".join(sorted(set(left_out))), "."]
        if name == "pylint" and rest[-1:] == ["."]:
            rest = [*rest[:-1], *_tops(set(_ignored_folders()) | set(_environments()))]
        rest = _isolated(name, rest)
        line, env = command(name, version, rest, plugins)
    except ToolError as exc:
        print(f"agentgate: {exc}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    try:
        return subprocess.run(line, env=env, check=False).returncode
    except OSError as exc:
        print(f"agentgate: cannot run {line[0]}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
