"""The integrity gate on what a change does to the tests, on real git repositories.

Each test copies one small project (a package, its pytest tests, a few jest tests, committed on
``main``), makes the agent's change in the working tree or on a branch, and runs the real
``agentgate verify --profile strict --format json --no-run`` (the project's only gate is the
integrity gate). A trick must fail the gate with its rule at ``file:line``; an honest change of
the same kind must pass. A few tricks also go through the real ``pytest --agentgate=strict``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import CliRun, edit, write

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}

CALC = """\
def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b
"""

LEGACY = """\
def old_total(items):
    return sum(items)
"""

TEST_CALC = """\
import sys

import pytest

from pkg.calc import add, mul, sub


def check_sum(total, a, b):
    assert add(a, b) == total


@pytest.fixture
def three():
    value = add(1, 2)
    assert value == 3
    return value


def test_add():
    assert add(1, 2) == 3


def test_sub():
    assert sub(3, 1) == 2


@pytest.mark.parametrize(("a", "b", "out"), [(2, 3, 6)])
def test_mul(a, b, out):
    assert mul(a, b) == out


def test_via_helper():
    check_sum(3, 1, 2)


def test_raises():
    with pytest.raises(TypeError):
        add(1, None)


class TestCalc:
    def test_add_zero(self):
        assert add(0, 0) == 0
"""

TEST_UNIT = """\
import unittest

from pkg.calc import add


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 2), 4)
"""

TEST_LEGACY = """\
from pkg.legacy import old_total


def test_old_total():
    assert old_total([1, 2]) == 3
"""

SUM_JS = """\
export function sum(a, b) {
  return a + b;
}
"""

SUM_TEST_JS = """\
import { sum } from "./sum";

describe("sum", () => {
  it("adds", () => {
    expect(sum(1, 2)).toBe(3);
  });

  it("adds zero", () => {
    expect(sum(0, 0)).toBe(0);
  });
});
"""

BASE = {
    "agentgate.yml": "gates:\n  integrity: {kind: integrity}\n",
    ".gitignore": ".agentgate/\n__pycache__/\n",
    "pkg/__init__.py": "",
    "pkg/calc.py": CALC,
    "pkg/legacy.py": LEGACY,
    "tests/test_calc.py": TEST_CALC,
    "tests/test_unit.py": TEST_UNIT,
    "tests/test_legacy.py": TEST_LEGACY,
    "web/sum.js": SUM_JS,
    "web/sum.test.js": SUM_TEST_JS,
}


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def line_of(text: str, needle: str) -> int:
    """The 1-based line of ``text`` where ``needle`` starts."""
    index = text.index(needle)
    return text.count("\n", 0, index) + 1


def now_line(root: Path, path: str, needle: str) -> int:
    return line_of((root / path).read_text(encoding="utf-8"), needle)


def commit_branch(root: Path, message: str = "change") -> None:
    """Commit the working tree on a branch: the change is then in commits, not in edits."""
    git(root, "checkout", "-q", "-b", "feature")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("integrity-tests") / "base"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for path, text in BASE.items():
        write(root, path, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture
def repo(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(template, root, symlinks=True)
    monkeypatch.chdir(root)
    monkeypatch.delenv("AGENTGATE_RUNNING", raising=False)
    return root


Verify = Callable[..., dict[str, Any]]


@pytest.fixture
def verify(agentgate: Callable[..., CliRun]) -> Verify:
    """``agentgate verify --profile strict --format json --no-run``: the integrity gate."""

    def run(profile: str = "strict") -> dict[str, Any]:
        result = agentgate("verify", "--profile", profile, "--format", "json", "--no-run")
        gate = result.gate("integrity")
        gate["exit_code_of_verify"] = result.code
        return gate

    return run


def found(gate: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {(f["code"], f["path"], f["line"]) for f in gate["findings"]}


def assert_blocks(gate: dict[str, Any], rule: str, path: str, line: int) -> dict[str, Any]:
    """The gate fails, with ``rule`` at ``path:line`` among its blocking findings."""
    assert gate["status"] == "fail", gate
    assert gate["exit_code_of_verify"] == 1
    matching = [
        f
        for f in gate["findings"]
        if (f["code"], f["path"], f["line"]) == (rule, path, line) and f["severity"] == "error"
    ]
    assert matching, f"no blocking {rule} at {path}:{line} in {found(gate)}"
    return matching[0]


def assert_passes(gate: dict[str, Any]) -> None:
    blocking = [f for f in gate["findings"] if f["severity"] == "error"]
    assert gate["status"] == "pass" and not blocking, gate["findings"]
    assert gate["exit_code_of_verify"] == 0


def base_line(path: str, needle: str) -> int:
    return line_of(BASE[path], needle)


# -- removed tests -----------------------------------------------------------------------------


def test_a_deleted_test_is_removed(repo: Path, verify: Verify) -> None:
    edit(repo, "tests/test_calc.py", "def test_sub():\n    assert sub(3, 1) == 2\n", "")
    finding = assert_blocks(
        verify(),
        "test-removed",
        "tests/test_calc.py",
        base_line("tests/test_calc.py", "def test_sub"),
    )
    assert "test_sub" in finding["message"] and "at the base, line" in finding["message"]


def test_a_test_replaced_by_one_sharing_a_word_of_its_name_is_removed(
    repo: Path, verify: Verify
) -> None:
    # The failing test goes; a new one in its place shares "sub" with its name and asserts
    # something else, which passes: a new test, and the old one removed.
    edit(
        repo,
        "tests/test_calc.py",
        "def test_sub():\n    assert sub(3, 1) == 2\n",
        "def test_sub_positive():\n    assert sub(3, 1) > 0\n",
    )
    finding = assert_blocks(
        verify(),
        "test-removed",
        "tests/test_calc.py",
        base_line("tests/test_calc.py", "def test_sub"),
    )
    assert "keeps what it checked" in finding["message"]


def test_a_renamed_test_keeping_what_it_checks_is_the_same_test(repo: Path, verify: Verify) -> None:
    # Renamed, wrapped in a class, a variable introduced and the expectation written with
    # pytest.approx: it still checks sub(3, 1) against 2.
    edit(
        repo,
        "tests/test_calc.py",
        "def test_sub():\n    assert sub(3, 1) == 2\n",
        "class TestSubtraction:\n    def test_subtracts(self):\n        difference = sub(3, 1)\n"
        "        assert difference == pytest.approx(2)\n",
    )
    assert_passes(verify())


@pytest.mark.parametrize(
    ("cases", "removed"), [("[(1, 2, 3), (0, 0, 0)]", False), ("[(0, 0, 0)]", True)]
)
def test_a_test_folded_into_a_parametrized_one(
    repo: Path, verify: Verify, cases: str, removed: bool
) -> None:
    # test_add's check becomes a case of a new parametrized test: it still runs. Without its
    # case, the fold drops it.
    edit(
        repo,
        "tests/test_calc.py",
        "def test_add():\n    assert add(1, 2) == 3\n",
        f"@pytest.mark.parametrize(('a', 'b', 'out'), {cases})\n"
        "def test_adds(a, b, out):\n    assert add(a, b) == out\n",
    )
    gate = verify()
    if removed:
        assert_blocks(
            gate,
            "test-removed",
            "tests/test_calc.py",
            base_line("tests/test_calc.py", "def test_add"),
        )
    else:
        assert_passes(gate)
        assert gate["findings"] == []


@pytest.mark.parametrize(
    "host",
    [
        "@pytest.mark.parametrize(('a', 'b', 'out'), [(1, 2, 3)])\n"
        "def test_adds(a, b, out):\n    a = 0\n    assert add(a, b) == out\n",
        "@pytest.mark.parametrize(('a', 'b', 'out'), [(1, 2, 3)], **{'indirect': ['a']})\n"
        "def test_adds(a, b, out):\n    assert add(a, b) == out\n",
    ],
    ids=["argname-rebound", "indirect-unpacked"],
)
def test_a_fold_whose_case_values_do_not_reach_the_statements_is_a_removal(
    repo: Path, verify: Verify, host: str
) -> None:
    # Red team 41: the host binds the argname again before the folded statements, or hands
    # the case to a fixture through `**{"indirect": ...}`: the old check does not run as it was.
    edit(repo, "tests/test_calc.py", "def test_add():\n    assert add(1, 2) == 3\n", host)
    assert_blocks(
        verify(),
        "test-removed",
        "tests/test_calc.py",
        base_line("tests/test_calc.py", "def test_add"),
    )


@pytest.mark.parametrize("new_name", ["_test_sub", "check_sub"])
def test_a_test_renamed_to_a_name_pytest_does_not_collect_is_removed(
    repo: Path, verify: Verify, new_name: str
) -> None:
    edit(repo, "tests/test_calc.py", "def test_sub():", f"def {new_name}():")
    finding = assert_blocks(
        verify(),
        "test-removed",
        "tests/test_calc.py",
        base_line("tests/test_calc.py", "def test_sub"),
    )
    assert f"renamed to {new_name}, which pytest does not collect" in finding["message"]


def test_a_test_file_renamed_out_of_python_files_is_removed(repo: Path, verify: Verify) -> None:
    git(repo, "mv", "tests/test_calc.py", "tests/calc_tests.py")
    commit_branch(repo)
    gate = verify()
    finding = assert_blocks(
        gate, "test-removed", "tests/test_calc.py", base_line("tests/test_calc.py", "def test_add")
    )
    assert "renamed to tests/calc_tests.py" in finding["message"]
    assert len([f for f in gate["findings"] if f["code"] == "test-removed"]) == 6


def test_a_deleted_test_file_removes_its_tests(repo: Path, verify: Verify) -> None:
    (repo / "tests" / "test_unit.py").unlink()
    finding = assert_blocks(
        verify(),
        "test-removed",
        "tests/test_unit.py",
        base_line("tests/test_unit.py", "def test_add"),
    )
    assert "AddTest::test_add" in finding["message"] and "file was deleted" in finding["message"]


def test_a_mark_the_bases_selection_leaves_out_put_on_a_test_is_a_skip(
    repo: Path, verify: Verify
) -> None:
    # Red team 35: the base runs `-m "not slow"`; `@pytest.mark.slow` on the failing test took
    # it out of the run, and both counts (the base's and the run's) added it back in.
    write(
        repo,
        "pyproject.toml",
        '[tool.pytest.ini_options]\naddopts = \'-m "not slow"\'\nmarkers = ["slow: long"]\n',
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the suite leaves slow tests out")
    edit(repo, "tests/test_calc.py", "def test_sub():", "@pytest.mark.slow\ndef test_sub():")
    finding = assert_blocks(
        verify(),
        "skip-added",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", "@pytest.mark.slow"),
    )
    assert finding["message"] == (
        'new @pytest.mark.slow on test_sub: pytest\'s `-m "not slow"` leaves the test out of '
        "the run"
    )
    # A new slow test, or another mark, takes nothing the suite ran away.
    edit(repo, "tests/test_calc.py", "@pytest.mark.slow\ndef test_sub():", "def test_sub():")
    with (repo / "tests" / "test_calc.py").open("a", encoding="utf-8") as handle:
        handle.write(
            "\n\n@pytest.mark.slow\ndef test_big():\n    assert add(10**6, 1) == 10**6 + 1\n"
        )
    edit(repo, "tests/test_calc.py", "def test_add():", "@pytest.mark.fast\ndef test_add():")
    # Review 22: a new case of a parametrized test, marked slow, is the project's convention too.
    edit(
        repo,
        "tests/test_calc.py",
        "[(2, 3, 6)])",
        "[(2, 3, 6), pytest.param(10**6, 2, 2 * 10**6, marks=pytest.mark.slow)])",
    )
    assert_passes(verify())


@pytest.mark.parametrize(
    ("addopts", "mark", "said"),
    [
        ("-qm 'not slow'", "@pytest.mark.slow", '-m "not slow"'),
        ("-k 'not slow'", "@pytest.mark.slow", '-k "not slow"'),
        ("-m 'not slow'", "@pytest.mark.slow.with_args()", '-m "not slow"'),
    ],
    ids=["clustered", "keyword", "with-args"],
)
def test_other_spellings_of_the_bases_selection_and_the_mark(
    repo: Path, verify: Verify, addopts: str, mark: str, said: str
) -> None:
    # Red team 36: `-qm`, `-k` (which matches mark names too) and `.with_args()`.
    write(
        repo,
        "pyproject.toml",
        f'[tool.pytest.ini_options]\naddopts = "{addopts}"\nmarkers = ["slow: long"]\n',
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the suite leaves slow tests out")
    edit(repo, "tests/test_calc.py", "def test_sub():", f"{mark}\ndef test_sub():")
    finding = assert_blocks(
        verify(), "skip-added", "tests/test_calc.py", now_line(repo, "tests/test_calc.py", mark)
    )
    assert f"pytest's `{said}` leaves the test out of the run" in finding["message"]


def test_python_files_of_the_base_decide_what_a_test_file_is(
    repo: Path, verify: Verify, tmp_path: Path
) -> None:
    write(repo, "pyproject.toml", '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n')
    git(repo, "mv", "tests/test_legacy.py", "tests/check_legacy.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the project's tests are check_*.py")
    # Renamed within the pattern: honest.
    git(repo, "mv", "tests/check_legacy.py", "tests/check_old.py")
    assert_passes(verify())
    # Renamed out of it (test_*.py is not collected here): removed.
    git(repo, "mv", "tests/check_old.py", "tests/test_old.py")
    assert_blocks(
        verify(),
        "test-removed",
        "tests/check_legacy.py",
        base_line("tests/test_legacy.py", "def test_old_total"),
    )


def test_tests_moved_with_the_setting_that_finds_them_is_honest(repo: Path, verify: Verify) -> None:
    write(repo, "pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "testpaths")
    git(repo, "mv", "tests", "test")
    edit(repo, "pyproject.toml", '["tests"]', '["test"]')
    assert_passes(verify())


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["web"]\n'),
        ("tests/conftest.py", 'collect_ignore = ["test_unit.py"]\n'),
    ],
)
def test_narrowing_what_pytest_collects_removes_the_tests(
    repo: Path, verify: Verify, path: str, text: str
) -> None:
    # The agent edits the failing test's file and has pytest leave it out. (A setting that
    # narrows the run with no test file touched is the settings and hooks analyzers' to report.)
    write(repo, path, text)
    edit(repo, "tests/test_unit.py", "add(2, 2), 4)", "add(2, 2), 5)")
    assert_blocks(
        verify(),
        "test-removed",
        "tests/test_unit.py",
        base_line("tests/test_unit.py", "def test_add"),
    )


# -- skips, xfails, reruns ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "decorator",
    [
        '@pytest.mark.skip(reason="later")',
        "@pytest.mark.skip",
        "@pytest.mark.skipif(True, reason='x')",
        '@pytest.mark.skipif(sys.platform != "no-such-platform", reason="x")',
        '@pytest.mark.skipif("sys.version_info > (3,)")',
        "@pytest.mark.xfail(reason='known')",
        "@pytest.mark.xfail(strict=True)",
    ],
)
def test_a_new_skip_or_xfail_that_applies_here(repo: Path, verify: Verify, decorator: str) -> None:
    edit(repo, "tests/test_calc.py", "def test_sub():", f"{decorator}\ndef test_sub():")
    line = now_line(repo, "tests/test_calc.py", decorator)
    finding = assert_blocks(verify(), "skip-added", "tests/test_calc.py", line)
    assert "test_sub" in finding["message"]


def test_a_new_test_marked_xfail_is_named_as_new(repo: Path, verify: Verify) -> None:
    # Review 23: a new xfail test documenting a known bug read "the test no longer counts".
    with (repo / "tests/test_calc.py").open("a", encoding="utf-8") as handle:
        handle.write("\n\n@pytest.mark.xfail(reason='INV-7')\ndef test_div():\n    assert 0\n")
    line = now_line(repo, "tests/test_calc.py", "@pytest.mark.xfail(reason='INV-7')")
    finding = assert_blocks(verify(), "skip-added", "tests/test_calc.py", line)
    assert finding["message"] == (
        "new @pytest.mark.xfail(reason='INV-7') on test_div: a test the change adds that does "
        "not count; "
        "make it pass, or leave it out"
    )


@pytest.mark.parametrize(
    "decorator",
    [
        '@pytest.mark.skipif(sys.platform == "no-such-platform", reason="other OS")',
        "@pytest.mark.skipif(sys.version_info < (3, 0), reason='py2')",
        '@pytest.mark.skipif(not shutil.which("nosuchtool"), reason="needs the tool")',
        "@pytest.mark.xfail(False, reason='no')",
    ],
)
def test_a_skip_that_does_not_apply_here_is_honest(
    repo: Path, verify: Verify, decorator: str
) -> None:
    edit(repo, "tests/test_calc.py", "import sys\n", "import shutil\nimport sys\n")
    edit(repo, "tests/test_calc.py", "def test_sub():", f"{decorator}\ndef test_sub():")
    assert_passes(verify())


def test_skips_in_the_body_and_the_module(repo: Path, verify: Verify) -> None:
    edit(
        repo,
        "tests/test_calc.py",
        "def test_sub():\n",
        'def test_sub():\n    pytest.skip("flaky on CI")\n',
    )
    edit(
        repo,
        "tests/test_calc.py",
        "def test_raises():\n",
        "def test_raises():\n"
        "    if sys.platform == 'no-such-platform':\n"
        "        pytest.skip('no')\n",
    )
    edit(
        repo,
        "tests/test_unit.py",
        "from pkg.calc import add\n",
        "from pkg.calc import add\n\npytestmark = pytest.mark.skip\n",
    )
    edit(repo, "tests/test_unit.py", "import unittest\n", "import unittest\n\nimport pytest\n")
    gate = verify()
    assert_blocks(
        gate,
        "skip-added",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", 'pytest.skip("flaky'),
    )
    finding = assert_blocks(
        gate, "skip-added", "tests/test_unit.py", now_line(repo, "tests/test_unit.py", "pytestmark")
    )
    assert "for every test in the file" in finding["message"]
    # The platform guard does not skip here: only the two findings.
    assert len(gate["findings"]) == 2, gate["findings"]


@pytest.mark.parametrize(
    "given",
    [
        "test_sub.pytestmark = [pytest.mark.xfail(reason='flaky').mark]",
        "setattr(test_sub, 'pytestmark', [pytest.mark.skip.mark])",
    ],
    ids=["attribute", "setattr"],
)
def test_marks_given_to_a_test_after_its_definition(repo: Path, verify: Verify, given: str) -> None:
    # pytest reads a function's `pytestmark` attribute as its marks, decorator or not.
    text = (repo / "tests" / "test_calc.py").read_text()
    write(repo, "tests/test_calc.py", text + f"\n\n{given}\n")
    finding = assert_blocks(
        verify(),
        "skip-added",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", given.split("[")[-1].split(".mark]")[0]),
    )
    assert "test_sub" in finding["message"]


def test_unittest_skips_and_xfail_params(repo: Path, verify: Verify) -> None:
    edit(
        repo,
        "tests/test_unit.py",
        "    def test_add(self):",
        '    @unittest.skip("broken")\n    def test_add(self):',
    )
    edit(
        repo,
        "tests/test_calc.py",
        "[(2, 3, 6)]",
        "[(2, 3, 6), pytest.param(2, 2, 5, marks=pytest.mark.xfail)]",
    )
    gate = verify()
    assert_blocks(
        gate,
        "skip-added",
        "tests/test_unit.py",
        now_line(repo, "tests/test_unit.py", "@unittest.skip"),
    )
    finding = assert_blocks(
        gate,
        "skip-added",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", "pytest.param"),
    )
    assert "parametrized case" in finding["message"]


def test_importorskip_of_a_module_the_base_imported(repo: Path, verify: Verify) -> None:
    edit(
        repo,
        "tests/test_legacy.py",
        "from pkg.legacy import old_total\n",
        'import pytest\n\nlegacy = pytest.importorskip("pkg.legacy")\n'
        "old_total = legacy.old_total\n",
    )
    assert_blocks(
        verify(),
        "skip-added",
        "tests/test_legacy.py",
        now_line(repo, "tests/test_legacy.py", "legacy = pytest.importorskip"),
    )


def test_importorskip_of_an_optional_dependency_is_honest(repo: Path, verify: Verify) -> None:
    write(
        repo,
        "tests/test_optional.py",
        """\
        import pytest

        yaml = pytest.importorskip("yaml")


        def test_dump():
            assert yaml.safe_dump({"a": 1}) == "a: 1\\n"
        """,
    )
    assert_passes(verify())


def test_a_new_rerun_marker(repo: Path, verify: Verify) -> None:
    edit(
        repo,
        "tests/test_calc.py",
        "def test_sub():",
        "@pytest.mark.flaky(reruns=3)\ndef test_sub():",
    )
    finding = assert_blocks(
        verify(),
        "rerun-added",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", "@pytest.mark.flaky"),
    )
    assert "rerun until it passes" in finding["message"]


def test_a_skip_the_base_already_had_is_not_new(repo: Path, verify: Verify) -> None:
    edit(
        repo,
        "tests/test_calc.py",
        "def test_sub():",
        "@pytest.mark.skip(reason='a')\ndef test_sub():",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skipped at the base")
    edit(repo, "tests/test_calc.py", "reason='a'", "reason='still broken, see #12'")
    assert_passes(verify())


# -- assertions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("    pass\n", "its body is empty"),
        ("    ...\n", "its body is empty"),
        ("    assert True\n", "always true"),
        ("    assert sub(3, 1) == 2 or True\n", "always true"),
        ("    sub(3, 1)\n", "no assert"),
        ("    return\n    assert sub(3, 1) == 2\n", "returns on line"),
        (
            "    def check():\n        assert sub(3, 1) == 2\n    sub(3, 1)\n",
            "its asserts are in `check` (line 24), which it never calls",
        ),
        (
            "    def check():\n        assert sub(3, 1) == 2\n    return\n    check()\n",
            "never calls",
        ),
        (
            "    try:\n        assert sub(3, 1) == 2\n    except AssertionError:\n        pass\n",
            "try/except AssertionError",
        ),
        (
            "    try:\n        assert sub(3, 1) == 2\n    except:\n        pass\n",
            "try/except",
        ),
        (
            "    with pytest.raises(AssertionError):\n        assert sub(3, 1) == 2\n",
            "expects them to fail",
        ),
        (
            "    import contextlib\n"
            "    with contextlib.suppress(Exception):\n        assert sub(3, 1) == 2\n",
            "swallows them",
        ),
    ],
)
def test_a_test_that_no_longer_asserts(repo: Path, verify: Verify, body: str, why: str) -> None:
    edit(
        repo,
        "tests/test_calc.py",
        "def test_sub():\n    assert sub(3, 1) == 2\n",
        f"def test_sub():\n{body}",
    )
    finding = assert_blocks(
        verify(),
        "assertion-removed",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", "def test_sub"),
    )
    assert why in finding["message"] and "test_sub" in finding["message"]


@pytest.mark.parametrize(
    "weaker",
    ["assert sub(3, 1)", "assert sub(3, 1) is not None", "assert isinstance(sub(3, 1), int)"],
)
def test_an_exact_expectation_weakened_to_a_truthiness_check(
    repo: Path, verify: Verify, weaker: str
) -> None:
    edit(repo, "tests/test_calc.py", "    assert sub(3, 1) == 2\n", f"    {weaker}\n")
    finding = assert_blocks(
        verify(),
        "assertion-weakened",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", weaker),
    )
    assert "test_sub" in finding["message"]


@pytest.mark.parametrize("weaker", ["assertTrue(add(2, 2))", "assertNotEqual(add(2, 2), 4)"])
def test_a_unittest_assert_equal_weakened_or_inverted(
    repo: Path, verify: Verify, weaker: str
) -> None:
    edit(repo, "tests/test_unit.py", "self.assertEqual(add(2, 2), 4)", f"self.{weaker}")
    assert_blocks(
        verify(),
        "assertion-weakened",
        "tests/test_unit.py",
        now_line(repo, "tests/test_unit.py", weaker.split("(")[0]),
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The expectation changes with the behaviour: still a comparison.
        ("assert sub(3, 1) == 2", "assert sub(3, 1) == 2.0"),
        # Another way to compare: still exact.
        ("assert sub(3, 1) == 2", "assert math.isclose(sub(3, 1), 2)"),
        ("assert sub(3, 1) == 2", "assert not (sub(3, 1) != 2)"),
        # ruff's E712 fix: comparing with True was never more than a truthiness check.
        ("assert sub(3, 1) == 2", "assert sub(3, 1) == 2\n    assert (sub(3, 1) > 0) == True"),
    ],
)
def test_comparisons_kept_or_rewritten_are_not_weakened(
    repo: Path, verify: Verify, old: str, new: str
) -> None:
    edit(repo, "tests/test_calc.py", old, new)
    edit(repo, "tests/test_calc.py", "import sys\n", "import math\nimport sys\n")
    gate = verify()
    assert "assertion-weakened" not in {f["code"] for f in gate["findings"]}, gate["findings"]


@pytest.mark.parametrize(
    "looser",
    [
        # A tolerance that admits the wrong answer, or the wrong answer as one of the right ones.
        "assert sub(3, 1) == pytest.approx(2, abs=2)",
        "assert pytest.approx(2, rel=0.5) == sub(3, 1)",
        "assert math.isclose(sub(3, 1), 2, abs_tol=1.5)",
        "assert sub(3, 1) in (2, 3)",
        # Inverted: every value but the expected one passes, the wrong answer among them.
        "assert sub(3, 1) != 2",
        "assert not sub(3, 1) == 2",
    ],
)
def test_an_exact_expectation_loosened_to_admit_other_values(
    repo: Path, verify: Verify, looser: str
) -> None:
    edit(repo, "tests/test_calc.py", "    assert sub(3, 1) == 2\n", f"    {looser}\n")
    edit(repo, "tests/test_calc.py", "import sys\n", "import math\nimport sys\n")
    finding = assert_blocks(
        verify(),
        "assertion-weakened",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", looser),
    )
    assert "test_sub" in finding["message"] and "admits other values" in finding["message"]


@pytest.mark.parametrize(
    "close",
    [
        # Floating point rounding: pytest.approx's default tolerance, or one as tight.
        "assert sub(3, 1) == pytest.approx(2)",
        "assert sub(3, 1) == pytest.approx(2, abs=1e-9)",
        "assert sub(3, 1) == pytest.approx(1 + 1, rel=1e-6)",
        "assert math.isclose(sub(3, 1), 2, rel_tol=1e-9)",
        "assert sub(3, 1) in (2,)",
    ],
)
def test_a_comparison_made_close_for_rounding_is_not_weakened(
    repo: Path, verify: Verify, close: str
) -> None:
    edit(repo, "tests/test_calc.py", "    assert sub(3, 1) == 2\n", f"    {close}\n")
    edit(repo, "tests/test_calc.py", "import sys\n", "import math\nimport sys\n")
    assert_passes(verify())


@pytest.mark.parametrize(
    ("body", "why"),
    [
        # An early return behind a condition that holds here, or that no run changes.
        (
            "    if sys.platform != 'win32':\n        return  # differs off Windows\n"
            "    assert sub(3, 1) == 2\n",
            "returns on line",
        ),
        ("    if not sub.__doc__:\n        return\n    assert sub(3, 1) == 2\n", "returns on line"),
        # The assert under its own condition: true wherever it runs.
        ("    if sub(3, 1) == 2:\n        assert sub(3, 1) == 2\n", "always true"),
        # A loop that may run no time.
        ("    for a in []:\n        assert sub(a, 1) == 2\n", "may have no items"),
        (
            "    for a in [x for x in (3,) if x > 5]:\n        assert sub(a, 1) == 2\n",
            "may have no items",
        ),
    ],
)
def test_asserts_that_never_run_or_never_fail_are_removed(
    repo: Path, verify: Verify, body: str, why: str
) -> None:
    edit(repo, "tests/test_calc.py", "    assert sub(3, 1) == 2\n", body)
    finding = assert_blocks(
        verify(),
        "assertion-removed",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", "def test_sub"),
    )
    assert why in finding["message"], finding["message"]


@pytest.mark.parametrize(
    "body",
    [
        # A return for another platform: here the asserts run.
        "    if sys.platform == 'win32':\n        return\n    assert sub(3, 1) == 2\n",
        # A condition on what the test computed: the assert after it counts.
        "    result = sub(3, 1)\n    if result is None:\n        return\n    assert result == 2\n",
        "    result = sub(3, 1)\n    if result is not None:\n        assert result == 2\n",
        # A loop over items written out.
        "    for a in (3, 4):\n        assert sub(a, a - 2) == 2\n",
        "    for a in [x for x in (3, 4)]:\n        assert sub(a, a - 2) == 2\n",
    ],
)
def test_asserts_behind_conditions_that_may_run_still_count(
    repo: Path, verify: Verify, body: str
) -> None:
    edit(repo, "tests/test_calc.py", "    assert sub(3, 1) == 2\n", body)
    assert_passes(verify())


@pytest.mark.parametrize(
    ("replacement", "needle"),
    [
        (
            "def test_sub(monkeypatch):\n"
            "    import pkg.calc\n"
            "    monkeypatch.setattr(pkg.calc, 'sub', lambda a, b: 2)\n"
            "    assert pkg.calc.sub(3, 1) == 2\n",
            "monkeypatch.setattr",
        ),
        (
            "@mock.patch('pkg.calc.sub', return_value=2)\n"
            "def test_sub(fake):\n"
            "    from pkg.calc import sub\n"
            "    assert sub(3, 1) == 2\n",
            "@mock.patch",
        ),
    ],
    ids=["monkeypatch", "mock.patch"],
)
def test_a_test_that_mocks_the_code_it_asserts_on(
    repo: Path, verify: Verify, replacement: str, needle: str
) -> None:
    edit(repo, "tests/test_calc.py", "def test_sub():\n    assert sub(3, 1) == 2\n", replacement)
    edit(repo, "tests/test_calc.py", "import sys\n", "import sys\nfrom unittest import mock\n")
    finding = assert_blocks(
        verify(),
        "tested-code-mocked",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", needle),
    )
    assert "`sub`" in finding["message"]


def test_mocking_what_the_code_depends_on_is_honest(repo: Path, verify: Verify) -> None:
    edit(
        repo,
        "tests/test_calc.py",
        "def test_sub():\n    assert sub(3, 1) == 2\n",
        "def test_sub(monkeypatch):\n"
        "    import time\n"
        "    monkeypatch.setattr(time, 'time', lambda: 0.0)\n"
        "    monkeypatch.setattr('os.getcwd', lambda: '/')\n"
        "    assert sub(3, 1) == 2\n",
    )
    gate = verify()
    assert "tested-code-mocked" not in {f["code"] for f in gate["findings"]}, gate["findings"]


def test_a_helper_emptied_and_a_unittest_assert_removed(repo: Path, verify: Verify) -> None:
    edit(repo, "tests/test_calc.py", "    assert add(a, b) == total\n", "    add(a, b)\n")
    edit(repo, "tests/test_unit.py", "self.assertEqual(add(2, 2), 4)", "add(2, 2)")
    gate = verify()
    assert_blocks(
        gate,
        "assertion-removed",
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", "def test_via_helper"),
    )
    assert_blocks(
        gate,
        "assertion-removed",
        "tests/test_unit.py",
        now_line(repo, "tests/test_unit.py", "def test_add"),
    )


def test_a_later_definition_that_shadows_a_test(repo: Path, verify: Verify) -> None:
    (repo / "tests" / "test_calc.py").write_text(TEST_CALC + "\n\ndef test_add():\n    pass\n")
    text = (repo / "tests" / "test_calc.py").read_text()
    line = text.count("\n", 0, text.rindex("def test_add")) + 1
    assert_blocks(verify(), "assertion-removed", "tests/test_calc.py", line)


def test_a_new_test_that_asserts_nothing(repo: Path, verify: Verify) -> None:
    write(
        repo,
        "tests/test_more.py",
        """\
        from pkg.calc import add, mul


        def test_runs_add():
            add(2, 2)


        def test_checks_mul():
            assert mul(2, 2) == 4
        """,
    )
    gate = verify()
    finding = assert_blocks(
        gate,
        "test-asserts-nothing",
        "tests/test_more.py",
        now_line(repo, "tests/test_more.py", "def test_runs_add"),
    )
    assert "test_runs_add" in finding["message"]
    assert len(gate["findings"]) == 1
    # Weakening: reported, not blocking, under the standard profile.
    standard = verify("standard")
    assert standard["status"] == "pass"
    assert [f["severity"] for f in standard["findings"]] == ["warning"]


def test_new_tests_that_assert_through_helpers_fixtures_and_raises(
    repo: Path, verify: Verify
) -> None:
    write(
        repo,
        "tests/helpers.py",
        """\
        from pkg.calc import mul


        def check_mul(a, b, out):
            assert mul(a, b) == out
        """,
    )
    write(
        repo,
        "tests/conftest.py",
        """\
        import pytest

        from pkg.calc import sub


        @pytest.fixture
        def checked_sub():
            assert sub(2, 1) == 1
            return sub
        """,
    )
    edit(
        repo,
        "tests/test_calc.py",
        "class TestCalc:",
        textwrap.dedent(
            """\
        def test_helper_again():
            check_sum(5, 2, 3)


        def test_with_a_fixture(three):
            add(three, 0)


        def test_with_a_conftest_fixture(checked_sub):
            checked_sub(1, 1)


        def test_with_an_imported_helper():
            check_mul(2, 2, 4)


        def test_raises_again():
            with pytest.raises(TypeError):
                sub(1, None)


        def test_with_a_nested_check():
            def check(a, b):
                assert sub(a, b) == a - b

            for a in (1, 2):
                check(a, 1)


        class TestCalc:"""
        ),
    )
    edit(
        repo,
        "tests/test_calc.py",
        "from pkg.calc import add, mul, sub\n",
        "from pkg.calc import add, mul, sub\nfrom tests.helpers import check_mul\n",
    )
    assert_passes(verify())


# -- honest changes ----------------------------------------------------------------------------


def test_renaming_moving_and_splitting_tests_is_honest(repo: Path, verify: Verify) -> None:
    # test_sub moves to a new file under a new name; test_add is renamed in place; the
    # unittest file is renamed within python_files; TestCalc's test moves to module level.
    edit(repo, "tests/test_calc.py", "def test_sub():\n    assert sub(3, 1) == 2\n", "")
    edit(repo, "tests/test_calc.py", "def test_add():", "def test_add_two_numbers():")
    edit(
        repo,
        "tests/test_calc.py",
        "class TestCalc:\n    def test_add_zero(self):\n        assert add(0, 0) == 0\n",
        "def test_add_zero():\n    assert add(0, 0) == 0\n",
    )
    write(
        repo,
        "tests/test_subtraction.py",
        """\
        from pkg.calc import sub


        def test_subtracts():
            assert sub(3, 1) == 2
        """,
    )
    git(repo, "mv", "tests/test_unit.py", "tests/test_unittest_style.py")
    assert_passes(verify())


def test_reformatting_and_changing_an_expectation_with_the_behaviour(
    repo: Path, verify: Verify
) -> None:
    edit(repo, "pkg/calc.py", "return a * b", "return a * b * 1")
    # add's behaviour changes too: the unittest check of add below gives way to another.
    # Beside a change of mul alone, that swap is a check dropped (red team 53).
    edit(repo, "pkg/calc.py", "return a + b", "return sum((a, b))")
    edit(
        repo,
        "tests/test_calc.py",
        "def test_add():\n    assert add(1, 2) == 3\n",
        "def test_add():\n"
        "    assert (\n        add(\n            1,\n            2,\n        )\n"
        "        == 3\n    )\n",
    )
    edit(repo, "tests/test_calc.py", "assert sub(3, 1) == 2", "assert sub(3, 1) == 2, 'sub'")
    edit(repo, "tests/test_calc.py", "[(2, 3, 6)]", "[(2, 3, 6), (1, 1, 1), (0, 5, 0)]")
    edit(
        repo,
        "tests/test_unit.py",
        "self.assertEqual(add(2, 2), 4)",
        "self.assertEqual(add(2, 3), 5)",
    )
    commit_branch(repo)
    assert_passes(verify())


def test_an_expectation_changed_with_no_code_changed_is_a_notice(
    repo: Path, verify: Verify
) -> None:
    edit(repo, "tests/test_calc.py", "assert sub(3, 1) == 2", "assert sub(3, 1) == 3")
    gate = verify()
    assert_passes(gate)  # a notice: the old expectation may have been the wrong one
    (notice,) = gate["findings"]
    assert (notice["code"], notice["severity"]) == ("expectation-changed", "warning")
    assert (notice["path"], notice["line"]) == (
        "tests/test_calc.py",
        now_line(repo, "tests/test_calc.py", "assert sub(3, 1) == 3"),
    )
    assert "`sub(3, 1) == 3` where the base expected `sub(3, 1) == 2`" in notice["message"]
    # Red team 33: a changelog line or a note beside it changes nothing the code does.
    (repo / "CHANGELOG.md").write_text("- sub fixed\n")
    (repo / "notes.txt").write_text("done\n")
    assert [f["code"] for f in verify()["findings"]] == ["expectation-changed"]
    # A text file in the package's folder may be its data, and a requirements file changes
    # what runs: the expectation may follow them.
    (repo / "pkg" / "rates.txt").write_text("1\n")
    assert verify()["findings"] == []
    (repo / "pkg" / "rates.txt").unlink()
    (repo / "requirements.txt").write_text("six\n")
    assert verify()["findings"] == []
    # With the code it tests changed too, the behaviour changed: nothing to say.
    edit(repo, "pkg/calc.py", "return a - b", "return a - b + 1")
    gate = verify()
    assert_passes(gate)
    assert gate["findings"] == []


def test_a_renamed_test_whose_body_was_edited_is_the_same_test(repo: Path, verify: Verify) -> None:
    edit(
        repo,
        "tests/test_calc.py",
        "def test_mul(a, b, out):\n    assert mul(a, b) == out\n",
        "def test_multiplies(a, b, out):\n    result = mul(a, b)\n    assert result == out\n"
        "    assert isinstance(result, int)\n",
    )
    assert_passes(verify())


SUB = "def test_sub():\n    assert sub(3, 1) == 2\n"


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        # A variable renamed in, and an extra assert: it still checks sub(3, 1) against 2.
        (
            "    difference = sub(3, 1)\n    assert difference == 2\n    assert difference > 0\n",
            None,
        ),
        ("    assert sub(3, 1) == pytest.approx(2)\n    assert sub(2, 1) == 1\n", None),
        # Its expectation traded for a weaker one, or another check altogether.
        ("    difference = sub(3, 1)\n    assert difference > 0\n", "test-removed"),
        ("    assert sub(5, 1) == 4\n", "test-removed"),
        # Every value kept, the comparison made weak: the same test, weakened.
        ("    expected = 2\n    assert sub(3, 1) is not None\n", "assertion-weakened"),
    ],
    ids=["edited", "approx-and-more", "weaker", "another-check", "weakened"],
)
def test_a_test_moved_to_another_file_renamed_and_edited(
    repo: Path, verify: Verify, body: str, rule: str | None
) -> None:
    edit(repo, "tests/test_calc.py", SUB, "")
    text = f"import pytest\n\nfrom pkg.calc import sub\n\n\ndef test_subtracts():\n{body}"
    write(repo, "tests/test_subtraction.py", text)
    gate = verify()
    if rule is None:
        assert_passes(gate)
        assert gate["findings"] == []
    elif rule == "test-removed":
        assert_blocks(gate, rule, "tests/test_calc.py", base_line("tests/test_calc.py", SUB))
    else:
        assert_blocks(gate, rule, "tests/test_subtraction.py", line_of(text, "assert sub"))


LOCALS = (
    "def test_add():\n    total = add(1, 2)\n    assert total == 3\n\n\n"
    "def test_add_more():\n    first = 2\n    assert add(first, 2) == 4\n"
)


@pytest.mark.parametrize(
    ("host", "removed"),
    [
        ("[(1, 2, 3), (2, 2, 4)]", []),
        ("[(1, 2, 3), (2, 2, 4), (0, 0, 0)]", []),
        # A case left out, or written with another expectation.
        ("[(1, 2, 3)]", ["def test_add_more"]),
        ("[(1, 2, 3), (2, 2, 5)]", ["def test_add_more"]),
    ],
    ids=["both", "and-more", "one-left-out", "another-expectation"],
)
def test_two_tests_with_locals_folded_into_a_parametrized_one(
    repo: Path, verify: Verify, host: str, removed: list[str]
) -> None:
    # The base's tests hold their values in variables; the parametrized test writes them
    # into the call.
    edit(repo, "tests/test_calc.py", "def test_add():\n    assert add(1, 2) == 3\n", LOCALS)
    git(repo, "commit", "-qam", "tests with locals")
    base = (repo / "tests/test_calc.py").read_text(encoding="utf-8")
    edit(
        repo,
        "tests/test_calc.py",
        LOCALS,
        f"@pytest.mark.parametrize(('a', 'b', 'out'), {host})\n"
        "def test_adds(a, b, out):\n    assert add(a, b) == out\n",
    )
    gate = verify()
    if not removed:
        assert_passes(gate)
        assert gate["findings"] == []
    for needle in removed:
        assert_blocks(gate, "test-removed", "tests/test_calc.py", line_of(base, needle))
    assert len(gate["findings"]) == len(removed)


@pytest.mark.parametrize(
    ("helper", "call", "removed"),
    [
        (
            "def check_difference(a, b, expected):\n    assert sub(a, b) == expected\n",
            "3, 1, 2",
            False,
        ),
        (
            "def check_difference(a, b=1, *, expected):\n    assert sub(a, b) == expected\n",
            "3, expected=2",
            False,
        ),
        # Called with another expectation; asserting less; never called.
        (
            "def check_difference(a, b, expected):\n    assert sub(a, b) == expected\n",
            "3, 1, 3",
            True,
        ),
        ("def check_difference(a, b, expected):\n    assert sub(a, b)\n", "3, 1, 2", True),
        ("def check_difference():\n    assert sub(3, 1) == 2\n", None, True),
    ],
    ids=["positional", "defaults-and-keywords", "another-expectation", "weaker", "never-called"],
)
@pytest.mark.parametrize("where", ["same-file", "conftest"])
def test_a_test_whose_asserts_moved_into_a_helper_it_calls(
    repo: Path, verify: Verify, helper: str, call: str | None, removed: bool, where: str
) -> None:
    body = f"    check_difference({call})\n" if call is not None else "    pass\n"
    test = f"def test_subtracts():\n{body}"
    if where == "same-file":
        edit(repo, "tests/test_calc.py", SUB, f"{helper}\n\n{test}")
    else:
        write(repo, "tests/__init__.py", "")
        write(repo, "tests/conftest.py", f"from pkg.calc import sub\n\n\n{helper}")
        edit(repo, "tests/test_calc.py", SUB, test)
        edit(
            repo,
            "tests/test_calc.py",
            "import pytest\n",
            "import pytest\n\nfrom tests.conftest import check_difference\n",
        )
    gate = verify()
    if removed:
        assert_blocks(
            gate, "test-removed", "tests/test_calc.py", base_line("tests/test_calc.py", SUB)
        )
    else:
        assert_passes(gate)
        assert gate["findings"] == []


@pytest.mark.parametrize("name", ["test_sub", "test_subtracts"])
def test_an_assert_moved_into_a_helper_and_made_weak_there_is_weakened(
    repo: Path, verify: Verify, name: str
) -> None:
    # The expected value still written, no longer compared.
    edit(
        repo,
        "tests/test_calc.py",
        SUB,
        "def check_difference(a, b, expected):\n    assert sub(a, b)\n    expected\n\n\n"
        f"def {name}():\n    check_difference(3, 1, 2)\n",
    )
    line = now_line(repo, "tests/test_calc.py", "    check_difference(")
    assert_blocks(verify(), "assertion-weakened", "tests/test_calc.py", line)


@pytest.mark.parametrize(
    "calls",
    [
        "",
        "import pkg.legacy\n\n\ndef test_old_total():\n"
        "    assert pkg.legacy.old_total([1, 2]) == 3\n",
    ],
    ids=["from-import", "dotted-name"],
)
def test_removing_a_feature_with_its_tests_is_a_notice(
    repo: Path, verify: Verify, calls: str
) -> None:
    if calls:  # review 27: cachetools' tests call `cachetools.func.rr_cache(...)`
        (repo / "tests" / "test_legacy.py").write_text(calls)
        git(repo, "commit", "-qam", "the test calls the code by its dotted name")
    (repo / "pkg" / "legacy.py").unlink()
    (repo / "tests" / "test_legacy.py").unlink()
    commit_branch(repo, "drop the legacy total")
    gate = verify()
    assert_passes(gate)
    (notice,) = gate["findings"]
    assert notice["code"] == "test-removed-with-feature"
    assert notice["severity"] == "warning"
    assert notice["path"] == "tests/test_legacy.py"
    assert "old_total" in notice["message"]


def test_a_conftest_with_plain_fixtures_is_not_a_test_file(repo: Path, verify: Verify) -> None:
    write(
        repo,
        "tests/conftest.py",
        """\
        import pytest


        @pytest.fixture
        def numbers():
            return [1, 2]
        """,
    )
    assert_passes(verify())


def test_a_test_file_that_does_not_parse_is_left_to_the_test_gate(
    repo: Path, verify: Verify
) -> None:
    edit(repo, "tests/test_calc.py", "def test_sub():", "def test_sub(:")
    assert_passes(verify())


# -- JavaScript and TypeScript -----------------------------------------------------------------

JS = "web/sum.test.js"


@pytest.mark.parametrize(
    ("old", "new", "rule", "needle"),
    [
        ('it("adds zero"', 'it.skip("adds zero"', "skip-added", "it.skip"),
        ('it("adds zero"', 'xit("adds zero"', "skip-added", "xit"),
        ('describe("sum"', 'describe.skip("sum"', "skip-added", "describe.skip"),
        ('describe("sum"', 'xdescribe("sum"', "skip-added", "xdescribe"),
        ('it("adds zero"', 'it.only("adds zero"', "only-added", "it.only"),
        ('it("adds zero"', 'fit("adds zero"', "only-added", "fit("),
        ('describe("sum"', 'fdescribe("sum"', "only-added", "fdescribe"),
        (
            '  it("adds zero", () => {\n    expect(sum(0, 0)).toBe(0);\n  });\n',
            '  it.todo("adds zero");\n',
            "skip-added",
            "it.todo",
        ),
        (
            'describe("sum", () => {\n',
            'describe("sum", () => {\n  jest.retryTimes(3);\n',
            "rerun-added",
            "jest.retryTimes",
        ),
        # A skipping or focusing modifier under another name, called where no parser looks.
        (
            'it("adds zero"',
            'const later = it.skip;\n  later("adds zero"',
            "skip-added",
            "= it.skip",
        ),
        ('describe("sum"', 'const focus = describe.only;\nfocus("sum"', "only-added", "= describe"),
    ],
)
def test_js_skips_focus_and_reruns(
    repo: Path, verify: Verify, old: str, new: str, rule: str, needle: str
) -> None:
    edit(repo, JS, old, new)
    assert_blocks(verify(), rule, JS, now_line(repo, JS, needle))


def test_js_removed_tests_and_assertions(repo: Path, verify: Verify) -> None:
    edit(repo, JS, '  it("adds zero", () => {\n    expect(sum(0, 0)).toBe(0);\n  });\n', "")
    edit(repo, JS, "    expect(sum(1, 2)).toBe(3);\n", "    sum(1, 2);\n")
    gate = verify()
    assert_blocks(gate, "test-removed", JS, line_of(SUM_TEST_JS, 'it("adds zero"'))
    finding = assert_blocks(gate, "assertion-removed", JS, now_line(repo, JS, 'it("adds"'))
    assert "sum > adds" in finding["message"]


@pytest.mark.parametrize(
    "body",
    [
        "    try {\n      expect(sum(1, 2)).toBe(3);\n    } catch (e) {}\n",
        "    return;\n    expect(sum(1, 2)).toBe(3);\n",
        "    expect(true).toBe(true);\n",
    ],
)
def test_js_assertions_that_no_longer_check(repo: Path, verify: Verify, body: str) -> None:
    edit(repo, JS, "    expect(sum(1, 2)).toBe(3);\n", body)
    assert_blocks(verify(), "assertion-removed", JS, now_line(repo, JS, 'it("adds"'))


def test_js_file_renamed_out_of_the_test_pattern(repo: Path, verify: Verify) -> None:
    git(repo, "mv", JS, "web/sum.check.js")
    finding = assert_blocks(verify(), "test-removed", JS, line_of(SUM_TEST_JS, 'it("adds"'))
    assert "renamed to web/sum.check.js" in finding["message"]


def test_js_honest_changes(repo: Path, verify: Verify) -> None:
    # Reformatted (quotes, semicolons), a test renamed, one moved to another file, a new test
    # with an assertion, a todo of its own, a platform skip that does not apply here.
    write(
        repo,
        JS,
        """\
        import { sum } from './sum'

        describe('sum', () => {
          it('adds two numbers', () => {
            expect(sum(1, 2)).toBe(3)
          })

          it('adds negatives', () => {
            expect(sum(-1, -2)).toBe(-3)
          })

          it.todo('adds floats')

          it.skipIf(process.platform === 'no-such-platform')('adds on other systems', () => {
            expect(sum(2, 2)).toBe(4)
          })
        })
        """,
    )
    write(
        repo,
        "web/__tests__/zero.ts",
        """\
        import { sum } from "../sum";

        describe("sum", () => {
          it("adds zero", () => {
            expect(sum(0, 0)).toBe(0);
          });
        });
        """,
    )
    assert_passes(verify())


def test_js_feature_removed_with_its_tests(repo: Path, verify: Verify) -> None:
    (repo / "web" / "sum.js").unlink()
    (repo / "web" / "sum.test.js").unlink()
    gate = verify()
    assert_passes(gate)
    assert {f["code"] for f in gate["findings"]} == {"test-removed-with-feature"}


# -- through pytest --agentgate=strict ---------------------------------------------------------


# -- hidden from git ---------------------------------------------------------------------------

HIDE_FROM_GIT = {
    "assume-unchanged": ["update-index", "--assume-unchanged", "tests/test_calc.py"],
    "skip-worktree": ["update-index", "--skip-worktree", "tests/test_calc.py"],
    "clean-filter": ["config", "filter.same.clean", "git show HEAD:%f"],
}


def test_a_conftest_a_private_exclude_hides_is_judged(repo: Path, verify: Verify) -> None:
    write(
        repo,
        "tests/conftest.py",
        """\
        def pytest_collection_modifyitems(config, items):
            items[:] = [i for i in items if "sub" not in i.name]
        """,
    )
    (repo / ".git" / "info" / "exclude").write_text("conftest.py\n")
    assert git(repo, "status", "--porcelain") == ""
    assert "tests/conftest.py" in found_paths(verify())


@pytest.mark.parametrize("hide", ["nested-repository", "linked-folder"])
def test_a_conftest_git_lists_as_one_folder_is_judged(
    repo: Path, verify: Verify, tmp_path: Path, hide: str
) -> None:
    conftest = """\
        def pytest_collection_modifyitems(config, items):
            items[:] = [i for i in items if "sub" not in i.name]
        """
    if hide == "nested-repository":
        write(repo, "tests/ext/conftest.py", conftest)
        git(repo / "tests" / "ext", "init", "-q")
    else:
        outside = tmp_path / "elsewhere"
        write(outside, "conftest.py", conftest)
        (repo / "tests" / "ext").symlink_to(outside)
    assert "tests/ext/conftest.py" in found_paths(verify())


def test_a_tasks_base_is_pinned_where_it_first_met_the_gate(
    repo: Path, agentgate: Callable[..., CliRun]
) -> None:
    # The base comes from refs, and refs move: the agent commits its weakened test and points
    # main at it. A task is judged against the base its first verdict found.
    def integrity(*args: str) -> dict[str, Any]:
        run = agentgate("verify", "--profile", "strict", "--format", "json", "--no-run", *args)
        return run.gate("integrity")

    base = git(repo, "rev-parse", "main").strip()
    git(repo, "checkout", "-q", "-b", "work")
    assert integrity("--task", "t1")["status"] == "pass"  # the first verdict pins main
    edit(repo, "tests/test_calc.py", "def test_sub():", "@pytest.mark.skip\ndef test_sub():")
    git(repo, "commit", "-qam", "wip")
    git(repo, "branch", "-f", "main", "HEAD")
    assert integrity()["status"] == "pass"  # without a task, the refs decide
    pinned = integrity("--task", "t1")
    assert pinned["status"] == "fail"
    assert base[:12] in pinned["summary"]
    assert "skip-added" in {f["code"] for f in pinned["findings"]}
    # Said, for a person whose agent pulled a newer default branch: how to move the pin.
    text = agentgate("verify", "--profile", "strict", "--no-run", "--task", "t1").out
    assert "main has moved on to" in text and "agentgate reset --task t1" in text
    # A person's reset takes the pin away with the attempts; the next verdict pins again.
    assert agentgate("reset", "--task", "t1").code == 0
    assert integrity("--task", "t1")["status"] == "pass"


def test_a_pinned_base_that_is_gone_is_said(repo: Path, agentgate: Callable[..., CliRun]) -> None:
    from pytest_agentgate.git import Repo
    from pytest_agentgate.state import task_base

    found = Repo.find(repo)
    assert found is not None
    task_base.pin(found.toplevel, "t2", "ab" * 20, "nothing")
    gate = agentgate("verify", "--format", "json", "--no-run", "--task", "t2").gate("integrity")
    assert gate["status"] == "fail"
    said = json.dumps(gate)
    assert "the commit where the task first met the gate (abababababab)" in said
    assert "agentgate reset --task t2" in said


def test_deleting_the_pin_does_not_move_the_base(
    repo: Path, agentgate: Callable[..., CliRun]
) -> None:
    # The pin in the user's state directory is one file: deleting it after moving main would
    # pin the moved main. The project's .agentgate/ keeps the pinned commit too.
    from pytest_agentgate.git import Repo
    from pytest_agentgate.state import task_base

    def integrity(*args: str) -> dict[str, Any]:
        run = agentgate("verify", "--profile", "strict", "--format", "json", "--no-run", *args)
        return run.gate("integrity")

    found = Repo.find(repo)
    assert found is not None
    base = git(repo, "rev-parse", "main").strip()
    git(repo, "checkout", "-q", "-b", "work")
    assert integrity("--task", "t4")["status"] == "pass"
    record = json.loads((repo / ".agentgate" / "task-bases.json").read_text())
    assert list(record.values()) == [base]
    edit(repo, "tests/test_calc.py", "def test_sub():", "@pytest.mark.skip\ndef test_sub():")
    git(repo, "commit", "-qam", "wip")
    git(repo, "branch", "-f", "main", "HEAD")
    pin = task_base._path(found.toplevel, "t4")
    pin.unlink()
    gone = integrity("--task", "t4")
    assert gone["status"] == "fail"
    said = json.dumps(gone)
    assert "is gone" in said and f"first met the gate at {base[:12]}" in said
    assert "agentgate reset --task t4" in said
    assert not pin.exists()  # never silently pinned again
    # A pin rewritten by hand to the moved main is not agentgate's (its seal).
    pin.write_text(json.dumps({"sha": git(repo, "rev-parse", "HEAD").strip()}))
    assert "was changed after agentgate wrote it" in json.dumps(integrity("--task", "t4"))
    # With the change's own `base:` in agentgate.yml, a broken pin is still no base it picks.
    (repo / "agentgate.yml").write_text("base: HEAD\n" + (repo / "agentgate.yml").read_text())
    picked = integrity("--task", "t4")
    assert picked["status"] == "fail"
    assert "was changed after agentgate wrote it" in json.dumps(picked)


def test_deleting_agentgate_state_keeps_the_pin(
    repo: Path, agentgate: Callable[..., CliRun]
) -> None:
    # .agentgate/ deleted (git clean -xdf): the pin in the user's state directory stands, and
    # the project's record of it is written again. A reset takes both away.
    def integrity(*args: str) -> dict[str, Any]:
        run = agentgate("verify", "--profile", "strict", "--format", "json", "--no-run", *args)
        return run.gate("integrity")

    base = git(repo, "rev-parse", "main").strip()
    git(repo, "checkout", "-q", "-b", "work")
    assert integrity("--task", "t5")["status"] == "pass"
    shutil.rmtree(repo / ".agentgate")
    edit(repo, "tests/test_calc.py", "def test_sub():", "@pytest.mark.skip\ndef test_sub():")
    git(repo, "commit", "-qam", "wip")
    git(repo, "branch", "-f", "main", "HEAD")
    pinned = integrity("--task", "t5")
    assert pinned["status"] == "fail" and "skip-added" in {f["code"] for f in pinned["findings"]}
    record = repo / ".agentgate" / "task-bases.json"
    assert list(json.loads(record.read_text()).values()) == [base]
    assert agentgate("reset", "--task", "t5").code == 0
    assert json.loads(record.read_text()) == {}
    assert integrity("--task", "t5")["status"] == "pass"  # pinned again, at the moved main


def found_paths(gate: dict[str, Any]) -> set[str]:
    return {f["path"] for f in gate["findings"] if f["severity"] == "error"}


# -- read while the commands run ---------------------------------------------------------------

SKIP_WHILE_RUNNING = """\
import pathlib, time
time.sleep(0.5)  # long enough for the change to have been read while this ran
path = pathlib.Path("tests/test_calc.py")
path.write_text(path.read_text().replace("def test_sub():", "@pytest.mark.skip\\ndef test_sub():"))
"""


def test_a_command_that_changes_the_tree_is_judged_on_the_tree_it_left(
    repo: Path, agentgate: Callable[..., CliRun]
) -> None:
    # The integrity gate reads the change while the commands run. A gate command that adds a
    # skip as it runs (and so is never seen in the tree the run started from) is still found.
    (repo / "skip.py").write_text(SKIP_WHILE_RUNNING, encoding="utf-8")
    build = json.dumps(f"{sys.executable} skip.py")
    write(
        repo,
        "agentgate.yml",
        f"gates:\n  integrity: {{kind: integrity}}\n  build:\n    command: {build}\n",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a build step")
    result = agentgate("verify", "--profile", "strict", "--format", "json", "--no-cache")
    gate = result.gate("integrity")
    gate["exit_code_of_verify"] = result.code
    line = now_line(repo, "tests/test_calc.py", "@pytest.mark.skip")
    assert_blocks(gate, "skip-added", "tests/test_calc.py", line)


def test_a_command_that_leaves_the_tree_alone_is_judged_on_the_same_change(
    repo: Path, agentgate: Callable[..., CliRun]
) -> None:
    edit(repo, "tests/test_calc.py", "def test_sub():", "@pytest.mark.skip\ndef test_sub():")
    build = json.dumps(f"{sys.executable} -c 'import time; time.sleep(0.3)'")
    write(
        repo,
        "agentgate.yml",
        f"gates:\n  integrity: {{kind: integrity}}\n  build:\n    command: {build}\n",
    )
    result = agentgate("verify", "--profile", "strict", "--format", "json")
    gate = result.gate("integrity")
    gate["exit_code_of_verify"] = result.code
    line = now_line(repo, "tests/test_calc.py", "@pytest.mark.skip")
    assert_blocks(gate, "skip-added", "tests/test_calc.py", line)
    assert result.gate("build")["status"] == "pass"


# -- parametrized cases ------------------------------------------------------------------------

# The base's parametrized test that the changes below rewrite.
TEST_ADD = (
    '@pytest.mark.parametrize("a,b,out", [(1, 2, 3), (0, 0, 0), (-1, 1, 0), (2, -5, -3)])\n'
    "def test_add(a, b, out):\n    assert add(a, b) == out"
)
CASES = (
    """\
import pytest

from pkg.calc import add

SIGNS = [(1, 1, 2), (-1, -1, -2)]


"""
    + TEST_ADD
    + """


@pytest.mark.parametrize(("a", "b", "out"), SIGNS)
def test_signs(a, b, out):
    assert add(a, b) == out
"""
)


def with_cases(repo: Path) -> None:
    """tests/test_cases.py, with parametrized tests, committed on main: the base."""
    write(repo, "tests/test_cases.py", CASES)
    git(repo, "add", "tests/test_cases.py")
    git(repo, "commit", "-q", "-m", "cases")


@pytest.mark.parametrize(
    ("old", "new", "gone"),
    [
        ("(0, 0, 0), (-1, 1, 0), (2, -5, -3)]", "(0, 0, 0)]", "`(-1, 1, 0)`, `(2, -5, -3)`"),
        ("SIGNS = [(1, 1, 2), (-1, -1, -2)]", "SIGNS = [(1, 1, 2)]", "`(-1, -1, -2)`"),
    ],
    ids=["a-literal-list", "a-module-constant"],
)
def test_parametrized_cases_that_no_longer_run_are_fewer_tests(
    repo: Path, verify: Verify, old: str, new: str, gone: str
) -> None:
    with_cases(repo)
    edit(repo, "tests/test_cases.py", old, new)
    test = "test_add" if "0, 0, 0" in old else "test_signs"
    line = now_line(repo, "tests/test_cases.py", f"def {test}") - 1
    finding = assert_blocks(verify(), "tests-fewer", "tests/test_cases.py", line)
    assert gone in finding["message"] and "at the base" in finding["message"]


def test_a_parametrization_dropped_for_one_inlined_case_is_fewer_tests(
    repo: Path, verify: Verify
) -> None:
    with_cases(repo)
    edit(
        repo,
        "tests/test_cases.py",
        TEST_ADD,
        "def test_add():\n    assert add(1, 2) == 3",
    )
    line = now_line(repo, "tests/test_cases.py", "def test_add")
    finding = assert_blocks(verify(), "tests-fewer", "tests/test_cases.py", line)
    assert "runs 1 `a,b,out` case(s), 4 at the base" in finding["message"]


def test_cases_split_moved_deduplicated_or_computed_are_honest(repo: Path, verify: Verify) -> None:
    with_cases(repo)
    # Two of test_add's cases move to a new test in another file; a duplicate is dropped from
    # test_signs; and a new test computes its cases (they cannot be counted: no finding).
    edit(
        repo,
        "tests/test_cases.py",
        "SIGNS = [(1, 1, 2), (-1, -1, -2)]",
        "SIGNS = [(1, 1, 2), (-1, -1, -2), (1, 1, 2)]",
    )
    git(repo, "commit", "-q", "-am", "a duplicate case at the base")
    edit(repo, "tests/test_cases.py", ", (-1, 1, 0), (2, -5, -3)]", "]")
    edit(
        repo,
        "tests/test_cases.py",
        "SIGNS = [(1, 1, 2), (-1, -1, -2), (1, 1, 2)]",
        "SIGNS = [(1, 1, 2), (-1, -1, -2)]",
    )
    write(
        repo,
        "tests/test_more_cases.py",
        """\
        import pytest

        from pkg.calc import add


        @pytest.mark.parametrize("x,y,total", [(-1, 1, 0), (2, -5, -3)])
        def test_add_mixed_signs(x, y, total):
            assert add(x, y) == total
        """,
    )
    assert_passes(verify())


def test_cases_made_by_code_are_not_counted(repo: Path, verify: Verify) -> None:
    with_cases(repo)
    edit(
        repo,
        "tests/test_cases.py",
        "[(1, 2, 3), (0, 0, 0), (-1, 1, 0), (2, -5, -3)])",
        "[(a, b, a + b) for a in (1, 0, -1, 2) for b in (2,)])",
    )
    assert_passes(verify())


def test_a_dropped_case_kept_only_in_a_test_of_another_shape_is_fewer_tests(
    repo: Path, verify: Verify
) -> None:
    """The failing case's text survives in a new test that only checks its shape."""
    with_cases(repo)
    edit(repo, "tests/test_cases.py", ", (2, -5, -3)]", "]")
    edit(
        repo,
        "tests/test_cases.py",
        "def test_signs",
        '@pytest.mark.parametrize("case", [(2, -5, -3)])\n'
        "def test_case_shape(case):\n    assert len(case) == 3\n\n\n"
        '@pytest.mark.parametrize(("a", "b", "out"), SIGNS)\ndef test_signs',
    )
    edit(repo, "tests/test_cases.py", '@pytest.mark.parametrize(("a", "b", "out"), SIGNS)\n@', "@")
    line = now_line(repo, "tests/test_cases.py", "def test_add") - 1
    finding = assert_blocks(verify(), "tests-fewer", "tests/test_cases.py", line)
    assert "`(2, -5, -3)` no longer run" in finding["message"]


def test_a_case_moved_to_a_test_of_another_body_is_fewer_tests(repo: Path, verify: Verify) -> None:
    """Red team 53: the failing case moved, with as many argnames, to a new test whose body
    checks something else of the same values: the case no longer runs its checks."""
    with_cases(repo)
    edit(repo, "tests/test_cases.py", ", (2, -5, -3)]", "]")
    write(
        repo,
        "tests/test_more_cases.py",
        """\
        import pytest


        @pytest.mark.parametrize("a,b,out", [(2, -5, -3)])
        def test_add_shape(a, b, out):
            assert a + b == out
        """,
    )
    line = now_line(repo, "tests/test_cases.py", "def test_add") - 1
    finding = assert_blocks(verify(), "tests-fewer", "tests/test_cases.py", line)
    assert "`(2, -5, -3)` no longer run" in finding["message"]


def test_argnames_renamed_with_an_expectation_corrected_is_honest(
    repo: Path, verify: Verify
) -> None:
    with_cases(repo)
    edit(
        repo,
        "tests/test_cases.py",
        TEST_ADD,
        '@pytest.mark.parametrize("x,y,total", [(1, 2, 3), (0, 0, 0), (-1, 1, 0), (2, -5, -4)])\n'
        "def test_add(x, y, total):\n    assert add(x, y) == total",
    )
    assert_passes(verify())


def test_a_damaged_pin_is_no_base(repo: Path, agentgate: Callable[..., CliRun]) -> None:
    from pytest_agentgate.git import Repo
    from pytest_agentgate.state import task_base

    found = Repo.find(repo)
    assert found is not None
    task_base.pin(found.toplevel, "t3", "ab" * 20, "nothing")
    task_base._path(found.toplevel, "t3").write_text("{damaged")
    gate = agentgate("verify", "--format", "json", "--no-run", "--task", "t3").gate("integrity")
    assert gate["status"] == "fail"
    assert "pinned base" in json.dumps(gate) and "cannot be read" in json.dumps(gate)
