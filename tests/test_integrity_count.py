"""The integrity gate's count at the base: fewer tests run than the base's suite selects.

Each test copies one small project (a package, pytest tests whose parametrized cases a function
builds, committed on ``main`` with a test gate that runs pytest), makes the agent's change in
the working tree, and runs the real ``agentgate verify --profile strict`` (in-process, its test
command and the base's collection in processes of their own) or the real ``pytest
--agentgate=strict``. A drop the static rules cannot see must fail the integrity gate with
``test-count-below-base``; honest work (tests added, renamed, split, a feature removed with its
tests) must pass; a base that cannot be collected is a note, never a block; the base's count is
kept in the user's state directory, so a second verdict does not collect it again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import (
    PY,
    STRICT_TESTS,
    CliRun,
    edit,
    gated_project,
    git,
    only_gate,
    verify_json,
    write,
)
from _helpers import pytest_agentgate as pytest_gated

import pytest_agentgate
from pytest_agentgate.commands import collection_command
from pytest_agentgate.config.model import AllowRule, GateConfig
from pytest_agentgate.gates.integrity import (
    COUNT_RULE,
    IntegrityEvidence,
    IntegrityGate,
    SuiteCount,
    compare_counts,
)
from pytest_agentgate.git import Base
from pytest_agentgate.integrity import base_count
from pytest_agentgate.integrity.base_count import BaseCount, Target, count_at_base
from pytest_agentgate.integrity.model import IntegrityFinding
from pytest_agentgate.profiles import defaults_for
from pytest_agentgate.state import base_counts
from pytest_agentgate.verdict import GateResult, Verdict

CASES = """\
def cases():
    return [1, 2, 3, 4]
"""

LEGACY = """\
def old_total(items):
    return sum(items)
"""

TEST_CASES = """\
import pytest

from pkg.cases import cases


@pytest.mark.parametrize("x", cases())
def test_positive(x):
    assert x > 0
"""

TEST_CALC = """\
def test_add():
    assert 1 + 2 == 3


def test_sub():
    assert 3 - 1 == 2
"""

TEST_LEGACY = """\
from pkg.legacy import old_total


def test_old_total():
    assert old_total([1, 2]) == 3
"""

COMMAND = "{py} -m pytest -q -p no:cacheprovider"
BASE = {
    "agentgate.yml": "gates:\n  test:\n    command: " + json.dumps(COMMAND.replace("{py}", PY)),
    ".gitignore": ".agentgate/\n__pycache__/\n",
    "pytest.ini": "[pytest]\ntestpaths = tests\n",
    "pkg/__init__.py": "",
    "pkg/cases.py": CASES,
    "pkg/legacy.py": LEGACY,
    "tests/test_cases.py": TEST_CASES,
    "tests/test_calc.py": TEST_CALC,
    "tests/test_legacy.py": TEST_LEGACY,
}
AT_BASE = 7  # 4 cases, test_add, test_sub, test_old_total


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("integrity-count") / "base"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for path, text in BASE.items():
        write(root, path, text)
    commit(root, "base")
    return root


@pytest.fixture
def repo(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(template, root, symlinks=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("NO_COLOR", "1")
    return root


Verify = Callable[[], tuple[dict[str, Any], str]]


@pytest.fixture
def verify(agentgate: Callable[..., CliRun], repo: Path) -> Verify:
    """``agentgate verify --profile strict --no-cache`` (each call judges afresh): the integrity
    gate, with the test gate, as the JSON verdict has them, and the markdown rendering (where a
    gate that fails or has findings shows its notes)."""

    def run() -> tuple[dict[str, Any], str]:
        out = repo / ".agentgate" / "v.json"
        result = agentgate(
            "verify",
            "--profile",
            "strict",
            "--no-cache",
            "--format",
            "markdown",
            "--output",
            str(out),
        )
        verdict = json.loads(out.read_text(encoding="utf-8"))
        gate = next(g for g in verdict["gates"] if g["name"] == "integrity")
        gate["exit_code_of_verify"] = result.code
        gate["test_gate"] = next(g for g in verdict["gates"] if g["name"] == "test")
        return gate, result.out

    return run


def library_verify(root: Path) -> tuple[Verdict, GateResult]:
    """``pytest_agentgate.verify()`` under strict, and its integrity gate: a gate that passes
    with no finding shows its notes to the library's caller (the renderings leave them out)."""
    verdict = pytest_agentgate.verify(str(root), profile="strict")
    return verdict, next(g for g in verdict.gates if g.name == "integrity")


def count_findings(gate: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in gate["findings"] if f["code"] == COUNT_RULE]


def assert_count_blocks(gate: dict[str, Any], output: str, now: int) -> dict[str, Any]:
    assert gate["status"] == "fail", gate
    assert gate["exit_code_of_verify"] == 1
    [finding] = count_findings(gate)
    assert finding["severity"] == "error" and finding["path"] == "pytest.ini"
    assert finding["message"].startswith(f"{AT_BASE} tests ran at the base (commit ")
    assert finding["message"].endswith(
        f", {now} now; no removed test in the change explains the {AT_BASE - now} missing"
    )
    assert "restore the tests that no longer run" in output
    return finding


# -- what the static rules cannot see ----------------------------------------------------------


def test_cases_a_function_builds_that_now_returns_fewer(
    repo: Path, verify: Verify, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trick: the test is untouched, the function that builds its cases returns fewer. No
    # test file changed, so only a count can tell.
    edit(repo, "pkg/cases.py", "[1, 2, 3, 4]", "[1, 2]")
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 2)
    assert gate["test_gate"]["status"] == "pass"  # every test that still runs passes
    assert f"test count (test): {AT_BASE - 2} tests ran, {AT_BASE} at the base" in output
    assert ", collected in " in output

    # The next verdict reads the count the first kept: the base is not collected again.
    calls: list[object] = []
    real = base_count._collect
    monkeypatch.setattr(base_count, "_collect", lambda *a: calls.append(a) or real(*a))
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 2)
    assert ", kept from an earlier verdict)" in output and calls == []

    # A damaged file is no figure: the base is collected again, and the file rewritten.
    kept = base_counts.counts_file(repo)
    kept.write_text('{"counts": {"x": {"selected": -1}', encoding="utf-8")
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 2)
    assert ", collected in " in output and len(calls) == 1
    assert len(json.loads(kept.read_text(encoding="utf-8"))["counts"]) == 1


def test_pytest_agentgate_counts_the_session_against_the_base(repo: Path) -> None:
    edit(repo, "pkg/cases.py", "[1, 2, 3, 4]", "[1, 2]")
    code, verdict, output = pytest_gated(repo)
    assert code == 1, output
    gate = next(g for g in verdict["gates"] if g["name"] == "integrity")
    assert gate["status"] == "fail", output
    [finding] = count_findings(gate)
    assert finding["severity"] == "error"
    # The session's own command line (its --agentgate options left out) collected the base.
    assert f"{AT_BASE} tests ran at the base (commit " in finding["message"]
    assert f"{AT_BASE - 2} now; no removed test in the change explains the 2 missing" in output
    assert "5 passed" in output


def test_a_test_file_renamed_out_of_the_collection_pattern(repo: Path, verify: Verify) -> None:
    # Where agentgate reads the pattern (pytest.ini), the static rule names each test that is
    # gone, and the count is a note; where it does not (the command's -o), the count catches it.
    git(repo, "mv", "tests/test_calc.py", "tests/calc_tests.py")
    gate, output = verify()
    assert gate["status"] == "fail"
    assert {f["code"] for f in gate["findings"]} == {"test-removed"}
    assert "test-removed findings name the tests that went" in output

    git(repo, "mv", "tests/calc_tests.py", "tests/test_calc.py")
    files = "'python_files=test_cases.py test_legacy.py check_calc.py'"
    command = json.dumps(f"{COMMAND.replace('{py}', PY)} -o {files}")
    write(repo, "agentgate.yml", f"gates:\n  test:\n    command: {command}\n")
    git(repo, "mv", "tests/test_calc.py", "tests/check_calc.py")
    commit(repo, "the base collects check_*.py, set in the test command")
    git(repo, "mv", "tests/check_calc.py", "tests/calc_checks.py")
    gate, output = verify()
    # The base's collection names the tests that went: each is a finding, which explains the
    # count.
    assert gate["status"] == "fail" and gate["exit_code_of_verify"] == 1
    found = count_findings(gate)
    assert [f["code"] for f in gate["findings"]] == [COUNT_RULE] * len(found) and found
    assert sorted((f["path"], f["message"]) for f in found) == [
        (
            "tests/check_calc.py",
            f"{name} was collected at the base and is not in this run: pytest no longer takes "
            "it for a test, or it has no case to run (`__test__ = False`, a decorator that "
            "makes it no function, an empty parameter set, a collection setting)",
        )
        for name in ("test_add", "test_sub")
    ]
    assert "test-count-below-base findings name the tests that went" in output


def src_layout(repo: Path) -> None:
    """The base's package moved under ``src/`` (committed): tests import it from an install."""
    (repo / "src").mkdir(exist_ok=True)
    git(repo, "mv", "pkg", "src/pkg")
    commit(repo, "src layout")


def test_an_editable_install_of_today_s_code_does_not_count_the_base(
    repo: Path, verify: Verify, tmp_path: Path
) -> None:
    # A src-layout project installed in editable mode: the virtualenv's .pth puts the project's
    # src/ on sys.path, as setuptools' editable install does. The base's collection must import
    # the base's package, not today's, or a drop in cases() is counted on both sides.
    src_layout(repo)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    import _pytest

    tools = Path(_pytest.__file__).parent.parent  # pytest and its own dependencies, as paths
    agentgate_source = Path(pytest_agentgate.__file__).parent.parent
    lines = [str(tools), str(agentgate_source), str(repo / "src")]
    Path(purelib, "__editable__.pkg-0.1.pth").write_text("\n".join(lines) + "\n")
    command = json.dumps(f"{python} -m pytest -q -p no:cacheprovider")
    write(repo, "agentgate.yml", f"gates:\n  test:\n    command: {command}\n")
    commit(repo, "the tests run in the project's virtualenv")
    edit(repo, "src/pkg/cases.py", "[1, 2, 3, 4]", "[1, 2]")
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 2)


def test_a_pythonpath_into_the_project_reads_the_base_s_code_at_the_base(
    repo: Path, verify: Verify, monkeypatch: pytest.MonkeyPatch
) -> None:
    src_layout(repo)
    monkeypatch.setenv("PYTHONPATH", str(repo / "src"))  # the user's shell, set for the project
    edit(repo, "src/pkg/cases.py", "[1, 2, 3, 4]", "[1, 2]")
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 2)


# What setuptools-scm writes (its default template), under the name the build configuration gives.
GENERATED_VERSION = """\
# file generated by setuptools-scm
# don't change, don't track in version control

__all__ = ["__version__", "__version_tuple__", "version", "version_tuple"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Tuple
    from typing import Union

    VERSION_TUPLE = Tuple[Union[int, str], ...]
else:
    VERSION_TUPLE = object

version: str
__version__: str
__version_tuple__: VERSION_TUPLE
version_tuple: VERSION_TUPLE

__version__ = version = '1.2.0'
__version_tuple__ = version_tuple = (1, 2, 0)
"""

VERSION_CONFIGS = {
    "hatch-vcs": '[tool.hatch.build.hooks.vcs]\nversion-file = "{file}"\n',
    "hatch-vcs raw-options": (
        '[tool.hatch.version]\nsource = "vcs"\nraw-options = {{ version_file = "{file}" }}\n'
    ),
    "setuptools-scm version_file": '[tool.setuptools_scm]\nversion_file = "{file}"\n',
    "setuptools-scm write_to": '[tool.setuptools_scm]\nwrite_to = "{file}"\n',
}


def generated_version_file(repo: Path, config: str, text: str = GENERATED_VERSION) -> None:
    """The base's package imports a version file its build writes from git's metadata: named in
    the base's pyproject.toml, git-ignored, present in the working tree only."""
    write(repo, "pyproject.toml", VERSION_CONFIGS[config].format(file="pkg/_version.py"))
    write(repo, "pkg/__init__.py", "from ._version import __version__\n")
    write(repo, ".gitignore", ".agentgate/\n__pycache__/\npkg/_version.py\n")
    commit(repo, "the version comes from git")
    write(repo, "pkg/_version.py", text)


@pytest.mark.parametrize("config", list(VERSION_CONFIGS))
def test_a_version_file_the_build_generates_is_in_the_base_s_collection(
    repo: Path, verify: Verify, config: str
) -> None:
    # humanize (hatch-vcs): `from humanize._version import __version__`, the file git-ignored;
    # the base's checkout did not have it, and no test of the base collected.
    generated_version_file(repo, config)
    edit(repo, "pkg/cases.py", "[1, 2, 3, 4]", "[1, 2]")
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 2)


def test_a_version_file_that_runs_code_is_not_copied_into_the_base(
    repo: Path, verify: Verify
) -> None:
    # The working tree's file is the change's: what it runs (here, it rewrites the cases the
    # tests build) never reaches the base, which gets a version file agentgate writes, and is
    # counted with its own cases: the cases the file drops now are missing.
    generated_version_file(
        repo,
        "hatch-vcs",
        GENERATED_VERSION + "import pkg.cases\npkg.cases.cases = lambda: [1]\n",
    )
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 3)


OPTIONAL_IMPORT = """\
try:
    from ._version import __version__
except Exception:
    __version__ = "0.0"
"""


@pytest.mark.parametrize(
    "version_file",
    [
        None,
        "from typing import Nope\n" + GENERATED_VERSION,
        GENERATED_VERSION + "__version__ = version = undefined_name\n",
        GENERATED_VERSION + "__version_tuple__ = version_tuple = (1, 2)[5]\n",
    ],
    ids=["deleted", "imports-what-typing-lacks", "binds-an-unknown-name", "raises-on-a-value"],
)
def test_a_version_file_the_change_deleted_or_broke_still_lets_the_base_be_counted(
    repo: Path, verify: Verify, version_file: str | None
) -> None:
    # Red team 56: the agent deleted the git-ignored version file (or wrote one that cannot be
    # imported) and made its own package's import of it optional. The base's package, which
    # imports it, could not be collected: "a note, never a block", and the cases dropped from
    # the helper went unreported. The base's checkout gets a version file agentgate writes.
    generated_version_file(repo, "setuptools-scm version_file")
    if version_file is None:
        (repo / "pkg" / "_version.py").unlink()
    else:
        write(repo, "pkg/_version.py", version_file)
    write(repo, "pkg/__init__.py", OPTIONAL_IMPORT)
    edit(repo, "pkg/cases.py", "[1, 2, 3, 4]", "[1, 2]")
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 2)


def test_the_plain_values_a_custom_version_template_binds_reach_the_base(
    repo: Path, verify: Verify
) -> None:
    generated_version_file(repo, "hatch-vcs", GENERATED_VERSION + "release = (1, 2, 0)\n")
    write(repo, "pkg/__init__.py", "from ._version import __version__, release\n")
    commit(repo, "the release tuple comes from the version file too")
    edit(repo, "pkg/cases.py", "[1, 2, 3, 4]", "[1, 2]")
    gate, output = verify()
    assert_count_blocks(gate, output, now=AT_BASE - 2)


def test_a_version_file_named_outside_the_project_is_not_copied(repo: Path) -> None:
    generated_version_file(repo, "hatch-vcs")
    write(repo, "pyproject.toml", VERSION_CONFIGS["hatch-vcs"].format(file="../pkg/_version.py"))
    commit(repo, "a version file outside the project")
    write(repo.parent, "pkg/_version.py", GENERATED_VERSION)  # there, and still not the project's
    verdict, gate = library_verify(repo)
    [note] = gate.notes
    assert "No module named 'pkg._version'" in note, verdict.to_json()


# -- honest work ---------------------------------------------------------------------------------


def test_tests_added_renamed_and_split_pass(repo: Path) -> None:
    git(repo, "mv", "tests/test_calc.py", "tests/test_arithmetic.py")
    edit(repo, "tests/test_arithmetic.py", TEST_CALC.split("\n\n\n")[1], "")
    write(repo, "tests/test_sub.py", "def test_sub():\n    assert 3 - 1 == 2\n")
    edit(repo, "pkg/cases.py", "[1, 2, 3, 4]", "[1, 2, 3, 4, 5]")
    verdict, gate = library_verify(repo)
    assert verdict.status == "pass" and gate.findings == [], verdict.to_json()
    [note] = gate.notes
    head = git(repo, "rev-parse", "--short=7", "HEAD")
    assert note.startswith(
        f"test count (test): {AT_BASE + 1} tests ran, {AT_BASE} at the base (commit {head}, "
    )


def test_a_feature_removed_with_its_tests_is_a_note(repo: Path, verify: Verify) -> None:
    (repo / "pkg" / "legacy.py").unlink()
    (repo / "tests" / "test_legacy.py").unlink()
    gate, output = verify()
    assert gate["status"] == "pass" and gate["exit_code_of_verify"] == 0, gate["findings"]
    assert [f["code"] for f in gate["findings"]] == ["test-removed-with-feature"]
    assert (
        f"{AT_BASE - 1} tests ran, {AT_BASE} at the base" in output
        and "test-removed-with-feature findings name the tests that went" in output
    )


CODECS = """\
def rot13(text):
    return "".join(_rot(c, 13) for c in text)


def caesar(text):
    return "".join(_rot(c, 3) for c in text)


def shout(text):
    return text.upper()


def _rot(c, n):
    if "a" <= c <= "z":
        return chr((ord(c) - 97 + n) % 26 + 97)
    return c
"""
TEST_CODECS = """\
import unittest

from pkg import codecs


class CodecMixin:
    def test_empty(self):
        self.assertEqual(self.encode(""), "")

    def test_keeps_digits(self):
        self.assertEqual(self.encode("123"), "123")


class Rot13Test(unittest.TestCase, CodecMixin):
    encode = staticmethod(codecs.rot13)

    def test_abc(self):
        self.assertEqual(codecs.rot13("abc"), "nop")


class CaesarTest(unittest.TestCase, CodecMixin):
    encode = staticmethod(codecs.{encode})
{own}"""
CAESAR_OWN = """
    def test_abc(self):
        self.assertEqual(codecs.caesar("abc"), "def")
"""
SHOUT_OWN = """
    def test_shout(self):
        self.assertEqual(codecs.shout("abc"), "ABC")
"""


def _codecs_base(repo: Path, encode: str = "caesar", own: str = CAESAR_OWN) -> None:
    write(repo, "pkg/codecs.py", CODECS)
    write(repo, "tests/test_codecs.py", TEST_CODECS.format(encode=encode, own=own))
    commit(repo, "the codecs and their tests, a mixin's")


def _class_deleted(repo: Path, function: str = "") -> None:
    text = (repo / "tests" / "test_codecs.py").read_text(encoding="utf-8")
    write(repo, "tests/test_codecs.py", text[: text.index("\n\nclass CaesarTest")] + "\n")
    if function:
        code = CODECS.replace(f"def {function}(text):\n", "\0", 1)
        head, _, tail = code.partition("\0")
        write(repo, "pkg/codecs.py", head + tail[tail.index("\n\n\ndef ") + 3 :])


def test_a_class_deleted_with_its_feature_takes_its_inherited_tests_along(
    repo: Path, verify: Verify
) -> None:
    # Review 35: caesar() deleted with CaesarTest, whose mixin gave it two more tests: those
    # went with the class, a note, not a test the change took out of the run.
    _codecs_base(repo)
    _class_deleted(repo, "caesar")
    gate, output = verify()
    assert gate["status"] == "pass" and gate["exit_code_of_verify"] == 0, gate["findings"]
    found = sorted((f["code"], f["severity"], f["message"]) for f in gate["findings"])
    assert [(code, severity) for code, severity, _ in found] == [
        ("test-removed-with-feature", "warning")
    ] * 3
    inherited = [m for _, _, m in found if "(inherited from CodecMixin)" in m]
    assert sorted(m.split(" ")[0] for m in inherited) == [
        "CaesarTest::test_empty",
        "CaesarTest::test_keeps_digits",
    ]
    assert all(
        "went with its class CaesarTest, which the change deletes together with caesar" in m
        for m in inherited
    )
    assert "test-removed-with-feature findings name the tests that went" in output


@pytest.mark.parametrize(
    ("encode", "own", "function", "own_rule"),
    [
        ("caesar", SHOUT_OWN, "shout", "test-removed-with-feature"),
        ("caesar", "", "", None),
        ("caesar", CAESAR_OWN, "", "test-removed"),
    ],
    ids=["its-own-test-goes-with-other-code", "only-inherited-tests", "own-test-removed"],
)
def test_a_class_deleted_not_with_what_its_inherited_tests_ran_takes_them_out(
    repo: Path, verify: Verify, encode: str, own: str, function: str, own_rule: str | None
) -> None:
    # The tests the class inherited ran caesar(), which the change keeps: deleting the class
    # takes them out of the run, whatever went with its own tests (a trick: delete shout()
    # with a test of it, and the class whose mixin tests of caesar() fail with it).
    _codecs_base(repo, encode, own)
    _class_deleted(repo, function)
    gate, _ = verify()
    assert gate["status"] == "fail" and gate["exit_code_of_verify"] == 1
    counted = sorted((f["severity"], f["message"]) for f in count_findings(gate))
    assert [m.split(" ")[0] for _, m in counted] == [
        "CaesarTest::test_empty",
        "CaesarTest::test_keeps_digits",
    ]
    for severity, message in counted:
        assert severity == "error"
        assert (
            "(inherited from CodecMixin) was collected at the base and is not in this run: the "
            "change deletes its class CaesarTest, not with code it deletes" in message
        )
        assert "__test__ = False" not in message
    own_found = [f["code"] for f in gate["findings"] if f["code"] != COUNT_RULE]
    assert own_found == ([own_rule] if own_rule else [])


# -- a base that cannot be counted ---------------------------------------------------------------


def test_a_base_that_does_not_collect_is_a_note(repo: Path) -> None:
    write(repo, "tests/test_broken.py", "def test_broken(:\n    pass\n")
    commit(repo, "a test file that does not parse")
    (repo / "tests" / "test_broken.py").unlink()  # the change repairs it ...
    edit(repo, "pkg/cases.py", "[1, 2, 3, 4]", "[1, 2]")  # ... and drops cases too
    verdict, gate = library_verify(repo)
    assert verdict.status == "pass" and gate.findings == [], verdict.to_json()
    [note] = gate.notes
    assert note.startswith("test count (test): not compared with the base: 1 error(s) collecting")
    assert "test_broken.py" in note  # what failed to collect is said


def test_collecting_the_base_is_bounded_and_leaves_nothing_behind(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(repo, "tests/conftest.py", "import time\n\ntime.sleep(60)\n")
    commit(repo, "a conftest that hangs")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    base = Base("main", git(repo, "rev-parse", "HEAD"), "test")
    target = Target("test", f"{PY} -m pytest -q", repo, timeout=1.0)
    found = count_at_base(repo, base, [target])["test"]
    assert found.selected is None
    assert found.why_not == "collecting the base's tests took longer than 1 s"
    assert found.seconds is not None and found.seconds < 10
    assert list(scratch.iterdir()) == []  # the checkout is removed

    stop = threading.Event()
    stop.set()
    found = count_at_base(repo, base, [Target("test", f"{PY} -m pytest", repo)], stop)["test"]
    assert found.why_not == "the run was stopped before the base was collected"
    assert list(scratch.iterdir()) == []


def test_a_program_the_project_keeps_out_of_git_collects_the_base(repo: Path) -> None:
    # `.venv/bin/python -m pytest`: the checkout of the base has no .venv (it is not committed);
    # the program is the project's.
    program = repo / "bin" / "py"
    write(repo, "bin/py", f'#!/bin/sh\nexec {PY} "$@"\n')
    program.chmod(0o755)
    (repo / ".git" / "info" / "exclude").write_text("bin/\n", encoding="utf-8")
    base = Base("main", git(repo, "rev-parse", "HEAD"), "test")
    target = Target("test", "bin/py -m pytest -q", repo)
    assert count_at_base(repo, base, [target])["test"].selected == AT_BASE


def test_what_cannot_be_collected_is_said(repo: Path) -> None:
    base = Base("main", git(repo, "rev-parse", "HEAD"), "test")
    found = count_at_base(
        repo,
        base,
        [
            Target("jest", "npx jest", repo),
            Target("chained", "make && pytest", repo),
            Target("elsewhere", "pytest", repo.parent),
        ],
    )
    assert found["jest"].why_not == "the test command does not run pytest"
    assert "cannot run `make && pytest` as one pytest collection" in str(found["chained"].why_not)
    assert "runs outside the repository" in str(found["elsewhere"].why_not)
    assert all(c.selected is None for c in found.values())


# -- the count is kept -----------------------------------------------------------------------------


def test_kept_counts_are_bounded_and_checked(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    sha = "a" * 40
    base_counts.save(root, "k", sha, 12)
    assert base_counts.load(root, "k", sha) is not None
    assert base_counts.load(root, "k", "b" * 40) is None  # another commit's figure: none
    path = base_counts.counts_file(root)
    doc = json.loads(path.read_text(encoding="utf-8"))
    for bad in (True, -1, 10**12, "12", None, 1.5):
        doc["counts"]["k"]["selected"] = bad
        path.write_text(json.dumps(doc), encoding="utf-8")
        assert base_counts.load(root, "k", sha) is None, bad
    path.write_text(" " * (base_counts.MAX_FILE_BYTES + 1), encoding="utf-8")
    assert base_counts.load(root, "k", sha) is None
    for index in range(base_counts.MAX_ENTRIES + 5):
        base_counts.save(root, f"k{index}", sha, index)
    counts = json.loads(path.read_text(encoding="utf-8"))["counts"]
    assert len(counts) == base_counts.MAX_ENTRIES and "k0" not in counts


# -- the pieces ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "collection"),
    [
        ("pytest -q --junitxml=r.xml", "pytest -q"),
        (
            "python -m coverage run --branch -m pytest tests --junitxml r.xml",
            "python -m pytest tests",
        ),
        ("pytest --cov=pkg --cov-report=xml tests && coverage xml", "pytest tests --no-cov"),
        ("pytest --agentgate=strict --agentgate-json v.json -x", "pytest -x"),
        ("pytest --agentgate strict tests", "pytest tests"),
        ("FOO=1 pytest -k 'not slow'", "FOO=1 pytest -k 'not slow'"),
        ("cd sub && pytest", None),
        ("npm test", None),
        ("pytest tests/*.py", None),
        ("pytest -- -x", None),
    ],
)
def test_the_collection_of_a_test_command(command: str, collection: str | None) -> None:
    derived = collection_command(command)
    if collection is None:
        assert derived is None
    else:
        assert derived == f"{collection} --collect-only -q -p pytest_agentgate.pytest_plugin.count"


def _evidence(*counts: SuiteCount, findings: tuple[str, ...] = ()) -> IntegrityEvidence:
    evidence = IntegrityEvidence(Path("."), base=Base("main", "c" * 40, "test"))
    evidence.findings = [IntegrityFinding(rule, "x", "tests/t.py", 1) for rule in findings]
    evidence.counts = list(counts)
    evidence.count_path = "pytest.ini"
    return evidence


def test_the_judge_compares_the_counts() -> None:
    sha = "c" * 40
    fewer = SuiteCount(BaseCount("test", sha, 10, seconds=0.5), now=7)
    found, notes = compare_counts(_evidence(fewer))
    assert [(f.rule, f.path, f.line) for f in found] == [(COUNT_RULE, "pytest.ini", None)]
    assert found[0].message == (
        "10 tests ran at the base (commit ccccccc), 7 now; "
        "no removed test in the change explains the 3 missing"
    )
    assert notes == [
        "test count (test): 7 tests ran, 10 at the base (commit ccccccc, collected in 0.5 s)"
    ]
    assert compare_counts(_evidence(fewer, findings=("tests-fewer",)))[0] == []
    assert compare_counts(_evidence(fewer, findings=("suppression-added",)))[0] != []
    kept = SuiteCount(BaseCount("test", sha, 10, cached=True), now=12)
    assert compare_counts(_evidence(kept)) == (
        [],
        [
            "test count (test): 12 tests ran, 10 at the base "
            "(commit ccccccc, kept from an earlier verdict)"
        ],
    )
    unknown = SuiteCount(
        BaseCount("test", sha, 10, cached=True), None, "only part of the suite ran"
    )
    assert compare_counts(_evidence(unknown))[0] == []
    failed = SuiteCount(
        BaseCount("test", sha, None, "1 error(s) collecting the base's tests"), now=1
    )
    assert compare_counts(_evidence(failed)) == (
        [],
        ["test count (test): not compared with the base: 1 error(s) collecting the base's tests"],
    )
    other = SuiteCount(BaseCount("test", "d" * 40, 10), now=1)
    assert compare_counts(_evidence(other))[0] == []


@pytest.mark.parametrize(
    ("profile", "allow", "status", "severity"),
    [
        ("strict", None, "fail", "error"),
        ("standard", None, "pass", "warning"),  # a weakening rule: reported, not blocking
        ("strict", "pytest.ini", "pass", "warning"),
        ("strict", "tests/*", "fail", "error"),  # an entry for another path approves nothing
    ],
)
def test_the_count_blocks_by_profile_and_a_reviewer_may_allow_it(
    profile: str, allow: str | None, status: str, severity: str
) -> None:
    evidence = _evidence(SuiteCount(BaseCount("test", "c" * 40, 10, cached=True), now=7))
    if allow is not None:
        evidence.allow = [AllowRule(COUNT_RULE, allow, "the slow cases moved to the nightly run")]
    gate = GateConfig("integrity", "integrity", thresholds=defaults_for(profile, "integrity"))
    result = IntegrityGate().judge(gate, evidence)
    assert (result.status, [f.severity for f in result.findings]) == (status, [severity])
    assert result.actual == {"findings": 1, "blocking": int(status == "fail")}
    if allow == "pytest.ini":
        assert "allowed by the base's configuration: the slow cases" in result.findings[0].message


def test_the_count_plugin_writes_what_pytest_selected(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('x', [1, 2, 3])\ndef test_x(x):\n    pass\n"
        "\ndef test_slow():\n    pass\n"
    )
    (tmp_path / "test_b.py").write_text("import nothing_by_this_name\n")
    out = tmp_path / "count.json"
    env = {**os.environ, "AGENTGATE_COUNT_FILE": str(out)}
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "pytest_agentgate.pytest_plugin.count", "-k", "not slow"]
    subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, check=False)
    assert json.loads(out.read_text()) == {
        "selected": 3,
        "deselected": 1,
        "errors": 1,
        "status": 2,
        "tests": [
            "test_a.py::test_slow\ttest_a.py::test_slow",
            "test_a.py::test_x\ttest_a.py::test_x",
        ],
        "deselected_tests": ["test_a.py::test_slow"],
    }


DESELECT_FROM_LOCAL_STATE = """\
import pathlib


def pytest_collection_modifyitems(config, items):
    # What --sw, --lf and testmon do: deselect by state the repository does not hold.
    path = pathlib.Path(__file__).with_name(".deselect")
    if not path.exists():
        return
    names = set(path.read_text().split())
    gone = [item for item in items if item.name in names]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = [item for item in items if item.name not in names]
"""


def test_tests_deselected_by_local_state_are_not_missing(repo: Path, verify: Verify) -> None:
    # A checkout of the base has no such state: the counts compare what the suites hold,
    # deselected tests included (deselection is judged by its own rules).
    write(repo, "conftest.py", DESELECT_FROM_LOCAL_STATE)
    commit(repo, "deselect by local state")
    (repo / ".deselect").write_text("test_add test_sub\n")
    gate, _ = verify()
    assert not count_findings(gate), gate["findings"]
    assert gate["test_gate"]["status"] == "pass"


CHECKDOCS = """\
import pytest


class Check(pytest.Item):
    def runtest(self):
        assert self.path.read_text()


def pytest_collect_file(file_path, parent):
    # pytest-checkdocs' way: one item named "project" for each packaging file there is.
    if file_path.name in ("setup.cfg", "pyproject.toml"):
        return Check.from_parent(parent, name="project", path=file_path)
"""


def test_items_that_share_a_node_id_are_no_partial_run(tmp_path: Path) -> None:
    # Review 15: pytest-checkdocs made `.::project` twice (setup.cfg, pyproject.toml), pytest
    # ran both, the JUnit report holds one test of that name: "1 selected tests never ran".
    root = gated_project(
        tmp_path / "project",
        STRICT_TESTS,
        {
            "conftest.py": CHECKDOCS,
            "setup.cfg": "[metadata]\nname = calc\n",
            "pyproject.toml": "[project]\nname = 'calc'\n",
            "tests/test_one.py": "def test_one():\n    assert 1 + 1 == 2\n",
            ".gitignore": ".agentgate/\n__pycache__/\n",
        },
    )
    code, verdict = verify_json(root)
    assert code == 0, only_gate(verdict, "test")
    code, _, out = pytest_gated(root)
    assert code == 0, out


# -- which tests: the base's collection and this run's, by name ------------------------------

SLOW_BASE = "[pytest]\ntestpaths = tests\naddopts = -m 'not slow'\nmarkers =\n    slow: slow\n"


def with_slow_base(repo: Path, test_calc: str = TEST_CALC) -> None:
    write(repo, "pytest.ini", SLOW_BASE)
    write(repo, "tests/test_calc.py", test_calc)
    commit(repo, "the suite leaves slow tests out")


@pytest.mark.parametrize(
    "spelling",
    [
        ("def _later(f):\n    return pytest.mark.slow(f)\n\n\n", "@_later\n"),
        ("", '@getattr(pytest.mark, "slow")\n'),
        ('MARKS = {"later": pytest.mark.slow}\n\n\n', '@MARKS["later"]\n'),
    ],
    ids=["helper", "getattr", "dict"],
)
def test_a_base_test_taken_out_by_a_mark_of_any_spelling(
    repo: Path, verify: Verify, spelling: tuple[str, str]
) -> None:
    # Red team 36: a mark the base's `-m "not slow"` leaves out, put on a base test by a
    # spelling the static reader does not resolve; a new test keeps the count.
    with_slow_base(repo)
    helper, decorator = spelling
    write(
        repo,
        "tests/test_calc.py",
        f"import pytest\n\n\n{helper}{decorator}"
        + TEST_CALC
        + "\n\ndef test_mul():\n    assert 2 * 3 == 6\n",
    )
    gate, _ = verify()
    assert gate["status"] == "fail" and gate["exit_code_of_verify"] == 1
    found = [(f["code"], f["path"], f["message"]) for f in gate["findings"]]
    assert found == [
        (
            "skip-added",
            "tests/test_calc.py",
            "test_add ran at the base and this run's selection (-m, -k, --deselect) leaves it "
            "out: the change took it out of the run (a mark put on it, by whatever spelling, "
            "or the selection itself)",
        )
    ], found
    # The pytest door compares the same lists.
    code, _, out = pytest_gated(repo)
    assert code == 1 and "test_add ran at the base and this run's selection" in out, out


@pytest.mark.parametrize(
    "decorator",
    [
        "def _quiet(f):\n    f.__test__ = False\n    return f\n\n\n@_quiet\n",
        "@property\n",
        "def pytest_generate_tests(metafunc):\n    if metafunc.function.__name__ == 'test_add':\n"
        "        metafunc.parametrize([], [])\n\n\n",
    ],
    ids=["__test__", "property", "empty-parameter-set"],
)
def test_a_base_test_pytest_no_longer_collects(repo: Path, verify: Verify, decorator: str) -> None:
    # Red team 37: a helper setting `__test__ = False`, or `@property` on the test, and one
    # new test to keep the count: pytest silently stops collecting the base's test.
    write(
        repo,
        "tests/test_calc.py",
        decorator + TEST_CALC + "\n\ndef test_mul():\n    assert 2 * 3 == 6\n",
    )
    gate, _ = verify()
    assert gate["status"] == "fail" and gate["exit_code_of_verify"] == 1
    found = [(f["code"], f["path"], f["message"]) for f in gate["findings"]]
    assert found == [
        (
            COUNT_RULE,
            "tests/test_calc.py",
            "test_add was collected at the base and is not in this run: pytest no longer takes "
            "it for a test, or it has no case to run (`__test__ = False`, a decorator that "
            "makes it no function, an empty parameter set, a collection setting)",
        )
    ], found
    code, _, out = pytest_gated(repo)
    assert code == 1 and "test_add was collected at the base and is not in this run" in out


@pytest.mark.parametrize("honest", ["edit-slow", "new-slow", "rename", "split-file", "rename-slow"])
def test_honest_work_on_tests_is_no_finding_by_name(
    repo: Path, verify: Verify, honest: str
) -> None:
    # A slow test of the base edited (deselected at the base too), a new slow test, a test
    # renamed, tests moved to a new file: the lists agree with what the change shows.
    slow_calc = TEST_CALC.replace("def test_sub", "@pytest.mark.slow\ndef test_sub")
    with_slow_base(repo, "import pytest\n\n\n" + slow_calc)
    now = "import pytest\n\n\n" + slow_calc
    if honest == "edit-slow":
        now = now.replace("3 - 1 == 2", "4 - 1 == 3")
    elif honest == "new-slow":
        now += "\n\n@pytest.mark.slow\ndef test_big():\n    assert 10**6 > 0\n"
    elif honest == "rename":
        now = now.replace("def test_add", "def test_add_small_numbers")
    elif honest == "rename-slow":  # review 24: deselected at the base under its old name
        now = now.replace("def test_sub", "def test_subtraction")
    else:
        now = "import pytest\n\n\n@pytest.mark.slow\ndef test_sub():\n    assert 3 - 1 == 2\n"
        write(repo, "tests/test_add.py", "def test_add():\n    assert 1 + 2 == 3\n")
    write(repo, "tests/test_calc.py", now)
    gate, _ = verify()
    assert gate["findings"] == [] and gate["status"] == "pass", gate["findings"]


def test_the_judge_compares_the_tests_by_name() -> None:
    sha = "c" * 40
    base = BaseCount(
        "test",
        sha,
        3,
        tests=frozenset({"tests/t.py::test_a", "tests/t.py::test_b"}),
        deselected=frozenset(),
    )
    # Red team 39: a test named `test_b[zero]` is not `test_b`.
    now = SuiteCount(base, now=3, collected_now=("tests/t.py::test_a", "tests/t.py::test_b[zero]"))
    found, _ = compare_counts(_evidence(now))
    assert [(f.rule, f.path, f.message.split(" was ")[0]) for f in found] == [
        (COUNT_RULE, "tests/t.py", "test_b")
    ]
    # A run that lists too many to compare, where the base's are known: a person decides.
    over = SuiteCount(base, now=200_001, over_limit=True)
    [finding] = compare_counts(_evidence(over))[0]
    assert finding.rule == COUNT_RULE and finding.message.startswith(
        "this run collected more than 200,000 test functions, too many to compare by name "
        "with the 2 of the base"
    )
    # Not known (no witness in the run): no finding by name.
    assert compare_counts(_evidence(SuiteCount(base, now=3)))[0] == []


def test_a_kept_count_whose_lists_are_gone_or_forged_is_collected_again(tmp_path: Path) -> None:
    # Red team 39: a file put where the lists are kept; the count alone was then compared.
    root = tmp_path / "proj"
    root.mkdir()
    sha = "a" * 40
    tests = frozenset({"t.py::test_a"})
    base_counts.save(root, "k", sha, 1, tests, frozenset())
    kept = base_counts.load(root, "k", sha)
    assert kept is not None and kept.tests == tests
    lists = base_counts.counts_file(root).with_suffix("") / "k.json"
    document = json.loads(lists.read_text(encoding="utf-8"))
    document["tests"] = []
    lists.write_text(json.dumps(document), encoding="utf-8")
    assert base_counts.load(root, "k", sha) is None  # the seal no longer holds
    lists.unlink()
    assert base_counts.load(root, "k", sha) is None
    lists.parent.rmdir()
    lists.parent.write_text("in the way")
    base_counts.save(root, "k2", sha, 1, tests, frozenset())
    assert base_counts.load(root, "k2", sha) is None  # not kept without its lists


MIXIN = """\
class Checks:
    def test_add(self):
        assert 1 + 2 == 3

    def test_sub(self):
        assert 3 - 1 == 2


class TestCalc(Checks):
    pass
"""
MERGED_BASE = """\
def test_add():
    assert 1 + 2 == 3


def test_add_more():
    assert 2 + 2 == 4


def test_sub():
    assert 3 - 1 == 2
"""


@pytest.mark.parametrize(
    ("base", "now"),
    [
        (MIXIN, MIXIN.replace("class TestCalc(", "class TestCalcInts(")),
        (MIXIN, MIXIN.replace("def test_add(self)", "def test_add_small(self)")),
        (
            MIXIN,
            MIXIN.replace("def test_add(self)", "def test_add_small(self)").replace(
                "        assert 1 + 2 == 3\n",
                "        assert 1 + 2 == 3\n        assert 2 + 2 == 4\n",
            ),
        ),
        (
            MERGED_BASE,
            MERGED_BASE.replace(
                "    assert 1 + 2 == 3\n\n\ndef test_add_more():\n", "    assert 1 + 2 == 3\n"
            ),
        ),
        (
            MERGED_BASE,
            "import pytest\n\n\n@pytest.mark.parametrize(('a', 'b', 'c'), [(1, 2, 3), (2, 2, 4)])\n"
            "def test_adds(a, b, c):\n    assert a + b == c\n\n\n"
            "def test_sub():\n    assert 3 - 1 == 2\n",
        ),
    ],
    ids=[
        "subclass-renamed",
        "mixin-method-renamed",
        "mixin-method-renamed-one-more-assert",
        "tests-merged",
        "folded-into-parametrize",
    ],
)
def test_tests_renamed_where_pytest_does_not_see_a_def_or_merged_are_no_finding(
    repo: Path, verify: Verify, base: str, now: str
) -> None:
    # Reviews 24 and 25: the same code runs under other names (an inherited test, a mixin's
    # method renamed), or its statements run in another test: no test left the run.
    write(repo, "tests/test_calc.py", base)
    commit(repo, "the base's tests")
    write(repo, "tests/test_calc.py", now)
    gate, _ = verify()
    assert gate["findings"] == [] and gate["status"] == "pass", gate["findings"]


def test_a_subclass_that_inherits_a_test_swapped_for_one_with_other_data_is_found(
    repo: Path, verify: Verify
) -> None:
    # The same inherited code, run with other class data: not the same test.
    base = (
        "class Checks:\n    rate = 0\n\n    def test_rate(self):\n"
        "        assert self.rate >= 0\n\n\n"
    )
    write(repo, "tests/test_calc.py", base + "class TestZero(Checks):\n    rate = 0\n")
    commit(repo, "the base's tests")
    write(
        repo,
        "tests/test_calc.py",
        base + "class TestZero(Checks):\n    __test__ = False\n    rate = 0\n\n\n"
        "class TestOne(Checks):\n    rate = 1\n",
    )
    gate, _ = verify()
    assert [f["message"].split(" was ")[0] for f in gate["findings"]] == ["TestZero::test_rate"]


CLASS_BASE = """\
class TestCalc:
    def test_add(self):
        assert 1 + 2 == 3

    def test_add_more(self):
        assert 2 + 2 == 4
"""
CLASS_FOLDED = """\
import pytest


class TestCalc:
    @pytest.mark.parametrize(("a", "b", "c"), [(1, 2, 3), (2, 2, 4)])
    def test_adds(self, a, b, c):
        assert a + b == c
"""
# Another module imports the class (pytest collects it there too) and a subclass inherits it.
CLASS_REUSED = """\
from test_calc import TestCalc


class TestCalcAgain(TestCalc):
    {body}
"""


@pytest.mark.parametrize(
    ("again", "missing"),
    [
        ("pass", []),
        ("test_adds = None", ["TestCalcAgain::test_add", "TestCalcAgain::test_add_more"]),
    ],
    ids=["folded", "fold-not-inherited"],
)
def test_tests_folded_in_a_class_another_module_collects_are_still_collected_there(
    repo: Path, verify: Verify, again: str, missing: list[str]
) -> None:
    # Review 30 (itsdangerous): two tests of a class folded into one parametrized test, the
    # class imported by another test module and inherited by a subclass there: each copy of
    # the fold is collected where the two tests were.
    write(repo, "tests/test_calc.py", CLASS_BASE)
    write(repo, "tests/test_calc_again.py", CLASS_REUSED.format(body="pass"))
    commit(repo, "the base's tests")
    write(repo, "tests/test_calc.py", CLASS_FOLDED)
    write(repo, "tests/test_calc_again.py", CLASS_REUSED.format(body=again))
    gate, _ = verify()
    found = sorted(f["message"].split(" was ")[0] for f in count_findings(gate))
    assert found == missing, gate["findings"]
    assert gate["status"] == ("pass" if not missing else "fail"), gate["findings"]


@pytest.mark.parametrize(
    "borrow",
    [
        "@functools.wraps(test_add)\ndef test_mul():\n    assert 2 * 3 == 6\n",
        "def test_mul():\n    assert 2 * 3 == 6\n\n\ntest_mul.__qualname__ = 'test_add'\n",
    ],
    ids=["wraps", "qualname-assigned"],
)
def test_a_new_test_that_borrows_the_hidden_tests_name_is_not_it(
    repo: Path, verify: Verify, borrow: str
) -> None:
    # Red team 41: a new test given the failing test's name by `functools.wraps` or by hand,
    # and the real one hidden where the static reader does not look.
    write(
        repo,
        "tests/test_calc.py",
        "import functools\n\n\n"
        + TEST_CALC
        + "\n\nif True:\n    test_add.__test__ = False\n\n\n"
        + borrow,
    )
    gate, _ = verify()
    assert [f["message"].split(" was ")[0] for f in gate["findings"]] == ["test_add"], gate


def test_a_tests_code_run_under_other_globals_is_not_that_test(repo: Path, verify: Verify) -> None:
    # Red team 42: the failing test's code object given other globals as a new test, and the
    # original hidden: the same code name, another check.
    write(
        repo,
        "tests/test_calc.py",
        TEST_CALC
        + "\n\ntest_add_other = type(test_add)(test_add.__code__, dict(globals()),"
        + " 'test_add_other')"
        + "\n\n\nif True:\n    test_add.__test__ = False\n",
    )
    gate, _ = verify()
    assert [f["message"].split(" was ")[0] for f in gate["findings"]] == ["test_add"], gate
