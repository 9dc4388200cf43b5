"""Configuration: every source, discovery, profile merge, and every mistake a user can make.

Errors are asserted on what the user reads: the file, the line (YAML, TOML, JSON), the key path
and the suggestion. Nothing here runs a real tool.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_agentgate.cli.main import main
from pytest_agentgate.config import (
    Config,
    ConfigError,
    RawConfig,
    find_config,
    load_config,
    validate,
)
from pytest_agentgate.config.model import DEFAULT_TIMEOUT
from pytest_agentgate.config.resolve import ReportFlags, resolve_config
from pytest_agentgate.registry import get_registry

RUFF = "ruff check --output-format json ."
LINT_FORMATS = ", ".join(sorted(get_registry().lint_formats))
COVERAGE_FORMATS = ", ".join(sorted(get_registry().coverage_formats))
JUNIT = ".agentgate/junit.xml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository root: discovery never walks above it."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(path: Path, profile: str | None = None) -> Config:
    return load_config(path, get_registry(), profile_override=profile)


def load_yaml(repo: Path, text: str, name: str = "agentgate.yml") -> Config:
    return load(write(repo / name, text))


def yaml_error(repo: Path, text: str, name: str = "agentgate.yml") -> ConfigError:
    path = write(repo / name, text)
    with pytest.raises(ConfigError) as info:
        load(path)
    return info.value


def from_data(data: object, source: str = "test.yml") -> Config:
    return validate(RawConfig(data, source), get_registry(), root=Path("."), path=None)


def data_error(data: object, source: str = "test.yml") -> ConfigError:
    with pytest.raises(ConfigError) as info:
        from_data(data, source)
    return info.value


# -- sources ------------------------------------------------------------------------------------


FULL_YAML = """\
    profile: standard
    gates:
      build:    {command: "python -m compileall -q src", timeout: 300}
      lint:     {command: "ruff check --output-format json .", format: ruff, max_warnings: 10}
      test:     {command: "pytest --junitxml=.agentgate/junit.xml", report: ".agentgate/junit.xml",
                 min_pass_rate: 100}
      coverage: {report: ".agentgate/coverage.json", lines: 90, branches: 85}
      custom:
        - {name: security-scan, command: "pip-audit -f json", timeout: 60}
    attempts: {max: 5}
    continuation: {max_chars: 1000}
    """


def test_design_md_example_loads_with_every_value(repo: Path) -> None:
    config = load_yaml(repo, FULL_YAML)
    assert config.profile == "standard"
    assert config.attempts_max == 5
    assert config.max_chars == 1000
    assert config.root == repo.resolve()
    assert [g.name for g in config.gates] == ["build", "lint", "test", "coverage", "security-scan"]
    build = config.gate("build")
    assert build is not None and build.timeout == 300
    assert build.thresholds == {"max_errors": 0}
    lint = config.gate("lint")
    assert lint is not None
    assert lint.command == RUFF and lint.format == "ruff"
    assert lint.thresholds == {"max_errors": 0, "max_warnings": 10}
    assert lint.timeout == DEFAULT_TIMEOUT
    test = config.gate("test")
    assert test is not None and test.reports == [JUNIT]
    assert test.thresholds["min_pass_rate"] == 100.0
    assert test.thresholds["flaky"] == "allow"
    coverage = config.gate("coverage")
    assert coverage is not None
    assert coverage.thresholds == {
        "lines": 90.0,
        "branches": 85.0,
        "functions": 85.0,
        "statements": 85.0,
        "patch": 80.0,
    }
    custom = config.gate("security-scan")
    assert custom is not None and custom.kind == "custom"
    assert custom.timeout == 60 and custom.thresholds == {}
    assert config.gate("nope") is None
    assert config.notices == []


@pytest.mark.parametrize("name", ["agentgate.yml", ".agentgate.yml", "agentgate.yaml"])
def test_each_yaml_name_is_discovered(repo: Path, name: str) -> None:
    write(repo / name, "gates: {build: {command: make}}\n")
    assert find_config(repo) == repo / name
    config = resolve_config(repo)
    assert config.path == repo / name
    assert [g.command for g in config.gates] == ["make"]


def test_yaml_file_wins_over_pyproject_table(repo: Path) -> None:
    write(repo / "pyproject.toml", "[tool.agentgate]\nprofile = 'strict'\n")
    write(repo / ".agentgate.yml", "profile: relaxed\n")
    assert find_config(repo) == repo / ".agentgate.yml"


def test_pyproject_tool_table(repo: Path) -> None:
    write(
        repo / "pyproject.toml",
        """\
        [project]
        name = "demo"

        [tool.agentgate]
        profile = "standard"

        [tool.agentgate.gates.lint]
        command = "ruff check --output-format json ."
        max_warnings = 3

        [[tool.agentgate.gates.custom]]
        name = "audit"
        command = "pip-audit -f json"
        max_severity = "high"
        """,
    )
    assert find_config(repo) == repo / "pyproject.toml"
    config = resolve_config(repo)
    assert config.profile == "standard"
    lint = config.gate("lint")
    assert lint is not None and lint.format == "ruff"
    assert lint.thresholds == {"max_errors": 0, "max_warnings": 3}
    audit = config.gate("audit")
    assert audit is not None and audit.thresholds == {"max_severity": "high"}


def test_pyproject_without_table_is_not_a_config(repo: Path) -> None:
    write(repo / "pyproject.toml", '[project]\nname = "demo"\ndependencies = ["agentgate"]\n')
    assert find_config(repo) is None


def test_pyproject_without_table_named_explicitly(repo: Path) -> None:
    path = write(repo / "pyproject.toml", "tool = 5\n")
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value) == f"{path}: has no [tool.agentgate] table"


def test_broken_pyproject_that_looks_configured_is_found_and_reported(repo: Path) -> None:
    path = write(repo / "pyproject.toml", "[tool.agentgate]\nprofile = strict\n")
    assert find_config(repo) == path
    with pytest.raises(ConfigError) as info:
        resolve_config(repo)
    assert info.value.line == 2
    assert str(info.value).startswith(f"{path}:2: invalid TOML: ")


def test_pyproject_whose_agentgate_header_is_the_broken_part_is_reported(repo: Path) -> None:
    # Not silently replaced by the zero-config defaults: the user meant to configure agentgate.
    path = write(repo / "pyproject.toml", '[project]\nname = "x"\n[tool.agentgate\n')
    assert find_config(repo) == path
    with pytest.raises(ConfigError) as info:
        resolve_config(repo)
    assert str(info.value).startswith(f"{path}:3: invalid TOML: ")
    write(repo / "pyproject.toml", "[tool.agentgate-like]\n[broken\n")
    assert find_config(repo) is None


def test_broken_pyproject_that_only_mentions_agentgate_is_ignored(repo: Path) -> None:
    write(repo / "pyproject.toml", 'dependencies = ["agentgate"\n')
    assert find_config(repo) is None


def test_unreadable_pyproject_is_not_a_config(repo: Path) -> None:
    (repo / "pyproject.toml").write_bytes(b"\xff\xfe agentgate")
    assert find_config(repo) is None


def test_plain_toml_file_by_flag(repo: Path) -> None:
    write(repo / "ci" / "gates.toml", 'profile = "relaxed"\n[gates.build]\ncommand = "make"\n')
    config = resolve_config(repo, config_path="ci/gates.toml")
    assert config.profile == "relaxed"
    assert config.root == (repo / "ci").resolve()


def test_invalid_toml_names_file_and_line(repo: Path) -> None:
    path = write(repo / "gates.toml", 'profile = "strict"\ngates = [\n')
    with pytest.raises(ConfigError) as info:
        load(path)
    assert info.value.line is not None
    assert str(info.value).startswith(f"{path}:{info.value.line}: invalid TOML")


WORKSPACE = {
    "$schema": "https://example.invalid/schema.json",
    "enabled": True,
    "profile": "standard",
    "gates": {
        "build": {"enabled": True, "command": "npm run build", "timeout": 120000, "maxErrors": 0},
        "lint": {
            "enabled": True,
            "command": "npx eslint -f json .",
            "timeout": 60000,
            "maxErrors": 0,
            "maxWarnings": 10,
        },
        "test": {
            "enabled": True,
            "command": "npx vitest run",
            "reportPath": ".agentgate/junit.xml",
            "minPassRate": 98,
        },
        "coverage": {
            "enabled": True,
            "reportPath": "coverage/coverage-summary.json",
            "format": "istanbul-summary",
            "thresholds": {"lines": 80, "branches": 70, "functions": 75, "statements": 80},
        },
        "custom": [
            {
                "name": "audit",
                "command": "npm audit --json",
                "timeout": 30000,
                "maxSeverity": "high",
            }
        ],
    },
    "tokenBudget": {"max": 100000},
    "rejection": {"maxRetries": 4, "escalateToUser": True},
}


def test_workspace_json_shape(repo: Path) -> None:
    write(repo / "agentgate.json", json.dumps(WORKSPACE))
    config = resolve_config(repo)
    assert config.path == repo / "agentgate.json"
    assert config.profile == "standard"
    assert config.enabled is True
    assert config.attempts_max == 4  # rejection.maxRetries
    build = config.gate("build")
    assert build is not None and build.timeout == 120.0  # milliseconds there
    lint = config.gate("lint")
    assert lint is not None and lint.timeout == 60.0 and lint.format == "eslint"
    assert lint.thresholds == {"max_errors": 0, "max_warnings": 10}
    test = config.gate("test")
    assert test is not None and test.reports == [JUNIT]
    assert test.thresholds["min_pass_rate"] == 98.0
    coverage = config.gate("coverage")
    assert coverage is not None and coverage.format == "istanbul-summary"
    assert coverage.reports == ["coverage/coverage-summary.json"]
    assert coverage.thresholds == {
        "lines": 80.0,
        "branches": 70.0,
        "functions": 75.0,
        "statements": 80.0,
        "patch": 80.0,  # the standard profile's
    }
    audit = config.gate("audit")
    assert audit is not None
    assert audit.timeout == 30.0 and audit.thresholds == {"max_severity": "high"}


def test_workspace_json_with_dot_name_and_disabled_gate(repo: Path) -> None:
    doc = {"enabled": False, "gates": {"build": {"enabled": False}}}
    write(repo / ".agentgate.json", json.dumps(doc))
    config = resolve_config(repo)
    assert config.enabled is False
    build = config.gate("build")
    assert build is not None and build.enabled is False


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"profil": "strict"}, "profil: unknown key; did you mean 'profile'?"),
        ({"gates": {"lnt": {}}}, "gates.lnt: unknown key; did you mean 'lint'?"),
        (
            {"gates": {"lint": {"max_warnings": 3}}},
            "gates.lint.max_warnings: unknown key; did you mean 'maxWarnings'?",
        ),
        (
            {"gates": {"coverage": {"thresholds": {"line": 80}}}},
            "gates.coverage.thresholds.line: unknown key; did you mean 'lines'?",
        ),
        (
            {"gates": {"coverage": {"thresholds": [80]}}},
            "gates.coverage.thresholds: expected a mapping of keys, got a list",
        ),
        ({"gates": {"custom": {"name": "x"}}}, "gates.custom: expected a list of gates"),
        ({"gates": []}, "gates: expected a mapping of keys, got a list"),
        ({"gates": {"build": "make"}}, "gates.build: expected a mapping of keys, got a string"),
        (
            {"rejection": {"maxRetry": 2}},
            "rejection.maxRetry: unknown key; did you mean 'maxRetries'?",
        ),
        ({"rejection": {"escalateToUser": "yes"}}, "rejection.escalateToUser: expected true or"),
        (
            {"rejection": {"maxRetries": 0}},
            "rejection.maxRetries: expected a whole number >= 1, got a number (0)",
        ),
        (
            {"gates": {"build": {"command": "make", "timeout": 0}}},
            "gates.build.timeout: expected a number of milliseconds above 0",
        ),
        (
            {"gates": {"lint": {"command": "eslint .", "format": "eslint", "maxWarnings": -1}}},
            "gates.lint.maxWarnings: expected a whole number >= 0, got a number (-1)",
        ),
        (
            {"gates": {"coverage": {"reportPath": "c.json", "thresholds": {"lines": 101}}}},
            "gates.coverage.thresholds.lines: expected a percentage from 0 to 100, got 101",
        ),
        (
            {"gates": {"custom": [{"name": "a", "command": "x", "maxSeverity": "hgh"}]}},
            "gates.custom.0.maxSeverity: 'hgh' is not valid; did you mean 'high'?",
        ),
    ],
)
def test_workspace_json_errors_use_its_own_key_names(
    repo: Path, doc: dict[str, object], expected: str
) -> None:
    path = write(repo / "agentgate.json", json.dumps(doc))
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: {expected}")


def test_workspace_json_invalid_json_names_line(repo: Path) -> None:
    path = write(repo / "agentgate.json", '{\n  "profile": "strict",\n}\n')
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:3: invalid JSON: ")


def test_workspace_json_must_be_an_object(repo: Path) -> None:
    path = write(repo / "agentgate.json", "[1, 2]")
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value) == f"{path}: expected a JSON object at the top"


# -- discovery ----------------------------------------------------------------------------------


def test_discovery_walks_up_from_a_subdirectory(repo: Path) -> None:
    write(repo / "agentgate.yml", "gates: {build: {command: make}}\n")
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert find_config(sub) == repo / "agentgate.yml"
    config = resolve_config(sub)
    assert config.root == repo.resolve()


def test_nearest_config_wins(repo: Path) -> None:
    write(repo / "agentgate.yml", "profile: strict\n")
    inner = write(repo / "sub" / "agentgate.yml", "profile: relaxed\n")
    assert find_config(repo / "sub") == inner


def test_discovery_stops_at_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path / "agentgate.yml", "profile: strict\n")  # outside the repository
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    assert find_config(repo / "sub") is None
    assert find_config(repo) is None


def test_discovery_outside_any_repository_walks_to_the_top(tmp_path: Path) -> None:
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)
    found = find_config(start)
    assert found is None or not found.is_relative_to(tmp_path)
    write(tmp_path / "agentgate.yml", "profile: strict\n")
    assert find_config(start) == tmp_path / "agentgate.yml"


def test_git_file_of_a_worktree_also_marks_the_root(tmp_path: Path) -> None:
    write(tmp_path / "agentgate.yml", "profile: strict\n")
    repo = tmp_path / "wt"
    write(repo / ".git", "gitdir: /elsewhere\n")
    assert find_config(repo) is None


def test_explicit_config_path_relative_and_absolute(repo: Path) -> None:
    path = write(repo / "conf" / "gates.yml", "gates: {build: {command: make}}\n")
    assert resolve_config(repo, config_path="conf/gates.yml").path == repo / "conf" / "gates.yml"
    assert resolve_config(Path("/"), config_path=str(path)).path == path


def test_explicit_config_that_does_not_exist(repo: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_config(repo, config_path="missing.yml")
    assert str(info.value) == f"{repo / 'missing.yml'}: no such file"


def test_explicit_config_that_is_a_directory(repo: Path) -> None:
    (repo / "conf.yml").mkdir()
    with pytest.raises(ConfigError) as info:
        resolve_config(repo, config_path="conf.yml")
    assert str(info.value).startswith(f"{repo / 'conf.yml'}: is not a regular file")


def test_config_that_is_not_utf8(repo: Path) -> None:
    (repo / "agentgate.yml").write_bytes(b"profile: \xff\xfe\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(repo)
    assert "cannot be read" in str(info.value)


# -- profile merge ------------------------------------------------------------------------------

MINIMAL = """\
    profile: {profile}
    gates:
      build: {{command: make}}
      lint: {{command: "ruff check ."}}
      test: {{command: "pytest"}}
      coverage: {{report: cov.json}}
    """


@pytest.mark.parametrize(
    ("profile", "lint", "rate", "flaky", "coverage"),
    [
        ("strict", (0, 0), 100.0, "fail", (90.0, 85.0, 90.0, 90.0, 90.0)),
        ("standard", (0, 50), 95.0, "allow", (85.0, 80.0, 85.0, 85.0, 80.0)),
        ("relaxed", (5, 100), 90.0, "allow", (70.0, 65.0, 70.0, 70.0, 60.0)),
    ],
)
def test_profile_defaults_match_the_design_table(
    repo: Path,
    profile: str,
    lint: tuple[int, int],
    rate: float,
    flaky: str,
    coverage: tuple[float, ...],
) -> None:
    config = load_yaml(repo, MINIMAL.format(profile=profile))
    assert config.profile == profile
    gates = {g.name: g.thresholds for g in config.gates}
    assert gates["build"] == {"max_errors": 0}
    assert gates["lint"] == {"max_errors": lint[0], "max_warnings": lint[1]}
    assert gates["test"]["min_pass_rate"] == rate
    assert gates["test"]["flaky"] == flaky
    assert gates["coverage"] == dict(
        zip(("lines", "branches", "functions", "statements", "patch"), coverage, strict=True)
    )


def test_default_profile_is_standard(repo: Path) -> None:
    config = load_yaml(repo, "gates: {lint: {command: 'ruff check .', max_errors: 2}}\n")
    assert config.profile == "standard"
    lint = config.gate("lint")
    assert lint is not None and lint.thresholds == {"max_errors": 2, "max_warnings": 50}


def test_override_sits_on_top_of_the_profile_and_null_switches_off(repo: Path) -> None:
    config = load_yaml(
        repo,
        """\
        profile: strict
        gates:
          lint: {command: "ruff check .", max_warnings: 7}
          coverage: {report: cov.json, branches: null, lines: 95.5}
        """,
    )
    lint, coverage = config.gate("lint"), config.gate("coverage")
    assert lint is not None and lint.thresholds == {"max_errors": 0, "max_warnings": 7}
    assert coverage is not None
    assert coverage.thresholds == {
        "lines": 95.5,
        "branches": None,
        "functions": 90.0,
        "statements": 90.0,
        "patch": 90.0,
    }


def test_profile_flag_overrides_the_file_but_keeps_overrides(repo: Path) -> None:
    path = write(
        repo / "agentgate.yml",
        "profile: strict\ngates: {lint: {command: 'ruff check .', max_warnings: 7}}\n",
    )
    config = load(path, profile="relaxed")
    assert config.profile == "relaxed"
    lint = config.gate("lint")
    assert lint is not None and lint.thresholds == {"max_errors": 5, "max_warnings": 7}


def test_unknown_profile_override_from_the_api(repo: Path) -> None:
    path = write(repo / "agentgate.yml", "gates: {build: {command: make}}\n")
    with pytest.raises(ConfigError) as info:
        load(path, profile="strikt")
    assert str(info.value) == (
        "--profile: 'strikt' is not a profile; did you mean 'strict'? "
        "choose one of: strict, standard, relaxed"
    )


# -- gate completion: inferred reports and formats ------------------------------------------------


def test_test_gate_adds_junitxml_to_a_pytest_command(repo: Path) -> None:
    config = load_yaml(repo, "gates: {test: {command: 'python -m pytest -q tests'}}\n")
    test = config.gate("test")
    assert test is not None
    assert test.command == (
        "python -m pytest -q tests --junitxml=.agentgate/junit-test.xml -o junit_family=xunit1"
    )
    assert test.reports == [".agentgate/junit-test.xml"]
    assert config.notices == [
        "test: added --junitxml=.agentgate/junit-test.xml to the pytest command"
    ]


@pytest.mark.parametrize(
    ("command", "report"),
    [
        ("pytest --junitxml=out/j.xml", "out/j.xml"),
        ("pytest --junit-xml out/j.xml -q", "out/j.xml"),
        ("tox -e py -- --junitxml 'my dir/j.xml'", "my dir/j.xml"),
    ],
)
def test_test_gate_reads_the_junitxml_its_command_writes(
    repo: Path, command: str, report: str
) -> None:
    config = from_data({"gates": {"test": {"command": command}}})
    test = config.gate("test")
    assert test is not None
    assert test.command == command  # untouched
    assert test.reports == [report]
    assert config.notices == [f"test: reading {report}, the command's --junitxml"]


def test_test_gate_keeps_an_explicit_report(repo: Path) -> None:
    config = from_data({"gates": {"test": {"command": "pytest", "report": ["a.xml", "b/*.xml"]}}})
    test = config.gate("test")
    assert test is not None
    assert test.command == "pytest" and test.reports == ["a.xml", "b/*.xml"]
    assert config.notices == []


@pytest.mark.parametrize("command", ["npm test", "pytest --junitxml", 'pytest "unclosed'])
def test_test_gate_without_any_junit_report_is_an_error(command: str) -> None:
    error = data_error({"gates": {"test": {"command": command}}})
    assert error.key == "gates.test"
    assert "needs `report`: the JUnit XML file(s) its command writes" in str(error)


def test_disabled_test_gate_needs_no_report() -> None:
    config = from_data({"gates": {"test": {"command": "npm test", "enabled": False}}})
    test = config.gate("test")
    assert test is not None and test.enabled is False


@pytest.mark.parametrize(
    ("command", "fmt", "final"),
    [
        ("ruff check .", "ruff", "ruff check . --output-format json"),
        ("python -m ruff check --output-format=json src", "ruff", None),
        ("ruff check --output-format sarif .", "sarif", None),
        ("npx eslint .", "eslint", "npx eslint . -f json"),
        ("npx eslint --format json .", "eslint", None),
        ("pylint --output-format=json2 src", "pylint", None),
        ("mypy -O json src", "mypy", None),
        ("flake8 --format=json", "flake8", None),
    ],
)
def test_lint_format_is_inferred_and_json_asked_for(
    command: str, fmt: str, final: str | None
) -> None:
    config = from_data({"gates": {"lint": {"command": command}}})
    lint = config.gate("lint")
    assert lint is not None
    assert lint.format == fmt
    assert lint.command == (final or command)
    if final:
        added = "--output-format json" if fmt == "ruff" else "-f json"
        assert config.notices == [f"lint: added {added} to the {fmt} command"]
    else:
        assert config.notices == []


def test_lint_command_with_a_report_file_is_left_alone() -> None:
    config = from_data(
        {"gates": {"lint": {"command": "ruff check . -o r.json", "report": "r.json"}}}
    )
    lint = config.gate("lint")
    assert lint is not None and lint.command == "ruff check . -o r.json"
    assert lint.format == "ruff"


def test_lint_format_inferred_from_the_report_name() -> None:
    config = from_data({"gates": {"lint": {"report": "reports/eslint.json"}}})
    lint = config.gate("lint")
    assert lint is not None and lint.format == "eslint" and lint.command is None


def test_lint_format_that_cannot_be_inferred_is_left_to_content_detection(repo: Path) -> None:
    config = resolve_config(repo, config_path=None, flags=ReportFlags(lint=["report.json"]))
    lint = config.gate("lint")
    assert lint is not None and lint.format is None


def test_unknown_lint_format_lists_the_known_ones(repo: Path) -> None:
    error = yaml_error(repo, "gates:\n  lint:\n    command: x\n    format: rufff\n")
    assert str(error) == (
        f"{repo / 'agentgate.yml'}:4: gates.lint.format: unknown lint format 'rufff'; "
        "did you mean 'ruff'? agentgate reads: " + LINT_FORMATS
    )


def test_unknown_coverage_format_lists_the_known_ones() -> None:
    error = data_error({"gates": {"coverage": {"report": "c.xml", "format": "clover"}}})
    assert str(error) == (
        "test.yml: gates.coverage.format: unknown coverage format 'clover'; agentgate reads: "
        + COVERAGE_FORMATS
    )


def test_coverage_format_may_be_left_to_detection() -> None:
    coverage = from_data({"gates": {"coverage": {"report": "c.json"}}}).gate("coverage")
    assert coverage is not None and coverage.format is None


# -- custom gates and extra gates -----------------------------------------------------------------


def test_custom_gate_options() -> None:
    config = from_data(
        {
            "gates": {
                "custom": [
                    {"name": "audit", "command": "pip-audit -f json", "max_severity": "medium"},
                    {
                        "name": "size",
                        "command": "du -sb dist --json",
                        "metric": "summary.bytes",
                        "max": 1000,
                        "blocking": False,
                        "env": {"LANG": "C", "DEPTH": 2, "FLAG": True},
                    },
                    {"name": "smoke", "command": "./smoke.sh"},
                ]
            }
        }
    )
    audit, size, smoke = config.gates
    assert audit.thresholds == {"max_severity": "medium"}
    assert size.options == {"name": "size", "metric": "summary.bytes"}
    assert size.thresholds == {"max": 1000.0}
    assert size.blocking is False
    assert size.env == {"LANG": "C", "DEPTH": "2", "FLAG": "true"}
    assert smoke.thresholds == {} and smoke.command == "./smoke.sh"


def test_extra_named_gate_of_a_builtin_kind() -> None:
    config = from_data(
        {
            "gates": {
                "lint": {"command": "ruff check ."},
                "typecheck": {"kind": "lint", "command": "mypy -O json src", "max_errors": 3},
            }
        }
    )
    typecheck = config.gate("typecheck")
    assert typecheck is not None and typecheck.kind == "lint" and typecheck.format == "mypy"
    assert typecheck.thresholds == {"max_errors": 3, "max_warnings": 50}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"gates": {"custom": [{"command": "x"}]}},
            "gates.custom.0.name: every custom gate needs a name",
        ),
        (
            {"gates": {"custom": [{"name": "  ", "command": "x"}]}},
            "gates.custom.0.name: every custom gate needs a name",
        ),
        (
            {"gates": {"custom": {"name": "x"}}},
            "gates.custom: expected a list of custom gates, got a mapping",
        ),
        (
            {"gates": {"custom": ["x"]}},
            "gates.custom.0: expected a mapping of keys, got a string ('x')",
        ),
        (
            {"gates": {"build": {"command": "a"}, "custom": [{"name": "build", "command": "b"}]}},
            "gates: two gates are named 'build'; gate names must be unique",
        ),
        (
            {"gates": {"custom": [{"name": "a", "command": "b", "metric": "x.y"}]}},
            "gates.custom.0: `metric` needs `min` or `max`",
        ),
        (
            {"gates": {"custom": [{"name": "a", "command": "b", "max": 3}]}},
            "gates.custom.0.max: `max` needs `metric`, the number in the report to check",
        ),
        (
            {"gates": {"custom": [{"name": "a", "command": "b", "min": 3}]}},
            "gates.custom.0.min: `min` needs `metric`, the number in the report to check",
        ),
        (
            {"gates": {"custom": [{"name": "a", "command": "b", "max_severity": "urgent"}]}},
            "gates.custom.0.max_severity: 'urgent' is not valid; choose one of:",
        ),
        ({"gates": {"custom": [{"name": "a"}]}}, "gates.custom.0: needs a `command` or a `report`"),
        ({"gates": {"build": {}}}, "gates.build: needs a `command`"),
        ({"gates": {"build": None}}, "gates.build: needs a `command`"),
        (
            {"gates": {"lnt": {"command": "ruff check ."}}},
            "gates.lnt: unknown gate; did you mean 'lint'?",
        ),
        ({"gates": {"tests": None}}, "gates.tests: unknown gate; did you mean 'test'?"),
        (
            {"gates": {"security": {"command": "x"}}},
            "gates.security: unknown gate; name a built-in gate (build, lint, test, coverage, "
            "custom) or set `kind:`",
        ),
        (
            {"gates": {"security": {"kind": "scanner", "command": "x"}}},
            "gates.security.kind: unknown gate kind 'scanner'; known kinds: build, coverage, "
            "custom, integrity, lint, session, test",
        ),
        (
            {"gates": {"security": {"kind": ["custom"], "command": "x"}}},
            "gates.security.kind: unknown gate kind ['custom']",
        ),
        (
            {"gates": {"build": {"kind": "lint", "command": "x"}}},
            "gates.build.kind: the 'build' gate is always of kind 'build'; give a gate of kind "
            "'lint' another name",
        ),
    ],
)
def test_gate_shape_errors(data: dict[str, object], expected: str) -> None:
    assert str(data_error(data)).startswith(f"test.yml: {expected}")


# -- value errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        (
            "gates:\n  lint:\n    command: ruff check .\n    max_warnigns: 10\n",
            "4: gates.lint.max_warnigns: unknown key; did you mean 'max_warnings'?",
        ),
        (
            "profil: strict\n",
            "1: profil: unknown key; did you mean 'profile'?",
        ),
        (
            "gates: {}\nsecurity: true\n",
            "2: security: unknown key; valid keys: profile, gates, attempts, continuation, enabled",
        ),
        (
            "profile: strickt\n",
            "1: profile: 'strickt' is not a profile; did you mean 'strict'? choose one of: "
            "strict, standard, relaxed",
        ),
        (
            "profile: fast\n",
            "1: profile: 'fast' is not a profile; choose one of: strict, standard, relaxed",
        ),
        (
            "gates:\n  lint:\n    command: ruff check .\n    max_warnings: ten\n",
            "4: gates.lint.max_warnings: expected a whole number >= 0, got a string ('ten')",
        ),
        (
            "gates:\n  lint:\n    command: ruff check .\n    max_errors: -1\n",
            "4: gates.lint.max_errors: expected a whole number >= 0, got a number (-1)",
        ),
        (
            "gates:\n  lint:\n    command: ruff check .\n    max_errors: 1.5\n",
            "4: gates.lint.max_errors: expected a whole number >= 0, got a number (1.5)",
        ),
        (
            "gates:\n  build:\n    command: make\n    max_errors: true\n",
            "4: gates.build.max_errors: expected a whole number >= 0, got a boolean (true)",
        ),
        (
            "gates:\n  coverage:\n    report: c.json\n    lines: 150\n",
            "4: gates.coverage.lines: expected a percentage from 0 to 100, got 150",
        ),
        (
            "gates:\n  coverage:\n    report: c.json\n    branches: -0.5\n",
            "4: gates.coverage.branches: expected a percentage from 0 to 100, got -0.5",
        ),
        (
            "gates:\n  coverage:\n    report: c.json\n    lines: '90'\n",
            "4: gates.coverage.lines: expected a number, got a string ('90')",
        ),
        (
            "gates:\n  coverage:\n    report: c.json\n    lines: .nan\n",
            "4: gates.coverage.lines: expected a number, got .nan (not a number)",
        ),
        (
            "gates:\n  build:\n    command: make\n    timeout: 0\n",
            "4: gates.build.timeout: expected a number of seconds above 0",
        ),
        (
            "gates:\n  build:\n    command: make\n    timeout: .inf\n",
            "4: gates.build.timeout: expected a number, got .inf (infinity)",
        ),
        (
            "gates:\n  build:\n    command: make\n    timeout: -.inf\n",
            "4: gates.build.timeout: expected a number, got -.inf (infinity)",
        ),
        (
            "gates:\n  build:\n    command: ''\n",
            "3: gates.build.command: expected a non-empty string, got a string ('')",
        ),
        (
            "gates:\n  build:\n    command: [make, all]\n",
            "3: gates.build.command: expected a non-empty string, got a list",
        ),
        (
            "gates:\n  build:\n    command: make\n    enabled: 'no'\n",
            "4: gates.build.enabled: expected true or false, got a string ('no')",
        ),
        (
            "gates:\n  test:\n    report: j.xml\n    flaky: sometimes\n",
            "4: gates.test.flaky: 'sometimes' is not valid; choose one of: fail, allow",
        ),
        (
            "gates:\n  test:\n    report: []\n    command: make test\n",
            "3: gates.test.report: expected a path or a list of paths, got a list",
        ),
        (
            "gates:\n  test:\n    report: [a.xml, 3]\n",
            "3: gates.test.report: expected a path or a list of paths, got a list",
        ),
        (
            "gates:\n  build:\n    command: make\n    env: [A]\n",
            "4: gates.build.env: expected a mapping of keys, got a list",
        ),
        (
            "gates:\n  build:\n    command: make\n    env:\n      A: {b: 1}\n",
            "5: gates.build.env.A: expected a string, got a mapping",
        ),
        (
            "gates:\n  build:\n    command: make\n    env:\n      A: null\n",
            "5: gates.build.env.A: expected a string, got nothing (null)",
        ),
        (
            "gates:\n  build:\n    command: make\n    report: build.log\n",
            "4: gates.build.report: unknown key; valid keys: command, timeout, enabled, blocking, "
            "env, max_errors",
        ),
        ("attempts: 3\n", "1: attempts: expected a mapping of keys, got a number (3)"),
        ("attempts: {max: 0}\n", "1: attempts.max: expected a whole number >= 1, got a number (0)"),
        ("attempts: {maximum: 3}\n", "1: attempts.maximum: unknown key; did you mean 'max'?"),
        (
            "continuation:\n  max_chars: 10\n",
            "2: continuation.max_chars: expected a whole number >= 200, got a number (10)",
        ),
        (
            "continuation: {chars: 300}\n",
            "1: continuation.chars: unknown key; did you mean 'max_chars'?",
        ),
        (
            "gates:\n  lint:\n    command: ruff check .\n    max_warnings: 2024-01-01\n",
            "4: gates.lint.max_warnings: expected a whole number >= 0, got a date",
        ),
        ("enabled: maybe\n", "1: enabled: expected true or false, got a string ('maybe')"),
        ("gates: [build]\n", "1: gates: expected a mapping of keys, got a list"),
        ("- build\n- lint\n", "1: expected a mapping of keys, got a list"),
        ("just a string\n", "1: expected a mapping of keys, got a string ('just a string')"),
    ],
)
def test_yaml_value_errors_name_file_line_and_key(
    repo: Path, yaml_text: str, expected: str
) -> None:
    error = yaml_error(repo, yaml_text)
    assert str(error).startswith(f"{repo / 'agentgate.yml'}:{expected}")


def test_empty_sections_keep_the_defaults(repo: Path) -> None:
    config = load_yaml(repo, "attempts: {}\ncontinuation: {}\ngates: {build: {command: make}}\n")
    assert config.attempts_max == 3 and config.max_chars == 4000


def test_attempt_options(repo: Path) -> None:
    config = load_yaml(
        repo, "attempts: {max: 2, global_max: 9, per_branch: true}\ngates: {build: {command: m}}\n"
    )
    assert config.attempts_max == 2
    assert config.attempts_global_max == 9
    assert config.attempts_per_branch is True


def test_error_attributes_for_programs(repo: Path) -> None:
    error = yaml_error(repo, "gates:\n  lint:\n    command: ruff check .\n    max_warnigns: 10\n")
    assert error.source == str(repo / "agentgate.yml")
    assert error.key == "gates.lint.max_warnigns"
    assert error.line == 4
    assert error.message == "unknown key; did you mean 'max_warnings'?"


def test_errors_inside_a_custom_list_point_at_the_item_line(repo: Path) -> None:
    error = yaml_error(
        repo,
        """\
        gates:
          custom:
            - name: ok
              command: "true"
            - name: bad
              command: "true"
              max_severty: high
        """,
    )
    assert str(error) == (
        f"{repo / 'agentgate.yml'}:7: gates.custom.1.max_severty: unknown key; "
        "did you mean 'max_severity'?"
    )


def test_invalid_yaml_names_the_line(repo: Path) -> None:
    error = yaml_error(repo, "profile: strict\ngates:\n  lint: {command: ruff\n  test: x\n")
    assert error.line is not None and error.line >= 3
    assert str(error).startswith(f"{repo / 'agentgate.yml'}:{error.line}: invalid YAML: ")


def test_invalid_yaml_tab_indentation(repo: Path) -> None:
    error = yaml_error(repo, "gates:\n\tbuild: {command: make}\n")
    assert error.line == 2
    assert "invalid YAML" in str(error)


def test_yaml_python_tags_are_refused(repo: Path) -> None:
    error = yaml_error(repo, "profile: !!python/object/apply:os.system ['true']\n")
    assert error.line == 1 and "invalid YAML" in str(error)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_yaml_file_is_an_error(repo: Path, text: str) -> None:
    error = yaml_error(repo, text)
    assert str(error) == (
        f"{repo / 'agentgate.yml'}: the file is empty; configure `gates:` "
        "(`agentgate init` writes one)"
    )


def test_recursive_yaml_alias_is_reported_not_crashed(repo: Path) -> None:
    # Refused before the document is built, at the anchor's line, whatever it would mean.
    error = yaml_error(repo, "gates: &g\n  build: {command: make}\n  again: *g\n")
    assert str(error) == (
        f"{repo / 'agentgate.yml'}:1: an alias refers to a value that contains it"
    )
    looped = yaml_error(repo, "profile: standard\ngates: &a [*a]\n")
    assert str(looped).endswith(":2: an alias refers to a value that contains it")


def test_yaml_anchor_reused_for_two_gates(repo: Path) -> None:
    config = load_yaml(
        repo,
        """\
        gates:
          lint: &ruff {command: "ruff check .", max_warnings: 1}
          style:
            <<: *ruff
            kind: lint
            max_warnings: 2
        """,
    )
    style = config.gate("style")
    assert style is not None and style.thresholds["max_warnings"] == 2


def test_yaml_non_string_keys_still_name_the_key(repo: Path) -> None:
    error = yaml_error(repo, "gates:\n  1: {command: make}\n")
    assert str(error).startswith(f"{repo / 'agentgate.yml'}:2: gates.1: unknown gate")
    top = yaml_error(repo, "3: x\n")
    assert "3: unknown key" in str(top)


# -- report flags -------------------------------------------------------------------------------


def test_report_flags_without_config_gate_exactly_those_reports(repo: Path) -> None:
    flags = ReportFlags(
        junit=["reports/*.xml"], coverage="coverage.json", lint=["ruff.json"], lint_format="ruff"
    )
    config = resolve_config(repo, flags=flags)
    assert config.path is None and config.root == repo
    assert [(g.name, g.command, g.reports, g.format) for g in config.gates] == [
        ("test", None, ["reports/*.xml"], None),
        ("coverage", None, ["coverage.json"], None),
        ("lint", None, ["ruff.json"], "ruff"),
    ]
    assert config.notices == [
        "no configuration file: gating exactly the reports given on the command line"
    ]


def test_report_flag_alone_is_enough(repo: Path) -> None:
    config = resolve_config(repo, flags=ReportFlags(coverage="cov.json"))
    assert [g.name for g in config.gates] == ["coverage"]


def test_report_flags_do_not_fall_back_to_zero_config(repo: Path) -> None:
    write(repo / "pyproject.toml", "[project]\nname = 'x'\n")
    config = resolve_config(repo, flags=ReportFlags(junit=["j.xml"]))
    assert [g.name for g in config.gates] == ["test"]


def test_report_flags_override_the_config_reports(repo: Path) -> None:
    write(
        repo / "agentgate.yml",
        """\
        profile: standard
        gates:
          test: {command: "pytest", report: old.xml, min_pass_rate: 90}
          lint: {command: "ruff check .", format: ruff}
          build: {command: make}
        """,
    )
    flags = ReportFlags(junit=["new/*.xml"], lint=["eslint.json"], lint_format="eslint")
    config = resolve_config(repo, flags=flags)
    test, lint = config.gate("test"), config.gate("lint")
    assert test is not None and test.reports == ["new/*.xml"] and test.command == "pytest"
    assert test.thresholds["min_pass_rate"] == 90.0
    assert lint is not None and lint.reports == ["eslint.json"] and lint.format == "eslint"
    assert lint.command == "ruff check ."  # a report file is given: no JSON flag added
    assert config.gate("build") is not None
    assert config.notices == []


def test_lint_format_flag_without_lint_is_an_error(repo: Path) -> None:
    write(repo / "agentgate.yml", "gates: {build: {command: make}}\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(repo, flags=ReportFlags(lint_format="ruff"))
    assert str(info.value) == "command line: --lint-format: goes with --lint FILE"


def test_lint_command_without_a_known_tool_name_keeps_format_open() -> None:
    config = validate(
        RawConfig({"gates": {"lint": {"command": "make lint"}}}, "test.yml"),
        get_registry(),
        root=Path("."),
        path=None,
    )
    lint = config.gate("lint")
    assert lint is not None and lint.format is None and lint.command == "make lint"


def test_lint_flag_infers_format_from_the_file_name(repo: Path) -> None:
    config = resolve_config(repo, flags=ReportFlags(lint=["out/ruff.json"]))
    lint = config.gate("lint")
    assert lint is not None and lint.format == "ruff"


def test_unknown_lint_format_flag(repo: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_config(repo, flags=ReportFlags(lint=["x.json"], lint_format="jshint"))
    assert str(info.value) == (
        "command line: gates.lint.format: unknown lint format 'jshint'; "
        "agentgate reads: " + LINT_FORMATS
    )


def test_report_flags_with_a_config_whose_gates_are_wrong(repo: Path) -> None:
    write(repo / "agentgate.yml", "gates: [a]\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(repo, flags=ReportFlags(junit=["j.xml"]))
    assert str(info.value) == (
        f"{repo / 'agentgate.yml'}:1: gates: expected a mapping of keys, got a list"
    )


def test_report_flags_with_a_config_that_is_a_list(repo: Path) -> None:
    write(repo / "agentgate.yml", "- a\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(repo, flags=ReportFlags(junit=["j.xml"]))
    assert "expected a mapping of keys, got a list" in str(info.value)


# -- front doors: exit 2, message on stderr, no traceback ----------------------------------------


@pytest.mark.parametrize("command", ["verify", "explain"])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "gates:\n  lint:\n    command: ruff check .\n    max_warnigns: 10\n",
            "agentgate.yml:4: gates.lint.max_warnigns: unknown key; did you mean 'max_warnings'?",
        ),
        ("profile: [\n", "agentgate.yml:2: invalid YAML: "),
        ("", "agentgate.yml: the file is empty"),
    ],
)
def test_cli_config_errors_exit_2_without_traceback(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    text: str,
    expected: str,
) -> None:
    write(repo / "agentgate.yml", text)
    monkeypatch.chdir(repo)
    assert main([command]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("agentgate: error: ")
    assert expected in err
    assert "Traceback" not in err


def test_cli_lint_format_without_lint(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    assert main(["verify", "--no-run", "--lint-format", "ruff"]) == 2
    err = capsys.readouterr().err
    assert err == "agentgate: error: command line: --lint-format: goes with --lint FILE\n"


def test_cli_missing_config_flag(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    assert main(["explain", "--config", "nope.yml"]) == 2
    err = capsys.readouterr().err
    assert err == f"agentgate: error: {repo / 'nope.yml'}: no such file\n"


def test_cli_unknown_profile_flag_is_a_usage_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    with pytest.raises(SystemExit) as info:
        main(["verify", "--profile", "strikt"])
    assert info.value.code == 2
    assert "invalid choice: 'strikt'" in capsys.readouterr().err


def test_cli_verify_with_report_flags_only(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Judging reports that are already there runs no command and names what it gated."""
    write(
        repo / "reports" / "a.xml",
        '<testsuite name="s"><testcase classname="t" name="ok"/>'
        '<testcase classname="t" name="bad"><failure message="boom"/></testcase></testsuite>',
    )
    write(repo / "ruff.json", "[]")
    monkeypatch.chdir(repo)
    code = main(
        [
            "verify",
            "--no-run",
            "--format",
            "json",
            "--junit",
            "reports/*.xml",
            "--lint",
            "ruff.json",
            "--lint-format",
            "ruff",
        ]
    )
    verdict = json.loads(capsys.readouterr().out)
    assert code == 1
    assert verdict["status"] == "fail"
    gates = {g["name"]: g for g in verdict["gates"]}
    assert set(gates) == {"test", "lint"}
    assert gates["test"]["status"] == "fail"
    assert gates["test"]["actual"]["passed"] == 1 and gates["test"]["actual"]["failed"] == 1
    assert gates["lint"]["status"] == "pass"


def test_python_api_verify_with_report_flags(repo: Path) -> None:
    """`pytest_agentgate.verify()` resolves the project like the CLI and returns the verdict."""
    import pytest_agentgate

    write(repo / "out" / "eslint.json", "[]")
    verdict = pytest_agentgate.verify(str(repo), run=False, lint="out/eslint.json")
    assert [(g.name, g.status) for g in verdict.gates] == [("lint", "pass")]
    assert verdict.status == "pass"
    with pytest.raises(ConfigError, match="--lint-format: goes with --lint FILE"):
        pytest_agentgate.verify(str(repo), run=False, lint_format="ruff")
    # The library call records nothing unless asked: no attempt, no history line.
    assert not (repo / ".agentgate" / "history.jsonl").exists()
    recorded = pytest_agentgate.verify(
        str(repo), run=False, lint="out/eslint.json", task="T1", record=True
    )
    assert recorded.attempt is not None and recorded.attempt.number == 1
    history = (repo / ".agentgate" / "history.jsonl").read_text().splitlines()
    assert len(history) == 1 and json.loads(history[0])["source"] == "library"


def test_misspelled_gate_kind_gets_a_suggestion() -> None:
    error = data_error({"gates": {"lint-js": {"kind": "lnt", "command": "npx eslint ."}}})
    assert "unknown gate kind 'lnt'; did you mean 'lint'? known kinds:" in str(error)
