"""flake8's, pycodestyle's and pylint's settings are the base's law, as ruff's are: a change may
tighten them, never make the linter the base runs report less (``tool-config-loosened``).

Every test builds a real git repository (the base on ``main``, the change in the working tree)
and runs the real ``agentgate verify --format json``; its lint gate runs the real linter.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import PY, CliRun

pytest.importorskip("flake8")

Verify = Callable[..., CliRun]
Files = dict[str, str]

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=GIT_ENV, capture_output=True, check=True)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def lint_config(command: str, fmt: str) -> str:
    return f"profile: strict\ngates:\n  lint:\n    command: {command}\n    format: {fmt}\n"


FLAKE8 = lint_config(f"{PY} -m flake8 .", "flake8-text")
PYCODESTYLE = lint_config(f"{PY} -m pycodestyle .", "flake8-text")
PYLINT = lint_config(f"{PY} -m pylint --output-format=json2 --recursive=y .", "pylint")
RUFF = lint_config(f"{PY} -m ruff check --no-cache --output-format json .", "ruff")

LONG = "x = '" + "y" * 100 + "'\n"  # 110 characters: E501 under a limit of 100
CODE = {
    ".gitignore": ".agentgate/\n",
    "pkg/__init__.py": "def add(a, b):\n    return a + b\n",
    # The base's defects: an unused import (F401) and a long line (E501).
    "tools/bad.py": "import os\n\n" + LONG,
}
SETUP_CFG = "[metadata]\nname = pkg\n\n[flake8]\nmax-line-length = 100\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Files], Path]:
    """A repository whose base commit holds ``files``, as the working directory."""

    def make(files: Files) -> Path:
        root = tmp_path / "repo"
        for name, text in files.items():
            write(root / name, text)
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
        monkeypatch.chdir(root)
        return root

    return make


@pytest.fixture
def verify(agentgate: Verify) -> Verify:
    def run(*args: str) -> CliRun:
        return agentgate("verify", "--format", "json", *args)

    return run


def tool_findings(run: CliRun) -> list[tuple[str | None, int | None, str]]:
    integrity = run.gate("integrity")
    return [
        (f["path"], f["line"], f["message"])
        for f in integrity["findings"]
        if f["code"] == "tool-config-loosened"
    ]


def lint_status(run: CliRun) -> str:
    status: str = run.gate("lint")["status"]
    return status


# -- flake8 --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file", "text", "needle", "message"),
    [
        (
            "setup.cfg",
            SETUP_CFG + "extend-ignore = E501,F401\n",
            "extend-ignore",
            "flake8: extend-ignore gained E501, F401, rules the base enforces",
        ),
        (
            "setup.cfg",
            SETUP_CFG.replace("max-line-length = 100", "max-line-length = 120")
            + "per-file-ignores =\n    tools/*.py: F401\n",
            None,
            None,
        ),
        (
            "setup.cfg",
            SETUP_CFG + "extend-exclude = tools\n",
            "extend-exclude",
            "flake8: extend-exclude gained tools: 1 files are no longer linted (tools/bad.py)",
        ),
        (
            "setup.cfg",
            SETUP_CFG + "select = E9,W\n",
            "select",
            "flake8: select narrowed: E, F no longer selected",
        ),
    ],
    ids=["extend-ignore", "max-line-length-and-per-file-ignores", "extend-exclude", "select"],
)
def test_flake8_told_to_report_less(
    project: Callable[[Files], Path],
    verify: Verify,
    file: str,
    text: str,
    needle: str | None,
    message: str | None,
) -> None:
    root = project({**CODE, "setup.cfg": SETUP_CFG, "agentgate.yml": FLAKE8})
    assert lint_status(verify()) == "fail"  # the base's flake8 finds the defects
    write(root / file, text)
    run = verify()
    assert lint_status(run) == "pass", run.gate("lint")  # flake8 honours the new settings ...
    assert run.code == 1  # ... the integrity gate does not
    if needle is None:  # two options, each its own finding
        assert tool_findings(run) == [
            (
                "setup.cfg",
                line_of(text, "tools/*.py"),
                "flake8: per-file-ignores gained 'tools/*.py': F401, rules the base enforces",
            ),
            (
                "setup.cfg",
                line_of(text, "max-line-length"),
                "flake8: max-line-length 100 -> 120: the base's E501 reports less",
            ),
        ]
    else:
        assert tool_findings(run) == [(file, line_of(text, needle), message)]


def test_flake8_settings_moved_to_a_file_read_first_or_after(
    project: Callable[[Files], Path], verify: Verify
) -> None:
    # .flake8 is read only when neither setup.cfg nor tox.ini has a [flake8] section: moving
    # the settings there with an ignore added is the ignore, found in the file flake8 reads.
    root = project({**CODE, "setup.cfg": SETUP_CFG, "agentgate.yml": FLAKE8})
    write(root / "setup.cfg", "[metadata]\nname = pkg\n")
    flake8 = "[flake8]\nmax-line-length = 100\nextend-ignore =\n    F401\n    E501\n"
    write(root / ".flake8", flake8)
    run = verify()
    assert lint_status(run) == "pass"
    assert tool_findings(run) == [
        (
            ".flake8",
            line_of(flake8, "extend-ignore"),
            "flake8: extend-ignore gained E501, F401, rules the base enforces",
        )
    ]


@pytest.mark.parametrize(
    "change",
    [
        # the same settings in the file flake8 reads after setup.cfg
        {"setup.cfg": "[metadata]\nname = pkg\n", ".flake8": "[flake8]\nmax_line_length=100\n"},
        # a comment, a rule more, a lower maximum, reordering
        {
            "setup.cfg": "[metadata]\nname = pkg\n\n[flake8]\n# PEP 8, a little wider\n"
            "max-line-length = 90\nextend-select = B9\nextend-ignore = E226,W503\n"
        },
        # flake8's default ignore written out
        {"setup.cfg": SETUP_CFG + "ignore = E121,E123,E126,E226,E24,E704,W503,W504\n"},
        # what flake8 prints beside its findings, how it runs
        {"setup.cfg": SETUP_CFG + "jobs = 2\ncount = false\n"},
    ],
    ids=["moved-to-.flake8", "tightened", "default-ignore", "output"],
)
def test_honest_flake8_settings(
    project: Callable[[Files], Path], verify: Verify, change: Files
) -> None:
    root = project({**CODE, "setup.cfg": SETUP_CFG, "agentgate.yml": FLAKE8})
    for name, text in change.items():
        write(root / name, text)
    run = verify()
    assert tool_findings(run) == []
    assert run.gate("integrity")["status"] == "pass", run.gate("integrity")


def test_the_settings_file_the_command_names(
    project: Callable[[Files], Path], verify: Verify
) -> None:
    # flake8 --config reads that file only: its settings are the ones compared.
    config = lint_config(f"{PY} -m flake8 --config ci/flake8.cfg .", "flake8-text")
    flake8 = "[flake8]\nmax-line-length = 100\n"
    root = project({**CODE, "ci/flake8.cfg": flake8, "agentgate.yml": config})
    text = flake8 + "per-file-ignores = tools/bad.py:F401,E501\n"
    write(root / "ci" / "flake8.cfg", text)
    write(root / "setup.cfg", "[flake8]\nextend-ignore = F401\n")  # not read
    run = verify()
    assert lint_status(run) == "pass"
    assert tool_findings(run) == [
        (
            "ci/flake8.cfg",
            line_of(text, "per-file-ignores"),
            "flake8: per-file-ignores gained 'tools/bad.py': E501, F401, rules the base enforces",
        )
    ]


def test_flake8_under_zero_config(project: Callable[[Files], Path], verify: Verify) -> None:
    # No agentgate configuration: zero-config lints with the flake8 the base configures.
    root = project({**CODE, "setup.cfg": SETUP_CFG})
    text = SETUP_CFG.replace("max-line-length = 100", "max-line-length = 200")
    write(root / "setup.cfg", text)
    run = verify("--no-run")
    assert "flake8" in run.gate("lint")["command"]
    assert tool_findings(run) == [
        (
            "setup.cfg",
            line_of(text, "max-line-length"),
            "flake8: max-line-length 100 -> 200: the base's E501 reports less",
        )
    ]


def test_a_linter_the_base_does_not_run(project: Callable[[Files], Path], verify: Verify) -> None:
    # The base lints with ruff: flake8's settings decide nothing it measures ...
    root = project({**CODE, "setup.cfg": SETUP_CFG, "agentgate.yml": RUFF})
    write(root / "setup.cfg", SETUP_CFG + "extend-ignore = E501,F401\n")
    assert tool_findings(verify("--no-run")) == []
    # ... and a flake8 gate the change adds lints with the change's settings: more is checked.
    write(
        root / "agentgate.yml",
        RUFF + f"  lint-flake8:\n    kind: lint\n    command: {PY} -m flake8 .\n"
        "    format: flake8-text\n",
    )
    run = verify()
    assert run.gate("lint-flake8")["status"] == "pass"
    assert tool_findings(run) == []


def test_a_linter_zero_config_adds_for_the_change(
    project: Callable[[Files], Path], verify: Verify
) -> None:
    # The base declares ruff ([tool.ruff]); the change declares flake8 in a pre-commit hook,
    # which zero-config runs beside ruff, with the change's settings.
    root = project({**CODE, "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff]\n"})
    write(
        root / ".pre-commit-config.yaml",
        "repos:\n  - repo: https://github.com/PyCQA/flake8\n    hooks:\n      - id: flake8\n",
    )
    write(root / ".flake8", "[flake8]\nmax-line-length = 120\nextend-ignore = E203\n")
    run = verify("--no-run")
    assert "flake8" in run.gate("lint-flake8")["command"]
    assert tool_findings(run) == []


# -- pycodestyle ---------------------------------------------------------------------------------


def test_pycodestyle_told_to_report_less(project: Callable[[Files], Path], verify: Verify) -> None:
    tox = "[tox]\nenvlist = py3\n\n[pycodestyle]\nmax-line-length = 100\n"
    root = project({**CODE, "tox.ini": tox, "agentgate.yml": PYCODESTYLE})
    assert lint_status(verify()) == "fail"  # the long line
    text = tox + "ignore = E501\n"
    write(root / "tox.ini", text)
    run = verify()
    assert lint_status(run) == "pass"
    assert tool_findings(run) == [
        (
            "tox.ini",
            line_of(text, "ignore"),
            "pycodestyle: ignore gained E501, rules the base enforces",
        )
    ]
    # The same settings moved into setup.cfg (read with tox.ini) are the same settings.
    write(root / "tox.ini", "[tox]\nenvlist = py3\n")
    write(root / "setup.cfg", "[pycodestyle]\nmax_line_length = 100\n")
    assert tool_findings(verify("--no-run")) == []


# -- pylint --------------------------------------------------------------------------------------

PYLINTRC = """\
[MESSAGES CONTROL]
disable=missing-module-docstring,
        missing-function-docstring

[DESIGN]
max-args=3
"""
PYLINT_PYPROJECT = """\
[project]
name = "pkg"

[tool.pylint."messages control"]
disable = ["missing-module-docstring", "missing-function-docstring"]

[tool.pylint.design]
max-args = 3
"""
# The base's defects: an unused import, a function of four arguments.
PYLINT_CODE = {**CODE, "tools/bad.py": "import os\n", "pkg/wide.py": (
    "def wide(a, b, c, d):\n    return a + b + c + d\n"
)}  # fmt: skip


@pytest.mark.parametrize(
    ("file", "text", "found"),
    [
        (
            ".pylintrc",
            PYLINTRC.replace(
                "missing-function-docstring", "missing-function-docstring,\n        unused-import"
            ).replace("max-args=3", "max-args=5"),
            [
                ("disable=", "pylint: disable gained unused-import: pylint reports less"),
                ("max-args", "pylint: max-args 3 -> 5: pylint reports less"),
            ],
        ),
        (
            ".pylintrc",
            "[MAIN]\nignore=CVS,tools\n\n" + PYLINTRC.replace("max-args=3", "max-args=4"),
            [
                ("ignore=", "pylint: ignore gained tools: pylint reports less"),
                ("max-args", "pylint: max-args 3 -> 4: pylint reports less"),
            ],
        ),
        (
            "pyproject.toml",
            PYLINT_PYPROJECT.replace(
                '"missing-function-docstring"]',
                '"missing-function-docstring", "W0611", "too-many-arguments"]',
            ),
            [
                (
                    "disable",
                    # by name: W0611 is unused-import, as pylint reads it
                    "pylint: disable gained too-many-arguments, unused-import: pylint reports less",
                ),
            ],
        ),
    ],
    ids=["pylintrc-disable-max-args", "pylintrc-ignore", "pyproject-disable"],
)
def test_pylint_told_to_report_less(
    project: Callable[[Files], Path],
    verify: Verify,
    file: str,
    text: str,
    found: list[tuple[str, str]],
) -> None:
    pytest.importorskip("pylint")
    settings = {".pylintrc": PYLINTRC} if file == ".pylintrc" else {"pyproject.toml": text}
    settings[file] = PYLINTRC if file == ".pylintrc" else PYLINT_PYPROJECT
    root = project({**PYLINT_CODE, **settings, "agentgate.yml": PYLINT})
    assert run_lint(verify()) == 2  # unused-import, too-many-arguments
    write(root / file, text)
    run = verify()
    assert run_lint(run) == 0
    assert run.code == 1
    assert tool_findings(run) == [(file, line_of(text, needle), m) for needle, m in found]


def run_lint(run: CliRun) -> int:
    """How many findings the lint gate counted."""
    actual = run.gate("lint")["actual"]
    return int(actual["errors"]) + int(actual["warnings"])


def test_a_pylintrc_that_takes_over(project: Callable[[Files], Path], verify: Verify) -> None:
    # pylint reads .pylintrc before pyproject.toml: a new one without the base's max-args.
    pytest.importorskip("pylint")
    root = project({**PYLINT_CODE, "pyproject.toml": PYLINT_PYPROJECT, "agentgate.yml": PYLINT})
    write(root / ".pylintrc", PYLINTRC.split("[DESIGN]")[0])
    run = verify("--no-run")
    assert tool_findings(run) == [
        (".pylintrc", None, "pylint: max-args 3 -> 5: pylint reports less")
    ]


@pytest.mark.parametrize(
    "change",
    [
        # the same settings in pyproject.toml, which pylint reads when there is no .pylintrc
        {".pylintrc": None, "pyproject.toml": PYLINT_PYPROJECT},
        # reordered, commented, a check enabled, a lower maximum
        {
            ".pylintrc": "# The project's pylint.\n[DESIGN]\nmax-args=2\n\n[MESSAGES CONTROL]\n"
            "enable=useless-suppression\ndisable=\n    missing-function-docstring,\n"
            "    missing-module-docstring,\n"
        },
        # how pylint runs and what it prints beside its findings
        {".pylintrc": PYLINTRC + "\n[MAIN]\njobs=2\npersistent=no\n\n[REPORTS]\nscore=no\n"},
        # the same messages by their ids, as pylint reads both
        {".pylintrc": PYLINTRC.replace("missing-module-docstring", "C0114")},
    ],
    ids=["moved-to-pyproject", "tightened", "output", "ids-for-names"],
)
def test_honest_pylint_settings(
    project: Callable[[Files], Path], verify: Verify, change: dict[str, str | None]
) -> None:
    pytest.importorskip("pylint")
    root = project({**PYLINT_CODE, ".pylintrc": PYLINTRC, "agentgate.yml": PYLINT})
    for name, text in change.items():
        if text is None:
            git(root, "rm", "-q", name)
        else:
            write(root / name, text)
    run = verify("--no-run")
    assert tool_findings(run) == []
    assert run.gate("integrity")["status"] == "pass", run.gate("integrity")
