"""A test replaced under its own name while its ``def`` reads as written
(``tampering.tests_replaced``, red team 9): ``globals()["test_zero"] = test_standard``, the
test's ``__code__`` swapped, a decorator that returns another test. The witness of a gated run
records each as ``agentgate_replaced``; decorators that wrap or keep the test, and tests a
factory makes under names no ``def`` has, are the tests' own."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate.commands import RUN_ID_ENV

pytest_plugins = ["pytester"]

REPLACED = """\
def test_standard():
    assert 1 + 1 == 2


def test_zero():
    assert 0 == 1


def test_coded():
    assert 0 == 1


@(lambda f: test_standard)
def test_decorated():
    assert 0 == 1


class TestInClass:
    def test_fine(self):
        assert True

    def test_broken(self):
        assert 0 == 1


globals()["test_zero"] = test_standard
test_coded.__code__ = test_standard.__code__
TestInClass.test_broken = TestInClass.test_fine
"""
HONEST = """\
import functools
import unittest
from unittest import mock

import pytest


def wraps_it(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


def keeps_it(func):
    def wrapper():  # no functools.wraps: the test is in its closure
        return func()

    return wrapper


@wraps_it
def test_wrapped():
    assert True


@keeps_it
def test_kept():
    assert True


@mock.patch("os.getcwd", return_value="/")
def test_patched(getcwd):
    assert getcwd() == "/"


class Handle:
    def __init__(self, inner_test):
        self.inner_test = inner_test


def given_like(test):
    # Hypothesis's @given: a wrapper made by exec, no closure, no __wrapped__; the test is
    # reached through `wrapper.hypothesis.inner_test`.
    space = {"_run": lambda f: f()}
    exec("def wrapped_test():\\n    return _run(wrapped_test.hypothesis.inner_test)\\n", space)
    wrapper = space["wrapped_test"]
    wrapper.__name__ = test.__name__
    wrapper.hypothesis = Handle(test)
    return wrapper


@given_like
def test_given():
    assert True


@pytest.mark.parametrize("n", [1, 2])
def test_cases(n):
    assert n


class TestCase(unittest.TestCase):
    def test_method(self):
        self.assertTrue(True)


def _make(n):
    def test():
        assert n >= 0

    return test


for _n in range(2):
    globals()[f"test_made_{_n}"] = _make(_n)
"""


def replaced_in_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv(RUN_ID_ENV, "t" * 24)
    pytester.makepyfile(test_replaced=REPLACED, test_honest=HONEST)
    # In a process of its own: the audit hook a gated run adds can never be removed.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(passed=15)  # each trick works on the run...
    root = ET.parse(pytester.path / "junit.xml").getroot()
    return [
        str(p.get("value")) for p in root.iter("property") if p.get("name") == "agentgate_replaced"
    ]


def test_a_test_replaced_under_its_name_is_found_and_honest_decorators_are_not(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ...and not on the witness, which names each replaced test and no honest one.
    assert replaced_in_run(pytester, monkeypatch) == [
        "test_replaced.py::TestInClass::test_broken (pytest runs TestInClass.test_fine, not "
        "the function test_replaced.py defines as test_broken: the test was replaced)",
        "test_replaced.py::test_coded (pytest runs test_coded, holding the code of "
        "test_standard, not the function test_replaced.py defines as test_coded: the test "
        "was replaced)",
        "test_replaced.py::test_decorated (pytest runs test_standard, not the function "
        "test_replaced.py defines as test_decorated: the test was replaced)",
        "test_replaced.py::test_zero (pytest runs test_standard, not the function "
        "test_replaced.py defines as test_zero: the test was replaced)",
    ]


# SQLAlchemy's `util.decorator`: a wrapper of the test's signature written as text and made
# with exec, in a namespace that holds the test (no closure, no __wrapped__).
DECORATOR = """\
def decorator(test):
    space = {"fn": test}
    exec("def %s():\\n    return fn()\\n" % test.__name__, space)
    return space[test.__name__]
"""
DECORATED = """\
from sqla_like import decorator


def _in_the_tests(test):
    space = {"fn": test}
    exec("def %s():\\n    return fn()\\n" % test.__name__, space)
    return space[test.__name__]


@decorator
def test_by_a_library():
    assert True


@_in_the_tests
def test_by_the_tests():
    assert True
"""


def test_a_wrapper_a_library_writes_with_exec_is_the_tests_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A third review: alembic's tests, decorated by SQLAlchemy's testing helpers, were each
    # "replaced". What a library (or the project) compiles from text is its own doing; a
    # wrapper the tests compile that reaches the test only through its namespace is not.
    library = pytester.path / "lib" / "site-packages"
    library.mkdir(parents=True)
    (library / "sqla_like.py").write_text(DECORATOR)
    monkeypatch.setenv("PYTHONPATH", str(library))
    monkeypatch.setenv(RUN_ID_ENV, "t" * 24)
    pytester.makepyfile(test_decorated=DECORATED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2)
    root = ET.parse(pytester.path / "junit.xml").getroot()
    found = [
        str(p.get("value")) for p in root.iter("property") if p.get("name") == "agentgate_replaced"
    ]
    assert [entry.split(" (")[0] for entry in found] == ["test_decorated.py::test_by_the_tests"]


def test_the_witness_looks_out_of_the_tests_tracer_and_puts_it_back(tmp_path: Path) -> None:
    # coverage.py's tracer is called for every line of every frame; the witness's looks run
    # agentgate's code, not the project's, so they run untraced and the tracer is put back.
    import sys

    from pytest_agentgate.pytest_plugin import witness

    seen: list[str] = []

    def tracer(frame: Any, event: str, arg: object) -> None:
        seen.append(frame.f_code.co_name)

    def looked() -> int:
        return 1

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        with witness.untraced(str(tmp_path)):
            inside = sys.gettrace()
            looked()
        after = sys.gettrace()
        # agentgate gating itself: its own code is the project's, measured by its own gate.
        with witness.untraced(str(Path(witness.__file__).parents[2])):
            own = sys.gettrace()
    finally:
        sys.settrace(previous)
    assert (inside, after, own) == (None, tracer, tracer)
    assert "looked" not in seen
