"""No tracked file names the machine it was made on; recorded samples use the neutral root."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from _helpers import DATA, RECORDED_ROOT, REPO

# The checkout the samples were first recorded in. Spelled in two parts so that this file does
# not hold the very string it looks for.
RECORDING_CHECKOUT = "/work" + "/main"
# The neutral home of RECORDED_ROOT: a machine whose home it is names nothing by it.
NEUTRAL_HOME = "/home/user"


def tracked_files() -> list[Path]:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    listed = subprocess.run(
        [git, "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=False, timeout=60
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    names = [n for n in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    return [REPO / n for n in names]


def machine_paths() -> list[str]:
    """Paths that belong to the machine running the tests, not to the project."""
    paths = [RECORDING_CHECKOUT]
    try:
        home = Path.home()
    except (KeyError, RuntimeError):  # no home directory known for this user
        return paths
    for spelling in {str(home), home.as_posix()}:
        # "/" or "C:\" would match everything; the neutral home is the samples' own.
        if len(spelling.strip("/\\")) > 3 and spelling.rstrip("/\\") != NEUTRAL_HOME:
            paths.append(spelling.rstrip("/\\"))
    return paths


def test_no_tracked_file_names_the_machine() -> None:
    files = tracked_files()
    assert files, "git ls-files listed nothing"
    # A path counts only as a whole name: /home/u must not match inside /home/user/project, and
    # a closing tag such as Codex's </root> names no home folder.
    needles = {
        p: re.compile(rb"(?<![<\w])" + re.escape(p.encode("utf-8")) + rb"(?![\w-])")
        for p in machine_paths()
    }
    found: list[str] = []
    for path in files:
        if path.is_symlink():
            content = str(path.readlink()).encode("utf-8", "surrogateescape")
        elif path.is_file():
            content = path.read_bytes()  # binary files too: the coverage data file is SQLite
        else:
            continue  # deleted in the work tree, or a submodule
        found += [
            f"{path.relative_to(REPO)}: {p}" for p, rx in needles.items() if rx.search(content)
        ]
    assert not found, "tracked files name this machine:\n" + "\n".join(found)


def test_coverage_data_sample_is_recorded_under_the_neutral_root(tmp_path: Path) -> None:
    from coverage import CoverageData

    copy = tmp_path / ".coverage"  # read a copy: the sample itself stays untouched
    shutil.copyfile(DATA / "python" / "coverage-branches.data", copy)
    data = CoverageData(str(copy))
    data.read()
    project = f"{RECORDED_ROOT}/tests/data/python/project/shop/"
    measured = sorted(data.measured_files())
    assert measured == [
        project + name for name in ("__init__.py", "inventory.py", "pricing.py", "textutil.py")
    ]
    assert data.has_arcs()
