"""``pytest --agentgate``: what the caller's command line may choose (session.py).

The caller's ``-k`` and node ids already make a run partial; so do the options that choose what
is collected (``-o python_functions=...``, ``--ignore``, ``-c``), and a ``-p`` plugin no
installed package provides is judged as ``-p`` in ``addopts`` is. Played on a real project with
a real pytest process; honest options still pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import REWRITER

pytestmark = pytest.mark.usefixtures("fresh_state_home")

CONFIG = "profile: strict\ngates:\n  test: {command: pytest -p no:cacheprovider}\n"
TESTS = """\
def test_tax_standard():
    assert 20.0 == 20.0


def test_tax_zero():
    assert 1.5 == 0.0
"""


def project(tmp_path: Path, tests: str = TESTS) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "agentgate.yml").write_text(CONFIG)
    (root / "pyproject.toml").write_text(
        "[project]\nname = 'p'\nversion = '0'\n\n"
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    (root / "tests" / "test_tax.py").write_text(tests)
    return root


def gated(root: Path, *args: str, **env: str) -> tuple[int, dict[str, Any]]:
    full = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "AGENTGATE_RUNNING")}
    full.update(env, NO_COLOR="1")
    command = [sys.executable, "-m", "pytest", "--agentgate=strict", "--agentgate-json=v.json"]
    proc = subprocess.run(
        [*command, *args], cwd=root, env=full, capture_output=True, text=True, timeout=180
    )
    written = root / "v.json"
    assert written.exists(), proc.stdout + proc.stderr
    verdict: dict[str, Any] = json.loads(written.read_text())
    written.unlink()
    return proc.returncode, verdict


def test_problems(verdict: dict[str, Any]) -> str:
    (found,) = [g for g in verdict["gates"] if g["name"] == "test"]
    return " ".join(found.get("problems", []))


test_problems.__test__ = False  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "options",
    [
        ["-o", "python_functions=test_tax_s*"],
        ["--override-ini=python_files=nothing_*.py test_tax.py"],
        ["--ignore=tests/test_tax.py", "tests"],
    ],
    ids=["python_functions", "python_files", "ignore"],
)
def test_options_that_narrow_collection_make_the_run_partial(
    tmp_path: Path, options: list[str]
) -> None:
    root = project(tmp_path)
    if options[0].startswith("--ignore"):  # the failing test kept in a file of its own
        (root / "tests" / "test_more.py").write_text("def test_more():\n    assert True\n")
    code, verdict = gated(root, "-p", "no:cacheprovider", *options)
    assert code != 0 and verdict["status"] == "fail", verdict
    problems = test_problems(verdict)
    assert "only part of the suite ran" in problems
    assert "the command line chooses what is collected" in problems


def test_a_plugin_from_outside_the_project_fails_strict(tmp_path: Path) -> None:
    root = project(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "known_issues.py").write_text(REWRITER)
    code, verdict = gated(
        root, "-p", "no:cacheprovider", "-p", "known_issues", PYTHONPATH=str(shared)
    )
    assert code != 0 and verdict["status"] == "fail", verdict
    assert "-p known_issues on the command line loads a plugin that no installed package" in (
        test_problems(verdict)
    )


@pytest.mark.parametrize(
    "options",
    [
        ["-p", "no:cacheprovider"],
        ["-p", "xdist", "-p", "pytester", "-p", "no:cacheprovider"],
        ["-o", "cache_dir=.other-cache", "-o", "console_output_style=classic"],
        # The project's own value (pytest's default here), or its own testpaths: the same suite.
        ["-o", "python_functions=test", "-o", "testpaths=tests"],
    ],
    ids=["no-cacheprovider", "installed-plugins", "cache-dir", "own-values"],
)
def test_honest_options_pass(tmp_path: Path, options: list[str]) -> None:
    root = project(tmp_path, TESTS.replace("1.5 == 0.0", "0.0 == 0.0"))
    code, verdict = gated(root, *options)
    assert (code, verdict["status"]) == (0, "pass"), test_problems(verdict)
