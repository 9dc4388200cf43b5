"""The project's own code replaced while the tests run, as the witness sees it at run time
(``pytest_plugin/tampering.replaced`` with the project's folder): whatever built the
replacement (a computed name, an alias, ``compile``, a file written at run time, an import
hook), the function's code or the module's file is not the project's."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import shutil
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_agentgate.pytest_plugin.tampering import replaced

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


def load(name: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The module of the file ``path`` imported, and the import seen as the audit hook sees it
    (the hook itself is not added to this process: it could never be removed)."""
    from pytest_agentgate.pytest_plugin import compiled

    spec = importlib.util.spec_from_file_location(name, path)
    assert isinstance(spec, importlib.machinery.ModuleSpec)
    assert isinstance(spec.loader, importlib.machinery.SourceFileLoader)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    code = spec.loader.get_code(name)
    assert code is not None
    real = os.path.realpath(path)
    compiled._imported.setdefault(real, set()).update(compiled.code_tree(code))
    compiled._module_code[real] = code
    exec(code, vars(module))
    return module


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    return root


def project_entries(root: Path) -> list[str]:
    from pytest_agentgate.pytest_plugin import tampering

    # The module as it is now: an in-process gated run (pytester's) may have dropped and
    # imported agentgate's plugin modules again since this file imported `replaced`.
    return [e for e in tampering.replaced(project=str(root)) if e.startswith("calc")]


def conftest_add(root: Path, monkeypatch: pytest.MonkeyPatch) -> types.FunctionType:
    """The fixed ``add`` of a tests/conftest.py, loaded."""
    (root / "tests" / "conftest.py").write_text(FIXED)
    helper = load("agentgate_test_conftest", root / "tests" / "conftest.py", monkeypatch)
    add: types.FunctionType = helper.add
    return add


def test_a_function_replaced_by_a_conftests_code_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calc = load("calc", project / "calc.py", monkeypatch)
    monkeypatch.setattr(calc, "add", conftest_add(project, monkeypatch))
    assert project_entries(project) == [
        f"calc.add (the project's function, replaced by code of {project}/tests/conftest.py)"
    ]


def test_a_function_compiled_at_run_time_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calc = load("calc", project / "calc.py", monkeypatch)
    code = compile("lambda a, b: a + b", "<fix>", "eval")
    monkeypatch.setattr(calc, "add", eval(code, {}))
    assert project_entries(project) == [
        "calc.add (the project's function, replaced by code made at run time (<fix>))"
    ]


def test_a_copy_loaded_in_the_modules_place_is_found(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "calc.py").write_text(FIXED)
    load("calc", tmp_path / "elsewhere" / "calc.py", monkeypatch)
    assert project_entries(project) == [
        f"calc (the project's calc.py loaded from {tmp_path}/elsewhere/calc.py)"
    ]


def test_a_module_loaded_by_the_projects_own_loader_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "tests" / "hook.py").write_text(
        "import importlib.machinery\n\n\n"
        "class Rewriter(importlib.machinery.SourceFileLoader):\n"
        "    def get_data(self, path):\n"
        "        return super().get_data(path).replace(b'a - b', b'a + b')\n"
    )
    hook = load("agentgate_test_hook", project / "tests" / "hook.py", monkeypatch)
    loader = hook.Rewriter("calc", str(project / "calc.py"))
    spec = importlib.util.spec_from_file_location("calc", project / "calc.py", loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "calc", module)
    loader.exec_module(module)
    assert module.add(1, 2) == 3
    assert project_entries(project) == [f"calc (loaded by Rewriter of {project}/tests/hook.py)"]


def test_the_projects_own_code_as_written_is_not_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-exports from another module of the project and from installed code, a dataclass's
    # generated methods, a decorated function: all the project's code as its files hold it.
    (project / "core.py").write_text(FIXED)
    load("core", project / "core.py", monkeypatch)
    (project / "calc.py").write_text(
        "import dataclasses\nimport functools\nfrom json import dumps\n\nfrom core import add\n\n\n"
        "@dataclasses.dataclass\nclass Point:\n    x: int\n\n\n"
        "@functools.lru_cache\ndef cached(x):\n    return x\n"
    )
    load("calc", project / "calc.py", monkeypatch)
    assert project_entries(project) == []


def test_a_source_file_swapped_for_the_run_and_put_back_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from pytest_agentgate.gates.test import _swapped_sources
    from pytest_agentgate.pytest_plugin.tampering import project_sources

    # A conftest rewrote calc.py before the tests imported it, and restores it afterwards.
    (project / "calc.py").write_text(FIXED)
    load("calc", project / "calc.py", monkeypatch)
    during = project_sources(str(project))
    assert list(during) == [str((project / "calc.py").resolve())]
    (project / "calc.py").write_text(CALC)  # put back when pytest ends
    assert _swapped_sources(project, [json.dumps(during)]) == [
        "calc.py (the file held other code while the tests ran)"
    ]
    # Unchanged since, or gone since (a module the tests wrote and removed): nothing.
    assert _swapped_sources(project, [json.dumps(project_sources(str(project)))]) == []
    (project / "calc.py").unlink()
    assert _swapped_sources(project, [json.dumps(during)]) == []


def test_a_functions_code_replaced_in_place_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calc = load("calc", project / "calc.py", monkeypatch)
    monkeypatch.setattr(calc.add, "__code__", conftest_add(project, monkeypatch).__code__)
    assert project_entries(project) == [
        f"calc.add (the project's function, replaced by code of {project}/tests/conftest.py)"
    ]


def test_a_function_loaded_from_a_zip_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Code in a zip is neither linted nor measured: no file of the project holds it.
    import zipfile
    import zipimport

    with zipfile.ZipFile(project / "ext.zip", "w") as archive:
        archive.writestr("agentgate_test_ext.py", "def add(a, b):\n    return a + b\n")
    calc = load("calc", project / "calc.py", monkeypatch)
    spec = zipimport.zipimporter(str(project / "ext.zip")).find_spec("agentgate_test_ext")
    assert spec is not None and spec.loader is not None
    ext = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "agentgate_test_ext", ext)
    spec.loader.exec_module(ext)
    monkeypatch.setattr(calc, "add", ext.add)
    (entry,) = project_entries(project)
    assert entry.startswith("calc.add (the project's function, from ") and "ext.zip" in entry


class CovPlugin:
    """pytest-cov's plugin as the witness sees it: a controller holding its Coverage objects."""

    def __init__(self, cov: object) -> None:
        self.cov_controller = types.SimpleNamespace(cov=cov, combining_cov=None)


def coverage_entries(cov: object) -> list[str]:
    return [e for e in replaced([CovPlugin(cov)]) if e.startswith("coverage.")]


def test_coverage_exclusions_added_while_the_tests_run_are_found(tmp_path: Path) -> None:
    import coverage

    (tmp_path / ".coveragerc").write_text("[report]\nexclude_also =\n    if DEBUG:\n")
    cov = coverage.Coverage(config_file=str(tmp_path / ".coveragerc"))
    assert coverage_entries(cov) == []
    cov.exclude("def clamp")  # a conftest, through pytest-cov's controller
    assert coverage_entries(cov) == [
        "coverage.exclude_list (gained ['def clamp'] while the tests ran)"
    ]


def test_objects_that_raise_when_looked_at_and_library_generated_code_are_passed_over(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A proxy outside its context (Flask's request), a mapping that answers every attribute
    # (addict), a method an installed library generated with its own globals (SQLAlchemy's
    # mapped __init__), a module re-imported by a test: none is the project's code replaced.
    (project / "calc.py").write_text(
        "import json\n\n\nclass Proxy:\n    def __getattr__(self, name):\n"
        "        raise RuntimeError('working outside of application context')\n\n"
        "    @property\n    def __class__(self):\n        raise RuntimeError('no context')\n\n\n"
        "class Anything(dict):\n    def __getattr__(self, name):\n        return Anything()\n\n\n"
        "request = Proxy()\nCONFIG = Anything()\n\n\nclass Model:\n    pass\n\n\n"
        "Model.__init__ = eval(compile('lambda self: None', '<string>', 'eval'),"
        " {'__name__': 'json'})\n\n\ndef add(a, b):\n    return a + b\n"
    )
    calc = load("calc", project / "calc.py", monkeypatch)
    old_add = calc.add
    calc = load("calc", project / "calc.py", monkeypatch)  # re-imported: a new module object
    monkeypatch.setattr(calc, "add", old_add)  # the first import's function, the same file
    assert project_entries(project) == []


def test_exclusions_a_coverage_plugin_configures_are_the_settings_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # covdefaults and its kind add exclusions when coverage loads them: the settings' own.
    import coverage

    (tmp_path / "agentgate_test_covplug.py").write_text(
        "class Configurer:\n    def configure(self, config):\n"
        "        lines = config.get_option('report:exclude_lines')\n"
        "        config.set_option('report:exclude_lines', [*lines, 'if TYPE_CHECKING:'])\n\n\n"
        "def coverage_init(reg, options):\n    reg.add_configurer(Configurer())\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / ".coveragerc").write_text("[run]\nplugins = agentgate_test_covplug\n")
    cov = coverage.Coverage(config_file=str(tmp_path / ".coveragerc"), data_file=None)
    cov._init()
    assert "if TYPE_CHECKING:" in cov.config.exclude_list
    assert coverage_entries(cov) == []


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("__editable__.calc-0.pth", "{other}\n"),
        ("__editable___calc_0_finder.py", "MAPPING = {{'calc': '{other}/calc.py'}}\n"),
    ],
    ids=["pth", "finder"],
)
def test_a_module_of_another_checkout_installed_editable_says_how_to_test_this_one(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    from pytest_agentgate.pytest_plugin import tampering

    other, site = tmp_path / "other", tmp_path / "site"
    other.mkdir()
    site.mkdir()
    (other / "calc.py").write_text(CALC)
    (site / name).write_text(text.format(other=other))
    monkeypatch.setattr(tampering, "_installed_roots", lambda: (str(site),))
    load("calc", other / "calc.py", monkeypatch)
    assert project_entries(project) == [
        f"calc (the project's calc.py loaded from {other}/calc.py: an editable install of "
        "another checkout; `pip install -e .` here makes the tests import this one)"
    ]
    (site / name).unlink()  # a copy no installation put on the path: no advice
    assert project_entries(project) == [f"calc (the project's calc.py loaded from {other}/calc.py)"]


@pytest.fixture(autouse=True)
def _no_hook_of_a_gated_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A gated pytest run in this process (pytester's, or agentgate's own suite gated by
    itself) left its audit hook in place for good: it must not see these tests' own events,
    nor these tests what it saw."""
    from pytest_agentgate.pytest_plugin import compiled

    monkeypatch.setattr(compiled, "_watched", [])
    monkeypatch.setattr(compiled, "_paused", True)
    for name in (
        "_sources",
        "_before",
        "_imported",
        "_module_code",
        "_runtime",
        "_foreign",
        "_pycs_read",
        "_strings",
        "_strings_in_libraries",
        "_data",
    ):
        monkeypatch.setattr(compiled, name, {})
    monkeypatch.setattr(compiled, "_ast_compiled", set())
    monkeypatch.setattr(compiled, "_outside", set())
    monkeypatch.setattr(compiled, "_through", set())
    monkeypatch.setattr(compiled, "_outside_overflow", [])
    # The run began before each test writes its files: `start` is imported when pytest loads
    # agentgate's plugin, which a gated run in this process may have done at any moment.
    from pytest_agentgate.pytest_plugin import start

    monkeypatch.setattr(start, "START_TIME", time.time() - 1)
    monkeypatch.setattr(compiled, "_at_start", set())
    monkeypatch.setattr(compiled, "_spawned", [])


def called_in(
    path: Path, function: Callable[..., object], *args: object, imported: bool = True
) -> object:
    """``function(*args)`` called from a frame of code in the file ``path``: code its import
    made (as the audit hook saw it), or, ``imported=False``, code compiled under its name by
    the tests' code."""
    from pytest_agentgate.pytest_plugin import compiled

    code = compile("def call(f, *a):\n    return f(*a)\n", str(path), "exec")
    if imported:
        compiled._imported.setdefault(os.path.realpath(path), set()).update(
            compiled.code_tree(code)
        )
    space: dict[str, object] = {}
    exec(code, space)
    call = space["call"]
    assert callable(call)
    return call(function, *args)


def imported(watched: types.ModuleType, source: bytes, path: str) -> None:
    """The audit event of the import system compiling ``source`` for ``path``: its (frozen)
    frame calls compile."""
    import importlib._bootstrap

    importlib._bootstrap._call_with_frames_removed(lambda: watched._hook("compile", (source, path)))


@pytest.fixture
def watched(project: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """:mod:`compiled` watching the project, its hook called by hand (an audit hook added to
    this process could never be removed)."""
    from pytest_agentgate.pytest_plugin import compiled
    from pytest_agentgate.state.cache import left_out

    monkeypatch.setattr(compiled, "_watched", [f"{project.resolve()}{os.sep}"])
    monkeypatch.setattr(compiled, "_LEFT_OUT", [left_out])
    return compiled


def test_a_file_written_over_before_the_tests_import_it_is_found_while_it_still_holds_the_copy(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A conftest opens calc.py to write a correct copy: the hook keeps what it held first.
    path = str(project / "calc.py")
    watched._hook("open", (path, "w", 0))
    (project / "calc.py").write_text(FIXED)
    load("calc", project / "calc.py", monkeypatch)
    imported(watched, FIXED.encode(), path)
    # The copy is still there (put back only as the interpreter exits), yet it is not what
    # the file held before the run.
    assert project_entries(project) == [
        "calc (the tests imported code that calc.py did not hold before the run: the file was "
        "rewritten while they ran)"
    ]
    # agentgate verify compares the files again after the run: a module a conftest generates
    # at every run, and leaves, is judged there.
    assert [e for e in replaced(project=str(project), compared_after=True) if "calc" in e] == []


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("open", ("{path}", None, os.O_WRONLY)),
        ("open", ("{path}", "r+b", 0)),
        ("os.rename", ("/elsewhere/good.py", "{path}", -1, -1)),
        ("shutil.copyfile", ("/elsewhere/good.py", "{path}")),
        ("subprocess.Popen", ("cp", ["cp", "good.py", "calc.py"], None, None)),
    ],
    ids=["os.open", "r+", "os.replace", "shutil.copy", "subprocess"],
)
def test_each_way_of_writing_the_file_keeps_what_it_held(
    project: Path, watched: types.ModuleType, event: str, args: tuple[object, ...]
) -> None:
    path = str(project / "calc.py")
    watched._hook(event, tuple(a.format(path=path) if isinstance(a, str) else a for a in args))
    assert watched.held_before(str((project / "calc.py").resolve())) is not None


def test_reads_new_files_and_the_tests_own_files_keep_nothing(
    project: Path, watched: types.ModuleType
) -> None:
    (project / "tests" / "test_calc.py").write_text("")
    os.mkfifo(project / "pipe.py")  # nobody writes to it: a plain read would wait for ever
    watched._hook("open", (str(project / "calc.py"), "rb", 0))
    watched._hook("open", (str(project / "new.py"), "w", 0))  # no file yet: nothing to swap
    watched._hook("open", (3, "w", 0))  # a file descriptor
    watched._hook("os.system", (b"true",))  # the snapshot: the project's code, not its tests
    assert watched.held_before(str((project / "calc.py").resolve())) is not None
    assert watched.held_before(str((project / "tests" / "test_calc.py").resolve())) is None
    assert watched.held_before(str((project / "new.py").resolve())) is None
    assert watched.held_before(str((project / "pipe.py").resolve())) is None


def test_a_file_put_back_after_the_tests_imported_a_copy_is_found(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only a constant differs, so every function's code is the file's: what Python compiled
    # for the import (the audit event the hook keeps) is what tells.
    from pytest_agentgate.pytest_plugin import start

    # The run began before the files were written (`start` is imported when pytest loads the
    # plugin; imported here for the first time, it would say the run began now).
    monkeypatch.setattr(start, "START_TIME", project.stat().st_ctime - 1)
    path = str(project / "calc.py")
    swapped = "OFFSET = 0\n\n\ndef add(a, b):\n    return a + b + OFFSET\n"
    (project / "calc.py").write_text(swapped)
    load("calc", project / "calc.py", monkeypatch)
    imported(watched, swapped.encode(), path)
    watched._hook("compile", (swapped.encode(), path))  # coverage.py's text, as Python hands it
    watched._hook("compile", (b"elsewhere", "/elsewhere/calc.py"))
    assert watched.sources_compiled("/elsewhere/calc.py") == []
    (project / "calc.py").write_text(swapped.replace("OFFSET = 0", "OFFSET = 1"))
    assert project_entries(project) == [
        "calc (the tests imported other code than calc.py holds: the file was rewritten while "
        "they ran)"
    ]
    (project / "calc.py").write_text(swapped)  # written again, the same source: the file's
    assert project_entries(project) == []


def test_code_compiled_under_the_files_name_from_other_source_is_found(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # exec(compile(fixed, calc.__file__, "exec"), vars(calc)): nothing is written.
    path = str(project / "calc.py")
    (project / "calc.py").write_bytes(b"\f" + CALC.rstrip("\n").encode())
    calc = load("calc", project / "calc.py", monkeypatch)
    imported(watched, (project / "calc.py").read_bytes(), path)
    # coverage.py's reading: a form feed as a space, a last line end added; other line ends
    watched._hook("compile", ((" " + CALC).encode(), path))
    watched._hook("compile", (("\f" + CALC.replace("\n", "\r\n")).encode(), path))
    assert project_entries(project) == []
    watched._hook("compile", (FIXED.encode(), path))
    exec(compile(FIXED, path, "exec"), vars(calc))
    assert project_entries(project) == [
        "calc (the tests ran code compiled under the name of calc.py that it does not hold)"
    ]


def test_code_run_in_a_modules_namespace_is_its_own_only_if_its_file_compiles_code(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calc = load("calc", project / "calc.py", monkeypatch)
    exec(compile(FIXED, "<fix>", "exec"), vars(calc))  # a conftest's doing
    assert project_entries(project) == [
        "calc.add (the project's function, replaced by code made at run time (<fix>))"
    ]
    # six: `exec_("def raise_from(value, from_value): ...")` in its own file.
    (project / "six.py").write_text("def exec_(code, space):\n    exec(code, space)\n")
    six = load("six", project / "six.py", monkeypatch)
    six.exec_(compile("def raise_from(v, f):\n    raise v\n", "<string>", "exec"), vars(six))
    assert [e for e in replaced(project=str(project)) if e.startswith("six")] == []


def test_a_module_loaded_from_bytecode_written_during_the_run_is_compared_function_by_function(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_agentgate.pytest_plugin import start

    # A conftest wrote a pyc of the correct code, with the header of the broken source, and
    # imported it: Python compiled nothing, the source was never touched.
    path = str(project / "calc.py")
    (project / "calc.py").write_text(FIXED)
    load("calc", project / "calc.py", monkeypatch)  # its pyc is written now, in the run
    (project / "calc.py").write_text(CALC)
    assert project_entries(project) == [
        "calc (add ran as other code than calc.py holds: its bytecode was written while the "
        "tests ran)"
    ]
    (project / "calc.py").write_text(FIXED)  # the bytecode's own source: nothing to say
    assert project_entries(project) == []
    # Bytecode from before the run is what `stale-bytecode` judges, not this.
    (project / "calc.py").write_text(CALC)
    import py_compile

    pyc = py_compile.compile(str(project / "calc.py"), importlib.util.cache_from_source(path))
    monkeypatch.setattr(start, "START_TIME", Path(pyc).stat().st_ctime + 1)
    assert project_entries(project) == []


def test_a_module_no_file_made_in_the_projects_place_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = types.ModuleType("calc")
    exec(compile(FIXED, "calc (fixed)", "exec"), vars(made))
    monkeypatch.setitem(sys.modules, "calc", made)
    assert project_entries(project) == [
        "calc (the project's calc.py imported as module 'calc', which no file made)"
    ]


def test_a_regular_expression_compiled_by_the_module_excuses_no_code_run_in_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "calc.py").write_text("import re\n\n_SPACES = re.compile(r'\\s+')\n\n\n" + CALC)
    calc = load("calc", project / "calc.py", monkeypatch)
    exec(compile(FIXED, "<calc>", "exec"), vars(calc))
    assert project_entries(project) == [
        "calc.add (the project's function, replaced by code made at run time (<calc>))"
    ]


def test_a_function_given_code_the_import_did_not_make_is_found(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str((project / "calc.py").resolve())
    calc = load("calc", project / "calc.py", monkeypatch)
    # What the import system executed for calc.py (the audit event `exec`, from importlib).
    imported(watched, CALC.encode(), path)
    made = compile(CALC, path, "exec", dont_inherit=True)
    watched._imported[path] = set(watched.code_tree(made))
    assert project_entries(project) == []
    fixed_module = compile(FIXED, "fixed", "exec", dont_inherit=True)
    fixed = next(c for c in fixed_module.co_consts if isinstance(c, types.CodeType))
    monkeypatch.setattr(calc.add, "__code__", fixed.replace(co_filename=path))
    found = ["calc (add runs code that the import of calc.py did not make)"]
    assert project_entries(project) == found
    # typeguard's @typechecked recompiles the function from the file's AST as the project's
    # module is imported: the project's own doing, unless the tests compiled an AST too.
    monkeypatch.setattr(watched, "_ast_compiled", {"project", "libraries"})
    assert project_entries(project) == []
    monkeypatch.setattr(watched, "_ast_compiled", {"project", "tests"})
    assert project_entries(project) == found


def test_another_project_modules_code_relabelled_as_the_function_under_tests_is_found(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 24: a conftest moved the fixed code of another module of the project into the
    # function under test, relabelled with its file's name. Code is the file's only as the
    # import of that file made it.
    path = str((project / "calc.py").resolve())
    rates = project / "rates.py"
    rates.write_text(FIXED)
    calc = load("calc", project / "calc.py", monkeypatch)
    imported(watched, CALC.encode(), path)
    watched._imported[path] = set(watched.code_tree(compile(CALC, path, "exec", dont_inherit=True)))
    own = compile(FIXED, str(rates.resolve()), "exec", dont_inherit=True)
    watched._imported[str(rates.resolve())] = set(watched.code_tree(own))
    fixed = next(c for c in own.co_consts if isinstance(c, types.CodeType))
    stand_in = types.FunctionType(fixed.replace(co_filename=path), vars(calc), "stand_in")
    monkeypatch.setattr(calc, "stand_in", stand_in, raising=False)
    assert project_entries(project) == [
        "calc (add runs code that the import of calc.py did not make)"
    ]


def test_whose_code_made_an_event(project: Path, watched: types.ModuleType) -> None:
    def called_from(path: Path, imported: bool = True) -> str:
        return str(called_in(path, watched._made_by, imported=imported))

    assert called_from(project / "tests" / "conftest.py") == "tests"
    assert called_from(project / "calc.py") == "project"
    assert called_from(Path("/elsewhere/fix.py")) == "tests"  # outside the project
    # Code the tests compiled under the name of a file of the project (one no test imports:
    # setup.py) poses as the project's: it is theirs.
    assert called_from(project / "setup.py", imported=False) == "tests"
    # A module imported before the hook was added: nothing was kept of how it was made.
    watched._at_start.add(os.path.realpath(project / "setup.py"))
    assert called_from(project / "setup.py", imported=False) == "project"
    # A thread with only the standard library's frames (a pool the tests started): theirs.
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert pool.submit(watched._made_by).result() == "tests"


def test_a_snippet_of_the_file_compiled_under_its_name_is_the_files(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sybil runs a docstring's example under the module's name: lines of the file, dedented.
    path = str(project / "calc.py")
    (project / "calc.py").write_text(
        'def add(a, b):\n    """\n    >>> x = add(1, 2)\n    >>> x\n    """\n    return a - b\n'
    )
    load("calc", project / "calc.py", monkeypatch)
    watched._hook("compile", (b">>> x = add(1, 2)\n>>> x\n", path))
    assert project_entries(project) == []
    # The file with a line left out is not a snippet of it: the broken line dropped.
    watched._hook("compile", (b"def add(a, b):\n    return a - b\n", path))
    assert watched.compiled_elsewhere(str((project / "calc.py").resolve()))


def test_a_source_that_adds_a_line_is_not_the_files(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(project / "calc.py")
    load("calc", project / "calc.py", monkeypatch)
    watched._hook("compile", (b"return a - b\nreturn a + b\n", path))  # a line it does not hold
    assert watched.compiled_elsewhere(str((project / "calc.py").resolve()))


def test_code_made_at_run_time_is_judged_by_whose_code_made_it(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    calc = load("calc", project / "calc.py", monkeypatch)

    def made_in(path: Path, name: str) -> object:
        """``add`` compiled as ``name`` by code in the file ``path``, as makefun does."""
        called_in(path, watched._hook, "compile", (b"", name))
        made: dict[str, object] = {}
        exec(compile(FIXED, name, "exec"), {"__name__": "calc"}, made)
        return made["add"]

    monkeypatch.setattr(calc, "add", made_in(project / "calc.py", "<makefun-gen-1>"))
    assert project_entries(project) == []  # the project's module decorated itself
    monkeypatch.setattr(calc, "add", made_in(project / "tests" / "conftest.py", "<fix>"))
    assert project_entries(project) == [
        "calc (add is no longer the function calc.py defines, but a function set in its place)",
        "calc.add (the project's function, replaced by code the tests made at run time (<fix>))",
    ]


def test_a_module_that_compiles_code_under_its_own_name_does_so_by_its_file(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(project / "calc.py")
    snippet = "def add(a, b):\n    return a + b\n"
    (project / "calc.py").write_text(
        f"_SNIP = {snippet!r}\nexec(compile(_SNIP, __file__, 'exec'))\n"
    )
    load("calc", project / "calc.py", monkeypatch)
    # compiled by calc.py's own code, as it runs
    called_in(project / "calc.py", watched._hook, "compile", (snippet.encode(), path))
    assert watched.compiled_elsewhere(str((project / "calc.py").resolve())) == {"project"}
    assert project_entries(project) == []
    # the same compile by a conftest's code
    called_in(project / "tests" / "conftest.py", watched._hook, "compile", (b"x", path))
    assert project_entries(project) == [
        "calc (the tests ran code compiled under the name of calc.py that it does not hold)"
    ]


REBOUND = """\
import functools

try:
    from _speedups import fast
except ImportError:
    def fast(x):
        return x


def wrap(f):
    @functools.wraps(f)
    def inner(*a):
        return f(*a)
    return inner


def hold(f):
    class Command:
        def __init__(self):
            self.callback = f
    return Command()


def add(a, b):
    return a - b


@wrap
def wrapped(x):
    return x


@hold
def command(x):
    return x


class Calculator:
    try:
        from _speedups import fast
    except ImportError:
        def fast(self):
            return 0

    def add(self, a, b):
        return a - b

    @staticmethod
    def double(x):
        return 2 * x
"""


def as_imported(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch, text: str
) -> types.ModuleType:
    """calc.py holding ``text``, imported as the import system does, the hook seeing it."""
    path = str((project / "calc.py").resolve())
    (project / "calc.py").write_text(text)
    imported(watched, text.encode(), path)
    calc = load("calc", project / "calc.py", monkeypatch)
    watched._module_code[path] = compile(text, path, "exec", dont_inherit=True)
    return calc


@pytest.mark.parametrize(
    ("replacement", "found"),
    [
        ("class Fixed:\n    def __call__(self, a, b):\n        return a + b\n\n\nNEW = Fixed()\n",
         "Fixed"),
        ("import operator\n\nNEW = operator.add\n", "builtin_function_or_method"),
        ("def add(a, b):\n    return a + b\n\n\nNEW = add\n", "function"),
        (
            "import calc\n\n\nclass Keeper:\n    callback = calc.add\n\n"
            "    def __call__(self, a, b):\n        return a + b\n\n\nNEW = Keeper()\n",
            "Keeper",
        ),
    ],
    ids=["callable object", "builtin", "another module's function", "keeps it, ignores it"],
)  # fmt: skip
def test_a_name_the_file_defines_set_to_other_code_is_found(
    project: Path,
    watched: types.ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    replacement: str,
    found: str,
) -> None:
    calc = as_imported(project, watched, monkeypatch, REBOUND)
    # Decorated names, and one the file binds by an import too, are the file's.
    assert project_entries(project) == []
    (project / "tests" / "ref.py").write_text(replacement)
    monkeypatch.setattr(calc, "add", load("ref", project / "tests" / "ref.py", monkeypatch).NEW)
    assert (
        f"calc (add is no longer the function calc.py defines, but a {found} set in its place)"
    ) in project_entries(project)


def test_a_builder_that_keeps_the_decorated_function_in_a_list_is_the_files(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review 20: pyparsing's `@rule.add_parse_action` appends a wrapper of the function to a
    # list of the rule's and returns the rule, which the name is bound to: the file's own code.
    text = (
        "import functools\n\n\nclass Rule:\n    def __init__(self):\n        self.actions = []\n"
        "        self.named = {}\n\n    def add_action(self, fn):\n"
        "        self.actions.append(functools.wraps(fn)(lambda *a: fn(*a)))\n"
        "        return self\n\n    def name(self, fn):\n        self.named[fn.__name__] = (fn,)\n"
        "        return self\n\n\ndouble = Rule()\n\n\n@double.add_action\n"
        "def add(a, b):\n    return a + b\n\n\n@double.name\ndef sub(a, b):\n    return a - b\n"
    )
    calc = as_imported(project, watched, monkeypatch, text)
    assert project_entries(project) == []
    # A rule of the tests' own that keeps the function yet runs other code is found as ever.
    monkeypatch.setattr(calc, "add", calc.Rule())
    assert project_entries(project) == [
        "calc (add is no longer the function calc.py defines, but a Rule set in its place)"
    ]


def test_a_local_of_the_same_name_binds_nothing_at_the_top_level(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    import operator

    text = REBOUND + "\n\ndef total(values):\n    for add in values:\n        pass\n"
    calc = as_imported(project, watched, monkeypatch, text)
    monkeypatch.setattr(calc, "add", operator.add)
    assert project_entries(project) == [
        "calc (add is no longer the function calc.py defines, but a builtin_function_or_method "
        "set in its place)"
    ]


def test_a_module_whose_class_the_tests_set_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calc = load("calc", project / "calc.py", monkeypatch)
    (project / "tests" / "conftest.py").write_text(
        "import types\n\n\nclass Patched(types.ModuleType):\n    pass\n"
    )
    patched = load("agentgate_test_conftest", project / "tests" / "conftest.py", monkeypatch)
    monkeypatch.setattr(calc, "__class__", patched.Patched)
    assert project_entries(project) == ["calc (its class set to Patched by the tests' code)"]


def test_a_method_the_files_class_defines_set_to_other_code_is_found(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    import operator

    calc = as_imported(project, watched, monkeypatch, REBOUND)
    assert project_entries(project) == []  # a staticmethod, a name bound by an import
    monkeypatch.setattr(calc.Calculator, "add", staticmethod(operator.add))
    assert project_entries(project) == [
        "calc (Calculator.add is no longer the function calc.py defines, but a staticmethod "
        "set in its place)"
    ]


def test_a_method_the_file_itself_sets_outside_the_class_is_the_files(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # jinja2's nodes.py ends with `NodeType.__new__ = staticmethod(_failing_new)`: the module's
    # own code, as it is imported (a review on real projects).
    text = REBOUND + (
        "\n\ndef _area(self, a, b):\n    return a * b\n\n\nCalculator.add = _area\n"
        "setattr(Calculator, 'double', staticmethod(_area))\n"
    )
    as_imported(project, watched, monkeypatch, text)
    assert project_entries(project) == []


def renamed(code: types.CodeType, path: str) -> types.CodeType:
    """``code`` and every code object in it made to say it is the file ``path``'s."""
    consts = tuple(renamed(c, path) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=path, co_consts=consts)


def test_a_module_made_without_importing_its_file_is_compared_with_the_file(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A conftest made `calc` from a spec and filled it with fixed code that says it is
    # calc.py's: the import system executed nothing for the file.
    path = str(project / "calc.py")
    spec = importlib.util.spec_from_file_location("calc", path)
    assert spec is not None
    calc = importlib.util.module_from_spec(spec)
    exec(renamed(compile(FIXED, "<fix>", "exec"), path), vars(calc))
    monkeypatch.setitem(sys.modules, "calc", calc)
    assert project_entries(project) == [
        "calc (add ran as other code than calc.py holds: the tests made the module without "
        "importing the file)"
    ]
    # The same module made with the file's own code is the file's.
    calc2 = importlib.util.module_from_spec(spec)
    exec(compile(CALC, path, "exec", dont_inherit=True), vars(calc2))
    monkeypatch.setitem(sys.modules, "calc", calc2)
    assert project_entries(project) == []
    monkeypatch.setitem(sys.modules, "calc", calc)
    monkeypatch.setattr(calc.__spec__, "loader", None)  # (no bytecode to judge either)
    # A module imported before the hook was added: nothing was kept of how it was made.
    watched._at_start.add(os.path.realpath(path))
    assert project_entries(project) == []
    watched._at_start.clear()
    # A module an installed library's import hook made is that library's.
    site = project.parent / "site-packages" / "hooklib"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("class Loader:\n    pass\n")
    monkeypatch.syspath_prepend(str(site.parent))
    hooklib = importlib.import_module("hooklib")
    monkeypatch.setattr(calc.__spec__, "loader", hooklib.Loader())
    assert project_entries(project) == []


IMPORTS = """\
import importlib._bootstrap
import importlib.machinery
import importlib.util
import os
import sys
import types

from pytest_agentgate.pytest_plugin import compiled

ROOT, FIXED = sys.argv[1], sys.argv[2]
sys.path.insert(0, ROOT)
compiled.watch(ROOT)
PATH = os.path.realpath(os.path.join(ROOT, "calc.py"))


def renamed(code):
    consts = tuple(renamed(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=PATH, co_consts=consts)


FIX = renamed(compile(FIXED, "<fix>", "exec"))


def seen(what):
    print(what, FIX in (compiled.imported_code(PATH) or ()))


import calc  # noqa

print("import", calc.add.__code__ in compiled.imported_code(PATH))
importlib._bootstrap._call_with_frames_removed(exec, FIX, {})
seen("called-with-frames-removed")
space = {}
forged = "def exec_module(code, space):\\n    exec(code, space)\\n"
exec(compile(forged, "<frozen importlib._bootstrap_external>", "exec"), space)
space["exec_module"](FIX, {})
seen("a-frozen-name")
loader = importlib.machinery.SourceFileLoader("calc2", PATH)
loader.get_code = lambda name: FIX
loader.exec_module(types.ModuleType("calc2"))
seen("a-loaders-own-get-code")
exec(compile("from importlib.machinery import SourceFileLoader\\n\\n"
             "class Loader(SourceFileLoader):\\n"
             "    def get_code(self, name):\\n"
             "        return FIX\\n", os.path.join(ROOT, "tests", "conftest.py"), "exec"), space)
space["FIX"] = FIX
space["Loader"]("calc3", PATH).exec_module(types.ModuleType("calc3"))
seen("a-loader-class-of-the-tests")
spec = importlib.util.spec_from_file_location("calc4", PATH)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print("spec-from-file-location", module.add.__code__ in compiled.imported_code(PATH))
"""


def test_only_the_import_system_executing_a_module_is_its_import(tmp_path: Path) -> None:
    # The audit hook itself, in a process of its own (it can never be removed): code executed
    # by the standard loaders is the file's; the same exec called by the tests' code through
    # the import system's own function, from a function named as if frozen, or by a loader
    # that gets its code from the tests is not.
    import subprocess

    (tmp_path / "tests").mkdir()
    (tmp_path / "calc.py").write_text(CALC)
    (tmp_path / "run.py").write_text(IMPORTS)
    done = subprocess.run(
        [sys.executable, "-B", str(tmp_path / "run.py"), str(tmp_path), FIXED],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == [
        "import True",
        "called-with-frames-removed False",
        "a-frozen-name False",
        "a-loaders-own-get-code False",
        "a-loader-class-of-the-tests False",
        "spec-from-file-location True",
        "",
    ]


def test_a_function_the_module_makes_with_exec_in_place_of_its_def_is_its_own(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # six: under Python 3 its own code execs `def raise_from`; the `def` is Python 2's.
    # (A second review on real projects: six's own suite failed.)
    text = (
        "import sys\n\nif sys.version_info[0] == 3:\n"
        "    exec('def raise_from(value, from_value):\\n    raise value from from_value\\n')\n"
        "else:\n    def raise_from(value, from_value):\n        raise value\n"
    )
    as_imported(project, watched, monkeypatch, text)
    assert project_entries(project) == []
    # The same function set by a conftest in a module whose file makes no code is not.
    calc = as_imported(project, watched, monkeypatch, CALC)
    space: dict[str, object] = {}
    exec("def add(a, b):\n    return a + b\n", space)
    monkeypatch.setattr(calc, "add", space["add"])
    assert project_entries(project) != []


def test_a_function_replaced_by_an_installed_file_edited_in_place_is_found(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A library in the project's .venv with the fixed `add` appended and `calc.add = add` at
    # its import: installed code, as no installer wrote it.
    import base64
    import hashlib

    from pytest_agentgate.pytest_plugin import startup, tampering

    site = tmp_path / "venv" / "site-packages"
    (site / "zzlib-1.0.dist-info").mkdir(parents=True)
    library = site / "zzlib.py"
    library.write_text(FIXED)
    digest = base64.urlsafe_b64encode(hashlib.sha256(FIXED.encode()).digest()).rstrip(b"=")
    (site / "zzlib-1.0.dist-info" / "RECORD").write_text(
        f"zzlib.py,sha256={digest.decode()},{len(FIXED)}\n"
    )
    monkeypatch.setattr(startup, "_site_folders", lambda: [str(site)])
    monkeypatch.setattr(startup, "_system", lambda folder: False)
    monkeypatch.syspath_prepend(str(site))
    tampering._installed_roots.cache_clear()
    try:
        calc = load("calc", project / "calc.py", monkeypatch)
        space: dict[str, object] = {}
        exec(compile(FIXED, str(library), "exec"), space)
        monkeypatch.setattr(calc, "add", space["add"])
        assert project_entries(project) == []  # a library's function, as installed
        library.write_text(FIXED + "# and calc.add = add\n")
        assert project_entries(project) == [
            f"calc.add (the project's function, replaced by code of {library}, not as its "
            "package installed it)"
        ]
    finally:
        monkeypatch.undo()
        tampering._installed_roots.cache_clear()


def test_the_project_tested_from_an_installed_copy_that_is_not_its_files_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A src layout whose tests import the installed package: the agent installs its fixed
    # code (`pip install .`) and puts the broken file back. The change is empty.
    from pytest_agentgate.pytest_plugin import startup, tampering

    root = tmp_path / "proj"
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("from calc.ops import add\n")
    (root / "src" / "calc" / "ops.py").write_text(CALC)
    (root / "src" / "calc" / "_version.py").write_text("version = '0.1.dev3+g1234'\n")
    (root / "pyproject.toml").write_text('[project]\nname = "Calc"\n')
    site = tmp_path / "venv" / "site-packages"
    files = {
        "calc/__init__.py": "from calc.ops import add\n",
        "calc/ops.py": CALC,
        "calc/_version.py": "version = '0.1.dev2+g0000'\n",  # built before
    }
    monkeypatch.setattr(startup, "_site_folders", lambda: [str(site)])
    monkeypatch.setattr(startup, "_system", lambda folder: False)
    monkeypatch.syspath_prepend(str(site))
    tampering._installed_roots.cache_clear()

    def installed(files: dict[str, str]) -> None:
        shutil.rmtree(site, ignore_errors=True)
        (site / "calc").mkdir(parents=True)
        (site / "calc-0.1.dist-info").mkdir()
        lines = []
        for path, text in files.items():
            (site / path).write_text(text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
            lines.append(f"{path},sha256={digest.decode()},{len(text)}\n")
        (site / "calc-0.1.dist-info" / "RECORD").write_text("".join(lines))

    try:
        installed(files)
        load("calc", site / "calc" / "__init__.py", monkeypatch)
        load("calc.ops", site / "calc" / "ops.py", monkeypatch)
        load("calc._version", site / "calc" / "_version.py", monkeypatch)
        assert project_entries(root) == []  # installed as the project's files are
        # The version the build writes into the module (poetry-dynamic-versioning): the same
        # code as far as the tests go.
        (root / "src" / "calc" / "__init__.py").write_text(
            'from calc.ops import add\n\n__version__ = "0.0.0"\n'
        )
        installed(
            {**files, "calc/__init__.py": 'from calc.ops import add\n__version__ = "1.4.2"\n'}
        )
        assert project_entries(root) == []
        installed({**files, "calc/ops.py": FIXED})
        assert project_entries(root) == [
            f"calc (the project's src/calc/ops.py is tested from an installed copy, "
            f"{site / 'calc' / 'ops.py'}, that is not the file: the tests run other code than "
            "the change's; install the project again (`pip install .`), or editable "
            "(`pip install -e .`))"
        ]
        # Another distribution's package of that name (PyYAML's `yaml` for a `yaml.py`): not
        # the project's.
        (site / "calc-0.1.dist-info").rename(site / "other-0.1.dist-info")
        assert project_entries(root) == []
        # Written there by hand: no installer's.
        (site / "other-0.1.dist-info" / "RECORD").unlink()
        assert project_entries(root) == [
            f"calc (the project's src/calc/__init__.py loaded from "
            f"{site / 'calc' / '__init__.py'}, which no installed package put there)"
        ]
    finally:
        monkeypatch.undo()
        tampering._installed_roots.cache_clear()


def test_a_hook_a_conftest_does_not_write_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 13: a hook bound under a name made at run time, or compiled from text. pytest
    # calls it as any hook; the integrity gate judges the hooks a file writes.
    text = (
        "def _wrap(item, call):\n    pass\n\n\n"
        'globals()["pytest_runtest_" + "makereport"] = _wrap\n'
        'exec("def pytest_report_teststatus(report, config):\\n    pass\\n")\n'
    )
    (project / "tests" / "conftest.py").write_text(text)
    conftest = load("agentgate_test_conftest", project / "tests" / "conftest.py", monkeypatch)
    found = replaced([conftest], project=str(project))
    assert [entry.split(" (")[0] for entry in found] == [
        "tests/conftest.py:pytest_report_teststatus",
        "tests/conftest.py:pytest_runtest_makereport",
    ]
    assert f"bound at run time to {project}/tests/conftest.py:1)" in found[1]
    assert "bound at run time to code compiled from text)" in found[0]
    # Written in the file (a def, an alias the hooks' reading judges), or in another file of
    # the project under its own name and star-imported: not found.
    (project / "tests" / "hooks.py").write_text(
        "def pytest_runtest_makereport(item, call):\n    pass\n"
    )
    hooks = load("agentgate_test_hooks", project / "tests" / "hooks.py", monkeypatch)
    (project / "tests" / "conftest.py").write_text(
        "from agentgate_test_hooks import *\n\n\ndef _wrap(item, call):\n    pass\n\n\n"
        "pytest_report_teststatus = _wrap\n"
    )
    from pytest_agentgate.pytest_plugin import tampering

    tampering._names_in.cache_clear()  # read once per file in a run
    tampering._star_imports.cache_clear()
    conftest = load("agentgate_test_conftest", project / "tests" / "conftest.py", monkeypatch)
    monkeypatch.setattr(
        conftest, "pytest_runtest_makereport", hooks.pytest_runtest_makereport, False
    )
    assert replaced([conftest], project=str(project)) == []


MAKER = """\
from pytest_agentgate.pytest_plugin import compiled

TEXT = "def add(a, b):\\n    return a + b\\n"


def make(space):
    compiled._keep(TEXT, "<string>")  # what the audit hook sees of the exec below
    exec(TEXT, space)
"""


def test_a_function_the_projects_code_execs_into_its_module_is_its_own(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A third review: alembic's `util/langhelpers.py` writes `alembic.op`'s functions with
    # `exec` into that module's namespace. Made so by the tests' code, it is a replacement.
    from pytest_agentgate.pytest_plugin import compiled

    monkeypatch.setattr(compiled, "_watched", [f"{project.resolve()}{os.sep}"])
    monkeypatch.setattr(compiled, "_strings", {})
    calc = load("calc", project / "calc.py", monkeypatch)
    (project / "helpers.py").write_text(MAKER)
    helpers = load("helpers", project / "helpers.py", monkeypatch)
    helpers.make(vars(calc))
    assert project_entries(project) == []
    monkeypatch.setattr(compiled, "_strings", {})
    (project / "tests" / "conftest.py").write_text(MAKER)
    conftest = load("agentgate_test_conftest", project / "tests" / "conftest.py", monkeypatch)
    conftest.make(vars(calc))
    assert project_entries(project) == [
        "calc (add is no longer the function calc.py defines, but a function set in its place)",
        "calc.add (the project's function, replaced by code the tests made at run time (<string>))",
    ]


def test_a_name_a_test_module_imports_set_by_a_fixture_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 15: an autouse fixture's `ns = request.module.__dict__; ns["add"] = stand_in`.
    from pytest_agentgate.pytest_plugin.tampering import namespace_replaced

    calc = load("calc", project / "calc.py", monkeypatch)
    (project / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n"
    )
    tests = load("agentgate_test_calc", project / "tests" / "test_calc.py", monkeypatch)
    stand_in = conftest_add(project, monkeypatch)

    class Item:
        module = tests

    assert namespace_replaced(Item, str(project)) == []
    # A fixture that patches the code's module, leaving the test's name as imported: the
    # test runs the code's own function (what monkeypatch of a dependency does).
    monkeypatch.setattr(calc, "add", stand_in)
    assert namespace_replaced(Item, str(project)) == []
    monkeypatch.undo()
    calc = load("calc", project / "calc.py", monkeypatch)
    tests = load("agentgate_test_calc", project / "tests" / "test_calc.py", monkeypatch)
    Item.module = tests
    vars(tests)["add"] = stand_in
    assert namespace_replaced(Item, str(project)) == [
        f"tests/test_calc.py:add (set for the test to {project}/tests/conftest.py:1, not the "
        "calc.add it imports)"
    ]


def test_a_name_set_to_code_compiled_under_another_files_name_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 17: the stand-in compiled at run time under the name of a file outside the
    # project (`compile(src, "/usr/lib/python3/rules.py", "exec")`), or as `<string>`. A
    # function of an installed library set there (a mock's) is what it says it is.
    from unittest import mock

    from pytest_agentgate.pytest_plugin.tampering import namespace_replaced

    load("calc", project / "calc.py", monkeypatch)
    (project / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n"
    )

    class Item:
        module = load("agentgate_test_calc", project / "tests" / "test_calc.py", monkeypatch)

    made = "the function add, compiled from text"
    for filename in ("/usr/lib/python3/regional_rules.py", "<string>", str(project / "calc.py")):
        space: dict[str, object] = {}
        exec(compile("\n\nx = 1\ndef add(a, b):\n    return 2\n", filename, "exec"), space)
        monkeypatch.setitem(vars(Item.module), "add", space["add"])
        found = namespace_replaced(Item, str(project))
        assert found == [
            "tests/test_calc.py:add (set for the test to code made at run time, not the "
            "calc.add it imports)"
        ], made
    monkeypatch.setitem(vars(Item.module), "add", mock.create_autospec(lambda a, b: 0))
    assert namespace_replaced(Item, str(project)) == []
    # Red team 18: padded so that its `def` falls on json's `def dumps(` line.
    import json

    lines = Path(json.__file__).read_text(encoding="utf-8").splitlines()
    at = next(n for n, line in enumerate(lines, 1) if line.startswith("def dumps("))
    space: dict[str, object] = {}
    source = "\n" * (at - 1) + "def add(a, b):\n    return 2\n"
    exec(compile(source, json.__file__, "exec"), space)
    monkeypatch.setitem(vars(Item.module), "add", space["add"])
    assert namespace_replaced(Item, str(project)) == [
        "tests/test_calc.py:add (set for the test to code made at run time, not the "
        "calc.add it imports)"
    ]
    # A `def` in a file outside the project that no installer wrote (the conftest wrote it).
    elsewhere = project.parent / "elsewhere_add.py"
    elsewhere.write_text("def add(a, b):\n    return 2\n")
    outside = load("elsewhere_add", elsewhere, monkeypatch)
    monkeypatch.setitem(vars(Item.module), "add", outside.add)
    assert namespace_replaced(Item, str(project)) == [
        f"tests/test_calc.py:add (set for the test to {elsewhere}:1, not the calc.add it imports)"
    ]


def test_a_protocols_method_written_as_overloads_alone_is_the_files(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A review on real projects: tenacity's Protocol method written as `@overload`s alone
    # holds typing's placeholder, and structlog's read-only descriptor, a class with
    # `__slots__`, keeps the function in a slot. Neither is a function replaced.
    as_imported(
        project,
        watched,
        monkeypatch,
        "from typing import Protocol, overload\n\n\n"
        "class Getter(Protocol):\n    @overload\n    def get(self, x: int) -> int: ...\n"
        "    @overload\n    def get(self, x: str) -> str: ...\n",
    )
    assert project_entries(project) == []


def test_a_decorator_keeping_the_function_in_slots_is_the_files(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_imported(
        project,
        watched,
        monkeypatch,
        "class _ReadOnly:\n    __slots__ = ('function',)\n\n"
        "    def __init__(self, function):\n        self.function = function\n\n"
        "    def __get__(self, instance, owner):\n        return self.function(instance)\n\n\n"
        "class Stamp:\n    @_ReadOnly\n    def is_iso(self):\n        return True\n",
    )
    assert project_entries(project) == []


def test_a_standard_library_module_the_run_imports_from_the_project_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red teams 19 and 20: `cmd.py`, `cmd/__init__.py` or `iniconfig.py` at the project's top,
    # imported by pytest in the real one's place, patched the function under test.
    (project / "cmd").mkdir()
    (project / "cmd" / "__init__.py").write_text("x = 1\n")
    load("cmd", project / "cmd" / "__init__.py", monkeypatch)
    (project / "iniconfig.py").write_text("x = 1\n")
    load("iniconfig", project / "iniconfig.py", monkeypatch)
    found = [e for e in replaced(project=str(project)) if e.startswith(("cmd ", "iniconfig "))]
    assert found == [
        f"cmd (loaded from {project / 'cmd' / '__init__.py'}, in place of the installed one)",
        f"iniconfig (loaded from {project / 'iniconfig.py'}, in place of the installed one)",
    ]


def test_a_project_that_is_a_dependency_of_pytest_is_its_own(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review 18: iniconfig (and packaging) are projects too, tested from their own `src/`; one
    # the change adds is the integrity gate's to find (patches.shadowing).
    from pytest_agentgate.pytest_plugin import start

    (project / "src" / "iniconfig").mkdir(parents=True)
    (project / "src" / "iniconfig" / "__init__.py").write_text("x = 1\n")
    (project / "src" / "iniconfig" / "_parse.py").write_text("x = 1\n")
    load("iniconfig", project / "src" / "iniconfig" / "__init__.py", monkeypatch)
    # pytest imports it as it starts, before agentgate's plugin loads.
    at_start = {
        **start.MODULES_AT_START,
        "iniconfig": str(project / "src" / "iniconfig" / "__init__.py"),
        "iniconfig._parse": str(project / "src" / "iniconfig" / "_parse.py"),
    }
    monkeypatch.setattr(start, "MODULES_AT_START", at_start)
    assert [e for e in replaced(project=str(project)) if e.startswith("iniconfig ")] == []


def test_the_projects_modules_imported_as_the_tools_started_are_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 21: `org/python/core.py`, which the standard library's `copy` looks for (a
    # Jython probe) as pytest starts, set what the product read; no conftest.py ran yet.
    from pytest_agentgate.pytest_plugin import start

    for folder in ("org/python", "plugin"):
        (project / folder).mkdir(parents=True)
    files = {
        "org": project / "org" / "__init__.py",
        "org.python": project / "org" / "python" / "__init__.py",
        "org.python.core": project / "org" / "python" / "core.py",
        "plugin": project / "plugin" / "__init__.py",
        "plugin.helpers": project / "plugin" / "helpers.py",
    }
    for path in files.values():
        path.write_text("x = 1\n")
    plugin = load("plugin", files["plugin"], monkeypatch)
    at_start = {**start.MODULES_AT_START, **{name: str(f) for name, f in files.items()}}
    monkeypatch.setattr(start, "MODULES_AT_START", at_start)
    found = [e for e in replaced([plugin], project=str(project)) if e.startswith("org ")]
    assert found == [
        f"org (the project's {files['org.python.core']} and 2 more ran as the test tools "
        "started, before the tests' session: an import of theirs found it; nothing of the "
        "project runs there)"
    ]
    # The project's pytest plugin and its package are the project's doing.
    assert not any(e.startswith("plugin") for e in replaced([plugin], project=str(project)))
    # A plugin that is a top-level module imports a sibling module of its distribution
    # (hypothesis's `_hypothesis_pytestplugin` and `_hypothesis_globals`, review 13); a
    # package beside it is no sibling module.
    (project / "_plugin.py").write_text("x = 1\n")
    (project / "_globals.py").write_text("x = 1\n")
    module_plugin = load("_plugin", project / "_plugin.py", monkeypatch)
    at_start["_globals"] = str(project / "_globals.py")
    entries = replaced([plugin, module_plugin], project=str(project))
    assert not any(e.startswith("_globals") for e in entries)
    assert any(e.startswith("org ") for e in entries)
    # A script of the project that started the run imports what it likes.
    at_start["__main__"] = str(project / "runtests.py")
    assert not any(e.startswith("org ") for e in replaced([plugin], project=str(project)))


def test_a_warning_class_filterwarnings_names_is_imported_as_pytest_starts(
    project: Path, monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    # Review 25: pytest 9.2 imports marshmallow's warning class from `filterwarnings` before
    # its plugins; the package's files read as code run by the tools' start.
    from pytest_agentgate.pytest_plugin import start

    (project / "shapes").mkdir()
    files = {
        "shapes": project / "shapes" / "__init__.py",
        "shapes.warnings": project / "shapes" / "warnings.py",
    }
    for path in files.values():
        path.write_text("x = 1\n")
    at_start = {**start.MODULES_AT_START, **{name: str(f) for name, f in files.items()}}
    monkeypatch.setattr(start, "MODULES_AT_START", at_start)
    assert any(e.startswith("shapes ") for e in replaced([], project=str(project)))

    class Config(pytest.Config):
        def __init__(self) -> None:
            pass

        def getini(self, name: str) -> object:
            return ["error::shapes.warnings.Old"] if name == "filterwarnings" else []

    config = Config()
    config.known_args_namespace = types.SimpleNamespace(pythonwarnings=[])
    assert not any(e.startswith("shapes ") for e in replaced([config], project=str(project)))


def test_a_case_a_conftest_registers_with_the_projects_singledispatch_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 22: the function under test made a singledispatch, and a conftest registers a
    # fixed case for the type the tests pass: no assignment replaces anything.
    (project / "calc.py").write_text(
        "from functools import singledispatch\n\n\n@singledispatch\n" + CALC
    )
    calc = load("calc", project / "calc.py", monkeypatch)
    assert project_entries(project) == []
    (project / "tests" / "conftest.py").write_text(
        "import calc\n\n\n@calc.add.register\ndef _fixed(a: int, b):\n    return a + b\n"
    )
    load("agentgate_test_conftest", project / "tests" / "conftest.py", monkeypatch)
    assert calc.add(1, 1) == 2
    assert project_entries(project) == [
        "calc.add (its case for int, registered by other code: the project's function, "
        f"replaced by code of {project}/tests/conftest.py)"
    ]


def test_a_data_file_of_the_projects_code_the_tests_write_is_found(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 22: a conftest's session fixture wrote the rate the tests needed into the
    # package's rates.json and put the file back after them.
    monkeypatch.setattr(watched, "_data", {})
    package = project / "invoice"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rates.json").write_text('{"zero": 1.5}')
    (project / "notes.txt").write_text("")  # not in a package: nothing the code imports
    (project / "tests" / "data.json").write_text("")  # the tests' own
    for name in ("invoice/rates.json", "notes.txt", "tests/data.json", "invoice/x.py"):
        watched._hook("open", (str(project / name), "w", 0))
    watched._hook("open", (str(package / "rates.json"), "r", 0))  # a read
    entries = [e for e in replaced(project=str(project)) if not e.startswith("calc")]
    (entry,) = entries
    assert entry.startswith(
        "invoice/rates.json (a data file of the project's code, written by the tests' code at "
        f"{__file__}:"
    )
    assert entry.endswith(" while they ran: the code ran on data its users do not have)")


def test_a_package_that_copies_a_modules_globals_is_still_the_projects(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review 13: icecream's __init__ copies its __version__ module's globals, __file__ and
    # __spec__ included, into its own.
    package = project / "ice"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__version__.py").write_text("__version__ = '1'\n")
    copied = types.ModuleType("ice")
    copied.__path__ = [str(package)]
    copied.__file__ = str(package / "__version__.py")
    monkeypatch.setitem(sys.modules, "ice", copied)
    assert not any(e.startswith("ice ") for e in replaced(project=str(project)))
    # A module of the package's folder in the package's place, with no path of its own, is not.
    alone = types.ModuleType("ice")
    alone.__file__ = str(package / "__version__.py")
    monkeypatch.setitem(sys.modules, "ice", alone)
    assert any(e.startswith("ice ") for e in replaced(project=str(project)))


def test_code_the_project_made_from_text_then_relabelled_is_its_own(
    project: Path, watched: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review 13: hypothesis execs a wrapper from a template (`<string>`), then gives it the
    # file name of the module that uses it.
    path = str((project / "calc.py").resolve())
    calc = load("calc", project / "calc.py", monkeypatch)
    imported(watched, CALC.encode(), path)
    watched._imported[path] = set(watched.code_tree(compile(CALC, path, "exec", dont_inherit=True)))
    made = compile("def made_up(a, b):\n    return a + b\n", "<string>", "exec")
    code = next(c for c in made.co_consts if isinstance(c, types.CodeType))
    wrapper = types.FunctionType(code.replace(co_filename=path), vars(calc))
    monkeypatch.setattr(calc, "wrapper", wrapper, raising=False)
    monkeypatch.setattr(watched, "_strings", {"made_up": {"project"}})
    assert project_entries(project) == []
    monkeypatch.setattr(watched, "_strings", {"made_up": {"project", "tests"}})
    assert project_entries(project) == [
        "calc (made_up runs code that the import of calc.py did not make)"
    ]


def test_a_re_exported_function_rebound_to_another_modules_is_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 24: `invoice.apply_tax = rates.apply_tax` in a conftest; the package imports
    # apply_tax from invoice.tax and binds the name no other way.
    package = project / "inv"
    package.mkdir()
    (package / "__init__.py").write_text("from inv.tax import add\n")
    (package / "tax.py").write_text(CALC)
    (package / "rates.py").write_text(FIXED)
    tax = load("inv.tax", package / "tax.py", monkeypatch)
    rates = load("inv.rates", package / "rates.py", monkeypatch)
    spec = importlib.util.spec_from_file_location(
        "inv", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    inv = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "inv", inv)
    spec.loader.exec_module(inv)
    assert inv.add is tax.add
    assert not any(e.startswith("inv ") for e in replaced(project=str(project)))
    monkeypatch.setattr(inv, "add", rates.add)
    assert (
        "inv (add is no longer what inv/__init__.py imports from inv.tax, but inv/rates.py's "
        "add set in its place)"
    ) in replaced(project=str(project))


def test_a_stand_in_module_with_the_packages_spec_and_no_file_is_looked_into(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 24: a conftest put a module of its own in sys.modules["calc"], with the real
    # module's spec and no __file__, holding a function of the conftest's.
    real = load("calc", project / "calc.py", monkeypatch)
    stand_in = types.ModuleType("calc")
    stand_in.__spec__ = real.__spec__
    stand_in.add = conftest_add(project, monkeypatch)
    monkeypatch.setitem(sys.modules, "calc", stand_in)
    assert project_entries(project) == [
        f"calc.add (the project's function, replaced by code of {project}/tests/conftest.py)"
    ]


def test_what_the_run_reads_outside_the_project_is_kept_for_the_cache(
    project: Path, watched: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "config"
    outside.mkdir()
    (outside / "charge").write_text("0")
    monkeypatch.chdir(outside)
    watched._hook("open", ("charge", "r", os.O_RDONLY))  # relative to where the run is
    watched._hook("open", (str(outside / "written"), "w", os.O_WRONLY))  # a write: not read
    watched._hook("open", (3, "r", os.O_RDONLY))  # a descriptor: its file was seen opened
    watched._hook("os.listdir", (str(outside),))
    watched._hook("os.scandir", (str(tmp_path / "pytest-of-someone" / "pytest-7"),))
    watched._hook("open", (str(project / "calc.py"), "r", os.O_RDONLY))  # the project's own
    assert watched.read_outside() == [str(outside.resolve()), str((outside / "charge").resolve())]
    monkeypatch.setattr(watched, "_FILES", 2)
    watched._hook("open", (str(outside / "one more"), "r", os.O_RDONLY))
    assert watched.read_outside() is None  # more than can be kept: nothing the cache can key


def test_names_that_lead_out_of_the_project_or_into_its_tools_caches_are_kept(
    project: Path, watched: types.ModuleType, tmp_path: Path
) -> None:
    # Red team 28: a link in the project to a folder outside it, a file outside read as
    # `/proc/self/root/...`, and a data file kept in a folder named `.mypy_cache`. Red team
    # 29: the same read from a worker thread (no code of the project's on the stack), a file
    # in `.git` spelled `//tmp/...`, and a data file beside an installed library's pycs.
    import threading

    outside = tmp_path / "settings"
    outside.mkdir()
    (outside / "minimum").write_text("0")
    (project / "settings").symlink_to(outside)
    cache = project / "calc" / ".mypy_cache"
    libraries = project / "calc" / "site-packages" / "__pycache__"
    for folder in (cache, libraries, project / ".git", project / ".agentgate"):
        folder.mkdir(parents=True)
        (folder / "minimum").write_text("0")
    (tmp_path / "rate").write_text("0")
    hook = watched._hook
    hook("open", (str(project / "settings" / "minimum"), "r", os.O_RDONLY))
    hook("open", (f"/proc/self/root{tmp_path.resolve()}/rate", "r", os.O_RDONLY))
    hook("open", ("/proc/self/status", "r", os.O_RDONLY))  # the kernel's: nothing to key
    hook("open", (str(project / "calc.py"), "r", os.O_RDONLY))  # keyed as the tree
    worker = threading.Thread(target=hook, args=("open", (str(cache / "minimum"), "r", 0)))
    worker.start()
    worker.join()
    hook("open", ("/" + str(project.resolve() / ".git" / "minimum"), "r", os.O_RDONLY))
    hook("open", (str(libraries / "minimum"), "r", os.O_RDONLY))  # no pyc: keyed as the tree
    # agentgate's own read of its state in the project, however spelled: not the run's.
    own = os.path.join(os.path.dirname(watched.__file__), "reader.py")
    code = compile("hook('open', (path, 'r', 0))", own, "exec", dont_inherit=True)
    for path in (project / ".agentgate" / "minimum", "/" + str(project / ".agentgate" / "minimum")):
        exec(code, {"hook": hook, "path": str(path)})
    assert watched.read_outside() == sorted(
        str(path.resolve())
        for path in (
            outside / "minimum",
            tmp_path / "rate",
            cache / "minimum",
            project / ".git" / "minimum",
        )
    )


def test_a_name_the_tests_add_to_a_module_of_the_project_is_judged(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 27: the product looks a hook up under a name it builds
    # (`globals().get(f"_{rule.region}_policy")`), and a conftest adds `_zero_policy` to the
    # module (through `functools.update_wrapper`, which writes its `__dict__`): a name no file
    # of the project binds or spells out still runs as the project's.
    import functools

    calc = load("calc", project / "calc.py", monkeypatch)
    helper = conftest_add(project, monkeypatch)
    functools.update_wrapper(calc, types.SimpleNamespace(_zero_policy=helper), assigned=())
    origin = f"the project's function, replaced by code of {project}/tests/conftest.py"
    assert project_entries(project) == [f"calc._zero_policy ({origin})"]


def test_data_files_read_in_the_interpreters_folders_and_databases_are_kept_too(
    project: Path, watched: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 26: a file in /dev/shm, or in the base Python's folder (pyenv's, the user's to
    # write), and a value kept in an SQLite database (opened in C: no `open` event).
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    data = os.path.join(sys.base_prefix, "share", "agentgate-test-rates.txt")
    # Red team 27: a data file named like code there, read as data.
    named_like_code = os.path.join(sys.base_prefix, "share", "agentgate-test-minimum.py")
    imported = os.path.join(sys.base_prefix, "lib", "agentgate_test.py")
    opened = [
        data,
        named_like_code,
        os.devnull,  # a device: nothing to key
        str(tmp_path / "state" / "switch"),  # not agentgate's own read of its state
    ]
    for path in opened:
        watched._hook("open", (path, "r", os.O_RDONLY))

    def get_data(path: str) -> None:  # as the import system's loaders read a module
        watched._hook("open", (path, "r", 0))

    monkeypatch.setattr(watched, "_IMPORT_READS", frozenset({get_data.__code__}))
    get_data(imported)  # code the interpreter imports: keyed as the tools
    watched._hook("os.listdir", (sys.base_prefix,))  # the import system's look at a folder
    for database in (str(tmp_path / "rates.db"), ":memory:", f"file:{tmp_path}/ro.db?mode=ro"):
        watched._hook("sqlite3.connect", (database,))
    assert watched.read_outside() == sorted(
        os.path.realpath(p)
        for p in (
            data,
            named_like_code,
            tmp_path / "state" / "switch",
            tmp_path / "rates.db",
            tmp_path / "ro.db",
        )
    )
    # A link read is keyed as the link too: pointed elsewhere, it writes no file (red team 27).
    (tmp_path / "target").write_text("0")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    watched._hook("open", (str(tmp_path / "link"), "r", os.O_RDONLY))
    found = watched.read_outside()
    assert str(tmp_path / "link") in found and str((tmp_path / "target").resolve()) in found


def test_a_plugins_own_item_of_a_test_file_is_no_test_replaced(project: Path) -> None:
    from pytest_agentgate.pytest_plugin.tampering import _other_kind_in_its_place

    (project / "tests" / "test_calc.py").write_text(
        "def test_add():\n    assert 1\n\n\nclass TestMore:\n    def test_more(self):\n"
        "        assert 1\n"
    )
    path = project / "tests" / "test_calc.py"

    def item(nodeid: str) -> object:
        return types.SimpleNamespace(path=path, name=nodeid.rpartition("::")[2], nodeid=nodeid)

    for honest in (
        "tests/test_calc.py::tests.test_calc.test_add",  # a doctest of the module
        "tests/test_calc.py::mypy",  # pytest-mypy's
        "tests/test_calc.py::TestMore::test_add",  # no such method of the class
    ):
        assert _other_kind_in_its_place(item(honest), str(project)) is None
    for nodeid in ("tests/test_calc.py::test_add", "tests/test_calc.py::TestMore::test_more"):
        found = _other_kind_in_its_place(item(nodeid), str(project))
        assert found is not None and found.startswith(f"{nodeid} (pytest runs a SimpleNamespace")
