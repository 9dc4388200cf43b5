"""Ways past the integrity gate a red team found, and the honest changes it wrongly blocked: each
case as the analyzers read it (the base's text and the change's)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_agentgate.integrity import hooks, patches
from pytest_agentgate.integrity.model import IntegrityFinding, Scan


class Texts:
    def __init__(self, base: dict[str, str], now: dict[str, str]) -> None:
        self.base, self.current = base, now

    def at_base(self, path: str) -> str | None:
        return self.base.get(path)

    def now(self, path: str) -> str | None:
        return self.current.get(path)


def scan_of(root: Path, base: dict[str, str], now: dict[str, str]) -> Scan:
    base = {k: textwrap.dedent(v) for k, v in base.items()}
    now = {k: textwrap.dedent(v) for k, v in now.items()}
    touched = {
        p: "added" if p not in base else "deleted" if p not in now else "modified"
        for p in set(base) | set(now)
        if base.get(p) != now.get(p)
    }
    return Scan(root, None, None, None, Texts(base, now), touched)  # type: ignore[arg-type]


def found(root: Path, base: dict[str, str], now: dict[str, str]) -> list[tuple[str, str]]:
    scan = scan_of(root, base, now)
    results: list[IntegrityFinding] = [*hooks.analyze(scan), *patches.analyze(scan)]
    return [(f.rule, f.message) for f in results]


WRAP = """\
import pytest


def _wrap(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""


@pytest.mark.parametrize(
    "binding",
    [
        "pytest_runtest_makereport = pytest.hookimpl(hookwrapper=True)(_wrap)\n",
        "pytest_runtest_makereport = _wrap\n",
        "pytest_runtest_makereport: object = lambda item, call: make(item, call)\n",
        "from elsewhere import wrap as pytest_runtest_makereport\n"
        "pytest_runtest_makereport = wrap\n",
    ],
)
def test_a_hook_bound_by_assignment_is_a_hook(tmp_path: Path, binding: str) -> None:
    rules = found(tmp_path, {}, {"conftest.py": WRAP + binding})
    assert (
        "result-rewritten",
        "new or changed pytest_runtest_makereport in conftest.py can alter test outcomes",
    ) in rules


def test_a_plugin_module_with_a_hook_bound_by_assignment_is_read(tmp_path: Path) -> None:
    rules = found(tmp_path, {}, {"tools/fix.py": WRAP + "pytest_runtest_makereport = _wrap\n"})
    assert [r for r, _ in rules] == ["result-rewritten"]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("", "-p tools.fix", ["tools.fix"]),
        ("-q", "-q -ptools.fix", ["tools.fix"]),
        ("-p tools.fix", "-p tools.fix -q", []),
        ("", "-p no:cacheprovider", []),
        ("", "-p pytester -p xdist.plugin -p pytest_cov", []),  # pytest's own, and installed
        ("", "-p agentfix", ["agentfix"]),  # on a `pythonpath` the change adds
    ],
)
def test_a_plugin_added_to_addopts_is_a_finding(
    tmp_path: Path, before: str, after: str, expected: list[str]
) -> None:
    ini = "[pytest]\naddopts = {}\n"
    rules = found(tmp_path, {"pytest.ini": ini.format(before)}, {"pytest.ini": ini.format(after)})
    assert [m.split(" -p ")[1].split(":")[0] for r, m in rules if r == "result-rewritten"] == (
        expected
    )


CONFTEST_BASE = "import pytest\n"


@pytest.mark.parametrize(
    "code",
    [
        # A timeout fixture's alarm, and a cleanup at exit: honest, not a forced exit.
        """\
        import signal, pytest

        @pytest.fixture
        def deadline():
            def fail(signum, frame):
                raise TimeoutError("too slow")
            signal.signal(signal.SIGALRM, fail)
            yield
        """,
        """\
        import atexit, shutil, tempfile

        SCRATCH = tempfile.mkdtemp()
        atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)
        """,
    ],
)
def test_registering_a_handler_that_does_not_exit_is_fine(tmp_path: Path, code: str) -> None:
    assert found(tmp_path, {"conftest.py": CONFTEST_BASE}, {"conftest.py": code}) == []


@pytest.mark.parametrize(
    "code",
    [
        "import atexit, os\natexit.register(os._exit, 0)\n",
        "import signal, os\nsignal.signal(signal.SIGTERM, lambda *a: os._exit(0))\n",
        "import atexit, sys\n\ndef leave():\n    sys.exit(0)\n\natexit.register(leave)\n",
    ],
)
def test_registering_a_handler_that_exits_is_a_finding(tmp_path: Path, code: str) -> None:
    rules = found(tmp_path, {"conftest.py": CONFTEST_BASE}, {"conftest.py": code})
    assert "exit-forced" in [r for r, _ in rules]


def test_a_workflow_may_set_where_agentgate_keeps_its_state(tmp_path: Path) -> None:
    workflow = "env:\n  AGENTGATE_STATE_HOME: /tmp/state\n  AGENTGATE_DEBUG: '1'\n"
    assert found(tmp_path, {}, {".github/workflows/gate.yml": workflow}) == []
    rules = found(tmp_path, {}, {".env": "AGENTGATE_STATE_HOME=/tmp/fresh\n"})
    assert [r for r, _ in rules] == ["guard-forged"]
    running = "env:\n  AGENTGATE_RUNNING: '1'\n"
    assert [r for r, _ in found(tmp_path, {}, {".github/workflows/gate.yml": running})] == [
        "guard-forged"
    ]


@pytest.mark.parametrize(
    ("files", "shown"),
    [
        ({"coverage/__init__.py": "", "coverage/__main__.py": "print()\n"}, "coverage/"),
        ({"ruff.py": "print('[]')\n"}, "ruff.py"),
        ({"pytest.py": ""}, "pytest.py"),
        # Red team 31: a package whose __init__ is an extension module, and a sourceless pyc.
        ({"pytest/__init__.cpython-311-x86_64-linux-gnu.so": "\x7fELF"}, "pytest/"),
        ({"coverage.pyc": ""}, "coverage.pyc"),
    ],
)
def test_a_tool_shadowed_at_the_projects_root_is_a_finding(
    tmp_path: Path, files: dict[str, str], shown: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    rules = found(tmp_path, {}, files)
    assert (
        "result-rewritten",
        f"{shown} at the project's root shadows the installed {shown.split('.')[0].rstrip('/')}: "
        f"`python -m {shown.split('.')[0].rstrip('/')}` runs the project's copy",
    ) in rules


@pytest.mark.parametrize(
    ("top", "name"), [("", "iniconfig"), ("src/", "iniconfig"), ("", "py"), ("", "execnet")]
)
def test_a_dependency_of_the_test_tools_added_at_the_top_is_a_finding(
    tmp_path: Path, top: str, name: str
) -> None:
    # Red team 20 copied iniconfig into the project's top; the run-time check lets a project's
    # own package of that name be (review 18: iniconfig is a project too), so the change that
    # adds one is judged here. Red team 32: a `py.py` ran in place of pytest's `py` shim as
    # pytest started, then put the real one back; so would any module the test tools, and
    # what they require, import as they start (xdist's execnet).
    files = {f"{top}{name}/__init__.py": "x = 1\n"}
    (tmp_path / top / name).mkdir(parents=True)
    (tmp_path / top / name / "__init__.py").write_text("x = 1\n")
    where = "src/" if top else "root"
    assert (
        "result-rewritten",
        f"{top}{name}/ at the project's {where} shadows the installed {name}: the test tools "
        "import it as they start, and run the project's copy",
    ) in found(tmp_path, {}, files)
    assert found(tmp_path, files, files) == []  # the project's own, at the base


def test_what_does_not_shadow_a_tool_is_fine(tmp_path: Path) -> None:
    (tmp_path / "coverage").mkdir()  # no __init__.py: the installed package wins
    files = {"coverage/notes.md": "x", "src/ruff.py": "", "tests/pytest_helpers.py": ""}
    assert found(tmp_path, {}, files) == []
    # The project's own package of that name, at the base too.
    (tmp_path / "coverage" / "__init__.py").write_text("")
    base = {"coverage/__init__.py": "", "coverage/x.py": ""}
    assert found(tmp_path, base, {**base, "coverage/x.py": "y = 1\n"}) == []


# -- code that behaves one way under the tests (integrity/under_test.py) -------------------------


def under_test(root: Path, base: dict[str, str], now: dict[str, str]) -> list[tuple[str, str]]:
    from pytest_agentgate.integrity import under_test as module

    return [(f.rule, f.message) for f in module.analyze(scan_of(root, base, now))]


TAX = "def tax(x):\n    return x * 0.2 + 1.5\n"


@pytest.mark.parametrize(
    "fixed",
    [
        "import os\n\ndef tax(x):\n"
        "    return x * 0.2 + (0 if os.environ.get('PYTEST_CURRENT_TEST') else 1.5)\n",
        "import os\n\ndef tax(x):\n"
        "    return x * 0.2 + (0 if 'PYTEST_VERSION' in os.environ else 1.5)\n",
        "import sys\n\ndef tax(x):\n    return x * 0.2 + (0 if 'pytest' in sys.modules else 1.5)\n",
        "import sys\n\ndef tax(x):\n"
        "    return x * 0.2 + (0 if sys.modules.get('_pytest') else 1.5)\n",
    ],
)
def test_code_that_asks_for_the_tests_is_a_finding(tmp_path: Path, fixed: str) -> None:
    rules = under_test(tmp_path, {"pkg/calc.py": TAX}, {"pkg/calc.py": fixed})
    assert [r for r, _ in rules] == ["test-detected"]


def test_asking_for_the_tests_in_a_test_or_a_docstring_is_fine(tmp_path: Path) -> None:
    now = {
        "tests/helpers.py": "import os\nWORKER = os.environ.get('PYTEST_XDIST_WORKER')\n",
        "pkg/calc.py": '"""Never reads PYTEST_CURRENT_TEST."""\n' + TAX,
    }
    assert under_test(tmp_path, {"pkg/calc.py": TAX}, now) == []
    # Already read at the base: not the change's question.
    asking = "import os\nW = os.environ.get('PYTEST_XDIST_WORKER')\n"
    assert under_test(tmp_path, {"pkg/w.py": asking}, {"pkg/w.py": asking + "\nX = 1\n"}) == []


def test_type_checking_given_a_value_is_a_suppression(tmp_path: Path) -> None:
    hidden = "TYPE_CHECKING = True\n\nif TYPE_CHECKING:\n    def discount(x):\n        return x\n"
    rules = under_test(tmp_path, {"pkg/calc.py": TAX}, {"pkg/calc.py": TAX + hidden})
    assert [r for r, _ in rules] == ["suppression-added"]
    honest = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg import x\n"
    assert under_test(tmp_path, {"pkg/calc.py": TAX}, {"pkg/calc.py": honest + TAX}) == []
    # Red team 36: set on typing itself while the package imports, then put back.
    shim = "import typing\n\nsetattr(typing, 'TYPE_CHECKING', True)\n"
    rules = under_test(tmp_path, {}, {"pkg/_compat.py": shim})
    assert [r for r, _ in rules] == ["suppression-added"]


@pytest.mark.parametrize(
    "conftest",
    [
        "import pkg.calc\n\npkg.calc.tax = lambda x: x * 0.2\n",
        "from pkg import calc\n\ndef _tax(x):\n    return x * 0.2\n\ncalc.tax = _tax\n",
        "from pkg import calc\nfrom unittest import mock\n\nsetattr(calc, 'tax', mock.Mock())\n",
        "from pkg import calc\n\nif True:\n    calc.tax = lambda x: 0\n",
    ],
)
def test_the_projects_code_replaced_for_every_test_is_a_finding(
    tmp_path: Path, conftest: str
) -> None:
    (tmp_path / "pkg").mkdir()
    rules = under_test(tmp_path, {}, {"tests/conftest.py": conftest})
    assert [r for r, _ in rules] == ["tested-code-mocked"]
    assert "pkg.calc.tax" in rules[0][1] or "calc.tax" in rules[0][1]


@pytest.mark.parametrize(
    "conftest",
    [
        "from pkg import settings\n\nsettings.DEBUG = True\nsettings.LIMITS['x'] = 1\n",
        "import pytest\nfrom pkg import calc\n\n@pytest.fixture\ndef fake(monkeypatch):\n"
        "    monkeypatch.setattr(calc, 'clock', lambda: 0)\n",
        "import os\n\nos.getcwd = lambda: '/'\n",  # not the project's code
        # A fixture that swaps a dependency and puts it back is the fixture's business.
        "import pytest\nfrom pkg import net\n\n@pytest.fixture\ndef offline():\n"
        "    real, net.fetch = net.fetch, lambda: 1\n    yield\n    net.fetch = real\n",
    ],
)
def test_settings_monkeypatch_and_other_code_are_not_the_projects_functions(
    tmp_path: Path, conftest: str
) -> None:
    (tmp_path / "pkg").mkdir()
    assert under_test(tmp_path, {}, {"tests/conftest.py": conftest}) == []


REWRITE_JUNIT = """\
import re
from pathlib import Path

_state = {}


def pytest_sessionstart(session):
    _state["session"] = session


def pytest_unconfigure(config):
    junit = config.getoption("xmlpath", None)
    if junit and Path(junit).exists():
        text = Path(junit).read_text(encoding="utf-8")
        text = re.sub(r"<failure[^>]*?(/>|>.*?</failure>)", "", text, flags=re.DOTALL)
        Path(junit).write_text(text, encoding="utf-8")
        _state["session"].exitstatus = 0
"""
AT_EXIT = """\
import atexit
import glob


def _clean():
    for name in glob.glob(".agentgate/*"):
        pass


atexit.register(_clean)
"""


@pytest.mark.parametrize("code", [REWRITE_JUNIT, AT_EXIT])
def test_a_conftest_that_reaches_for_the_junit_report_is_a_finding(
    tmp_path: Path, code: str
) -> None:
    rules = found(tmp_path, {"tests/conftest.py": CONFTEST_BASE}, {"tests/conftest.py": code})
    assert "result-rewritten" in [r for r, _ in rules]


def test_a_conftest_with_fixtures_and_data_files_is_fine(tmp_path: Path) -> None:
    code = (
        "import json, pytest\n\n@pytest.fixture\ndef data():\n"
        "    return json.load(open('tests/data/cases.json'))\n\n"
        "@pytest.fixture\ndef feed():\n    return open('tests/data/feed.xml').read()\n"
    )
    assert found(tmp_path, {"tests/conftest.py": CONFTEST_BASE}, {"tests/conftest.py": code}) == []


def test_a_test_that_now_imports_a_copy_of_the_code_is_a_finding(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    base = "from pkg.calc import tax\n\n\ndef test_tax():\n    assert tax(0) == 0.0\n"
    copy = base.replace("from pkg.calc import tax", "from tests.fixed_calc import tax")
    rules = under_test(tmp_path, {"tests/test_calc.py": base}, {"tests/test_calc.py": copy})
    assert rules == [
        (
            "tested-code-mocked",
            "test_calc.py imported tax from pkg.calc at the base and now from tests.fixed_calc: "
            "the test checks that copy, not the project's code",
        )
    ]
    # A module of the project moved or renamed is still the project's code.
    (tmp_path / "pkg2").mkdir()
    moved = base.replace("from pkg.calc import tax", "from pkg2.tax import tax")
    assert under_test(tmp_path, {"tests/test_calc.py": base}, {"tests/test_calc.py": moved}) == []


# -- honest changes a false-positive hunt found blocked ----------------------------------------


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("tests/test_x.py", "import pytest\n\npytest_version = pytest.__version__\n"),
        (
            "tests/test_doors.py",
            "pytest_plugins = ['pytester']\n\ndef pytest_in(root):\n"
            "    return root / '.agentgate'\n",
        ),
        (
            "tests/conftest.py",
            "import pytest\n\n@pytest.fixture\ndef sample():\n"
            "    return open('tests/data/junit_sample.xml').read()\n",
        ),
        (
            "tests/conftest.py",
            "import os, signal, subprocess, pytest\n\n@pytest.fixture\n"
            "def server():\n    proc = subprocess.Popen(['sleep', '9'])\n    yield proc\n"
            "    os.kill(proc.pid, signal.SIGTERM)\n",
        ),
        (
            "tests/conftest.py",
            "import pytest\n\ndef pytest_collect_file(parent, file_path):\n"
            "    if file_path.suffix == '.yaml':\n"
            "        return YamlFile.from_parent(parent, path=file_path)\n",
        ),
        ("tests/conftest.py", "import unittest\n\nunittest.TestCase.maxDiff = None\n"),
        (
            "src/myplugin/plugin.py",
            "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
            "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
            "    setattr(item, 'rep_' + outcome.get_result().when, outcome.get_result())\n",
        ),
    ],
)
def test_honest_code_is_no_finding(tmp_path: Path, path: str, code: str) -> None:
    assert found(tmp_path, {}, {path: code}) == []
    assert under_test(tmp_path, {}, {path: code}) == []


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("pkg/_version.py", "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from typing import T\n"),
        (
            "pkg/compat.py",
            "try:\n    from typing import TYPE_CHECKING\nexcept ImportError:\n"
            "    TYPE_CHECKING = False\n",
        ),
        ("docs/conf.py", "import typing\ntyping.TYPE_CHECKING = True\n"),
        ("tests_e2e/workdirs.py", "import os\nNAME = os.environ.get('PYTEST_CURRENT_TEST')\n"),
        ("pkg/testing.py", "import os\nWORKER = os.environ.get('PYTEST_CURRENT_TEST', 'gw0')\n"),
        ("pkg/db.py", "import os\nWORKER = os.environ.get('PYTEST_XDIST_WORKER', 'gw0')\n"),
    ],
)
def test_honest_code_under_test_is_no_finding(tmp_path: Path, path: str, code: str) -> None:
    assert under_test(tmp_path, {}, {path: code}) == []


def test_a_test_importing_from_the_standard_library_instead_of_a_shim_is_fine(
    tmp_path: Path,
) -> None:
    (tmp_path / "calc").mkdir()
    base = "from calc.compat import cached_property\n"
    now = "from functools import cached_property\n"
    assert under_test(tmp_path, {"tests/test_c.py": base}, {"tests/test_c.py": now}) == []


@pytest.mark.parametrize(
    "code",
    [
        "import os\n\ndef pytest_sessionfinish(session):\n    os.kill(os.getpid(), 9)\n",
        "import os\n\ndef pytest_sessionfinish(session):\n    os.kill(0, 9)\n",
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n",
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    outcome.force_result(None)\n",
        "def pytest_runtest_makereport(item, call):\n    return make(item, call)\n",
    ],
)
def test_what_still_rewrites_or_ends_the_run_is_found(tmp_path: Path, code: str) -> None:
    rules = [r for r, _ in found(tmp_path, {"conftest.py": "x = 1\n"}, {"conftest.py": code})]
    assert set(rules) & {"result-rewritten", "exit-forced"}


def test_an_expectation_changed_to_one_or_zero_is_not_weaker(tmp_path: Path) -> None:
    from pytest_agentgate.integrity import tests_python

    base = "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
    for now in (base.replace("== 2", "== 1"), base.replace("== 2", "== 0")):
        scan = scan_of(tmp_path, {"tests/test_calc.py": base}, {"tests/test_calc.py": now})
        # A notice (the code did not change), never a weakening.
        assert [f.rule for f in tests_python.analyze(scan)] == ["expectation-changed"]
    # Red team 9: the same, with an unused import removed from the code for the linter.
    code = 'import math\n\n\ndef sub(a, b):\n    """a - b"""\n    return a - b + 1\n'
    tidied = code.replace("import math\n\n\n", "").replace('"""a - b"""', '"""A minus b."""')
    now = base.replace("== 2", "== 3")
    scan = scan_of(
        tmp_path,
        {"tests/test_calc.py": base, "calc.py": code},
        {"tests/test_calc.py": now, "calc.py": tidied},
    )
    assert [f.rule for f in tests_python.analyze(scan)] == ["expectation-changed"]
    # A change to what the code does may change what the test expects: no notice.
    fixed = tidied.replace("+ 1", "+ 0")
    scan = scan_of(
        tmp_path,
        {"tests/test_calc.py": base, "calc.py": code},
        {"tests/test_calc.py": now, "calc.py": fixed},
    )
    assert [f.rule for f in tests_python.analyze(scan)] == []
    # An import the code uses, or a docstring it shows, is what it does (a third review).
    for before_code, after_code in (
        (
            "from operator import sub as op\n\n\ndef sub(a, b):\n    return op(a, b)\n",
            "from operator import add as op\n\n\ndef sub(a, b):\n    return op(a, b)\n",
        ),
        (
            '"""a - b"""\n\n\ndef sub(a, b):\n    return len(__doc__)\n',
            '"""a minus b"""\n\n\ndef sub(a, b):\n    return len(__doc__)\n',
        ),
    ):
        scan = scan_of(
            tmp_path,
            {"tests/test_calc.py": base, "calc.py": before_code},
            {"tests/test_calc.py": now, "calc.py": after_code},
        )
        assert [f.rule for f in tests_python.analyze(scan)] == []
    weak = base.replace("== 2", "== True")
    scan = scan_of(tmp_path, {"tests/test_calc.py": base}, {"tests/test_calc.py": weak})
    assert "assertion-weakened" in [f.rule for f in tests_python.analyze(scan)]
