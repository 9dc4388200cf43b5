"""Zero-config lints a project by its own rules: the linter it declares, at the version it pins.

Detection reads files only; the pinned-tool runner (``python -m pytest_agentgate.tools``) is run
for real, installing from a local wheel folder (pip's own ``PIP_FIND_LINKS``), never the network.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.metadata
import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import pytest_agentgate
from pytest_agentgate.config.resolve import resolve_config
from pytest_agentgate.linters import declared_linter

PRE_COMMIT = """\
repos:
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v5.0.0
    hooks:
      - id: trailing-whitespace
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.15.6
    hooks:
      - id: ruff
        args: [--fix]
      - id: ruff-format
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (root / "demo").mkdir()
    (root / "demo" / "__init__.py").write_text("")
    return root


def lint_command(root: Path) -> tuple[str, str | None, list[str]]:
    config = resolve_config(root)
    lint = config.gate("lint")
    assert lint is not None and lint.command is not None
    return lint.command, lint.format, config.notices


def test_a_project_that_pins_ruff_in_pre_commit_is_linted_by_that_ruff(project: Path) -> None:
    (project / ".pre-commit-config.yaml").write_text(PRE_COMMIT)
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n[tool.ruff]\nline-length = 88\n"
    )
    command, fmt, notices = lint_command(project)
    assert command.endswith(
        "-m pytest_agentgate.tools ruff==0.15.6 check --no-fix --no-fix-only --output-format json ."
    )
    assert fmt == "ruff"
    assert (
        "lint: ruff 0.15.6, pinned in .pre-commit-config.yaml, configured by pyproject.toml "
        "[tool.ruff]"
    ) in notices


def test_a_project_configured_for_flake8_is_linted_by_flake8(project: Path) -> None:
    (project / "setup.cfg").write_text("[flake8]\nmax-line-length = 100\n")
    command, fmt, notices = lint_command(project)
    assert command.endswith("-m pytest_agentgate.tools flake8 .") and fmt == "flake8-text"
    assert any(
        n.startswith("lint: flake8 ") and "configured by setup.cfg [flake8]" in n for n in notices
    )


def test_a_linter_that_is_not_installed_says_what_to_do(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate import linters

    monkeypatch.setattr(linters, "_installed_version", lambda tool: None)
    (project / "setup.cfg").write_text("[flake8]\nmax-line-length = 100\n")
    _, _, notices = lint_command(project)
    # Review 27: the note read "flake8 not installed: ...; install ..., configured by ...".
    assert (
        "lint: flake8 (not installed, and the project pins no version), configured by "
        "setup.cfg [flake8]: install flake8 in the environment the gate runs in"
    ) in notices


def test_a_linter_the_runner_cannot_run_is_said_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Review 27: "exited with code 2 but its report shows nothing wrong: the report is not
    # telling the whole story", and only then that the linter was not installed.
    from pytest_agentgate.cli.main import main

    (tmp_path / "agentgate.yml").write_text(
        "gates:\n  lint:\n    command: python -m pytest_agentgate.tools nosuchlint .\n"
        "    format: flake8-text\n"
    )
    monkeypatch.chdir(tmp_path)
    main(["verify", "--format", "json", "--no-cache"])
    verdict = json.loads(capsys.readouterr().out)
    (gate,) = [g for g in verdict["gates"] if g["name"] == "lint"]
    assert gate["status"] == "fail"
    assert gate["problems"][0].startswith(
        "`python -m pytest_agentgate.tools nosuchlint .` could not run the linter: unknown "
        "tool 'nosuchlint': agentgate runs "
    )


def test_a_project_configured_for_pycodestyle_is_linted_by_pycodestyle(project: Path) -> None:
    (project / "tox.ini").write_text("[tox]\nenvlist = py3\n\n[pycodestyle]\nignore = E501\n")
    command, fmt, _ = lint_command(project)
    assert command.endswith("-m pytest_agentgate.tools pycodestyle .") and fmt == "flake8-text"


def test_pre_commit_flake8_pin_wins_over_a_ruff_config(project: Path) -> None:
    (project / "ruff.toml").write_text("line-length = 100\n")
    (project / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: https://github.com/PyCQA/flake8\n  rev: 7.1.1\n  hooks:\n  - id: flake8\n"
    )
    linter = declared_linter(project)
    assert (linter.tool, linter.version, linter.pinned_in) == (
        "flake8",
        "7.1.1",
        ".pre-commit-config.yaml",
    )


def test_a_pinned_flake8_gets_its_hooks_plugins_and_arguments(project: Path) -> None:
    # Review 15: tqdm's flake8 hook installs flake8-pyproject, which makes flake8 read
    # `[tool.flake8] max_line_length = 99`; without it, 205 false E501 findings.
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.flake8]\nmax_line_length = 99\n"
    )
    (project / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: https://github.com/PyCQA/flake8\n  rev: 7.3.0\n  hooks:\n"
        "  - id: flake8\n    args: [--extend-ignore=E203]\n"
        "    additional_dependencies:\n      - flake8-pyproject\n"
        "      - flake8-bugbear==24.2.6\n      - git+https://example.org/x.git\n      - 3\n"
    )
    command, fmt, notices = lint_command(project)
    assert command.endswith(
        "-m pytest_agentgate.tools flake8==7.3.0 --with flake8-pyproject "
        "--with flake8-bugbear==24.2.6 --extend-ignore=E203 ."
    )
    assert fmt == "flake8-text"
    assert (
        "lint: flake8 7.3.0, pinned in .pre-commit-config.yaml, with flake8-pyproject, "
        "flake8-bugbear==24.2.6, configured by pyproject.toml [tool.flake8]"
    ) in notices


def test_what_pre_commit_gives_no_hook_is_left_out_of_the_lint(project: Path) -> None:
    # Review 16: pycodestyle's `exclude: ^testing/data/` (its test inputs, wrong on purpose:
    # 601 findings); a hook's own `exclude:` holds too.
    (project / ".pre-commit-config.yaml").write_text(
        "exclude: ^testing/data/\nrepos:\n- repo: https://github.com/PyCQA/flake8\n"
        "  rev: 7.3.0\n  hooks:\n  - id: flake8\n    exclude: ^docs/\n"
    )
    command, _, notices = lint_command(project)
    assert command.endswith(
        "-m pytest_agentgate.tools flake8==7.3.0 --exclude-regex '^testing/data/' "
        "--exclude-regex '^docs/' ."
    )
    assert (
        "lint: flake8 7.3.0, pinned in .pre-commit-config.yaml, configured by its defaults; the "
        "files its pre-commit hook is not given are left out ('^testing/data/' and '^docs/')"
    ) in notices
    # ruff too, through the runner that lists them; pre-commit's default `^$` and an
    # expression Python cannot compile (pre-commit stops on it) leave nothing out.
    (project / ".pre-commit-config.yaml").write_text(
        "exclude: ^$\nrepos:\n- repo: https://github.com/astral-sh/ruff-pre-commit\n"
        "  rev: v0.15.6\n  hooks:\n  - id: ruff\n    exclude: '^(tests'\n"
    )
    assert declared_linter(project).excludes == ()
    (project / ".pre-commit-config.yaml").write_text(
        "exclude: ^vendor/\nrepos:\n- repo: https://github.com/astral-sh/ruff-pre-commit\n"
        "  rev: v0.15.6\n  hooks:\n  - id: ruff\n"
    )
    command, _, _ = lint_command(project)
    assert "-m pytest_agentgate.tools ruff==0.15.6 --exclude-regex '^vendor/' check " in command
    # pycodestyle's hook runs as configured: its runner lists no files to leave out.
    (project / ".pre-commit-config.yaml").write_text(
        "exclude: ^vendor/\nrepos:\n- repo: https://github.com/PyCQA/pycodestyle\n"
        "  rev: 2.14.0\n  hooks:\n  - id: pycodestyle\n"
    )
    assert declared_linter(project).excludes == ()


def test_a_project_with_ruff_config_and_no_pin_uses_the_installed_ruff(project: Path) -> None:
    (project / ".ruff.toml").write_text("line-length = 100\n\n[lint]\nselect = ['E', 'F']\n")
    command, _, notices = lint_command(project)
    assert command.endswith("-m ruff check --no-fix --no-fix-only --output-format json .")
    ruff = importlib.metadata.version("ruff")
    assert (
        f"lint: ruff {ruff}, as installed (the project pins no version), configured by .ruff.toml"
        in notices
    )


@pytest.mark.parametrize("setting", ["fix = true", "fix-only = true"])
def test_the_lint_gate_never_edits_the_project_even_when_its_ruff_settings_say_fix(
    project: Path, setting: str
) -> None:
    (project / "pyproject.toml").write_text(f"[project]\nname = 'demo'\n[tool.ruff]\n{setting}\n")
    source = "import os\n\n\ndef add(a, b):\n    return a + b\n"
    (project / "calc.py").write_text(source)
    command, _, _ = lint_command(project)
    run = subprocess.run(command, shell=True, cwd=project, capture_output=True, text=True)
    assert (project / "calc.py").read_text() == source  # ruff judged the file, did not fix it
    assert '"code": "F401"' in run.stdout and run.returncode == 1


def test_a_project_that_declares_no_linter_gets_ruffs_error_rules_only(project: Path) -> None:
    command, _, notices = lint_command(project)
    assert "--isolated --select E9,F63,F7,F82" in command
    assert any(n.startswith("lint: the project declares no linter") for n in notices)


@pytest.mark.parametrize(
    "config",
    [
        "[tool.ruff.lint]\nignore = ['UP031', 'DTZ005']\n",
        "[tool.ruff.lint.per-file-ignores]\n'tests/*' = ['B018']\n",
        "[tool.ruff.lint]\nextend-ignore = ['RUF']\n",
    ],
)
def test_a_ruff_configuration_written_for_the_new_defaults_keeps_them(
    project: Path, config: str
) -> None:
    # Review 23: cachetools ignores UP031 and DTZ005, rules only ruff's defaults since 0.16
    # select; its own `ruff check` (0.17) is clean, and the former defaults found 8 E731.
    (project / "pyproject.toml").write_text(f"[project]\nname = 'demo'\n\n{config}")
    (project / "demo" / "__init__.py").write_text("square = lambda x: x * x\n")
    command, _, notices = lint_command(project)
    assert " -m ruff check --no-fix " in command
    assert not any("before 0.16" in n for n in notices)
    ruff = [sys.executable, "-m", "ruff", *shlex.split(command)[3:]]
    done = subprocess.run(ruff, cwd=project, capture_output=True, text=True, check=False)
    assert json.loads(done.stdout) == [], done.stdout  # E731 is not a default any more
    # An ignore of a rule neither set of defaults selects (E501, a habit of flake8's days),
    # or one the configuration adds itself, says nothing of the defaults it meant.
    for older in (
        "[tool.ruff.lint]\nignore = ['E501', 'W503']\n",
        "[tool.ruff.lint]\nextend-select = ['UP']\nignore = ['UP031']\n",
    ):
        (project / "pyproject.toml").write_text(f"[project]\nname = 'demo'\n\n{older}")
        assert " -m ruff check --select E4,E7,E9,F" in lint_command(project)[0]


def test_a_broken_pre_commit_file_is_no_pin(project: Path) -> None:
    (project / ".pre-commit-config.yaml").write_text("repos: [\n")
    assert declared_linter(project).tool == "ruff"
    assert declared_linter(project).config is None


def test_a_ruff_configuration_that_selects_no_rules_gets_the_defaults_it_was_written_for(
    project: Path,
) -> None:
    # Review 17: more_itertools' `[tool.ruff.lint] ignore = ["E731", "E741"]`, with no
    # `select` and no pinned ruff, read 84 findings under ruff 0.17 (whose defaults are 413
    # rules since 0.16) and none under the ruff of its day.
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.ruff]\nline-length = 79\nextend-ignore = ['E741']\n"
        "\n[tool.ruff.lint]\nignore = ['E731']\nextend-select = ['I']\n"
    )
    command, _, notices = lint_command(project)
    assert " -m ruff check --select E4,E7,E9,F,I --ignore E741,E731 --no-fix " in command
    assert any("so ruff's defaults before 0.16 (E4, E7, E9, F)" in n for n in notices)
    (project / "demo" / "__init__.py").write_text(
        "import os\n\nsquare = lambda x: x * x  # E731: ignored\n\n\n"
        "def items(found=[]):  # B006: a default since ruff 0.16, not this project's\n"
        "    return found\n"
    )
    ruff = [sys.executable, "-m", "ruff", *shlex.split(command)[3:]]
    done = subprocess.run(ruff, cwd=project, capture_output=True, text=True, check=False)
    assert [f["code"] for f in json.loads(done.stdout)] == ["F401"], done.stdout
    # A configuration that selects its rules, extends another file, or pins its ruff: as is.
    for config in ("[tool.ruff.lint]\nselect = ['F']\n", "[tool.ruff]\nextend = 'base.toml'\n"):
        (project / "pyproject.toml").write_text(f"[project]\nname = 'demo'\n\n{config}")
        assert " -m ruff check --no-fix " in lint_command(project)[0]
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[dependency-groups]\nlint = ['ruff==0.17.6']\n\n"
        "[tool.ruff.lint]\nignore = ['E731']\n"
    )
    assert "ruff==0.17.6 check --no-fix " in lint_command(project)[0]
    # Review 18, zipp: `ruff.toml` extends a pyproject.toml that has no [tool.ruff]; a chain
    # is followed, the nearer file's choices last.
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (project / "ruff.toml").write_text(
        "extend = 'pyproject.toml'\n\n[lint]\nextend-select = ['C901']\nignore = ['E731']\n"
    )
    assert (
        " -m ruff check --select E4,E7,E9,F,C901 --ignore E731 --no-fix "
        in (lint_command(project)[0])
    )
    (project / "ruff.toml").write_text("extend = 'lint/base.toml'\nextend-select = ['I']\n")
    (project / "lint").mkdir()
    (project / "lint" / "base.toml").write_text("[lint]\nextend-select = ['B']\n")
    assert " -m ruff check --select E4,E7,E9,F,B,I --no-fix " in lint_command(project)[0]
    (project / "lint" / "base.toml").write_text("[lint]\nselect = ['B']\n")
    assert " -m ruff check --no-fix " in lint_command(project)[0]


def test_a_pin_in_the_dev_dependencies_sets_the_configured_tools_version(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[project.optional-dependencies]\n"
        "test = ['pytest']\ndev = ['ruff==0.6.9', 'mypy']\n\n[tool.ruff]\nline-length = 88\n"
    )
    command, fmt, notices = lint_command(project)
    assert command.endswith(
        "-m pytest_agentgate.tools ruff==0.6.9 check --no-fix --no-fix-only --output-format json ."
    )
    assert fmt == "ruff"
    assert (
        "lint: ruff 0.6.9, pinned in pyproject.toml [project.optional-dependencies], "
        "configured by pyproject.toml [tool.ruff]"
    ) in notices


def test_a_linter_in_a_dependency_group_is_run_with_its_defaults(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[dependency-groups]\nlint = ['flake8[bugbear] >=7']\n"
    )
    command, fmt, notices = lint_command(project)
    assert command.endswith("-m pytest_agentgate.tools flake8 .") and fmt == "flake8-text"
    assert any(
        n.startswith("lint: flake8 ")
        and "configured by its defaults (declared in pyproject.toml [dependency-groups])" in n
        for n in notices
    ), notices


@pytest.mark.parametrize("name", ["dev.requirements.txt", "requirements/tests.txt"])
def test_a_linter_in_a_requirements_file_of_another_common_name_is_found(
    project: Path, name: str
) -> None:
    # Review 33: python-slugify lists pycodestyle in dev.requirements.txt; the gate said "the
    # project declares no linter" and ran ruff's error rules.
    (project / name).parent.mkdir(parents=True, exist_ok=True)
    (project / name).write_text("pytest\npycodestyle==2.11.1\n")
    command, fmt, notices = lint_command(project)
    assert "pycodestyle==2.11.1" in command and fmt == "flake8-text"
    assert any(f"pinned in {name}" in n for n in notices), notices


TOX = """\
[tox]
env_list = py, lint

[testenv]
commands = coverage run -m pytest {posargs:tests}

[testenv:lint]
deps = pycodestyle>=2.12
commands =
    pycodestyle --ignore=E128,E501 --output-file=out.txt --max-line-length 100 \\
        --exclude=legacy.py --quiet demo tests setup.py {posargs:tools} {toxinidir}/x ../other
"""


def test_a_linter_takes_the_options_and_paths_of_the_tox_command_that_runs_it(
    project: Path,
) -> None:
    # Review 33: python-slugify runs pycodestyle from tox.ini with options of its own; with
    # its defaults on `.`, the base had 256 errors the project never agreed to.
    (project / "dev.requirements.txt").write_text("pycodestyle>=2.12\n")
    (project / "tox.ini").write_text(TOX)
    for folder in ("tests", "tools"):
        (project / folder).mkdir()
    (project / "setup.py").write_text("")
    command, fmt, notices = lint_command(project)
    assert fmt == "flake8-text"
    assert command.endswith(
        "-m pytest_agentgate.tools pycodestyle --ignore=E128,E501 --max-line-length 100 "
        "--exclude=legacy.py demo tests setup.py tools"
    ), command  # no --output-file, no --quiet: the gate reads the run's own output
    assert any("with the options and paths of tox.ini [testenv:lint]" in n for n in notices)


def test_a_tox_command_naming_no_path_of_the_project_lints_it_whole(project: Path) -> None:
    (project / "setup.cfg").write_text("[flake8]\nmax-line-length = 100\n")
    (project / "tox.ini").write_text(
        "[testenv:flake8]\ncommands = python -m flake8 --select=E,W,F {posargs}\n"
    )
    command, _, _ = lint_command(project)
    assert command.endswith("-m pytest_agentgate.tools flake8 --select=E,W,F ."), command


def test_a_project_configured_for_pylint_is_linted_by_pylint_at_its_pin(project: Path) -> None:
    (project / ".pylintrc").write_text("[MESSAGES CONTROL]\ndisable = C0114\n")
    (project / "requirements-dev.txt").write_text("# tools\npytest\npylint==3.3.1\n")
    command, fmt, notices = lint_command(project)
    assert command.endswith(
        "-m pytest_agentgate.tools pylint==3.3.1 --output-format=json2 --recursive=y ."
    )
    assert fmt == "pylint"
    assert "lint: pylint 3.3.1, pinned in requirements-dev.txt, configured by .pylintrc" in notices


def test_pylint_configured_in_pyproject_or_setup_cfg_is_found(project: Path) -> None:
    (project / "setup.cfg").write_text("[pylint.format]\nmax-line-length = 100\n")
    assert declared_linter(project).config == "setup.cfg [pylint]"
    (project / "setup.cfg").unlink()
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\n\n[tool.pylint.'messages control']\ndisable = ['C0114']\n"
    )
    assert declared_linter(project).config == "pyproject.toml [tool.pylint]"


def test_a_range_or_a_broken_pyproject_is_no_pin(project: Path) -> None:
    (project / "ruff.toml").write_text("line-length = 100\n")
    (project / "requirements-dev.txt").write_text("ruff>=0.6,<0.7\n")
    assert declared_linter(project).version is None
    (project / "pyproject.toml").write_text("[project\nname = \n")
    (project / "requirements-dev.txt").unlink()
    assert declared_linter(project).tool == "ruff" and declared_linter(project).version is None


# -- the pinned-tool runner ---------------------------------------------------------------------


def _wheel(folder: Path, name: str, version: str, module: str) -> Path:
    """A minimal real wheel holding one module, as pip installs it."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": module,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


FAKE_PYCODESTYLE = """\
import sys
print("app.py:1:1: E999 from the pinned version")
sys.exit(1)
"""


def run_tool(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_agentgate.tools", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def offline(tmp_path: Path) -> dict[str, str]:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "pycodestyle", "9.9.1", FAKE_PYCODESTYLE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
        PIP_CONFIG_FILE=os.devnull,
        AGENTGATE_CACHE_HOME=str(tmp_path / "cache"),
    )
    return env


def test_a_pinned_tool_is_installed_apart_once_and_its_exit_code_kept(
    tmp_path: Path, offline: dict[str, str]
) -> None:
    first = run_tool("pycodestyle==9.9.1", ".", cwd=tmp_path, env=offline)
    assert first.returncode == 1, first.stderr
    assert first.stdout == "app.py:1:1: E999 from the pinned version\n"
    installed = tmp_path / "cache" / "tools"
    (folder,) = [p for p in installed.iterdir() if p.name.startswith("pycodestyle-9.9.1-py")]
    assert (folder / ".complete").is_file()
    # Installed apart: never in the environment that runs agentgate (which may have its own).
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        assert importlib.metadata.version("pycodestyle") != "9.9.1"
    # The second run reuses it: with the wheel gone, it still runs.
    for wheel in (tmp_path / "wheels").iterdir():
        wheel.unlink()
    again = run_tool("pycodestyle==9.9.1", ".", cwd=tmp_path, env=offline)
    assert again.returncode == 1 and "from the pinned version" in again.stdout


def test_a_pin_that_cannot_be_installed_says_so_and_fails(
    tmp_path: Path, offline: dict[str, str]
) -> None:
    done = run_tool("pycodestyle==1.0.0", ".", cwd=tmp_path, env=offline)
    assert done.returncode == 2 and done.stdout == ""
    assert "could not install pycodestyle 1.0.0, the version the project pins" in done.stderr
    assert not any((tmp_path / "cache" / "tools").glob("pycodestyle-1.0.0*"))


PLUGGED_PYCODESTYLE = """\
import plugin9


def _main():
    print(plugin9.SAYS)
    return 0


if __name__ == "__main__":
    _main()
"""


def test_plugins_are_installed_beside_the_pinned_tool_in_a_folder_of_their_own(
    tmp_path: Path, offline: dict[str, str]
) -> None:
    _wheel(tmp_path / "wheels", "pycodestyle", "9.9.2", PLUGGED_PYCODESTYLE)
    _wheel(tmp_path / "wheels", "plugin9", "1.0", "SAYS = 'the plugin is there'\n")
    done = run_tool("pycodestyle==9.9.2", "--with", "plugin9>=1", ".", cwd=tmp_path, env=offline)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the plugin is there\n"
    folders = [p.name for p in (tmp_path / "cache" / "tools").iterdir() if p.is_dir()]
    assert len(folders) == 1 and folders[0].startswith("pycodestyle-9.9.2-py")
    assert folders[0] != f"pycodestyle-9.9.2-py{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.mark.parametrize(
    "plugin", ["git+https://example.org/x.git", "./local", "--index-url=http://x", "-e ."]
)
def test_a_plugin_is_a_requirement_never_a_place_or_an_option(
    tmp_path: Path, offline: dict[str, str], plugin: str
) -> None:
    done = run_tool("pycodestyle==9.9.1", "--with", plugin, ".", cwd=tmp_path, env=offline)
    assert done.returncode == 2
    assert f"--with {plugin!r}: not a requirement" in done.stderr
    done = run_tool("pycodestyle", "--with", "plugin9", ".", cwd=tmp_path, env=offline)
    assert done.returncode == 2 and "beside a pinned tool" in done.stderr


def test_only_known_tools_are_run(tmp_path: Path, offline: dict[str, str]) -> None:
    done = run_tool("requests==2.0", cwd=tmp_path, env=offline)
    assert done.returncode == 2
    assert "unknown tool 'requests': agentgate runs ruff, flake8, pycodestyle" in done.stderr


def test_an_unpinned_tool_that_is_not_installed_says_how_to_get_it(
    tmp_path: Path, offline: dict[str, str]
) -> None:
    # An interpreter without its site-packages (where the tests' flake8 is), agentgate on
    # its path.
    done = subprocess.run(
        [sys.executable, "-S", "-m", "pytest_agentgate.tools", "flake8", "."],
        cwd=tmp_path,
        env={**offline, "PYTHONPATH": str(Path(pytest_agentgate.__file__).parent.parent)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "flake8 is not installed in the environment of" in done.stderr
