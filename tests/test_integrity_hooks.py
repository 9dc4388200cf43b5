"""Result tampering, selection, forced exits and a forged guard in the change, on real git
repositories: each is found at file:line through `agentgate verify` and `pytest --agentgate`;
plain fixtures, markers and settings the base already had are honest."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import CliRun, git

Agentgate = Callable[..., CliRun]

TESTS = "def test_ok():\n    assert 1 + 1 == 2\n\n\ndef test_broken():\n    assert 2 - 2 == 1\n"
CONFIG = "profile: strict\ngates:\n  test:\n    command: python -m pytest -q -p no:cacheprovider\n"

TRICKS: dict[str, tuple[str, str, str, int | None]] = {
    # name: (file, text, rule, line)
    "makereport rewrites failed to passed": (
        "conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    report = outcome.get_result()\n    report.outcome = 'passed'\n",
        "result-rewritten",
        5,
    ),
    "makereport rewrites through a tuple assignment": (
        "conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    rep = outcome.get_result()\n    rep.outcome, rep.longrepr = 'passed', None\n",
        "result-rewritten",
        5,
    ),
    "makereport rewrites through the report's namespace": (
        "conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    vars(outcome.get_result()).update(outcome='passed', longrepr=None)\n",
        "result-rewritten",
        5,
    ),
    "modifyitems wraps each test under another name": (
        "conftest.py",
        "import functools\n\n\ndef _quiet(test):\n    @functools.wraps(test)\n"
        "    def run(*a, **k):\n        try:\n            return test(*a, **k)\n"
        "        except AssertionError:\n            return None\n\n    return run\n\n\n"
        "def pytest_collection_modifyitems(items):\n    for case in items:\n"
        "        case.obj = _quiet(case.obj)\n",
        "result-rewritten",
        17,
    ),
    "makereport writes through object.__setattr__": (
        "conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    object.__setattr__(outcome.get_result(), 'outcome', 'passed')\n",
        "result-rewritten",
        5,
    ),
    "makereport hands the report to a helper": (
        "conftest.py",
        "import pytest\n\n\ndef _settle(report):\n    report.outcome = 'passed'\n\n\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    _settle(outcome.get_result())\n",
        "result-rewritten",
        9,
    ),
    "a hook attached under a computed name": (
        "conftest.py",
        "import pytest\n\n\nclass _Tidy:\n    pass\n\n\ndef _tidy(item, call):\n"
        "    yield\n\n\nsetattr(_Tidy, 'pytest_runtest_' + 'makereport', _tidy)\n",
        "result-rewritten",
        12,
    ),
    "pycollect_makeitem makes the items itself": (
        "conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_pycollect_makeitem(collector, name, obj):\n    return None\n",
        "result-rewritten",
        5,
    ),
    "runtest_protocol runs the tests itself": (
        "conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_runtest_protocol(item, nextitem):\n    return True\n",
        "result-rewritten",
        5,
    ),
    "runtestloop runs what it chooses": (
        "conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_runtestloop(session):\n    return True\n",
        "result-rewritten",
        5,
    ),
    "pycollect_makemodule makes the module's collector": (
        "conftest.py",
        "def pytest_pycollect_makemodule(module_path, parent):\n    return None\n",
        "result-rewritten",
        1,
    ),
    "sessionfinish sets the status through a tuple": (
        "conftest.py",
        "def pytest_sessionfinish(session):\n    (session.exitstatus, _) = 0, 1\n",
        "result-rewritten",
        1,
    ),
    "makereport under another name with specname": (
        "conftest.py",
        "import pytest\n\n\n"
        "@pytest.hookimpl(wrapper=True, specname='pytest_runtest_makereport')\n"
        "def pytest_known_issues(item, call):\n    report = yield\n"
        "    report.outcome = 'passed'\n    return report\n",
        "result-rewritten",
        5,
    ),
    "old-style wrapper under another name with specname": (
        "conftest.py",
        "import pytest\n\n\n"
        "@pytest.hookimpl(hookwrapper=True, specname='pytest_runtest_makereport')\n"
        "def pytest_known_issues(item, call):\n    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n",
        "result-rewritten",
        5,
    ),
    "specname hookimpl bound by assignment": (
        "conftest.py",
        "import pytest\n\n\ndef _known(item, call):\n    report = yield\n"
        "    report.outcome = 'passed'\n    return report\n\n\n"
        "pytest_known_issues = pytest.hookimpl(wrapper=True, "
        "specname='pytest_runtest_makereport')(_known)\n",
        "result-rewritten",
        4,
    ),
    "specname marker bound to a name": (
        "conftest.py",
        "import pytest\n\nknown = pytest.hookimpl(specname='pytest_report_teststatus')\n\n\n"
        "@known\ndef pytest_known_issues(report, config):\n"
        "    if report.failed:\n        return 'passed', '.', 'PASSED'\n",
        "result-rewritten",
        7,
    ),
    "specname of a selection hook": (
        "conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(specname='pytest_collection_modifyitems')\n"
        "def pytest_tidy(items):\n    items[:] = [i for i in items if 'broken' not in i.name]\n",
        "selection-narrowed",
        5,
    ),
    "modifyitems keeps a sorted, filtered list": (
        "conftest.py",
        "def pytest_collection_modifyitems(items):\n"
        "    items[:] = sorted(i for i in items if 'broken' not in i.name)\n",
        "selection-narrowed",
        1,
    ),
    "modifyitems keeps a sorted slice": (
        "conftest.py",
        "def pytest_collection_modifyitems(items):\n    items[:] = sorted(items)[:-1]\n",
        "selection-narrowed",
        1,
    ),
    "configure sets -k": (
        "conftest.py",
        "def pytest_configure(config):\n    config.option.keyword = 'not broken'\n",
        "selection-narrowed",
        2,
    ),
    "configure sets --deselect": (
        "conftest.py",
        "def pytest_configure(config):\n"
        "    config.option.deselect = ['test_calc.py::test_broken']\n",
        "selection-narrowed",
        2,
    ),
    "configure sets -m through setattr": (
        "conftest.py",
        "def pytest_configure(config):\n    setattr(config.option, 'markexpr', 'not slow')\n",
        "selection-narrowed",
        2,
    ),
    "configure sets --ignore-glob through __dict__": (
        "conftest.py",
        "def pytest_configure(config):\n"
        "    config.option.__dict__['ignore_glob'] = ['test_calc.py']\n",
        "selection-narrowed",
        2,
    ),
    "configure extends --ignore through an alias": (
        "conftest.py",
        "def pytest_configure(config):\n    opt = config.option\n"
        "    opt.ignore += ['test_calc.py']\n",
        "selection-narrowed",
        3,
    ),
    "configure narrows config.args": (
        "conftest.py",
        "def pytest_configure(config):\n    config.args[:] = ['test_calc.py::test_ok']\n",
        "selection-narrowed",
        2,
    ),
    "modifyitems marks the failing test xfail": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n"
        "    for item in items:\n        if item.name == 'test_broken':\n"
        "            item.add_marker(pytest.mark.xfail(reason='INV-42', strict=False))\n",
        "skip-added",
        7,
    ),
    # What the item runs, replaced: the test passes without running its own code.
    "itemcollected replaces the failing test's runtest": (
        "conftest.py",
        "def pytest_itemcollected(item):\n    if item.name == 'test_broken':\n"
        "        item.runtest = lambda: None\n",
        "result-rewritten",
        3,
    ),
    "modifyitems sets every test's obj": (
        "conftest.py",
        "def pytest_collection_modifyitems(items):\n    for item in items:\n"
        "        setattr(item, 'obj', lambda: None)\n",
        "result-rewritten",
        3,
    ),
    # pytest's skipping plugin reads the node's own_markers: a mark put there directly skips as
    # add_marker does.
    "modifyitems appends a skip to own_markers": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n        if item.name == 'test_broken':\n"
        "            item.own_markers.append(pytest.mark.skip(reason='INV-42').mark)\n",
        "skip-added",
        7,
    ),
    "modifyitems extends own_markers with an xfail Mark": (
        "conftest.py",
        "from _pytest.mark.structures import Mark\n\n\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n        if 'broken' in item.name:\n"
        "            item.own_markers.extend([Mark('xfail', (), {})])\n",
        "skip-added",
        7,
    ),
    "modifyitems adds a skip to own_markers with +=": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n        if item.name == 'test_broken':\n"
        "            item.own_markers += [pytest.mark.skip.mark]\n",
        "skip-added",
        7,
    ),
    "a fixture inserts a skip into its node's own_markers": (
        "conftest.py",
        "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef flaky(request):\n"
        "    request.node.own_markers.insert(0, pytest.mark.skip().mark)\n",
        "skip-added",
        6,
    ),
    "an option-guarded skip keyed on the test's name": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_addoption(parser):\n"
        "    parser.addoption('--runslow', action='store_true', default=False)\n\n\n"
        "def pytest_collection_modifyitems(config, items):\n"
        "    if config.getoption('--runslow'):\n        return\n"
        "    for item in items:\n        if 'broken' in item.name:\n"
        "            item.add_marker(pytest.mark.skip(reason='need --runslow'))\n",
        "skip-added",
        13,
    ),
    "an option-guarded skip keyed on the test's name in its keywords": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_addoption(parser):\n"
        "    parser.addoption('--runslow', action='store_true', default=False)\n\n\n"
        "def pytest_collection_modifyitems(config, items):\n"
        "    if config.getoption('--runslow'):\n        return\n"
        "    for item in items:\n        if 'test_broken' in item.keywords:\n"
        "            item.add_marker(pytest.mark.skip(reason='need --runslow'))\n",
        "skip-added",
        13,
    ),
    "an option-guarded skip of every test": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_addoption(parser):\n"
        "    parser.addoption('--runslow', action='store_true', default=False)\n\n\n"
        "def pytest_collection_modifyitems(config, items):\n"
        "    if config.getoption('--runslow'):\n        return\n"
        "    for item in items:\n"
        "        item.add_marker(pytest.mark.skip(reason='need --runslow'))\n",
        "skip-added",
        12,
    ),
    "a marker-keyed skip under no option": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n"
        "    for item in items:\n        if 'slow' in item.keywords:\n"
        "            item.add_marker(pytest.mark.skip(reason='slow'))\n",
        "skip-added",
        7,
    ),
    "itemcollected marks the failing test skip": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_itemcollected(item):\n"
        "    if 'broken' in item.name:\n        item.add_marker('skip')\n",
        "skip-added",
        6,
    ),
    "collection_finish adds marks from a table": (
        "conftest.py",
        "import pytest\n\nKNOWN = {'test_broken': pytest.mark.xfail(reason='INV-42')}\n\n\n"
        "def pytest_collection_finish(session):\n    for item in session.items:\n"
        "        if item.name in KNOWN:\n            item.add_marker(KNOWN[item.name])\n",
        "skip-added",
        9,
    ),
    "autouse fixture applies xfail": (
        "conftest.py",
        "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef known_issues(request):\n"
        "    if 'broken' in request.node.name:\n"
        "        request.applymarker(pytest.mark.xfail(reason='INV-42'))\n",
        "skip-added",
        7,
    ),
    "autouse fixture marks the node skipif": (
        "conftest.py",
        "import os\n\nimport pytest\n\n\n@pytest.fixture(autouse=True)\n"
        "def needs_db(request):\n    request.node.add_marker(\n"
        "        pytest.mark.skipif(not os.environ.get('DB'), reason='needs the db')\n    )\n",
        "skip-added",
        8,
    ),
    "report_teststatus hides the failure": (
        "conftest.py",
        "def pytest_report_teststatus(report, config):\n"
        "    if report.failed:\n        return 'passed', '.', 'PASSED'\n",
        "result-rewritten",
        1,
    ),
    "modifyitems drops the failing test": (
        "conftest.py",
        "def pytest_collection_modifyitems(items):\n"
        "    items[:] = [i for i in items if 'broken' not in i.name]\n",
        "selection-narrowed",
        1,
    ),
    "pytest.exit in a hook": (
        "conftest.py",
        "import pytest\n\n\ndef pytest_runtest_setup(item):\n"
        "    if 'broken' in item.name:\n        pytest.exit('done', returncode=0)\n",
        "exit-forced",
        6,
    ),
    "os._exit in a hook": (
        "conftest.py",
        "import os\n\n\ndef pytest_sessionfinish(session):\n    os._exit(0)\n",
        "exit-forced",
        5,
    ),
    "AGENTGATE_RUNNING set by a conftest": (
        "conftest.py",
        "import os\n\nos.environ['AGENTGATE_RUNNING'] = '1'\n",
        "guard-forged",
        3,
    ),
    "-k in addopts": (
        "pytest.ini",
        "[pytest]\naddopts = -k 'not broken'\n",
        "selection-narrowed",
        2,
    ),
    "--deselect in pyproject addopts": (
        "pyproject.toml",
        "[tool.pytest.ini_options]\naddopts = '--deselect test_calc.py::test_broken'\n",
        "selection-narrowed",
        2,
    ),
    "reruns in addopts": (
        "setup.cfg",
        "[tool:pytest]\naddopts = --reruns 5\n",
        "rerun-added",
        2,
    ),
    "-p no:agentgate in tox.ini": (
        "tox.ini",
        "[pytest]\naddopts = -p no:agentgate\n",
        "guard-forged",
        2,
    ),
    # Red team 47: the variable's name spelled with a JSON escape, which the harness decodes.
    "AGENTGATE_PYTHON escaped in a harness's settings": (
        "settings.json",
        '{"env": {"\\u0041GENTGATE_PYTHON": "/tmp/wrapper/bin/python"}}\n',
        "guard-forged",
        None,
    ),
}


def project(root: Path, extra: dict[str, str] | None = None) -> Path:
    root.mkdir()
    files = {"test_calc.py": TESTS, "agentgate.yml": CONFIG, **(extra or {})}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base: one test fails")
    return root


def integrity(agentgate: Agentgate) -> dict[str, Any]:
    return agentgate("verify", "--format", "json", "--no-run").gate("integrity")


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_each_trick_is_found_at_its_line(
    trick: str, tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path / "p")
    name, text, rule, line = TRICKS[trick]
    (root / name).write_text(text)
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "fail", gate
    assert (rule, name, line) in {(f["code"], f["path"], f["line"]) for f in gate["findings"]}


def test_honest_conftests_and_the_bases_own_settings_are_not_findings(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(
        tmp_path / "p",
        {"pytest.ini": "[pytest]\naddopts = -m 'not slow'\nmarkers =\n    slow: slow tests\n"},
    )
    (root / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2]\n\n\n"
        "def pytest_configure(config):\n    config.addinivalue_line('markers', 'db: database')\n"
    )
    # Reformatting the ini and keeping the base's -m is not a change of selection.
    (root / "pytest.ini").write_text(
        "[pytest]\naddopts =\n    -m 'not slow'\nmarkers =\n    slow: slow tests\n"
    )
    (root / "tool.py").write_text("import sys\n\n\nif __name__ == '__main__':\n    sys.exit(0)\n")
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "pass" and gate["findings"] == []


def test_a_specname_hookimpl_that_only_reads_is_not_a_finding(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path / "p")
    (root / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.hookimpl(tryfirst=True, specname='pytest_runtest_setup')\n"
        "def pytest_note_start(item):\n    print('starting', item.nodeid)\n\n\n"
        "@pytest.hookimpl(wrapper=True, specname='pytest_runtest_makereport')\n"
        "def pytest_keep_report(item, call):\n    report = yield\n"
        "    item.stash.setdefault('reports', []).append(report)\n    return report\n"
    )
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "pass" and gate["findings"] == [], gate


def test_a_configure_hook_that_reads_the_options_is_not_a_finding(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path / "p")
    (root / "conftest.py").write_text(
        "def pytest_configure(config):\n"
        "    if config.option.keyword or config.option.markexpr:\n"
        "        print('a selection:', config.option.keyword, list(config.args))\n"
        "    config.option.verbose = 1\n"
        "    config.addinivalue_line('markers', 'db: database')\n"
    )
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "pass" and gate["findings"] == [], gate


def test_other_marks_and_marks_for_another_platform_are_not_findings(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = "win32" if sys.platform != "win32" else "linux"
    root = project(tmp_path / "p")
    (root / "conftest.py").write_text(
        "import sys\n\nimport pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n        item.add_marker(pytest.mark.slow)\n"
        "        item.add_marker('db')\n"
        "        item.own_markers.append(pytest.mark.timeout(30).mark)\n"
        f"        item.add_marker(pytest.mark.skipif(sys.platform == {elsewhere!r}, reason='x'))\n"
        "\n\n@pytest.fixture(autouse=True)\ndef elsewhere_only(request):\n"
        f"    if sys.platform == {elsewhere!r}:\n"
        "        request.applymarker(pytest.mark.xfail(reason='not supported there'))\n"
    )
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "pass" and gate["findings"] == [], gate


def test_a_custom_item_that_sets_its_own_obj_is_not_a_finding(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path / "p")
    (root / "conftest.py").write_text(
        "import pytest\n\n\nclass CaseItem(pytest.Item):\n"
        "    def __init__(self, *, spec, **kwargs):\n        super().__init__(**kwargs)\n"
        "        self.obj = spec\n\n    def runtest(self):\n        assert self.obj['ok']\n"
        "\n\n@pytest.fixture\ndef cli_context():\n    ctx = Context()\n    ctx.obj = {'db': None}\n"
        "    return ctx\n"
    )
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "pass" and gate["findings"] == [], gate


ELSEWHERE = "win32" if sys.platform != "win32" else "linux"
HERE = sys.platform


@pytest.mark.parametrize(
    "body",
    [
        f"    if sys.platform == {ELSEWHERE!r}:\n        pytest.skip('not here')\n",
        f"    if not sys.platform.startswith({HERE[:3]!r}):\n        pytest.skip('elsewhere')\n",
        f"    if sys.platform != {ELSEWHERE!r}:\n        return\n    pytest.skip('elsewhere')\n",
        f"    if platform == {ELSEWHERE!r} and 'db' in item.keywords:\n"
        "        pytest.skip('no db there')\n",
    ],
    ids=["equals-elsewhere", "not-startswith-here", "returns-here", "imported-name"],
)
def test_a_setup_hook_that_skips_only_on_another_platform(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    root = project(tmp_path / "p")
    (root / "conftest.py").write_text(
        "import sys\nfrom sys import platform\n\nimport pytest\n\n\n"
        "def pytest_runtest_setup(item):\n" + body
    )
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "pass" and gate["findings"] == [], gate


@pytest.mark.parametrize(
    "body",
    [
        f"    if sys.platform == {HERE!r}:\n        pytest.skip('here')\n",
        f"    if sys.platform != {ELSEWHERE!r}:\n        pytest.skip('here')\n",
        f"    if sys.platform == {ELSEWHERE!r}:\n        return\n    pytest.skip('here')\n",
        f"    if platform == {ELSEWHERE!r} or 'broken' in item.name:\n"
        "        pytest.skip('broken')\n",
        "    if 'broken' in item.name:\n        pytest.skip('broken')\n",
        "    if False:\n        pytest.skip('never')\n    pytest.skip('always')\n",
        f"    if sys.platform == {ELSEWHERE!r}:\n        pass\n    else:\n"
        "        pytest.skip('here')\n",
    ],
    ids=[
        "equals-here",
        "not-elsewhere",
        "returns-elsewhere",
        "or-another-condition",
        "not-a-platform-condition",
        "unconditional",
        "else-branch",
    ],
)
def test_a_setup_hook_that_skips_here(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    root = project(tmp_path / "p")
    (root / "conftest.py").write_text(
        "import sys\nfrom sys import platform\n\nimport pytest\n\n\n"
        "def pytest_runtest_setup(item):\n" + body
    )
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "fail", gate
    assert [(f["code"], f["path"], f["line"]) for f in gate["findings"]] == [
        ("selection-narrowed", "conftest.py", 7)
    ]


def test_an_unchanged_hook_is_not_a_finding_but_a_changed_one_is(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = "def pytest_report_teststatus(report, config):\n    return None\n"
    root = project(tmp_path / "p", {"conftest.py": hook})
    monkeypatch.chdir(root)
    (root / "conftest.py").write_text(
        "# a comment\n" + hook.replace("    return None", "    return  None")
    )
    assert integrity(agentgate)["status"] == "pass"  # reformatted: the same hook
    documented = hook.replace("config):\n", 'config):\n    """Say nothing of the status."""\n')
    (root / "conftest.py").write_text(documented)
    assert integrity(agentgate)["status"] == "pass"  # a docstring reworded: the same hook
    (root / "conftest.py").write_text(hook.replace("return None", "return 'passed', '.', 'ok'"))
    gate = integrity(agentgate)
    assert [(f["code"], f["line"]) for f in gate["findings"]] == [("result-rewritten", 1)]
    # Review 19: a hook the base has is named as changed, and the advice is to restore it (or
    # have a person allow it), not to remove what the suite needs.
    assert gate["findings"][0]["message"] == (
        "pytest_report_teststatus in conftest.py, changed since the base, can alter test outcomes"
    )
    (root / "conftest.py").write_text(
        hook + "\n\ndef pytest_pyfunc_call(pyfuncitem):\n    return True\n"
    )
    assert [f["message"] for f in integrity(agentgate)["findings"]] == [
        "new or changed pytest_pyfunc_call in conftest.py can alter test outcomes"
    ]


@pytest.mark.parametrize(
    "reorder",
    [
        "items[:] = sorted(items, key=lambda item: 'integration' in item.nodeid)",
        "items.sort(key=lambda item: item.nodeid)",
        "items.reverse()",
        "items[:] = reversed(items)",
        "items[:] = list(reversed(items))",
        "items[:] = items[::-1]",
    ],
    ids=["sorted", "sort", "reverse", "reversed", "list-reversed", "step-back"],
)
def test_a_modifyitems_that_reorders_the_tests_is_no_finding(tmp_path: Path, reorder: str) -> None:
    """Reordering collected tests (the slow ones last) removes none of them."""
    from _helpers import only_gate, verify_json

    gated = "profile: strict\ngates:\n  integrity: {kind: integrity}\n"
    root = project(tmp_path / "p", {"agentgate.yml": gated})
    (root / "conftest.py").write_text(
        f"def pytest_collection_modifyitems(items):\n    # slow ones last\n    {reorder}\n"
    )
    _, verdict = verify_json(root)
    gate = only_gate(verdict, "integrity")
    assert gate["status"] == "pass" and gate["findings"] == [], verdict


RUNSLOW = (  # pytest's docs, "Control skipping of tests according to command line option"
    "import pytest\n\n\ndef pytest_addoption(parser):\n"
    "    parser.addoption(\n"
    '        "--runslow", action="store_true", default=False, help="run slow tests"\n    )\n\n\n'
    "def pytest_configure(config):\n"
    '    config.addinivalue_line("markers", "slow: mark test as slow to run")\n\n\n'
    "def pytest_collection_modifyitems(config, items):\n"
    "    {guard}\n"
    '    skip_slow = pytest.mark.skip(reason="need --runslow option to run")\n'
    "    for item in items:\n"
    "        if {marked}:\n"
    "            item.add_marker(skip_slow)\n"
)


@pytest.mark.parametrize(
    ("guard", "marked"),
    [
        ('if config.getoption("--runslow"):\n        return', '"slow" in item.keywords'),
        ("if config.option.runslow:\n        return", 'item.get_closest_marker("slow")'),
    ],
    ids=["getoption-keywords", "option-closest-marker"],
)
def test_the_documented_runslow_option_is_no_finding(
    tmp_path: Path, guard: str, marked: str
) -> None:
    """A skip added only when an option the conftest defines is off, to tests that carry a
    marker, is an opt-in: a test the change marks and the run skips is caught at run time."""
    from _helpers import only_gate, verify_json

    gated = "profile: strict\ngates:\n  integrity: {kind: integrity}\n"
    root = project(tmp_path / "p", {"agentgate.yml": gated})
    (root / "conftest.py").write_text(RUNSLOW.format(guard=guard, marked=marked))
    _, verdict = verify_json(root)
    gate = only_gate(verdict, "integrity")
    assert gate["status"] == "pass" and gate["findings"] == [], verdict


def test_a_runslow_option_that_skips_tests_the_base_marked_is_a_finding(tmp_path: Path) -> None:
    """The failing test carried ``slow`` at the base and ran: a new option-gated skip of slow
    tests takes it out of the run without the change touching it."""
    from _helpers import only_gate, verify_json

    gated = "profile: strict\ngates:\n  integrity: {kind: integrity}\n"
    marked = "import pytest\n\n\n" + TESTS.replace(
        "def test_broken", "@pytest.mark.slow\ndef test_broken"
    )
    root = project(tmp_path / "p", {"agentgate.yml": gated, "test_calc.py": marked})
    guard = 'if config.getoption("--runslow"):\n        return'
    (root / "conftest.py").write_text(RUNSLOW.format(guard=guard, marked='"slow" in item.keywords'))
    _, verdict = verify_json(root)
    gate = only_gate(verdict, "integrity")
    assert [(f["code"], f["path"], f["line"]) for f in gate["findings"]] == [
        ("skip-added", "conftest.py", 20)
    ], verdict


def test_a_json_files_escapes_do_not_count_a_mention_twice(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review 29: translations that mention AGENTGATE_STATE_HOME at the base, written again
    # with `json.dump` (é as \u00e9): the mention counted once raw, once decoded.
    base = '{\n  "help": "Set AGENTGATE_STATE_HOME to move the state.\\nSee the docs.",\n'
    root = project(tmp_path / "p", {"fr.json": base + '  "hello": "été"\n}\n'})
    (root / "fr.json").write_text(
        base + '  "hello": "\\u00e9t\\u00e9",\n  "bye": "\\u00c0 bient\\u00f4t"\n}\n'
    )
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert [f for f in gate["findings"] if f["code"] == "guard-forged"] == []


# A project with files that are no tests beside its tests: setup.py, docs/conf.py, a module
# with a doctest, and tests in a folder of their own.
PACKAGED = {
    "setup.py": "from setuptools import setup\n\nsetup()\n",
    "docs/conf.py": "project = 'calc'\n",
    "calc.py": "def add(a, b):\n    '''\n    >>> add(1, 2)\n    3\n    '''\n    return a + b\n",
    "tests/test_more.py": "def test_more():\n    assert 2 * 2 == 4\n",
    "tests/helpers.py": "ONE = 1\n",
    "tests/conftest.py": "ONE = 1\n",
}


@pytest.mark.parametrize(
    ("conftest", "extra"),
    [
        # pytest's docs, when --doctest-modules is added: review 34's inflection.
        ("conftest.py", 'collect_ignore = ["setup.py", "docs/conf.py"]\n'),
        ("conftest.py", 'collect_ignore = ["docs"]\ncollect_ignore_glob = ["*/conf.py"]\n'),
        ("conftest.py", 'collect_ignore_glob = ["setup.py", "doc*"]\n'),
        ("tests/conftest.py", 'collect_ignore = ["helpers.py"]\n'),
        # Resolved against the conftest's folder, as pytest does: no test_more.py there.
        ("conftest.py", 'collect_ignore = ["test_more.py"]\n'),
    ],
    ids=["setup-and-docs", "docs-folder-and-glob", "globs", "a-helper", "another-folder"],
)
def test_collect_ignore_of_files_that_are_no_tests_is_no_finding(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch, conftest: str, extra: str
) -> None:
    root = project(tmp_path / "p", PACKAGED)
    (root / "pytest.ini").write_text("[pytest]\naddopts = --doctest-modules\n")
    (root / conftest).write_text(extra)
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert [f for f in gate["findings"] if f["code"] == "selection-narrowed"] == [], gate


@pytest.mark.parametrize(
    ("conftest", "extra", "base_ini"),
    [
        ("conftest.py", 'collect_ignore = ["setup.py", "test_calc.py"]\n', None),
        ("conftest.py", 'collect_ignore = ["./tests/"]\n', None),
        ("tests/conftest.py", 'collect_ignore = ["test_more.py"]\n', None),
        ("tests/conftest.py", 'collect_ignore = ["../test_calc.py"]\n', None),
        ("conftest.py", 'collect_ignore_glob = ["*_calc.py"]\n', None),
        ("conftest.py", 'collect_ignore_glob = ["tes*"]\n', None),
        ("conftest.py", 'collect_ignore = ["set" + "up.py"]\n', None),
        ("tests/conftest.py", 'collect_ignore = ["../../elsewhere"]\n', None),
        ("conftest.py", 'collect_ignore = ["tests/conftest.py"]\n', None),
        # The base ran calc.py's doctests.
        (
            "conftest.py",
            'collect_ignore = ["calc.py"]\n',
            "[pytest]\naddopts = --doctest-modules\n",
        ),
        # A plugin's option that makes an item of every file: setup.py was one.
        ("conftest.py", 'collect_ignore = ["setup.py"]\n', "[pytest]\naddopts = --flake8\n"),
    ],
    ids=[
        "a-test-file-among-others",
        "a-folder-of-tests",
        "in-a-sub-conftest",
        "above-the-conftest",
        "a-glob",
        "a-glob-of-a-folder",
        "computed",
        "outside-the-project",
        "a-conftest",
        "doctests-the-base-ran",
        "a-plugin-collects-every-file",
    ],
)
def test_collect_ignore_of_a_test_narrows_the_selection(
    tmp_path: Path,
    agentgate: Agentgate,
    monkeypatch: pytest.MonkeyPatch,
    conftest: str,
    extra: str,
    base_ini: str | None,
) -> None:
    files = dict(PACKAGED, **({"pytest.ini": base_ini} if base_ini else {}))
    root = project(tmp_path / "p", files)
    (root / conftest).write_text(extra)
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert gate["status"] == "fail", gate
    assert ("selection-narrowed", conftest, 1) in {
        (f["code"], f["path"], f["line"]) for f in gate["findings"]
    }


def test_collect_ignore_of_a_test_file_the_change_adds_narrows_the_selection(
    tmp_path: Path, agentgate: Agentgate, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path / "p", PACKAGED)
    (root / "docs" / "test_conf.py").write_text("def test_conf():\n    assert 1 == 2\n")
    (root / "conftest.py").write_text('collect_ignore = ["docs"]\n')
    monkeypatch.chdir(root)
    gate = integrity(agentgate)
    assert ("selection-narrowed", "conftest.py", 1) in {
        (f["code"], f["path"], f["line"]) for f in gate["findings"]
    }, gate
    assert "collect_ignore gained 1 entries that cover tests (docs)" in str(gate["findings"])
