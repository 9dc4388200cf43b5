"""The published plugin API, used the way a third party uses it.

Tiny plugin packages are written to a temporary folder, installed by pip into an isolated
target (no network: a local path, no build isolation), and found by the real ``agentgate``
command through their ``agentgate`` entry point, as any installed plugin is. The plugin
modules import nothing from agentgate but ``pytest_agentgate.plugin_api``.

The packages are built by a PEP 517 backend of their own (``backend-path``), a few lines of
standard library: setuptools cannot build a wheel offline without the ``wheel`` package before
setuptools 70.1, and a virtualenv on Python 3.12 or later has no setuptools at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pluggy
import pytest

from pytest_agentgate import plugin_api
from pytest_agentgate import registry as registry_module
from pytest_agentgate.plugin_api import LintFormat, LintReport, hookimpl
from pytest_agentgate.registry import RegistryError, build_registry, get_registry

# -- the packages -----------------------------------------------------------------------------

# A plugin author's whole plugin: one lint format and one gate kind, typed as mypy --strict asks.
DEMO_PLUGIN = '''
"""agentgate-demo: the demo-lint report format and the todo-count gate kind."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_agentgate.plugin_api import (
    COMMON_OPTIONS,
    CollectContext,
    Evidence,
    Finding,
    GateConfig,
    GateKind,
    GateResult,
    GateStatus,
    LintFormat,
    LintReport,
    Option,
    ReportError,
    Severity,
    hookimpl,
    new_result,
)

LEVELS: dict[str, Severity] = {"error": "error", "warning": "warning", "note": "warning"}


def parse_demo_lint(text: str, source: str) -> LintReport:
    """``{"problems": [{"file", "line", "level", "text"}]}`` into findings."""
    try:
        findings = [
            Finding(p["text"], path=p["file"], line=p["line"], severity=LEVELS[p["level"]])
            for p in json.loads(text)["problems"]
        ]
    except (ValueError, KeyError, TypeError) as exc:
        hint = "run demo-lint --json"
        raise ReportError(source, f"not a demo-lint report ({exc!r})", hint) from exc
    return LintReport("demo-lint", source, findings)


@dataclass
class TodoEvidence(Evidence):
    todos: list[Finding] = field(default_factory=list)


class TodoCountGate:
    name = "todo-count"
    options: tuple[Option, ...] = (
        *COMMON_OPTIONS,
        Option("max_todos", "int", "TODO markers tolerated", threshold=True),
        Option("files", "globs", "the files to search (default: **/*.py)"),
    )
    stdout_report = False

    def collect(self, context: CollectContext) -> TodoEvidence:
        evidence = TodoEvidence(context.root, command=context.result)
        patterns = context.config.options.get("files", ["**/*.py"])
        paths = sorted({p for pattern in patterns for p in context.root.glob(pattern)})
        for path in paths:
            relative = path.relative_to(context.root).as_posix()
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if "TODO" in line:
                    evidence.todos.append(
                        Finding(line.strip(), path=relative, line=number, severity="warning")
                    )
        return evidence

    def judge(self, config: GateConfig, evidence: TodoEvidence) -> GateResult:
        todos = len(evidence.todos)
        limit = config.thresholds.get("max_todos")
        status: GateStatus = "fail" if limit is not None and todos > limit else "pass"
        result = new_result(config, evidence, status, f"{todos} TODO markers (max {limit})")
        result.actual = {"todos": todos}
        result.findings = list(evidence.todos)
        return result


@hookimpl
def agentgate_lint_formats() -> Sequence[LintFormat]:
    return [LintFormat("demo-lint", parse_demo_lint, "demo-lint --json > demo-lint.json")]


@hookimpl
def agentgate_gate_kinds() -> Sequence[GateKind[Any]]:
    return [TodoCountGate()]
'''

# A hook whose name is one letter short: it would never be called.
TYPO_PLUGIN = """
from pytest_agentgate.plugin_api import hookimpl


@hookimpl
def agentgate_gate_kind():
    return []
"""

# A hook implementation asking for an argument the hook does not pass.
ARGS_PLUGIN = """
from pytest_agentgate.plugin_api import hookimpl


@hookimpl
def agentgate_lint_formats(config):
    return []
"""

# A hook that raises while the plugins register.
RAISING_PLUGIN = """
from pytest_agentgate.plugin_api import hookimpl


@hookimpl
def agentgate_lint_formats():
    return [1 / 0]
"""

# Another package that claims the demo-lint format.
CLASH_PLUGIN = """
from pytest_agentgate.plugin_api import LintFormat, LintReport, hookimpl


@hookimpl
def agentgate_lint_formats():
    return [LintFormat("demo-lint", lambda text, source: LintReport("clash", source))]
"""

# PEP 517's one required hook, zipping the package's modules into a wheel: standard library only.
BACKEND = """
import base64
import hashlib
import sys
import zipfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    stem = f"{name.replace('-', '_')}-{version}"
    files = {p.name: p.read_bytes() for p in Path(".").glob("*.py") if p.name != "backend.py"}
    files[f"{stem}.dist-info/METADATA"] = (
        f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n".encode()
    )
    files[f"{stem}.dist-info/WHEEL"] = (
        b"Wheel-Version: 1.0\\nGenerator: backend.py\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    )
    files[f"{stem}.dist-info/entry_points.txt"] = "".join(
        f"[{group}]\\n" + "".join(f"{key} = {value}\\n" for key, value in entries.items())
        for group, entries in project.get("entry-points", {}).items()
    ).encode()
    record = [
        f"{path},sha256="
        + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        + f",{len(data)}\\n"
        for path, data in files.items()
    ]
    files[f"{stem}.dist-info/RECORD"] = ("".join(record) + f"{stem}.dist-info/RECORD,,\\n").encode()
    wheel = f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel
"""


def write_package(folder: Path, dist: str, module: str, entry: str, source: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [build-system]
            requires = []
            build-backend = "backend"
            backend-path = ["."]

            [project]
            name = "{dist}"
            version = "0.1.0"

            [project.entry-points.agentgate]
            {entry} = "{module}"
            """
        ),
        encoding="utf-8",
    )
    (folder / "backend.py").write_text(BACKEND, encoding="utf-8")
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each plugin package installed by pip into a folder of its own (a PYTHONPATH entry)."""
    base = tmp_path_factory.mktemp("plugins")
    packages = {
        "demo": ("agentgate-demo", "agentgate_demo", DEMO_PLUGIN),
        "typo": ("agentgate-typo", "agentgate_typo", TYPO_PLUGIN),
    }
    installs = {}
    for entry, (dist, module, source) in packages.items():
        folder = write_package(base / "src" / entry, dist, module, entry, source)
        command = [
            *(sys.executable, "-m", "pip", "--isolated", "install", "--quiet", "--no-deps"),
            *("--no-build-isolation", "--no-index", "--target", str(base / "site" / entry)),
            str(folder),
        ]
        installs[entry] = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    for entry, process in installs.items():
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 0, f"pip could not install the {entry} plugin:\n{output}"
    return {entry: base / "site" / entry for entry in packages}


def agentgate(root: Path, *args: str, site: Path) -> subprocess.CompletedProcess[str]:
    """The real command line in ``root``, with the plugin installed in ``site`` importable."""
    env = dict(os.environ, NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(site), env.get("PYTHONPATH"))))
    return subprocess.run(
        [sys.executable, "-m", "pytest_agentgate", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


# A plugin's kind that reads the files itself needs neither a command nor a report.
CONFIG = """\
gates:
  todos:
    kind: todo-count
    max_todos: 1
  lint:
    report: demo-lint.json
    format: demo-lint
"""


def demo_project(root: Path, todos: int, problems: list[dict[str, Any]]) -> Path:
    root.mkdir()
    (root / ".git").mkdir()  # config lookup stops here
    (root / "agentgate.yml").write_text(CONFIG, encoding="utf-8")
    lines = ["def f():", *(f"    pass  # TODO: step {n}" for n in range(1, todos + 1))]
    (root / "app.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "demo-lint.json").write_text(json.dumps({"problems": problems}), encoding="utf-8")
    return root


def finding(message: str, path: str, line: int, severity: str) -> dict[str, Any]:
    return {
        "message": message,
        "path": path,
        "line": line,
        "code": None,
        "name": None,
        "severity": severity,
    }


def test_an_installed_plugin_gate_kind_and_lint_format_fail_the_verdict(
    sites: dict[str, Path], tmp_path: Path, check_verdict: Any
) -> None:
    problems = [
        {"file": "app.py", "line": 1, "level": "note", "text": "f has no docstring"},
        {"file": "app.py", "line": 2, "level": "error", "text": "pass does nothing"},
    ]
    root = demo_project(tmp_path / "proj", todos=2, problems=problems)

    res = agentgate(root, "verify", "--format", "json", site=sites["demo"])

    assert (res.returncode, res.stderr.count("Traceback")) == (1, 0), res.stderr
    verdict = check_verdict(json.loads(res.stdout))
    assert verdict["status"] == "fail"
    todos, lint = verdict["gates"]
    assert (todos["name"], todos["kind"], todos["status"]) == ("todos", "todo-count", "fail")
    assert todos["summary"] == "2 TODO markers (max 1)"
    assert (todos["expected"], todos["actual"]) == ({"max_todos": 1}, {"todos": 2})
    assert todos["findings"] == [
        finding("pass  # TODO: step 1", "app.py", 2, "warning"),
        finding("pass  # TODO: step 2", "app.py", 3, "warning"),
    ]
    assert (todos["command"], todos["exit_code"]) == (None, None)  # it needs no command
    assert (lint["name"], lint["kind"], lint["status"]) == ("lint", "lint", "fail")
    assert lint["summary"] == "1 error (max 0), 1 warning (max 50)"
    assert lint["actual"] == {"errors": 1, "warnings": 1}
    assert lint["findings"] == [  # errors first
        finding("pass does nothing", "app.py", 2, "error"),
        finding("f has no docstring", "app.py", 1, "warning"),
    ]
    # The agent is told what to fix, the plugin's findings included.
    assert "2 TODO markers (max 1)" in verdict["continuation"]
    assert "app.py:3" in verdict["continuation"]


def test_an_installed_plugin_passes_when_its_evidence_is_clean(
    sites: dict[str, Path], tmp_path: Path, check_verdict: Any
) -> None:
    root = demo_project(tmp_path / "proj", todos=1, problems=[])

    res = agentgate(root, "verify", "--no-run", "--format", "json", site=sites["demo"])

    assert (res.returncode, res.stderr.count("Traceback")) == (0, 0), res.stderr
    verdict = check_verdict(json.loads(res.stdout))
    assert verdict["status"] == "pass"
    assert [(g["name"], g["kind"], g["status"], g["summary"]) for g in verdict["gates"]] == [
        ("todos", "todo-count", "pass", "1 TODO markers (max 1)"),
        ("lint", "lint", "pass", "0 errors (max 0), 0 warnings (max 50)"),
    ]
    assert verdict["gates"][0]["exit_code"] is None  # --no-run: the command was not run
    assert verdict["continuation"] is None


def test_an_unreadable_plugin_report_fails_with_the_plugins_words(
    sites: dict[str, Path], tmp_path: Path
) -> None:
    root = demo_project(tmp_path / "proj", todos=0, problems=[])
    (root / "demo-lint.json").write_text('{"issues": []}', encoding="utf-8")

    res = agentgate(root, "verify", "--no-run", "--format", "json", site=sites["demo"])

    assert res.returncode == 1, res.stderr
    lint = json.loads(res.stdout)["gates"][1]
    assert (lint["status"], lint["summary"]) == ("fail", "lint report could not be read")
    assert lint["problems"] == [
        "demo-lint.json: not a demo-lint report (KeyError('problems')) (run demo-lint --json)"
    ]


def test_explain_shows_the_plugins_kind_and_format(sites: dict[str, Path], tmp_path: Path) -> None:
    root = demo_project(tmp_path / "proj", todos=0, problems=[])

    text = agentgate(root, "explain", site=sites["demo"])
    doc = agentgate(root, "explain", "--format", "json", site=sites["demo"])

    assert (text.returncode, doc.returncode) == (0, 0), text.stderr + doc.stderr
    assert "todos [todo-count]" in text.stdout
    assert "reports:  demo-lint.json  (demo-lint)" in text.stdout
    lint_formats = next(
        line for line in text.stdout.splitlines() if line.startswith("lint formats")
    )
    assert "demo-lint" in lint_formats.split(": ", 1)[1].split(", ")
    explained = json.loads(doc.stdout)
    assert "demo-lint" in explained["formats"]["lint"]
    todos = explained["gates"][0]
    assert (todos["kind"], todos["thresholds"]) == ("todo-count", {"max_todos": 1})


def test_a_misspelt_hook_is_a_one_line_configuration_error(
    sites: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "agentgate.yml").write_text("gates:\n  lint:\n    report: lint.json\n")

    res = agentgate(root, "verify", "--format", "json", site=sites["typo"])

    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr == (
        "agentgate: error: the agentgate plugin 'typo' (agentgate_typo) is invalid: "
        "@hookimpl 'agentgate_gate_kind' is not an agentgate hook; "
        "did you mean 'agentgate_gate_kinds'?\n"
    )


def test_a_hook_with_an_argument_the_hook_lacks_is_named_on_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugin = plugin_module("agentgate_args", ARGS_PLUGIN)

    def load_entry_points(pm: pluggy.PluginManager, group: str, name: str | None = None) -> int:
        pm.register(plugin, "args")  # what pluggy does with the entry point `args`
        return 1

    monkeypatch.setattr(registry_module, "load_entry_points", load_entry_points)

    with pytest.raises(RegistryError) as raised:
        get_registry.__wrapped__()

    message = str(raised.value)
    assert message.startswith("the agentgate plugin 'agentgate_args' is invalid: ")
    assert "\n" not in message
    assert "'agentgate_lint_formats'" in message and "'config'" in message  # pluggy's words


def test_a_plugin_that_cannot_be_imported_or_whose_hook_raises_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken_import(pm: pluggy.PluginManager, group: str, name: str | None = None) -> int:
        raise ImportError("cannot import name 'Gone' from 'pytest_agentgate.plugin_api'")

    monkeypatch.setattr(registry_module, "load_entry_points", broken_import)
    with pytest.raises(RegistryError) as raised:
        get_registry.__wrapped__()
    message = str(raised.value)
    assert message.startswith("an agentgate plugin could not be loaded: ImportError: cannot")
    assert "\n" not in message

    plugin = plugin_module("agentgate_raises", RAISING_PLUGIN)

    def load_raising(pm: pluggy.PluginManager, group: str, name: str | None = None) -> int:
        pm.register(plugin, "raises")
        return 1

    monkeypatch.setattr(registry_module, "load_entry_points", load_raising)
    with pytest.raises(RegistryError) as raised:
        get_registry.__wrapped__()
    message = str(raised.value)
    assert message.startswith("an agentgate plugin failed while registering: ZeroDivisionError")
    assert "\n" not in message


# -- two plugins, one name --------------------------------------------------------------------


def plugin_module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def manager(*plugins: types.ModuleType) -> pluggy.PluginManager:
    """A plugin manager as the registry builds it: the hooks, the built-ins, then ``plugins``."""
    from pytest_agentgate import builtin

    pm = pluggy.PluginManager(plugin_api.PROJECT)
    pm.add_hookspecs(plugin_api)
    pm.register(builtin)
    for plugin in plugins:
        pm.register(plugin, plugin.__name__)
    pm.check_pending()
    return pm


def test_two_plugins_registering_one_lint_format_is_an_error_naming_it() -> None:
    first = plugin_module("agentgate_clash_a", CLASH_PLUGIN)
    second = plugin_module("agentgate_clash_b", CLASH_PLUGIN)
    assert "demo-lint" in build_registry(manager(first)).lint_formats

    with pytest.raises(RegistryError, match=r"^two plugins register the lint format 'demo-lint'$"):
        build_registry(manager(first, second))


def test_a_plugin_cannot_take_a_builtin_name() -> None:
    class Ruff:
        @hookimpl
        def agentgate_lint_formats(self) -> list[LintFormat]:
            return [LintFormat("ruff", lambda text, source: LintReport("ruff", source))]

    pm = manager()
    pm.register(Ruff(), "ruff-again")

    with pytest.raises(RegistryError, match=r"^two plugins register the lint format 'ruff'$"):
        build_registry(pm)
