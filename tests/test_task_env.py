"""The test environment a task began with (state/task_env.py) and what was installed in it
since (integrity/installs.py): a test tool installed again, a pytest plugin whose hooks can
alter outcomes installed by any means, and the record of the start deleted or edited. The site
folders are temporary folders with ``*.dist-info`` folders as installers write them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _helpers import REWRITER

from pytest_agentgate.integrity import installs
from pytest_agentgate.state import ledger, task_env


def dist(site: Path, name: str, files: dict[str, str], record: str | None = None) -> str:
    """``name``'s files written in ``site``, with a RECORD listing them (``record`` in its
    place when given): the dist-info's name."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    for path, text in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text)
    listed = "".join(f"{path},sha256=x,1\n" for path in files)
    (info / "RECORD").write_text(record if record is not None else listed)
    return info.name


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".venv" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return root


@pytest.fixture
def site(project: Path) -> str:
    return str((project / ".venv" / "lib" / "python3.11" / "site-packages").resolve())


def test_the_projects_virtual_environments_are_found(project: Path, site: str) -> None:
    (project / "venv-old" / "Lib" / "site-packages").mkdir(parents=True)
    (project / "src" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)  # no cfg
    venv = str((project / ".venv").resolve())
    assert task_env.project_venvs(project) == [venv]
    (project / "venv-old" / "pyvenv.cfg").write_text("")
    old = str((project / "venv-old").resolve())
    assert task_env.project_venvs(project) == [venv, old]
    assert task_env.site_folders(old) == [
        str((project / "venv-old" / "Lib" / "site-packages").resolve())
    ]
    # The folders the .pth files' path lines add (an editable install's src/), not code lines.
    (project / "src" / "pkg").mkdir()
    plugins = project / ".venv" / "plugins"
    plugins.mkdir()
    (Path(site) / "_pkg.pth").write_text(f"{project / 'src'}\n# a comment\nimport os\n")
    (Path(site) / "zz.pth").write_text(f"{plugins}\n{project / 'nowhere'}\n")
    assert task_env.site_folders(venv) == [
        site,
        str((project / "src").resolve()),
        str(plugins.resolve()),
    ]
    assert task_env.venv_of(site) == venv and task_env.venv_of(str(project)) is None


def test_a_plugin_installed_after_the_task_began_is_judged(project: Path, site: str) -> None:
    folder = Path(site)
    pytest_dist = dist(folder, "pytest", {"_pytest/reports.py": "x = 1\n"})
    task_env.pin(project, "t1", [site])  # the session starts
    rewriter = dist(folder, "zz_rewrite", {"zz_rewrite.py": REWRITER})
    fixtures = dist(folder, "zz_fix", {"zz_fix.py": "import pytest\n"})
    record = task_env.record_digest(str(folder / rewriter))
    now = [
        (site, pytest_dist, task_env.record_digest(str(folder / pytest_dist)), "", "_pytest"),
        (site, rewriter, record, "zz_rewrite", ""),
        (site, fixtures, task_env.record_digest(str(folder / fixtures)), "zz_fix", ""),
    ]
    assert installs.changes(project, "t1", now) == [
        (
            str(folder / rewriter),
            "pytest plugin zz_rewrite (zz_rewrite 0.1) was installed in the tests' environment "
            "after the task began, and pytest_runtest_makereport in zz_rewrite.py can alter "
            "test outcomes",
        )
    ]
    # pytest installed again (its RECORD is another): the tests ran on other test tools.
    (folder / pytest_dist / "RECORD").write_text("_pytest/reports.py,sha256=y,1\n")
    now[0] = (site, pytest_dist, task_env.record_digest(str(folder / pytest_dist)), "", "_pytest")
    assert installs.changes(project, "t1", now[:1]) == [
        (
            str(folder / pytest_dist),
            "pytest 0.1, a test tool the tests ran on (_pytest), was installed again in the "
            "tests' environment after the task began: the task is judged on the test tools it "
            "began with",
        )
    ]
    # Another task begins with all of it: nothing is new to it.
    assert installs.changes(project, "t2", now) == []
    assert installs.changes(project, "t2", now) == []


def test_a_folder_first_seen_is_kept_as_it_is(project: Path, site: str, tmp_path: Path) -> None:
    # The tests run from a virtual environment outside the project: the task's first verdict
    # keeps it (what was there before is the task's start, as for its base).
    other = tmp_path / "elsewhere"
    name = dist(other, "zz_rewrite", {"zz_rewrite.py": REWRITER})
    entry = (str(other), name, task_env.record_digest(str(other / name)), "zz_rewrite", "")
    task_env.pin(project, "t1", [site])
    assert installs.changes(project, "t1", [entry]) == []
    assert installs.changes(project, "t1", [entry]) == []


def test_the_record_deleted_or_edited_is_no_fresh_start(project: Path, site: str) -> None:
    folder = Path(site)
    task_env.pin(project, "t1", [site])
    rewriter = dist(folder, "zz_rewrite", {"zz_rewrite.py": REWRITER})
    entry = (site, rewriter, task_env.record_digest(str(folder / rewriter)), "zz_rewrite", "")
    path = task_env.record_path(project, "t1")
    doc = json.loads(path.read_text())
    # Edited to hold the plugin: the project's anchor keeps the digest of what was kept.
    doc["folders"][site][rewriter] = entry[2]
    path.write_text(json.dumps(doc))
    ((where, message),) = installs.changes(project, "t1", [entry])
    assert where == str(path) and "was changed after agentgate wrote it" in message
    # And with the project's record of its digest made to agree (red team 16): the seal.
    anchors = project / ".agentgate" / task_env.ANCHORS
    kept = json.loads(anchors.read_text())
    record = task_env._Record({site: doc["folders"][site]}, doc.get("venvs", {}), doc["judged"])
    kept[path.stem] = task_env._digest(record)
    anchors.write_text(json.dumps(kept))
    ((where, message),) = installs.changes(project, "t1", [entry])
    assert where == str(path) and "was changed after agentgate wrote it" in message
    # Deleted: gone, while the anchor holds.
    path.unlink()
    ((_, message),) = installs.changes(project, "t1", [entry])
    assert "is gone, while the project's .agentgate/task-environments.json keeps" in message
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    ((_, message),) = installs.changes(project, "t1", [entry])
    assert "cannot be read" in message
    # A person's reset forgets both: the next verdict keeps the environment as it is.
    ledger.reset(project, "t1")
    assert not path.exists()
    assert installs.changes(project, "t1", [entry]) == []


def test_what_changed_since_keys_the_verdict_cache(project: Path, site: str) -> None:
    assert task_env.changed_since(project, "t1") == ""  # no record
    task_env.pin(project, "t1", [site])
    assert task_env.changed_since(project, "t1") == ""
    dist(Path(site), "zz_rewrite", {"zz_rewrite.py": REWRITER})
    first = task_env.changed_since(project, "t1")
    assert first != ""
    dist(Path(site), "zz_other", {"zz_other.py": ""})
    assert task_env.changed_since(project, "t1") not in ("", first)


def entry(site: str, name: str, plugin: str = "", tool: str = "") -> tuple[str, ...]:
    return (site, name, task_env.record_digest(str(Path(site) / name)), plugin, tool)


def test_setting_the_environment_up_during_the_task_passes(project: Path, site: str) -> None:
    # The session starts in a project whose .venv lacks the test dependencies; the agent
    # installs what the project declares (`pip install -e '.[test]'`): pytest, pytest-cov
    # (whose hooks set the exit status, as a conftest's may not) and the project itself.
    folder = Path(site)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "calc"\n[project.optional-dependencies]\n'
        'test = ["pytest>=8", "pytest-cov", "Pytest_Rewrite==1"]\n'
    )
    task_env.pin(project, "t1", [site])
    tool = dist(folder, "pytest", {"_pytest/reports.py": "x = 1\n"})
    cov = dist(folder, "pytest_cov", {"pytest_cov/plugin.py": REWRITER})
    rewrite = dist(folder, "pytest.rewrite", {"pytest_rewrite.py": REWRITER})
    own = dist(folder, "calc", {"calc_plugin.py": REWRITER})
    (project / "calc_plugin.py").write_text(REWRITER)  # the project's own module, installed
    (folder / own / "direct_url.json").write_text(
        json.dumps({"url": f"file://{project}", "dir_info": {"editable": True}})
    )
    now = [
        entry(site, tool, tool="_pytest"),
        entry(site, cov, plugin="pytest_cov"),
        entry(site, rewrite, plugin="pytest_rewrite"),
        entry(site, own, plugin="calc_plugin"),
    ]
    assert installs.changes(project, "t1", now) == []
    # Not declared: judged by its code.
    (project / "pyproject.toml").write_text('[project]\nname = "calc"\n')
    found = installs.changes(project, "t1", now)
    assert [where for where, _ in found] == [str(folder / cov), str(folder / rewrite)]
    assert found[0][1].startswith(
        "pytest plugin pytest_cov (pytest_cov 0.1) was installed in the tests' environment"
    )


def test_a_plugin_the_task_began_with_installed_again_is_judged(project: Path, site: str) -> None:
    # Synced to the version the project's requirements pin, from an index: the project's own
    # doing (a second review: `pip install -r requirements-dev.txt`). From a folder of the
    # agent's, or not declared: its code is judged.
    folder = Path(site)
    (project / "requirements-dev.txt").write_text("pytest-cov==9.9\n")
    old = dist(folder, "pytest_cov", {"pytest_cov/plugin.py": "import pytest\n"})
    task_env.pin(project, "t1", [site])
    (folder / old).rename(folder / "pytest_cov-9.9.dist-info")
    (folder / "pytest_cov" / "plugin.py").write_text(REWRITER)
    (folder / "pytest_cov-9.9.dist-info" / "RECORD").write_text("pytest_cov/plugin.py,sha256=z,1\n")
    now = [entry(site, "pytest_cov-9.9.dist-info", plugin="pytest_cov")]
    assert installs.changes(project, "t1", now) == []
    local = {"url": f"file://{project.parent}/pytest-cov", "dir_info": {}}
    (folder / "pytest_cov-9.9.dist-info" / "direct_url.json").write_text(json.dumps(local))
    ((_, message),) = installs.changes(project, "t1", now)
    assert message.startswith("pytest plugin pytest_cov (pytest_cov 9.9) was installed again")
    (folder / "pytest_cov-9.9.dist-info" / "direct_url.json").unlink()
    (project / "requirements-dev.txt").write_text("pytest\n")
    ((_, message),) = installs.changes(project, "t1", now)
    assert "installed again" in message


def test_a_folder_first_seen_after_the_first_verdict_began_empty(
    project: Path, site: str, tmp_path: Path
) -> None:
    # A `.pth` path line added since puts a folder of the agent's on the path, with a plugin
    # and a pytest of its own: what it holds was installed after the task began.
    pytest_dist = dist(Path(site), "pytest", {"_pytest/reports.py": "x = 1\n"})
    task_env.pin(project, "t1", [site])  # the session starts
    assert installs.changes(project, "t1", [entry(site, pytest_dist, tool="_pytest")]) == []
    late = tmp_path / "late"
    plugin = dist(late, "zz_rewrite", {"zz_rewrite.py": REWRITER})
    tool = dist(late, "pytest", {"_pytest/reports.py": "x = 2\n"})
    now = [entry(str(late), plugin, plugin="zz_rewrite"), entry(str(late), tool, tool="_pytest")]
    for _ in range(2):  # and at every verdict after
        found = installs.changes(project, "t1", now)
        assert [message.split(" (")[0] for _, message in found] == [
            "pytest plugin zz_rewrite",
            "pytest 0.1, a test tool the tests ran on",
        ]
    assert "installed again" in found[1][1]


def test_a_folder_in_the_environment_the_task_began_with_began_empty(
    project: Path, site: str
) -> None:
    # Red team 12: a folder inside the .venv the session began with, put on the path by a .pth
    # line added before the first stop, holding a plugin with a RECORD written by hand.
    venv = str((project / ".venv").resolve())
    task_env.pin(project, "t1", task_env.site_folders(venv), venvs=[venv])  # session start
    plugins = project / ".venv" / "plugins"
    plugin = dist(plugins, "zz_rewrite", {"zz_rewrite.py": REWRITER})
    ((_, message),) = installs.changes(
        project, "t1", [entry(str(plugins.resolve()), plugin, plugin="zz_rewrite")]
    )
    assert message.startswith("pytest plugin zz_rewrite (zz_rewrite 0.1) was installed")


def test_the_environments_settings_changed_since_the_task_began_are_found(
    project: Path, site: str
) -> None:
    # Red team 12: `include-system-site-packages = true` in the .venv's pyvenv.cfg, and code
    # in the user's site folder, which agentgate leaves to the machine, patches pytest.
    venv = str((project / ".venv").resolve())
    cfg = project / ".venv" / "pyvenv.cfg"
    cfg.write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    task_env.pin(project, "t1", task_env.site_folders(venv), venvs=[venv])
    pytest_dist = dist(Path(site), "pytest", {"_pytest/reports.py": "x = 1\n"})
    now = [entry(site, pytest_dist, tool="_pytest")]
    assert installs.changes(project, "t1", now) == []
    assert task_env.changed_since(project, "t1") != ""  # pytest installed since: keyed
    # Made again with another Python (a second review): the same environment to the gate.
    cfg.write_text("home = /opt/python3.12/bin\ninclude-system-site-packages = false\n")
    assert installs.changes(project, "t1", now) == []
    cfg.write_text("home = /usr/bin\ninclude-system-site-packages = true\n")
    ((where, message),) = installs.changes(project, "t1", now)
    assert where == f"{venv}/pyvenv.cfg"
    assert message.startswith("the virtual environment's pyvenv.cfg changed what it includes")
    cfg.unlink()  # its Python is then the machine's, with the user's site folder
    ((where, _),) = installs.changes(project, "t1", now)
    assert where == f"{venv}/pyvenv.cfg"
    # The whole environment gone (review 28: `rm -rf .venv; python -m venv venv`): its tests
    # run from the new one, a folder first seen, which began empty.
    shutil.rmtree(project / ".venv")
    assert installs.changes(project, "t1", []) == []


def test_a_plugin_a_declared_dependency_requires_is_declared(project: Path, site: str) -> None:
    # A second review: httpx declared and installed during the task brings anyio, whose
    # pytest plugin's hooks would be judged as a conftest's.
    folder = Path(site)
    (project / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["httpx"]\n')
    task_env.pin(project, "t1", [site])
    httpx = dist(folder, "httpx", {"httpx/__init__.py": ""})
    (folder / httpx / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: httpx\nRequires-Dist: anyio\n"
        "Requires-Dist: brotli; extra == 'brotli'\n\nanyio: a description, not a header\n"
    )
    anyio = dist(folder, "anyio", {"anyio/pytest_plugin.py": REWRITER})
    now = [entry(site, anyio, plugin="anyio.pytest_plugin")]
    assert installs.changes(project, "t1", now) == []
    (folder / httpx / "METADATA").write_text("Metadata-Version: 2.1\nName: httpx\n")
    ((_, message),) = installs.changes(project, "t1", now)
    assert message.startswith("pytest plugin anyio.pytest_plugin (anyio 0.1) was installed")


def test_the_same_wheel_installed_again_is_the_same(site: str) -> None:
    # pip writes REQUESTED when the package was named, uv a RECORD of its own: the files the
    # RECORD hashes are what counts, not the installer's bookkeeping or bytecode.
    folder = Path(site)
    name = dist(
        folder,
        "pytest",
        {},
        record="_pytest/reports.py,sha256=abc,10\npytest-0.1.dist-info/METADATA,sha256=m,3\n"
        "pytest-0.1.dist-info/INSTALLER,sha256=pip,4\npytest-0.1.dist-info/RECORD,,\n"
        "_pytest/__pycache__/reports.cpython-311.pyc,,\n",
    )
    before = task_env.record_digest(str(folder / name))
    (folder / name / "RECORD").write_text(
        "pytest-0.1.dist-info/METADATA,sha256=m,3\n_pytest/reports.py,sha256=abc,10\n"
        "pytest-0.1.dist-info/INSTALLER,sha256=uv,3\npytest-0.1.dist-info/REQUESTED,sha256=e,0\n"
        "pytest-0.1.dist-info/RECORD,,\n"
    )
    assert task_env.record_digest(str(folder / name)) == before
    (folder / name / "RECORD").write_text("_pytest/reports.py,sha256=abd,10\n")
    assert task_env.record_digest(str(folder / name)) != before


def test_a_plugin_from_an_ignored_folder_of_the_project_is_not_the_projects(
    project: Path, site: str
) -> None:
    # Red team 13: `pip install ./.venv/plugsrc`, a git-ignored folder (its source deleted).
    import subprocess

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".venv/\n")
    task_env.pin(project, "t1", [site])
    folder = Path(site)
    plugin = dist(folder, "zz_rewrite", {"zz_rewrite.py": REWRITER})
    source = project / ".venv" / "plugsrc"
    source.mkdir()
    (folder / plugin / "direct_url.json").write_text(
        json.dumps({"url": f"file://{source}", "dir_info": {}})
    )
    now = [entry(site, plugin, plugin="zz_rewrite")]
    assert len(installs.changes(project, "t1", now)) == 1
    (project / ".gitignore").write_text("")
    # A folder in the project's change, whose files the build put there as they are: the
    # change's own code, judged in the tree.
    (source / "zz_rewrite.py").write_text(REWRITER)
    assert installs.changes(project, "t1", now) == []
    # Red team 48: a build backend of the folder's own made the plugin from a file that is no
    # module (`helper.txt`): what was installed is no file of the project.
    (source / "zz_rewrite.py").unlink()
    (source / "helper.txt").write_text(REWRITER)
    ((_, message),) = installs.changes(project, "t1", now)
    assert message.startswith(
        "pytest plugin zz_rewrite (zz_rewrite 0.1), installed from the project's folder, holds "
        "code that is no file of the project, and pytest_runtest_makereport in zz_rewrite.py"
    )


def test_requirements_files_of_any_name_and_their_includes_declare(
    project: Path, site: str
) -> None:
    # A second review: `dev-requirements.txt`, whose only line is `-r tests/requirements.txt`.
    (project / "dev-requirements.txt").write_text("-r tests/requirements.txt\n")
    (project / "tests").mkdir()
    (project / "tests" / "requirements.txt").write_text("pytest-timeout==2.3\n")
    task_env.pin(project, "t1", [site])
    timeout = dist(Path(site), "pytest_timeout", {"pytest_timeout.py": REWRITER})
    now = [entry(site, timeout, plugin="pytest_timeout")]
    assert installs.changes(project, "t1", now) == []
    (project / "tests" / "requirements.txt").write_text("pytest-mock\n")
    assert len(installs.changes(project, "t1", now)) == 1


def test_agentgate_installed_again_is_not_a_finding(project: Path, site: str) -> None:
    # A second review: `.venv` made again with another Python, agentgate installed in it.
    old = dist(Path(site), "pytest_agentgate", {"pytest_agentgate/__init__.py": ""})
    task_env.pin(project, "t1", [site])
    (Path(site) / old / "RECORD").write_text("pytest_agentgate/__init__.py,sha256=new,1\n")
    now = [entry(site, old, tool="pytest_agentgate")]
    assert installs.changes(project, "t1", now) == []
    local = {"url": "file:///home/me/agentgate", "dir_info": {}}  # from a checkout
    (Path(site) / old / "direct_url.json").write_text(json.dumps(local))
    assert installs.changes(project, "t1", now) == []


def test_requirements_in_folders_and_vcs_installs_declare(project: Path, site: str) -> None:
    # A third review: a plugin declared in `requirements/testing/all.txt` (matplotlib's
    # layout) or `tests/requirements.txt`, installed from a git URL pip built.
    (project / "requirements" / "testing").mkdir(parents=True)
    (project / "requirements" / "testing" / "all.txt").write_text("pytest-xdist\n")
    (project / "tests").mkdir()
    (project / "tests" / "requirements.txt").write_text("pytest-cov\n")
    task_env.pin(project, "t1", [site])
    folder = Path(site)
    xdist = dist(folder, "pytest_xdist", {"xdist/plugin.py": REWRITER})
    cov = dist(folder, "pytest_cov", {"pytest_cov/plugin.py": REWRITER})
    vcs = {"url": "https://github.com/pytest-dev/pytest-xdist", "vcs_info": {"vcs": "git"}}
    (folder / xdist / "direct_url.json").write_text(json.dumps(vcs))
    now = [entry(site, xdist, plugin="xdist.plugin"), entry(site, cov, plugin="pytest_cov")]
    assert installs.changes(project, "t1", now) == []


# pytest-expect 1.1.0's shape: a plugin object registered in pytest_configure, whose method
# marks each test its data file names xfail.
EXPECTING = """\
import pytest


def pytest_configure(config):
    config.pluginmanager.register(ExpectationPlugin(config))


class ExpectationPlugin(object):
    def __init__(self, config):
        self.expect_xfail = set(open(".pytest.expect").read().split())

    def pytest_collection_modifyitems(self, session, config, items):
        for item in items:
            if item.nodeid in self.expect_xfail:
                item.add_marker(pytest.mark.xfail)
"""
# Red team 45's pytest-lenient: it runs the test its own way, and swallows its failure.
RUNNING = """\
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    try:
        pyfuncitem.obj(**pyfuncitem.funcargs)
    except AssertionError:
        pass
    return True
"""


def test_a_plugin_object_that_marks_tests_xfail_is_judged(project: Path, site: str) -> None:
    # Red team 44: pytest-expect, installed during the task, marked the failing test xfail
    # from a method of the plugin object it registers: nothing was found.
    task_env.pin(project, "t1", [site])
    expect = dist(Path(site), "pytest_expect", {"pytest_expect/expect.py": EXPECTING})
    ((where, message),) = installs.changes(
        project, "t1", [entry(site, expect, plugin="pytest_expect")]
    )
    assert where == str(Path(site) / expect)
    assert message.endswith(
        "and expect.py adds pytest.mark.xfail to collected tests: they count as skipped or "
        "xfailed, not failed"
    )


def test_a_plugin_only_the_change_declares_is_judged_as_undeclared(
    project: Path, site: str
) -> None:
    # Red team 44: a requirements file the change adds declared pytest-expect; red team 45: one
    # declaring a plugin whose pytest_pyfunc_call swallowed the failure. Declared at the base
    # it is the project's; declared only by the change, its code is read as any other's.
    (project / "requirements-dev.txt").write_text("pytest\n")
    base = {project / "requirements-dev.txt": "pytest\n", project / "pyproject.toml": None}
    task_env.pin(project, "t1", [site])
    expect = dist(Path(site), "pytest_expect", {"pytest_expect/expect.py": EXPECTING})
    lenient = dist(Path(site), "pytest_lenient", {"pytest_lenient.py": RUNNING})
    fixtures = dist(Path(site), "pytest_fixtures", {"pytest_fixtures.py": "import pytest\n"})
    now = [
        entry(site, expect, plugin="pytest_expect"),
        entry(site, lenient, plugin="pytest_lenient"),
        entry(site, fixtures, plugin="pytest_fixtures"),
    ]
    (project / "requirements-dev.txt").write_text(
        "pytest\npytest-expect\npytest-lenient\npytest-fixtures\n"
    )
    found = installs.changes(project, "t1", now, lambda paths: {p: base.get(p) for p in paths})
    assert [where for where, _ in found] == [str(Path(site) / expect), str(Path(site) / lenient)]
    assert all(", which only this change declares, was installed" in m for _, m in found)
    assert found[0][1].endswith(
        ": a person approves a new test plugin (its declaration merged on the base branch, "
        "then a new task, or `agentgate reset --task t1`)"
    )
    # Declared only in the project's own test extra, and the project installed again (review
    # 28): its requirements are the working tree's, not the base's.
    own = dist(Path(site), "calc", {"calc.py": ""})
    (Path(site) / own / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: calc\nRequires-Dist: pytest-expect; extra == 'test'\n"
    )
    (Path(site) / own / "direct_url.json").write_text(
        json.dumps({"url": f"file://{project}", "dir_info": {"editable": True}})
    )
    (project / "pyproject.toml").write_text('[project]\nname = "calc"\n')
    base[project / "pyproject.toml"] = '[project]\nname = "calc"\n'
    now.append(entry(site, own, plugin="calc"))
    found = installs.changes(project, "t1", now, lambda paths: {p: base.get(p) for p in paths})
    assert str(Path(site) / expect) in [where for where, _ in found]
    # Declared at the base: the project's own.
    base[project / "requirements-dev.txt"] = "pytest\npytest-expect\npytest-lenient\n"
    assert installs.changes(project, "t1", now, lambda paths: {p: base.get(p) for p in paths}) == []


APPROVE = (
    ": a person approves a new test plugin (its declaration merged on the base branch, then a "
    "new task, or `agentgate reset --task t1`)"
)


def test_a_plugin_that_is_no_python_source_cannot_be_judged(project: Path, site: str) -> None:
    # Red team 50: a plugin wheel whose entry module was a sourceless .pyc: only the .py files
    # of its RECORD were read, and nothing was found. An extension module is compiled code
    # too; so is a .pyc the entry module imports.
    folder = Path(site)
    task_env.pin(project, "t1", [site])
    ext = dist(folder, "pytest_ext", {"pytest_ext/__init__.py": "", "pytest_ext/_x.abi3.so": ""})
    pyc = dist(
        folder, "pytest_pyc", {"pytest_pyc.py": "from pyc_impl import *\n", "pyc_impl.pyc": ""}
    )
    now = [entry(site, ext, plugin="pytest_ext"), entry(site, pyc, plugin="pytest_pyc")]
    assert installs.changes(project, "t1", now) == [
        (
            str(folder / ext),
            "pytest plugin pytest_ext (pytest_ext 0.1) was installed in the tests' environment "
            "after the task began, and pytest_ext/_x.abi3.so is an extension module (compiled "
            f"code), whose code cannot be judged{APPROVE}",
        ),
        (
            str(folder / pyc),
            "pytest plugin pytest_pyc (pytest_pyc 0.1) was installed in the tests' environment "
            "after the task began, and pyc_impl.pyc is bytecode without its source beside it "
            f"(a sourceless .pyc), whose code cannot be judged{APPROVE}",
        ),
    ]
    # Bytecode pip compiled beside a source is the source's; a compiled plugin the project
    # declares at the base is the project's, as any declared plugin.
    (folder / pyc / "RECORD").write_text(
        "pytest_pyc.py,sha256=x,1\n__pycache__/pytest_pyc.cpython-311.pyc,sha256=y,1\n"
    )
    assert installs.changes(project, "t1", now[1:]) == []
    (project / "requirements-dev.txt").write_text("pytest-ext\n")
    assert installs.changes(project, "t1", now) == []


def test_a_plugin_with_more_modules_than_read_cannot_be_judged(project: Path, site: str) -> None:
    # Red team 50: 201 empty modules sorted first, the hook in the 202nd: reading stopped at
    # the 200th, silently. The entry modules and what they import are read first; past the
    # bound, the plugin is too large to judge.
    folder = Path(site)
    task_env.pin(project, "t1", [site])
    files = {f"aaa_{i:03d}.py": "" for i in range(201)}
    hooked = dist(folder, "pytest_yy", {**files, "zz_yy.py": "from zz_impl import *\n"})
    (folder / "zz_impl.py").write_text(REWRITER)
    record = folder / hooked / "RECORD"
    record.write_text(record.read_text() + "zz_impl.py,sha256=x,1\n")
    (folder / hooked / "entry_points.txt").write_text("[pytest11]\nyy = zz_yy\n")
    ((_, message),) = installs.changes(project, "t1", [entry(site, hooked, plugin="zz_yy")])
    assert message.endswith("and pytest_runtest_makereport in zz_impl.py can alter test outcomes")
    (folder / "zz_impl.py").write_text("import pytest\n")
    ((_, message),) = installs.changes(project, "t1", [entry(site, hooked, plugin="zz_yy")])
    assert message == (
        "pytest plugin zz_yy (pytest_yy 0.1) was installed in the tests' environment after the "
        "task began, and it holds more than 200 modules, more than agentgate reads to judge a "
        f"plugin: it is too large to judge{APPROVE}"
    )


def test_a_plugin_module_cut_off_or_unparsable_cannot_be_judged(
    project: Path, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Red team 50: the entry module `from ww_impl import *`; ww_impl.py the hook, then a string
    # past the 1 MiB read: the cut text did not parse, which was "nothing found".
    folder = Path(site)
    task_env.pin(project, "t1", [site])
    big = REWRITER + '\nNOTES = """\n' + ("x" * 99 + "\n") * 11000 + '"""\n'
    ww = dist(folder, "pytest_ww", {"ww_entry.py": "from ww_impl import *\n", "ww_impl.py": big})
    ((_, message),) = installs.changes(project, "t1", [entry(site, ww, plugin="ww_entry")])
    assert message.endswith("and pytest_runtest_makereport in ww_impl.py can alter test outcomes")
    monkeypatch.setattr(installs, "MAX_MODULE", 1 << 20)
    ((_, message),) = installs.changes(project, "t1", [entry(site, ww, plugin="ww_entry")])
    assert message.endswith(
        "and ww_impl.py is larger than agentgate reads to judge a plugin: it cannot be judged"
        + APPROVE
    )
    (folder / "ww_impl.py").write_text("def pytest_runtest_makereport(item, call:\n")
    ((_, message),) = installs.changes(project, "t1", [entry(site, ww, plugin="ww_entry")])
    assert message.endswith(
        "and ww_impl.py is not Python source agentgate can read (it does not decode or parse): "
        f"what it does cannot be judged{APPROVE}"
    )
