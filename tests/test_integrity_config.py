"""The base's configuration is the law: a change may tighten agentgate's configuration, never
loosen it; and the tools' settings that decide what is measured may not be loosened either.

Every test builds a real git repository: a base commit on ``main`` with ``agentgate.yml`` (the
templates are built once per module and copied), then the change on a branch or in the working
tree, and runs the real ``agentgate verify`` in-process (some through the real
``pytest --agentgate=strict`` in a subprocess).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import PY, CliRun

from pytest_agentgate.config.resolve import resolve_config

# -- building repositories ----------------------------------------------------------------------

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=root, env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return proc.stdout


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def edit(path: Path, old: str, new: str) -> str:
    """Replace ``old`` (which must be there) by ``new`` in ``path``; the new text."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    return text


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of ``text`` containing ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


CLEAN = {
    ".gitignore": ".agentgate/\n.coverage\n",
    "pkg/__init__.py": ("def add(a, b):\n    if a:\n        return a + b\n    return b\n"),
    "tests/test_pkg.py": (
        "from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
        "    assert add(0, 2) == 2\n"
    ),
    "pyproject.toml": """\
[project]
name = "pkg"
version = "0"

[tool.ruff.lint]
select = ["E", "F", "W"]

[tool.pytest.ini_options]
testpaths = ["tests"]

[tool.coverage.run]
branch = true
source = ["pkg"]

[tool.coverage.report]
fail_under = 80
exclude_also = ["if TYPE_CHECKING:"]
""",
}
# The base's defects, one per gate: two lint errors, a failing test, coverage below strict's.
LINT_DEFECT = {"tools/bad.py": "import os\nimport sys\n"}
TEST_DEFECT = {"tests/test_defect.py": "def test_defect():\n    assert 1 + 1 == 3\n"}
COVERAGE_DEFECT = {
    "pkg/uncovered.py": "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(8))
}

TEST_COMMAND = (
    f"{PY} -m pytest -q -p no:cacheprovider --cov=pkg --cov-branch "
    "--cov-report=json:.agentgate/cov.json tests"
)
GATED = f"""\
# The project's gate: the strict profile.
profile: strict
gates:
  lint:
    command: {PY} -m ruff check --no-cache .
  test:
    command: {TEST_COMMAND}
  coverage:
    report: .agentgate/cov.json
attempts:
  max: 3
"""
# Most tricks weaken the lint gate: ruff is quick, so these runs are.
LINT_ONLY = f"""\
# The project's gate: the strict profile.
profile: strict
gates:
  lint:
    command: {PY} -m ruff check --no-cache .
attempts:
  max: 3
"""
# For the settings of the tools, where only the integrity gate is of interest.
CHEAP = f"""\
profile: strict
gates:
  build:
    command: {PY} -c pass
"""
# The pytest plugin's projects: lint and the session's tests.
LINT_AND_TESTS = f"""\
profile: strict
gates:
  lint:
    command: {PY} -m ruff check --no-cache .
  test:
    command: {PY} -m pytest
"""


def build(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in files.items():
        write(root / name, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    top = tmp_path_factory.mktemp("templates")
    defects = {**CLEAN, **LINT_DEFECT, **TEST_DEFECT, **COVERAGE_DEFECT}
    return {
        "defects": build(top / "defects", {**defects, "agentgate.yml": GATED}),
        "clean": build(top / "clean", {**CLEAN, "agentgate.yml": GATED}),
        "lint-defect": build(
            top / "lint-defect", {**CLEAN, **LINT_DEFECT, "agentgate.yml": LINT_ONLY}
        ),
        "lint-clean": build(top / "lint-clean", {**CLEAN, "agentgate.yml": LINT_ONLY}),
        "cheap": build(top / "cheap", {**CLEAN, "agentgate.yml": CHEAP}),
        "lint": build(top / "lint", {**CLEAN, **LINT_DEFECT, "agentgate.yml": LINT_AND_TESTS}),
        "bare": build(top / "bare", CLEAN),  # no agentgate configuration at the base
    }


@pytest.fixture
def repo_from(
    templates: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], Path]:
    """A fresh copy of a template, on a new branch ``change``, as the working directory."""

    def make(name: str) -> Path:
        root = tmp_path / "repo"
        shutil.copytree(templates[name], root, symlinks=True)
        git(root, "checkout", "-q", "-b", "change")
        monkeypatch.chdir(root)
        return root

    return make


@pytest.fixture
def verify(agentgate: Callable[..., CliRun]) -> Callable[..., CliRun]:
    def run(*args: str) -> CliRun:
        return agentgate("verify", "--format", "json", *args)

    return run


def gate(run: CliRun, name: str) -> dict[str, Any]:
    return run.gate(name)


def findings(run: CliRun, rule: str) -> list[tuple[str | None, int | None, str]]:
    found = gate(run, "integrity")["findings"]
    return [(f["path"], f["line"], f["message"]) for f in found if f["code"] == rule]


def loosened(run: CliRun) -> list[tuple[str | None, int | None, str]]:
    """The gate-config-loosened findings; each message names its place (`` at FILE:LINE``),
    which is checked here and left out of what is returned."""
    out = []
    for path, line, message in findings(run, "gate-config-loosened"):
        where = f" at {path}" if line is None else f" at {path}:{line}"
        if where in message:
            message = message.replace(where, "", 1)
        else:
            assert line is None, f"{message!r} does not say{where}"
        out.append((path, line, message))
    return out


def base_label(root: Path) -> str:
    return f"agentgate.yml at main ({git(root, 'rev-parse', 'main').strip()[:12]})"


# -- the tricks: the base's configuration is used, and the weakening is reported ----------------


def test_a_lowered_threshold_is_the_bases(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-defect")
    text = edit(root / "agentgate.yml", "  lint:\n", "  lint:\n    max_errors: 10\n")
    git(root, "commit", "-qam", "tolerate lint")
    run = verify("--profile", "strict")
    assert run.code == 1
    lint = gate(run, "lint")
    assert lint["status"] == "fail" and lint["actual"]["errors"] == 2
    assert lint["expected"]["max_errors"] == 0
    assert lint["threshold_sources"]["max_errors"] == "profile strict"
    assert loosened(run) == [
        (
            "agentgate.yml",
            line_of(text, "max_errors"),
            "gates.lint.max_errors: 0 -> 10; the base's 0 is in force",
        )
    ]
    at = line_of(text, "max_errors")
    assert findings(run, "gate-config-loosened")[0][2] == (
        f"gates.lint.max_errors: 0 -> 10 at agentgate.yml:{at}; the base's 0 is in force"
    )
    assert gate(run, "integrity")["status"] == "fail"


@pytest.mark.parametrize(
    ("broken", "says"),
    [
        ("bogus_key: 1\n", "bogus_key"),
        ("gates: [unclosed\n", "invalid YAML"),
    ],
    ids=["unknown-key", "not-yaml"],
)
def test_a_configuration_broken_by_the_change_is_the_bases(
    repo_from: Callable[[str], Path], verify: Any, broken: str, says: str
) -> None:
    # Breaking agentgate.yml made every door say "agentgate's own trouble" (the stop hook let
    # the agent stop). The base's configuration loads: it is in force, and the change loosened
    # the configuration.
    root = repo_from("lint-defect")
    with (root / "agentgate.yml").open("a", encoding="utf-8") as handle:
        handle.write(broken)
    run = verify("--profile", "strict")
    assert run.code == 1
    assert gate(run, "lint")["status"] == "fail"
    ((path, _, message),) = loosened(run)
    assert path == "agentgate.yml"
    assert says in message and "the base's configuration is in force: fix the file" in message
    assert gate(run, "integrity")["status"] == "fail"


def test_the_bases_configuration_written_over_in_gits_objects(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    # Red team 16: the object of the base's agentgate.yml written over with a loosened text
    # (git never checks an object's hash when it reads it), and the same text in the working
    # tree, so that the change shows nothing.
    import zlib

    root = repo_from("lint-defect")
    name = git(root, "rev-parse", "HEAD:agentgate.yml").strip()
    text = edit(root / "agentgate.yml", "  lint:\n", "  lint:\n    max_errors: 10\n").encode()
    path = root / ".git" / "objects" / name[:2] / name[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(f"blob {len(text)}".encode() + b"\0" + text))
    run = verify("--profile", "strict")
    assert run.code == 1
    ((where, _, message),) = loosened(run)
    assert where == "agentgate.yml"
    assert f"object {name} (agentgate.yml at the base) does not hold what its name says" in (
        message
    )
    assert gate(run, "integrity")["status"] == "fail"


def test_a_threshold_switched_off_with_null(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("defects")
    text = edit(root / "agentgate.yml", "  test:\n", "  test:\n    min_pass_rate: null\n")
    run = verify("--profile", "strict")  # the change is in the working tree
    assert run.code == 1
    test = gate(run, "test")
    assert test["status"] == "fail" and test["expected"]["min_pass_rate"] == 100.0
    assert loosened(run) == [
        (
            "agentgate.yml",
            line_of(text, "min_pass_rate"),
            "gates.test.min_pass_rate: 100 -> null; the base's 100 is in force",
        )
    ]


def test_a_coverage_threshold_lowered(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("defects")
    text = edit(
        root / "agentgate.yml",
        "    report: .agentgate/cov.json\n",
        "    report: .agentgate/cov.json\n    lines: 10\n    branches: 10\n",
    )
    run = verify("--profile", "strict")
    coverage = gate(run, "coverage")
    assert coverage["status"] == "fail"
    assert coverage["expected"]["lines"] == 90.0 and coverage["actual"]["lines"] < 90
    assert {(p, line, m.split(":")[0]) for p, line, m in loosened(run)} == {
        ("agentgate.yml", line_of(text, "lines: 10"), "gates.coverage.lines"),
        ("agentgate.yml", line_of(text, "branches: 10"), "gates.coverage.branches"),
    }


@pytest.mark.parametrize(
    ("insert", "key", "message"),
    [
        (
            "    enabled: false\n",
            "enabled",
            "gates.lint.enabled: true -> false; the base's gate runs",
        ),
        (
            "    blocking: false\n",
            "blocking",
            "gates.lint.blocking: true -> false; the base's gate blocks",
        ),
    ],
    ids=["disabled", "advisory"],
)
def test_a_gate_disabled_or_made_advisory(
    repo_from: Callable[[str], Path], verify: Any, insert: str, key: str, message: str
) -> None:
    root = repo_from("lint-defect")
    text = edit(root / "agentgate.yml", "  lint:\n", "  lint:\n" + insert)
    run = verify("--profile", "strict")
    lint = gate(run, "lint")
    assert lint["status"] == "fail" and lint["blocking"] is True
    assert loosened(run) == [("agentgate.yml", line_of(text, f"{key}: false"), message)]


def test_a_gate_removed(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("defects")
    text = edit(root / "agentgate.yml", "  coverage:\n    report: .agentgate/cov.json\n", "")
    run = verify("--profile", "strict")
    assert gate(run, "coverage")["status"] == "fail"
    assert loosened(run) == [
        (
            "agentgate.yml",
            line_of(text, "gates:"),
            "gates.coverage: removed; the base's coverage gate is in force",
        )
    ]


@pytest.mark.parametrize(
    "command",
    [f"{PY} -m ruff check --no-cache tests", "echo '[]'"],
    ids=["narrowed", "echo"],
)
def test_a_lint_command_changed(
    repo_from: Callable[[str], Path], verify: Any, command: str
) -> None:
    root = repo_from("lint-defect")
    text = edit(
        root / "agentgate.yml",
        f"    command: {PY} -m ruff check --no-cache .\n",
        f"    command: {command}\n    format: ruff\n",
    )
    run = verify("--profile", "strict")
    lint = gate(run, "lint")
    assert lint["status"] == "fail" and lint["actual"]["errors"] == 2
    assert "ruff check --no-cache ." in lint["command"]
    assert loosened(run) == [
        (
            "agentgate.yml",
            line_of(text, command),
            f"gates.lint.command: `{PY} -m ruff check --no-cache .` -> `{command}`; the base's "
            "command is what counts",
        )
    ]


def test_flaky_and_partial_allowed(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("defects")
    text = edit(
        root / "agentgate.yml", "  test:\n", "  test:\n    flaky: allow\n    partial: allow\n"
    )
    run = verify("--profile", "strict")
    test = gate(run, "test")
    assert test["status"] == "fail"
    assert (test["expected"]["flaky"], test["expected"]["partial"]) == ("fail", "fail")
    assert sorted(loosened(run)) == [
        (
            "agentgate.yml",
            line_of(text, "flaky"),
            "gates.test.flaky: fail -> allow; the base's fail is in force",
        ),
        (
            "agentgate.yml",
            line_of(text, "partial"),
            "gates.test.partial: fail -> allow; the base's fail is in force",
        ),
    ]


def test_gating_disabled_at_the_top(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-defect")
    text = edit(root / "agentgate.yml", "profile: strict\n", "profile: strict\nenabled: false\n")
    run = verify("--profile", "strict")
    assert run.code == 1
    assert gate(run, "lint")["status"] == "fail"
    assert loosened(run) == [
        (
            "agentgate.yml",
            line_of(text, "enabled"),
            "enabled: true -> false; gating stays on, as at the base",
        )
    ]


def test_fewer_attempts(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-defect")
    text = edit(root / "agentgate.yml", "  max: 3\n", "  max: 1\n")
    run = verify("--profile", "strict", "--task", "t1")
    assert run.code == 1
    assert run.verdict()["attempt"] == {"number": 1, "max": 3}
    assert loosened(run) == [
        ("agentgate.yml", line_of(text, "max: 1"), "attempts.max: 3 -> 1; the base's 3 is in force")
    ]


def test_a_relaxed_profile(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-defect")
    text = edit(root / "agentgate.yml", "profile: strict\n", "profile: relaxed\n")
    git(root, "commit", "-qam", "relax")
    run = verify()  # no --profile: the configuration's
    assert run.verdict()["profile"] == "strict"
    lint = gate(run, "lint")
    assert lint["status"] == "fail" and lint["expected"]["max_errors"] == 0  # relaxed allows 5
    assert loosened(run) == [
        (
            "agentgate.yml",
            line_of(text, "profile: relaxed"),
            "profile: strict -> relaxed; the base's strict is in force",
        )
    ]


def test_the_change_cannot_approve_itself(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-defect")
    edit(root / "agentgate.yml", "  lint:\n", "  lint:\n    max_errors: 10\n")
    text = edit(
        root / "agentgate.yml",
        "attempts:\n",
        "integrity:\n  allow:\n"
        "    - {rule: gate-config-loosened, path: agentgate.yml, reason: agreed}\n"
        "attempts:\n",
    )
    run = verify("--profile", "strict")
    integrity = gate(run, "integrity")
    assert integrity["status"] == "fail"
    assert all(f["severity"] == "error" for f in integrity["findings"])
    assert gate(run, "lint")["status"] == "fail"
    assert (
        "agentgate.yml",
        line_of(text, "- {rule"),
        "integrity.allow: gained {rule: gate-config-loosened, path: agentgate.yml}; a change "
        "cannot approve its own findings: a reviewer adds the entry on the base branch",
    ) in loosened(run)


def test_a_deleted_configuration(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-defect")
    git(root, "rm", "-q", "agentgate.yml")  # now zero-config would gate the project
    run = verify("--profile", "strict")
    assert [g["name"] for g in run.verdict()["gates"]] == ["integrity", "lint"]
    assert gate(run, "lint")["status"] == "fail"
    assert loosened(run) == [
        (
            "agentgate.yml",
            None,
            "agentgate.yml was deleted by this change; the base's configuration is in force",
        )
    ]


def test_the_configuration_moved_into_pyproject(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    root = repo_from("lint-defect")
    git(root, "rm", "-q", "agentgate.yml")
    pyproject = (root / "pyproject.toml").read_text() + (
        f'\n[tool.agentgate]\nprofile = "strict"\n\n[tool.agentgate.gates.lint]\n'
        f'command = "{PY} -m ruff check --no-cache ."\nmax_errors = 9\n'
    )
    write(root / "pyproject.toml", pyproject)
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "fail"
    assert loosened(run) == [
        (
            "pyproject.toml",
            line_of(pyproject, "max_errors"),
            "gates.lint.max_errors: 0 -> 9; the base's 0 is in force",
        )
    ]


def test_an_explicit_base(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-defect")
    first = git(root, "rev-parse", "HEAD").strip()
    edit(root / "agentgate.yml", "  lint:\n", "  lint:\n    enabled: false\n")
    git(root, "commit", "-qam", "no lint")
    git(root, "branch", "-q", "-f", "main")  # main has the weakening too: nothing changed since
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "skipped" and loosened(run) == []
    run = verify("--profile", "strict", "--base", first)
    assert gate(run, "lint")["status"] == "fail"
    assert [m for _, _, m in loosened(run)] == [
        "gates.lint.enabled: true -> false; the base's gate runs"
    ]


def test_a_run_called_strict_is_judged_on_stricts_thresholds(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    root = repo_from("lint-defect")
    # The base's own configuration says standard with a lenient lint gate: reviewed, but not strict.
    edit(root / "agentgate.yml", "profile: strict\n", "profile: standard\n")
    edit(root / "agentgate.yml", "  lint:\n", "  lint:\n    max_errors: 5\n")
    git(root, "commit", "-qam", "standard")
    git(root, "branch", "-q", "-f", "main")
    run = verify("--profile", "strict")
    lint = gate(run, "lint")
    assert lint["status"] == "fail" and lint["expected"]["max_errors"] == 0
    assert lint["threshold_sources"]["max_errors"] == "raised to strict's"
    assert any("judged on strict's thresholds" in n for n in run.verdict()["notices"])
    assert loosened(run) == []
    # A reviewer approves the exception in the base's configuration.
    edit(
        root / "agentgate.yml",
        "attempts:\n",
        "integrity:\n  allow:\n"
        "    - {rule: threshold, path: gates.lint.max_errors, reason: legacy tools/ folder}\n"
        "attempts:\n",
    )
    git(root, "commit", "-qam", "approve")
    git(root, "branch", "-q", "-f", "main")
    run = verify("--profile", "strict")
    lint = gate(run, "lint")
    assert lint["status"] == "pass" and lint["expected"]["max_errors"] == 5
    assert lint["threshold_sources"]["max_errors"] == base_label(root)


# -- honest changes pass ---------------------------------------------------------------------------


def test_tightening_and_where_thresholds_came_from(
    repo_from: Callable[[str], Path], agentgate: Callable[..., CliRun]
) -> None:
    root = repo_from("clean")
    edit(root / "agentgate.yml", "  lint:\n", "  lint:\n    max_errors: 0\n")
    git(root, "commit", "-qam", "explicit")
    git(root, "branch", "-q", "-f", "main")
    edit(root / "agentgate.yml", "cov.json\n", "cov.json\n    lines: 95\n")  # tightened
    run = agentgate("verify", "--profile", "strict")
    assert run.code == 0, run.out
    lines = {line.split()[1]: line for line in run.out.splitlines() if line.startswith("  ")}
    assert "0 warnings (max 0) (thresholds: base agentgate.yml)" in lines["lint"]
    assert "(thresholds: this change, tightened)" in lines["coverage"]
    assert "(thresholds:" not in lines["test"]  # every one the profile's
    run = agentgate("verify", "--profile", "strict", "--no-run", "--format", "json")
    coverage = gate(run, "coverage")
    assert coverage["expected"]["lines"] == 95.0
    assert coverage["threshold_sources"]["lines"] == "agentgate.yml (this change, tightened)"
    assert coverage["threshold_sources"]["branches"] == "profile strict"
    assert gate(run, "lint")["threshold_sources"]["max_errors"] == base_label(root)
    assert gate(run, "integrity")["findings"] == []


def test_an_untouched_configuration(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-clean")
    write(
        root / "pkg/__init__.py", "def add(a, b):\n    if a:\n        return b + a\n    return b\n"
    )
    git(root, "commit", "-qam", "refactor")
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert gate(run, "integrity")["findings"] == []
    sources = {s for g in run.verdict()["gates"] for s in g["threshold_sources"].values()}
    assert sources == {"profile strict"}


def test_adding_a_gate(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-clean")
    edit(
        root / "agentgate.yml",
        "gates:\n",
        f"gates:\n  build:\n    command: {PY} -m compileall -q pkg\n",
    )
    git(root, "commit", "-qam", "build gate")
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert gate(run, "build")["status"] == "pass"
    assert gate(run, "integrity")["findings"] == []


def test_reformatting_the_yaml(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("lint-clean")
    write(
        root / "agentgate.yml",
        f"""\
attempts: {{max: 3}}   # the same values, in another order and style
gates: {{lint: {{command: "{PY} -m ruff check --no-cache ."}}}}
profile: "strict"
""",
    )
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert gate(run, "integrity")["findings"] == []
    assert not any("not in force" in n for n in run.verdict()["notices"])


def test_a_configuration_new_in_the_change(
    repo_from: Callable[[str], Path], verify: Any, agentgate: Callable[..., CliRun]
) -> None:
    # What `agentgate init` writes, tightened: zero-config's gates, as the base ran them, kept.
    root = repo_from("bare")
    assert agentgate("init").code == 0
    edit(
        root / "agentgate.yml",
        "    format: coverage-data\n",
        "    format: coverage-data\n    lines: 95\n",
    )
    git(root, "add", "agentgate.yml")
    git(root, "commit", "-qm", "adopt agentgate")
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    notices = run.verdict()["notices"]
    assert (
        "agentgate.yml is new in this change: it is not yet the law; a reviewer approves it by "
        "merging it"
    ) in notices
    assert any(n.startswith("agentgate.yml: gates.build.command") for n in notices)
    assert gate(run, "integrity")["findings"] == []
    assert gate(run, "coverage")["expected"]["lines"] == 95.0  # tightened: in force


def test_a_new_configuration_where_the_base_has_none_is_held_to_zero_config(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    # The base had no configuration: zero-config gated it (build, lint, test, coverage). A new
    # agentgate.yml with a build gate only was obeyed, and the failing test never ran.
    root = repo_from("bare")
    write(root / "tests/test_defect.py", TEST_DEFECT["tests/test_defect.py"])
    write(root / "agentgate.yml", CHEAP)
    run = verify("--profile", "strict")
    assert run.code == 1
    assert gate(run, "test")["status"] == "fail"  # zero-config's test gate ran
    assert {g["name"] for g in run.verdict()["gates"]} >= {"build", "lint", "test", "coverage"}
    at = line_of(CHEAP, "gates:")
    assert sorted(loosened(run)) == [
        ("agentgate.yml", at, f"gates.{name}: removed; the base's {name} gate is in force")
        for name in ("coverage", "lint", "test")
    ]
    assert (
        "the base has no agentgate configuration: zero-config's gates, as detected at the base, "
        "are the law; agentgate.yml may tighten them and add gates"
    ) in run.verdict()["notices"]


def test_a_project_new_in_the_change_keeps_its_new_configuration(
    repo_from: Callable[[str], Path], verify: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing of it at the base: no zero-config to hold the new file to.
    root = repo_from("bare")
    project = root / "tools" / "cli"
    write(project / "pyproject.toml", '[project]\nname = "cli"\nversion = "0"\n')
    write(project / "cli.py", "def main():\n    return 0\n")
    write(project / "agentgate.yml", CHEAP)
    monkeypatch.chdir(project)
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert [g["name"] for g in run.verdict()["gates"]] == ["integrity", "build"]


def test_a_new_configuration_cannot_pick_its_base_or_approve_itself(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    root = repo_from("bare")
    (root / "tests/test_pkg.py").unlink()
    write(
        root / "agentgate.yml",
        CHEAP + "base: HEAD\nintegrity:\n  allow:\n    - {rule: '*', path: '*', reason: mine}\n",
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "adopt agentgate, drop a test")
    run = verify("--profile", "strict")
    notices = run.verdict()["notices"]
    assert any(n.startswith("base: HEAD in agentgate.yml is not used until") for n in notices)
    assert "integrity.allow in agentgate.yml is not in force until it is merged" in notices
    # Judged against main, not against the change's own commit; no approval of its own.
    assert "against main" in gate(run, "integrity")["summary"]


def test_the_integrity_gate_and_a_custom_gate(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    root = repo_from("cheap")
    edit(
        root / "agentgate.yml",
        "gates:\n",
        "gates:\n  custom:\n    - {name: audit, command: 'true'}\n",
    )
    git(root, "commit", "-qam", "audit")
    git(root, "branch", "-q", "-f", "main")
    text = edit(
        root / "agentgate.yml",
        "  custom:\n    - {name: audit, command: 'true'}\n",
        "  integrity: {kind: integrity, enabled: false}\n",
    )
    run = verify("--profile", "strict")
    assert run.code == 1
    assert gate(run, "integrity")["status"] == "fail"
    assert gate(run, "audit")["status"] == "pass"
    assert sorted(loosened(run)) == [
        (
            "agentgate.yml",
            line_of(text, "gates:"),
            "gates.audit: removed; the base's audit gate is in force",
        ),
        (
            "agentgate.yml",
            line_of(text, "integrity"),
            "gates.integrity.enabled: true -> false; the base's gate runs",
        ),
    ]


def test_the_workspace_json_shape(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("cheap")
    git(root, "rm", "-q", "agentgate.yml")
    text = json.dumps(
        {"profile": "strict", "gates": {"build": {"command": f"{PY} -c pass", "maxErrors": 3}}},
        indent=2,
    )
    write(root / "agentgate.json", text)
    run = verify("--profile", "strict")
    assert gate(run, "build")["expected"] == {"max_errors": 0}
    assert loosened(run) == [
        (
            "agentgate.json",
            line_of(text, "maxErrors"),
            "gates.build.maxErrors: 0 -> 3; the base's 0 is in force",
        )
    ]


def test_a_new_configuration_cannot_switch_off_the_gate(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    root = repo_from("bare")
    text = CHEAP.replace("gates:\n", "enabled: false\ngates:\n") + (
        "  integrity: {kind: integrity, blocking: false, block: tampering}\n"
    )
    write(root / "agentgate.yml", text)
    run = verify("--profile", "strict")
    assert run.code == 1
    integrity = gate(run, "integrity")
    assert integrity["status"] == "fail" and integrity["blocking"] is True
    assert integrity["expected"] == {"block": "all"}
    here = line_of(text, "integrity")
    assert sorted(loosened(run)) == sorted(
        [
            # the base had no configuration: zero-config's gates are the law (a test of its own)
            *[
                (
                    "agentgate.yml",
                    line_of(text, "gates:"),
                    f"gates.{name}: removed; the base's {name} gate is in force",
                )
                for name in ("coverage", "lint", "test")
            ],
            (
                "agentgate.yml",
                line_of(text, "enabled"),
                "enabled: true -> false; gating stays on, as at the base",
            ),
            (
                "agentgate.yml",
                here,
                "gates.integrity.block: all -> tampering; the base's all is in force",
            ),
            (
                "agentgate.yml",
                here,
                "gates.integrity.blocking: true -> false; the integrity gate judges every change",
            ),
        ]
    )


# -- the tools' settings ---------------------------------------------------------------------------


def tool_findings(run: CliRun) -> list[tuple[str | None, int | None, str]]:
    return findings(run, "tool-config-loosened")


def test_ruff_ignoring_what_the_base_enforces(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    root = repo_from("lint-defect")
    text = edit(
        root / "pyproject.toml",
        'select = ["E", "F", "W"]\n',
        'select = ["E", "F", "W"]\nignore = ["F401"]\n',
    )
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass"  # ruff honours the ignore ...
    assert gate(run, "integrity")["status"] == "fail"  # ... the gate does not
    assert tool_findings(run) == [
        (
            "pyproject.toml",
            line_of(text, "ignore"),
            "ruff: ignore gained F401, rules the base enforces",
        )
    ]


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        (
            "[tool.ruff.lint]\n",
            '[tool.ruff]\ninclude = ["pkg/*.py", "tests/*.py"]\n\n[tool.ruff.lint]\n',
            "include",
            "ruff: include narrowed to pkg/*.py, tests/*.py: 1 files are no longer linted "
            "(tools/bad.py)",
        ),
        (
            'select = ["E", "F", "W"]\n',
            'select = ["E", "F", "W"]\n\n[tool.ruff.lint.pyflakes]\n'
            'allowed-unused-imports = ["os", "sys"]\n',
            "allowed-unused-imports",
            "ruff: pyflakes.allowed-unused-imports gained os, sys: the base's F rules report less",
        ),
    ],
    ids=["include", "allowed-unused-imports"],
)
def test_ruff_told_to_read_less_or_let_more_pass(
    repo_from: Callable[[str], Path], verify: Any, old: str, new: str, needle: str, message: str
) -> None:
    # Neither is an ignore, an exclude or a narrower select: ruff skips tools/bad.py, or lets
    # its unused imports pass, and the lint gate passed.
    root = repo_from("lint-defect")
    text = edit(root / "pyproject.toml", old, new)
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass"
    assert run.code == 1
    assert tool_findings(run) == [("pyproject.toml", line_of(text, needle), message)]


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        (
            'select = ["E", "F", "W"]\n',
            'select = ["E"]\n',
            "select",
            "ruff: select narrowed: F, W no longer selected",
        ),
        (
            'select = ["E", "F", "W"]\n',
            'select = ["E", "F", "W"]\n\n[tool.ruff.lint.per-file-ignores]\n"pkg/*" = ["F"]\n',
            '"pkg/*"',
            "ruff: per-file-ignores gained 'pkg/*': F, rules the base enforces",
        ),
        (
            "[tool.ruff.lint]\n",
            '[tool.ruff]\nextend-exclude = ["pkg"]\n\n[tool.ruff.lint]\n',
            "extend-exclude",
            "ruff: extend-exclude gained pkg: 1 files are no longer linted (pkg/__init__.py)",
        ),
        (
            'testpaths = ["tests"]\n',
            'testpaths = ["tests/unit"]\n',
            "testpaths",
            "pytest: testpaths [tests] -> [tests/unit]: 1 test files at the base are no longer "
            "collected (tests/test_pkg.py)",
        ),
        (
            'testpaths = ["tests"]\n',
            'testpaths = ["tests"]\npython_files = ["check_*.py"]\n',
            "python_files",
            "pytest: python_files (default) -> [check_*.py]: 1 test files at the base are no "
            "longer collected (tests/test_pkg.py)",
        ),
        (
            'testpaths = ["tests"]\n',
            'testpaths = ["tests"]\npython_functions = ["check"]\n',
            "python_functions",
            "pytest: python_functions test -> check: tests named test are no longer collected",
        ),
        (
            'testpaths = ["tests"]\n',
            'testpaths = ["tests", "../elsewhere"]\n',
            "testpaths",
            "pytest: testpaths gained ../elsewhere, outside the project: what pytest collects "
            "there is no part of the change agentgate judges",
        ),
        (
            'testpaths = ["tests"]\n',
            'testpaths = ["tests"]\npythonpath = ["/opt/plugins"]\n',
            "pythonpath",
            "pytest: pythonpath gained /opt/plugins, outside the project: what pytest imports "
            "there is no part of the change agentgate judges",
        ),
        (
            'exclude_also = ["if TYPE_CHECKING:"]\n',
            'exclude_also = ["if TYPE_CHECKING:", "def "]\n',
            "exclude_also",
            "coverage: exclude_also gained 'def ': lines matching it are no longer measured",
        ),
        (
            'exclude_also = ["if TYPE_CHECKING:"]\n',
            'exclude_also = ["if TYPE_CHECKING:"]\npartial_also = [".*"]\n',
            "partial_also",
            "coverage: partial_also gained '.*': branches of lines matching it are no longer "
            "counted as missed",
        ),
        (
            'source = ["pkg"]\n',
            'source = ["pkg"]\nomit = ["pkg/__init__.py"]\n',
            "omit",
            "coverage: omit gained pkg/__init__.py: 1 files are no longer measured "
            "(pkg/__init__.py)",
        ),
        (
            'exclude_also = ["if TYPE_CHECKING:"]\n',
            'exclude_also = ["if TYPE_CHECKING:"]\ninclude = ["nothing.py"]\n',
            "include",
            "coverage: [report] include nothing.py: 1 files of the base's source are no longer "
            "measured (pkg/__init__.py)",
        ),
        (
            'exclude_also = ["if TYPE_CHECKING:"]\n',
            'exclude_also = ["if TYPE_CHECKING:"]\n\n[tool.coverage.paths]\n'
            'source = ["other", "pkg"]\n',
            'source = ["other", "pkg"]',
            "coverage: [paths] gained source: coverage.py reports the data of those files as the "
            "first path's, so code that never ran can read as measured (red team 40)",
        ),
        ("fail_under = 80\n", "fail_under = 10\n", "fail_under", "coverage: fail_under 80 -> 10"),
        (
            "branch = true\n",
            "branch = false\n",
            "branch",
            "coverage: branch true -> false: branches are no longer measured",
        ),
        (
            'source = ["pkg"]\n',
            'source = ["pkg/sub"]\n',
            "source",
            "coverage: source narrowed: pkg no longer measured",
        ),
        (
            "[tool.ruff.lint]\n",
            '[tool.ruff]\nextend-include = ["*.pyw"]\ninclude = ["tests/*"]\n\n[tool.ruff.lint]\n',
            'include = ["tests',
            "ruff: include narrowed to *.pyw, tests/*: 1 files are no longer linted "
            "(pkg/__init__.py)",
        ),
        (
            'select = ["E", "F", "W"]\n',
            'select = ["E", "F", "W"]\n\n[tool.ruff.lint.pycodestyle]\nmax-line-length = 200\n',
            "max-line-length",
            "ruff: pycodestyle.max-line-length 88 -> 200: the base's E501 reports less",
        ),
        (
            "[tool.ruff.lint]\n",
            "[tool.ruff]\nline-length = 120\n\n[tool.ruff.lint]\n",
            "line-length",
            "ruff: line-length 88 -> 120: the base's E501 reports less",
        ),
        (
            'select = ["E", "F", "W"]\n',
            'select = ["E", "F", "W"]\ndummy-variable-rgx = "^.*$"\n',
            "dummy-variable-rgx",
            "ruff: dummy-variable-rgx (default) -> '^.*$': what ruff reports changes",
        ),
        (
            "[tool.ruff.lint]\n",
            '[tool.ruff]\nbuiltins = ["undefined_name"]\n\n[tool.ruff.lint]\n',
            "builtins",
            "ruff: builtins gained undefined_name: the base's F821 reports less",
        ),
        (
            'select = ["E", "F", "W"]\n',
            'select = ["E", "F", "W", "C90"]\n',
            None,
            None,
        ),
    ],
    ids=[
        "ruff-select",
        "ruff-per-file-ignores",
        "ruff-exclude",
        "pytest-testpaths",
        "pytest-python-files",
        "pytest-python-functions",
        "pytest-testpaths-outside",
        "pytest-pythonpath-outside",
        "coverage-exclude",
        "coverage-partial",
        "coverage-omit",
        "coverage-report-include",
        "coverage-paths",
        "coverage-fail-under",
        "coverage-branch",
        "coverage-source",
        "ruff-include",
        "ruff-max-line-length",
        "ruff-line-length",
        "ruff-dummy-variable-rgx",
        "ruff-builtins",
        "ruff-max-complexity",
    ],
)
def test_a_tool_setting_loosened(
    repo_from: Callable[[str], Path],
    verify: Any,
    old: str,
    new: str,
    needle: str | None,
    message: str | None,
) -> None:
    root = repo_from("cheap")
    if needle is None:  # a rule of the base's own, and its option raised
        edit(root / "pyproject.toml", old, new)
        git(root, "commit", "-qam", "complexity")
        git(root, "branch", "-q", "-f", "main")
        old = "[tool.ruff.lint]\n"
        new = "[tool.ruff.lint.mccabe]\nmax-complexity = 25\n\n[tool.ruff.lint]\n"
        needle = "max-complexity"
        message = "ruff: mccabe.max-complexity 10 -> 25: the base's C90 rules report less"
    text = edit(root / "pyproject.toml", old, new)
    git(root, "commit", "-qam", "settings")
    run = verify("--profile", "strict")
    assert run.code == 1
    assert gate(run, "build")["status"] == "pass"
    assert tool_findings(run) == [("pyproject.toml", line_of(text, needle), message)]


def test_a_new_ruff_toml_that_selects_less(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("cheap")
    write(root / "pkg" / "ruff.toml", '# only what matters\n[lint]\nselect = ["E9"]\n')
    run = verify("--profile", "strict")
    assert tool_findings(run) == [
        ("pkg/ruff.toml", 3, "ruff: select narrowed: E, F, W no longer selected")
    ]


def test_a_new_coveragerc_that_takes_over(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("cheap")
    write(root / ".coveragerc", "[run]\nsource = pkg\nbranch = true\n")  # drops fail_under
    run = verify("--profile", "strict")
    assert [m for _, _, m in tool_findings(run)] == ["coverage: fail_under 80 -> 0"]
    assert tool_findings(run)[0][0] == ".coveragerc"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # more rules, and an ignore for one the base never selected
        ('select = ["E", "F", "W"]\n', 'select = ["E", "F", "W", "B"]\nignore = ["B008"]\n'),
        ("fail_under = 80\n", "fail_under = 95  # raised\n"),
        ('select = ["E", "F", "W"]\n', 'select = [\n    "W",\n    "F",\n    "E",\n]\n'),
        ('testpaths = ["tests"]\n', 'testpaths = ["tests", "more_tests"]\n'),
        ('source = ["pkg"]\n', 'source = ["pkg"]\nomit = ["pkg/generated/*"]\n'),
        ("[tool.coverage.report]\n", "# Coverage, reported.\n[tool.coverage.report]\n"),
        # How ruff runs, fixes and formats; where first-party code is; a newer Python
        (
            "[tool.ruff.lint]\n",
            '[tool.ruff]\ncache-dir = ".cache/ruff"\nsrc = ["pkg"]\nfix = true\n'
            'output-format = "full"\ntarget-version = "py312"\n\n[tool.ruff.format]\n'
            'quote-style = "single"\nexclude = ["pkg"]\n\n[tool.ruff.lint]\n'
            'unfixable = ["F401"]\n',
        ),
        # a lower maximum, and the options of rules the base does not enforce
        (
            "[tool.ruff.lint]\n",
            "[tool.ruff]\nline-length = 79\n\n[tool.ruff.lint.mccabe]\nmax-complexity = 50\n"
            "\n[tool.ruff.lint.pylint]\nmax-args = 12\n\n[tool.ruff.lint.isort]\n"
            'known-first-party = ["pkg"]\n\n[tool.ruff.lint]\n',
        ),
        # more files linted
        ("[tool.ruff.lint]\n", '[tool.ruff]\nextend-include = ["*.pyw"]\n\n[tool.ruff.lint]\n'),
    ],
    ids=[
        "select-more",
        "fail-under-raised",
        "reordered",
        "testpaths-wider",
        "omit-nothing",
        "comment",
        "ruff-runs-fixes-formats",
        "ruff-tighter-or-not-enforced",
        "ruff-include-wider",
    ],
)
def test_an_honest_tool_setting(
    repo_from: Callable[[str], Path], verify: Any, old: str, new: str
) -> None:
    root = repo_from("cheap")
    edit(root / "pyproject.toml", old, new)
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert gate(run, "integrity")["findings"] == []


def test_settings_that_follow_a_move(repo_from: Callable[[str], Path], verify: Any) -> None:
    root = repo_from("cheap")
    git(root, "mv", "tests", "test")  # the tests move, and pytest is told where
    git(root, "mv", "pkg", "src")  # the package moves, and coverage follows it
    edit(root / "pyproject.toml", 'testpaths = ["tests"]\n', 'testpaths = ["test"]\n')
    edit(root / "pyproject.toml", 'source = ["pkg"]\n', 'source = ["src"]\nomit = ["test/*"]\n')
    git(root, "commit", "-qam", "src layout")
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert tool_findings(run) == []


@pytest.mark.parametrize(
    "setting",
    ['source_pkgs = ["pkg"]\n', 'source_dirs = ["pkg"]\n', 'source_pkgs = ["pkg"]\nsource = []\n'],
    ids=["source-pkgs", "source-dirs", "source-emptied"],
)
def test_the_same_package_named_by_another_coverage_key(
    repo_from: Callable[[str], Path], verify: Any, setting: str
) -> None:
    # coverage.py reads source's "pkg" as the folder pkg/; source_pkgs' as the package pkg,
    # imported from the same folder; source_dirs' as the folder: the same files are measured.
    root = repo_from("cheap")
    edit(root / "pyproject.toml", 'source = ["pkg"]\n', setting)
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert gate(run, "integrity")["findings"] == []


@pytest.mark.parametrize(
    ("setting", "lost"),
    [
        ('source_pkgs = ["pkg"]\n', "extra"),  # fewer packages
        ('source_pkgs = ["pytest", "extra"]\n', "pkg"),  # a package that is not the project's
        ('source_pkgs = ["pkg.sub", "extra"]\n', "pkg"),  # a package the project does not have
        ('source_dirs = ["pkg"]\n', "extra"),
    ],
    ids=["fewer", "not-the-projects", "missing", "fewer-dirs"],
)
def test_another_coverage_key_that_measures_less(
    repo_from: Callable[[str], Path], verify: Any, setting: str, lost: str
) -> None:
    root = repo_from("cheap")
    write(root / "extra" / "__init__.py", "X = 1\n")
    edit(root / "pyproject.toml", 'source = ["pkg"]\n', 'source = ["pkg", "extra"]\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "two packages")
    git(root, "branch", "-q", "-f", "main")
    text = edit(root / "pyproject.toml", 'source = ["pkg", "extra"]\n', setting)
    run = verify("--profile", "strict")
    assert run.code == 1
    key = setting.split(" ", 1)[0]
    assert tool_findings(run) == [
        (
            "pyproject.toml",
            line_of(text, key),
            f"coverage: source narrowed: {lost} no longer measured",
        )
    ]


# -- files ruff no longer reads: an ignore rule naming a tracked file ------------------------------


def ignore_findings(run: CliRun) -> list[tuple[str | None, int | None, str]]:
    return [f for f in tool_findings(run) if "ignore" in f[2]]


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        (
            ".gitignore",
            ".agentgate/\n.coverage\ntools/bad.py\n",
            ".gitignore `tools/bad.py` ignores tools/bad.py, tracked at the base: ruff skips "
            "files .gitignore names",
        ),
        (
            "tools/.gitignore",
            "# generated\n*.py\n",
            ".gitignore `*.py` ignores tools/bad.py, tracked at the base: ruff skips files "
            ".gitignore names",
        ),
        (
            ".ignore",
            "tools/\n",
            ".ignore `tools/` ignores tools/bad.py, tracked at the base: ruff skips files "
            ".ignore names",
        ),
    ],
    ids=["gitignore-line", "new-gitignore", "dot-ignore"],
)
def test_a_tracked_file_an_ignore_rule_hides_from_ruff(
    repo_from: Callable[[str], Path], verify: Any, file: str, text: str, message: str
) -> None:
    # ruff skips what .gitignore (and .ignore) name, tracked files too: the lint error in
    # tools/bad.py went unseen, and nothing in ruff's settings changed.
    root = repo_from("lint-defect")
    write(root / file, text)
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass"  # ruff no longer reads the file ...
    assert run.code == 1  # ... the integrity gate says why
    assert ignore_findings(run) == [(file, len(text.splitlines()), message)]


@pytest.mark.parametrize("file", ["tools/.ignore", ".gitignore"])
def test_a_file_the_change_adds_hidden_from_ruff_by_a_rule_it_adds(
    repo_from: Callable[[str], Path], verify: Any, file: str
) -> None:
    # Red team 33: a new module with lint errors, imported by the product, named in a new
    # `.ignore` (git does not read it: the file is committed as usual), or in the `.gitignore`
    # and added with `git add -f`.
    root = repo_from("lint-clean")
    write(root / "tools" / "rates.py", "import os\nimport sys\n\nRATE = 2\n")
    if file == ".gitignore":
        with (root / file).open("a", encoding="utf-8") as handle:
            handle.write("tools/rates.py\n")
        git(root, "add", "-f", "tools/rates.py")
        line, pattern = len((root / file).read_text().splitlines()), "tools/rates.py"
    else:
        write(root / file, "rates.py\n")
        line, pattern = 1, "rates.py"
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass" and run.code == 1
    name = Path(file).name
    assert ignore_findings(run) == [
        (
            file,
            line,
            f"{name} `{pattern}` ignores tools/rates.py, added by the change: ruff skips files "
            f"{name} names",
        )
    ]


def test_a_dot_ignore_above_the_repository_that_hides_a_linted_file(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    # Red team 34: ruff reads `.ignore` files in the folders above the project as well, and
    # git never does: `../.ignore` naming the file with the lint error passed every door.
    root = repo_from("lint-defect")
    above = root.parent / ".ignore"
    above.write_text(f"# mine\n/{root.name}/tools/bad.py\n")
    try:
        run = verify("--profile", "strict")
    finally:
        above.unlink()
    assert gate(run, "lint")["status"] == "pass" and run.code == 1
    assert ignore_findings(run) == [
        (
            "tools/bad.py",
            None,
            f"{above}:2 `/{root.name}/tools/bad.py` ignores tools/bad.py: ruff skips files a "
            "`.ignore` above the project names, and it is no part of the change; take the line "
            "out",
        )
    ]


@pytest.mark.parametrize("honest", ["excluded-by-ruff-too", "no-ruff-gate"])
def test_a_dot_ignore_above_the_repository_that_hides_nothing_ruff_lints(
    repo_from: Callable[[str], Path], verify: Any, honest: str
) -> None:
    # Review 21: a ripgrep user's `.ignore` above the repository naming `migrations/`, which
    # the project's own ruff settings leave out too, or in a project no gate runs ruff for.
    root = repo_from("lint-clean")
    write(root / "pkg" / "migrations" / "m0001.py", "X = 1\n")
    if honest == "excluded-by-ruff-too":
        text = (root / "pyproject.toml").read_text()
        write(
            root / "pyproject.toml",
            text.replace(
                "[tool.ruff.lint]",
                '[tool.ruff]\nextend-exclude = ["*/migrations/*"]\n\n[tool.ruff.lint]',
            ),
        )
    else:
        write(
            root / "agentgate.yml", LINT_ONLY.replace("-m ruff check --no-cache .", "-m pyflakes .")
        )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "migrations")
    git(root, "branch", "-q", "-f", "main")
    above = root.parent / ".ignore"
    above.write_text("node_modules/\n*.min.js\nmigrations/\n*_pb2.py\n")
    try:
        run = verify("--profile", "strict")
    finally:
        above.unlink()
    assert ignore_findings(run) == []


@pytest.mark.parametrize("where", ["info/exclude", ".gitignore", "worktree"])
def test_a_nested_repositorys_own_ignore_rules_hiding_new_code_from_ruff(
    repo_from: Callable[[str], Path], verify: Any, where: str, tmp_path: Path
) -> None:
    # Red team 35: `git init invoice/rates` and `*.py` in its exclude (or its own .gitignore):
    # ruff takes the nested repository's rules as its own there, and new code went unlinted.
    root = repo_from("lint-clean")
    nested = root / "pkg" / "rates"
    if where == "worktree":
        # Red team 36: a worktree's `.git` is a file; its main repository's exclude counts.
        main = tmp_path / "elsewhere"
        main.mkdir()
        git(main, "init", "-q")
        git(main, "commit", "-q", "--allow-empty", "-m", "x")
        git(main, "worktree", "add", "-q", str(nested))
        write(main / ".git" / "info" / "exclude", "*.py\n")
        write(nested / "__init__.py", "import os, sys\n\nRATE = 2\n")
    else:
        write(nested / "__init__.py", "import os, sys\n\nRATE = 2\n")
        git(nested, "init", "-q")
        rules = (
            nested / ".git" / "info" / "exclude"
            if where == "info/exclude"
            else nested / ".gitignore"
        )
        write(rules, "*.py\n")
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass" and run.code == 1
    assert ignore_findings(run) == [
        (
            "pkg/rates/__init__.py",
            None,
            "pkg/rates/ is a git repository of its own inside the project, and its ignore rule "
            "`*.py` names pkg/rates/__init__.py: ruff skips what the nested repository's rules "
            "name; make it a folder of the project",
        )
    ]


@pytest.mark.parametrize("folder", ["dist", "venv", "_build"])
def test_new_code_in_a_folder_ruff_skips_by_default(
    repo_from: Callable[[str], Path], verify: Any, folder: str
) -> None:
    # A new module with lint errors in `pkg/dist/`: ruff's default excludes skip the folder,
    # so the lint gate never read it, and the project never chose that exclude.
    root = repo_from("lint-clean")
    write(root / "pkg" / folder / "rates.py", "import os, sys\n\nRATE = 2\n")
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass" and run.code == 1
    assert tool_findings(run) == [
        (
            f"pkg/{folder}/rates.py",
            None,
            f"pkg/{folder}/rates.py is new in pkg/{folder}/, a folder ruff skips by default "
            f"(`{folder}` is one of its default excludes): the lint gate never reads it; put "
            "the code in a folder of another name",
        )
    ]


@pytest.mark.parametrize("honest", ["kept-at-base", "chosen-exclude", "build"])
def test_new_code_in_a_folder_the_project_leaves_unlinted_is_no_finding(
    repo_from: Callable[[str], Path], verify: Any, honest: str
) -> None:
    # The base keeps code in `pkg/dist/` already (unlinted there too), or the project's own
    # `extend-exclude` names the folder; `build/` is linted by ruff since 0.3.
    root = repo_from("lint-clean")
    folder = "build" if honest == "build" else "dist"
    if honest == "kept-at-base":
        write(root / "pkg" / "dist" / "old.py", "X = 1\n")
    elif honest == "chosen-exclude":
        text = (root / "pyproject.toml").read_text()
        write(
            root / "pyproject.toml",
            text.replace(
                "[tool.ruff.lint]", '[tool.ruff]\nextend-exclude = ["dist"]\n\n[tool.ruff.lint]'
            ),
        )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base", "--allow-empty")
    git(root, "branch", "-q", "-f", "main")
    write(root / "pkg" / folder / "rates.py", "RATE = 2\n")
    run = verify("--profile", "strict")
    assert tool_findings(run) == []
    assert run.code == 0, run.output


@pytest.mark.parametrize("at_base", [False, True])
def test_new_code_through_a_link_to_a_folder(
    repo_from: Callable[[str], Path], verify: Any, at_base: bool
) -> None:
    # Red team 40: `pkg/bands` -> a git-ignored folder with new code: ruff does not lint
    # through the link, coverage.py measures the real path. A link the base has is the
    # project's own way.
    root = repo_from("lint-clean")
    write(root / ".gitignore", (root / ".gitignore").read_text() + "vendor/\n")
    write(root / "vendor" / "bands" / "__init__.py", "import os, sys\n\nRATE = 2\n")
    (root / "pkg" / "bands").symlink_to("../vendor/bands")
    if at_base:
        git(root, "add", "-A")
        git(root, "commit", "-qm", "a linked folder")
        git(root, "branch", "-q", "-f", "main")
        write(root / "vendor" / "bands" / "extra.py", "import os\n")
    run = verify("--profile", "strict")
    found = [f for f in tool_findings(run) if "is a link to" in f[2]]
    if at_base:
        assert found == []
        return
    assert found == [
        (
            "pkg/bands/__init__.py",
            None,
            "pkg/bands/ is a link to ../vendor/bands, and the change adds pkg/bands/__init__.py "
            "through it: ruff does not lint through a folder link, and coverage.py measures the "
            "files where they are; make the folder the project's own",
        )
    ]


def test_coverage_paths_for_copies_elsewhere_are_no_finding(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    # Review 26: `[paths]` added to combine CI's data: its aliases name installed copies, not
    # the project's own folders.
    root = repo_from("cheap")
    text = (root / "pyproject.toml").read_text()
    write(
        root / "pyproject.toml",
        text + '\n[tool.coverage.paths]\nsource = ["pkg", "*/site-packages/pkg", "*/pkg"]\n',
    )
    run = verify("--profile", "strict")
    assert not any("[paths]" in message for _, _, message in tool_findings(run))


def test_a_new_coveragerc_toml_is_read_as_coverage_reads_it(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    # Red team 41: coverage.py 7.10+ reads `.coveragerc.toml` before setup.cfg and
    # pyproject.toml; a new one loaded a coverage plugin no comparison saw.
    root = repo_from("cheap")
    write(root / ".coveragerc.toml", '[run]\nplugins = ["pkg_cov"]\nomit = ["pkg/*"]\n')
    run = verify("--profile", "strict")
    found = [message.split(":")[1].strip() for _, _, message in tool_findings(run)]
    assert any(m.startswith("plugins gained pkg_cov") for m in found), found


def test_a_file_taken_out_of_the_index_and_ignored(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    # `git rm --cached`: the change shows the file deleted, but it is on the disk, imported,
    # and ruff skips it.
    root = repo_from("lint-defect")
    git(root, "rm", "-q", "--cached", "tools/bad.py")
    with (root / ".gitignore").open("a", encoding="utf-8") as handle:
        handle.write("tools/bad.py\n")
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass" and run.code == 1
    assert [(p, line) for p, line, _ in ignore_findings(run)] == [(".gitignore", 3)]


def test_an_exception_taken_out_of_the_gitignore(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    # The line that ignores the file was at the base; the base's `!` exception kept it linted.
    root = repo_from("lint-defect")
    write(root / ".gitignore", ".agentgate/\n.coverage\ntools/*.py\n!tools/bad.py\n")
    git(root, "commit", "-qam", "tools are generated, but one")
    git(root, "branch", "-q", "-f", "main")
    write(root / ".gitignore", ".agentgate/\n.coverage\ntools/*.py\n")
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass" and run.code == 1
    assert ignore_findings(run) == [
        (
            ".gitignore",
            3,
            ".gitignore `tools/*.py` ignores tools/bad.py, tracked at the base: ruff skips "
            "files .gitignore names",
        )
    ]


def test_a_private_exclude_naming_a_tracked_file(
    repo_from: Callable[[str], Path], verify: Any
) -> None:
    # .git/info/exclude is no part of the change: git status shows nothing, ruff skips the file.
    root = repo_from("lint-defect")
    exclude = Path(git(root, "rev-parse", "--git-path", "info/exclude").strip())
    write(root / exclude, "# private\ntools/bad.py\n")
    run = verify("--profile", "strict")
    assert gate(run, "lint")["status"] == "pass" and run.code == 1
    assert ignore_findings(run) == [
        (
            "tools/bad.py",
            None,
            ".git/info/exclude:2 `tools/bad.py` ignores tools/bad.py tracked at the base: ruff "
            "skips files git ignores, and the repository's private excludes are no part of the "
            "change; take the line out",
        )
    ]


@pytest.mark.parametrize(
    "honest",
    ["untracked-only", "deleted", "ignored-at-the-base"],
)
def test_honest_ignore_rules(repo_from: Callable[[str], Path], verify: Any, honest: str) -> None:
    root = repo_from("lint-clean")
    if honest == "untracked-only":
        # Build output and a scratch module: ignored, never tracked.
        write(root / "dist" / "generated.py", "import os\n")
        write(root / "scratch.py", "import sys\n")
        write(root / ".gitignore", ".agentgate/\n.coverage\ndist/\nscratch.py\n*.log\n")
    elif honest == "deleted":
        # A tracked file the change deletes, and ignores from now on.
        write(root / "tools" / "gen.py", "X = 1\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "generated code")
        git(root, "branch", "-q", "-f", "main")
        git(root, "rm", "-q", "tools/gen.py")
        write(root / ".gitignore", ".agentgate/\n.coverage\ntools/gen.py\n")
    else:
        # A file ignored at the base, tracked all the same (git add -f): ruff skipped it then.
        write(root / ".gitignore", ".agentgate/\n.coverage\nvendor/\n")
        write(root / "vendor" / "lib.py", "import os\n")
        git(root, "add", "-A")
        git(root, "add", "-f", "vendor/lib.py")
        git(root, "commit", "-qm", "vendored")
        git(root, "branch", "-q", "-f", "main")
        write(root / ".gitignore", ".agentgate/\n.coverage\nvendor/\n*.log\n")
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert gate(run, "integrity")["findings"] == []


# -- zero-config: what detection finds at the base is the law -------------------------------------

NO_COVERAGE_SETTINGS = CLEAN["pyproject.toml"].split("[tool.coverage.run]")[0]
UNTESTED = "\n\ndef untested(x):\n    if x:\n        return 1\n    return 2\n"


def zero_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> Path:
    """A repository whose base has no agentgate configuration, on a branch ``change``."""
    root = build(tmp_path / "repo", files)
    git(root, "checkout", "-q", "-b", "change")
    monkeypatch.chdir(root)
    return root


PRE_COMMIT_HOOK = """\
repos:
  - repo: https://github.com/{repo}
    hooks:
      - id: {hook}
"""


def test_a_linter_new_in_the_change_lints_beside_the_bases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any
) -> None:
    # A pre-commit hook outranks [tool.ruff] in zero-config's detection: pycodestyle, which
    # has no F401, took the lint gate from the ruff the base declares.
    root = zero_repo(tmp_path, monkeypatch, {**CLEAN, **LINT_DEFECT})
    write(
        root / ".pre-commit-config.yaml",
        PRE_COMMIT_HOOK.format(repo="PyCQA/pycodestyle", hook="pycodestyle"),
    )
    run = verify("--profile", "strict")
    assert run.code == 1
    lint = gate(run, "lint")
    assert "ruff check" in lint["command"] and lint["status"] == "fail"
    assert lint["actual"]["errors"] == 2  # tools/bad.py's unused imports
    assert "pycodestyle" in gate(run, "lint-pycodestyle")["command"]
    assert any(
        n.startswith("lint-pycodestyle: pycodestyle") and "beside ruff" in n
        for n in run.verdict()["notices"]
    )


def test_a_linter_new_in_the_change_beside_a_base_that_declares_none_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any
) -> None:
    # Review 33: "it lints beside ruff, which the base declares", a line after "the project
    # declares no linter".
    root = zero_repo(tmp_path, monkeypatch, {**CLEAN, "pyproject.toml": "[project]\nname = 'p'\n"})
    write(root / "setup.cfg", "[pycodestyle]\nmax-line-length = 100\n")
    notices = verify("--profile", "strict").verdict()["notices"]
    assert any(
        n.startswith("lint-pycodestyle: pycodestyle")
        and "beside ruff's error rules, which the base gets (it declares no linter)" in n
        for n in notices
    ), notices


def test_the_bases_own_linter_pinned_in_the_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any
) -> None:
    # The same tool the base declares, now from a pre-commit hook: no second gate.
    root = zero_repo(tmp_path, monkeypatch, CLEAN)
    write(
        root / ".pre-commit-config.yaml",
        PRE_COMMIT_HOOK.format(repo="astral-sh/ruff-pre-commit", hook="ruff"),
    )
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert [g["name"] for g in run.verdict()["gates"] if g["name"].startswith("lint")] == ["lint"]


@pytest.mark.parametrize(
    "settings",
    ['[tool.coverage.run]\nsource = ["tests"]\n', '[tool.coverage.run]\ninclude = ["tests/*"]\n'],
    ids=["source", "include"],
)
def test_coverage_settings_new_in_the_change_measure_what_the_base_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any, settings: str
) -> None:
    # No coverage settings at the base: zero-config measured the package (--source=pkg). New
    # settings that measure only the tests made its gaps vanish.
    files = {**CLEAN, "pyproject.toml": NO_COVERAGE_SETTINGS}
    files["pkg/__init__.py"] += UNTESTED
    root = zero_repo(tmp_path, monkeypatch, files)
    with (root / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n" + settings)
    run = verify("--profile", "strict")
    assert run.code == 1
    coverage = gate(run, "coverage")
    assert coverage["status"] == "fail" and coverage["actual"]["lines"] < 90
    assert "--source=pkg" in gate(run, "test")["command"]


def test_a_coverage_source_where_the_bases_settings_had_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any
) -> None:
    # The base's coverage settings name no source: coverage.py measured all the code that ran.
    base = NO_COVERAGE_SETTINGS + "[tool.coverage.run]\nbranch = true\n"
    files = {**CLEAN, "pyproject.toml": base}
    files["pkg/__init__.py"] += UNTESTED
    root = zero_repo(tmp_path, monkeypatch, files)
    text = edit(root / "pyproject.toml", "branch = true\n", 'branch = true\nsource = ["tests"]\n')
    run = verify("--profile", "strict")
    assert run.code == 1
    assert tool_findings(run) == [
        (
            "pyproject.toml",
            line_of(text, "source"),
            "coverage: source tests: 1 files of the project's code, measured at the base, no "
            "longer are (pkg/__init__.py)",
        )
    ]


@pytest.mark.parametrize(
    "settings",
    [
        '[tool.coverage.run]\nsource = ["pkg"]\nbranch = true\n',
        '[tool.coverage.run]\ninclude = ["pkg/*"]\n\n[tool.coverage.report]\nfail_under = 90\n',
    ],
    ids=["source", "include"],
)
def test_honest_coverage_settings_new_in_the_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any, settings: str
) -> None:
    root = zero_repo(tmp_path, monkeypatch, {**CLEAN, "pyproject.toml": NO_COVERAGE_SETTINGS})
    with (root / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n" + settings)
    run = verify("--profile", "strict")
    assert run.code == 0, run.out
    assert gate(run, "integrity")["findings"] == []


SRC_LAYOUT = {
    **{k: v for k, v in CLEAN.items() if k != "pkg/__init__.py"},
    "src/pkg/__init__.py": CLEAN["pkg/__init__.py"],
    "src/pkg/__init__.pyi": "def add(a: int, b: int) -> int: ...\n",
    "pyproject.toml": NO_COVERAGE_SETTINGS.replace(
        'testpaths = ["tests"]', 'testpaths = ["tests"]\npythonpath = ["src"]'
    ),
}


@pytest.mark.parametrize(
    "settings",
    [
        '[tool.coverage.run]\nsource = ["pkg"]\nbranch = true\n',
        '[tool.coverage.run]\nsource_pkgs = ["pkg"]\n',
        '[tool.coverage.run]\ninclude = ["src/pkg/*.py"]\n',
        '[tool.coverage.run]\nomit = ["tests/*"]\n',
    ],
    ids=["source-by-name", "source_pkgs", "include-py", "omit-tests"],
)
def test_coverage_settings_of_a_src_layout_that_measure_what_the_base_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any, settings: str
) -> None:
    # Review 34 (cachetools): a package named in `source` is its src/ folder, as coverage.py
    # reads it; a stub (.pyi) is no code coverage.py measures; test files omitted are no code
    # left unmeasured. None of them was measured less than at the base.
    root = zero_repo(tmp_path, monkeypatch, SRC_LAYOUT)
    with (root / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n" + settings)
    run = verify("--profile", "strict")
    assert gate(run, "integrity")["findings"] == [], run.out
    assert run.code == 0, run.out


@pytest.mark.parametrize(
    ("omit", "lost"),
    [
        ("src/pkg/__init__.py", "src/pkg/__init__.py"),
        # Red team 57: code in a package folder named like tests is the package's code.
        ("*/testing/*", "src/pkg/testing/__init__.py"),
    ],
)
def test_an_omit_of_the_bases_measured_code_is_still_loosening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any, omit: str, lost: str
) -> None:
    settings = '[tool.coverage.run]\nsource_pkgs = ["pkg"]\n'
    files = {
        **SRC_LAYOUT,
        "pyproject.toml": SRC_LAYOUT["pyproject.toml"] + "\n" + settings,
        "src/pkg/testing/__init__.py": "def helper():\n    return 1\n",
    }
    root = zero_repo(tmp_path, monkeypatch, files)
    edit(root / "pyproject.toml", settings, settings + f'omit = ["{omit}"]\n')
    run = verify("--profile", "strict")
    assert run.code == 1
    assert [message for _, _, message in tool_findings(run)] == [
        f"coverage: omit gained {omit}: 1 files are no longer measured ({lost})"
    ]


def test_a_top_folder_named_as_the_measured_package_is_loosening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any
) -> None:
    # Red team 57: coverage.py reads `source = ["pkg"]` as the folder pkg/ once there is one;
    # a `pkg/release.py` at the top took src/pkg out of the figures.
    settings = '[tool.coverage.run]\nsource = ["pkg"]\n'
    files = {**SRC_LAYOUT, "pyproject.toml": SRC_LAYOUT["pyproject.toml"] + "\n" + settings}
    root = zero_repo(tmp_path, monkeypatch, files)
    write(root / "pkg" / "release.py", 'VERSION = "0.1"\n')
    run = verify("--profile", "strict")
    assert run.code == 1
    assert [(path, message) for path, _, message in tool_findings(run)] == [
        (
            "pkg/release.py",
            "coverage: the change adds a folder pkg/ at the project's top, which coverage.py "
            "measures for the source pkg in place of the package (src/pkg/__init__.py): the "
            "package's files are no longer measured",
        )
    ]


def test_zero_config_keeps_the_bases_packages_and_adds_the_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verify: Any
) -> None:
    # The base's detection is the law; the change's adds to it. An empty src/ and a package
    # dressed as a virtualenv narrowed what zero-config measured and compiled.
    root = zero_repo(tmp_path, monkeypatch, {**CLEAN, "pyproject.toml": NO_COVERAGE_SETTINGS})
    (root / "src").mkdir()
    write(root / "pkg" / "pyvenv.cfg", "home = /usr\n")
    write(root / "extra" / "__init__.py", "X = 1\n")
    run = verify("--profile", "strict", "--no-run")
    assert "--source=pkg,src " in gate(run, "test")["command"]
    assert gate(run, "build")["command"].endswith("compileall -q pkg tests extra")


# -- resolve_config directly -----------------------------------------------------------------------


def test_a_broken_base_configuration_lets_the_change_fix_it(
    repo_from: Callable[[str], Path],
) -> None:
    root = repo_from("bare")
    write(root / "agentgate.yml", "gates:\n  lint: {comand: ruff}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "broken config")
    git(root, "branch", "-q", "-f", "main")
    write(root / "agentgate.yml", CHEAP)
    config = resolve_config(root)
    assert [g.name for g in config.gates] == ["integrity", "build"]
    assert any("cannot be used" in n and "comand" in n for n in config.notices)
    assert not any("is new in this change" in n for n in config.notices)


def test_outside_a_repository_the_configuration_stands(tmp_path: Path) -> None:
    write(tmp_path / "agentgate.yml", CHEAP.replace("strict", "standard") + "    max_errors: 3\n")
    config = resolve_config(tmp_path)
    build = config.gate("build")
    assert build is not None and build.thresholds == {"max_errors": 3}
    assert build.sources == {"max_errors": "agentgate.yml"}
    assert config.gate("integrity") is None


# -- through the pytest plugin -------------------------------------------------------------------


GATE = "gate-config-loosened"


def plugin(root: Path) -> tuple[int, dict[str, Any]]:
    out = root / ".agentgate" / "verdict.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--agentgate=strict",
            f"--agentgate-json={out}",
            "tests",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode, json.loads(out.read_text())


def plugin_gate(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in verdict["gates"] if g["name"] == name)


def test_pytest_agentgate_strict_passes_honest_work(
    repo_from: Callable[[str], Path],
) -> None:
    root = repo_from("lint")
    (root / "tools" / "bad.py").write_text("VALUE = 1\n")  # the work: the lint errors fixed
    edit(root / "agentgate.yml", "  lint:\n", "  lint:\n    max_warnings: 0\n")
    code, verdict = plugin(root)
    assert code == 0, verdict
    assert plugin_gate(verdict, "integrity")["findings"] == []


def test_pytest_paths_inside_the_project_are_not_findings() -> None:
    from pytest_agentgate.integrity.settings import _leaves_the_project

    for inside in ("src", "tests/unit", "./lib", "a/../b", "."):
        assert not _leaves_the_project(inside), inside
    for outside in ("..", "../x", "a/../../x", "/abs", "~/plugins", "C:\\plugins", "..\\x"):
        assert _leaves_the_project(outside), outside


RUFF_BASE = {"lint": {"select": ["E", "F", "B", "PL", "C90", "TID"]}}


@pytest.mark.parametrize(
    ("base", "now", "found"),
    [
        # what lets more pass
        ({}, {"fix-only": True}, ["fix-only false -> true: ruff reports less"]),
        ({"preview": True}, {}, ["preview true -> false: ruff reports less"]),
        ({"respect-gitignore": False}, {}, ["respect-gitignore false -> true: ruff reports less"]),
        (
            {"target-version": "py312"},
            {"target-version": "py38"},
            ["target-version 'py312' -> 'py38': ruff reports less"],
        ),
        (
            {},
            {"lint": {"pylint": {"max-args": 9, "allow-magic-value-types": ["int"]}}},
            [
                "pylint.allow-magic-value-types gained int: the base's PL rules report less",
                "pylint.max-args 5 -> 9: the base's PL rules report less",
            ],
        ),
        (
            {"lint": {"flake8-tidy-imports": {"banned-api": {"os.system": {"msg": "no"}}}}},
            {},
            ["flake8-tidy-imports.banned-api lost os.system: the base's TID rules report less"],
        ),
        (
            {},
            {"lint": {"flake8-bugbear": {"extend-immutable-calls": ["a.b"]}}},
            ["flake8-bugbear.extend-immutable-calls gained a.b: the base's B rules report less"],
        ),
        (  # deprecated top-level tables are the same options
            {},
            {"pyflakes": {"allowed-unused-imports": ["os"]}},
            ["pyflakes.allowed-unused-imports gained os: the base's F rules report less"],
        ),
        (
            {},
            {"lint": {"some-future-option": 1}},
            ["some-future-option (default) -> 1: what ruff reports changes"],
        ),
        # what only tightens, options of rules the base does not enforce, what `ruff check`
        # reports nothing of
        ({}, {"preview": True, "respect-gitignore": False, "target-version": "py313"}, []),
        ({}, {"lint": {"mccabe": {"max-complexity": 5}, "pylint": {"max-args": 3}}}, []),
        ({}, {"lint": {"flake8-tidy-imports": {"banned-api": {"os.system": {}}}}}, []),
        ({}, {"lint": {"pydocstyle": {"convention": "google"}, "isort": {"force-sort": 1}}}, []),
        ({}, {"format": {"quote-style": "single"}, "cache-dir": "x", "unsafe-fixes": True}, []),
    ],
)
def test_ruff_options_compared(base: dict[str, Any], now: dict[str, Any], found: list[str]) -> None:
    from pytest_agentgate.integrity.settings import _ruff_options_loosened, _ruff_values

    def merged(extra: dict[str, Any]) -> dict[str, Any]:
        out = json.loads(json.dumps(RUFF_BASE))
        for key, value in extra.items():
            if key == "lint":
                out["lint"].update(value)
            else:
                out[key] = value
        return _ruff_values(out)

    got = [f"{key} {message}" for key, message in _ruff_options_loosened(merged(base), merged(now))]
    assert got == found


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("agentgate.yml", "gates: [\n"),
        ("pyproject.toml", None),  # [tool.agentgate] with a profile that is no profile
    ],
    ids=["new-yaml", "tool-agentgate"],
)
def test_a_broken_configuration_where_the_base_has_none_is_zero_configs(
    repo_from: Callable[[str], Path], verify: Any, file: str, text: str | None
) -> None:
    # No agentgate configuration at the base: its law is what zero-config detects, and the
    # change's broken file is reported, never a free stop.
    root = repo_from("bare")
    if text is None:
        with (root / file).open("a", encoding="utf-8") as handle:
            handle.write("\n[tool.agentgate]\nprofile = 3\n")
    else:
        write(root / file, text)
    run = verify()
    assert run.code == 1
    ((path, _, message),) = loosened(run)
    assert path == file and "the base's configuration is in force: fix the file" in message
    assert {g["name"] for g in run.verdict()["gates"]} >= {"test", "integrity"}
