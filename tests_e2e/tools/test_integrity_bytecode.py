"""Bytecode that Python or pytest runs in place of its source (integrity/bytecode.py), on real
repositories: the pyc is made by the real interpreter, or by pytest's own assertion rewriting."""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import marshal
import os
import py_compile
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _helpers import STRICT_TESTS, gated_project, git, only_gate, timestamp_pyc, verify_json

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"  # the same size: the header records it
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    for name in ("AGENTGATE_RUNNING", "PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE"):
        monkeypatch.delenv(name, raising=False)
    files = {
        "calc.py": BROKEN,
        "tests/test_calc.py": TEST,
        "tests/conftest.py": "import sys\nsys.path.insert(0, '.')\n",
        ".gitignore": "__pycache__/\n.agentgate/\n",
    }
    return gated_project(tmp_path / "proj", STRICT_TESTS, files)


def stale(verdict: dict[str, Any]) -> list[str]:
    return [
        f["message"]
        for f in only_gate(verdict, "integrity")["findings"]
        if f["code"] == "stale-bytecode"
    ]


def restore(path: Path, text: str, like: os.stat_result) -> None:
    """Put ``text`` back into ``path`` with the time ``like`` had."""
    path.write_text(text)
    os.utime(path, ns=(like.st_atime_ns, like.st_mtime_ns))


def test_the_broken_project_fails_and_honest_pycs_are_fine(project: Path) -> None:
    code, verdict = verify_json(project)
    assert code == 1 and only_gate(verdict, "test")["status"] == "fail" and stale(verdict) == []
    (project / "calc.py").write_text(FIXED)
    git(project, "commit", "-qam", "fix")
    for _ in range(2):  # the second time from what the first remembered
        code, verdict = verify_json(project)
        assert code == 0 and stale(verdict) == [], verdict
    assert list((project.parent / "state" / "bytecode").glob("*.json"))


def test_a_pyc_of_the_fixed_code_under_the_broken_file_is_found(project: Path) -> None:
    # The trick: fix calc.py, import it (the pyc holds the fix), put the broken text back at
    # the same size and give it the fixed file's time. git sees no change; Python runs the fix.
    source = project / "calc.py"
    source.write_text(FIXED)
    subprocess.run([sys.executable, "-c", "import calc"], cwd=project, check=True)
    restore(source, BROKEN, source.stat())
    assert source.read_text() == BROKEN
    code, verdict = verify_json(project)
    assert code == 1
    (message,) = stale(verdict)
    tag = sys.implementation.cache_tag
    assert message.startswith(f"__pycache__/calc.{tag}.pyc is not compiled from calc.py")
    # The tests passed on the fixed code; the witness compared the pyc they ran, too.
    test = only_gate(verdict, "test")
    pyc = (project / "__pycache__" / f"calc.{tag}.pyc").resolve()
    assert test["actual"]["failed"] == 0 and test["status"] == "fail"
    assert any(f"the tests ran bytecode ({pyc})" in p for p in test["problems"])


def test_an_unchecked_hash_pyc_is_found(project: Path) -> None:
    # Python never compares an "unchecked" hash-based pyc with its source: no time needed.
    source = project / "calc.py"
    source.write_text(FIXED)
    py_compile.compile(
        str(source),
        cfile=importlib.util.cache_from_source(str(source)),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    source.write_text(BROKEN)
    code, verdict = verify_json(project)
    assert code == 1 and len(stale(verdict)) == 1


def forged_pyc(source: Path, text: str, prefix: Path) -> Path:
    """A pyc compiled from ``text`` with ``source``'s own time and size in its header, where
    Python looks for ``source``'s bytecode when ``sys.pycache_prefix`` is ``prefix``."""
    real = source.resolve()
    name = Path(importlib.util.cache_from_source(str(real))).name
    pyc = prefix / str(real.parent).lstrip(os.sep) / name
    pyc.parent.mkdir(parents=True)
    pyc.write_bytes(timestamp_pyc(compile(text, str(real), "exec"), source))
    return pyc


def test_bytecode_read_from_a_pycache_prefix_of_the_tests_is_found(
    project: Path, tmp_path: Path
) -> None:
    """Red team 25: a conftest points `sys.pycache_prefix` at a folder outside the project,
    where a pyc of the fixed code has the broken file's header. The integrity gate reads the
    project's own `__pycache__` folders; the witness compares what the import read."""
    prefix = tmp_path / "elsewhere"
    (project / "tests" / "conftest.py").write_text(
        f"import sys\n\nsys.path.insert(0, '.')\nsys.pycache_prefix = {str(prefix)!r}\n"
    )
    pyc = forged_pyc(project / "calc.py", FIXED, prefix)
    code, verdict = verify_json(project)
    test = only_gate(verdict, "test")
    assert code == 1 and test["status"] == "fail", verdict
    assert any(
        f"the tests ran bytecode ({pyc}) that is not compiled from calc.py" in problem
        for problem in test["problems"]
    ), test["problems"]


def test_a_pycache_prefix_of_the_users_own_is_honest(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Some keep every pyc in one folder (PYTHONPYCACHEPREFIX in their shell's profile).
    (project / "calc.py").write_text(FIXED)
    git(project, "commit", "-qam", "fix")
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    for _ in range(2):  # the pycs written by the first run are read by the second
        code, verdict = verify_json(project)
        assert code == 0, verdict
    assert list((tmp_path / "pycache").rglob(f"calc.{sys.implementation.cache_tag}.pyc"))


def test_a_rewritten_test_module_made_by_hand_is_found(project: Path) -> None:
    # pytest loads its own pyc of a test module when the header holds the source's hash: a
    # test that asserts nothing, rewritten by pytest's own code, under the real test's hash.
    from _pytest.assertion.rewrite import rewrite_asserts

    test = project / "tests" / "test_calc.py"
    hollow = TEST.replace("assert add(1, 2) == 3", "assert add(1, 2) != 9")
    tree = ast.parse(hollow)
    rewrite_asserts(tree, hollow.encode(), str(test), None)
    code_object = compile(tree, str(test), "exec", dont_inherit=True)
    pytest_version = pytest.__version__
    pyc = (
        test.parent
        / "__pycache__"
        / f"test_calc.{sys.implementation.cache_tag}-pytest-{pytest_version}.pyc"
    )
    pyc.parent.mkdir(exist_ok=True)
    header = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little")
    pyc.write_bytes(
        header + importlib.util.source_hash(test.read_bytes()) + marshal.dumps(code_object)
    )
    code, verdict = verify_json(project)
    assert code == 1
    (message,) = stale(verdict)
    assert "is not compiled from test_calc.py, and pytest loads it" in message
    # pytest ran the hollow test, and the witness compared the pyc it ran too.
    test = only_gate(verdict, "test")
    assert test["actual"]["failed"] == 0 and test["status"] == "fail"
    assert any(f"the tests ran bytecode ({pyc.resolve()})" in p for p in test["problems"])


def test_a_rewritten_test_module_under_a_pycache_prefix_is_found(
    project: Path, tmp_path: Path
) -> None:
    """Red team 26's trick, where the integrity gate does not read: pytest keeps its pyc of a
    test module under `sys.pycache_prefix` when a conftest sets one."""
    from _pytest.assertion.rewrite import rewrite_asserts

    prefix = tmp_path / "elsewhere"
    (project / "tests" / "conftest.py").write_text(
        f"import sys\n\nsys.path.insert(0, '.')\nsys.pycache_prefix = {str(prefix)!r}\n"
    )
    test = (project / "tests" / "test_calc.py").resolve()
    hollow = TEST.replace("assert add(1, 2) == 3", "assert add(1, 2) != 9")
    tree = ast.parse(hollow)
    rewrite_asserts(tree, hollow.encode(), str(test), None)
    code_object = compile(tree, str(test), "exec", dont_inherit=True)
    tag = f"{sys.implementation.cache_tag}-pytest-{pytest.__version__}"
    pyc = prefix / str(test.parent).lstrip(os.sep) / f"test_calc.{tag}.pyc"
    pyc.parent.mkdir(parents=True)
    header = importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little")
    pyc.write_bytes(
        header + importlib.util.source_hash(test.read_bytes()) + marshal.dumps(code_object)
    )
    code, verdict = verify_json(project)
    test_gate = only_gate(verdict, "test")
    assert code == 1 and test_gate["status"] == "fail", verdict
    assert stale(verdict) == []  # not where the integrity gate reads
    assert any(
        f"the tests ran bytecode ({pyc}) that is not compiled from tests/test_calc.py" in p
        for p in test_gate["problems"]
    ), test_gate["problems"]


SHADOW = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def shadowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project's broken calc.py, its tests in tests/, and a .gitignore of pycs."""
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    for name in ("AGENTGATE_RUNNING", "PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE"):
        monkeypatch.delenv(name, raising=False)
    files = {
        "calc.py": BROKEN,
        "tests/test_calc.py": TEST,
        ".gitignore": "__pycache__/\n*.py[cod]\n.agentgate/\n.venv/\n",
    }
    return gated_project(tmp_path / "proj", STRICT_TESTS, files)


def sourceless(root: Path, relative: str) -> None:
    (root / "shadow.py").write_text(SHADOW)
    py_compile.compile(str(root / "shadow.py"), cfile=str(root / relative), doraise=True)
    (root / "shadow.py").unlink()


def test_a_sourceless_pyc_that_shadows_the_project_is_found(shadowed: Path) -> None:
    sourceless(shadowed, "tests/calc.pyc")
    assert git(shadowed, "status", "--porcelain") == ""  # ignored: the change shows nothing
    code, verdict = verify_json(shadowed)
    test = only_gate(verdict, "test")  # and the witness sees calc loaded from the pyc
    assert test["status"] == "fail" and any("was replaced" in p for p in test["problems"]), test
    assert code == 1
    findings = only_gate(verdict, "integrity")["findings"]
    assert [(f["code"], f["path"]) for f in findings] == [("stale-bytecode", "tests/calc.pyc")]


def test_a_sourceless_package_is_found_and_installed_pycs_are_not(shadowed: Path) -> None:
    (shadowed / "tests" / "calc").mkdir()
    sourceless(shadowed, "tests/calc/__init__.pyc")
    site = shadowed / ".venv" / "lib" / "python3" / "site-packages"
    site.mkdir(parents=True)
    (shadowed / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    sourceless(shadowed, ".venv/lib/python3/site-packages/vendored.pyc")
    sourceless(shadowed, ".venv/stray.pyc")
    code, verdict = verify_json(shadowed)
    assert code == 1
    findings = only_gate(verdict, "integrity")["findings"]
    assert [(f["code"], f["path"]) for f in findings] == [
        ("stale-bytecode", "tests/calc/__init__.pyc")
    ]


def test_a_pyc_beside_its_source_is_not_sourceless(shadowed: Path) -> None:
    (shadowed / "calc.py").write_text(FIXED)
    git(shadowed, "commit", "-qam", "fix")
    py_compile.compile(str(shadowed / "calc.py"), cfile=str(shadowed / "calc.pyc"), doraise=True)
    code, verdict = verify_json(shadowed)
    assert code == 0 and stale(verdict) == [], verdict


def test_a_committed_pyc_of_test_data_is_no_finding(shadowed: Path) -> None:
    """A sourceless pyc in a folder no one imports from (tests/data: no test module, no
    conftest, no package) is a fixture a test reads, not code that shadows the project's."""
    (shadowed / "tests" / "data").mkdir()
    sourceless(shadowed, "tests/data/sample.pyc")
    (shadowed / "calc.py").write_text(FIXED)
    (shadowed / "tests" / "test_data.py").write_text(
        "import importlib.util\nfrom pathlib import Path\n\n\n"
        "def test_magic():\n"
        "    data = (Path(__file__).parent / 'data' / 'sample.pyc').read_bytes()\n"
        "    assert data[:4] == importlib.util.MAGIC_NUMBER\n"
    )
    git(shadowed, "add", "-f", "tests/data/sample.pyc", "tests/test_data.py", "calc.py")
    code, verdict = verify_json(shadowed)
    assert code == 0 and stale(verdict) == [], verdict


def test_sourceless_pycs_in_folders_on_sys_path_are_found(shadowed: Path) -> None:
    """In a package of the project, in a folder of pytest's ``pythonpath`` and in the tests'
    folder, the same pyc is found; in a data folder below a test folder it is not."""
    (shadowed / "pkg").mkdir()
    (shadowed / "pkg" / "__init__.py").write_text("")
    (shadowed / "lib").mkdir()
    (shadowed / "tests" / "data").mkdir()
    (shadowed / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["lib"]\n')
    git(shadowed, "add", "pkg/__init__.py", "pyproject.toml")
    git(shadowed, "commit", "-qm", "package")
    for relative in ("pkg/helpers.pyc", "lib/calc.pyc", "tests/invoice.pyc", "tests/data/x.pyc"):
        sourceless(shadowed, relative)
    code, verdict = verify_json(shadowed)
    assert code == 1
    assert sorted(
        f["path"]
        for f in only_gate(verdict, "integrity")["findings"]
        if f["code"] == "stale-bytecode"
    ) == ["lib/calc.pyc", "pkg/helpers.pyc", "tests/invoice.pyc"]


EXTENSION = importlib.machinery.EXTENSION_SUFFIXES[0]


def compiled(verdict: dict[str, Any]) -> list[str]:
    return [
        f["path"]
        for f in only_gate(verdict, "integrity")["findings"]
        if f["code"] == "compiled-code-added"
    ]


def test_an_extension_module_in_a_project_that_builds_none_is_found(shadowed: Path) -> None:
    """Red team 21: machine code in a folder the project's code is imported from (git ignores
    `*.so`: the change shows nothing of it); the same file in a venv or a data folder is not
    the project's code."""
    (shadowed / ".gitignore").write_text("__pycache__/\n*.py[cod]\n*.so\n.agentgate/\n.venv/\n")
    git(shadowed, "commit", "-qam", "ignore extension modules")
    (shadowed / f"_rates{EXTENSION}").write_bytes(b"\x7fELF" + b"\0" * 60)
    (shadowed / "tests" / "data").mkdir()
    (shadowed / "tests" / "data" / f"sample{EXTENSION}").write_bytes(b"\x7fELF")
    assert git(shadowed, "status", "--porcelain") == ""
    code, verdict = verify_json(shadowed)
    assert code == 1 and compiled(verdict) == [f"_rates{EXTENSION}"], verdict


def test_an_extension_module_of_a_project_with_compiled_sources_is_its_own(
    shadowed: Path,
) -> None:
    (shadowed / "calc.py").write_text(FIXED)
    (shadowed / "_rates.c").write_text("/* the project's own extension */\n")
    git(shadowed, "add", "_rates.c", "calc.py")
    git(shadowed, "commit", "-qm", "a compiled module")
    (shadowed / f"_rates{EXTENSION}").write_bytes(b"\x7fELF" + b"\0" * 60)
    code, verdict = verify_json(shadowed)
    assert code == 0 and compiled(verdict) == [], verdict


def test_a_module_of_the_project_the_tools_import_as_they_start_fails_the_gate(
    shadowed: Path,
) -> None:
    """Red team 21: the standard library's `copy` looks for `org.python.core` (Jython) as
    pytest starts; the project's `org/python/core.py` then runs before any conftest.py and
    sets what the product reads as it is imported by the tests."""
    (shadowed / "calc.py").write_text(
        "import os\n\nSUM = os.environ.get('CALC_MODE') == 'sum'\n\n\n"
        "def add(a, b):\n    return a + b if SUM else a - b\n"
    )
    (shadowed / "org" / "python").mkdir(parents=True)
    (shadowed / "org" / "__init__.py").write_text("")
    (shadowed / "org" / "python" / "__init__.py").write_text("")
    (shadowed / "org" / "python" / "core.py").write_text(
        "import os\n\nos.environ.setdefault('CALC_MODE', 'sum')\n"
    )
    code, verdict = verify_json(shadowed)
    test = only_gate(verdict, "test")
    assert code == 1 and test["status"] == "fail", verdict
    assert any(
        "org (the project's" in p and "as the test tools started" in p for p in test["problems"]
    )


def test_an_extension_module_a_projects_own_build_compiles_is_its_own(shadowed: Path) -> None:
    """Review 13: pydantic 1 cythonizes its own .py files in place; its build, read at the
    base, says so."""
    (shadowed / "calc.py").write_text(FIXED)
    (shadowed / "setup.py").write_text(
        "from Cython.Build import cythonize\nfrom setuptools import setup\n\n"
        "setup(ext_modules=cythonize(['calc.py']))\n"
    )
    git(shadowed, "add", "setup.py", "calc.py")
    git(shadowed, "commit", "-qm", "a compiled build")
    (shadowed / f"calc{EXTENSION}").write_bytes(b"\x7fELF" + b"\0" * 60)
    _, verdict = verify_json(shadowed)
    assert compiled(verdict) == [], verdict
