"""How agentgate reads and rewrites a gate's test command, in process.

Pins down ``without_coverage`` (the command ``agentgate verify --coverage-cost`` times: coverage
taken out, its report steps dropped, and None for what cannot be rewritten safely), the
interpreter a ``coverage`` script runs with, ``coverage_options`` (what a command measures),
``runs_this_interpreter``, ``junit_in_command`` and ``collection_command``'s refusals.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pytest_agentgate.commands import (
    collection_command,
    coverage_options,
    junit_in_command,
    runs_this_interpreter,
    without_coverage,
)


@pytest.mark.parametrize(
    ("command", "derived"),
    [
        ("pytest --cov=pkg --cov-report=xml -q tests", "pytest -q tests --no-cov"),
        ("pytest --cov src tests", "pytest tests --no-cov"),  # src is --cov's value
        ("pytest --cov --cov-branch -x", "pytest -x --no-cov"),
        ('pytest --cov="a b" "tests/x y.py"', "pytest 'tests/x y.py' --no-cov"),
        (
            "python -m coverage run --branch --source=pkg -m pytest -q && python -m coverage xml",
            "python -m pytest -q",
        ),
        (
            "python3 -m coverage run --rcfile .coveragerc -p -m pytest --junitxml=out.xml tests"
            " && coverage combine && coverage report",
            "python3 -m pytest tests",
        ),
        ("FOO=1 python -m coverage run -m pytest", "FOO=1 python -m pytest"),
        ("python -m coverage run script.py", "python script.py"),
        ("pytest --cov=pkg; echo done", "pytest --no-cov ; echo done"),
    ],
)
def test_without_coverage(command: str, derived: str) -> None:
    assert without_coverage(command) == derived


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",  # measures nothing
        "coverage xml",  # only reports
        "FOO=1",
        "pytest --cov-foo=1",  # an option of pytest-cov's this does not know
        "python -m coverage run -x -m pytest",  # nor of coverage run's
        "python -m coverage run",  # runs nothing
        "pytest --cov=pkg > log.txt",
        "(pytest --cov=pkg)",
        "pytest --cov=pkg # the rest",
        "pytest --cov=pkg\npytest",
        "pytest --cov=pkg $ARGS",  # the shell would expand it
        'pytest --cov=pkg "unbalanced',
        'pytest --cov=pkg "&&" x',  # a quoted operator is no operator
    ],
)
def test_without_coverage_refuses_what_it_cannot_rewrite(command: str) -> None:
    assert without_coverage(command) is None


def test_a_coverage_script_runs_with_the_python_its_first_line_names() -> None:
    here = str(Path(sys.executable).parent)
    derived = without_coverage("coverage run -m pytest -q", {"PATH": here})
    assert derived is not None
    python, rest = derived.split(" ", 1)
    assert rest == "-m pytest -q"
    assert Path(python).name.startswith("python") and os.path.isfile(python)
    # Not on PATH: no Python to run the tests with.
    assert without_coverage("coverage run -m pytest", {"PATH": "/nonexistent"}) is None


def test_a_coverage_script_without_a_python_line_runs_with_the_python_beside_it(
    tmp_path: Path,
) -> None:
    script = tmp_path / "coverage"
    script.write_text("#!/bin/sh\nexec something\n", encoding="utf-8")
    assert without_coverage(f"{script} run -m pytest") is None  # no Python beside it
    (tmp_path / "python3").write_text("", encoding="utf-8")
    assert without_coverage(f"{script} run -m pytest") == f"{tmp_path / 'python3'} -m pytest"
    # A #! line naming a Python that is not there: none.
    script.write_text(f"#!{tmp_path / 'gone' / 'python3'}\n", encoding="utf-8")
    assert without_coverage(f"{script} run -m pytest") is None


def test_coverage_options_of_pytest_cov_and_coverage_run(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert coverage_options("pytest --cov --cov-branch --cov-config setup.cfg", tmp_path) == {
        "root": str(tmp_path),
        "source": [],
        "include": [],
        "omit": [],
        "branch": True,
        "rcfile": str(tmp_path / "setup.cfg"),
    }
    found = coverage_options(
        "coverage run --source src,pkg,/abs --include=*/x.py --omit tests/* -m pytest", tmp_path
    )
    assert found is not None
    # A folder of the project is made absolute; a package name and a pattern stay as written.
    assert found["source"] == [str(tmp_path / "src"), "pkg", "/abs"]
    assert found["include"] == ["*/x.py"]
    assert found["omit"] == [str(tmp_path / "tests/*")]
    assert found["branch"] is None and found["rcfile"] is None


@pytest.mark.parametrize("command", [None, "", "pytest -q", 'coverage run "x', "make test"])
def test_coverage_options_of_a_command_that_measures_nothing(command: str | None) -> None:
    assert coverage_options(command, Path("/r")) is None


def test_runs_this_interpreter() -> None:
    assert runs_this_interpreter(f"{sys.executable} -m pytest")
    assert not runs_this_interpreter("")
    assert not runs_this_interpreter("nosuchprogram -q", {"PATH": "/nonexistent"})
    assert not runs_this_interpreter("/nonexistent/bin/python -m pytest")


def test_the_python_named_for_the_commands_runs_agentgates_plugin_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GitHub Action installs agentgate's pytest plugin into the Python it names for the
    commands (AGENTGATE_PYTHON): a report of its pytest must carry the run's id too."""
    folder = tmp_path / "bin"
    folder.mkdir()
    python = folder / "python3"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    path = {"PATH": f"{folder}{os.pathsep}/usr/bin"}
    assert not runs_this_interpreter("python3 -m pytest", path)
    monkeypatch.setenv("AGENTGATE_PYTHON", str(python))
    assert runs_this_interpreter("python3 -m pytest", path)
    assert runs_this_interpreter(f"{python} -m pytest")
    assert runs_this_interpreter(f"{sys.executable} -m pytest")


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("pytest --junitxml=out/r.xml", "out/r.xml"),
        ("pytest --junit-xml r.xml -q", "r.xml"),
        ("pytest --junitxml= x", None),
        ("pytest --junitxml", None),
        ('pytest "x', None),
        ("pytest -q", None),
    ],
)
def test_junit_in_command(command: str, path: str | None) -> None:
    assert junit_in_command(command) == path


def test_collection_command_drops_the_gate_s_own_options_and_refuses_the_unreadable() -> None:
    assert collection_command("pytest --agentgate --agentgate-json out.json -q tests") == (
        "pytest -q tests --collect-only -q -p pytest_agentgate.pytest_plugin.count"
    )
    assert collection_command("pytest --cov=pkg > x") is None
    assert collection_command("pytest --cov-zzz=1") is None
