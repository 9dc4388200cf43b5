"""pytest plugins loaded from where no installation put them (``startup.planted_plugins``): a
module with a ``pytest11`` entry point written into the environment's site-packages by hand,
or into a folder a ``.pth`` line puts on the path, and a plugin installed from a local folder
whose hooks can rewrite results. The site folders are a temporary folder here; the modules are
module objects named by their files, as pytest's plugin manager holds them."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import types
from collections.abc import Mapping
from pathlib import Path

import pytest
from _helpers import REWRITER, timestamp_pyc

from pytest_agentgate.pytest_plugin import startup

# A plugin that keeps each report on its item: it alters nothing.
KEEPER = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    setattr(item, "rep_" + call.when, outcome.get_result())
"""


def plugin(path: Path, text: str) -> types.ModuleType:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    module = types.ModuleType(path.stem)
    module.__file__ = str(path)
    return module


def install(site: Path, files: dict[str, str], url: Mapping[str, object] | None = None) -> None:
    """A ``zz-0.1.dist-info`` in ``site`` whose RECORD lists ``files`` (their text hashed as
    an installer does), and pip's ``direct_url.json`` when ``url`` is given."""
    info = site / "zz-0.1.dist-info"
    info.mkdir(parents=True)
    lines = []
    for name, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        shown = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        lines.append(f"{name},sha256={shown},{len(text)}")
    (info / "RECORD").write_text("\n".join([*lines, f"{info.name}/RECORD,,"]) + "\n")
    if url is not None:
        (info / "direct_url.json").write_text(json.dumps(url))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment's one site folder (the tests' virtual environment's, judged)."""
    folder = tmp_path / "venv" / "lib" / "site-packages"
    folder.mkdir(parents=True)
    monkeypatch.setattr(startup, "_site_folders", lambda: [str(folder)])
    monkeypatch.setattr(startup, "_system", lambda folder: False)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def codes(plugins: list[object], project: Path) -> list[str]:
    return [entry.code for entry in startup.planted_plugins(plugins, str(project))]


def test_a_plugin_written_into_the_environment_by_hand_is_planted(
    site: Path, project: Path
) -> None:
    (site / "zz-0.1.dist-info").mkdir()
    (site / "zz-0.1.dist-info" / "entry_points.txt").write_text("[pytest11]\nzz = zz\n")
    zz = plugin(site / "zz.py", REWRITER)
    assert codes([zz], project) == ["pytest plugin zz"]
    # Named conftest.py, outside the project (red team 10): a plugin all the same.
    hidden = plugin(site / "zzhelper" / "conftest.py", REWRITER)
    assert codes([hidden], project) == ["pytest plugin conftest"]
    entry = startup.planted_plugins([zz], str(project))[0]
    assert (entry.path, entry.line, entry.system) == (str(site / "zz.py"), 0, False)


def test_a_plugin_installed_from_a_package_index_is_not_planted(site: Path, project: Path) -> None:
    install(site, {"zz.py": REWRITER})
    zz = plugin(site / "zz.py", REWRITER)
    assert codes([zz], project) == []  # (pytest-rerunfailures rewrites outcomes too)
    # The same file edited after it was installed is not what the installer wrote.
    (site / "zz.py").write_text(REWRITER + "\n# edited\n")
    assert codes([zz], project) == ["pytest plugin zz"]


def test_a_plugin_installed_from_a_local_folder_is_read(
    site: Path, project: Path, tmp_path: Path
) -> None:
    local = {"url": f"file://{tmp_path / 'src'}", "dir_info": {}}
    install(site, {"zz.py": REWRITER}, local)
    zz = plugin(site / "zz.py", REWRITER)
    assert codes([zz], project) == [
        f"pytest plugin zz, installed from {tmp_path / 'src'}: pytest_runtest_makereport in "
        "zz.py can alter test outcomes"
    ]
    (site / "zz-0.1.dist-info").rename(site / "old.dist-info")
    install(site, {"zz.py": KEEPER}, local)
    zz = plugin(site / "zz.py", KEEPER)
    assert codes([zz], project) == []  # it reads the reports only
    # No hook at all: pytest's own function replaced as the plugin is imported.
    patcher = "import _pytest.runner\n\n_pytest.runner.call_and_report = print\n"
    (site / "zz-0.1.dist-info").rename(site / "keeper.dist-info")
    install(site, {"zz.py": patcher}, local)
    zz = plugin(site / "zz.py", patcher)
    assert codes([zz], project) == [
        f"pytest plugin zz, installed from {tmp_path / 'src'}: zz.py patches "
        "_pytest.runner.call_and_report, code of the test tools"
    ]
    (site / "zz-0.1.dist-info" / "RECORD").unlink()
    (site / "zz-0.1.dist-info").rename(site / "patcher.dist-info")
    (site / "keeper.dist-info").rename(site / "zz-0.1.dist-info")
    zz = plugin(site / "zz.py", KEEPER)
    # An archive from a web address: not a local folder, as from an index.
    (site / "zz-0.1.dist-info" / "direct_url.json").write_text(
        json.dumps({"url": "https://example.org/zz.tar.gz", "archive_info": {}})
    )
    (site / "zz.py").write_text(KEEPER)
    assert codes([zz], project) == []


def test_a_plugin_installed_editable_from_another_folder_is_read(
    site: Path, project: Path, tmp_path: Path
) -> None:
    source = tmp_path / "zz-checkout"
    zz = plugin(source / "zz.py", REWRITER)
    assert codes([zz], project) == []  # a folder no installation maps: the machine's
    install(site, {}, {"url": f"file://{source}", "dir_info": {"editable": True}})
    assert codes([zz], project) == [
        f"pytest plugin zz, installed editable from {source}: pytest_runtest_makereport in "
        "zz.py can alter test outcomes"
    ]
    (source / "zz.py").write_text(KEEPER)
    assert codes([zz], project) == []


def test_a_folder_a_pth_line_puts_on_the_path_is_judged_as_the_environment(
    site: Path, project: Path, tmp_path: Path
) -> None:
    shelf = tmp_path / "shelf"
    zz = plugin(shelf / "zz.py", REWRITER)
    (site / "shelf.pth").write_text(f"# a folder of plugins\n{shelf}\n")
    assert codes([zz], project) == ["pytest plugin zz"]
    install(shelf, {"zz.py": REWRITER})  # packages installed there (borrowed): theirs
    assert codes([zz], project) == []


def test_the_projects_own_plugins_are_the_changes(site: Path, project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".hidden/\n")
    conftest = plugin(project / "tests" / "conftest.py", REWRITER)
    helpers = plugin(project / "tests" / "plugins" / "retry.py", REWRITER)
    assert codes([conftest, helpers], project) == []  # the integrity gate judges the change
    # A git-ignored folder of the project that a .pth line puts on the path: no change shows it.
    hidden = plugin(project / ".hidden" / "zz.py", REWRITER)
    assert codes([hidden], project) == ["pytest plugin zz"]


def test_the_machines_folders_are_not_judged(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json as stdlib_module

    zz = plugin(site / "zz.py", REWRITER)
    monkeypatch.setattr(startup, "_system", lambda folder: True)  # no virtual environment
    assert codes([zz], project) == []
    # No module of Python's own is a plugin: one in its folder was written there (red team
    # 13, a user-writable standard library).
    assert codes([stdlib_module], project) == [
        "pytest plugin json, in the standard library's folder"
    ]
    # Objects registered as plugins (a class's instance) have no file of their own.
    monkeypatch.setattr(startup, "_system", lambda folder: False)
    assert codes([zz.__dict__, object()], project) == []


def test_a_test_tools_file_edited_in_the_environment_is_planted(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 10 appended a wrapper to pluggy's _callers.py in the project's .venv that
    # turns every failed report into a pass: no plugin, and the code sits in pluggy's folder.
    import sys

    text = "def _multicall(*args):\n    pass\n"
    install(site, {"pluggy/_callers.py": text})
    callers = plugin(site / "pluggy" / "_callers.py", text)
    callers.__name__ = "pluggy._callers"
    monkeypatch.setitem(sys.modules, "pluggy._callers", callers)
    assert codes([], project) == []  # as its package installed it
    (site / "pluggy" / "_callers.py").write_text(text + "# and a wrapper of every result\n")
    assert codes([], project) == [
        "pluggy._callers, a module of the test tools, not as its package installed it"
    ]


def test_honest_installs_a_second_review_found(
    site: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    # A plugin developed beside the project, installed editable with the src layout: a .pth
    # path line puts its src/ on the path, its dist-info says editable. Read, not planted.
    checkout = tmp_path / "pytest-myfix"
    fixture = plugin(checkout / "src" / "myfix" / "plugin.py", "import pytest\n")
    (site / "_myfix.pth").write_text(f"{checkout / 'src'}\n")
    install(site, {}, {"url": f"file://{checkout}", "dir_info": {"editable": True}})
    assert codes([fixture], project) == []
    rewriting = plugin(checkout / "src" / "myfix" / "rewrite.py", REWRITER)
    assert codes([rewriting], project) == [
        f"pytest plugin rewrite, installed editable from {checkout}: pytest_runtest_makereport "
        "in rewrite.py can alter test outcomes"
    ]
    # The project itself installed from its folder (`pip install .`, as tox does): its own
    # plugin's hooks are the change's to judge.
    (site / "zz-0.1.dist-info").rename(site / "myfix.dist-info")
    install(site, {"zz.py": REWRITER}, {"url": f"file://{project}", "dir_info": {}})
    assert codes([plugin(site / "zz.py", REWRITER)], project) == []
    # A wheel file installed from a folder of wheels (an offline build): as an index serves it.
    (site / "zz-0.1.dist-info" / "direct_url.json").write_text(
        json.dumps({"url": f"file://{tmp_path}/zz-0.1-py3-none-any.whl", "archive_info": {}})
    )
    assert codes([plugin(site / "zz.py", REWRITER)], project) == []
    # `pip install --target .deps` in a git-ignored folder of the project, on the path: its
    # RECORDs are beside it.
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".deps/\n")
    deps = project / ".deps"
    deps.mkdir()
    install(deps, {"zzdep.py": REWRITER})
    monkeypatch.syspath_prepend(str(deps))
    assert codes([plugin(deps / "zzdep.py", REWRITER)], project) == []
    assert codes([plugin(deps / "other.py", REWRITER)], project) == ["pytest plugin other"]
    assert sys.path[0] == str(deps)


def test_a_test_tools_own_repository_installed_editable_is_not_planted(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pluggy's repository, `pip install -e .` (src layout: a .pth path line): its modules are
    # the project's files, which no RECORD lists (a third review on real projects).
    import sys

    src = project / "src"
    callers = plugin(src / "pluggy" / "_callers.py", "def _multicall(*args):\n    pass\n")
    callers.__name__ = "pluggy._callers"
    monkeypatch.setitem(sys.modules, "pluggy._callers", callers)
    (site / "__editable__.pluggy.pth").write_text(f"{src}\n")
    assert codes([], project) == []
    # The same folder outside the project, with no editable install mapping it: planted.
    other = project.parent / "elsewhere"
    moved = plugin(other / "pluggy" / "_callers.py", "def _multicall(*args):\n    pass\n")
    moved.__name__ = "pluggy._callers"
    monkeypatch.setitem(sys.modules, "pluggy._callers", moved)
    (site / "__editable__.pluggy.pth").write_text(f"{other}\n")
    assert codes([], project) == [
        "pluggy._callers, a module of the test tools, not as its package installed it"
    ]


def tool_module(site: Path, name: str, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``name`` (``pluggy._callers``) installed in ``site`` with ``text``, its RECORD saying
    so, imported (its module in ``sys.modules``); its source file."""
    import sys

    relative = name.replace(".", "/") + ".py"
    install(site, {relative: text})
    module = plugin(site / relative, text)
    module.__name__ = name
    monkeypatch.setitem(sys.modules, name, module)
    return site / relative


def compiled(source: Path, text: str, header_of: Path | None = None) -> Path:
    """The pyc Python writes for ``source`` holding the code of ``text``, with the header of
    the file ``header_of`` (the source itself by default): the time and size Python checks."""
    import importlib.util

    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir(exist_ok=True)
    code = compile(text, str(source), "exec", dont_inherit=True)
    pyc.write_bytes(timestamp_pyc(code, header_of or source))
    return pyc


def test_a_test_tools_bytecode_not_compiled_from_its_source_is_planted(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 11: pytest's reports.py untouched (its RECORD hash holds), and a pyc beside it
    # with the file's time and size in its header, compiled from a version whose reports all
    # pass. Python loads the pyc and never reads the source.
    text = "def outcome(report):\n    return report.outcome\n"
    source = tool_module(site, "_pytest.reports", text, monkeypatch)
    pyc = compiled(source, text)
    assert codes([], project) == []  # the pyc Python itself writes
    compiled(source, "def outcome(report):\n    return 'passed'\n")
    assert codes([], project) == [
        f"_pytest.reports, a module of the test tools, loaded from __pycache__/{pyc.name}, "
        "which is not compiled from it"
    ]
    # Remembered pairs are only those found alike: the same forgery is found again.
    assert len(codes([], project)) == 1
    # Its pair written into the remembered ones by hand (red team 18) is not trusted: sealed.
    import hashlib
    import json

    from pytest_agentgate.integrity import bytecode

    remembered = bytecode.Remembered(Path(sys.prefix))
    pair = hashlib.sha256(source.read_bytes() + b"\0" + pyc.read_bytes()).hexdigest()[:32]
    remembered.path.parent.mkdir(parents=True, exist_ok=True)
    for forged in ([pair], {"keys": [pair]}, {"keys": [pair], "seal": "0" * 64}):
        remembered.path.write_text(json.dumps(forged))
        assert len(codes([], project)) == 1
    # A pyc whose header no longer matches the source is compiled again by Python: not loaded.
    os.utime(source, (1, 1))
    assert codes([], project) == []


def test_a_forged_pyc_with_the_size_and_times_of_one_found_alike_is_planted(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pair found alike is remembered by the files' identity, size and times, so that it is
    # not read again. A forgery written over the pyc with its size and its times put back is
    # not that pair: the kernel's inode change time moved.
    text = "def outcome(report):\n    return report.outcome\n"
    source = tool_module(site, "_pytest.reports", text, monkeypatch)
    pyc = compiled(source, text)
    before = pyc.stat()
    assert codes([], project) == []  # found alike, remembered
    assert codes([], project) == []  # and not read again
    original = pyc.read_bytes()
    forged = compiled(source, "def outcome(report):\n    return 'passed'\n").read_bytes()
    assert len(forged) <= len(original)  # padded to its size: marshal ignores what follows
    pyc.write_bytes(forged + bytes(len(original) - len(forged)))
    os.utime(pyc, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (pyc.stat().st_size, pyc.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert codes([], project) == [
        f"_pytest.reports, a module of the test tools, loaded from __pycache__/{pyc.name}, "
        "which is not compiled from it"
    ]


def test_a_test_tools_module_run_from_bytecode_alone_is_planted(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The source removed and a `reports.pyc` put in its place: Python imports sourceless
    # bytecode, which no RECORD lists.
    import sys

    tool_module(site, "_pytest.reports", "x = 1\n", monkeypatch)
    sourceless = site / "_pytest" / "reports.pyc"
    sourceless.write_bytes(b"\0" * 32)
    module = types.ModuleType("_pytest.reports")
    module.__file__ = str(sourceless)
    monkeypatch.setitem(sys.modules, "_pytest.reports", module)
    assert codes([], project) == [
        "_pytest.reports, a module of the test tools, not as its package installed it"
    ]
    # A compiled extension module its package installed (coverage's tracer) is as installed.
    tracer = site / "coverage" / "tracer.so"
    tracer.parent.mkdir()
    blob = bytes(range(256)) * 8192  # larger than a source file is read
    tracer.write_bytes(blob)
    info = site / "zz-0.1.dist-info" / "RECORD"
    digest = base64.urlsafe_b64encode(hashlib.sha256(blob).digest()).rstrip(b"=").decode()
    info.write_text(info.read_text() + f"coverage/tracer.so,sha256={digest},{len(blob)}\n")
    extension = types.ModuleType("coverage.tracer")
    extension.__file__ = str(tracer)
    monkeypatch.delitem(sys.modules, "_pytest.reports")
    monkeypatch.setitem(sys.modules, "coverage.tracer", extension)
    assert codes([], project) == []


def test_a_local_plugins_hooks_in_another_module_of_its_package_are_read(
    site: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 10: the entry module is `from zzpkg.impl import *`; its hooks, and any patch
    # of the test tools, are in impl.py, which the run imported with it.
    import sys

    local = {"url": f"file://{tmp_path / 'src'}", "dir_info": {}}
    entry = "from zzpkg.impl import *\n"
    install(site, {"zzpkg/__init__.py": entry, "zzpkg/impl.py": REWRITER}, local)
    package = plugin(site / "zzpkg" / "__init__.py", entry)
    package.__name__ = "zzpkg"
    impl = plugin(site / "zzpkg" / "impl.py", REWRITER)
    assert codes([package], project) == []  # impl.py not imported: no hook of it runs
    monkeypatch.setitem(sys.modules, "zzpkg.impl", impl)
    assert codes([package], project) == [
        f"pytest plugin zzpkg, installed from {tmp_path / 'src'}: pytest_runtest_makereport in "
        "impl.py can alter test outcomes"
    ]
    # Another distribution's module the run imported is not the plugin's.
    (site / "zz-0.1.dist-info" / "RECORD").write_text(
        (site / "zz-0.1.dist-info" / "RECORD").read_text().replace("zzpkg/impl.py", "x.py")
    )
    assert codes([package], project) == []
    # Installed editable from another checkout: the modules of the folder it maps.
    checkout = tmp_path / "pytest-zz"
    editable = plugin(checkout / "zzpkg" / "__init__.py", entry)
    editable.__name__ = "zzpkg"
    mapped = plugin(checkout / "zzpkg" / "impl.py", REWRITER)
    monkeypatch.setitem(sys.modules, "zzpkg.impl", mapped)
    (site / "zz-0.1.dist-info").rename(site / "old.dist-info")
    install(site, {}, {"url": f"file://{checkout}", "dir_info": {"editable": True}})
    (site / "_zz.pth").write_text(f"{checkout}\n")
    assert codes([editable], project) == [
        f"pytest plugin zzpkg, installed editable from {checkout}: pytest_runtest_makereport "
        "in impl.py can alter test outcomes"
    ]


def test_agentgate_installed_from_a_local_folder_is_not_planted(
    site: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A second review: `pip install /path/to/checkout` (not editable). Its own hooks are read
    # as a conftest's would be (the pytest door's session sets the exit status): its files
    # are judged as a test tool's, against its RECORD.
    import sys

    local = {"url": f"file://{tmp_path / 'agentgate'}", "dir_info": {}}
    witness = REWRITER
    files = {"pytest_agentgate/pytest_plugin/entry.py": "", "pytest_agentgate/witness.py": witness}
    install(site, files, local)
    (site / "zz-0.1.dist-info").rename(site / "pytest_agentgate-0.1.0.dist-info")
    entry = plugin(site / "pytest_agentgate" / "pytest_plugin" / "entry.py", "")
    entry.__name__ = "pytest_agentgate.pytest_plugin.entry"
    monkeypatch.setitem(
        sys.modules, "zz_witness", plugin(site / "pytest_agentgate" / "witness.py", witness)
    )
    assert codes([entry], project) == []
    (site / "pytest_agentgate-0.1.0.dist-info").rename(site / "zz-0.1.dist-info")
    assert len(codes([entry], project)) == 1  # another distribution's module of that name


def test_a_plugin_installed_from_an_ignored_folder_of_the_project_is_read(
    site: Path, project: Path
) -> None:
    # Red team 13: `pip install ./.venv/plugsrc` (git-ignored), its source deleted since: the
    # change shows none of it, so it is not the project's own install.
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".venv/\n")
    source = project / ".venv" / "plugsrc"
    install(site, {"zz.py": REWRITER}, {"url": f"file://{source}", "dir_info": {}})
    zz = plugin(site / "zz.py", REWRITER)
    expected = [
        f"pytest plugin zz, installed from {source}: pytest_runtest_makereport in zz.py can "
        "alter test outcomes"
    ]
    assert codes([zz], project) == expected  # gone
    source.mkdir(parents=True)
    assert codes([zz], project) == expected  # ignored
    (project / ".gitignore").write_text("")
    assert codes([zz], project) == []  # a folder of the project's, in its change


def test_what_an_installed_pth_file_imports_is_judged_as_installed(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 13: setuptools' own distutils-precedence.pth, as its RECORD hashes it, imports
    # `_distutils_hack` at every start; code appended to that module runs before any test.
    import sys

    line = (
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
        "== 'local'; enabled and __import__('_distutils_hack').add_shim(); \n"
    )
    hack = "def add_shim():\n    pass\n"
    install(site, {"distutils-precedence.pth": line, "_distutils_hack/__init__.py": hack})
    (site / "distutils-precedence.pth").write_text(line)
    module = plugin(site / "_distutils_hack" / "__init__.py", hack)
    monkeypatch.setitem(sys.modules, "_distutils_hack", module)
    assert startup.planted() == []
    (site / "_distutils_hack" / "__init__.py").write_text(hack + "import os  # and more\n")
    startup._recorded.cache_clear()
    (found,) = startup.planted()
    assert found.path == str(site / "_distutils_hack" / "__init__.py") and found.line == 0
    assert found.code == (
        "_distutils_hack, imported by distutils-precedence.pth (line 1) at every start, not as "
        "its package installed it"
    )


def test_a_plugin_module_no_file_holds_is_planted(site: Path, project: Path) -> None:
    # Red team 13: a module made in memory, put in sys.modules and named in PYTEST_PLUGINS
    # by code that ran at start; a namespace package (folders only) is not such a module.
    import importlib.machinery

    made = types.ModuleType("zz_inmem")
    assert codes([made], project) == ["pytest plugin zz_inmem"]
    namespace = types.ModuleType("zz_namespace")
    namespace.__spec__ = importlib.machinery.ModuleSpec("zz_namespace", None, is_package=True)
    namespace.__spec__.submodule_search_locations = [str(site)]
    import sys

    assert codes([namespace, sys], project) == []


def test_an_empty_file_an_installer_wrote_is_its(site: Path) -> None:
    # Review 29: a package's empty `__init__.py`, installed by `pip install .` (its RECORD
    # hashes the empty text), read as a file no installed package put there.
    install(site, {"pkg/__init__.py": "", "pkg/core.py": "x = 1\n"})
    (site / "pkg").mkdir()
    (site / "pkg" / "__init__.py").write_text("")
    (site / "pkg" / "core.py").write_text("x = 1\n")
    owner = str(site / "zz-0.1.dist-info")
    assert startup.installed_by(str(site / "pkg" / "__init__.py")) == owner
    assert startup.installed_by(str(site / "pkg" / "core.py")) == owner
    (site / "pkg" / "__init__.py").write_text("import os\n")  # not as installed
    assert startup.installed_by(str(site / "pkg" / "__init__.py")) == ""


def test_a_plugin_that_is_no_python_source_is_judged(
    site: Path, project: Path, tmp_path: Path
) -> None:
    # Red team 50: a plugin whose module was a sourceless .pyc (pip-installed from a wheel,
    # or copied in with a dist-info and no RECORD) was passed over: not judged, not listed.
    blob = "\x7fELF compiled"
    install(site, {"zz.pyc": blob})
    zz = plugin(site / "zz.pyc", blob)
    planted = (
        "pytest plugin zz, bytecode without its source beside it: agentgate cannot read what "
        "it does, so it cannot be judged"
    )
    assert codes([zz], project) == [planted]  # whoever installed it
    (site / "zz-0.1.dist-info" / "RECORD").unlink()
    assert codes([zz], project) == [planted]
    # An extension module written by hand; installed from a local folder, its code is read,
    # and cannot be.
    ext = plugin(site / "zzext.abi3.so", blob)
    ext.__name__ = "zzext"
    assert codes([ext], project) == ["pytest plugin zzext"]
    (site / "zz-0.1.dist-info").rename(site / "pyc.dist-info")
    install(site, {"zzext.abi3.so": blob}, {"url": f"file://{tmp_path / 'src'}", "dir_info": {}})
    assert codes([ext], project) == [
        f"pytest plugin zzext, installed from {tmp_path / 'src'}: zzext.abi3.so is compiled "
        "code, no Python source: agentgate cannot read what it does, so it cannot be judged"
    ]
    # From a package index: the distribution is listed, for a task to judge (installs.py).
    (site / "zz-0.1.dist-info" / "direct_url.json").unlink()
    found: list[startup.Install] = []
    assert startup.planted_plugins([ext], str(project), found) == []
    assert [(i.dist, i.plugin) for i in found] == [("zz-0.1.dist-info", "zzext")]


def test_a_local_plugin_module_too_large_to_read_whole_cannot_be_judged(
    site: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 50: the hook, then a string past the bound the module was read to; the text
    # cut there did not parse, which was "nothing found".
    monkeypatch.setattr(startup, "MAX_SOURCE", 1000, raising=False)
    big = REWRITER + '\nNOTES = """\n' + "x" * 2000 + '\n"""\n'
    local = {"url": f"file://{tmp_path / 'src'}", "dir_info": {}}
    install(site, {"zz.py": big}, local)
    zz = plugin(site / "zz.py", big)
    assert codes([zz], project) == ["pytest plugin zz"]  # its RECORD cannot vouch for it
    monkeypatch.setattr(startup, "MAX_SOURCE", 1 << 20)
    (site / "zz.py").write_text(big.replace("pytest_runtest_makereport", "unparsed +"))
    (site / "zz-0.1.dist-info").rename(site / "big.dist-info")
    install(site, {"zz.py": (site / "zz.py").read_text()}, local)
    assert codes([zz], project) == [
        f"pytest plugin zz, installed from {tmp_path / 'src'}: zz.py is not Python source "
        "agentgate can read whole: agentgate cannot read what it does, so it cannot be judged"
    ]
