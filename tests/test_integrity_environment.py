"""Environment variables that choose what pytest and coverage.py measure (environment.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentgate.integrity.environment import findings
from pytest_agentgate.integrity.rules import RULES


def said(environ: dict[str, str], root: Path = Path("/project")) -> list[str]:
    found = list(findings(environ, root))
    assert all(f.rule == "environment-loosened" and f.path is None for f in found)
    return [f.message for f in found]


@pytest.mark.parametrize(
    ("addopts", "options"),
    [
        ("-k 'not slow'", ["-k"]),
        ("-knot_slow", ["-k"]),
        ("-m 'not integration'", ["-m"]),
        ("--deselect=tests/test_a.py::test_b", ["--deselect"]),
        ("--ignore tests/slow", ["--ignore"]),
        ("-vx", ["-x"]),
        ("-vxkslow", ["-x", "-k"]),
        ("--lf", ["--lf"]),
        ("--reruns 3", ["--reruns"]),
        ("-p evil_plugin", ["-p"]),
        ("-pmyplugin", ["-p"]),
        ("-p no:agentgate", ["-p"]),
        ("-c /tmp/pytest.ini", ["-c"]),
        ("-o addopts=", ["-o"]),
        ("--rootdir=/tmp --noconftest", ["--rootdir", "--noconftest"]),
        ("-k a -k b", ["-k"]),
        ("-k 'unbalanced", ["-k"]),
    ],
)
def test_options_that_choose_what_runs(addopts: str, options: list[str]) -> None:
    found = said({"PYTEST_ADDOPTS": addopts})
    assert [m.split(" has ")[1].split(":")[0] for m in found] == options


@pytest.mark.parametrize(
    "addopts",
    [
        "",
        "--color=yes",
        "-v -rA",
        "-n 4 --dist loadfile",
        "--tb=short -q",
        "-W error",
        "-rxs",
        "-vrx",
        "-n4",
        "-Werror",
        "-p no:cacheprovider -p pytester -p xdist.plugin",
        "-o cache_dir=/tmp/c -o console_output_style=classic",
    ],
)
def test_options_that_only_change_the_report_are_not_findings(addopts: str) -> None:
    assert said({"PYTEST_ADDOPTS": addopts, "PYTEST_PLUGINS": " "}) == []


def test_plugins_from_the_environment() -> None:
    assert said({"PYTEST_PLUGINS": "a.b,c"}) == [
        "PYTEST_PLUGINS=a.b,c in the environment loads plugins the project does not: a plugin "
        "can rewrite any test's result"
    ]


@pytest.mark.parametrize("name", ["COVERAGE_RCFILE", "COVERAGE_PROCESS_START"])
def test_coverage_settings_must_be_the_projects_own(name: str, tmp_path: Path) -> None:
    (tmp_path / "ci").mkdir()
    for own in (".coveragerc", "pyproject.toml", str(tmp_path / "setup.cfg")):
        assert said({name: own}, tmp_path) == []
    for other in ("ci/.coveragerc", "/tmp/x.rc", "../.coveragerc", "x" * 100):
        (message,) = said({name: other}, tmp_path)
        assert message.startswith(f"{name}=") and "not from the project's" in message
    assert "x" * 79 + "…" in said({name: "x" * 100}, tmp_path)[0]


def test_the_rule_tampers() -> None:
    assert RULES["environment-loosened"].weight == "tampering"
