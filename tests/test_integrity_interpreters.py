"""``interpreter-replaced``: a Python of the project's virtual environment that is a script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_agentgate.integrity.interpreters import findings, interpreters, not_a_program
from pytest_agentgate.integrity.rules import RULES


def made_venv(root: Path) -> Path:
    venv = root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv


def running(venv: Path) -> dict[str, str]:
    """The environment of a gate whose commands run ``venv`` (it is activated)."""
    return {"VIRTUAL_ENV": str(venv)}


def test_a_virtual_environment_as_venv_makes_it_is_no_finding(tmp_path: Path) -> None:
    venv = made_venv(tmp_path)
    assert [Path(p).name for p in interpreters(str(venv))][:1] == ["python"]
    assert list(findings(tmp_path, running(venv))) == []


def test_a_python_replaced_by_a_script_is_found(tmp_path: Path) -> None:
    # Red team 25: the gate's `python -m coverage run -m pytest` ran a shell script that set
    # PYTHONPYCACHEPREFIX (or mounted a folder over __pycache__) for the test command alone.
    venv = made_venv(tmp_path)
    python = venv / "bin" / "python"
    python.unlink()
    python.write_text('#!/bin/sh\nexport PYTHONPYCACHEPREFIX=/tmp/x\nexec "$0"3 "$@"\n')
    python.chmod(0o755)
    (venv / "bin" / "python-config-notes.txt").write_text("not an interpreter's name\n")
    (found,) = findings(tmp_path, running(venv))
    assert found.rule == "interpreter-replaced" and found.path == ".venv/bin/python"
    # Another environment in the project's folder, that the gate's commands do not run, is
    # not judged (review 16: a stale `venv39/` whose Python was uninstalled).
    assert list(findings(tmp_path, {})) == []
    assert found.message == (
        ".venv/bin/python, the interpreter the gate's commands run, is a script "
        "(#!/bin/sh), not a Python its environment was made with"
    )
    assert RULES["interpreter-replaced"].weight == "tampering"


def test_the_environment_of_the_python_named_for_the_commands_is_judged(tmp_path: Path) -> None:
    """The GitHub Action runs agentgate from a virtualenv of its own and names the workflow's
    Python for the commands (AGENTGATE_PYTHON): a project's `.venv` that is that Python's is
    the one the commands run."""
    venv = made_venv(tmp_path)
    python = venv / "bin" / "python"
    python.unlink()
    python.write_text('#!/bin/sh\nexec "$0"3 "$@"\n')
    python.chmod(0o755)
    named = {"AGENTGATE_PYTHON": str(venv / "bin" / "python3")}
    assert [f.path for f in findings(tmp_path, named)] == [".venv/bin/python"]
    assert list(findings(tmp_path, {"AGENTGATE_PYTHON": "/usr/bin/python3"})) == []


def test_a_script_named_for_the_commands_anywhere_is_found(tmp_path: Path) -> None:
    # Red team 47: AGENTGATE_PYTHON named a script outside the project (through a harness's
    # settings `env`) that ran the tests and rewrote their JUnit report.
    made_venv(tmp_path)
    wrapper = tmp_path.parent / f"{tmp_path.name}-wrapper" / "python"
    wrapper.parent.mkdir()
    wrapper.write_text('#!/bin/sh\nexec python3 "$@"\n')
    wrapper.chmod(0o755)
    (found,) = findings(tmp_path, {"AGENTGATE_PYTHON": str(wrapper)})
    assert found.rule == "interpreter-replaced" and found.path is None
    assert found.message.startswith(
        f"{wrapper}, the interpreter AGENTGATE_PYTHON names for the gate's commands, is a script"
    )


def test_a_python_that_is_another_program_is_found(tmp_path: Path) -> None:
    # Red team 30: a compiled wrapper in `.venv/bin/python` ran the real interpreter, then
    # rewrote the JUnit report; a program in a machine format, but not the Python the
    # environment was made from (`home` in its pyvenv.cfg), neither linked nor copied.
    venv = made_venv(tmp_path)
    python = venv / "bin" / "python"
    other = shutil.which("true") or "/bin/true"
    python.unlink()
    shutil.copy(other, python)
    (found,) = findings(tmp_path, running(venv))
    assert found.path == ".venv/bin/python"
    assert "is a program that is none of the Pythons its environment was made from" in (
        found.message
    )
    python.unlink()
    python.symlink_to(other)  # a link elsewhere is no better
    assert [f.path for f in findings(tmp_path, running(venv))] == [".venv/bin/python"]


@pytest.mark.parametrize("home", ["own-bin", "nowhere", "none"])
def test_a_home_that_names_no_python_outside_the_environment_is_no_alibi(
    tmp_path: Path, home: str
) -> None:
    # Red team 31: the wrapper passed once pyvenv.cfg's `home` named the environment's own
    # `bin`; `home = /nonexistent` and no `home` hid it too (Python starts all the same).
    venv = made_venv(tmp_path)
    python = venv / "bin" / "python"
    python.unlink()
    shutil.copy(shutil.which("true") or "/bin/true", python)
    config = venv / "pyvenv.cfg"
    lines = [line for line in config.read_text().splitlines() if not line.startswith("home")]
    named = {"own-bin": [f"home = {venv / 'bin'}"], "nowhere": ["home = /nonexistent"]}
    config.write_text("\n".join(named.get(home, []) + lines) + "\n")
    found = {f.path: f.message for f in findings(tmp_path, running(venv))}
    assert "names no Python it was made from outside it" in found[".venv/bin/python"]


def test_the_environment_agentgate_runs_in_is_compared_with_the_python_it_found() -> None:
    # Its pyvenv.cfg is not asked: the interpreter found its standard library by itself.
    from pytest_agentgate.integrity.interpreters import _made_from

    assert _made_from(sys.prefix) == os.path.join(sys.base_prefix, "bin")


def test_a_python_elsewhere_in_the_installation_is_the_base(tmp_path: Path) -> None:
    # Review 18: virtualenv on a macOS framework links `bin/python` to the installation's
    # `Resources/Python.app/Contents/MacOS/Python`, outside `home`; a program of another name
    # there is no Python. A copy that differs says how to copy it again.
    venv = made_venv(tmp_path)
    installation = tmp_path / "framework"
    (installation / "bin").mkdir(parents=True)
    (installation / "Resources").mkdir()
    program = shutil.which("true") or "/bin/true"
    for name in ("bin/python3", "Resources/Python"):
        shutil.copy(program, installation / name)
    shutil.copy(shutil.which("false") or "/bin/false", installation / "Resources" / "helper")
    config = venv / "pyvenv.cfg"
    lines = [line for line in config.read_text().splitlines() if not line.startswith("home")]
    config.write_text("\n".join([f"home = {installation / 'bin'}", *lines]) + "\n")
    python = venv / "bin" / "python"
    for name in ("python3", "python3." + str(sys.version_info[1])):
        (venv / "bin" / name).unlink(missing_ok=True)
        (venv / "bin" / name).symlink_to(installation / "bin" / "python3")
    python.unlink()
    python.symlink_to(installation / "Resources" / "Python")
    assert list(findings(tmp_path, running(venv))) == []
    python.unlink()
    python.symlink_to(installation / "Resources" / "helper")
    assert [f.path for f in findings(tmp_path, running(venv))] == [".venv/bin/python"]
    python.unlink()
    shutil.copy(shutil.which("false") or "/bin/false", python)
    (found,) = findings(tmp_path, running(venv))
    assert "`python -m venv --upgrade` copies it again" in found.message


def test_an_environment_of_copies_is_no_finding(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--copies", str(venv)], check=True
    )
    assert not (venv / "bin" / "python").is_symlink()
    assert list(findings(tmp_path, running(venv))) == []


def test_what_a_file_is_says_why(tmp_path: Path) -> None:
    text = tmp_path / "python3"
    text.write_text("print('hello')\n")
    text.chmod(0o755)
    assert not_a_program(str(text)) == "a file in no executable format"
    assert not_a_program(sys.executable) is None
    # A Python that is itself a link to a script outside the project is judged by what it runs.
    script = tmp_path / "wrap.sh"
    script.write_text('#!/bin/bash\nexec python3 "$@"\n')
    script.chmod(0o755)
    link = tmp_path / "python"
    link.symlink_to(script)
    assert not_a_program(str(link)) == "a script (#!/bin/bash)"


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda p: p.symlink_to("python3.12"), "a link to nothing (python3.12: a shell finds"),
        (lambda p: shutil.copy(sys.executable, p) and p.chmod(0o644), "not executable (a shell"),
        (lambda p: p.mkdir(), "a folder (a shell finds"),
        (lambda p: None, "missing (a shell finds"),
    ],
    ids=["dangling", "not-executable", "folder", "missing"],
)
def test_a_python_a_shell_passes_over_is_found(
    tmp_path: Path, spoil: Callable[[Path], object], said: str
) -> None:
    # Red team 26: with .venv/bin/python a link to nothing, the shell ran the next `python`
    # on PATH, pyenv's shim, and a wrapper of the agent's behind it.
    venv = made_venv(tmp_path)
    python = venv / "bin" / "python"
    python.unlink()
    spoil(python)
    (found,) = findings(tmp_path, running(venv))
    assert found.path == ".venv/bin/python"
    assert found.message.startswith(
        f".venv/bin/python, the interpreter the gate's commands run, is {said}"
    )


def installed(venv: Path, name: str, files: dict[str, bytes]) -> Path:
    """``name`` installed in ``venv``'s site folder as an installer does: its files (paths from
    the site folder, ``../../../bin/NAME`` for a program) and a RECORD hashing each."""
    import base64
    import hashlib

    (site,) = (venv / "lib").glob("python*/site-packages")
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    lines = []
    for path, data in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{path},sha256={digest},{len(data)}\n")
    (info / "RECORD").write_text("".join(lines) + f"{info.name}/RECORD,,\n")
    return site


def test_a_linters_program_replaced_is_found(tmp_path: Path) -> None:
    # Red team 50: `.venv/bin/ruff`, the program `python -m ruff` runs, replaced by a script
    # that printed `[]`: the lint gate read zero errors.
    from pytest_agentgate.integrity.interpreters import linters_replaced

    venv = made_venv(tmp_path)
    program = b"\x7fELF the real ruff" * 10
    site = installed(
        venv,
        "ruff",
        {
            "ruff/__main__.py": b"import os\n",
            "ruff/__pycache__/__main__.cpython-399.pyc": b"\x00",
            "../../../bin/ruff": program,
        },
    )
    (site / "ruff" / "__pycache__" / "__main__.cpython-399.pyc").unlink()  # no bytecode yet
    lint = ["python -m ruff check --output-format json ."]
    assert list(linters_replaced(tmp_path, lint, running(venv))) == []
    assert list(linters_replaced(tmp_path, lint, running(venv))) == []  # remembered
    ruff = venv / "bin" / "ruff"
    times = ruff.stat()
    fake = b'#!/bin/sh\necho "[]"\n#'
    ruff.write_bytes(fake + b"x" * (len(program) - len(fake)))
    os.utime(ruff, ns=(times.st_atime_ns, times.st_mtime_ns))  # its size and times kept
    assert ruff.stat().st_size == len(program)
    (found,) = linters_replaced(tmp_path, lint, running(venv))
    assert (found.rule, found.path) == ("interpreter-replaced", ".venv/bin/ruff")
    assert found.message == (
        ".venv/bin/ruff, of the ruff a gate's command runs, is not as ruff-0.1.dist-info/RECORD "
        "hashes it (as it was installed): the linter reports what that file says, not what the "
        "code has; install it again (`pip install --force-reinstall ruff`) and run the checks "
        "again"
    )
    # A linter no gate names, or an environment the commands do not run, is not read.
    assert list(linters_replaced(tmp_path, ["python -m compileall -q ."], running(venv))) == []
    assert list(linters_replaced(tmp_path, lint, {})) == []


def test_a_linter_no_package_installed_is_found(tmp_path: Path) -> None:
    # flake8 runs pyflakes' checks: a pyflakes file edited is flake8's; a `mypy` program no
    # package installed is no mypy.
    from pytest_agentgate.integrity.interpreters import linters_replaced

    venv = made_venv(tmp_path)
    site = installed(venv, "flake8", {"flake8/__init__.py": b""})
    installed(venv, "pyflakes", {"pyflakes/checker.py": b"class Checker: ...\n"})
    lint = ["flake8 --format=json src", "mypy --strict src"]
    assert list(linters_replaced(tmp_path, lint, running(venv))) == []
    (site / "pyflakes" / "checker.py").write_text("class Checker: messages = []\n")
    (venv / "bin" / "mypy").write_text("#!/bin/sh\n")
    assert [
        (f.path, f.message.partition(": ")[0])
        for f in linters_replaced(tmp_path, lint, running(venv))
    ] == [
        (
            f"{site.relative_to(tmp_path).as_posix()}/pyflakes/checker.py",
            f"{site.relative_to(tmp_path).as_posix()}/pyflakes/checker.py, of the flake8 a "
            "gate's command runs, is not as pyflakes-0.1.dist-info/RECORD hashes it (as it was "
            "installed)",
        ),
        (
            ".venv/bin/mypy",
            ".venv/bin/mypy, of the mypy a gate's command runs, is not installed by any "
            "package (no RECORD lists it)",
        ),
    ]


def test_a_linter_of_the_venvs_old_python_is_not_read(tmp_path: Path) -> None:
    # Review 31: a virtual environment made again over the old one for another Python keeps
    # the old Python's site folder, whose RECORD hashes the program as the old ruff wrote it.
    from pytest_agentgate.integrity.interpreters import linters_replaced

    venv = made_venv(tmp_path)
    installed(venv, "ruff", {"../../../bin/ruff": b"the ruff of this Python"})
    old = venv / "lib" / "python3.1" / "site-packages"
    (old / "ruff-0.0.dist-info").mkdir(parents=True)
    (old / "ruff-0.0.dist-info" / "RECORD").write_text(
        "../../../bin/ruff,sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855,0\n"
    )
    lint = ["ruff check ."]
    assert list(linters_replaced(tmp_path, lint, running(venv))) == []
