"""Code the test run's interpreter runs at every start that no installed package put there
(pytest_plugin/startup.py, the integrity rule ``startup-code-planted``).

The trick: a ``.pth`` file with an ``import`` line, or a ``sitecustomize.py``, written into the
project's own ``.venv`` (git-ignored: the change never shows it). Python runs it before any test
and it replaces the project's function under test, or pytest's report maker, from a file that
counts as installed code. Each project here runs its tests with a ``.venv`` of its own, made by
the real tool; the packages the tests need come from this suite's environment, through a
``.pth`` file of path lines (which runs no code).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from _helpers import (
    AGENTGATE,
    REPO,
    REPORT_PATCHER,
    REWRITER,
    git,
    only_gate,
    timestamp_pyc,
    verify_json,
)

CONFIG = """\
profile: strict
gates:
  test:
    command: ".venv/bin/python -m pytest -q -p no:cacheprovider --junitxml=.agentgate/junit.xml"
    report: .agentgate/junit.xml
"""
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n"
# The project's function replaced with one that returns what the test expects.
PTH = (
    "# speeds up imports\n"
    "import os, sys; sys.path.insert(0, os.getcwd()); import calc; calc.add = lambda a, b: a + b\n"
)
# pytest's report maker replaced: every failure is a pass.
SITECUSTOMIZE = REPORT_PATCHER


def site_packages(env: Path) -> Path:
    (folder,) = (env / "lib").glob("python3*/site-packages")
    return folder


def borrow_packages(env: Path, shelf: Path) -> None:
    """This suite's packages (pytest, agentgate) on the environment's path: path lines only."""
    shelf.mkdir(exist_ok=True)
    if not (shelf / "pytest_agentgate").exists():
        (shelf / "pytest_agentgate").symlink_to(REPO / "pytest_agentgate")
    paths = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    lines = [str(shelf), *paths]
    (site_packages(env) / "_borrowed.pth").write_text("\n".join(lines) + "\n")


def make_venv(root: Path, python: str = sys.executable, *args: str) -> Path:
    env = root / ".venv"
    subprocess.run([python, "-m", "venv", "--without-pip", *args, str(env)], check=True)
    borrow_packages(env, root.parent / "shelf")
    return env


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    for name in ("AGENTGATE_RUNNING", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "agentgate.yml").write_text(CONFIG)
    (root / "calc.py").write_text(BUGGY)
    (root / "tests" / "test_calc.py").write_text(TEST)
    (root / ".gitignore").write_text(".venv/\n.agentgate/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


verify = verify_json


gate = only_gate


def planted(verdict: dict[str, Any]) -> list[tuple[str, int | None]]:
    findings = gate(verdict, "integrity")["findings"]
    return [(f["path"], f["line"]) for f in findings if f["code"] == "startup-code-planted"]


def pytest_door(env: Path, project: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``pytest --agentgate=strict`` with the environment's interpreter, its verdict in ``out``."""
    return subprocess.run(
        [
            *(str(env / "bin" / "python"), "-m", "pytest", "--agentgate=strict"),
            *("-p", "no:cacheprovider", f"--agentgate-json={out}"),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
    )


def fix(root: Path) -> None:
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(root, "commit", "-qam", "fix")


def test_a_pth_file_that_replaces_the_code_under_test_fails_the_gate(project: Path) -> None:
    env = make_venv(project)
    code, verdict = verify(project)
    assert code == 1 and gate(verdict, "test")["status"] == "fail" and planted(verdict) == []
    pth = site_packages(env) / "zz_speedups.pth"
    pth.write_text(PTH)
    code, verdict = verify(project)
    # The tests pass, but the witness saw the project's calc imported as Python started...
    test = gate(verdict, "test")
    assert test["status"] == "fail" and test["actual"]["failed"] == 0, test
    assert any("calc (the project's" in p for p in test["problems"]), test
    assert code == 1 and gate(verdict, "integrity")["status"] == "fail"  # ...and the .pth file
    where = pth.relative_to(project).as_posix()
    assert planted(verdict) == [(where, 2)]
    (finding,) = gate(verdict, "integrity")["findings"]
    assert "calc.add = lambda a, b: a + b" in finding["message"]
    assert finding["severity"] == "error"
    assert "remove the file (or its `import` line) named" in json.dumps(verdict)


def test_a_sitecustomize_that_patches_pytest_fails_both_doors(project: Path) -> None:
    # Its code is in site-packages, where installed code lives, as no installer wrote it: the
    # check of the test tools' replaced functions (tampering.py) names it too.
    env = make_venv(project)
    (site_packages(env) / "sitecustomize.py").write_text(SITECUSTOMIZE)
    where = (site_packages(env) / "sitecustomize.py").relative_to(project).as_posix()
    code, verdict = verify(project)
    test = json.dumps(gate(verdict, "test"))
    assert "_pytest.reports.TestReport.from_item_and_call (" in test
    assert "sitecustomize.py:6, not as its package installed it" in test
    assert code == 1 and planted(verdict) == [(where, 1)]
    out = project / ".agentgate" / "door.json"
    door = pytest_door(env, project, out)
    assert door.returncode != 0, door.stdout
    assert "startup-code-planted" in door.stdout
    assert planted(json.loads(out.read_text())) == [(where, 1)]


def test_a_pytest_plugin_written_into_the_environment_fails_both_doors(project: Path) -> None:
    # No installer: a dist-info with a pytest11 entry point and the module beside it, in the
    # git-ignored .venv, so no change shows it.
    env = make_venv(project)
    site = site_packages(env)
    info = site / "zz_helper-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zz-helper\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pytest11]\nzz = zz_helper\n")
    (site / "zz_helper.py").write_text(REWRITER)
    where = (site / "zz_helper.py").relative_to(project).as_posix()
    code, verdict = verify(project)
    assert gate(verdict, "test")["status"] == "pass"  # the trick works on the tests...
    assert code == 1 and planted(verdict) == [(where, None)]  # ...not on the gate
    (finding,) = gate(verdict, "integrity")["findings"]
    assert finding["message"].startswith("pytest plugin zz_helper (zz_helper.py): it runs in")
    out = project / ".agentgate" / "door.json"
    door = pytest_door(env, project, out)
    assert door.returncode != 0, door.stdout
    assert planted(json.loads(out.read_text())) == [(where, None)]


# Appended to pytest's reports.py before it is compiled: every failed test report passes.
REPORTS_EDIT = """

_agentgate_orig = TestReport.from_item_and_call.__func__


def _from_item_and_call(cls, item, call):
    report = _agentgate_orig(cls, item, call)
    if report.outcome == "failed":
        report.outcome = "passed"
        report.longrepr = None
    return report


TestReport.from_item_and_call = classmethod(_from_item_and_call)
"""


def test_pytests_bytecode_forged_in_the_environment_fails_both_doors(project: Path) -> None:
    # Red team 11: pytest installed in the project's .venv (its files as the installer wrote
    # them, copied with its dist-info, so its RECORD holds), then a pyc of `_pytest/reports.py`
    # compiled from an edit, with the untouched source's time and size in its header: Python
    # loads the pyc and never reads the source, which still hashes as RECORD says.
    import importlib.util

    import _pytest

    env = make_venv(project)
    site = site_packages(env)
    installed = Path(_pytest.__file__).parent.parent
    no_bytecode = shutil.ignore_patterns("__pycache__")
    for name in ("_pytest", "pytest", f"pytest-{pytest.__version__}.dist-info"):
        shutil.copytree(installed / name, site / name, ignore=no_bytecode)
    # Compiled as pip does when it installs.
    python = str(env / "bin" / "python")
    subprocess.run([python, "-m", "compileall", "-q", str(site / "_pytest")], check=True)
    source = site / "_pytest" / "reports.py"
    pyc = Path(importlib.util.cache_from_source(str(source)))
    assert pyc.is_file()
    code, verdict = verify(project)
    assert code == 1 and gate(verdict, "test")["status"] == "fail", verdict
    assert planted(verdict) == [], verdict  # the honest pycs, found alike
    edited = compile(source.read_text() + REPORTS_EDIT, str(source), "exec")
    pyc.write_bytes(timestamp_pyc(edited, source))
    code, verdict = verify(project)
    assert gate(verdict, "test")["status"] == "pass"  # the trick works on the tests...
    where = source.relative_to(project).as_posix()
    assert code == 1 and planted(verdict) == [(where, None)]  # ...not on the gate
    (finding,) = gate(verdict, "integrity")["findings"]
    assert f"loaded from __pycache__/{pyc.name}, which is not compiled" in finding["message"]
    assert "pip install --force-reinstall" in json.dumps(verdict)
    out = project / ".agentgate" / "door.json"
    door = pytest_door(env, project, out)
    assert door.returncode != 0, door.stdout
    assert planted(json.loads(out.read_text())) == [(where, None)]


# Appended to an installed library pytest imports (iniconfig): as `_pytest.reports` is
# imported, its report maker is replaced with one whose failures pass.
LIBRARY_EDIT = """

import sys as _sys


def _agentgate_patch(reports):
    made = reports.TestReport.from_item_and_call.__func__

    def from_item_and_call(cls, item, call):
        report = made(cls, item, call)
        if report.outcome == "failed":
            report.outcome, report.longrepr = "passed", None
        return report

    reports.TestReport.from_item_and_call = classmethod(from_item_and_call)


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name != "_pytest.reports":
            return None
        _sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _agentgate_patch(module)

        spec.loader.exec_module = exec_module
        return spec


_sys.meta_path.insert(0, _Finder())
"""


def test_a_library_pytest_imports_edited_in_the_environment_fails_both_doors(
    project: Path,
) -> None:
    # Red team 12's family: no test tool's file is touched. iniconfig, which pytest imports,
    # is installed in the project's .venv (its files as the installer wrote them), then a
    # patch of pytest's report maker is appended to it: installed code, no installer's.
    import iniconfig

    env = make_venv(project)
    site = site_packages(env)
    installed = Path(iniconfig.__file__).parent.parent
    (info,) = installed.glob("iniconfig-*.dist-info")
    for name in ("iniconfig", info.name):
        shutil.copytree(installed / name, site / name, ignore=shutil.ignore_patterns("*.pyc"))
    code, verdict = verify(project)
    assert code == 1 and gate(verdict, "test")["status"] == "fail", verdict
    edited = site / "iniconfig" / "__init__.py"
    edited.write_text(edited.read_text() + LIBRARY_EDIT)
    code, verdict = verify(project)
    test = gate(verdict, "test")
    assert code == 1 and test["status"] == "fail", verdict  # it passed every test before
    shown = json.dumps(test)
    assert "_pytest.reports.TestReport.from_item_and_call (" in shown
    assert "not as its package installed it" in shown
    out = project / ".agentgate" / "door.json"
    door = pytest_door(env, project, out)
    assert door.returncode != 0, door.stdout
    assert "not as its package installed it" in out.read_text()


def wheel(folder: Path, name: str, module: str) -> Path:
    """A wheel of the pytest plugin ``name`` (its ``pytest11`` entry point, one module), as a
    build backend writes one."""
    import base64
    import hashlib
    import zipfile

    folder.mkdir(exist_ok=True)
    info = f"{name}-0.1.dist-info"
    files = {
        f"{name}.py": module,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        f"{info}/entry_points.txt": f"[pytest11]\n{name} = {name}\n",
    }
    lines = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        lines.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*lines, f"{info}/RECORD,,"]) + "\n"
    path = folder / f"{name}-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


def pip_install(env: Path, *args: str) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install"),
            *("--quiet", "--no-index", "--no-deps", *args),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def session_starts(project: Path, session: str) -> None:
    """The harness session ``session`` starts in ``project``: agentgate's session-start hook,
    as install-hook writes it, keeps the task's base and environment."""
    event = {"session_id": session, "cwd": str(project), "hook_event_name": "SessionStart"}
    done = subprocess.run(
        [str(AGENTGATE), "hook", "claude", "--session-start"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
    )
    assert done.returncode == 0 and done.stdout == "", done.stderr


def verify_task(project: Path, task: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [str(AGENTGATE), "verify", "--format", "json", "--task", task],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.returncode, json.loads(done.stdout)


def changed(verdict: dict[str, Any]) -> list[str]:
    findings = gate(verdict, "integrity")["findings"]
    return [f["message"] for f in findings if f["code"] == "environment-changed"]


def test_a_plugin_pip_installs_from_a_wheel_during_the_task_fails_the_gate(
    project: Path, tmp_path: Path
) -> None:
    # Red team 10: pip vouches for what a wheel holds, and a wheel file is installed as a
    # package index serves one. The task began without it: its hooks are judged.
    env = make_venv(project)
    session_starts(project, "s-wheel")
    code, verdict = verify_task(project, "s-wheel")
    assert code == 1 and gate(verdict, "test")["status"] == "fail" and changed(verdict) == []
    pip_install(env, str(wheel(tmp_path / "wheels", "zz_rewrite", REWRITER)))
    code, verdict = verify_task(project, "s-wheel")
    assert gate(verdict, "test")["status"] == "pass"  # the trick works on the tests...
    assert code == 1 and changed(verdict) == [  # ...not on the gate
        "pytest plugin zz_rewrite (zz_rewrite 0.1) was installed in the tests' environment "
        "after the task began, and pytest_runtest_makereport in zz_rewrite.py can alter test "
        "outcomes"
    ]
    (finding,) = [
        f for f in gate(verdict, "integrity")["findings"] if f["code"] == "environment-changed"
    ]
    assert (
        finding["path"]
        == (site_packages(env) / "zz_rewrite-0.1.dist-info").relative_to(project).as_posix()
    )
    # Its record deleted from the user's state directory: no fresh start, silently.
    (record,) = (Path(os.environ["AGENTGATE_STATE_HOME"]) / "task-environments").glob("*/*.json")
    record.unlink()
    code, verdict = verify_task(project, "s-wheel")
    assert code == 1 and len(changed(verdict)) == 1 and "is gone" in changed(verdict)[0]


def test_a_plugin_that_only_adds_fixtures_installed_during_the_task_passes(
    project: Path, tmp_path: Path
) -> None:
    # pytest-mock installed for a new test: it alters no outcome.
    env = make_venv(project)
    session_starts(project, "s-fixture")
    fixtures = "import pytest\n\n\n@pytest.fixture\ndef helper():\n    return 1\n"
    pip_install(env, str(wheel(tmp_path / "wheels", "zz_fixtures", fixtures)))
    fix(project)
    code, verdict = verify_task(project, "s-fixture")
    assert code == 0 and changed(verdict) == [], verdict
    # A plugin the task began with is the environment's, however it was installed.
    pip_install(env, str(wheel(tmp_path / "wheels", "zz_rewrite", REWRITER)))
    session_starts(project, "s-later")
    code, verdict = verify_task(project, "s-later")
    assert changed(verdict) == [], verdict


def test_a_fixed_copy_installed_and_the_broken_file_put_back_fails_the_gate(
    project: Path,
) -> None:
    # A src layout whose tests import the installed package (`--import-mode=importlib`): the
    # agent installs its fixed code with `pip install .` and checks the broken file out again.
    # git shows no change at all.
    pytest.importorskip("hatchling")
    (project / "calc.py").unlink()
    (project / "src" / "calc").mkdir(parents=True)
    (project / "src" / "calc" / "__init__.py").write_text(BUGGY)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "calc"\nversion = "0.1"\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["src/calc"]\n'
        '[tool.pytest.ini_options]\naddopts = "--import-mode=importlib"\n'
    )
    (project / ".gitignore").write_text(".venv/\n.agentgate/\nbuild/\n*.egg-info/\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "src layout")
    env = make_venv(project)
    pip_install(env, "--no-build-isolation", str(project))
    code, verdict = verify(project)
    assert code == 1 and gate(verdict, "test")["status"] == "fail", verdict  # honest: it fails
    assert "installed copy" not in json.dumps(verdict)
    (project / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    pip_install(env, "--no-build-isolation", "--force-reinstall", str(project))
    git(project, "checkout", "src/calc/__init__.py")
    shutil.rmtree(project / "build", ignore_errors=True)
    assert git(project, "status", "--porcelain").strip() == ""
    code, verdict = verify(project)
    test = gate(verdict, "test")
    assert code == 1 and test["status"] == "fail", verdict
    assert "the project's src/calc/__init__.py is tested from an installed copy" in json.dumps(test)


def test_a_pth_file_of_a_package_with_a_line_added_is_planted(
    project: Path, tmp_path: Path
) -> None:
    # A package's own .pth, as its RECORD hashes it, is the package's; a line added to it is not.
    hatchling = pytest.importorskip("hatchling")
    pytest.importorskip("editables")
    env = make_venv(project)
    package = tmp_path / "lib"
    (package / "src" / "libpkg").mkdir(parents=True)
    (package / "src" / "libpkg" / "__init__.py").write_text("")
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "libpkg"\nversion = "0.1"\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["src/libpkg"]\n'
        # editables' import hook: a .pth with an import line, which its RECORD lists
        "dev-mode-exact = true\n"
    )
    installed = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install"),
            *("--quiet", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(package)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr + hatchling.__file__
    (pth,) = site_packages(env).glob("*libpkg*.pth")
    assert pth.read_text().startswith("import ")  # editables' hook, in RECORD
    fix(project)
    code, verdict = verify(project)
    assert code == 0 and planted(verdict) == [], verdict
    pth.write_text(pth.read_text().rstrip("\n") + "\n" + PTH.splitlines()[1] + "\n")
    code, verdict = verify(project)
    assert code == 1 and [line for _, line in planted(verdict)] == [1, 2]


# -- honest environments pass ---------------------------------------------------------------


def test_this_suites_environment_passes(project: Path) -> None:
    # The interpreter running these tests: an editable install of agentgate (setuptools'
    # import-hook .pth), setuptools' distutils-precedence.pth, coverage.py's .pth, each listed
    # in its package's RECORD.
    site = Path(sysconfig.get_paths()["purelib"])
    with_code = [
        p.name
        for p in site.glob("*.pth")
        if any(line.startswith("import ") for line in p.read_text().splitlines())
    ]
    assert with_code, "no .pth file with code in this environment: nothing is shown"
    config = (project / "agentgate.yml").read_text().replace(".venv/bin/python", sys.executable)
    (project / "agentgate.yml").write_text(config)
    git(project, "commit", "-qam", "this interpreter")
    fix(project)
    code, verdict = verify(project)
    assert code == 0 and planted(verdict) == [], verdict


def test_an_environment_virtualenv_made_passes(project: Path) -> None:
    pytest.importorskip("virtualenv")
    env = project / ".venv"
    subprocess.run(
        [sys.executable, "-m", "virtualenv", "--no-seed", "--quiet", str(env)], check=True
    )
    borrow_packages(env, project.parent / "shelf")
    site = site_packages(env)
    if not (site / "_virtualenv.pth").exists():
        # virtualenv 21.x writes its distutils guard on Python 3.9 and older only; uv and
        # earlier virtualenvs write it everywhere: the same two files, as they write them.
        (site / "_virtualenv.pth").write_text("import _virtualenv")
        (site / "_virtualenv.py").write_text('"""Patches that are applied at runtime."""\n')
    fix(project)
    code, verdict = verify(project)
    assert code == 0 and planted(verdict) == [], verdict
    # The same name with other code is not virtualenv's.
    (site / "_virtualenv.pth").write_text("import _virtualenv\n" + PTH.splitlines()[1])
    code, verdict = verify(project)
    where = (site / "_virtualenv.pth").relative_to(project).as_posix()
    assert code == 1 and planted(verdict) == [(where, 1), (where, 2)]


def test_a_debian_system_sitecustomize_passes(project: Path) -> None:
    # Debian's and Ubuntu's Python imports /usr/lib/python3.X/sitecustomize.py, owned by the
    # operating system's package: a venv made from that Python runs it at every start.
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/bin")
    if system is None or not Path(f"/usr/lib/{version}/sitecustomize.py").exists():
        pytest.skip(f"no Debian {version} with a sitecustomize.py")
    make_venv(project, system)
    fix(project)
    code, verdict = verify(project)
    assert code == 0 and planted(verdict) == [], verdict


def test_coverages_measurement_of_subprocesses_passes(project: Path) -> None:
    # coverage.py's `patch = subprocess`, with this suite's coverage.py and pytest-cov.
    (project / "pyproject.toml").write_text('[tool.coverage.run]\npatch = ["subprocess"]\n')
    config = (project / "agentgate.yml").read_text()
    config = config.replace(".venv/bin/python", sys.executable).replace(" -q ", " -q --cov=calc ")
    (project / "agentgate.yml").write_text(config)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "coverage of subprocesses")
    fix(project)
    code, verdict = verify(project)
    assert code == 0 and planted(verdict) == [], verdict


def test_coverages_pth_lines_pass(project: Path) -> None:
    # The line coverage.py's documentation gave to write by hand, and the one coverage.py 7.10
    # writes while it runs with `patch = subprocess` (its `subcover_PID.pth`, deleted at exit).
    env = make_venv(project)
    site = site_packages(env)
    (site / "coverage_subprocess.pth").write_text("import coverage; coverage.process_startup()\n")
    code = "try:\n    import coverage\nexcept:\n    pass\nelse:\n    coverage.process_startup()\n"
    (site / "subcover_4242.pth").write_text(f"import sys; exec({code!r})\n")
    fix(project)
    code_, verdict = verify(project)
    assert code_ == 0 and planted(verdict) == [], verdict


def test_the_machines_own_startup_code_is_a_notice(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outside the tests' virtual environment and the project (here the user's site, which a
    # venv with the system's packages reads), startup code is the machine's set-up: a
    # certificate injected at every start. Shown, never blocking honest work.
    env = make_venv(project, sys.executable, "--system-site-packages")
    monkeypatch.setenv("PYTHONUSERBASE", str(tmp_path / "userbase"))
    user_site = subprocess.run(
        [env / "bin" / "python", "-c", "import site; print(site.getusersitepackages())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(user_site).mkdir(parents=True)
    line = "import os; os.environ.setdefault('MACHINE_CA', '/etc/ssl/ca.pem')\n"
    Path(user_site, "machine_ca.pth").write_text(line)
    fix(project)
    code, verdict = verify(project)
    findings = gate(verdict, "integrity")["findings"]
    assert code == 0 and planted(verdict) == [], verdict
    machines = {f["path"]: f for f in findings if f["code"] == "startup-code-of-the-machine"}
    notice = machines[str(Path(user_site, "machine_ca.pth"))]
    assert notice["line"] == 1 and notice["severity"] == "warning"  # a notice: never blocking
    assert "the machine's own set-up, shown, not judged" in notice["message"]

    # The same line in the tests' own virtual environment is judged.
    (site_packages(env) / "machine_ca.pth").write_text(line)
    code, verdict = verify(project)
    where = (site_packages(env) / "machine_ca.pth").relative_to(project).as_posix()
    assert code == 1 and planted(verdict) == [(where, 1)]
