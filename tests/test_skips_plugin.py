"""Where the project's code skipped each test, as agentgate's pytest plugin records it for the
integrity gate (``pytest_plugin/skips.py``): the test case property ``agentgate_skipped_at``
in the JUnit report of a run agentgate gates."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_agentgate.commands import RUN_ID_ENV

pytest_plugins = ["pytester"]

CONFTEST = """\
import unittest

import pytest


def pytest_runtest_setup(item):
    if item.name == "test_raised":
        raise pytest.skip.Exception("flaky")
    if item.name == "test_xfail_called":
        pytest.xfail("known")
    if item.name == "test_skiptest":
        raise unittest.SkipTest("later")
"""
TESTS = """\
import pytest


def test_raised():
    assert 0


def test_xfail_called():
    assert 0


def test_skiptest():
    assert 0


@pytest.mark.skip(reason="marked")
def test_marked():
    assert 0


def test_skips_itself():
    pytest.skip("inside")


def test_passes():
    assert 1
"""


def skipped_at(pytester: pytest.Pytester) -> dict[str, str | None]:
    root = ET.parse(pytester.path / "junit.xml").getroot()
    found: dict[str, str | None] = {}
    for case in root.iter("testcase"):
        where = [
            p.get("value") for p in case.iter("property") if p.get("name") == "agentgate_skipped_at"
        ]
        found[case.get("name", "")] = where[0] if where else None
    return found


def test_a_gated_run_records_where_the_project_raised_each_skip(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RUN_ID_ENV, "r" * 24)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_things=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, skipped=4, xfailed=1)
    conftest, tests = pytester.path / "conftest.py", pytester.path / "test_things.py"
    assert skipped_at(pytester) == {
        "test_raised": f"{conftest}:8",
        "test_xfail_called": f"{conftest}:10",
        # pytest re-raises a SkipTest as its own skip: the line is the project's, all the same.
        "test_skiptest": f"{conftest}:12",
        "test_marked": None,  # pytest's skipping plugin raised it: the mark is in the source
        "test_skips_itself": f"{tests}:22",
        "test_passes": None,
    }


def test_an_ungated_run_records_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(RUN_ID_ENV, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_things=TESTS)
    pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml")
    assert set(skipped_at(pytester).values()) == {None}


def test_no_place_for_an_xfail_marks_failure_or_a_skip_a_hook_wrapper_passed_on(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An xfail mark's test fails in the code for real: no skip was raised there. A new-style
    # hook wrapper has every skip thrown through its `yield`: it raised none of them.
    monkeypatch.setenv(RUN_ID_ENV, "r" * 24)
    pytester.makeconftest(
        "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_setup(item):\n"
        "    return (yield)\n"
    )
    pytester.makepyfile(
        parse="def parse(text):\n    raise ValueError(text)\n",
        test_known=(
            "import pytest\n\nfrom parse import parse\n\n\n@pytest.mark.xfail(reason='INV-7')\n"
            "def test_parse():\n    parse('x')\n\n\n@pytest.mark.skip(reason='later')\n"
            "def test_skipped():\n    assert 0\n"
        ),
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(skipped=1, xfailed=1)
    assert skipped_at(pytester) == {"test_parse": None, "test_skipped": None}


def test_a_skip_the_standard_library_raised_for_the_project_is_the_projects(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 37: a SkipTest handed to a `concurrent.futures.Future` and raised by its
    # `result()`: the innermost frame is the standard library's, the line that called it the
    # project's.
    monkeypatch.setenv(RUN_ID_ENV, "r" * 24)
    pytester.makeconftest(
        "import unittest\nfrom concurrent.futures import Future\n\nimport pytest\n\n\n"
        "@pytest.fixture(autouse=True)\ndef later(request):\n"
        "    if request.node.name.endswith('_zero'):\n        f = Future()\n"
        "        f.set_exception(unittest.SkipTest('later'))\n        f.result()\n"
    )
    pytester.makepyfile(test_rates="def test_zero():\n    assert 0\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(skipped=1)
    assert skipped_at(pytester) == {"test_zero": f"{pytester.path / 'conftest.py'}:12"}
