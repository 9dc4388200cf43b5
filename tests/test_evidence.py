"""Evidence the gate made itself: a report counts only when this run's pytest wrote it, and every
test pytest collected either ran or was deselected in the open."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import REWRITER, CliRun, egg_info

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]

TESTS = """\
def test_one():
    assert 1 + 1 == 2


def test_two():
    assert 2 * 2 == 4


def test_broken():
    assert 2 - 2 == 1
"""

HAND_MADE = (
    '<testsuites><testsuite name="pytest" tests="3">'
    '<testcase classname="test_calc" name="test_one"/>'
    '<testcase classname="test_calc" name="test_two"/>'
    '<testcase classname="test_calc" name="test_broken"/>'
    "</testsuite></testsuites>"
)


def config(command: str) -> str:
    return f"gates:\n  test:\n    command: {command}\n    report: junit.xml\n"


@pytest.fixture
def suite(project: Path) -> Path:
    (project / "test_calc.py").write_text(TESTS)
    return project


def properties(report: Path) -> dict[str, str]:
    root = ET.parse(report).getroot()
    return {p.get("name", ""): p.get("value", "") for p in root.iter("property")}


def test_this_runs_pytest_signs_the_report_and_an_honest_run_is_judged(
    suite: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config(config('"{py} -m pytest -q -p no:cacheprovider --junitxml=junit.xml"'))
    run = agentgate("verify", "--format", "json")
    gate = run.gate("test")
    assert (gate["actual"]["passed"], gate["actual"]["failed"]) == (2, 1)
    assert not any("not written by this run" in p for p in gate["problems"])
    signed = properties(suite / "junit.xml")
    assert len(signed["agentgate_run"]) == 24
    assert (signed["agentgate_collected"], signed["agentgate_selected"]) == ("3", "3")
    assert signed["agentgate_deselected"] == "0"


def test_a_plugin_planted_in_the_project_folder_fails_the_test_gate(
    suite: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    # `python -m pytest` puts the project folder first on sys.path: an egg-info there with a
    # pytest11 entry point loads a plugin that rewrites failures as passes, and nothing of it
    # needs to be tracked (build/ and *.egg-info/ are in most projects' .gitignore).
    (suite / "build").mkdir()
    (suite / "build" / "zz_helper.py").write_text(REWRITER)
    egg_info(suite, "zz-helper", "[pytest11]\nzz = build.zz_helper\n")
    write_config(config('"{py} -m pytest -q -p no:cacheprovider --junitxml=junit.xml"'))
    run = agentgate("verify", "--format", "json")
    gate = run.gate("test")
    assert gate["status"] == "fail" and run.code == 1
    assert gate["actual"]["failed"] == 0  # the plugin did rewrite the failure
    assert any(
        "pytest loaded plugins that no installed package provides" in p
        and "zz (zz_helper.egg-info)" in p
        for p in gate["problems"]
    ), gate["problems"]


def test_an_editable_installs_egg_info_in_the_project_is_no_planted_plugin(
    suite: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    # setuptools leaves <name>.egg-info in the project of an editable install: the same
    # distribution, with the same plugins, is installed.
    from importlib import metadata

    installed = metadata.distribution("pytest-agentgate").read_text("entry_points.txt") or ""
    assert "pytest11" in installed
    egg_info(suite, "pytest-agentgate", installed)
    write_config(config('"{py} -m pytest -q -p no:cacheprovider --junitxml=junit.xml"'))
    gate = agentgate("verify", "--format", "json").gate("test")
    assert not any("no installed package provides" in p for p in gate["problems"])
    assert (gate["actual"]["passed"], gate["actual"]["failed"]) == (2, 1)


def test_a_report_copied_over_the_one_pytest_wrote_is_not_evidence(
    suite: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    (suite / "hand.xml").write_text(HAND_MADE)
    write_config(
        config(
            '"{py} -m pytest -q -p no:cacheprovider --junitxml=junit.xml; cp hand.xml junit.xml"'
        )
    )
    run = agentgate("verify", "--format", "json")
    gate = run.gate("test")
    assert run.code == 1 and gate["status"] == "fail"
    assert "junit.xml: not written by this run's pytest" in gate["problems"][-1]


def test_a_report_from_an_earlier_run_is_not_this_runs(
    suite: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    (suite / "test_calc.py").write_text(TESTS.replace("== 1", "== 0"))
    write_config(config('"{py} -m pytest -q -p no:cacheprovider --junitxml=junit.xml"'))
    assert agentgate("verify", "--format", "json").code == 0
    (suite / "earlier.xml").write_bytes((suite / "junit.xml").read_bytes())
    (suite / "test_calc.py").write_text(TESTS)  # broken again
    write_config(
        config(
            '"{py} -m pytest -q -p no:cacheprovider --junitxml=junit.xml; cp earlier.xml junit.xml"'
        )
    )
    gate = agentgate("verify", "--format", "json").gate("test")
    assert gate["status"] == "fail" and "not written by this run's pytest" in gate["problems"][-1]


def test_tests_a_hook_drops_without_deselecting_them_fail_the_gate(
    suite: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    (suite / "conftest.py").write_text(
        "def pytest_collection_modifyitems(items):\n"
        "    items[:] = [i for i in items if 'broken' not in i.name]\n"
    )
    write_config(config('"{py} -m pytest -q -p no:cacheprovider --junitxml=junit.xml"'))
    run = agentgate("verify", "--format", "json", "--profile", "relaxed")
    gate = run.gate("test")
    assert gate["actual"]["failed"] == 0 and gate["status"] == "fail"
    assert "1 collected tests dropped" in gate["summary"]
    assert "removed from the run without being deselected" in gate["problems"][0]


def test_deselection_in_the_open_is_a_partial_run_not_a_drop(
    suite: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    write_config(
        config('"{py} -m pytest -q -p no:cacheprovider -x --junitxml=junit.xml test_calc.py"')
    )
    (suite / "test_calc.py").write_text(
        "def test_broken():\n    assert 0\n\n\n" + TESTS.replace("def test_broken", "def test_b")
    )
    strict = agentgate("verify", "--format", "json", "--profile", "strict").gate("test")
    assert "dropped" not in strict["summary"]
    assert "3 selected tests never ran" in strict["summary"]  # of 4: -x stopped at the first
    assert strict["status"] == "fail" and "only part of the suite ran" in strict["problems"][0]


COLLECTION_ERROR = """\
import pytest

from calc import add

@pytest.mark.slowww
def test_add():
    assert add(1, 2) == 3
"""


def test_a_run_that_never_ran_a_test_names_the_cause_and_measures_no_coverage(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    # An unknown mark turned into an error (the project's own filterwarnings) stops collection:
    # the finding carries the cause, not "collection failure" alone, and the coverage of the
    # lines importing the code ran is not shown as a measurement.
    (project / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nfilterwarnings = ["error::pytest.PytestUnknownMarkWarning"]\n'
    )
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "test_calc.py").write_text(COLLECTION_ERROR)
    write_config(
        "gates:\n"
        "  test:\n"
        "    command: >-\n"
        "      {py} -m coverage run --data-file=.cov -m pytest -q -p no:cacheprovider\n"
        "      --junitxml=junit.xml\n"
        "    report: junit.xml\n"
        "  coverage:\n    report: .cov\n    format: coverage-data\n"
    )
    run = agentgate("verify", "--profile", "strict", "--format", "json")
    test = run.gate("test")
    (finding,) = test["findings"]
    assert finding["message"].startswith(
        "collection failure: pytest.PytestUnknownMarkWarning: Unknown pytest.mark.slowww"
    )
    coverage = run.gate("coverage")
    assert coverage["status"] == "fail"
    assert coverage["summary"].startswith("not measured: no test ran (test: ")
    assert all(value is None for value in coverage["actual"].values())


def test_an_exit_code_from_the_projects_coverage_threshold_is_reported_as_that(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    # pytest-cov's fail_under exits 1 with every test passing: not a crash of the test gate.
    (project / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (project / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    write_config(
        config(
            '"{py} -m pytest -q -p no:cacheprovider --junitxml=junit.xml '
            '--cov=calc --cov-fail-under=100"'
        )
    )
    test = agentgate("verify", "--format", "json", "--no-cache").gate("test")
    assert test["status"] == "fail" and test["actual"]["passed"] == 1
    assert test["problems"] == [
        f"`{test['command']}` exited with code 1 because the project's own coverage threshold "
        "was not reached: 75.00% of the required 100% (its fail_under). Every test passed; "
        "cover more of the code (never lower the threshold)"
    ]
