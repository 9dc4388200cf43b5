"""The test-code analyzers on strings: both sides of a change held in memory, no git.

Each case is a test file at the base and now; the line a finding must name is marked ``# <-``
(``// <-`` in JavaScript), in the new file, or in the base file for a removed test. The
git-repository tests of the same behaviour, through the real CLI and pytest, are in
``test_integrity_tests.py``.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate.integrity import tests_js, tests_python
from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.integrity.tests_js import JsFile, mask
from pytest_agentgate.integrity.tests_python import (
    Module,
    Settings,
    condition,
    parse,
    truthy,
    value,
)


class Texts:
    """Sources held in memory: the base's, and the working tree's."""

    def __init__(self, base: dict[str, str], now: dict[str, str]) -> None:
        self.base = base
        self.current = now
        self.prefetched: list[str] = []

    def prefetch(self, paths: list[str]) -> None:
        self.prefetched += paths

    def at_base(self, path: str) -> str | None:
        return self.base.get(path)

    def now(self, path: str) -> str | None:
        return self.current.get(path)


def analyze(
    base: dict[str, str],
    now: dict[str, str],
    root: Path,
    renamed: dict[str, str] | None = None,
) -> list[IntegrityFinding]:
    renamed = renamed or {}
    base = {k: textwrap.dedent(v) for k, v in base.items()}
    now = {k: textwrap.dedent(v) for k, v in now.items()}
    touched: dict[str, str] = {}
    for path in set(base) | set(now):
        if path in renamed.values() and path not in now:
            continue  # the old side of a rename
        before, after = base.get(renamed.get(path, path)), now.get(path)
        if before == after and path not in renamed:
            continue
        if path in renamed:
            touched[path] = "renamed"
        elif before is None:
            touched[path] = "added"
        elif after is None:
            touched[path] = "deleted"
        else:
            touched[path] = "modified"
    scan = Scan(root, None, None, None, Texts(base, now), touched, dict(renamed))  # type: ignore[arg-type]
    return [*tests_python.analyze(scan), *tests_js.analyze(scan)]


def marked(text: str, marker: str) -> int:
    lines = textwrap.dedent(text).splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.rstrip().endswith(marker))


def rules(findings: list[IntegrityFinding]) -> set[tuple[str, str | None, int | None]]:
    return {(f.rule, f.path, f.line) for f in findings}


PY = "tests/test_x.py"
JS = "src/x.test.ts"

BASE_PY = """\
import sys
import unittest

import pytest

from pkg import add


def helper(x):
    assert add(x, 0) == x


@pytest.fixture
def one():
    assert add(1, 0) == 1
    return 1


def test_add():
    assert add(1, 2) == 3


def test_helper():
    helper(2)


class TestThings:
    def test_zero(self):
        assert add(0, 0) == 0


class AddCase(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 2), 4)
"""


def change(old: str, new: str) -> str:
    assert old in BASE_PY, old
    return BASE_PY.replace(old, new, 1)


# -- Python: tricks ----------------------------------------------------------------------------

TRICKS = [
    # (description, new text, rule)
    (
        "class skip",
        change("class TestThings:", "@pytest.mark.skip  # <-\nclass TestThings:"),
        "skip-added",
    ),
    (
        "class pytestmark",
        change(
            "class TestThings:\n", "class TestThings:\n    pytestmark = pytest.mark.xfail  # <-\n"
        ),
        "skip-added",
    ),
    (
        "alias of a skip mark",
        change(
            "def test_add():",
            "broken = pytest.mark.skip(reason='x')\n\n\n@broken  # <-\ndef test_add():",
        ),
        "skip-added",
    ),
    (
        "from pytest import mark",
        change("import pytest\n", "import pytest\nfrom pytest import mark\n").replace(
            "def test_add():", "@mark.skip  # <-\ndef test_add():"
        ),
        "skip-added",
    ),
    (
        "import pytest as pt",
        change("import pytest\n", "import pytest\nimport pytest as pt\n").replace(
            "def test_add():", "@pt.mark.xfail(reason='x')  # <-\ndef test_add():"
        ),
        "skip-added",
    ),
    (
        "skipif on a module constant",
        change(
            "def test_add():",
            "SKIP = True\n\n\n@pytest.mark.skipif(SKIP, reason='x')  # <-\ndef test_add():",
        ),
        "skip-added",
    ),
    (
        "skipif on the version",
        change(
            "def test_add():",
            "@pytest.mark.skipif(sys.version_info[:2] >= (3, 0), reason='x')  # <-\n"
            "def test_add():",
        ),
        "skip-added",
    ),
    (
        "skipif platform startswith",
        change(
            "def test_add():",
            "@pytest.mark.skipif(not sys.platform.startswith('nope'), reason='x')  # <-\n"
            "def test_add():",
        ),
        "skip-added",
    ),
    (
        "skipif condition keyword",
        change(
            "def test_add():", "@pytest.mark.skipif(condition=1, reason='x')  # <-\ndef test_add():"
        ),
        "skip-added",
    ),
    (
        "skipif without a condition",
        change("def test_add():", "@pytest.mark.skipif(reason='x')  # <-\ndef test_add():"),
        "skip-added",
    ),
    (
        "unittest skipIf",
        change(
            "    def test_add(self):",
            "    @unittest.skipIf(True, 'x')  # <-\n    def test_add(self):",
        ),
        "skip-added",
    ),
    (
        "unittest skipUnless",
        change(
            "    def test_add(self):",
            "    @unittest.skipUnless(sys.platform == 'nope', 'x')  # <-\n    def test_add(self):",
        ),
        "skip-added",
    ),
    (
        "unittest expectedFailure",
        change(
            "    def test_add(self):",
            "    @unittest.expectedFailure  # <-\n    def test_add(self):",
        ),
        "skip-added",
    ),
    (
        "self.skipTest",
        change(
            "        self.assertEqual(add(2, 2), 4)",
            "        self.skipTest('later')  # <-\n        self.assertEqual(add(2, 2), 4)",
        ),
        "skip-added",
    ),
    (
        "raise SkipTest",
        change(
            "        self.assertEqual(add(2, 2), 4)",
            "        raise unittest.SkipTest('later')  # <-",
        ),
        "skip-added",
    ),
    (
        "pytest.xfail in the body",
        change(
            "    assert add(1, 2) == 3",
            "    pytest.xfail('known')  # <-\n    assert add(1, 2) == 3",
        ),
        "skip-added",
    ),
    (
        "applymarker",
        change(
            "def test_add():\n    assert add(1, 2) == 3",
            "def test_add(request):\n"
            "    request.applymarker(pytest.mark.xfail)  # <-\n"
            "    assert add(1, 2) == 3",
        ),
        "skip-added",
    ),
    (
        "a fixture that skips",
        change("    assert add(1, 0) == 1\n", "    pytest.skip('no')  # <-\n"),
        "skip-added",
    ),
    (
        "skip in an if True",
        change(
            "    assert add(1, 2) == 3",
            "    if True:\n        pytest.skip()  # <-\n    assert add(1, 2) == 3",
        ),
        "skip-added",
    ),
    (
        "module-level skip",
        change(
            "from pkg import add\n",
            "from pkg import add\n\npytest.skip('x', allow_module_level=True)  # <-\n",
        ),
        "skip-added",
    ),
    (
        "flaky plugin",
        change("from pkg import add\n", "from pkg import add\nfrom flaky import flaky\n").replace(
            "def test_add():", "@flaky(max_runs=3)  # <-\ndef test_add():"
        ),
        "rerun-added",
    ),
    (
        "test_x.__test__ = False",
        BASE_PY + "\n\ntest_add.__test__ = False\n",
        "test-removed",
    ),
    (
        "rebinding the name",
        BASE_PY + "\n\ntest_add = None\n",
        "test-removed",
    ),
    (
        "__test__ = False on the class",
        change("class TestThings:\n", "class TestThings:\n    __test__ = False\n"),
        "test-removed",
    ),
    (
        "an __init__ on the class",
        change(
            "class TestThings:\n", "class TestThings:\n    def __init__(self):\n        pass\n\n"
        ),
        "test-removed",
    ),
    (
        "made a fixture",
        change("def test_add():", "@pytest.fixture\ndef test_add():"),
        "test-removed",
    ),
    (
        "moved under if False",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "if False:\n    def test_add():\n        assert add(1, 2) == 3\n",
        ),
        "test-removed",
    ),
    (
        "assert in an if False",
        change("    assert add(1, 2) == 3", "    if False:\n        assert add(1, 2) == 3"),
        "assertion-removed",
    ),
    (
        "an early return under if True",
        change(
            "    assert add(1, 2) == 3", "    if True:\n        return\n    assert add(1, 2) == 3"
        ),
        "assertion-removed",
    ),
    (
        "assert of a non-empty tuple",
        change("    assert add(1, 2) == 3", "    assert (add(1, 2) == 3, 'always true')"),
        "assertion-removed",
    ),
    (
        "a tautology",
        change("    assert add(1, 2) == 3", "    assert add(1, 2) == add(1, 2)"),
        "assertion-removed",
    ),
    (
        "assertTrue(True)",
        change(
            "        self.assertEqual(add(2, 2), 4)",
            "        add(2, 2)\n        self.assertTrue(True)",
        ),
        "assertion-removed",
    ),
    (
        "assertEqual of constants",
        change("        self.assertEqual(add(2, 2), 4)", "        self.assertEqual(4, 4)"),
        "assertion-removed",
    ),
    (
        "a swallowing except Exception",
        change(
            "    assert add(1, 2) == 3",
            "    try:\n        assert add(1, 2) == 3\n    except (ValueError, Exception):\n"
            "        pass",
        ),
        "assertion-removed",
    ),
    (
        "self.assertRaises(AssertionError) around the assert",
        change(
            "        self.assertEqual(add(2, 2), 4)",
            "        with self.assertRaises(AssertionError):\n            assert add(2, 2) == 5",
        ),
        "assertion-removed",
    ),
    (
        "the helper no longer asserts",
        change("    assert add(x, 0) == x\n", "    add(x, 0)\n"),
        "assertion-removed",
    ),
    (
        "a method under a new name that asserts nothing",
        change(
            "    def test_zero(self):\n        assert add(0, 0) == 0\n",
            "    def test_zero(self):\n        add(0, 0)\n",
        ),
        "assertion-removed",
    ),
    (
        "the asserts moved into a nested function that is never called",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    def check():\n        assert add(1, 2) == 3\n    add(1, 2)\n",
        ),
        "assertion-removed",
    ),
    (
        "a nested function called only after a return",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    def check():\n        assert add(1, 2) == 3\n"
            "    add(1, 2)\n    return\n    check()\n",
        ),
        "assertion-removed",
    ),
    (
        "a nested function called only by another that is never called",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    def check():\n        assert add(1, 2) == 3\n\n"
            "    def never():\n        check()\n    add(1, 2)\n",
        ),
        "assertion-removed",
    ),
    (
        "a nested function called only under `if False`",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    def check():\n        assert add(1, 2) == 3\n"
            "    if False:\n        check()\n",
        ),
        "assertion-removed",
    ),
    (
        "a nested function only printed, or bound to another name",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    def check():\n        assert add(1, 2) == 3\n"
            "    print(check)\n    _ = check\n",
        ),
        "assertion-removed",
    ),
    (
        "a return in a loop over items written out, before the asserts",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    for _ in [1]:\n        return\n    assert add(1, 2) == 3\n",
        ),
        "assertion-removed",
    ),
    (
        "a return in `while True`, before the asserts",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    while True:\n        add(1, 2)\n        return\n"
            "    assert add(1, 2) == 3\n",
        ),
        "assertion-removed",
    ),
    (
        "a nested function with the asserts called where AssertionError is expected",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    def check():\n        assert add(1, 2) == 3\n"
            "    with pytest.raises(AssertionError):\n        check()\n",
        ),
        "assertion-removed",
    ),
    (
        "a method of a nested class that is never called",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    class Checks:\n        def check(self):\n"
            "            assert add(1, 2) == 3\n    Checks()\n",
        ),
        "assertion-removed",
    ),
    (
        "a nested function named like a module helper that asserts",
        change(
            "def test_helper():\n    helper(2)\n",
            "def test_helper():\n    def helper(x):\n        add(x, 0)\n    helper(2)\n",
        ),
        "assertion-removed",
    ),
    (
        "the exact assert moved into a nested function, a weak one left",
        change(
            "def test_add():\n    assert add(1, 2) == 3\n",
            "def test_add():\n    def check():\n        assert add(1, 2) == 3\n"
            "    assert add(1, 2)  # <-\n",
        ),
        "assertion-weakened",
    ),
]


@pytest.mark.parametrize(
    ("new", "rule"), [(n, r) for _, n, r in TRICKS], ids=[d for d, _, _ in TRICKS]
)
def test_python_tricks(tmp_path: Path, new: str, rule: str) -> None:
    found = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
    if rule == "test-removed":  # at the base's line of the test that is gone
        lines = {line for line, text in enumerate(BASE_PY.splitlines(), 1) if "def test_" in text}
        assert any((f.rule, f.path) == (rule, PY) and f.line in lines for f in found), found
    elif rule == "assertion-removed":  # at the line of the test that no longer asserts
        new_lines = new.splitlines()
        assert any(
            f.rule == rule and new_lines[(f.line or 0) - 1].lstrip().startswith("def test_")
            for f in found
        ), found
    else:
        assert (rule, PY, marked(new, "# <-")) in rules(found), found


HONEST = [
    (
        "no change to the tests' meaning: a docstring",
        change("def test_add():\n", 'def test_add():\n    """Adds."""\n'),
    ),
    (
        "skipif on another platform",
        change(
            "def test_add():",
            "@pytest.mark.skipif(sys.platform == 'nope', reason='x')\ndef test_add():",
        ),
    ),
    (
        "skipif on os.name",
        change("import sys\n", "import os\nimport sys\n").replace(
            "def test_add():", "@pytest.mark.skipif(os.name == 'nope', reason='x')\ndef test_add():"
        ),
    ),
    (
        "skipif on a module constant that is false",
        change(
            "def test_add():",
            "SKIP = False\n\n\n@pytest.mark.skipif(SKIP, reason='x')\ndef test_add():",
        ),
    ),
    (
        "skipif on a name bound twice",
        change(
            "def test_add():",
            "HAVE = True\ntry:\n    import numpy\nexcept ImportError:\n    HAVE = False\n\n\n"
            "@pytest.mark.skipif(HAVE, reason='x')\ndef test_add():",
        ),
    ),
    (
        "skipif on an unknown string",
        change(
            "def test_add():",
            "@pytest.mark.skipif('config.getoption(\"x\")', reason='x')\ndef test_add():",
        ),
    ),
    (
        "skipif on a string that does not parse",
        change("def test_add():", "@pytest.mark.skipif('not (', reason='x')\ndef test_add():"),
    ),
    (
        "skipUnless that holds",
        change(
            "    def test_add(self):",
            "    @unittest.skipUnless(sys.version_info >= (3,), 'x')\n    def test_add(self):",
        ),
    ),
    (
        "skip in an except ImportError",
        change(
            "def test_add():\n",
            "def test_add():\n    try:\n        import numpy\n    except ImportError:\n"
            "        pytest.skip('needs numpy')\n",
        ),
    ),
    (
        "skip in a loop or match",
        change(
            "def test_add():\n",
            "def test_add():\n    for x in []:\n        pytest.skip('x')\n    match 1:\n"
            "        case 2:\n            pytest.skip('y')\n",
        ),
    ),
    (
        "skip guarded by an unknown condition",
        change(
            "def test_add():\n",
            "def test_add():\n    if not add:\n        pytest.skip('x')\n    else:\n        pass\n",
        ),
    ),
    (
        "a platform skip at module level",
        change(
            "from pkg import add\n",
            "from pkg import add\n\nif sys.platform == 'nope':\n"
            "    pytest.skip('x', allow_module_level=True)\n",
        ),
    ),
    (
        "a new test with mock and raises",
        change(
            "class TestThings:",
            "def test_mock():\n    from unittest import mock\n    m = mock.Mock()\n    m()\n"
            "    m.assert_called_once()\n\n\ndef test_raises():\n"
            "    pytest.raises(TypeError, add, 1, None)\n\n\nclass TestThings:",
        ),
    ),
    (
        "a new test that fails on purpose in a branch",
        change(
            "class TestThings:",
            "def test_branch():\n    if add(1, 1) != 2:\n        raise AssertionError('no')\n\n\n"
            "def test_fail():\n    try:\n        add(1, 1)\n    except TypeError:\n"
            "        pytest.fail('raised')\n\n\nclass TestThings:",
        ),
    ),
    (
        "a new test using a fixture that asserts",
        change(
            "class TestThings:",
            "def test_one(one):\n    add(one, 1)\n\n\n@pytest.mark.usefixtures('one')\n"
            "def test_one_again():\n    add(1, 1)\n\n\nclass TestThings:",
        ),
    ),
    (
        "a new method using a helper method",
        change(
            "class TestThings:\n",
            "class TestThings:\n    def check(self, x):\n        assert add(x, 0) == x\n\n"
            "    def test_check(self):\n        self.check(3)\n\n",
        ),
    ),
    (
        "asserts in a loop, a with, a finally, a callback",
        change(
            "class TestThings:",
            "def test_loop():\n    for x in (1, 2):\n        assert add(x, 0) == x\n\n\n"
            "def test_cb():\n    def cb():\n        assert add(1, 1) == 2\n    cb()\n\n\n"
            "def test_finally():\n    try:\n        add(1, 1)\n    finally:\n"
            "        assert add(1, 1) == 2\n\n\ndef test_reraise():\n    try:\n"
            "        assert add(1, 1) == 2\n    except AssertionError:\n        raise\n\n\n"
            "class TestThings:",
        ),
    ),
    (
        "nested functions called, handed over as callbacks, or methods of a nested class",
        change(
            "class TestThings:",
            "def test_handed_over():\n    def check(x):\n        assert add(x, 0) == x\n"
            "    list(map(check, [1, 2]))\n\n\n"
            "def test_called_by_a_called_one():\n    def check(x):\n"
            "        assert add(x, 0) == x\n\n"
            "    def run():\n        check(1)\n    run()\n\n\n"
            "def test_local_class():\n    class Checks:\n        def check(self, x):\n"
            "            assert add(x, 0) == x\n    Checks().check(1)\n\n\n"
            "def test_key():\n    def key(x):\n        assert add(x, 0) == x\n        return x\n"
            "    sorted([2, 1], key=key)\n\n\n"
            "def test_loop_left():\n    for x in [1, 2]:\n        if x > 1:\n            break\n"
            "        continue\n    while True:\n        break\n    assert add(1, 1) == 2\n\n\n"
            "def test_local_eq():\n    class Near:\n        def __eq__(self, other):\n"
            "            assert add(other, 0) == other\n            return True\n"
            "    Near() == 1\n\n\nclass TestThings:",
        ),
    ),
    (
        "pytest.raises(AssertionError) of a function",
        change(
            "class TestThings:",
            "def test_check_raises():\n    with pytest.raises(AssertionError):\n"
            "        helper(None)\n\n\nclass TestThings:",
        ),
    ),
    (
        "a new test that is skipped only elsewhere",
        change(
            "class TestThings:",
            "@pytest.mark.skipif(sys.platform == 'nope', reason='x')\ndef test_new():\n"
            "    assert add(1, 1) == 2\n\n\nclass TestThings:",
        ),
    ),
]


@pytest.mark.parametrize("new", [n for _, n in HONEST], ids=[d for d, _ in HONEST])
def test_python_honest_changes(tmp_path: Path, new: str) -> None:
    assert analyze({PY: BASE_PY}, {PY: new}, tmp_path) == []


def test_an_expectation_changed_with_the_code_untouched_is_a_notice(tmp_path: Path) -> None:
    new = change("    assert add(1, 2) == 3", "    assert add(1, 2) == 4  # <-")
    # The code changes with the expectation: the behaviour changed, no finding.
    code = {"pkg/__init__.py": "def add(a, b):\n    return a + b\n"}
    changed = {"pkg/__init__.py": "def add(a, b):\n    return a + b + 1\n"}
    assert analyze({PY: BASE_PY, **code}, {PY: new, **changed}, tmp_path) == []
    # Nothing but the test changes: a notice for the reviewer (the test was wrong, or it now
    # agrees with a bug), never blocking.
    (finding,) = analyze({PY: BASE_PY, **code}, {PY: new, **code}, tmp_path)
    assert (finding.rule, finding.line) == ("expectation-changed", marked(new, "# <-"))
    assert "`add(1, 2) == 4` where the base expected `add(1, 2) == 3`" in finding.message
    # The same for unittest's assertEqual, pytest.approx and a parametrized case.
    unit = change("self.assertEqual(add(2, 2), 4)", "self.assertEqual(add(2, 2), 5)")
    assert [f.rule for f in analyze({PY: BASE_PY}, {PY: unit}, tmp_path)] == ["expectation-changed"]
    base = (
        "import pytest\n\nfrom pkg import mul, tax\n\n\n"
        "def test_tax():\n    assert tax(10) == pytest.approx(1.5)\n\n\n"
        "@pytest.mark.parametrize(('a', 'b', 'out'), [(2, 3, 6), (1, 1, 1)])\n"
        "def test_mul(a, b, out):\n    assert mul(a, b) == out\n"
    )
    now = base.replace("approx(1.5)", "approx(3.0)").replace("(2, 3, 6)", "(2, 3, 5)")
    found = analyze({PY: base}, {PY: now}, tmp_path)
    assert [(f.rule, f.line) for f in found] == [
        ("expectation-changed", 7),
        ("expectation-changed", 12),
    ]
    assert "`mul(2, 3) == 5` where the base expected `mul(2, 3) == 6`" in found[1].message
    # Not an expectation changed: a new check beside the old one, a check of a variable, a
    # comparison rewritten.
    for honest in (
        change("    assert add(1, 2) == 3", "    assert add(1, 2) == 3\n    assert add(1, 2) != 4"),
        change("    assert add(1, 2) == 3", "    assert add(1, 2) == 3.0"),
        change("    assert add(1, 2) == 3", "    assert 3 == add(1, 2)"),
    ):
        assert analyze({PY: BASE_PY}, {PY: honest}, tmp_path) == [], honest
    variable = "def test_add():\n    total = add(1, 2)\n    assert total == 3\n"
    assert analyze({PY: variable}, {PY: variable.replace("== 3", "== 4")}, tmp_path) == []
    # Another call in its place is no expectation changed either: the check of `add(1, 2)`
    # is gone, and one that passes took its place.
    other = change("    assert add(1, 2) == 3", "    assert add(2, 2) == 4")
    assert [f.rule for f in analyze({PY: BASE_PY}, {PY: other}, tmp_path)] == ["assertion-removed"]


TAX = "tests/test_tax.py"
TAX_CODE = {"pkg/__init__.py": "RATE = 0.1\n\n\ndef tax(x):\n    return x * RATE\n"}
TAX_BASE = """\
import pytest

from pkg import tax


def test_tax_more():
    assert tax(10) == 1.0
    assert tax(20) == 2.0
    assert tax(30) == 3.5
    with pytest.raises(ValueError):
        tax(-1)
"""


def tax_test(old: str, new: str) -> str:
    assert old in TAX_BASE, old
    return TAX_BASE.replace(old, new, 1)


def tax_findings(tmp_path: Path, now: dict[str, str]) -> list[IntegrityFinding]:
    return analyze({TAX: TAX_BASE, **TAX_CODE}, {**TAX_CODE, **now}, tmp_path)


@pytest.mark.parametrize(
    ("code_now", "check_now"),
    [
        (TAX_CODE["pkg/__init__.py"] + "\n...\n", ""),
        ({**TAX_CODE, "pkg/rates.py": "ZERO = 0.0\n"}, ""),
        (None, "    assert tax(40) == 4.0\n"),
        (None, "    if tax(10) > 100:\n        _check(30, 3.5)\n"),
        (None, "    if False:\n        _check(30, 3.5)\n"),
        (None, "    result = tax(30)\n"),
        (None, "    for _ in range(1):\n        print(tax(30))\n"),
    ],
    ids=[
        "a-statement-appended",
        "a-module-of-names",
        "another-input",
        "a-condition",
        "if-false",
        "assigned-unchecked",
        "computed-in-a-loop",
    ],
)
def test_a_failing_check_dropped_is_not_excused_cheaply(
    tmp_path: Path, code_now: str | dict[str, str] | None, check_now: str
) -> None:
    # Red team 53: the failing assert deleted beside a change of the code that touched
    # nothing it calls (a `...` appended, a new module binding a name the check reads, a
    # Makefile), or moved into a helper the test calls where it never runs; red team 54: its
    # call kept, assigned or computed, and checked by nothing.
    code = code_now if isinstance(code_now, dict) else {"pkg/__init__.py": code_now or ""}
    if code_now is None:
        code = {**TAX_CODE, "Makefile": "all:\n\ttrue\n"}
    helper = "\n\ndef _check(x, expected):\n    assert tax(x) == expected\n"
    now = tax_test("    assert tax(30) == 3.5\n", check_now) + helper
    found = analyze({TAX: TAX_BASE, **TAX_CODE}, {**TAX_CODE, **code, TAX: now}, tmp_path)
    assert "assertion-removed" in [f.rule for f in found], found


@pytest.mark.parametrize(
    "rewritten",
    [
        "    result = tax(30)\n    assert (result, type(result)) == (3.0, float)\n",
        "    with pytest.raises(ValueError, match='negative'):\n        tax(-1)\n",
    ],
    ids=["a-whole-value-compared", "raises-another-way"],
)
def test_a_check_written_another_way_is_a_note(tmp_path: Path, rewritten: str) -> None:
    # Review 32: a check of a call the test still computes and uses, rewritten (a whole value
    # compared, another spelling), is a note for a reviewer, not a block.
    old = (
        "    assert tax(30) == 3.5\n"
        if "result" in rewritten
        else ("    with pytest.raises(ValueError):\n        tax(-1)\n")
    )
    found = tax_findings(tmp_path, {TAX: tax_test(old, rewritten)})
    assert "assertion-removed" not in [f.rule for f in found], found


READ_CODE = {
    "pkg/__init__.py": "def read(path):\n    with open(path) as f:\n"
    "        return dict(line.split('=') for line in f)\n"
}
READ_BASE = """\
import os

from pkg import read


def test_read():
    path = os.path.join(os.path.dirname(__file__), "data.txt")
    content = read(path)
    assert content["a"] == "1"
"""


@pytest.mark.parametrize(
    "now",
    [
        # tomlkit's test_toml_file: a repository data file read from a tmp_path copy.
        "from pathlib import Path\n\nfrom pkg import read\n\n\ndef test_read(tmp_path):\n"
        "    path = tmp_path / 'data.txt'\n"
        "    path.write_text((Path(__file__).parent / 'data.txt').read_text())\n"
        "    content = read(path)\n    assert content['a'] == '1'\n",
        # python-slugify's conversion to pytest: another spelling, the input made another way.
        "import unittest\n\nfrom pkg import read\n\n\nclass T(unittest.TestCase):\n"
        "    def test_read(self):\n        content = read(self.data())\n"
        "        self.assertEqual(content['a'], '1')\n\n"
        "    def data(self):\n        return 'tests/data.txt'\n",
    ],
    ids=["a-tmp-path-copy", "unittest-spelling"],
)
def test_a_check_still_written_of_an_input_made_another_way_is_a_note(
    tmp_path: Path, now: str
) -> None:
    # Review 33: the assert kept word for word (or in unittest's spelling), the value it checks
    # read another way: the test's input edited, not a check dropped. A note, never a block.
    test = "tests/test_read.py"
    found = analyze({test: READ_BASE, **READ_CODE}, {test: now, **READ_CODE}, tmp_path)
    rules = [f.rule for f in found]
    assert "assertion-removed" not in rules, found


def test_a_unittest_check_of_two_variables_converted_to_pytest_is_a_note(tmp_path: Path) -> None:
    # Review 33's python-slugify: `self.assertEqual(params['text'], text)`, the params made by
    # a method of the class, now `assert params['text'] == text` with the method's body.
    base = (
        "import unittest\n\nfrom pkg import read\n\n\nclass T(unittest.TestCase):\n"
        "    def test_read(self):\n        text = '1'\n        params = self.params()\n"
        "        self.assertEqual(params['a'], text)\n\n"
        "    def params(self):\n        return read('tests/data.txt')\n"
    )
    now = (
        "from pkg import read\n\n\ndef test_read():\n    text = '1'\n"
        "    params = read('tests/' + 'data.txt')\n    assert params['a'] == text\n"
    )
    test = "tests/test_read.py"
    found = analyze({test: base, **READ_CODE}, {test: now, **READ_CODE}, tmp_path)
    assert "assertion-removed" not in [f.rule for f in found], found


def test_a_check_dropped_from_a_test_that_keeps_others_is_removed(tmp_path: Path) -> None:
    # The failing assert deleted, the test's other asserts left to pass: in place, or in a
    # test renamed that keeps most of what it checked.
    dropped = tax_test("    assert tax(30) == 3.5\n", "")
    (finding,) = tax_findings(tmp_path, {TAX: dropped})
    assert (finding.rule, finding.path, finding.line) == ("assertion-removed", TAX, 6)
    assert finding.message.startswith(
        "tests/test_tax.py::test_tax_more no longer checks `assert tax(30) == 3.5` (at the base, "
        "line 9), and no test of the change does"
    )
    renamed = dropped.replace("def test_tax_more", "def test_tax_cases")
    (finding,) = tax_findings(tmp_path, {TAX: renamed})
    assert finding.rule == "assertion-removed"
    assert finding.message.startswith(
        "tests/test_tax.py::test_tax_cases (it was tests/test_tax.py::test_tax_more) no longer "
        "checks `assert tax(30) == 3.5`"
    )
    # Kept where it never runs: under `if False`, after a return, its failure swallowed, in
    # a function never called, in a test the change skips.
    hidden = (
        "    if False:\n        assert tax(30) == 3.5\n",
        "    return\n    assert tax(30) == 3.5\n",
        "    try:\n        assert tax(30) == 3.5\n    except AssertionError:\n        pass\n",
        "    def later():\n        assert tax(30) == 3.5\n",
    )
    for where in hidden:
        now = tax_test("    assert tax(30) == 3.5\n", where)
        assert "assertion-removed" in {f.rule for f in tax_findings(tmp_path, {TAX: now})}, where
    skipped = dropped + "\n\n@pytest.mark.skip\ndef test_tax_thirty():\n    assert tax(30) == 3.5\n"
    found = tax_findings(tmp_path, {TAX: skipped})
    assert sorted(f.rule for f in found) == ["assertion-removed", "skip-added"]
    # Made a check of nothing: a call without an assert, a value compared with itself, or
    # another input checked in its place.
    for no_op in (
        "    tax(30)\n",
        "    assert tax(30) == tax(30)\n",
        "    assert tax(40) == 4.0\n",
    ):
        now = tax_test("    assert tax(30) == 3.5\n", no_op)
        assert [f.rule for f in tax_findings(tmp_path, {TAX: now})] == ["assertion-removed"], no_op
    # A `pytest.raises` block deleted, and two checks at once: the first is named.
    raises = tax_test("    with pytest.raises(ValueError):\n        tax(-1)\n", "")
    (finding,) = tax_findings(tmp_path, {TAX: raises})
    assert "no longer checks `with pytest.raises(ValueError): tax(-1)` (at the base, line 10)" in (
        finding.message
    )
    both = raises.replace("    assert tax(30) == 3.5\n", "")
    (finding,) = tax_findings(tmp_path, {TAX: both})
    assert "`assert tax(30) == 3.5` (at the base, line 9) and 1 more check(s)," in finding.message
    # The code changes, but not what the dropped check calls.
    other = {"pkg/other.py": "def mul(a, b):\n    return a * b * 1\n"}
    found = analyze(
        {TAX: TAX_BASE, **TAX_CODE, "pkg/other.py": "def mul(a, b):\n    return a * b\n"},
        {**TAX_CODE, TAX: dropped, **other},
        tmp_path,
    )
    assert [f.rule for f in found] == ["assertion-removed"]
    # The whole test deleted is a test removed, reported once.
    gone = TAX_BASE.split("def test_tax_more")[0] + "def test_other():\n    assert tax(0) == 0\n"
    assert [f.rule for f in tax_findings(tmp_path, {TAX: gone})] == ["test-removed"]


def test_a_check_moved_reformatted_split_or_merged_is_still_made(tmp_path: Path) -> None:
    thirty = "    assert tax(30) == 3.5\n"
    honest = {
        "moved to a test of its own": tax_test(thirty, "")
        + "\n\ndef test_tax_thirty():\n    assert tax(30) == 3.5\n",
        "folded into a case of a parametrized test": tax_test(thirty, "")
        + "\n\n@pytest.mark.parametrize(('amount', 'expected'), [(30, 3.5), (40, 4.0)])\n"
        "def test_tax_cases(amount, expected):\n"
        "    assert tax(amount) == pytest.approx(expected)\n",
        "written the other way round, with approx": tax_test(
            thirty, "    assert pytest.approx(3.5) == tax(30)\n"
        ),
        "kept in a variable read twice": tax_test(
            thirty, "    result = tax(30)\n    assert result == 3.5\n    assert result > 0\n"
        ),
        "two asserts merged into one": tax_test(
            "    assert tax(10) == 1.0\n    assert tax(20) == 2.0\n",
            "    assert tax(10) == 1.0 and tax(20) == 2.0\n",
        ),
        "checked in a loop over values written out": tax_test(
            thirty,
            "    for amount in (30, 40):\n        assert tax(amount) == amount * 0.1 + 0.5\n",
        ),
        "moved into a helper the test calls": tax_test(thirty, "    check(30, 3.5)\n")
        + "\n\ndef check(amount, expected):\n    assert tax(amount) == expected\n",
        "compared close, for rounding": tax_test(
            thirty, "    assert tax(30) == pytest.approx(3.5, abs=1e-9)\n"
        ),
        "the raises block given a message to match": tax_test(
            "pytest.raises(ValueError)", "pytest.raises(ValueError, match='negative')"
        ),
    }
    for what, now in honest.items():
        assert tax_findings(tmp_path, {TAX: now}) == [], what
    # Moved to another file.
    moved = {
        TAX: tax_test(thirty, ""),
        "tests/test_more.py": "from pkg import tax\n\n\n"
        "def test_thirty():\n    assert tax(30) == 3.5\n",
    }
    assert tax_findings(tmp_path, moved) == []
    # A check written twice, kept once.
    twice = tax_test(thirty, thirty + thirty)
    assert analyze({TAX: twice, **TAX_CODE}, {TAX: TAX_BASE, **TAX_CODE}, tmp_path) == []
    # An assert of two checks split in two.
    merged = tax_test(
        "    assert tax(10) == 1.0\n    assert tax(20) == 2.0\n",
        "    assert tax(10) == 1.0 and tax(20) == 2.0\n",
    )
    found = analyze({TAX: merged, **TAX_CODE}, {TAX: TAX_BASE, **TAX_CODE}, tmp_path)
    assert found == []
    # Another expected value of the same call: a notice of its own, not a check dropped.
    changed = tax_test(thirty, "    assert tax(30) == 3.0\n")
    assert [f.rule for f in tax_findings(tmp_path, {TAX: changed})] == ["expectation-changed"]
    # unittest's assertEqual written as pytest's assert.
    unit = (
        "import unittest\n\nfrom pkg import tax\n\n\nclass TaxTest(unittest.TestCase):\n"
        "    def test_tax(self):\n        self.assertEqual(tax(10), 1.0)\n"
        "        self.assertEqual(tax(30), 3.5)\n"
    )
    plain = "from pkg import tax\n\n\ndef test_tax():\n    assert tax(10) == 1.0\n"
    plain += "    assert tax(30) == 3.5\n"
    assert analyze({TAX: unit, **TAX_CODE}, {TAX: plain, **TAX_CODE}, tmp_path) == []


def test_a_check_dropped_with_the_behaviour_it_checks_is_no_finding(tmp_path: Path) -> None:
    dropped = tax_test("    assert tax(30) == 3.5\n", "")
    for code in (
        "RATE = 0.1\n\n\ndef tax(x):\n    return round(x * RATE, 2)\n",  # what it calls
        "RATE = 0.15\n\n\ndef tax(x):\n    return x * RATE\n",  # what that reads
    ):
        assert tax_findings(tmp_path, {TAX: dropped, "pkg/__init__.py": code}) == [], code
    # A docstring is not what the code does.
    documented = 'RATE = 0.1\n\n\ndef tax(x):\n    """Tax."""\n    return x * RATE\n'
    found = tax_findings(tmp_path, {TAX: dropped, "pkg/__init__.py": documented})
    assert [f.rule for f in found] == ["assertion-removed"]


def test_comparing_with_zero_or_one_is_exact(tmp_path: Path) -> None:
    # 0 == False and 1 == True: still comparisons with a value, not truthiness checks.
    for compared in ("add(1, 2) == 0", "add(1, 2) == 1"):
        new = change("    assert add(1, 2) == 3", f"    assert {compared}")
        found = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
        assert "assertion-weakened" not in {f.rule for f in found}, compared
    # A bound, of 0 or 1 or any value, admits other values than the one expected (red team 58).
    for compared in ("add(1, 2) > 0", "add(1, 2) >= 1"):
        new = change("    assert add(1, 2) == 3", f"    assert {compared}")
        found = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
        assert "assertion-weakened" in {f.rule for f in found}, compared


UNIT_HEAD = (
    "import unittest\n\nfrom pkg import get, key\n\n\nclass C(unittest.TestCase):\n"
    "    def test_a(self):\n"
)
UNIT_CODE = {"pkg/__init__.py": "def get(k):\n    return None\n\n\ndef key(*a):\n    return a\n"}


def unit_findings(tmp_path: Path, before: str, after: str) -> list[IntegrityFinding]:
    """A unittest test whose body (statements at its indent, one a line) is edited."""

    def test(body: str) -> str:
        return UNIT_HEAD + "".join(f"        {line}\n" for line in body.splitlines())

    path = "tests/test_c.py"
    return analyze({path: test(before), **UNIT_CODE}, {path: test(after), **UNIT_CODE}, tmp_path)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # Review 34's cachetools: ruff's E711 asks for `is None`; `== None` is judged the same.
        (
            "self.assertEqual(get(1), None)\nself.assertEqual(1, len(get(2)))",
            "assert get(1) is None\nassert len(get(2)) == 1",
        ),
        ("self.assertEqual(None, get(1))", "assert get(1) is None"),
        ("self.assertIsNone(get(1))", "assert get(1) is None"),
        ("self.assertIs(get(1), None)", "assert get(1) is None"),
        ("self.assertEqual(get(1), True)", "assert get(1) is True"),
        ("self.assertIsNotNone(get(1))", "assert get(1) is not None"),
        ("assert get(1) == 3", "self.assertTrue(get(1) == 3)"),
    ],
    ids=["eq-none", "none-first", "is-none", "assert-is-none", "eq-true", "is-not-none", "true"],
)
def test_a_unittest_check_written_as_the_assert_it_stands_for_is_as_strong(
    tmp_path: Path, before: str, after: str
) -> None:
    assert unit_findings(tmp_path, before, after) == []


@pytest.mark.parametrize(
    "after",
    ["assert get(1)", "assert get(1) is not None", "self.assertIsNotNone(get(1))"],
)
def test_an_exact_unittest_check_made_a_truth_check_is_still_weakened(
    tmp_path: Path, after: str
) -> None:
    found = unit_findings(tmp_path, "self.assertEqual(get(1), 3)", after)
    assert "assertion-weakened" in {f.rule for f in found}, found


def test_none_compared_first_is_a_truth_check_but_none_looked_for_is_not(tmp_path: Path) -> None:
    # `None == x` checks what `x is None` does; `None in x` looks for a value in a collection.
    found = unit_findings(tmp_path, "assert None in key(1)", "assert key(1)")
    assert "assertion-weakened" in {f.rule for f in found}, found
    assert unit_findings(tmp_path, "assert None == get(1)", "assert get(1) is None") == []


def test_a_unittest_check_respelled_as_a_plain_assert_is_the_same_check(tmp_path: Path) -> None:
    # Review 34's cachetools: each assert* call written as the assert it stands for, values
    # compared with one another (no expected value written out) among them.
    calls = {
        "self.assertEqual(key(1, 2), key(1, 2))": "assert key(1, 2) == key(1, 2)",
        "self.assertNotEqual(key(1), key(2))": "assert key(1) != key(2)",
        "self.assertIn(1, key(1))": "assert 1 in key(1)",
        "self.assertNotIn(3, key(1))": "assert 3 not in key(1)",
        "self.assertIs(key(), key())": "assert key() is key()",
        "self.assertIsNot(key(1), key(2), 'msg')": "assert key(1) is not key(2)",
        "self.assertIsInstance(key(1), tuple)": "assert isinstance(key(1), tuple)",
        "self.assertTrue(key(1))": "assert key(1)",
        "self.assertFalse(key())": "assert not key()",
        "self.assertGreater(len(key(1, 2)), 1)": "assert len(key(1, 2)) > 1",
        "self.assertLessEqual(len(key(1)), 1)": "assert len(key(1)) <= 1",
    }
    before, after = "\n".join(calls), "\n".join(calls.values())
    assert unit_findings(tmp_path, before, after) == []
    assert unit_findings(tmp_path, after, before) == []
    # A check really dropped is still seen: one of values written out, for sure.
    kept = "\n".join(list(calls.values())[:-1])
    found = unit_findings(tmp_path, before, kept)
    assert [(f.rule, "len(key(1)), 1" in f.message) for f in found] == [("assertion-removed", True)]


def test_a_unittest_check_of_a_value_with_itself_is_no_check(tmp_path: Path) -> None:
    # As `assert add(2, 2) == add(2, 2)` is (a tautology): what it stands for is always true.
    found = unit_findings(
        tmp_path, "self.assertEqual(key(1), (1,))", "self.assertEqual(key(1), key(1))"
    )
    assert "assertion-removed" in {f.rule for f in found}, found


def test_a_redefined_assert_method_is_not_read_as_unittests(tmp_path: Path) -> None:
    # A class of the module that defines assertEqual again: its body says what it checks.
    base = UNIT_HEAD + "        assert get(1) == 3\n"
    now = (
        UNIT_HEAD + "        self.assertEqual(get(1), 3)\n\n"
        "    def assertEqual(self, a, b):\n        pass\n"
    )
    path = "tests/test_c.py"
    found = analyze({path: base, **UNIT_CODE}, {path: now, **UNIT_CODE}, tmp_path)
    assert [f.rule for f in found] == ["assertion-removed"], found


def test_a_new_skipped_test_is_one_finding_not_two(tmp_path: Path) -> None:
    new = change(
        "class TestThings:",
        "@pytest.mark.skip  # <-\ndef test_new():\n    pass\n\n\nclass TestThings:",
    )
    found = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
    assert rules(found) == {("skip-added", PY, marked(new, "# <-"))}


def test_a_renamed_test_is_compared_with_what_it_was(tmp_path: Path) -> None:
    new = change(
        "def test_add():\n    assert add(1, 2) == 3\n",
        "def test_addition():  # <-\n    assert add(1, 2) == 3 or True\n",
    )
    new = new.replace("def test_helper", "def test_helper_renamed")
    found = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
    # test_add vanished and test_addition sits where it was: the same test, now asserting nothing.
    (finding,) = found
    assert (finding.rule, finding.line) == ("assertion-removed", marked(new, "# <-"))
    assert "it was tests/test_x.py::test_add" in finding.message


def test_a_base_that_does_not_parse_has_no_tests(tmp_path: Path) -> None:
    assert (
        analyze({PY: "def test_a(:\n"}, {PY: "def test_a():\n    assert 1 == 1 + 0\n"}, tmp_path)
        == []
    )


def test_a_moved_test_with_a_new_skip(tmp_path: Path) -> None:
    moved = (
        "import pytest\n\nfrom pkg import add\n\n\n"
        "@pytest.mark.skip  # <-\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    new = change("def test_add():\n    assert add(1, 2) == 3\n", "")
    found = analyze({PY: BASE_PY}, {PY: new, "tests/test_y.py": moved}, tmp_path)
    assert rules(found) == {("skip-added", "tests/test_y.py", marked(moved, "# <-"))}


def test_importorskip_of_the_projects_own_module(tmp_path: Path) -> None:
    (tmp_path / "src" / "mylib").mkdir(parents=True)
    new = (
        'import pytest\n\nmylib = pytest.importorskip("mylib")  # <-\n\n\n'
        "def test_it():\n    assert mylib.VERSION\n"
    )
    found = analyze({}, {"tests/test_new.py": new}, tmp_path)
    assert rules(found) == {("skip-added", "tests/test_new.py", marked(new, "# <-"))}


# -- Python: which files and functions are tests -----------------------------------------------


@pytest.mark.parametrize(
    ("config_name", "config", "old", "new", "removed"),
    [
        (
            "pytest.ini",
            "[pytest]\npython_files = check_*.py\n",
            "tests/check_a.py",
            "tests/test_a.py",
            True,
        ),
        (
            "pytest.ini",
            "[pytest]\npython_files = check_*.py\n",
            "tests/check_a.py",
            "tests/check_b.py",
            False,
        ),
        (".pytest.ini", "", "tests/test_a.py", "tests/a_test.py", False),
        ("tox.ini", "[pytest]\ntestpaths = tests\n", "tests/test_a.py", "scripts/test_a.py", True),
        ("tox.ini", "[tox]\nenvlist = py\n", "tests/test_a.py", "scripts/test_a.py", False),
        (
            "setup.cfg",
            "[tool:pytest]\npython_files = tests/*.py\n",
            "tests/a.py",
            "other/a.py",
            True,
        ),
        ("setup.cfg", "[metadata]\nname = x\n", "tests/test_a.py", "tests/a.py", True),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
            "tests/test_a.py",
            "build/test_a.py",
            True,
        ),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\nnorecursedirs = ['legacy']\n",
            "tests/test_a.py",
            "legacy/test_a.py",
            True,
        ),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options]\nnorecursedirs = ['legacy']\n",
            "tests/test_a.py",
            "build/test_a.py",
            False,
        ),
        (
            "pyproject.toml",
            "[tool.pytest]\npython_files = ['spec_*.py']\n",
            "tests/spec_a.py",
            "tests/test_a.py",
            True,
        ),
        (
            "pyproject.toml",
            "[tool.pytest.ini_options\n",
            "tests/test_a.py",
            "tests/test_b.py",
            False,
        ),
        ("pyproject.toml", "[project]\nname = 'x'\n", "tests/test_a.py", "tests/test_b.py", False),
        ("pytest.ini", "[pytest\n", "tests/test_a.py", "tests/test_b.py", False),
        (
            "tests/conftest.py",
            "collect_ignore = ['old']\n",
            "tests/test_a.py",
            "tests/old/test_a.py",
            True,
        ),
        (
            "tests/conftest.py",
            "collect_ignore_glob = ['*_slow.py']\n",
            "tests/test_a.py",
            "tests/test_a_slow.py",
            True,
        ),
        (
            "tests/conftest.py",
            "collect_ignore = some_function()\n",
            "tests/test_a.py",
            "tests/old/test_a.py",
            False,
        ),
    ],
)
def test_which_files_are_tests_by_pytests_settings(
    tmp_path: Path, config_name: str, config: str, old: str, new: str, removed: bool
) -> None:
    test = "def test_a():\n    assert 1 + 1 == 2\n"
    found = analyze(
        {config_name: config, old: test},
        {config_name: config, new: test},
        tmp_path,
        renamed={new: old},
    )
    assert ({f.rule for f in found} == {"test-removed"}) is removed, found


@pytest.mark.parametrize(
    ("settings", "source", "tests"),
    [
        (Settings(), "def test_a(): pass\ndef helper(): pass\n", {"test_a"}),
        (
            Settings(python_functions=("*_check",)),
            "def a_check(): pass\ndef test_a(): pass\n",
            {"a_check"},
        ),
        (
            Settings(python_classes=("Describe",)),
            "class DescribeA:\n    def test_a(self): pass\nclass TestB:\n"
            "    def test_b(self): pass\n",
            {"DescribeA::test_a"},
        ),
        (
            Settings(),
            "class TestA:\n    class TestInner:\n        def test_i(self): pass\n",
            {"TestA::TestInner::test_i"},
        ),
        (
            Settings(),
            "import unittest\nclass Base(unittest.TestCase):\n    pass\nclass Thing(Base):\n"
            "    def testSomething(self): pass\n",
            {"Thing::testSomething"},
        ),
        (
            Settings(),
            "class TestA:\n    def test_a(self): pass\nclass TestA:\n    def test_b(self): pass\n",
            {"TestA::test_b"},
        ),
        (Settings(), "def test_a(): pass\ndel test_a\n", set()),
        (
            Settings(),
            "class TestA:\n    __test__ = True\n    def test_a(self): pass\n",
            {"TestA::test_a"},
        ),
    ],
)
def test_what_pytest_collects(settings: Settings, source: str, tests: set[str]) -> None:
    module = parse(source, "tests/test_m.py", settings)
    assert module is not None and set(module.tests) == tests


# -- Python: conditions ------------------------------------------------------------------------


def expr(text: str) -> ast.expr:
    node = ast.parse(text, mode="eval").body
    return node


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sys.platform == 'no-such'", False),
        (f"sys.platform == {sys.platform!r}", True),
        ("sys.version_info >= (3, 0)", True),
        ("sys.version_info.major < 3", False),
        ("sys.version_info[0] == 2", False),
        ("sys.version_info[:2] < (3, 0)", False),
        ("sys.version_info[9] == 1", None),
        ("platform.system() == 'NoSuchOS'", False),
        ("sys.platform.startswith('no-such')", False),
        ("sys.platform.startswith(x)", None),
        ("'a' < 1", None),
        ("x == 1", None),
        ("1 < 2 < 3", True),
        ("1 < 3 < 2", False),
        ("-1 < 0", True),
        ("not True", False),
        ("True and x", None),
        ("False and x", False),
        ("x or True", True),
        ("x or False", None),
        ("False or 0", False),
        ("[1, 2]", True),
        ("[]", False),
        ("[*x]", None),
        ("{}", False),
        ("{'a': 1}", True),
        ("{**x}", None),
        ("lambda: 0", True),
        ("f'{x}!'", True),
        ("f'{x}'", None),
        ("f''", False),
        ("sys.platform in ('no-such', 'other')", False),
        ("os.name is not None", True),
        ("f() == f()", True),
        ("f() != f()", False),
        ("(1, x)", True),
        ("sys.maxsize > 0", True),
        ("-x", None),
    ],
)
def test_conditions_are_evaluated_here(text: str, expected: bool | None) -> None:
    assert truthy(expr(text), None) is expected


def test_string_conditions_and_module_constants() -> None:
    module = Module("t.py", ast.parse("import sys as system\nFLAG = 1\nOTHER = FLAG\n"), Settings())
    assert condition(ast.Constant("sys.platform == 'no-such'"), module) is False
    assert condition(ast.Constant("not ("), module) is None
    assert condition(expr("system.platform == 'no-such'"), module) is False
    assert condition(expr("OTHER"), module) is True
    assert value(expr("sys.version_info[x]"), module) is not True


# -- JavaScript --------------------------------------------------------------------------------

BASE_JS = """\
import { sum, twice } from "./x";

function check(a, b) {
  expect(sum(a, b)).toBe(a + b);
}

const checkTwice = (a) => {
  expect(twice(a)).toBe(a * 2);
};

describe("sum", () => {
  it("adds", () => {
    expect(sum(1, 2)).toBe(3);
  });

  it("checks", () => {
    check(1, 2);
  });

  test("twice", async () => {
    checkTwice(2);
  });

  it("mocha style", function () {
    sum(1, 1).should.equal(2);
  });
});
"""


def js_change(old: str, new: str) -> str:
    assert old in BASE_JS, old
    return BASE_JS.replace(old, new, 1)


JS_TRICKS = [
    (
        "describe.only",
        js_change('describe("sum"', 'describe.only("sum"'),
        "only-added",
        'describe.only("sum"',
    ),
    ("it.failing", js_change('it("adds"', 'it.failing("adds"'), "skip-added", 'it.failing("adds"'),
    (
        "test.fails",
        js_change('test("twice"', 'test.fails("twice"'),
        "skip-added",
        'test.fails("twice"',
    ),
    (
        "test.fixme",
        js_change('test("twice"', 'test.fixme("twice"'),
        "skip-added",
        'test.fixme("twice"',
    ),
    (
        "skipIf(true)",
        js_change('it("adds"', 'it.skipIf(true)("adds"'),
        "skip-added",
        "it.skipIf(true)",
    ),
    (
        "runIf(false)",
        js_change('it("adds"', 'it.runIf(!true)("adds"'),
        "skip-added",
        "it.runIf(!true)",
    ),
    (
        "context.skip",
        js_change('describe("sum"', 'context.skip("sum"'),
        "skip-added",
        'context.skip("sum"',
    ),
    (
        "test.describe.skip",
        js_change('describe("sum"', 'test.describe.skip("sum"'),
        "skip-added",
        "test.describe.skip",
    ),
    ("xtest", js_change('test("twice"', 'xtest("twice"'), "skip-added", 'xtest("twice"'),
    (
        "test.skip() in the body",
        js_change("    checkTwice(2);\n", "    test.skip();\n    checkTwice(2);\n"),
        "skip-added",
        "test.skip();",
    ),
    (
        "test.skip(true) in the body",
        js_change("    checkTwice(2);\n", "    test.skip(true, 'later');\n    checkTwice(2);\n"),
        "skip-added",
        "test.skip(true",
    ),
    (
        "this.skip() in the body",
        js_change("    sum(1, 1).should", "    this.skip();\n    sum(1, 1).should"),
        "skip-added",
        "this.skip();",
    ),
    (
        "this.retries",
        js_change("    sum(1, 1).should", "    this.retries(3);\n    sum(1, 1).should"),
        "rerun-added",
        "this.retries",
    ),
    (
        "retry option",
        js_change('it("adds", () => {', 'it("adds", { retry: 3 }, () => {'),
        "rerun-added",
        "{ retry: 3 }",
    ),
    (
        "configure retries",
        js_change(
            'describe("sum", () => {\n',
            'describe("sum", () => {\n  test.describe.configure({ retries: 2 });\n',
        ),
        "rerun-added",
        "configure",
    ),
    (
        "a pending test replacing one",
        js_change('it("adds", () => {\n    expect(sum(1, 2)).toBe(3);\n  });\n', 'it("adds");\n'),
        "skip-added",
        'it("adds");',
    ),
]


@pytest.mark.parametrize(
    ("new", "rule", "needle"),
    [(n, r, k) for _, n, r, k in JS_TRICKS],
    ids=[d for d, *_ in JS_TRICKS],
)
def test_js_tricks(tmp_path: Path, new: str, rule: str, needle: str) -> None:
    found = analyze({JS: BASE_JS}, {JS: new}, tmp_path)
    line = new[: new.index(needle)].count("\n") + 1
    assert (rule, JS, line) in rules(found), found


JS_ASSERTS = [
    (
        "the helper emptied",
        js_change("  expect(sum(a, b)).toBe(a + b);\n", "  sum(a, b);\n"),
        'it("checks"',
    ),
    (
        "the arrow helper emptied",
        js_change("  expect(twice(a)).toBe(a * 2);\n", "  twice(a);\n"),
        'test("twice"',
    ),
    (
        "should removed",
        js_change("    sum(1, 1).should.equal(2);\n", "    sum(1, 1);\n"),
        'it("mocha style"',
    ),
    (
        "assert.equal of constants",
        js_change("    expect(sum(1, 2)).toBe(3);\n", "    assert.equal(1, 1);\n"),
        'it("adds"',
    ),
    (
        "expect()",
        js_change("    expect(sum(1, 2)).toBe(3);\n", "    expect().toBe(3);\n"),
        'it("adds"',
    ),
    (
        "a multi-line return first",
        js_change(
            "    expect(sum(1, 2)).toBe(3);\n",
            "    return sum(1, 2)\n      .toString();\n    expect(sum(1, 2)).toBe(3);\n",
        ),
        'it("adds"',
    ),
]


@pytest.mark.parametrize(
    ("new", "needle"), [(n, k) for _, n, k in JS_ASSERTS], ids=[d for d, *_ in JS_ASSERTS]
)
def test_js_assertions_removed(tmp_path: Path, new: str, needle: str) -> None:
    found = analyze({JS: BASE_JS}, {JS: new}, tmp_path)
    line = new[: new.index(needle)].count("\n") + 1
    assert ("assertion-removed", JS, line) in rules(found), found


JS_HONEST = [
    (
        "a platform skip elsewhere",
        js_change('it("adds"', "it.skipIf(process.platform === 'no-such')(\"adds\""),
    ),
    (
        "runIf that holds",
        js_change('it("adds"', "it.runIf(process.platform !== 'no-such')(\"adds\""),
    ),
    (
        "a skip guarded in the body",
        js_change(
            "    sum(1, 1).should",
            "    if (process.env.CI) {\n      this.skip();\n    }\n    sum(1, 1).should",
        ),
    ),
    (
        "a conditional playwright skip",
        js_change(
            "    checkTwice(2);\n",
            "    test.skip(browserName === 'webkit', 'no');\n    checkTwice(2);\n",
        ),
    ),
    (
        "each with a table",
        js_change(
            '  it("adds", () => {\n    expect(sum(1, 2)).toBe(3);\n  });\n',
            '  it.each([[1, 2, 3]])("adds", (a, b, c) => {\n    expect(sum(a, b)).toBe(c);\n'
            "  });\n",
        ),
    ),
    (
        "each with a template table",
        js_change(
            '  it("adds", () => {\n    expect(sum(1, 2)).toBe(3);\n  });\n',
            '  it.each`\n    a | b\n    ${1} | ${2}\n  `("adds", ({ a, b }) => {\n'
            "    expect(sum(a, b)).toBe(3);\n  });\n",
        ),
    ),
    (
        "return expect",
        js_change(
            "    expect(sum(1, 2)).toBe(3);\n",
            "    return expect(Promise.resolve(sum(1, 2))).resolves.toBe(3);\n",
        ),
    ),
    (
        "a new test with a throw",
        js_change(
            "});\n",
            '  it("throws", () => {\n    if (sum(1, 1) !== 2) throw new Error("no");\n  });\n});\n',
        ),
    ),
    (
        "a new ava-style test",
        js_change("});\n", '  test("ava", (t) => {\n    t.is(sum(1, 1), 2);\n  });\n});\n'),
    ),
    (
        "a new node assert test",
        js_change(
            "});\n",
            '  it("node", () => {\n    assert.strictEqual(sum(1, 1), 2);\n'
            "    assert(false || true);\n  });\n});\n",
        ),
    ),
    (
        "not tests: test.step, a method, a definition",
        js_change(
            "});\n",
            '  test.step("x", () => {});\n  const o = { test() { return 1; } };\n'
            '  function it2() {}\n  /it\\(/.test("x");\n});\n',
        ),
    ),
    ("a typed arrow", js_change('it("adds", () => {', 'it("adds", async (): Promise<void> => {')),
]


@pytest.mark.parametrize("new", [n for _, n in JS_HONEST], ids=[d for d, _ in JS_HONEST])
def test_js_honest_changes(tmp_path: Path, new: str) -> None:
    assert analyze({JS: BASE_JS}, {JS: new}, tmp_path) == []


def test_js_new_test_that_asserts_nothing(tmp_path: Path) -> None:
    new = js_change("});\n", '  it("runs", () => {  // <-\n    sum(1, 1);\n  });\n});\n')
    found = analyze({JS: BASE_JS}, {JS: new}, tmp_path)
    assert rules(found) == {("test-asserts-nothing", JS, marked(new, "// <-"))}


def test_js_a_swallowing_catch_and_one_that_rethrows(tmp_path: Path) -> None:
    rethrows = js_change(
        "    expect(sum(1, 2)).toBe(3);\n",
        "    try {\n      expect(sum(1, 2)).toBe(3);\n    } catch (e) {\n      throw e;\n    }\n",
    )
    assert analyze({JS: BASE_JS}, {JS: rethrows}, tmp_path) == []


def test_js_which_files_are_tests(tmp_path: Path) -> None:
    assert tests_js.is_test_file("src/a.spec.tsx")
    assert tests_js.is_test_file("src/__tests__/a.js")
    assert not tests_js.is_test_file("node_modules/x/a.test.js")
    assert not tests_js.is_test_file("src/test.js")
    assert not tests_js.is_test_file("src/__tests__/data.json")


def test_js_feature_code_deleted_with_a_test(tmp_path: Path) -> None:
    code = "export function sum(a, b) { return a + b; }\nexport const twice = (a) => a * 2;\n"
    new = js_change('  test("twice", async () => {\n    checkTwice(2);\n  });\n', "")
    found = analyze(
        {JS: BASE_JS, "src/x.ts": code},
        {JS: new, "src/x.ts": "export function sum(a, b) { return a + b; }\n"},
        tmp_path,
    )
    # The test used checkTwice, whose body uses twice: only its own body counts.
    assert {f.rule for f in found} == {"test-removed"}
    new_body = BASE_JS.replace("    checkTwice(2);\n", "    expect(twice(2)).toBe(4);\n")
    found = analyze(
        {JS: new_body, "src/x.ts": code},
        {JS: new, "src/x.ts": "export function sum(a, b) { return a + b; }\n"},
        tmp_path,
    )
    assert {f.rule for f in found} == {"test-removed-with-feature"}


def test_mask_keeps_offsets_and_blanks_what_is_not_code() -> None:
    source = (
        "const a = x / 2; const re = /it\\('[/]/g; const s = 'it(\"x\")'; // it('c')\n"
        "const t = `a ${ {b: 1}.b } it('q')`; /* it('z') */ it('real', () => {});\n"
        "return /it\\(/.test(y); <p>Don't it('jsx')</p>\n"
    )
    masked = mask(source)
    assert len(masked) == len(source) and masked.count("\n") == source.count("\n")
    assert masked.count("it(") == 1
    assert "x / 2" in masked
    calls = JsFile("a.test.js", source).calls
    assert [c.title for c in calls] == ["real"]


def test_js_duplicate_titles_are_told_apart() -> None:
    source = 'it("a", () => { expect(1).toBe(x) });\nit("a", () => { expect(2).toBe(x) });\n'
    assert [c.qualname for c in JsFile("a.test.js", source).calls] == ["a", "a #2"]


def test_js_unbalanced_source_is_read_without_error() -> None:
    calls = {
        source: [c.qualname for c in JsFile("a.test.js", source).calls]
        for source in ('describe("a", () => {\n  it("b", () => {\n', "it.each(", "it.each`x", "it(")
    }
    assert calls == {
        'describe("a", () => {\n  it("b", () => {\n': ["a", "a > b"],
        "it.each(": [],
        "it.each`x": [],
        "it(": [],
    }


def test_a_test_gone_with_the_message_it_checked_is_a_notice(tmp_path: Path) -> None:
    code = (
        "def check(x):\n    if x < 0:\n"
        '        raise ValueError("negative numbers are not allowed here")\n'
    )
    test = (
        "import pytest\n\nfrom pkg.check import check\n\n\n"
        "def test_ok():\n    assert check(1) is None\n\n\n"
        "def test_negative():\n"
        '    with pytest.raises(ValueError, match="negative numbers are not allowed"):\n'
        "        check(-1)\n"
    )
    now_test = test[: test.index("def test_negative")]
    found = analyze(
        {"pkg/check.py": code, PY: test},
        {"pkg/check.py": "def check(x):\n    return None\n", PY: now_test},
        tmp_path,
    )
    assert [(f.rule, f.line) for f in found] == [("test-removed-with-feature", 10)]
    assert "negative numbers are not" in found[0].message
    # The message is still in the code: the test was taken away, not the behaviour.
    found = analyze(
        {"pkg/check.py": code, PY: test}, {"pkg/check.py": code + "\n", PY: now_test}, tmp_path
    )
    assert [f.rule for f in found] == ["test-removed"]


# -- the principle, not a list: what a name claims is not what a body does --------------------


def test_a_local_helper_is_judged_by_its_body_not_its_name(tmp_path: Path) -> None:
    new = change(
        "def test_add():\n    assert add(1, 2) == 3\n",
        "def assert_adds(a, b):\n    add(a, b)\n\n\ndef test_add():  # <-\n    assert_adds(1, 2)\n",
    )
    found = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
    assert rules(found) == {("assertion-removed", PY, marked(new, "# <-"))}


def test_an_always_true_conditional_expression(tmp_path: Path) -> None:
    new = change(
        "def test_add():\n    assert add(1, 2) == 3\n",
        "def test_add():  # <-\n    assert add(1, 2) == 3 if False else True\n",
    )
    found = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
    assert rules(found) == {("assertion-removed", PY, marked(new, "# <-"))}


@pytest.mark.parametrize("call", ["pytest.exit('done', returncode=0)", "os._exit(0)"])
def test_a_forced_exit_in_a_test(tmp_path: Path, call: str) -> None:
    new = change("import sys\n", "import os\nimport sys\n").replace(
        "    assert add(1, 2) == 3", f"    {call}  # <-\n    assert add(1, 2) == 3"
    )
    found = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
    assert ("exit-forced", PY, marked(new, "# <-")) in rules(found)


def test_a_class_renamed_out_of_python_classes(tmp_path: Path) -> None:
    new = change("class TestThings:", "class ThingChecks:")
    (finding,) = analyze({PY: BASE_PY}, {PY: new}, tmp_path)
    assert finding.rule == "test-removed"
    assert "renamed to ThingChecks::test_zero, which pytest does not collect" in finding.message


def test_pytest_check_asserts(tmp_path: Path) -> None:
    new = change(
        "class TestThings:",
        "def test_soft():\n    check.equal(add(1, 1), 2)\n\n\nclass TestThings:",
    )
    new = new.replace("import pytest\n", "import pytest\nfrom pytest_check import check\n", 1)
    assert analyze({PY: BASE_PY}, {PY: new}, tmp_path) == []


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("    expect(sum(1, 2)).toBe(sum(1, 2));\n", "checks a constant"),
        ("    if (false) {\n      expect(sum(1, 2)).toBe(3);\n    }\n", "never runs"),
        ("    assertSum(1, 2);\n", "no expect"),
    ],
)
def test_js_assertions_that_cannot_fail(tmp_path: Path, body: str, why: str) -> None:
    new = js_change("    expect(sum(1, 2)).toBe(3);\n", body).replace(
        'describe("sum"', 'function assertSum(a, b) {\n  sum(a, b);\n}\n\ndescribe("sum"'
    )
    found = analyze({JS: BASE_JS}, {JS: new}, tmp_path)
    (finding,) = found
    line = new[: new.index('it("adds"')].count("\n") + 1
    assert (finding.rule, finding.line) == ("assertion-removed", line)
    assert why in finding.message


def test_js_forced_exit_and_testing_library_queries(tmp_path: Path) -> None:
    new = js_change(
        "});\n",
        '  it("renders", () => {\n    render(view);\n    screen.getByText("hello");\n  });\n'
        "  afterAll(() => process.exit(0));\n});\n",
    )
    found = analyze({JS: BASE_JS}, {JS: new}, tmp_path)
    assert rules(found) == {("exit-forced", JS, new[: new.index("process.exit")].count("\n") + 1)}


# -- new tests for elsewhere, type tests, restructured files ----------------------------------


def test_a_new_test_for_another_platform_is_honest(tmp_path: Path) -> None:
    new = change(
        "class TestThings:",
        "@pytest.mark.skipif(sys.platform != 'no-such-platform', reason='elsewhere only')\n"
        "def test_elsewhere():\n    assert add(1, 1) == 2\n\n\n"
        "def test_elsewhere_too():\n    if sys.platform != 'no-such-platform':\n"
        "        pytest.skip('elsewhere only')\n    assert add(1, 1) == 2\n\n\n"
        "class TestThings:",
    )
    assert analyze({PY: BASE_PY}, {PY: new}, tmp_path) == []
    # The same skip on a test the base had takes it away here.
    existing = change(
        "def test_add():",
        "@pytest.mark.skipif(sys.platform != 'no-such-platform', reason='x')  # <-\n"
        "def test_add():",
    )
    found = analyze({PY: BASE_PY}, {PY: existing}, tmp_path)
    assert rules(found) == {("skip-added", PY, marked(existing, "# <-"))}


def test_js_a_new_test_for_another_platform_is_honest(tmp_path: Path) -> None:
    new = js_change(
        "});\n",
        "  it.skipIf(process.platform !== 'no-such')('elsewhere', () => {\n"
        "    expect(sum(1, 1)).toBe(2);\n  });\n});\n",
    )
    assert analyze({JS: BASE_JS}, {JS: new}, tmp_path) == []


def test_a_restructured_file_pairs_tests_by_what_they_check(tmp_path: Path) -> None:
    base = (
        "import pytest\n\nfrom pkg import make\n\n\n"
        "def test_multiple_bad_default():\n    with pytest.raises(TypeError):\n"
        "        make(multiple=True, default=False)\n"
    )
    now = (
        "import pytest\n\nfrom pkg import make\n\n\n"
        "@pytest.mark.parametrize('default', [[], [1]])\n"
        "def test_init_good_default_list(default):\n    make(multiple=True, default=default)\n\n\n"
        "def test_init_bad_default_list():\n    with pytest.raises(TypeError):\n"
        "        make(multiple=True, default=False)\n    with pytest.raises(TypeError):\n"
        "        make(multiple=True, default='x')\n"
    )
    found = analyze({PY: base}, {PY: now}, tmp_path)
    # The old test's check is the new "bad default" one's first; the "good default" one is
    # new, and asserts nothing.
    assert [(f.rule, f.line) for f in found] == [("test-asserts-nothing", 7)]
    # The same restructure, where no new test checks what the old one did (default=False
    # raising TypeError): the old test is gone, whatever words the new names share with it.
    dropped = now.replace("=False", "=1").replace("TypeError", "ValueError")
    found = analyze({PY: base}, {PY: dropped}, tmp_path)
    assert [(f.rule, f.line) for f in found] == [("test-removed", 6), ("test-asserts-nothing", 7)]


LOOPED = """\
import unittest

from pkg.deco import memoize


class MemoizeTest(unittest.TestCase):
    def test_rejects_non_caches(self):
        for cache in (None, 42):
            with self.assertRaisesRegex(TypeError, "callable"):
                memoize(cache)
"""
PARAMETRIZED = """\
import pytest

from pkg.deco import memoize, other


@pytest.mark.parametrize("cache", [None, 42])
def test_memoize_requires_callable(cache):
    with pytest.raises(TypeError, match="callable"):
        memoize(cache)
"""


@pytest.mark.parametrize(
    "now",
    [
        PARAMETRIZED,
        PARAMETRIZED.replace("[None, 42]", "[42, None]"),
        "import pytest\n\nfrom pkg.deco import memoize\n\n\n"
        "def test_memoize_requires_callable():\n    for cache in (None, 42):\n"
        "        with pytest.raises(TypeError, match='callable'):\n            memoize(cache)\n",
    ],
    ids=["parametrized", "cases-reordered", "loop-kept"],
)
def test_a_unittest_loop_over_values_renamed_as_a_parametrized_test_is_the_same_test(
    tmp_path: Path, now: str
) -> None:
    # Review 35: the same calls with the same values, the same exception expected (unittest's
    # assertRaisesRegex as pytest.raises(match=)), under a new name: a rename.
    assert analyze({PY: LOOPED}, {PY: now}, tmp_path) == []


@pytest.mark.parametrize(
    "now",
    [
        PARAMETRIZED.replace("    memoize(cache)", "    other(cache)"),
        PARAMETRIZED.replace("[None, 42]", "[1, 'x']"),
        PARAMETRIZED.replace("[None, 42]", "[None]"),
        PARAMETRIZED.replace("TypeError", "ValueError").replace('"callable"', '"cache"'),
    ],
    ids=["other-function", "other-values", "a-value-fewer", "other-exception"],
)
def test_a_unittest_loop_replaced_by_a_parametrized_test_of_something_else_is_removed(
    tmp_path: Path, now: str
) -> None:
    # The same shape, another check: another function called with the values, other values,
    # fewer of them, another exception expected. Not the old test renamed.
    found = analyze({PY: LOOPED}, {PY: now}, tmp_path)
    assert [f.rule for f in found] == ["test-removed"], found


def test_a_test_replaced_by_one_that_shares_a_word_of_its_name_is_removed(
    tmp_path: Path,
) -> None:
    base = (
        "import pytest\n\nfrom pkg.calc import tax, total\n\n\n"
        "def test_tax_zero():\n    assert tax(0) == 0.0\n\n\n"
        "def test_tax_ten():\n    assert tax(10) == pytest.approx(1.5)\n\n\n"
        "def test_total():\n    assert total(100) == pytest.approx(115.0)\n\n\n"
        "def test_negative():\n    with pytest.raises(ValueError):\n        tax(-1)\n"
    )
    replaced = (
        "import pytest\n\nfrom pkg.calc import tax, total\n\n\n"
        "def test_tax_positive():\n    assert tax(1) > 0\n\n\n"
        "def test_tax_negative_message():\n    with pytest.raises(ValueError, match='negative'):\n"
        "        tax(-5)\n\n\n"
        "def test_total_negative():\n    with pytest.raises(ValueError):\n        total(-1)\n\n\n"
        "def test_negative():\n    with pytest.raises(ValueError):\n        tax(-1)\n"
    )
    found = analyze({PY: base}, {PY: replaced}, tmp_path)
    assert [(f.rule, f.line) for f in found] == [
        ("test-removed", 6),
        ("test-removed", 10),
        ("test-removed", 14),
    ]
    # In the old tests' places, too: a place is no evidence of the same test.
    in_place = (
        "import pytest\n\nfrom pkg.calc import tax, total\n\n\n"
        "def test_tax_zero_or_more():\n    assert tax(0) >= 0\n\n\n"
        "def test_tax_ten_positive():\n    assert tax(10) > 0\n\n\n"
        "def test_total_positive():\n    assert total(100) > 0\n\n\n"
        "def test_negative():\n    with pytest.raises(ValueError):\n        tax(-1)\n"
    )
    found = analyze({PY: base}, {PY: in_place}, tmp_path)
    assert [f.rule for f in found] == ["test-removed"] * 3
    # Honest renames stay renames: a new name, a variable renamed, the body reformatted,
    # moved into a class or to another file, or edited while keeping what it checks.
    honest = (
        "import pytest\n\nfrom pkg.calc import tax, total\n\n\n"
        "def test_no_tax_on_nothing():\n    amount = tax(0)\n    assert amount == 0.0\n\n\n"
        "class TestTax:\n    def test_ten_percent(self):\n"
        "        assert tax(\n            10,\n        ) == pytest.approx(1.5)\n\n\n"
        "def test_negative():\n    with pytest.raises(ValueError):\n        tax(-1)\n"
    )
    moved = (
        "import pytest\n\nfrom pkg.calc import total\n\n\n"
        "def test_total_adds_the_tax():\n    assert total(100) == pytest.approx(115.0)\n"
    )
    second = "tests/test_total.py"
    assert analyze({PY: base}, {PY: honest, second: moved}, tmp_path) == []
    before = "def test_tax_zero():\n    value = tax(0)\n    assert value == 0.0\n"
    after = (
        "def test_zero():\n    result = tax(0)\n    assert result == pytest.approx(0.0)\n"
        "    assert isinstance(result, float)\n"
    )
    assert analyze({PY: before}, {PY: after}, tmp_path) == []


def test_a_test_split_in_two_or_two_merged_into_one_is_not_removed(tmp_path: Path) -> None:
    base = (
        "from pkg.calc import add, sub\n\n\n"
        "def test_math():\n    assert add(1, 2) == 3\n    assert sub(3, 1) == 2\n\n\n"
        "def test_more():\n    assert add(2, 2) == 4\n"
    )
    split = (
        "from pkg.calc import add, sub\n\n\n"
        "def test_adds():\n    assert add(1, 2) == 3\n\n\n"
        "def test_subtracts():\n    assert sub(3, 1) == 2\n\n\n"
        "def test_more():\n    assert add(2, 2) == 4\n"
    )
    assert analyze({PY: base}, {PY: split}, tmp_path) == []
    merged = (
        "from pkg.calc import add, sub\n\n\n"
        "def test_arithmetic():\n    assert add(1, 2) == 3\n    assert sub(3, 1) == 2\n"
        "    assert add(2, 2) == 4\n"
    )
    assert analyze({PY: base}, {PY: merged}, tmp_path) == []
    # The old test's call and value sprinkled into another test, unchecked: removed.
    sprinkled = base.replace(
        "def test_more():\n    assert add(2, 2) == 4\n",
        "def test_new():\n    assert sub(1, 1) == 0\n",
    ).replace(
        "    assert sub(3, 1) == 2\n", "    assert sub(3, 1) == 2\n    add(2, 2)\n    four = 4\n"
    )
    found = analyze({PY: base}, {PY: sprinkled}, tmp_path)
    assert [(f.rule, f.line) for f in found] == [("test-removed", 9)]
    # Split, with one half's check dropped for another: that half is no longer checked.
    dropped = split.replace("assert sub(3, 1) == 2", "assert sub(3, 1) > 0")
    found = analyze({PY: base}, {PY: dropped}, tmp_path)
    assert [(f.rule, f.line) for f in found] == [("test-removed", 4)]


FOLD_BASE = """\
import pytest

from pkg.calc import tax, total


def test_tax_zero():
    assert tax(0) == 0.0


def test_tax_ten():
    assert tax(10) == pytest.approx(1.5)


def test_total():
    assert total(100) == pytest.approx(115.0)
"""

FOLDED = """\
import pytest

from pkg.calc import tax, total


@pytest.mark.parametrize(("amount", "expected"), [(0, 0.0), (10, 1.5)])
def test_tax(amount, expected):
    assert tax(amount) == pytest.approx(expected)


def test_total():
    assert total(100) == pytest.approx(115.0)
"""


@pytest.mark.parametrize(
    "folded",
    [
        FOLDED,
        # Another spelling of the same cases: pytest.param, argnames as a string, a check
        # after them.
        FOLDED.replace(
            '("amount", "expected"), [(0, 0.0), (10, 1.5)]',
            '"amount,expected", [pytest.param(0, 0.0, id="zero"), (10, 1.5)]',
        ).replace(
            "    assert tax(amount) == pytest.approx(expected)",
            "    assert tax(amount) == pytest.approx(expected)\n    assert tax(amount) >= 0",
        ),
        # Into a parametrized test the base had, which gains the cases.
        FOLDED.replace("[(0, 0.0), (10, 1.5)]", "[(0, 0.0), (10, 1.5), (20, 3.0)]"),
    ],
)
def test_tests_folded_into_a_parametrized_one_are_not_removed(tmp_path: Path, folded: str) -> None:
    assert analyze({PY: FOLD_BASE}, {PY: folded}, tmp_path) == []
    base_with_host = FOLD_BASE.replace(
        "def test_tax_zero():",
        '@pytest.mark.parametrize(("amount", "expected"), [(20, 3.0)])\n'
        "def test_tax(amount, expected):\n    assert tax(amount) == pytest.approx(expected)\n\n\n"
        "def test_tax_zero():",
    )
    assert analyze({PY: base_with_host}, {PY: folded}, tmp_path) == []


@pytest.mark.parametrize(
    ("folded", "rules_found"),
    [
        # The failing case left out of the parametrization.
        (FOLDED.replace("[(0, 0.0), (10, 1.5)]", "[(10, 1.5)]"), ["test-removed"]),
        # Written with another expectation.
        (FOLDED.replace("[(0, 0.0), (10, 1.5)]", "[(0, 1.5), (10, 1.5)]"), ["test-removed"]),
        # Written, but marked to fail or skip.
        (
            FOLDED.replace("(0, 0.0), (10", "pytest.param(0, 0.0, marks=pytest.mark.xfail), (10"),
            ["skip-added", "test-removed"],
        ),
        (
            FOLDED.replace("(10, 1.5)]", "pytest.param(10, 1.5, marks=pytest.mark.skip)]"),
            ["skip-added", "test-removed"],
        ),
        # The parametrized test is skipped, rerun, or returns before the check.
        (
            FOLDED.replace("def test_tax(", "@pytest.mark.flaky(reruns=3)\ndef test_tax("),
            ["rerun-added", "test-removed", "test-removed"],
        ),
        (
            FOLDED.replace("def test_tax(", "@pytest.mark.skip\ndef test_tax("),
            ["skip-added", "test-removed", "test-removed"],
        ),
        (
            FOLDED.replace(
                "    assert tax(amount)",
                "    if amount == 0:\n        return\n    assert tax(amount)",
            ),
            ["test-removed", "test-removed"],
        ),
        # A case of the right values in a test that checks something else with them.
        (
            FOLDED.replace(
                "assert tax(amount) == pytest.approx(expected)", "assert tax(amount) >= 0"
            ),
            ["test-removed", "test-removed"],
        ),
    ],
)
def test_a_fold_that_does_not_run_the_removed_check_is_removal(
    tmp_path: Path, folded: str, rules_found: list[str]
) -> None:
    found = analyze({PY: FOLD_BASE}, {PY: folded}, tmp_path)
    assert sorted(f.rule for f in found) == rules_found, found


MERGE_BASE = """\
import pytest

from pkg.dump import dumps


@pytest.mark.parametrize(("value", "expected"), [(1, "1"), (2, "2")])
def test_dump_ints(value, expected):
    assert dumps(value) == expected


@pytest.mark.parametrize(("value", "expected"), [(True, "true"), (False, "false")])
def test_dump_bools(value, expected):
    assert dumps(value) == expected
"""

MERGED = """\
import pytest

from pkg.dump import dumps


@pytest.mark.parametrize(
    ("value", "expected"), [(1, "1"), (2, "2"), (True, "true"), (False, "false")]
)
def test_dump(value, expected):
    assert dumps(value) == expected
"""


@pytest.mark.parametrize(
    ("merged", "rules_found"),
    [
        (MERGED, []),
        # Into the first of them, which keeps its name.
        (MERGED.replace("def test_dump(", "def test_dump_ints("), []),
        # A case of the removed test left out, or written with another expectation.
        (MERGED.replace(', (False, "false")', ""), ["test-removed"]),
        (MERGED.replace('(False, "false")', '(False, "true")'), ["test-removed"]),
    ],
    ids=["into-a-new-test", "into-one-of-them", "a-case-left-out", "a-case-changed"],
)
def test_parametrized_tests_of_one_body_merged_into_one(
    tmp_path: Path, merged: str, rules_found: list[str]
) -> None:
    # Review 33: tomlkit merged two parametrized tests with the same body into one, their
    # cases in one list: each case still runs, as it was written.
    found = analyze({PY: MERGE_BASE}, {PY: merged}, tmp_path)
    assert sorted(f.rule for f in found) == rules_found, found


SPLIT_BASE = """\
import pytest

from pkg import ordinal


@pytest.mark.parametrize(("n", "expected"), [(1, "1st"), (2, "2nd"), (11, "11th"), (21, "21st")])
def test_ordinal(n, expected):
    assert ordinal(n) == expected
"""

SPLIT_WITH_A_HELPER = """\
import pytest

from pkg import ordinal


def check(n, expected):
    assert ordinal(n) == expected


@pytest.mark.parametrize(("n", "expected"), [(1, "1st"), (2, "2nd")])
def test_ordinal(n, expected):
    check(n, expected)


@pytest.mark.parametrize(("n", "expected"), [(11, "11th"), (21, "21st")])
def test_ordinal_teens(n, expected):
    check(n, expected)
"""


@pytest.mark.parametrize(
    ("split", "rules_found"),
    [
        (SPLIT_WITH_A_HELPER, []),
        # A helper that checks nothing of what the cases checked.
        (
            SPLIT_WITH_A_HELPER.replace("    assert ordinal(n) == expected", "    ordinal(n)"),
            ["tests-fewer"],
        ),
        # A helper that returns before its check, and one whose call is not plain.
        (
            SPLIT_WITH_A_HELPER.replace("    assert ordinal", "    return\n    assert ordinal"),
            ["tests-fewer"],
        ),
        (
            SPLIT_WITH_A_HELPER.replace(
                "    check(n, expected)", "    check(n, expected=expected)"
            ),
            ["tests-fewer"],
        ),
        # Red team 57: the helper's name bound again where the file's text does not show it.
        (SPLIT_WITH_A_HELPER + '\n\nglobals()["check"] = print\n', ["tests-fewer"]),
        (SPLIT_WITH_A_HELPER + '\n\nvars()["check"] = print\n', ["tests-fewer"]),
        (SPLIT_WITH_A_HELPER + "\n\nglobals().update(check=print)\n", ["tests-fewer"]),
        (SPLIT_WITH_A_HELPER + "\n\nfrom builtins import print as check\n", ["tests-fewer"]),
        (SPLIT_WITH_A_HELPER + "\n\ncheck = print\n", ["tests-fewer"]),
        (SPLIT_WITH_A_HELPER + '\n\n_g = globals\n_g()["check"] = print\n', ["tests-fewer"]),
        (SPLIT_WITH_A_HELPER + "\n\ncheck.__code__ = print.__code__\n", ["tests-fewer"]),
    ],
    ids=[
        "checks-kept",
        "check-dropped",
        "returns-first",
        "keyword-call",
        "rebound-by-globals",
        "rebound-by-vars",
        "rebound-by-update",
        "rebound-by-import",
        "rebound-by-assignment",
        "rebound-by-an-alias-of-globals",
        "code-replaced",
    ],
)
def test_a_parametrized_test_split_in_two_around_a_helper(
    tmp_path: Path, split: str, rules_found: list[str]
) -> None:
    # Review 33: humanize split a parametrized test in two, its check moved to a helper that
    # both call: the cases that moved still run the same check.
    found = analyze({PY: SPLIT_BASE}, {PY: split}, tmp_path)
    assert set(rules_found) <= {f.rule for f in found}, found
    assert bool(found) == bool(rules_found), found


CHECKS_BASE = """\
import pytest

from pkg.calc import tax


def test_tax_zero():
    r = tax(0)
    assert r == pytest.approx(0.0)


def test_tax_more():
    r = tax(10)
    assert r == pytest.approx(1.5)
    r = tax(20)
    assert r == pytest.approx(3.0)
"""

ONE_CASE_PER_CHECK = """\
import pytest

from pkg.calc import tax


@pytest.mark.parametrize(("amount", "expected"), [(0, 0.0), (10, 1.5), (20, 3.0)])
def test_tax(amount, expected):
    r = tax(amount)
    assert r == pytest.approx(expected)
"""


@pytest.mark.parametrize(
    "base",
    [
        CHECKS_BASE,
        # The test of many checks alone, in the base.
        CHECKS_BASE.replace(
            "def test_tax_zero():\n    r = tax(0)\n    assert r == pytest.approx(0.0)\n\n\n", ""
        ).replace("(0, 0.0), ", ""),
    ],
    ids=["two-tests-into-three-cases", "two-checks-into-two-cases"],
)
def test_a_test_of_many_checks_folded_into_a_case_per_check_is_not_removed(
    tmp_path: Path, base: str
) -> None:
    # Review 30 (parse): a test that checked two inputs in turn became a parametrized test
    # with a case for each; every statement still runs, with its values, in a case of its own.
    now = ONE_CASE_PER_CHECK if "tax(0)" in base else ONE_CASE_PER_CHECK.replace("(0, 0.0), ", "")
    assert analyze({PY: base}, {PY: now}, tmp_path) == []


@pytest.mark.parametrize(
    ("base", "now"),
    [
        # One check's expected value changed.
        (CHECKS_BASE, ONE_CASE_PER_CHECK.replace("(20, 3.0)", "(20, 4.0)")),
        # One check's case left out.
        (CHECKS_BASE, ONE_CASE_PER_CHECK.replace(", (20, 3.0)", "")),
        # Two checks of one result, the second found in another case after that case's own
        # calls: it asserts 3.0 of tax(7), not of tax(10).
        (
            "import pytest\n\nfrom pkg.calc import tax, total\n\n\n"
            "def test_tax_more():\n    r = tax(10)\n    t = total(10)\n"
            "    assert r == pytest.approx(1.5)\n    assert r == pytest.approx(3.0)\n",
            "import pytest\n\nfrom pkg.calc import tax, total\n\n\n"
            '@pytest.mark.parametrize(("amount", "expected"), [(10, 1.5), (7, 3.0)])\n'
            "def test_tax(amount, expected):\n    r = tax(amount)\n    t = total(amount)\n"
            "    assert r == pytest.approx(expected)\n",
        ),
    ],
    ids=["value-changed", "case-left-out", "check-of-another-call"],
)
def test_a_test_of_many_checks_split_over_cases_that_do_not_run_them_all_is_removed(
    tmp_path: Path, base: str, now: str
) -> None:
    found = analyze({PY: base}, {PY: now}, tmp_path)
    assert [(f.rule, f.message.split(" ")[0]) for f in found] == [
        ("test-removed", "tests/test_x.py::test_tax_more")
    ], found


def test_a_check_split_off_from_the_variable_it_read_is_not_folded(tmp_path: Path) -> None:
    # A case that reads a name the removed test bound in statements before it: the case
    # reads the module's `rate`, 20, where the removed test checked total(10).
    host = (
        "import pytest\n\nfrom pkg.calc import tax, total\n\nrate = 20\n\n\n"
        '@pytest.mark.parametrize(("check", "amount", "expected"), [(tax, 0, 0.0)])\n'
        "def test_checks(check, amount, expected):\n"
        "    assert check(amount) == pytest.approx(expected)\n"
    )
    base = host + (
        "\n\ndef test_rates():\n    rate = 10\n    assert tax(rate) == pytest.approx(1.5)\n"
        "    assert total(rate) == pytest.approx(11.5)\n"
    )
    now = host.replace("(tax, 0, 0.0)]", "(tax, 0, 0.0), (tax, 10, 1.5), (total, rate, 11.5)]")
    found = analyze({PY: base}, {PY: now}, tmp_path)
    assert [(f.rule, f.message.split(" ")[0]) for f in found] == [
        ("test-removed", "tests/test_x.py::test_rates")
    ], found


def test_js_a_test_replaced_by_one_that_shares_a_word_of_its_title_is_removed(
    tmp_path: Path,
) -> None:
    base = 'import { sum } from "./sum";\n\nit("adds", () => {\n  expect(sum(1, 2)).toBe(3);\n});\n'
    replaced = base.replace('"adds"', '"adds positives"').replace(
        "expect(sum(1, 2)).toBe(3)", "expect(sum(1, 1)).toBeGreaterThan(0)"
    )
    found = analyze({JS: base}, {JS: replaced}, tmp_path)
    assert [(f.rule, f.line) for f in found] == [("test-removed", 3)]
    renamed = base.replace('"adds"', '"adds two numbers"').replace(
        "expect(sum(1, 2)).toBe(3);", "const total = sum(1, 2);\n  expect(total).toBe(3);"
    )
    assert analyze({JS: base}, {JS: renamed}, tmp_path) == []


TYPES_TS = "src/types.test.ts"


def test_ts_type_tests_state_what_the_compiler_checks(tmp_path: Path) -> None:
    base = (
        'import { create } from "./x";\n\n'
        'it("creates", () => {\n  expect(create()).toBeTruthy();\n});\n'
    )
    new_tests = base.replace(
        "});\n",
        '});\n\nit("is typed", () => {\n  const store = create<{ n: number }>();\n  store;\n});\n'
        '\nit("satisfies", () => {\n  create() satisfies object;\n});\n'
        '\nit("errs", () => {\n  // @ts-expect-error: a number is no store\n  create(1);\n});\n',
    )
    assert analyze({JS: base}, {JS: new_tests}, tmp_path) == []
    # A file of type tests: what its tests state is what they check.
    plain = 'it("infers", () => {\n  const s = create();\n  s.n * 2;\n});\n'
    assert analyze({}, {TYPES_TS: plain}, tmp_path) == []
    # An existing test that trades its expect for a type is no longer checked when it runs.
    typed = base.replace("  expect(create()).toBeTruthy();\n", "  const s: object = create();\n")
    found = analyze({JS: base}, {JS: typed}, tmp_path)
    assert [(f.rule, f.line) for f in found] == [("assertion-removed", 3)]


@pytest.mark.parametrize(
    "code_now",
    [
        "def _add(a, b):\n    return a + b\n\n\nadd = _add\n",
        "from pkg._impl import add\n",
        "import sys\n\nif sys.version_info >= (3,):\n\n    def add(a, b):\n        return a + b\n",
        "def text(x):\n    global add\n    add = str\n",
    ],
    ids=["an-alias", "imported", "a-def-under-an-if", "a-global"],
)
def test_a_name_the_module_still_has_in_another_form_is_not_deleted(
    tmp_path: Path, code_now: str
) -> None:
    # Red team 52: `def apply_tax` renamed `_apply_tax`, then `apply_tax = _apply_tax`: the
    # failing test of apply_tax went as "deleted with its feature", a notice.
    (tmp_path / "pkg").mkdir()  # pkg is the project's own package
    test = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    found = analyze(
        {"pkg/calc.py": "def add(a, b):\n    return a + b\n", PY: test},
        {"pkg/calc.py": code_now, PY: "from pkg.calc import add\n"},
        tmp_path,
    )
    assert [f.rule for f in found] == ["test-removed"]


def test_a_method_or_a_local_of_the_same_name_keeps_no_deleted_function(tmp_path: Path) -> None:
    # Review 32 (semver): `match()` deleted with its tests, while a class keeps a method
    # `match` and a function a local `match`: still deleted with its feature.
    (tmp_path / "pkg").mkdir()  # pkg is the project's own package
    test = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    now = (
        "class Version:\n    def add(self, other):\n        return other\n\n\n"
        "def deprecated(add=None):\n    add = add or 1\n    return add\n"
    )
    found = analyze(
        {"pkg/calc.py": "def add(a, b):\n    return a + b\n\n\n" + now, PY: test},
        {"pkg/calc.py": now, PY: "from pkg.calc import Version\n"},
        tmp_path,
    )
    assert [f.rule for f in found] == ["test-removed-with-feature"]


def test_deleting_an_unrelated_function_does_not_excuse_a_removed_test(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()  # pkg is the project's own package
    code = "def text(x):\n    return str(x)\n\n\ndef add(a, b):\n    return a + b\n"
    test = (
        "from pkg.calc import add\n\n\n"
        "def test_add():\n    result = add(1, 2)\n    assert result.text == '3'\n"
        "    assert result == 3\n"
    )
    found = analyze(
        {"pkg/calc.py": code, PY: test},
        {"pkg/calc.py": "def add(a, b):\n    return a + b\n", PY: "from pkg.calc import add\n"},
        tmp_path,
    )
    # The test used add (still there) and an attribute named text: not the deleted text().
    assert [f.rule for f in found] == ["test-removed"]
    found = analyze(
        {"pkg/calc.py": code, PY: test},
        {"pkg/calc.py": "def text(x):\n    return str(x)\n", PY: "from pkg.calc import add\n"},
        tmp_path,
    )
    assert [f.rule for f in found] == ["test-removed-with-feature"]


DEPRECATED_GETATTR = """\
import warnings

LIMIT = 10


def __getattr__(name):
    if name == "__version__":
        warnings.warn("use importlib.metadata", DeprecationWarning, stacklevel=2)
        return "1.0"
    if name in ("OLD_LIMIT", "OLDER_LIMIT"):
        warnings.warn("use LIMIT", DeprecationWarning, stacklevel=2)
        return LIMIT
    if name in _MOVED:
        warnings.warn("moved", DeprecationWarning, stacklevel=2)
        return _MOVED[name]
    raise AttributeError(name)


_MOVED = {"old_add": len}
"""


@pytest.mark.parametrize(
    ("used", "code_now", "rule"),
    [
        ("pkg.__version__", "", "test-removed-with-feature"),
        ("pkg.OLDER_LIMIT", "", "test-removed-with-feature"),
        ("pkg.old_add", "", "test-removed-with-feature"),
        # A constant is not a feature: inlined in a moment, it would excuse any test reading it.
        ("pkg.LIMIT", "", "test-removed"),
        # What the module still serves: the test was taken away, not the attribute.
        ("pkg.__version__", DEPRECATED_GETATTR.replace("LIMIT = 10", "LIMIT = 11"), "test-removed"),
        ("pkg.LIMIT", DEPRECATED_GETATTR + "\n# more\n", "test-removed"),
    ],
    ids=["version", "one-of-a-tuple", "a-dict-key", "a-constant", "still-served", "still-set"],
)
def test_a_test_gone_with_the_module_attribute_it_read_is_a_notice(
    tmp_path: Path, used: str, code_now: str, rule: str
) -> None:
    # Review 30 (marshmallow): the module's `__getattr__` (PEP 562) that served deprecated
    # attributes deleted with the test of their deprecation.
    (tmp_path / "pkg").mkdir()  # pkg is the project's own package
    test = (
        "import pytest\n\nimport pkg\n\n\ndef test_deprecated():\n"
        f"    with pytest.warns(DeprecationWarning):\n        {used}\n"
    )
    found = analyze(
        {"pkg/__init__.py": DEPRECATED_GETATTR, "tests/test_version.py": test},
        {"pkg/__init__.py": code_now},
        tmp_path,
    )
    assert [(f.rule, f.path) for f in found] == [(rule, "tests/test_version.py")], found


def test_js_a_test_of_the_packages_own_module_gone_with_it(tmp_path: Path) -> None:
    manifest = '{"name": "calc"}'
    test = (
        'import { half } from "calc/half";\n\n'
        'it("halves", () => {\n  expect(half(4)).toBe(2);\n});\n'
    )
    found = analyze(
        {"package.json": manifest, "src/half.ts": "export const half = (n) => n / 2;\n", JS: test},
        {"package.json": manifest},
        tmp_path,
    )
    assert [f.rule for f in found] == ["test-removed-with-feature"]
    assert tests_js.package_name("[]") is None and tests_js.package_name("{") is None


def test_a_pytester_test_that_matches_the_output_asserts(tmp_path: Path) -> None:
    # A review on real projects: structlog's new pytester test checks the run's output with
    # `result.stdout.fnmatch_lines(...)`, which fails the test when it does not match.
    now = (
        "def test_logs_in_a_users_suite(pytester):\n"
        "    pytester.makepyfile('def test_log():\\n    assert 0\\n')\n"
        "    result = pytester.runpytest()\n"
        "    result.stdout.fnmatch_lines(['*1 failed*'])\n\n\n"
        "def test_nothing_else(pytester):\n"
        "    result = pytester.runpytest()\n"
        "    result.stdout.no_fnmatch_line('*error*')\n\n\n"
        "def test_runs_only(pytester):\n"
        "    pytester.runpytest()\n"
    )
    found = analyze({}, {PY: now}, tmp_path)
    assert [(f.rule, f.line) for f in found] == [("test-asserts-nothing", 12)]


def skippable_at_base(base: dict[str, str], now: dict[str, str], root: Path) -> dict[str, bool]:
    """Each test of the base the change edits: whether the base could skip it already."""
    touched = {p: "modified" if p in base else "added" for p in now if base.get(p) != now[p]}
    nothing: Any = None  # no repository, change or configuration: the texts alone
    scan = Scan(root, nothing, nothing, nothing, Texts(base, now), touched, {})
    tests_python.analyze(scan)
    return {test.qualname: test.skipped_at_base for test in scan.edited_tests}


@pytest.mark.parametrize(
    ("files", "test"),
    [
        (  # a skipif on the test's class (structlog: Rich not installed)
            {PY: "import pytest\n\n\n@pytest.mark.skipif(True, reason='no rich')\n"
                 "class TestRich:\n    def test_render(self):\n        assert 1 == 1\n"},
            "TestRich::test_render",
        ),
        (  # a mark kept in a name of the module
            {PY: "import pytest\n\nneeds_numpy = pytest.mark.skipif(True, reason='numpy')\n\n\n"
                 "@needs_numpy\ndef test_array():\n    assert 1 == 1\n"},
            "test_array",
        ),
        (  # pytest's documented --runslow: a conftest turns the mark into a skip
            {PY: "import pytest\n\n\n@pytest.mark.slow\ndef test_big():\n    assert 1 == 1\n",
             "tests/conftest.py": "import pytest\n\n\ndef pytest_collection_modifyitems(config, "
             "items):\n    skip = pytest.mark.skip(reason='--runslow')\n    for item in items:\n"
             "        if 'slow' in item.keywords:\n            item.add_marker(skip)\n"},
            "test_big",
        ),
        (  # a helper of the tests' that raises SkipTest where the machine lacks a locale
            {PY: "from .utils import temp_locale\n\n\ndef test_date():\n"
                 "    with temp_locale('tr_TR'):\n        assert 1 == 1\n",
             "tests/utils.py": "import unittest\n\n\ndef temp_locale(name):\n"
             "    raise unittest.SkipTest(name)\n"},
            "test_date",
        ),
    ],
    ids=["class-skipif", "mark-in-a-name", "runslow-conftest", "skipping-helper"],
)  # fmt: skip
def test_an_edited_test_the_base_skipped_for_an_unchanged_reason_could_skip_at_base(
    tmp_path: Path, files: dict[str, str], test: str
) -> None:
    # A review on real projects: each was `skip-added` after an honest edit of the test.
    now = {**files, PY: files[PY].replace("assert 1 == 1", "assert 2 == 2")}
    assert skippable_at_base(files, now, tmp_path) == {test: True}
    # The same test with nothing that skips it at the base: the change's skip, if it skips.
    plain = {PY: "def test_other():\n    assert 1 == 1\n"}
    edited = {PY: plain[PY].replace("1 == 1", "2 == 2")}
    assert skippable_at_base(plain, edited, tmp_path) == {"test_other": False}


def test_a_python_file_in_a_specs_folder_is_a_test_by_its_name_only() -> None:
    # Red team 40: product code in `invoice/specs/`, imported by the package, was read as a
    # test and left out of patch coverage. `spec`/`specs` folders are JavaScript's convention.
    from pytest_agentgate.gates.changed import is_test_file

    assert not is_test_file("invoice/specs/bands.py")
    assert is_test_file("specs/test_bands.py") and is_test_file("tests/helpers.py")
    assert is_test_file("src/specs/bands.js") and is_test_file("testing/util.py")


@pytest.mark.parametrize(
    ("source", "cases"),
    [
        ("@pytest.mark.parametrize('out', [3])\ndef test_adds(out):\n    assert 1 + 2 == out\n", 1),
        # Red team 42: `usefixtures` lets pytest take an argname the function does not: its
        # body reads the module's name, not the case.
        (
            "out = 4\n\n@pytest.mark.usefixtures('out')\n@pytest.mark.parametrize('out', [3])\n"
            "def test_adds():\n    assert 1 + 2 == out\n",
            0,
        ),
        # Red team 41: the body binds the argname again before the check.
        (
            "@pytest.mark.parametrize('out', [3])\ndef test_adds(out):\n    out = 4\n"
            "    assert out\n",
            0,
        ),
    ],
    ids=["taken", "not-taken", "rebound"],
)
def test_the_cases_a_parametrized_test_runs_are_read_only_where_they_reach_it(
    source: str, cases: int
) -> None:
    module = Module("t.py", ast.parse("import pytest\n\n" + source), Settings())
    func = next(n for n in module.tree.body if isinstance(n, ast.FunctionDef))
    assert len(tests_python._instances(module, func)) == cases


BOUND_BASE = "from calc import tax\n\n\ndef test_tax():\n    assert tax(30) == 3.5\n"
UNITTEST_BOUND_BASE = (
    "import unittest\n\nfrom calc import tax\n\n\nclass T(unittest.TestCase):\n"
    "    def test_tax(self):\n        self.assertEqual(tax(30), 3.5)\n"
)


@pytest.mark.parametrize(
    ("base", "old", "new", "weakened"),
    [
        (BOUND_BASE, "== 3.5", "<= 4.0", True),
        (UNITTEST_BOUND_BASE, "assertEqual(tax(30), 3.5)", "assertLessEqual(tax(30), 4.0)", True),
        (
            UNITTEST_BOUND_BASE,
            "assertEqual(tax(30), 3.5)",
            "assertAlmostEqual(tax(30), 3.5, delta=1)",
            True,
        ),
        (
            UNITTEST_BOUND_BASE,
            "assertEqual(tax(30), 3.5)",
            "assertAlmostEqual(tax(30), 3.5, places=0)",
            True,
        ),
        (
            UNITTEST_BOUND_BASE,
            "assertEqual(tax(30), 3.5)",
            "assertAlmostEqual(tax(30), 3.5)",
            False,
        ),
        (
            UNITTEST_BOUND_BASE,
            "assertEqual(tax(30), 3.5)",
            "assertAlmostEqual(tax(30), 3.5, delta=1e-9)",
            False,
        ),
    ],
    ids=[
        "eq-to-bound",
        "assertLessEqual",
        "almost-delta",
        "almost-places-0",
        "almost",
        "tiny-delta",
    ],
)
def test_an_expectation_turned_into_a_bound_or_a_wide_tolerance_is_weakened(
    tmp_path: Path, base: str, old: str, new: str, weakened: bool
) -> None:
    # Red team 58: `== 3.5` become `<= 4.0` (ordering was rated as exact as equality), and
    # `assertAlmostEqual(..., delta=1)` or `places=0` (its tolerance was never read).
    found = analyze({PY: base}, {PY: base.replace(old, new)}, tmp_path)
    assert ("assertion-weakened" in {f.rule for f in found}) == weakened, found


HELPED_BASE = (
    "from calc import tax\n\n\ndef check(got, want):\n    assert got == want\n\n\n"
    "def test_tax():\n    check(tax(30), 3.5)\n"
)


def test_a_decorator_put_over_the_asserting_helper_removes_its_checks(tmp_path: Path) -> None:
    # Red team 58: `@_quiet` over the `def check` the base's tests call, returning a function
    # that checks nothing; the test lines untouched.
    quiet = HELPED_BASE.replace(
        "def check(", "def _quiet(f):\n    return lambda *a: None\n\n\n@_quiet\ndef check("
    )
    found = analyze({PY: HELPED_BASE}, {PY: quiet}, tmp_path)
    assert [f.rule for f in found] == ["assertion-removed"], found
    # A new test calling the same helper is honest work.
    more = HELPED_BASE + "\n\ndef test_small():\n    check(tax(1), 0.6)\n"
    assert analyze({PY: HELPED_BASE}, {PY: more}, tmp_path) == []


def test_a_module_that_sets_or_reads_attributes_of_objects_keeps_its_helpers(
    tmp_path: Path,
) -> None:
    # Honest work: `setattr` on an object and `obj.__dict__` read in a test of the change bind
    # no name of the module; the base's tests still check through their helper.
    more = HELPED_BASE + (
        "\n\nclass Box:\n    pass\n\n\ndef test_box():\n    box = Box()\n"
        '    setattr(box, "size", 3)\n    check(box.__dict__, {"size": 3})\n'
    )
    assert analyze({PY: HELPED_BASE}, {PY: more}, tmp_path) == []
    split = SPLIT_WITH_A_HELPER + '\n\ndef test_attr():\n    setattr(object(), "x", 1)\n'
    found = analyze({PY: SPLIT_BASE}, {PY: split}, tmp_path)
    assert "tests-fewer" not in {f.rule for f in found}, found
