"""Zero configuration: which projects are recognised and what they are gated with.

No tool runs here: the commands are asserted as the user sees them in `agentgate explain`.
"""

from __future__ import annotations

import importlib.metadata
import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _helpers import PYTEST_OPTS, git

from pytest_agentgate.cli.main import main
from pytest_agentgate.config import ConfigError
from pytest_agentgate.config.resolve import resolve_config
from pytest_agentgate.project import (
    is_python_project,
    project_root,
    python_defaults,
    python_dirs,
    zero_config,
)

PY = shlex.quote(sys.executable)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" if name.endswith(".py") else "", encoding="utf-8")


def commands(root: Path) -> dict[str, str | None]:
    config = resolve_config(root)
    return {g.name: g.command for g in config.gates}


def test_src_layout(repo: Path) -> None:
    touch(repo, "pyproject.toml", "src/demo/__init__.py", "src/demo/core.py", "tests/test_core.py")
    assert is_python_project(repo) == "pyproject.toml"
    assert python_dirs(repo) == ["src", "tests"]
    config = resolve_config(repo)
    assert config.path is None and config.root == repo
    assert config.profile == "strict"  # with no config a failing test is never quiet
    gates = {g.name: g for g in config.gates}
    assert list(gates) == ["build", "lint", "test", "coverage"]
    assert gates["build"].command == f"{PY} -m compileall -q src tests"
    assert gates["lint"].command == (
        f"{PY} -m ruff check --isolated --select E9,F63,F7,F82 --output-format json ."
    )
    assert gates["lint"].format == "ruff"
    assert gates["test"].command == (
        f"{PY} -m coverage run --branch --data-file=.agentgate/.coverage --source=src,demo "
        f"-m pytest{PYTEST_OPTS} --junitxml=.agentgate/junit.xml -o junit_family=xunit1"
    )
    assert gates["test"].reports == [".agentgate/junit.xml"]
    assert gates["coverage"].reports == [".agentgate/.coverage"]
    assert gates["coverage"].format == "coverage-data"
    assert gates["coverage"].thresholds == {
        "lines": 90.0,
        "branches": 85.0,
        "functions": 90.0,
        "statements": 90.0,
        "patch": 90.0,
    }
    assert config.notices[:2] == [
        "no configuration: detected a Python project (pyproject.toml) and gated it with "
        "compileall, its linter, pytest and coverage under the strict profile; "
        "`agentgate init` writes this as agentgate.yml",
        "lint: the project declares no linter, so only ruff's error rules run (E9,F63,F7,F82: "
        f"syntax errors, undefined names and the like), ruff {importlib.metadata.version('ruff')}, "
        "as installed (the project pins no version); configure a linter to be judged by its rules",
    ]


def test_flat_packages_are_the_coverage_source(repo: Path) -> None:
    touch(
        repo,
        "setup.py",
        "alpha/__init__.py",
        "beta/__init__.py",
        "scripts/tool.py",  # code, but not a package: compiled, not measured
        "tests/test_alpha.py",
        "test/test_beta.py",
    )
    assert is_python_project(repo) == "setup.py"
    defaults = python_defaults(repo)
    build = defaults["gates"]["build"]["command"]
    assert build == "python -m compileall -q alpha beta scripts test tests setup.py"
    assert "--source=alpha,beta " in defaults["gates"]["test"]["command"]


def test_single_module_project(repo: Path) -> None:
    touch(repo, "calc.py", "test_calc.py", "calc_test.py", "conftest.py")
    assert is_python_project(repo) == "calc.py"
    defaults = python_defaults(repo)
    assert defaults["gates"]["build"]["command"] == (
        "python -m compileall -q calc.py calc_test.py conftest.py test_calc.py"
    )
    assert "--source=calc " in defaults["gates"]["test"]["command"]
    config = resolve_config(repo)
    assert "(calc.py)" in config.notices[0]


def test_package_directory_without_marker_is_detected(repo: Path) -> None:
    touch(repo, "app/__init__.py", "README.md")
    assert is_python_project(repo) == "app/"


def test_namespace_package_under_src_is_found(repo: Path) -> None:
    touch(repo, "requirements.txt", "src/acme/tools/cli.py")
    assert python_dirs(repo) == ["src"]
    build = python_defaults(repo)["gates"]["build"]["command"]
    assert build == "python -m compileall -q src"


def test_deeply_buried_code_is_not_searched_forever(repo: Path) -> None:
    touch(repo, "tox.ini", "a/b/c/d/e/deep.py")
    assert python_dirs(repo) == []
    assert python_defaults(repo)["gates"]["build"]["command"] == "python -m compileall -q ."


@pytest.mark.parametrize(
    "noise",
    [
        "venv/lib/site.py",
        "env/lib/site.py",
        "node_modules/pkg/x.py",
        ".tox/py/x.py",
        ".venv/lib/x.py",
        "build/lib/x.py",
        "dist/x.py",
        "demo.egg-info/x.py",
        "__pycache__/x.py",
        "htmlcov/x.py",
    ],
)
def test_environments_and_generated_dirs_are_skipped(repo: Path, noise: str) -> None:
    touch(repo, "pyproject.toml", "pkg/__init__.py", noise)
    top = noise.split("/")[0]
    if top in ("venv", "env"):
        marker = "pyvenv.cfg" if top == "venv" else "conda-meta/history"
        touch(repo, f"{top}/{marker}")
    assert python_dirs(repo) == ["pkg"]
    assert "--source=pkg " in python_defaults(repo)["gates"]["test"]["command"]


def test_environment_nested_inside_a_folder_is_not_searched(repo: Path) -> None:
    touch(repo, "pyproject.toml", "tools/venv/pyvenv.cfg", "tools/venv/lib/x.py", "tools/README")
    assert python_dirs(repo) == []


def test_only_a_virtualenv_is_no_project(repo: Path) -> None:
    touch(repo, ".venv/pyvenv.cfg", ".venv/lib/x.py", "venv/pyvenv.cfg", "venv/lib/y.py")
    assert is_python_project(repo) is None
    assert zero_config(repo) is None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".coveragerc", "[run]\nsource = pkg\n"),
        ("pyproject.toml", "[tool.coverage.run]\nsource = ['pkg']\n"),
        ("setup.cfg", "[coverage:run]\nsource = pkg\n"),
        ("tox.ini", "[coverage:run]\nsource = pkg\n"),
    ],
)
def test_source_is_left_to_the_projects_coverage_config(repo: Path, name: str, text: str) -> None:
    touch(repo, "pkg/__init__.py")
    (repo / name).write_text(text, encoding="utf-8")
    command = python_defaults(repo)["gates"]["test"]["command"]
    assert "--source" not in command
    assert "--branch --data-file=.agentgate/.coverage -m pytest" in command


def test_unrelated_setup_cfg_does_not_count_as_coverage_config(repo: Path) -> None:
    touch(repo, "pkg/__init__.py")
    (repo / "setup.cfg").write_text("[metadata]\nname = pkg\n", encoding="utf-8")
    (repo / "tox.ini").mkdir()  # unreadable as a file: ignored
    assert "--source=pkg " in python_defaults(repo)["gates"]["test"]["command"]


def test_unreadable_folders_and_files_are_passed_over(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    touch(repo, "pkg/__init__.py", "locked/x.py", "setup.cfg")
    real_iterdir, real_read = Path.iterdir, Path.read_text

    def iterdir(self: Path) -> Iterator[Path]:
        if self.name == "locked":
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
        if self.name == "setup.cfg":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(Path, "read_text", read_text)
    assert python_dirs(repo) == ["pkg"]
    assert "--source=pkg " in python_defaults(repo)["gates"]["test"]["command"]


def test_no_source_when_nothing_is_measurable(repo: Path) -> None:
    touch(repo, "pyproject.toml", "tests/test_x.py", "test_y.py")
    command = python_defaults(repo)["gates"]["test"]["command"]
    assert "--source" not in command


def test_zero_config_uses_this_interpreter_quoted() -> None:
    assert "python" in PY
    defaults, marker = zero_config(Path(__file__).parent.parent) or ({}, "")
    assert marker == "pyproject.toml"
    assert defaults["gates"]["build"]["command"].startswith(f"{PY} -m compileall -q ")


def test_zero_config_uses_the_python_named_for_the_commands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The GitHub Action's AGENTGATE_PYTHON: the workflow's Python runs zero-config's commands,
    not the virtualenv agentgate runs from."""
    monkeypatch.setenv("AGENTGATE_PYTHON", "/opt/the python/bin/python3")
    defaults, _ = zero_config(Path(__file__).parent.parent) or ({}, "")
    assert defaults["gates"]["build"]["command"].startswith(
        "'/opt/the python/bin/python3' -m compileall -q "
    )


def test_no_project_is_a_helpful_error(repo: Path) -> None:
    touch(repo, "README.md", "docs/index.md")
    with pytest.raises(ConfigError) as info:
        resolve_config(repo)
    assert str(info.value) == (
        f"{repo}: no agentgate.yml, .agentgate.yml or [tool.agentgate] in pyproject.toml here or "
        "above, and no Python project detected; run `agentgate init` or write a config"
    )


def test_cli_verify_without_project_exits_2(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    assert main(["verify"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "no Python project detected; run `agentgate init`" in err
    assert "Traceback" not in err


def test_project_root_from_a_subdirectory(repo: Path) -> None:
    touch(repo, "pyproject.toml", "src/demo/__init__.py", "tests/test_a.py")
    assert project_root(repo / "src" / "demo") == repo
    assert project_root(repo) == repo
    config = resolve_config(repo / "src" / "demo")
    assert config.root == repo
    assert f"detected a Python project in {repo} (pyproject.toml)" in config.notices[0]
    build = config.gate("build")
    assert build is not None and build.command == f"{PY} -m compileall -q src tests"


def test_project_root_stays_inside_the_repository(tmp_path: Path) -> None:
    touch(tmp_path, "setup.cfg")  # above the repository: not this project
    repo = tmp_path / "repo"
    touch(repo, ".git/HEAD", "sub/mod.py")
    assert project_root(repo / "sub") == repo / "sub"


def test_outside_a_repository_a_subdirectory_run_gates_the_package_that_contains_it(
    tmp_path: Path,
) -> None:
    # An unpacked sdist: no .git. From its subdirectory, the package is the project (not the
    # subdirectory gated as one, with `--source=__init__`).
    package = tmp_path / "demo-1.0"
    touch(package, "setup.cfg", "demo/__init__.py", "demo/core.py", "tests/test_core.py")
    assert project_root(package / "demo") == package
    config = resolve_config(package / "demo")
    assert config.root == package
    test = config.gate("test")
    assert test is not None and test.command is not None
    assert "--source=demo" in test.command and "__init__" not in test.command


def test_outside_a_repository_the_home_folder_is_never_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    touch(home, "setup.cfg", "scratch/mod.py")  # a stray setup.cfg in the home folder
    monkeypatch.setenv("HOME", str(home))
    assert project_root(home / "scratch") == home / "scratch"


def test_outside_a_repository_a_parent_folders_config_never_gates_the_project(
    tmp_path: Path,
) -> None:
    # An unrelated parent's agentgate.yml with only a build gate once passed a package with
    # failing tests: discovery now stops at the package's own project file.
    (tmp_path / "agentgate.yml").write_text("gates:\n  build: {command: 'true'}\n")
    package = tmp_path / "downloads" / "demo-1.0"
    touch(package, "pyproject.toml", "demo/__init__.py", "tests/test_demo.py")
    config = resolve_config(package)
    assert config.path is None and config.root == package
    assert [g.name for g in config.gates] == ["build", "lint", "test", "coverage"]


def test_a_config_above_the_project_is_used_but_never_silently(repo: Path) -> None:
    # A monorepo: the top-level configuration gates everything, and a run from a package that
    # has its own project file says which folder it gates.
    (repo / "agentgate.yml").write_text("gates:\n  build: {command: 'true'}\n")
    touch(repo, "packages/one/pyproject.toml", "packages/one/one/__init__.py")
    config = resolve_config(repo / "packages" / "one" / "one")
    assert config.path == repo / "agentgate.yml" and config.root == repo
    assert any(
        f"above the project at {repo / 'packages' / 'one'}: it gates {repo}" in n
        for n in config.notices
    ), config.notices


def test_a_config_that_names_no_gates_gates_what_zero_config_detects(repo: Path) -> None:
    # Review 28: an agentgate.yml holding only `profile: strict` (or `attempts:`) replaced the
    # detected gates with none, and a project with a failing test and a lint error passed.
    touch(repo, "pyproject.toml", "src/demo/__init__.py", "tests/test_core.py")
    (repo / "agentgate.yml").write_text("profile: standard\nattempts: {max: 5}\n")
    config = resolve_config(repo)
    assert config.path == repo / "agentgate.yml"
    assert (config.profile, config.attempts_max) == ("standard", 5)
    gates = {g.name: g for g in config.gates}
    assert list(gates) == ["build", "lint", "test", "coverage"]
    assert gates["test"].command is not None and "-m pytest" in gates["test"].command
    assert gates["coverage"].thresholds["lines"] == 85.0  # standard's, as the file says
    assert any(
        n.startswith("agentgate.yml names no gates: the project is gated by what zero-config")
        for n in config.notices
    ), config.notices
    assert any(n.startswith("lint: the project declares no linter") for n in config.notices)
    # The same commands as zero-config's, without the file.
    (repo / "agentgate.yml").unlink()
    assert commands(repo) == {name: gate.command for name, gate in gates.items()}
    # `gates` named, even empty, replaces them: nothing runs, and the file says so.
    (repo / "agentgate.yml").write_text("profile: standard\ngates: {}\n")
    config = resolve_config(repo)
    assert [g.name for g in config.gates] == []
    assert any("its `gates` replace the detected ones" in n for n in config.notices)


def test_a_change_cannot_narrow_the_detected_gates_of_a_base_config_naming_none(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    touch(root, "pyproject.toml", "src/demo/__init__.py", "tests/test_core.py")
    (root / "agentgate.yml").write_text("profile: strict\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "agentgate.yml").write_text("profile: strict\ngates:\n  build: {command: 'true'}\n")
    config = resolve_config(root)
    assert [g.name for g in config.gates] == ["integrity", "build", "lint", "test", "coverage"]
    assert {g.name: g.command for g in config.gates}["build"] != "true"
    removed = {c.key for c in config.loosened}
    assert {"gates.lint", "gates.test", "gates.coverage"} <= removed, config.loosened
    assert any("agentgate.yml at main" in n and "names no gates" in n for n in config.notices)


@pytest.mark.parametrize("config", ["profile: strict\n", None], ids=["no-gates-key", "no-file"])
def test_a_change_cannot_hide_the_project_the_base_detects(
    tmp_path: Path, config: str | None
) -> None:
    # Red team 56: pyproject.toml taken away and each code folder marked as an environment
    # (conda-meta/, pyvenv.cfg) left nothing detected now, and nothing was gated.
    root = tmp_path / "repo"
    root.mkdir()
    touch(root, "pyproject.toml", "calc/__init__.py", "tests/test_calc.py")
    if config is not None:
        (root / "agentgate.yml").write_text(config)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "rm", "-q", "pyproject.toml")
    touch(root, "calc/conda-meta/history", "tests/pyvenv.cfg")
    assert is_python_project(root) is None  # the working tree alone shows no project
    gates = {g.name: g for g in resolve_config(root).gates}
    assert list(gates) == ["integrity", "build", "lint", "test", "coverage"]
    # The base's folders are compiled and measured, whatever the change marked them as.
    assert "calc tests" in (gates["build"].command or "")
    assert "--source=calc" in (gates["test"].command or "")


def test_explain_zero_config_says_what_it_detected(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    touch(repo, "pyproject.toml", "src/demo/__init__.py")
    monkeypatch.chdir(repo)
    assert main(["explain", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"] == "zero-config defaults"
    assert [g["name"] for g in doc["gates"]] == ["build", "lint", "test", "coverage"]
    assert doc["notices"][0].startswith("no configuration: detected a Python project")
    test = next(g for g in doc["gates"] if g["name"] == "test")
    assert "--junitxml=.agentgate/junit.xml" in test["command"]


def test_verify_zero_config_without_running_names_the_detection(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--no-run` runs nothing; the missing reports fail, and the notice says what was gated."""
    touch(repo, "pyproject.toml", "src/demo/__init__.py")
    monkeypatch.chdir(repo)
    assert main(["verify", "--no-run", "--format", "json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "fail"
    assert any("detected a Python project (pyproject.toml)" in n for n in verdict["notices"])
    assert [g["name"] for g in verdict["gates"]] == ["build", "lint", "test", "coverage"]


def test_under_strict_a_gate_with_no_evidence_is_not_a_pass(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Zero-config `verify --no-run` once printed PASS with build and lint skipped for lack of
    # evidence: under strict (zero-config's profile) they are not verified, so they fail.
    touch(repo, "pyproject.toml", "demo/__init__.py")
    monkeypatch.chdir(repo)
    assert main(["verify", "--no-run", "--format", "json"]) == 1
    gates = {g["name"]: g for g in json.loads(capsys.readouterr().out)["gates"]}
    for name in ("build", "lint"):
        assert gates[name]["status"] == "fail"
        assert gates[name]["summary"].startswith("not verified: not run (--no-run)")
        assert (
            "under the strict profile a gate with no evidence is not a pass"
            in (gates[name]["problems"][0])
        )
    # A configuration that names a lint command with no report: strict fails it, standard
    # reports it skipped; a build gate, which has no report to read, is the user's own split.
    (repo / "agentgate.yml").write_text(
        "gates:\n  build: {command: 'true'}\n  lint: {command: 'true', format: ruff}\n"
    )
    for profile, lint_status in (("strict", "fail"), ("standard", "skipped")):
        main(["verify", "--no-run", "--format", "json", "--profile", profile])
        gates = {g["name"]: g for g in json.loads(capsys.readouterr().out)["gates"]}
        assert (gates["build"]["status"], gates["lint"]["status"]) == ("skipped", lint_status)


def test_folders_the_projects_pytest_settings_keep_pytest_out_of_are_not_compiled(
    repo: Path,
) -> None:
    # parso keeps files that do not compile on purpose, for its parser's tests, in a folder its
    # pytest.ini keeps pytest out of: "Ignore broken files in blackbox test directories".
    import subprocess

    touch(repo, "parso/__init__.py")
    (repo / "pytest.ini").write_text(
        "[pytest]\nnorecursedirs = .* docs normalizer_issue_files build\n"
    )
    (repo / "test" / "normalizer_issue_files").mkdir(parents=True)
    (repo / "test" / "normalizer_issue_files" / "E10.py").write_text("def f(:\n")
    (repo / "test" / "test_parser.py").write_text("def test_ok():\n    pass\n")
    build = python_defaults(repo)["gates"]["build"]["command"]
    assert build == "python -m compileall -q -x '(^|/)(docs|normalizer_issue_files)/' parso test"
    command = [sys.executable, *shlex.split(build)[1:]]
    assert subprocess.run(command, cwd=repo, capture_output=True, check=False).returncode == 0
    # A file that does not compile anywhere else still fails the build.
    (repo / "test" / "test_broken.py").write_text("def f(:\n")
    assert subprocess.run(command, cwd=repo, capture_output=True, check=False).returncode == 1
    (repo / "test" / "test_broken.py").unlink()
    # The project declares no linter: ruff's error rules leave the same folders out; a path
    # (pytest matches it against the end of a folder's path) is honoured too.
    (repo / "pytest.ini").write_text("[pytest]\nnorecursedirs = test/normalizer_issue_files\n")
    defaults = python_defaults(repo)["gates"]
    assert defaults["build"]["command"] == (
        "python -m compileall -q -x '(^|/)(test/normalizer_issue_files)/' parso test"
    )
    lint = defaults["lint"]["command"]
    assert lint.endswith(" --extend-exclude test/normalizer_issue_files .")
    ruff = [sys.executable, "-m", "ruff", *shlex.split(lint)[3:]]
    done = subprocess.run(ruff, cwd=repo, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and json.loads(done.stdout) == [], done.stdout


def test_files_the_projects_pre_commit_gives_no_hook_are_not_compiled(repo: Path) -> None:
    # Review 16: pycodestyle's `.pre-commit-config.yaml` opens with `exclude: ^testing/data/`,
    # its linter's test inputs, wrong on purpose (12 of them do not compile).
    import subprocess

    touch(repo, "pkg/__init__.py", "testing/support.py")
    (repo / "testing" / "data").mkdir()
    (repo / "testing" / "data" / "E90.py").write_text("def f(:\n")
    (repo / ".pre-commit-config.yaml").write_text("exclude: ^testing/data/\nrepos: []\n")
    build = python_defaults(repo)["gates"]["build"]["command"]
    assert build == "python -m compileall -q -x '(?:^testing/data/)' pkg testing"
    command = [sys.executable, *shlex.split(build)[1:]]
    assert subprocess.run(command, cwd=repo, capture_output=True, check=False).returncode == 0
    (repo / "testing" / "broken.py").write_text("def f(:\n")  # not excluded: still fails
    assert subprocess.run(command, cwd=repo, capture_output=True, check=False).returncode == 1
    (repo / "testing" / "broken.py").unlink()
    # pre-commit's verbose blocks (global flags first) beside pytest's norecursedirs.
    (repo / ".pre-commit-config.yaml").write_text(
        "exclude: |\n  (?x)^(\n    testing/data/.*|\n    docs/conf.py\n  )$\nrepos: []\n"
    )
    (repo / "pytest.ini").write_text("[pytest]\nnorecursedirs = legacy\n")
    (repo / "testing" / "legacy").mkdir()
    (repo / "testing" / "legacy" / "old.py").write_text("print 'x'\n")
    build = python_defaults(repo)["gates"]["build"]["command"]
    assert build.startswith("python -m compileall -q -x '(?x)(?:^(\n")
    command = [sys.executable, *shlex.split(build)[1:]]
    assert subprocess.run(command, cwd=repo, capture_output=True, check=False).returncode == 0
    # A verbose one that ends in a comment, with no newline after it (review 18).
    (repo / ".pre-commit-config.yaml").write_text(
        "exclude: |-\n  (?x)^(\n    testing/data/\n  )  # inputs, broken on purpose\nrepos: []\n"
    )
    command = [sys.executable, *shlex.split(python_defaults(repo)["gates"]["build"]["command"])[1:]]
    assert subprocess.run(command, cwd=repo, capture_output=True, check=False).returncode == 0
    # pre-commit's default, and an expression Python cannot compile, leave nothing out.
    for exclude in ("^$", "^(testing"):
        (repo / ".pre-commit-config.yaml").write_text(f"exclude: '{exclude}'\nrepos: []\n")
        build = python_defaults(repo)["gates"]["build"]["command"]
        assert build == "python -m compileall -q -x '(^|/)(legacy)/' pkg testing"


def test_src_layout_measures_its_packages_by_name_too(repo: Path) -> None:
    # By name, coverage.py measures a package wherever the tests import it from: the copy
    # `pip install .` puts in site-packages too (reports/coverage/copies.py).
    touch(
        repo,
        "pyproject.toml",
        "src/alpha/__init__.py",
        "src/tool.py",
        "src/namespace/mod.py",  # a namespace package (opentelemetry's, review 13)
        "src/my-scripts/__init__.py",  # no importable name
        "src/conftest.py",
        "src/test_src.py",
        "src/shadow/__init__.py",
        "shadow/data.txt",  # a folder at the root of that name: the name would mean it
        "tests/test_alpha.py",
    )
    command = commands(repo)["test"] or ""
    assert "--source=src,alpha,namespace,tool " in command


def test_zero_config_runs_the_projects_report_header_hook(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review 19: zero-config ran pytest with -q, which calls no `pytest_report_header`: the
    # header lines a change added to a conftest (humanize's versions) read as not covered,
    # where the project's own pytest and the pytest door run them.
    touch(repo, "pyproject.toml", "demo/__init__.py")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_demo.py").write_text("def test_one():\n    assert 1\n")
    (repo / "tests" / "conftest.py").write_text(
        "from pathlib import Path\n\n\ndef pytest_report_header(config):\n"
        "    Path(str(config.rootpath), 'header-ran').write_text('yes')\n"
        "    return 'demo 1.0'\n"
    )
    monkeypatch.chdir(repo)
    main(["verify", "--format", "json"])
    test = next(g for g in json.loads(capsys.readouterr().out)["gates"] if g["name"] == "test")
    assert test["actual"]["passed"] == 1
    assert (repo / "header-ran").read_text() == "yes"


@pytest.mark.parametrize(
    ("addopts", "in_process"),
    [("-n 2", True), ("--numprocesses=auto", True), ("-p no:xdist -q", False), ("-q", False)],
)
def test_zero_config_runs_an_xdist_suite_in_the_measured_process_only_where_it_uses_xdist(
    tmp_path: Path, addopts: str, in_process: bool
) -> None:
    # Reviews 24-26: `-n 2` in addopts hid the tests from `coverage run` (0%); `-n 0` where
    # the project turns xdist off (`-p no:xdist`) was refused by pytest.
    pytest.importorskip("xdist")
    from pytest_agentgate.project import _runs_xdist
    from pytest_agentgate.tree import OnDisk

    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "{addopts}"\n'
    )
    assert _runs_xdist(OnDisk(tmp_path)) is in_process
