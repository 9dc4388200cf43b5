"""Asserts that do not run: ``python -O`` or ``PYTHONOPTIMIZE`` with pytest's rewriting off.

pytest rewrites the asserts of test modules into plain ``if`` statements, which survive -O;
``--assert=plain`` turns that off, and then Python strips every assert: a failing test passes.
Each door is played on a real project (a git repository in tmp_path, real processes).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.usefixtures("fresh_state_home")

GIT = shutil.which("git")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
CONFIG = "profile: strict\ngates:\n  test: {command: pytest -p no:cacheprovider}\n"
FAILING = "def test_zero_rate():\n    assert 1.5 == 0.0\n"
PASSING = "def test_zero_rate():\n    assert 0.0 == 0.0\n"


def project(tmp_path: Path, test: str, addopts: str = "") -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "agentgate.yml").write_text(CONFIG)
    pytest_ini = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    if addopts:
        pytest_ini += f'addopts = "{addopts}"\n'
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n\n" + pytest_ini)
    (root / "tests" / "test_tax.py").write_text(test)
    if GIT:
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
            subprocess.run([GIT, *args], cwd=root, check=True, env={**os.environ, **GIT_ENV})
    return root


def run(root: Path, *command: str, **env: str) -> tuple[int, dict[str, Any]]:
    full = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONOPTIMIZE", "PYTEST_ADDOPTS", "AGENTGATE_RUNNING")
    }
    full.update(env, NO_COLOR="1")
    proc = subprocess.run(
        [*command], cwd=root, env=full, capture_output=True, text=True, timeout=180
    )
    written = root / "v.json"
    assert written.exists(), proc.stdout + proc.stderr
    verdict: dict[str, Any] = json.loads(written.read_text())
    written.unlink()
    return proc.returncode, verdict


def pytest_door(
    root: Path, *args: str, optimize: bool = False, **env: str
) -> tuple[int, dict[str, Any]]:
    python = [sys.executable, "-O"] if optimize else [sys.executable]
    command = [*python, "-m", "pytest", "-p", "no:cacheprovider", "--agentgate=strict", *args]
    return run(root, *command, "--agentgate-json=v.json", **env)


def verify_door(root: Path, **env: str) -> tuple[int, dict[str, Any]]:
    return run(
        root, sys.executable, "-m", "pytest_agentgate", "verify", "--output", "v.json", **env
    )


def gate(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [g for g in verdict["gates"] if g["name"] == name]
    return found


def rules(verdict: dict[str, Any]) -> list[str]:
    return [f["code"] for f in gate(verdict, "integrity").get("findings", [])]


# -- the pytest door: the interpreter's own flags ---------------------------------------------


def test_python_O_with_plain_asserts_fails_the_pytest_door(tmp_path: Path) -> None:
    root = project(tmp_path, FAILING)
    code, verdict = pytest_door(root, "--assert=plain", optimize=True)
    assert code != 0 and verdict["status"] == "fail"
    problems = " ".join(gate(verdict, "test")["problems"])
    assert "Python runs with -O" in problems and "--assert=plain" in problems


def test_python_O_with_plain_asserts_in_addopts_fails_the_pytest_door(tmp_path: Path) -> None:
    root = project(tmp_path, FAILING, addopts="--assert=plain")
    code, verdict = pytest_door(root, PYTHONOPTIMIZE="1")
    assert code != 0 and verdict["status"] == "fail"
    assert "environment-loosened" in rules(verdict)  # stopped before the first test


def test_honest_runs_pass_the_pytest_door(tmp_path: Path) -> None:
    root = project(tmp_path, PASSING)
    code, verdict = pytest_door(root, optimize=True)  # rewritten asserts run under -O
    assert (code, verdict["status"]) == (0, "pass"), verdict
    code, verdict = pytest_door(root, "--assert=plain")  # plain asserts run without -O
    assert (code, verdict["status"]) == (0, "pass"), verdict
    # and a failing test still fails under -O with pytest's rewriting
    (root / "tests" / "test_tax.py").write_text(FAILING)
    code, verdict = pytest_door(root, optimize=True)
    assert code != 0 and verdict["status"] == "fail"


# -- agentgate verify: the environment and the settings -------------------------------------


@pytest.mark.skipif(GIT is None, reason="git is needed")
def test_pythonoptimize_in_the_environment_is_a_finding_of_verify(tmp_path: Path) -> None:
    root = project(tmp_path, FAILING, addopts="--assert=plain")  # the base's own setting
    code, verdict = verify_door(root, PYTHONOPTIMIZE="1")
    assert code != 0 and verdict["status"] == "fail"
    assert "environment-loosened" in rules(verdict)
    code, verdict = verify_door(root)  # without it the failing test fails, as it should
    assert code != 0 and "environment-loosened" not in rules(verdict)
    assert gate(verdict, "test")["status"] == "fail"


@pytest.mark.skipif(GIT is None, reason="git is needed")
def test_addopts_gaining_plain_asserts_is_tool_config_loosened(tmp_path: Path) -> None:
    root = project(tmp_path, PASSING)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'addopts = "-q --assert=plain"\n')
    code, verdict = verify_door(root)
    assert code != 0 and "tool-config-loosened" in rules(verdict)
    (message,) = [
        f["message"]
        for f in gate(verdict, "integrity")["findings"]
        if f["code"] == "tool-config-loosened"
    ]
    assert "addopts gained --assert=plain" in message
    # Honest: another option added to addopts is no finding.
    pyproject.write_text(pyproject.read_text().replace("--assert=plain", "-ra"))
    code, verdict = verify_door(root)
    assert (code, verdict["status"]) == (0, "pass"), verdict


def test_what_pythonoptimize_and_assert_mean() -> None:
    from pytest_agentgate.integrity.environment import findings, optimize_level, plain_asserts

    assert [optimize_level(v) for v in ("", " ", "0", "1", "2", "yes", "-1")] == [
        0,
        0,
        0,
        1,
        2,
        1,
        0,
    ]
    assert plain_asserts("-q --assert=plain") and plain_asserts("--assert plain")
    assert not plain_asserts("--assert=rewrite") and not plain_asserts("-q")
    assert not plain_asserts("--assert=plain --assert=rewrite")
    assert list(findings({"PYTHONOPTIMIZE": "0"}, Path("/p"))) == []
    (found,) = findings({"PYTHONOPTIMIZE": "2", "PYTEST_ADDOPTS": "--assert=plain"}, Path("/p"))
    assert found.rule == "environment-loosened"
    assert found.message.startswith(
        "PYTHONOPTIMIZE=2 in the environment and PYTEST_ADDOPTS has --assert=plain: Python runs "
        "with -OO"
    )
