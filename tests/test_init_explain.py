"""`agentgate init` (a starter that loads back) and `agentgate explain` (merged thresholds)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _helpers import PYTEST_OPTS

from pytest_agentgate.cli.main import main
from pytest_agentgate.config import Config, ConfigError, load_config
from pytest_agentgate.config.starter import starter_config
from pytest_agentgate.registry import get_registry


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def package(root: Path, **tables: Any) -> None:
    write(root / "package.json", json.dumps({"name": "demo", **tables}))


def init(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["init", *args])
    out, err = capsys.readouterr()
    return code, out, err


def written(root: Path) -> Config:
    """The starter, read back through the real loader (validation included)."""
    return load_config(root / "agentgate.yml", get_registry())


# -- init: Python ---------------------------------------------------------------------------------


def test_init_python_project_writes_a_config_that_loads(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(repo / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(repo / "src" / "demo" / "__init__.py", "")
    write(repo / "tests" / "test_demo.py", "def test_x(): pass\n")
    code, out, err = init(capsys)
    assert code == 0 and err == ""
    assert out == (
        "wrote agentgate.yml; run `agentgate explain` to see every threshold, "
        "`agentgate verify` to gate the project\n"
    )
    text = (repo / "agentgate.yml").read_text(encoding="utf-8")
    assert text.startswith("# agentgate: the completion gate.")
    assert "profile: strict\n" in text  # as zero-config: a failing test is never quiet
    # The lint gate says which linter, which version and which configuration it uses.
    assert "# lint: the project declares no linter, so only ruff's error rules run" in text
    config = written(repo)
    assert config.profile == "strict" and config.attempts_max == 3
    gates = {g.name: g for g in config.gates}
    assert list(gates) == ["build", "lint", "test", "coverage"]
    assert gates["build"].command == "python -m compileall -q src tests"
    assert gates["build"].timeout == 300
    assert gates["lint"].command == (
        "python -m ruff check --isolated --select E9,F63,F7,F82 --output-format json ."
    )
    assert gates["lint"].format == "ruff"
    assert gates["test"].command == (
        "python -m coverage run --branch --data-file=.agentgate/.coverage --source=src,demo "
        f"-m pytest{PYTEST_OPTS} --junitxml=.agentgate/junit.xml -o junit_family=xunit1"
    )
    assert gates["test"].reports == [".agentgate/junit.xml"]
    assert gates["test"].timeout == 900
    assert gates["coverage"].reports == [".agentgate/.coverage"]
    assert gates["coverage"].format == "coverage-data"
    assert config.notices == []  # nothing had to be added to what init wrote


def test_init_with_profile_and_a_path_that_needs_quoting(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(repo / "my tools" / "run.py", "x = 1\n")
    code, _, _ = init(capsys, "--profile", "relaxed")
    assert code == 0
    config = written(repo)
    assert config.profile == "relaxed"
    build = config.gate("build")
    assert build is not None and build.command == "python -m compileall -q 'my tools'"
    lint = config.gate("lint")
    assert lint is not None and lint.thresholds == {"max_errors": 5, "max_warnings": 100}


def test_init_python_wins_when_package_json_sits_beside_pyproject(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(repo / "pyproject.toml", "[project]\nname = 'demo'\n")
    package(repo, devDependencies={"jest": "^29"})
    assert init(capsys)[0] == 0
    lint = written(repo).gate("lint")
    assert lint is not None and lint.format == "ruff"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("agentgate.yml", "profile: strict\n"),
        (".agentgate.yml", "profile: strict\n"),
        ("pyproject.toml", "[project]\nname = 'x'\n\n[tool.agentgate]\nprofile = 'strict'\n"),
        ("agentgate.json", '{"profile": "strict"}'),
    ],
)
def test_init_never_overwrites_an_existing_config(
    repo: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    write(repo / "app.py", "x = 1\n")
    path = write(repo / name, text)
    code, out, err = init(capsys)
    assert code == 2 and out == ""
    assert err == f"agentgate: {path} already configures this project; nothing was written\n"
    assert path.read_text(encoding="utf-8") == text
    if name != "agentgate.yml":
        assert not (repo / "agentgate.yml").exists()


def test_init_refuses_when_a_parent_folder_of_the_repository_is_configured(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    top = write(repo / "agentgate.yml", "profile: strict\n")
    sub = repo / "services" / "api"
    write(sub / "main.py", "x = 1\n")
    monkeypatch.chdir(sub)
    code, _, err = init(capsys)
    assert code == 2 and f"{top} already configures this project" in err
    assert not (sub / "agentgate.yml").exists()


def test_init_never_overwrites_a_file_that_appears_meanwhile(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write itself refuses to replace a file, even one discovery did not see."""
    import pytest_agentgate.config.files as config_module

    write(repo / "app.py", "x = 1\n")
    target = write(repo / "agentgate.yml", "mine\n")
    monkeypatch.setattr(config_module, "find_config", lambda start: None)
    code, _, err = init(capsys)
    assert code == 2
    assert err == f"agentgate: {target} already exists; nothing was written\n"
    assert target.read_text(encoding="utf-8") == "mine\n"


def test_init_without_a_project(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo / "README.md", "hello\n")
    code, out, err = init(capsys)
    assert code == 2 and out == ""
    assert err == (
        "agentgate: error: no Python or JavaScript project detected here "
        "(no pyproject.toml, setup.py, *.py or package.json)\n"
    )
    assert not (repo / "agentgate.yml").exists()


# -- init: JavaScript -----------------------------------------------------------------------------


def test_init_jest_typescript_eslint(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package(
        repo,
        dependencies={"react": "^18"},
        devDependencies={"jest": "^29", "jest-junit": "^16", "eslint": "^9", "typescript": "^5"},
    )
    assert init(capsys)[0] == 0
    config = written(repo)
    gates = {g.name: g for g in config.gates}
    assert list(gates) == ["build", "lint", "test", "coverage"]
    assert gates["build"].command == "npx tsc --noEmit --pretty false"
    assert gates["lint"].command == "npx eslint -f json ." and gates["lint"].format == "eslint"
    assert gates["test"].command is not None
    assert "--reporters=jest-junit" in gates["test"].command
    assert "--coverageReporters=json-summary" in gates["test"].command
    assert gates["test"].env == {"JEST_JUNIT_OUTPUT_FILE": ".agentgate/junit.xml"}
    assert gates["test"].reports == [".agentgate/junit.xml"]
    assert gates["coverage"].reports == ["coverage/coverage-summary.json"]
    assert gates["coverage"].format == "istanbul-summary"
    assert config.notices == []


def test_init_vitest_with_build_script(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package(repo, scripts={"build": "vite build"}, devDependencies={"vitest": "^2", "jest": "^29"})
    assert init(capsys)[0] == 0
    gates = {g.name: g for g in written(repo).gates}
    assert list(gates) == ["build", "test", "coverage"]
    assert gates["build"].command == "npm run build"
    test = gates["test"]
    assert test.command is not None
    assert test.command.startswith("npx vitest run ")
    assert "--outputFile.junit=.agentgate/junit.xml" in test.command
    assert test.env == {}  # vitest writes its own JUnit; no jest-junit variable


def test_init_mocha(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package(repo, devDependencies={"mocha": "^10"})
    assert init(capsys)[0] == 0
    gates = {g.name: g for g in written(repo).gates}
    assert list(gates) == ["test", "coverage"]
    test = gates["test"]
    assert test.command is not None
    assert "mocha-junit-reporter" in test.command
    assert "mochaFile=.agentgate/junit.xml" in test.command
    assert test.reports == [".agentgate/junit.xml"]


def test_init_unknown_test_runner_gates_the_test_script(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package(repo, scripts={"test": "node test.js"}, dependencies=None)
    assert init(capsys)[0] == 0
    config = written(repo)
    assert [(g.name, g.kind, g.command) for g in config.gates] == [
        ("npm-test", "custom", "npm test")
    ]


def test_init_package_json_with_nothing_to_gate_still_loads(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package(repo, scripts=["not", "a", "table"])
    assert init(capsys)[0] == 0
    text = (repo / "agentgate.yml").read_text(encoding="utf-8")
    assert "gates: {}  # no build, lint or test tool recognised" in text
    config = written(repo)
    assert config.gates == [] and config.attempts_max == 3


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"name": "demo",\n}', "package.json:2: invalid JSON: "),
        ("[1, 2]", "package.json: expected a JSON object at the top"),
    ],
)
def test_init_broken_package_json_is_named(
    repo: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    write(repo / "package.json", content)
    code, out, err = init(capsys)
    assert code == 2 and out == ""
    assert err.startswith("agentgate: error: ") and expected in err
    assert "Traceback" not in err
    assert not (repo / "agentgate.yml").exists()


def test_starter_reports_an_unreadable_package_json(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_bytes(b'{"name": "\xff"}')
    with pytest.raises(ConfigError, match=r"package\.json: cannot be read"):
        starter_config(tmp_path)


def test_starter_reports_a_package_json_without_permission(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "package.json").write_text("{}", encoding="utf-8")
    real = Path.read_text

    def denied(self: Path, *args: Any, **kwargs: Any) -> str:
        if self.name == "package.json":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", denied)
    with pytest.raises(ConfigError) as info:
        starter_config(tmp_path)
    assert str(info.value) == f"{tmp_path / 'package.json'}: cannot be read: Permission denied"


def test_starter_for_nothing_is_none(tmp_path: Path) -> None:
    assert starter_config(tmp_path) is None


# -- explain --------------------------------------------------------------------------------------

EXPLAINED = """\
    profile: strict
    attempts: {max: 4}
    continuation: {max_chars: 2500}
    integrity:
      allow:
        - {rule: threshold, path: gates.lint.max_warnings, reason: legacy warnings}
        - {rule: threshold, path: gates.coverage.branches, reason: cov.json has no branches}
    gates:
      build: {command: make, timeout: 30}
      lint: {command: "ruff check .", max_warnings: 7}
      test: {command: "pytest -q"}
      coverage: {report: cov.json, branches: null, lines: 92.5}
      custom:
        - {name: audit, command: "pip-audit -f json", max_severity: high, blocking: false}
        - {name: docs, command: "make docs", enabled: false}
    """


def test_explain_text_shows_merged_thresholds(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(repo / "agentgate.yml", EXPLAINED)
    assert main(["explain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"config: {repo / 'agentgate.yml'}\n")
    assert "profile: strict   attempts: 4   continuation: 2500 chars\n" in out
    assert "\nbuild [build]\n  command:  make  (timeout 30s)\n  max_errors     0\n" in out
    assert (
        "\nlint [lint]\n  command:  ruff check . --output-format json  (timeout 600s)\n"
        "  max_errors     0\n  max_warnings   7\n"
    ) in out
    test_lines = (
        "  reports:  .agentgate/junit-test.xml\n  min_pass_rate  100\n  flaky          fail\n"
    )
    assert test_lines in out
    assert (
        "\ncoverage [coverage]\n  reports:  cov.json\n  lines          92.5\n"
        "  branches       off\n  functions      90\n  statements     90\n"
    ) in out
    assert "\naudit [custom]  (advisory)\n" in out
    assert "  max_severity   high\n" in out
    assert "\ndocs [custom]  (disabled)\n" in out
    assert "note: lint: added --output-format json to the ruff command" in out
    assert "note: test: added --junitxml=.agentgate/junit-test.xml to the pytest command" in out
    registry = get_registry()
    assert f"lint formats: {', '.join(sorted(registry.lint_formats))}\n" in out
    assert f"coverage formats: {', '.join(sorted(registry.coverage_formats))}\n" in out


def test_explain_profile_flag_changes_the_defaults_not_the_overrides(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(repo / "agentgate.yml", EXPLAINED)
    assert main(["explain", "--profile", "relaxed", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["profile"] == "relaxed"
    gates = {g["name"]: g for g in doc["gates"]}
    assert gates["lint"]["thresholds"] == {"max_errors": 5, "max_warnings": 7}
    assert gates["coverage"]["thresholds"] == {
        "lines": 92.5,
        "branches": None,
        "functions": 70.0,
        "statements": 70.0,
        "patch": 60.0,
    }
    assert gates["test"]["thresholds"]["min_pass_rate"] == 90.0


def test_explain_json_document(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo / "agentgate.yml", EXPLAINED)
    assert main(["explain", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"] == str(repo / "agentgate.yml")
    assert (doc["profile"], doc["attempts_max"], doc["max_chars"]) == ("strict", 4, 2500)
    gates = {g["name"]: g for g in doc["gates"]}
    assert list(gates) == ["build", "lint", "test", "coverage", "audit", "docs"]
    assert gates["build"] == {
        "name": "build",
        "kind": "build",
        "enabled": True,
        "blocking": True,
        "command": "make",
        "timeout_s": 30,
        "reports": [],
        "format": None,
        "thresholds": {"max_errors": 0},
    }
    assert gates["audit"]["blocking"] is False
    assert gates["audit"]["options"] == {"name": "audit"}
    assert gates["audit"]["thresholds"] == {"max_severity": "high"}
    assert gates["docs"]["enabled"] is False
    assert gates["coverage"]["thresholds"]["branches"] is None
    assert {"eslint", "flake8", "mypy", "pylint", "ruff", "sarif"} <= set(doc["formats"]["lint"])
    assert {"coverage-json", "coverage-data", "istanbul-summary"} <= set(doc["formats"]["coverage"])
    assert len(doc["notices"]) == 2


def test_explain_with_config_flag(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo / "ci" / "gates.yml", "profile: relaxed\ngates: {build: {command: make}}\n")
    assert main(["explain", "--config", "ci/gates.yml"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"config: {repo / 'ci' / 'gates.yml'}\nprofile: relaxed")


def test_explain_after_init_round_trip(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo / "app.py", "x = 1\n")
    write(repo / "test_app.py", "def test_x(): pass\n")
    assert main(["init", "--profile", "relaxed"]) == 0
    capsys.readouterr()
    assert main(["explain"]) == 0
    out = capsys.readouterr().out
    assert f"config: {repo / 'agentgate.yml'}" in out
    assert "profile: relaxed" in out
    assert "--source=app " in out
    assert "  lines          70\n" in out
