"""`agentgate init`: a commented starter agentgate.yml for the project that is here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_agentgate.config.model import ConfigError
from pytest_agentgate.linters import declared_linter
from pytest_agentgate.project import is_python_project, python_defaults
from pytest_agentgate.state.storage import STATE_DIR

HEADER = """\
# agentgate: the completion gate. `agentgate verify` runs these gates and judges them against
# the profile (strict | standard | relaxed); any threshold can be overridden per gate, and set
# to null to switch it off. `agentgate explain` prints every effective threshold.
"""


def _quote(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid YAML scalar


def _python(root: Path, profile: str) -> str:
    gates: dict[str, Any] = python_defaults(root)["gates"]
    return (
        HEADER
        + f"profile: {profile}\n"
        + "gates:\n"
        + f"  build:\n    command: {_quote(gates['build']['command'])}\n    timeout: 300\n"
        + "    # compileall's bytecode goes to agentgate's folder, not the project's\n"
        + "    env:\n"
        + "".join(f"      {k}: {_quote(v)}\n" for k, v in gates["build"]["env"].items())
        + f"  lint:\n    # {declared_linter(root).describe()}\n"
        + f"    command: {_quote(gates['lint']['command'])}\n"
        + f"    format: {gates['lint']['format']}\n"
        + f"  test:\n    command: {_quote(gates['test']['command'])}\n"
        + f"    report: {gates['test']['report']}\n    timeout: 900\n"
        + "  coverage:\n    # coverage.py data written by the test command; every metric is\n"
        + "    # computed from covered/total counts, never from a rounded percentage.\n"
        + f"    report: {gates['coverage']['report']}\n    format: coverage-data\n"
        + "attempts:\n  max: 3\n"
    )


def _table(package: dict[str, Any], key: str) -> dict[str, Any]:
    value = package.get(key)
    return value if isinstance(value, dict) else {}


def _read_package(path: Path) -> dict[str, Any]:
    try:
        package = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), None, f"cannot be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(str(path), None, f"invalid JSON: {exc.msg}", exc.lineno) from None
    if not isinstance(package, dict):
        raise ConfigError(str(path), None, "expected a JSON object at the top")
    return package


def _javascript(root: Path, profile: str) -> str:
    package = _read_package(root / "package.json")
    deps = {**_table(package, "dependencies"), **_table(package, "devDependencies")}
    scripts = _table(package, "scripts")
    lines = [HEADER.rstrip("\n"), f"profile: {profile}", "gates:"]
    if "typescript" in deps:
        lines += ["  build:", '    command: "npx tsc --noEmit --pretty false"']
    elif "build" in scripts:
        lines += ["  build:", '    command: "npm run build"']
    if "eslint" in deps:
        lines += ["  lint:", '    command: "npx eslint -f json ."', "    format: eslint"]
    junit = f"{STATE_DIR}/junit.xml"
    summary = "coverage/coverage-summary.json"
    env: list[str] = []
    if "vitest" in deps:
        test = (
            f"npx vitest run --reporter=default --reporter=junit --outputFile.junit={junit} "
            "--coverage --coverage.reporter=json-summary"
        )
    elif "jest" in deps:
        test = (
            "npx jest --ci --reporters=default --reporters=jest-junit --coverage "
            "--coverageReporters=json-summary"
        )
        env = [f"    env: {{JEST_JUNIT_OUTPUT_FILE: {junit}}}"]
    elif "mocha" in deps:
        test = (
            f"npx c8 --reporter=json-summary mocha --reporter mocha-junit-reporter "
            f"--reporter-options mochaFile={junit},includePending=true"
        )
    else:
        test = ""
    if test:
        lines += ["  test:", f"    command: {_quote(test)}", f"    report: {junit}", *env]
        lines += ["  coverage:", f"    report: {summary}", "    format: istanbul-summary"]
    elif "test" in scripts:
        # No known runner writes JUnit here: gate the test script on its exit code.
        lines += ["  custom:", "    - name: npm-test", '      command: "npm test"']
    if lines[-1] == "gates:":
        lines[-1] = "gates: {}  # no build, lint or test tool recognised: add your gates here"
    lines += ["attempts:", "  max: 3", ""]
    return "\n".join(lines)


def starter_config(root: Path, profile: str = "standard") -> str | None:
    """The starter config text, or None when no Python or JavaScript project is here.

    Raises :class:`ConfigError` for a package.json that cannot be read.
    """
    if (root / "package.json").is_file() and not (root / "pyproject.toml").is_file():
        return _javascript(root, profile)
    if is_python_project(root) is not None:
        return _python(root, profile)
    return None
