"""Zero-config on real projects, fetched from the package index as sdists at pinned versions.

Each project is unpacked into a fresh git repository, installed editable (so coverage measures
its sources), and gated by ``agentgate verify`` with no configuration. The verdict must equal an
oracle computed here from the tools themselves:

- the test gate's counts equal pytest's own summary line of a plain run (agentgate's plugin
  off), and every failing test is named;
- the coverage gate's line and branch figures equal ``coverage json`` over the data files the
  gate's run wrote (combined by coverage.py itself), under the project's own configuration;
- the lint gate's count equals the project's own linter at the project's pin (ruff at the
  ``rev`` of its pre-commit hook, installed apart here), or flake8 with its setup.cfg.

The projects cover what first contact got wrong: attrs (``parallel = true`` coverage, ruff pinned
in pre-commit, an ``ALL`` rule set), pluggy (ruff pinned, a .coveragerc) and six (flake8, no
ruff). Run by .ci/run in a virtualenv with agentgate and ``requirements.txt`` installed:

    python -m pytest -p no:cacheprovider -q tests_e2e/sdists
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PY = sys.executable
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    linter: str  # "ruff" or "flake8"
    pin: str | None  # the version the project pins, where it pins one
    config: str  # where the linter's configuration is, as the verdict names it


PROJECTS = [
    Project("attrs", "25.3.0", "ruff", "0.9.10", "pyproject.toml [tool.ruff]"),
    Project("pluggy", "1.6.0", "ruff", "0.11.9", "pyproject.toml [tool.ruff]"),
    Project("six", "1.17.0", "flake8", None, "setup.cfg [flake8]"),
]


def run(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sdists")


def fetch(project: Project, workspace: Path) -> Path:
    """The sdist from the package index, unpacked as a git repository with one commit, and
    installed editable in this environment."""
    downloads = workspace / "downloads"
    spec = f"{project.name}=={project.version}"
    run(PY, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
        "-d", str(downloads), spec, cwd=workspace)  # fmt: skip
    (archive,) = downloads.glob(f"{project.name.replace('-', '_')}-{project.version}.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(workspace, filter="data")
    root = workspace / f"{project.name}-{project.version}"
    run("git", "init", "-q", "-b", "main", cwd=root)
    run("git", "add", "-A", cwd=root)
    run("git", "commit", "-q", "-m", f"{spec} as released", cwd=root)
    run(PY, "-m", "pip", "install", "--quiet", "--no-deps", "-e", ".", cwd=root)
    return root


def pytest_counts(root: Path) -> dict[str, int]:
    """pytest's own summary of a plain run of the project's suite."""
    done = run(PY, "-m", "pytest", "-p", "no:agentgate", "-p", "no:cacheprovider", "-q",
               cwd=root, check=False)  # fmt: skip
    last = done.stdout.strip().splitlines()[-1]
    counts = dict.fromkeys(("passed", "failed", "errors", "skipped", "xfailed", "xpassed"), 0)
    for number, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)", last):
        counts["errors" if word.startswith("error") else word] = int(number)
    assert sum(counts.values()), f"no counts in pytest's summary: {last!r}"
    return counts


def coverage_oracle(root: Path, workspace: Path) -> dict[str, float]:
    """coverage.py's own report of the data files the gate's run wrote."""
    data = sorted((root / ".agentgate").glob(".coverage*"))
    assert data, "the gate's run wrote no coverage data"
    combined = workspace / f"{root.name}.coverage"
    run(PY, "-m", "coverage", "combine", "--keep", "-q", f"--data-file={combined}",
        *map(str, data), cwd=root)  # fmt: skip
    out = workspace / f"{root.name}-coverage.json"
    run(PY, "-m", "coverage", "json", "-q", f"--data-file={combined}", "-o", str(out), cwd=root)
    totals = json.loads(out.read_text())["totals"]
    return {
        "lines": 100.0 * totals["covered_lines"] / totals["num_statements"],
        "branches": 100.0 * totals["covered_branches"] / totals["num_branches"],
    }


def lint_oracle(project: Project, root: Path, workspace: Path) -> int:
    """How many findings the project's own linter reports, at the project's pin."""
    if project.linter == "flake8":
        done = run(PY, "-m", "flake8", ".", cwd=root, check=False)
        return len([line for line in done.stdout.splitlines() if line.strip()])
    target = workspace / f"ruff-{project.pin}"
    if not target.exists():
        run(PY, "-m", "pip", "install", "--quiet", "--target", str(target),
            f"ruff=={project.pin}", cwd=workspace)  # fmt: skip
    done = run(str(target / "bin" / "ruff"), "check", "--no-cache", "--output-format", "json",
               ".", cwd=root, check=False)  # fmt: skip
    return len(json.loads(done.stdout))


def gate(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in verdict["gates"] if g["name"] == name)


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_zero_config_verdict_equals_the_tools_own(project: Project, workspace: Path) -> None:
    root = fetch(project, workspace)
    done = run(PY, "-m", "pytest_agentgate", "verify", "--format", "json", "--no-cache",
               cwd=root, check=False)  # fmt: skip
    verdict = json.loads(done.stdout)
    assert verdict["profile"] == "strict"  # no configuration: strict, a failing test is not quiet

    expected = pytest_counts(root)
    test = gate(verdict, "test")
    actual = test["actual"]
    assert actual["passed"] - actual["xpassed"] == expected["passed"], test["summary"]
    for word in ("failed", "errors", "skipped", "xfailed", "xpassed"):
        assert actual[word] == expected[word], (word, test["summary"], expected)
    named = {f["name"] for f in test["findings"]}
    assert len(named) == expected["failed"] + expected["errors"]

    coverage = gate(verdict, "coverage")
    oracle = coverage_oracle(root, workspace)
    assert coverage["actual"]["lines"] == pytest.approx(oracle["lines"], abs=1e-9)
    assert coverage["actual"]["branches"] == pytest.approx(oracle["branches"], abs=1e-9)

    lint = gate(verdict, "lint")
    assert lint["actual"]["errors"] + lint["actual"]["warnings"] == lint_oracle(
        project, root, workspace
    ), lint["summary"]
    said = next(n for n in verdict["notices"] if n.startswith("lint: "))
    assert project.linter in said and project.config in said, said
    if project.pin:
        assert f"{project.pin}, pinned in .pre-commit-config.yaml" in said, said
    shutil.rmtree(root / ".agentgate", ignore_errors=True)
