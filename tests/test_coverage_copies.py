"""The project's code measured in a copy of it: a src layout installed with ``pip install .``
(as tox builds its environments) is tested from ``site-packages``, and its coverage is the
project's only where the copy has the project's bytes (reports/coverage/copies.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import BRANCHED_ADD

from pytest_agentgate.reports.coverage import read_coverage_data
from pytest_agentgate.reports.coverage.copies import copies_of_the_project

TEST = """\
from calc import add, more


def test_add():
    assert more.VALUE == 1
    assert add(1, 2) == 3
    assert add(-1, 2) == 1
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A src-layout project and, outside it, a site-packages folder holding a copy of its
    package (what `pip install .` leaves in a virtualenv)."""
    root = tmp_path / "project"
    write(root / "pyproject.toml", '[project]\nname = "calc"\nversion = "0.1"\n')
    write(root / "src/calc/__init__.py", BRANCHED_ADD)
    write(root / "src/calc/more.py", "VALUE = 1\n")
    write(root / "tests/test_calc.py", TEST)
    site = tmp_path / "env/lib/python3.11/site-packages"
    shutil.copytree(root / "src/calc", site / "calc")
    return root, site


def measured_in(root: Path, site: Path) -> None:
    """Run the tests under coverage.py as zero-config does, importing the package from
    ``site`` (the project's root has no ``calc``: a src layout)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "COVERAGE_"))}
    env["PYTHONPATH"] = str(site)
    command = [sys.executable, "-m", "coverage", "run", "--branch", "--source=src,calc"]
    command += ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def pytest_door(root: Path, path: Path, *options: str) -> tuple[dict[str, Any], str]:
    """``pytest --agentgate=strict`` in the git repository ``root``, importing from ``path``
    first: the verdict it wrote and what it printed."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "COVERAGE_"))}
    env.pop("AGENTGATE_RUNNING", None)
    env["PYTHONPATH"] = str(path)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *options]
    command += ["--agentgate=strict", "--agentgate-json", "v.json", "tests"]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    verdict: dict[str, Any] = json.loads((root / "v.json").read_text(encoding="utf-8"))
    return verdict, done.stdout


def test_a_copy_with_the_projects_bytes_is_reported_as_the_projects_files(
    layout: tuple[Path, Path],
) -> None:
    root, site = layout
    measured_in(root, site)
    report = read_coverage_data(root / ".coverage", root=root)
    assert sorted(f.path for f in report.files) == ["src/calc/__init__.py", "src/calc/more.py"]
    assert report.lines is not None and report.lines.covered == report.lines.total == 5
    assert report.branches is not None and report.branches.covered == report.branches.total == 2
    assert any(
        "calc measured in the copy in" in note and "counted as the project's files" in note
        for note in report.notes
    )


def test_a_copy_that_differs_is_not_counted_and_the_note_says_why(
    layout: tuple[Path, Path],
) -> None:
    root, site = layout
    write(site / "calc/__init__.py", BRANCHED_ADD.replace("b + a", "a + b") + "\n" * 40 + "X = 1\n")
    measured_in(root, site)
    report = read_coverage_data(root / ".coverage", root=root)
    # Not the copy's lines, neither as the project's files nor as files of their own: the
    # project's files show that none of them ran.
    assert sorted(f.path for f in report.files) == ["src/calc/__init__.py", "src/calc/more.py"]
    assert report.lines is not None and report.lines.covered == 0
    note = next(n for n in report.notes if "whose files differ from the project's" in n)
    assert "src/calc/__init__.py" in note and "pip install -e ." in note


def test_the_pytest_door_counts_the_copy_too(layout: tuple[Path, Path]) -> None:
    root, site = layout
    verdict, _ = pytest_door(root, site)
    coverage = next(g for g in verdict["gates"] if g["name"] == "coverage")
    assert coverage["status"] == "pass", coverage
    assert coverage["actual"]["lines"] == 100.0


def copy_tree(root: Path, folder: Path, *names: str) -> list[str]:
    out = []
    for name in names:
        shutil.copyfile(root / "src" / name, write(folder / name, ""))
        out.append(str(folder / name))
    return out


def test_copies_are_mapped_by_folder_and_only_when_every_copy_is_the_same(
    layout: tuple[Path, Path],
) -> None:
    root, site = layout
    measured = [str(site / "calc/__init__.py"), str(site / "calc/more.py")]
    copies = copies_of_the_project([*measured, str(root / "src/calc/more.py")], str(root))
    assert copies.aliases == {"agentgate-copy-0": [str(root / "src") + os.sep, str(site) + os.sep]}
    assert copies.omit == []
    # One copy of the folder differs: none of its copies counts.
    write(site / "calc/more.py", "VALUE = 2\n")
    copies = copies_of_the_project(measured, str(root))
    assert copies.aliases == {} and copies.omit == measured
    assert "(src/calc/more.py)" in copies.notes[0]


def test_what_is_no_copy_of_the_project(tmp_path: Path, layout: tuple[Path, Path]) -> None:
    root, site = layout
    other = write(site / "other/__init__.py", "")  # a library, not the project's
    own = root / "src/calc/__init__.py"  # the project's own file
    relative = "env/lib/python3.11/site-packages/calc/more.py"  # relative_files: left alone
    assert copies_of_the_project([str(other), str(own), relative], str(root)) == ({}, [], [])


def test_a_copy_anywhere_outside_the_project_is_found_by_its_longest_tail(
    tmp_path: Path, layout: tuple[Path, Path]
) -> None:
    root, _ = layout
    elsewhere = tmp_path / "vendored"
    measured = copy_tree(root, elsewhere, "calc/__init__.py")
    copies = copies_of_the_project(measured, str(root))
    assert copies.aliases == {
        "agentgate-copy-0": [str(root / "src") + os.sep, str(tmp_path / "vendored") + os.sep]
    }


def test_a_virtualenv_inside_the_project_and_a_flat_layout(tmp_path: Path) -> None:
    root = tmp_path / "flat"
    write(root / "calc/__init__.py", BRANCHED_ADD)
    site = root / ".venv/lib/python3.11/site-packages"
    shutil.copytree(root / "calc", site / "calc")
    copies = copies_of_the_project([str(site / "calc/__init__.py")], str(root))
    assert copies.aliases == {"agentgate-copy-0": [str(root) + os.sep, str(site) + os.sep]}
    assert "(./)" in copies.notes[0] and ".venv/lib/python3.11/site-packages" in copies.notes[0]


def test_glob_characters_in_a_path_are_never_a_pattern(tmp_path: Path) -> None:
    root = tmp_path / "p[1]"
    write(root / "src/calc/__init__.py", BRANCHED_ADD)
    site = tmp_path / "site-packages"
    shutil.copytree(root / "src/calc", site / "calc")
    assert copies_of_the_project([str(site / "calc/__init__.py")], str(root)).aliases == {}
    root = tmp_path / "p"
    write(root / "src/calc/__init__.py", BRANCHED_ADD)
    site = tmp_path / "s[1]/site-packages"
    shutil.copytree(root / "src/calc", site / "calc")
    copies = copies_of_the_project([str(site / "calc/__init__.py")], str(root))
    assert copies.aliases == {} and copies.omit == []
    assert "differ" in copies.notes[0]


def plugged_coverage(root: Path, files: dict[str, str]) -> tuple[dict[str, Any], str]:
    """The pytest door's coverage gate on a project at ``root`` whose package `plug` is a
    pytest plugin (`-p plug`: pytest imports it before any plugin's hook runs), with
    ``files`` (path -> text) beside it; and the door's output."""
    write(root / "pyproject.toml", '[project]\nname = "plug"\nversion = "0.1"\n')
    write(root / "plug/__init__.py", "import os\n\nSEP = os.sep\n\n\ndef sep():\n    return SEP\n")
    for path, text in files.items():
        write(root / path, text)
    verdict, out = pytest_door(root, root, "-p", "plug")
    return next(g for g in verdict["gates"] if g["name"] == "coverage"), out


def test_the_pytest_door_leaves_out_what_pytest_imported_before_it_could_measure(
    tmp_path: Path,
) -> None:
    # Review 8: pyfakefs is a pytest plugin; pytest imports it before any plugin's hook runs,
    # so the pytest door never saw its import-time lines run and called them not covered.
    coverage, out = plugged_coverage(
        tmp_path / "plugged",
        {
            "calc/__init__.py": "def add(a, b):\n    return a + b\n",
            "tests/test_it.py": "from calc import add\nfrom plug import sep\n\n\n"
            "def test_it():\n    assert add(1, 2) == 3 and sep()\n",
        },
    )
    assert coverage["status"] == "pass", (coverage, out)
    assert coverage["actual"]["lines"] == 100.0


def test_a_project_pytest_imported_whole_before_it_could_measure_is_told_where_to_measure(
    tmp_path: Path,
) -> None:
    # Review 17: typeguard is a pytest plugin; pytest imported every file of it first, so the
    # pytest door had nothing left to report and blamed `--cov=`.
    coverage, out = plugged_coverage(
        tmp_path / "plugged",
        {"tests/test_it.py": "from plug import sep\n\n\ndef test_it():\n    assert sep()\n"},
    )
    assert coverage["status"] == "fail", (coverage, out)
    (problem,) = coverage["problems"]
    assert "every file of the project's code this session would measure was imported" in problem
    assert "loads the project's own plugins first: plug/__init__.py)" in problem
    assert "run `agentgate verify`" in problem and "--cov=" not in problem


def test_the_pytest_doors_run_time_is_not_the_clock_a_test_left_moved(tmp_path: Path) -> None:
    # Review 14: time-machine leaves time.monotonic moved after a travel; the pytest door
    # reported a run of 1795722911 s.
    root = tmp_path / "clock"
    write(root / "calc/__init__.py", "def add(a, b):\n    return a + b\n")
    write(
        root / "tests/test_clock.py",
        "import time\n\nfrom calc import add\n\n\ndef test_travel():\n"
        "    time.monotonic = lambda: 4e9\n    assert add(1, 2) == 3\n",
    )
    verdict, _ = pytest_door(root, root)
    test = next(g for g in verdict["gates"] if g["name"] == "test")
    assert 0 <= test["duration_s"] < 60, test
