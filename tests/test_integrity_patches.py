"""Code that patches the test tools themselves (integrity/patches.py), and the files pytest loads
from folders the project's own .gitignore hides (git.pytest_loads_in)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentgate.integrity.patches import TOOLS, own_packages, patched


def targets(code: str, tools: frozenset[str] = TOOLS) -> list[str]:
    return [target for target, _ in patched(ast.parse(code), tools)]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "import _pytest.reports\n"
            "_pytest.reports.TestReport.from_item_and_call = classmethod(f)\n",
            ["_pytest.reports.TestReport.from_item_and_call"],
        ),
        (
            "from _pytest.reports import TestReport as R\nR.outcome = 'passed'\n",
            ["_pytest.reports.TestReport.outcome"],
        ),
        (
            "import _pytest.runner as runner\ndel runner.call_and_report\n",
            ["_pytest.runner.call_and_report"],
        ),
        (
            "from _pytest import junitxml\n"
            "setattr(junitxml.LogXML, 'pytest_runtest_logreport', f)\n",
            ["_pytest.junitxml.LogXML.pytest_runtest_logreport"],
        ),
        (
            "def test_x(monkeypatch):\n"
            "    monkeypatch.setattr('_pytest.reports.TestReport.from_item_and_call', f)\n",
            ["_pytest.reports.TestReport.from_item_and_call"],
        ),
        (
            "from unittest import mock\n@mock.patch('coverage.Coverage.report')\ndef test_x(m):\n"
            "    pass\n",
            ["coverage.Coverage.report"],
        ),
        (
            "from unittest.mock import patch\nimport pluggy\n"
            "with patch.object(pluggy.PluginManager, 'hook'):\n    pass\n",
            ["pluggy.PluginManager.hook"],
        ),
        (
            "import pytest_agentgate.pytest_plugin.witness as w\nw.COUNTS, x = (), 1\n",
            ["pytest_agentgate.pytest_plugin.witness.COUNTS"],
        ),
        ("import xdist\nxdist.plugin.x += 1\n", ["xdist.plugin.x"]),
        (
            "from unittest import TestCase\nTestCase.assertEqual = lambda *a, **k: None\n",
            ["unittest.TestCase.assertEqual"],
        ),
        ("import pytest\npytest.skip.Exception = AssertionError\n", ["pytest.skip.Exception"]),
    ],
)
def test_patches_of_the_tools_are_found(code: str, expected: list[str]) -> None:
    assert targets(code) == expected


@pytest.mark.parametrize(
    "code",
    [
        "from _pytest.fixtures import FixtureRequest\n\ndef f(request: FixtureRequest): ...\n",
        "import pytest\n\nx = pytest.approx(1)\npytest_plugins = ['a']\n",
        "import calc\n\ndef test_x(monkeypatch):\n    monkeypatch.setattr(calc, 'add', f)\n",
        "def test_x(monkeypatch):\n    monkeypatch.setattr('calc.add', f)\n",
        "import pytest\n\nclass T:\n    def setup_method(self):\n        self.mark = pytest.mark\n",
        "import _pytest\n_pytest = None\n",  # rebinding a name patches nothing
        "from unittest import mock\n@mock.patch('os.getcwd')\ndef test_x(m): ...\n",
        "import coverage\nsetattr(obj, 'coverage', 1)\n",
        "from unittest import mock\n\ndef test_x():\n    m = mock.Mock()\n    m.return_value = 1\n",
        "from unittest import TestCase\n\nclass T(TestCase):\n    maxDiff = None\n",
    ],
)
def test_using_the_tools_is_not_patching_them(code: str) -> None:
    assert targets(code) == []


def test_a_local_flake8_plugin_that_patches_flake8_is_found(tmp_path: Path) -> None:
    # Red team 34: a `[flake8:local-plugins]` extension of the project's folder replaced
    # `StyleGuide.handle_error`, and every finding vanished. A checker that reads flake8's
    # names patches nothing.
    from pytest_agentgate.config.model import Config
    from pytest_agentgate.integrity import patches
    from pytest_agentgate.integrity.model import Scan

    quiet = (
        "import flake8.style_guide\n\n\nclass Plugin:\n    name = 'quiet'\n\n"
        "    def __init__(self, tree):\n        pass\n\n    def run(self):\n"
        "        return iter(())\n\n\n"
        "flake8.style_guide.StyleGuide.handle_error = lambda *a, **k: 0\n"
    )
    checker = (
        "import ast\n\n\nclass NoBreakpoint:\n    name = 'nobreak'\n    version = '1'\n\n"
        "    def __init__(self, tree: ast.AST):\n        self.tree = tree\n\n"
        "    def run(self):\n        for node in ast.walk(self.tree):\n"
        "            if getattr(getattr(node, 'func', None), 'id', '') == 'breakpoint':\n"
        "                yield node.lineno, node.col_offset, 'X200 breakpoint', type(self)\n"
    )

    class Sources:
        def now(self, path: str) -> str | None:
            return {"lintplug/quiet.py": quiet, "lintplug/checks.py": checker}.get(path)

        def at_base(self, path: str) -> str | None:
            return None

    touched = {"lintplug/quiet.py": "added", "lintplug/checks.py": "added"}
    scan = Scan(tmp_path, None, None, Config(tmp_path), Sources(), touched)
    found = [(f.path, f.message) for f in patches.analyze(scan)]
    assert found == [
        (
            "lintplug/quiet.py",
            "quiet.py patches flake8.style_guide.StyleGuide.handle_error, code of the lint "
            "tools: it can rewrite what they report",
        )
    ]


def test_a_projects_own_package_is_not_a_tool(tmp_path: Path) -> None:
    assert own_packages(tmp_path) == frozenset()
    (tmp_path / "src" / "pluggy").mkdir(parents=True)
    (tmp_path / "src" / "pluggy" / "__init__.py").write_text("")
    (tmp_path / "coverage").mkdir()
    (tmp_path / "coverage" / "__init__.py").write_text("")
    assert own_packages(tmp_path) == {"pluggy", "coverage"}
    # Review 22: flake8's own repository, and pycodestyle, which is one module.
    (tmp_path / "src" / "flake8").mkdir()
    (tmp_path / "src" / "flake8" / "__init__.py").write_text("")
    (tmp_path / "pycodestyle.py").write_text("")
    assert own_packages(tmp_path) == {"pluggy", "coverage", "flake8", "pycodestyle"}
    assert targets("import pluggy\npluggy.x = 1\n", TOOLS - own_packages(tmp_path)) == []


# -- through the doors, on a real repository -----------------------------------------------------


# -- the same at run time: the witness sees what reading the source cannot ------------------------


def test_replaced_names_what_the_project_wrote_over_a_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    import _pytest.junitxml
    import _pytest.reports

    from pytest_agentgate.pytest_plugin.tampering import replaced

    assert replaced() == []

    def passed(cls: Any, item: Any, call: Any) -> None: ...

    # A method of its own beside pytest's: this test's own report is still made by pytest.
    with monkeypatch.context() as patch:
        patch.setattr(_pytest.reports.TestReport, "probe", classmethod(passed), raising=False)
        found = replaced()
    assert len(found) == 1 and found[0].startswith("_pytest.reports.TestReport.probe (")
    assert f"{Path(__file__)}:" in found[0]
    assert replaced() == []
    # A tool's plugin object, patched on the object itself.
    writer = _pytest.junitxml.LogXML.__new__(_pytest.junitxml.LogXML)
    writer.pytest_runtest_logreport = passed  # type: ignore[method-assign]
    (found,) = replaced([writer, object()])
    assert found.startswith("_pytest.junitxml.LogXML().pytest_runtest_logreport (")


def test_generated_code_is_replaced_unless_a_class_made_its_own_dunder() -> None:
    import _pytest.reports

    from pytest_agentgate.pytest_plugin.tampering import replaced

    space: dict[str, Any] = {}
    exec("def __init__(self, *a, **k):\n    pass\n", space)
    fake = space["__init__"]
    fake.__qualname__ = "TestReport.__init__"  # named as a dataclass names its own
    original = _pytest.reports.TestReport.__init__
    try:
        _pytest.reports.TestReport.__init__ = fake  # type: ignore[method-assign]
        found = replaced()
    finally:
        _pytest.reports.TestReport.__init__ = original  # type: ignore[method-assign]
    # TestReport is no dataclass: no generated __init__ is its own.
    assert [f.split(" (")[0] for f in found] == ["_pytest.reports.TestReport.__init__"]
    assert replaced() == []


def test_a_tool_module_loaded_from_the_project_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    from pytest_agentgate.pytest_plugin.tampering import replaced

    planted = tmp_path / ".agentgate" / "pytest_cov.py"
    planted.parent.mkdir()
    planted.write_text("")
    fake = types.ModuleType("pytest_cov")
    fake.__file__ = str(planted)
    monkeypatch.setitem(sys.modules, "pytest_cov", fake)
    assert f"pytest_cov (loaded from {planted}, in place of the installed one)" in replaced(
        (), str(tmp_path)
    )
    # The project's own package of that name is its own.
    own = tmp_path / "src" / "pytest_cov" / "__init__.py"
    own.parent.mkdir(parents=True)
    own.write_text("")
    fake.__file__ = str(own)
    assert not [entry for entry in replaced((), str(tmp_path)) if "in place of" in entry]


def _loaded(name: str, path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    import importlib.util

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_a_tools_dependency_developed_in_the_project_is_no_replacement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest imports iniconfig's classes; in iniconfig's own repository, installed editable,
    # their code is the project's (a review on real projects).
    from pytest_agentgate.pytest_plugin.tampering import replaced

    project = tmp_path / "iniconfig"
    dep = _loaded(
        "agentgate_dep", project / "src" / "agentgate_dep.py", "class Wrapper:\n    pass\n",
        monkeypatch,
    )  # fmt: skip
    tool = tmp_path / "site" / "_pytest" / "agentgate_tool.py"
    _loaded("_pytest.agentgate_tool", tool, "from agentgate_dep import Wrapper\n", monkeypatch)
    assert replaced((), str(project)) == []
    # The same name set by other code than the tool's own import is a replacement.
    other = _loaded("agentgate_other", project / "other.py", "class W:\n    pass\n", monkeypatch)
    monkeypatch.setattr(sys.modules["_pytest.agentgate_tool"], "Wrapper", other.W)
    assert [e.split(" (")[0] for e in replaced((), str(project))] == [
        "_pytest.agentgate_tool.Wrapper"
    ]
    assert dep.Wrapper is not other.W


def test_a_project_that_is_a_pytest_plugin_wraps_the_tools_as_it_is_written_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest-mock's plugin wraps unittest.mock's asserts, as it is documented to; the change's
    # edits to such code are the integrity gate's to judge (patches.py).
    import unittest.mock

    from pytest_agentgate.pytest_plugin.tampering import replaced

    project = tmp_path / "pytest-mock"
    plugin = _loaded(
        "agentgate_mock_plugin",
        project / "src" / "agentgate_mock_plugin.py",
        "def assert_called_with(*args, **kwargs):\n    pass\n",
        monkeypatch,
    )
    monkeypatch.setattr(
        unittest.mock.NonCallableMock, "assert_called_with", plugin.assert_called_with
    )
    assert replaced([plugin], str(project)) == []
    # The same function from a module pytest did not load as a plugin is a replacement.
    assert [e.split(" (")[0] for e in replaced([], str(project))] == [
        "unittest.mock.NonCallableMock.assert_called_with"
    ]
    # A plugin that is a package does the work in another of its modules (review 14:
    # pytest-mock registers pytest_mock, whose plugin.py wraps the asserts).
    package = _loaded(
        "agentgate_mock_pkg",
        project / "src" / "agentgate_mock_pkg" / "__init__.py",
        "",
        monkeypatch,
    )
    inner = _loaded(
        "agentgate_mock_pkg.plugin",
        project / "src" / "agentgate_mock_pkg" / "plugin.py",
        "def assert_called_with(*args, **kwargs):\n    pass\n",
        monkeypatch,
    )
    monkeypatch.setattr(
        unittest.mock.NonCallableMock, "assert_called_with", inner.assert_called_with
    )
    assert replaced([package], str(project)) == []


@pytest.mark.parametrize(
    ("target", "adds"),
    [
        ("pytest.assert_same_items", True),
        ("unittest.TestCase.assertSameItems", True),
        ("unittest.case.TestCase.assertSameItems", True),
        ("unittest.TestCase.assertEqual", False),  # replaced: every test's assertEqual
        ("_pytest.reports.TestReport.toterminal", False),  # inherited: still a replacement
        ("pytest.__getattr__", False),  # a dunder: Python calls it
        ("_pytest.no_such_module.thing", False),  # not known: taken for a replacement
    ],
)
def test_a_helper_hung_on_a_tool_only_adds_a_name(target: str, adds: bool) -> None:
    # A review on real projects: an older suite's conftest that hangs a shared assertion
    # helper on `pytest.` or `unittest.TestCase` replaces nothing the tools call.
    from pytest_agentgate.integrity.patches import only_adds

    assert only_adds(target) is adds


def test_a_helper_hung_on_a_tool_at_run_time_is_no_replacement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import unittest

    from pytest_agentgate.pytest_plugin.tampering import replaced

    def assert_same_items(self: Any, a: Any, b: Any) -> None: ...

    monkeypatch.setattr(unittest.TestCase, "assertSameItems", assert_same_items, raising=False)
    monkeypatch.setattr(pytest, "assert_same_items", assert_same_items, raising=False)
    assert replaced() == []
    monkeypatch.setattr(unittest.TestCase, "assertEqual", assert_same_items)
    assert [e.split(" (")[0] for e in replaced()] == ["unittest.case.TestCase.assertEqual"]


def test_a_documented_setting_that_orders_tests_is_no_replacement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Review 16: sh's tests set unittest's TestLoader.sortTestMethodsUsing, which orders a
    # class's test methods and decides no outcome.
    import unittest

    from pytest_agentgate.pytest_plugin.tampering import replaced

    def shuffled(a: str, b: str) -> int:
        return (a > b) - (a < b)

    monkeypatch.setattr(unittest.TestLoader, "sortTestMethodsUsing", staticmethod(shuffled))
    assert replaced() == []
    monkeypatch.setattr(unittest.TestLoader, "getTestCaseNames", shuffled)
    assert [e.split(" (")[0] for e in replaced()] == ["unittest.loader.TestLoader.getTestCaseNames"]


def test_a_test_tools_own_repository_installed_editable_is_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A third review on real projects: pluggy's repository, installed editable, failed as
    # "_pytest...._inner_hookexec replaced": pytest holds pluggy's function, from src/.
    import types

    from pytest_agentgate.pytest_plugin.tampering import replaced

    project = tmp_path / "pluggy"
    tool = types.ModuleType("xdist")
    tool.__file__ = str(project / "src" / "xdist" / "__init__.py")
    monkeypatch.setitem(sys.modules, "xdist", tool)
    helper = _loaded(
        "agentgate_xdist_part", project / "src" / "xdist" / "part.py",
        "def run(*args):\n    pass\n", monkeypatch,
    )  # fmt: skip
    holder = tmp_path / "site" / "_pytest" / "agentgate_holder.py"
    _loaded("_pytest.agentgate_holder", holder, "RUN = None\n", monkeypatch)
    monkeypatch.setattr(sys.modules["_pytest.agentgate_holder"], "RUN", helper.run)
    assert replaced((), str(project)) == []
    # In another project, the same function is not the tool's.
    assert [e.split(" (")[0] for e in replaced((), str(tmp_path / "other"))] == [
        "_pytest.agentgate_holder.RUN"
    ]


def test_a_tool_replaced_from_an_installed_file_edited_in_place_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Installed code replacing a tool's function counts as installed only as its package
    # installed it: an edit appended to `packaging/version.py` in the environment that patches
    # pytest's report maker is installed code no installer wrote.
    import base64
    import hashlib

    import _pytest.reports

    from pytest_agentgate.pytest_plugin import startup
    from pytest_agentgate.pytest_plugin.tampering import _installed_roots, replaced

    site = tmp_path / "venv" / "site-packages"
    (site / "zzlib").mkdir(parents=True)
    text = "def passed(cls, item, call):\n    return None\n"
    module = site / "zzlib" / "version.py"
    module.write_text(text)
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
    (site / "zzlib-1.0.dist-info").mkdir()
    (site / "zzlib-1.0.dist-info" / "RECORD").write_text(
        f"zzlib/version.py,sha256={digest.decode()},{len(text)}\n"
    )
    monkeypatch.setattr(startup, "_site_folders", lambda: [str(site)])
    monkeypatch.setattr(startup, "_system", lambda folder: False)
    monkeypatch.syspath_prepend(str(site))
    _installed_roots.cache_clear()  # read once per process: the new folder is seen
    space: dict[str, Any] = {}
    exec(compile(text, str(module), "exec"), space)
    with monkeypatch.context() as patch:
        patch.setattr(_pytest.reports.TestReport, "probe", classmethod(space["passed"]), False)
        assert replaced() == []  # a library's code, as installed
        module.write_text(text + "# and the patch of pytest\n")
        (found,) = replaced()
    assert found.startswith(f"_pytest.reports.TestReport.probe ({module}:1, not as its package")
    monkeypatch.undo()
    _installed_roots.cache_clear()


def test_an_object_called_in_a_tools_functions_place_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Red team 13: an instance of a class with `__call__` as pytest's report maker.
    import _pytest.reports

    from pytest_agentgate.pytest_plugin.tampering import replaced

    class Maker:
        def __call__(self, item: Any, call: Any) -> None: ...

    with monkeypatch.context() as patch:
        patch.setattr(_pytest.reports.TestReport, "from_item_and_call", Maker())
        (found,) = replaced()
    assert found.startswith("_pytest.reports.TestReport.from_item_and_call (")
    assert f"{Path(__file__)}:" in found
    assert replaced() == []


def test_a_sitecustomize_in_the_interpreters_own_folder_is_not_installed_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 13: a sitecustomize.py written into a user-writable standard library folder
    # (pyenv's) patched pytest's report maker; the standard library is not judged against a
    # RECORD, but no distribution installed this module there.
    import _pytest.reports

    from pytest_agentgate.pytest_plugin import tampering
    from pytest_agentgate.pytest_plugin.tampering import replaced

    stdlib = tmp_path / "lib" / "python3"
    stdlib.mkdir(parents=True)
    roots = (*tampering._installed_roots(), str(stdlib))
    monkeypatch.setattr(tampering, "_installed_roots", lambda: roots)
    for name, expected in (("textwrap2.py", 0), ("sitecustomize.py", 1)):
        module = stdlib / name
        module.write_text("def passed(cls, item, call):\n    return None\n")
        space: dict[str, Any] = {}
        exec(compile(module.read_text(), str(module), "exec"), space)
        with monkeypatch.context() as patch:
            patch.setattr(_pytest.reports.TestReport, "probe", classmethod(space["passed"]), False)
            found = replaced()
        assert len(found) == expected, found
    assert "sitecustomize.py:1, not as its package installed it" in found[0]


def test_a_tracer_of_the_projects_in_place_as_a_test_runs_is_found(tmp_path: Path) -> None:
    # Red team 14: a conftest's tracer skips the code under test's broken line; it can be set
    # by a name no reading of the source finds (`getattr(sys, "set" + "trace")`).
    import sys
    import threading

    from pytest_agentgate.pytest_plugin.tampering import foreign_tracer, look_as_it_runs

    project = str(Path(__file__).parent)
    assert foreign_tracer(project) is None  # coverage.py's, or none

    def skipping(frame: Any, event: str, arg: Any) -> Any:
        return skipping

    # The project's own code as the tracer (a tracing library tested with its tracer on) is
    # not found; a test's, or a file's outside the project, is.
    (tmp_path / "tests").mkdir()
    made: dict[str, Any] = {}
    for name in ("lib.py", "tests/conftest.py"):
        text = "def tracer(frame, event, arg):\n    return tracer\n"
        (tmp_path / name).write_text(text)
        space: dict[str, Any] = {}
        exec(compile(text, str(tmp_path / name), "exec"), space)
        made[name] = space["tracer"]
    before = sys.gettrace()
    try:
        sys.settrace(skipping)
        found = foreign_tracer(project)
        elsewhere = foreign_tracer(str(tmp_path))
        sys.settrace(made["lib.py"])
        library = foreign_tracer(str(tmp_path))
        sys.settrace(made["tests/conftest.py"])
        conftest = foreign_tracer(str(tmp_path))
    finally:
        sys.settrace(before)
    line = skipping.__code__.co_firstlineno
    assert found == f"a tracer the tests ran under ({__file__}:{line}, set by sys.settrace)"
    assert elsewhere == found
    assert library is None
    assert conftest == (
        f"a tracer the tests ran under ({tmp_path / 'tests' / 'conftest.py'}:1, set by "
        "sys.settrace)"
    )
    threading.setprofile(skipping)
    try:
        replaced: set[str] = set()

        class Item:
            class config:
                rootpath = Path(project)

        look_as_it_runs(Item, replaced, before=False)
        look_as_it_runs(Item, replaced, before=False)
    finally:
        threading.setprofile(None)
    assert replaced == {
        f"a tracer the tests ran under ({__file__}:{line}, set by threading.setprofile)"
    }


def test_a_stub_of_the_tracers_question_is_no_tracer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review 12: python-dotenv's tests make a debugger up with
    # `monkeypatch.setattr(sys, "gettrace", lambda: trace)`: no tracer runs. A stub answering
    # None hides none either.
    import sys

    from pytest_agentgate.pytest_plugin.tampering import foreign_tracer

    def made_up(frame: Any, event: str, arg: Any) -> Any:
        return made_up

    monkeypatch.setattr(sys, "gettrace", lambda: made_up)
    assert foreign_tracer(str(tmp_path)) is None
    monkeypatch.undo()
    before = sys.gettrace()
    monkeypatch.setattr(sys, "gettrace", lambda: None)
    try:
        sys.settrace(made_up)
        found = foreign_tracer(str(tmp_path))
    finally:
        sys.settrace(before)
    assert found is not None and f"{made_up.__code__.co_firstlineno}, set by sys.settrace" in found


def test_code_that_writes_coverage_data_is_found(tmp_path: Path) -> None:
    # Red team 40: an `atexit` handler of a test module added every arc of an untested file
    # to the data `coverage run` had saved. Reading the data (a report) writes nothing.
    from pytest_agentgate.config.model import Config
    from pytest_agentgate.integrity import patches
    from pytest_agentgate.integrity.model import Scan

    writer = (
        "import atexit\n\nimport coverage\n\n\ndef _settle(path, arcs):\n"
        "    data = coverage.CoverageData('.agentgate/.coverage')\n    data.read()\n"
        "    data.add_arcs({path: arcs})\n    data.write()\n\n\n"
        "atexit.register(_settle, 'invoice/bands.py', set())\n"
    )
    reader = (
        "import coverage\n\n\ndef measured(path):\n    data = coverage.CoverageData(path)\n"
        "    data.read()\n    return sorted(data.measured_files())\n"
    )

    class Sources:
        def now(self, path: str) -> str | None:
            return {"tests/test_bands.py": writer, "tools/report.py": reader}.get(path)

        def at_base(self, path: str) -> str | None:
            return None

    touched = {"tests/test_bands.py": "added", "tools/report.py": "added"}
    scan = Scan(tmp_path, None, None, Config(tmp_path), Sources(), touched)
    found = [(f.path, f.line, f.message) for f in patches.analyze(scan)]
    assert found == [
        (
            "tests/test_bands.py",
            9,
            "test_bands.py calls coverage.py's add_arcs(): the project's code writes the "
            "measurements the coverage gate reads",
        )
    ]


def test_imports_by_a_loader_under_another_name_are_imports() -> None:
    # Red team 40: `from importlib import import_module as _load` hid an unmeasured module.
    from pytest_agentgate.gates.patch import _imported_names

    text = (
        "from importlib import import_module as _load\nimport importlib as il\n"
        "load = _load\n_load('rates.bands')\nload('rates.other')\nil.import_module('c')\n"
        "getattr(x, 'y')('not.a.module')\n"
    )
    assert _imported_names(text) >= {"rates.bands", "rates.other", "c"}
    assert "not.a.module" not in _imported_names(text)


def test_ruffs_brace_alternatives_in_an_exclude() -> None:
    # Red team 40: `invoice/{bands}.py` read as literal braces hid the file it names.
    from pytest_agentgate.integrity.settings import _excluded

    assert _excluded("invoice/bands.py", ["invoice/{bands}.py"])
    assert _excluded("pkg/b.py", ["{src,pkg}/b.py"])
    assert not _excluded("pkg/c.py", ["{src,pkg}/b.py"])


def _pytest_ini_findings(root: Path, base: str, now: str) -> list[Any]:
    """The hooks analyzer's findings for a change of ``pytest.ini`` from ``base`` to ``now``."""
    from pytest_agentgate.config.model import Config
    from pytest_agentgate.integrity import hooks
    from pytest_agentgate.integrity.model import Scan

    class Sources:
        def now(self, path: str) -> str | None:
            return now if path == "pytest.ini" else None

        def at_base(self, path: str) -> str | None:
            return base if path == "pytest.ini" else None

    scan = Scan(root, None, None, Config(root), Sources(), {"pytest.ini": "modified"})
    return list(hooks.analyze(scan))


def test_a_warning_class_of_the_project_named_by_the_change_in_filterwarnings(
    tmp_path: Path,
) -> None:
    # Review 25: pytest 9.2 imports the classes `filterwarnings` names as it starts. The
    # base's entries are the project's (marshmallow's); one the change adds for a class of
    # the project's own runs its module before agentgate's plugin watches.
    (tmp_path / "calc").mkdir()
    base = "[pytest]\nfilterwarnings =\n    error::calc.warnings.Old\n"
    now = (
        base + "    ignore::calc.hooks.Quiet\n    ignore::pytest.PytestUnraisableExceptionWarning\n"
    )
    found = [(f.rule, f.path, f.message) for f in _pytest_ini_findings(tmp_path, base, now)]
    assert found == [
        (
            "result-rewritten",
            "pytest.ini",
            "filterwarnings gained calc.hooks.Quiet, a class of the project's: pytest imports "
            "its module as it starts, before agentgate's plugin can watch what it does",
        )
    ]


def test_a_warning_class_of_the_project_named_with_spaces_or_in_addopts(tmp_path: Path) -> None:
    # Red team 41: `default:: calc.compat.X` (pytest strips the field) and `-W` in addopts;
    # the module field (`:calc.old`) is not imported.
    (tmp_path / "calc").mkdir()
    base = "[pytest]\naddopts = -q\nfilterwarnings =\n    ignore::DeprecationWarning:calc.old\n"
    now = (
        "[pytest]\naddopts = -q -W error::calc.w.Loud\nfilterwarnings =\n"
        "    ignore::DeprecationWarning:calc.old\n    default:: calc.compat.Spaced\n"
        "    ignore::DeprecationWarning:calc.other\n"
    )
    found = sorted(f.message.split(",")[0] for f in _pytest_ini_findings(tmp_path, base, now))
    assert found == [
        "filterwarnings gained calc.compat.Spaced",
        "filterwarnings gained calc.w.Loud",
    ]


def test_coverage_data_kept_in_memory_by_a_tools_tests_is_no_finding(tmp_path: Path) -> None:
    # Review 26: a coverage tool's own test builds `CoverageData(no_disk=True)` and adds lines.
    from pytest_agentgate.config.model import Config
    from pytest_agentgate.integrity import patches
    from pytest_agentgate.integrity.model import Scan

    test = (
        "import coverage\n\n\ndef test_counts():\n"
        "    data = coverage.CoverageData(no_disk=True)\n"
        "    data.add_lines({'a.py': [1, 2]})\n    assert data.lines('a.py') == [1, 2]\n"
    )

    class Sources:
        def now(self, path: str) -> str | None:
            return test if path == "tests/test_count.py" else None

        def at_base(self, path: str) -> str | None:
            return None

    scan = Scan(tmp_path, None, None, Config(tmp_path), Sources(), {"tests/test_count.py": "added"})
    assert list(patches.analyze(scan)) == []


TESTS_WITH_A_HELPER = """\
from calc import mul


def check(f, a, b, want):
    assert f(a, b) == want


def test_mul_zero():
    check(mul, 5, 0, 0)
"""


@pytest.mark.parametrize(
    ("added", "found"),
    [
        ('globals()["check"] = lambda f, a, b, want: f(a, b)\n', True),
        ('vars()["check"] = print\n', True),
        ("globals().update(check=print)\n", True),
        ('name = "ch" + "eck"\nglobals()[name] = print\n', True),
        ('import sys\nsetattr(sys.modules[__name__], "check", print)\n', True),
        # Red team 58: other spellings, the helper's code, unittest's assert methods.
        ('_g = globals\n_g()["check"] = print\n', True),
        ('import sys\nsys._getframe().f_globals["check"] = print\n', True),
        ("check.__code__ = (lambda f, a, b, want: None).__code__\n", True),
        ('setattr(check, "__defaults__", (1,))\n', True),
        (
            "import unittest\n\n\nclass T(unittest.TestCase):\n"
            "    assertEqual = unittest.TestCase.assertGreaterEqual\n",
            True,
        ),
        (
            "import unittest\n\n\nclass T(unittest.TestCase):\n    def setUp(self):\n"
            "        self.assertEqual = lambda *a, **k: None\n",
            True,
        ),
        (
            "import unittest\n\n\nclass T(unittest.TestCase):\n    def setUp(self):\n"
            "        self.addTypeEqualityFunc(float, lambda a, b, msg=None: None)\n",
            True,
        ),
        # Tests generated in a loop, by a name that starts with "test".
        (
            'for n in (1, 2):\n    globals()[f"test_mul_{n}"] = lambda n=n: check(mul, n, 1, n)\n',
            False,
        ),
        ('globals()["test_mul_one"] = lambda: check(mul, 1, 1, 1)\n', False),
    ],
)
def test_a_test_module_that_binds_its_own_names_at_run_time(
    tmp_path: Path, added: str, found: bool
) -> None:
    # Red team 57: the base's tests call an asserting helper; the change appends
    # `globals()["check"] = ...` and every check it made passes unmade.
    from pytest_agentgate.config.model import Config
    from pytest_agentgate.integrity import patches
    from pytest_agentgate.integrity.model import Scan

    class Sources:
        def now(self, path: str) -> str | None:
            return TESTS_WITH_A_HELPER + "\n\n" + added

        def at_base(self, path: str) -> str | None:
            return TESTS_WITH_A_HELPER

    touched = {"tests/test_calc.py": "modified"}
    scan = Scan(tmp_path, None, None, Config(tmp_path), Sources(), touched)
    findings = [f for f in patches.analyze(scan) if f.rule == "result-rewritten"]
    assert bool(findings) == found, findings
    if found:
        assert findings[0].path == "tests/test_calc.py"
        assert "at run time: its tests call what the file's text does not show" in (
            findings[0].message
        )
