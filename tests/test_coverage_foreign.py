"""Code measured outside the project is not the project's coverage.

coverage.py run without ``source`` measures every file outside the standard library and
site-packages: another project installed in editable mode (``pip install -e`` from elsewhere,
agentgate itself in the reviewer's run on humanize) was measured, and its 949 uncovered lines
made humanize's 97% a 39.94%. Each test builds a project whose tests import a module that lives
outside it, runs the real coverage.py (or pytest-cov) over it, and reads what the tool wrote:
the files outside are left out of the figures, with a note; the project's own files, however
they are spelled, are not.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import BRANCHED_ADD, git, verify_json

import pytest_agentgate
from pytest_agentgate.reports.coverage import read_coverage
from pytest_agentgate.reports.coverage._common import outside_project

# Another project's code, imported by the tests, most of it never run.
FOREIGN = "def used():\n    return 1\n\n\n" + "".join(
    f"def unused_{n}(x):\n    if x:\n        return {n}\n    return -{n}\n\n\n" for n in range(20)
)

TEST = """\
import foreign
from calc import add


def test_add():
    assert add(1, 2) == 3
    assert add(-1, 2) == 1
    assert foreign.used() == 1
"""

CONFTEST = "import sys\n\nsys.path.insert(0, {folder!r})\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project (``calc``, one line of it never run) whose tests import ``foreign`` from a
    folder beside it, outside the project."""
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "foreign.py", FOREIGN)
    root = tmp_path / "project"
    write(root / "calc/__init__.py", BRANCHED_ADD + "\n\ndef never():\n    return 0\n")
    write(root / "tests/test_calc.py", TEST)
    write(root / "tests/conftest.py", CONFTEST.format(folder=str(elsewhere)))
    return root


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "COVERAGE_"))}
    env.pop("AGENTGATE_RUNNING", None)
    return env


def coverage(root: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "coverage", *args],
        cwd=root,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def measured(root: Path) -> dict[str, Any]:
    """Run the tests under coverage.py without ``source`` (what measured agentgate in humanize),
    and coverage.py's own figures for the project's files alone (``--include``)."""
    coverage(root, "run", "--branch", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    coverage(root, "json", "-o", "own.json", "--include", "calc/*,tests/*")
    totals: dict[str, Any] = json.loads((root / "own.json").read_text())["totals"]
    (root / "own.json").unlink()
    return totals


REPORTS = {
    "coverage-data": (None, ".coverage"),
    "coverage-json": (("json", "-o", "coverage.json"), "coverage.json"),
    "cobertura": (("xml", "-o", "coverage.xml"), "coverage.xml"),
    "lcov": (("lcov", "-o", "coverage.lcov"), "coverage.lcov"),
}


@pytest.mark.parametrize("format", list(REPORTS))
def test_files_outside_the_project_are_left_out_of_every_format(project: Path, format: str) -> None:
    own = measured(project)
    write_args, name = REPORTS[format]
    if write_args:
        coverage(project, *write_args)
    report = read_coverage(project / name, root=project)
    assert sorted(f.path for f in report.files) == [
        "calc/__init__.py",
        "tests/conftest.py",
        "tests/test_calc.py",
    ]
    # The project's figures, as coverage.py gives them for its files alone: its own line that
    # never ran still counts.
    assert report.lines is not None and report.statements == report.lines
    assert (report.lines.covered, report.lines.total) == (
        own["covered_lines"],
        own["num_statements"],
    )
    assert report.lines.covered < report.lines.total
    if format != "cobertura":  # Cobertura counts branch outcomes per line, not coverage.py's arcs
        assert report.branches is not None
        assert (report.branches.covered, report.branches.total) == (
            own["covered_branches"],
            own["num_branches"],
        )
    if report.functions is not None:  # every function the project has, none of foreign's
        assert report.functions.total in (3, 4)  # add, never (and lcov: the test function)
    # foreign.py, and what else coverage.py measured outside (agentgate's own code, installed
    # in editable mode from its checkout, as in the reviewer's run).
    [note] = [n for n in report.notes if "outside the project" in n]
    assert re.match(r"\d+ measured file\(s\) outside the project left out of the coverage ", note)
    example = note.split("(e.g. ", 1)[1].split("): ", 1)[0]
    assert Path(example).is_file() and outside_project(example, project)


def test_agentgate_verify_judges_the_project_s_coverage(project: Path) -> None:
    config = {
        "gates": {
            "test": {
                "command": f"{sys.executable} -m coverage run --branch -m pytest -q "
                "-p no:cacheprovider tests",
            },
            "coverage": {"report": ".coverage", "lines": 80, "functions": 50},
        }
    }
    write(project / "agentgate.yml", json.dumps(config))
    write(project / ".gitignore", ".agentgate/\n.coverage\n__pycache__/\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    code, verdict = verify_json(project)
    gate = next(g for g in verdict["gates"] if g["name"] == "coverage")
    assert gate["status"] == "pass" and code == 0, json.dumps(gate)[:2000]
    own = measured(project)
    percent = own["covered_lines"] * 100 / own["num_statements"]
    assert gate["actual"]["lines"] == pytest.approx(percent)
    assert gate["summary"].startswith(f"lines {percent:.2f}% (need 80.00%), branches 100.00%")
    # The library's caller sees the gate's notes (the renderings leave a passing gate's out).
    result = next(g for g in pytest_agentgate.verify(str(project)).gates if g.name == "coverage")
    assert any("outside the project left out of the coverage figures" in n for n in result.notes)


def test_the_pytest_door_judges_the_project_s_coverage(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--cov", "--cov-branch"]
    command += ["--agentgate=strict", "--agentgate-json", "v.json", "tests"]
    done = subprocess.run(
        command, cwd=project, env=clean_env(), capture_output=True, text=True, timeout=120
    )
    verdict = json.loads((project / "v.json").read_text(encoding="utf-8"))
    gate = next(g for g in verdict["gates"] if g["name"] == "coverage")
    own = measured(project)
    assert gate["actual"]["lines"] == pytest.approx(
        own["covered_lines"] * 100 / own["num_statements"]
    )
    # It fails on the project's own function that never ran, and names only the project's files.
    assert gate["status"] == "fail", gate
    assert [f["path"] for f in gate["findings"]] == ["calc/__init__.py"]
    assert "outside the project left out of the coverage figures" in done.stdout


def test_the_project_s_files_however_spelled_are_the_project_s(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write(root / "pkg/a.py", "A = 1\n")
    elsewhere = write(tmp_path / "elsewhere/b.py", "B = 1\n").parent
    (tmp_path / "link").symlink_to(root / "pkg")  # a link from outside into the project
    (root / "vendor").symlink_to(elsewhere)  # a link inside the project to code elsewhere
    inside = [
        "pkg/a.py",
        "../proj/pkg/a.py",
        str(root / "pkg" / ".." / "pkg" / "a.py"),
        str(tmp_path / "link" / "a.py"),
        "vendor/b.py",
        "not/there.py",
    ]
    assert [p for p in inside if outside_project(p, root)] == []
    outside = ["../elsewhere/b.py", str(elsewhere / "b.py"), str(root / ".." / "elsewhere/b.py")]
    assert [p for p in outside if outside_project(p, root)] == outside
    # A relative path is read from where the tool wrote it.
    assert outside_project("b.py", root, relative_to=elsewhere)
    assert not outside_project("a.py", root, relative_to=root / "pkg")


def test_lcov_paths_spelled_through_links_and_dots_are_kept(project: Path) -> None:
    measured(project)
    coverage(project, "lcov", "-o", "coverage.lcov")
    lcov = project / "coverage.lcov"
    (project.parent / "link").symlink_to(project / "calc")
    text = lcov.read_text().replace("SF:calc/__init__.py", f"SF:{project.parent}/link/__init__.py")
    text = text.replace("SF:tests/test_calc.py", "SF:../project/tests/test_calc.py")
    lcov.write_text(text)
    report = read_coverage(lcov, root=project)
    assert len(report.files) == 3 and all("foreign" not in f.path for f in report.files)


def test_a_report_with_no_file_of_this_project_is_read_as_it_is(project: Path) -> None:
    # Written on another machine (CI's paths): nothing here to tell the project's files from
    # others, so none is left out.
    measured(project)
    coverage(project, "lcov", "-o", "coverage.lcov")
    lcov = project / "coverage.lcov"
    text = lcov.read_text().replace("SF:", "SF:/ci/build/")
    lcov.write_text(text)
    report = read_coverage(lcov, root=project)
    assert len(report.files) == text.count("SF:") > 3
    assert not any("outside the project" in n for n in report.notes)


def test_project_code_linked_in_from_outside_stays_counted(project: Path) -> None:
    # coverage.py records a file by its real path: a module moved out of the project and
    # linked back in is measured as a file outside it. It is the project's code (imported as
    # calc.far): leaving it out would raise the figure by hiding code the tests never ran.
    far = write(project.parent / "moved" / "far.py", FOREIGN)
    (project / "calc" / "far.py").symlink_to(far)
    write(
        project / "tests/test_far.py", "from calc import far\n\n\ndef test_far():\n    far.used()\n"
    )
    measured(project)
    report = read_coverage(project / ".coverage", root=project)
    assert str(far) in [f.path for f in report.files]
    assert all("elsewhere" not in f.path for f in report.files)  # foreign.py is still left out
