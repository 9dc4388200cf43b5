"""``lint: {scope: changed}``: a codebase with old findings adopts the gate for its changes.

Real git repositories with legacy lint errors, ruff run by the gate, the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import PY, CliRun

Agentgate = Callable[..., CliRun]

# Three old findings ruff reports with its default rules: F401 on line 1, F541 and F841 on
# line 5.
LEGACY = """\
import os


def old(value):
    label = f"old"
    return value
"""

APP_BASE = """\
def total(items):
    return sum(items)


def count(items):
    return len(items)
"""

# One new finding (F841 on line 7) in the lines the change adds.
APP_NEW_ERROR = """\
def total(items):
    return sum(items)


def count(items):
    n = len(items)
    unused = n * 2
    return n
"""

APP_CLEAN = """\
def total(items):
    return sum(items)


def count(items):
    n = len(items)
    return n
"""

RUFF = f"{PY} -m ruff check --no-cache --output-format json ."


def config(scope: str = "changed", extra: str = "") -> str:
    return f"gates:\n  lint: {{command: '{RUFF}', format: ruff,\n         scope: {scope}{extra}}}\n"


def git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True)


def commit_config(root: Path, text: str) -> None:
    """Make ``text`` the configuration at the base (main): the base's is the one that counts."""
    git(root, "checkout", "-q", "main")
    write(root / "agentgate.yml", text)
    git(root, "commit", "-qm", "configuration", "agentgate.yml")
    git(root, "checkout", "-q", "feature")
    git(root, "merge", "-q", "main")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def legacy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose base has three lint errors, on a feature branch."""
    root = tmp_path / "legacy"
    write(root / ".gitignore", ".agentgate/\n")
    write(root / "agentgate.yml", config())
    write(root / "src" / "legacy.py", LEGACY)
    write(root / "src" / "app.py", APP_BASE)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "feature")
    monkeypatch.chdir(root)
    return root


def test_scope_changed_fails_on_the_new_error_only(legacy: Path, agentgate: Agentgate) -> None:
    write(legacy / "src" / "app.py", APP_NEW_ERROR)
    result = agentgate("verify", "--format", "json")
    lint = result.gate("lint")
    assert result.code == 1 and lint["status"] == "fail"
    assert lint["actual"] == {"errors": 1, "warnings": 0}
    assert lint["summary"] == "1 error (max 0), 0 warnings (max 50) in the change"
    assert [(f["path"], f["line"], f["code"]) for f in lint["findings"]] == [
        ("src/app.py", 7, "F841")
    ]
    continuation = result.verdict()["continuation"]
    assert "3 findings outside the change not counted (scope: changed)" in continuation
    assert "legacy.py" not in continuation


def test_scope_changed_passes_a_change_that_adds_none(legacy: Path, agentgate: Agentgate) -> None:
    write(legacy / "src" / "app.py", APP_CLEAN)
    result = agentgate("verify", "--format", "json")
    lint = result.gate("lint")
    # ruff exits 1 for the old findings; they are accounted for, so that is not a failure.
    assert lint["exit_code"] == 1
    assert lint["status"] == "pass", lint
    assert lint["actual"] == {"errors": 0, "warnings": 0}
    assert lint["findings"] == []


def test_scope_all_counts_every_finding(legacy: Path, agentgate: Agentgate) -> None:
    write(legacy / "src" / "app.py", APP_CLEAN)
    commit_config(legacy, config("all"))
    lint = agentgate("verify", "--format", "json").gate("lint")
    assert lint["status"] == "fail" and lint["actual"] == {"errors": 3, "warnings": 0}


def test_context_lines_around_a_change_count(legacy: Path, agentgate: Agentgate) -> None:
    # Lines 7-10 are new: line 5 is 2 lines from the change, line 1 is 6 lines from it.
    write(legacy / "src" / "legacy.py", LEGACY + "\n\ndef newer():\n    return 1\n")
    result = agentgate("verify", "--format", "json")
    lint = result.gate("lint")
    assert sorted((f["line"], f["code"]) for f in lint["findings"]) == [(5, "F541"), (5, "F841")]
    assert (
        "1 finding outside the change not counted (scope: changed)"
        in (result.verdict()["continuation"])
    )
    for context, codes in ((6, ["F401", "F541", "F841"]), (1, [])):
        commit_config(legacy, config(extra=f", context: {context}"))
        lint = agentgate("verify", "--format", "json").gate("lint")
        assert sorted(f["code"] for f in lint["findings"]) == codes, context


def test_without_a_base_every_finding_counts_and_it_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentgate: Agentgate
) -> None:
    write(tmp_path / "agentgate.yml", config())
    write(tmp_path / "src" / "legacy.py", LEGACY)
    monkeypatch.chdir(tmp_path)
    result = agentgate("verify", "--format", "json")
    lint = result.gate("lint")
    assert lint["status"] == "fail" and lint["actual"] == {"errors": 3, "warnings": 0}
    assert lint["summary"] == "3 errors (max 0), 0 warnings (max 50)"
    assert (
        "scope: changed, but not a git repository: every finding is counted"
        in result.verdict()["continuation"]
    )


def test_a_finding_without_a_line_counts_when_its_file_changed(
    legacy: Path, agentgate: Agentgate
) -> None:
    """File-level findings (a SARIF result without a region) count in a changed file."""
    write(legacy / "src" / "app.py", APP_CLEAN)

    def result(uri: str) -> dict[str, object]:
        return {
            "ruleId": "license",
            "level": "error",
            "message": {"text": "no license header"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
        }

    sarif = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "header-check"}},
                "results": [result("src/app.py"), result("src/legacy.py")],
            }
        ],
    }
    write(legacy / "header.sarif", json.dumps(sarif))
    commit_config(legacy, "gates:\n  lint: {report: header.sarif, scope: changed}\n")
    git(legacy, "add", "-A")
    git(legacy, "commit", "-qm", "header check")
    result_ = agentgate("verify", "--no-run", "--format", "json")
    lint = result_.gate("lint")
    assert [(f["path"], f["line"]) for f in lint["findings"]] == [("src/app.py", None)]
    assert (
        "1 finding outside the change not counted (scope: changed)"
        in (result_.verdict()["continuation"])
    )


def test_a_wrong_scope_names_the_key(legacy: Path, agentgate: Agentgate) -> None:
    write(
        legacy / "agentgate.yml",
        config("changes"),
    )
    result = agentgate("verify")
    # The base's configuration is in force; the change's broken file is an integrity finding
    # that names the key and what to do.
    assert result.code == 1
    assert (
        "agentgate.yml:3 (gates.lint.scope: 'changes' is not valid; did you mean 'changed'? "
        "choose one of: all, changed); the base's configuration is in force: fix the file"
        in result.out
    )


def test_run_from_a_subfolder(
    legacy: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ruff's absolute paths are shown relative to the folder agentgate runs in."""
    write(legacy / "src" / "app.py", APP_NEW_ERROR)
    monkeypatch.chdir(legacy / "src")
    lint = agentgate("verify", "--format", "json").gate("lint")
    assert lint["actual"] == {"errors": 1, "warnings": 0}
    assert [(f["path"], f["line"]) for f in lint["findings"]] == [("app.py", 7)]
