"""Where pytest reads its settings, and what one file holds, as pytest 9 reads them
(``_pytest/config/findpaths.py``): ``pytest.toml`` and ``.pytest.toml`` (a ``[pytest]`` table,
values in TOML's own types), ``pytest.ini`` and ``.pytest.ini``, ``pyproject.toml``
(``[tool.pytest]`` in TOML's types, or ``[tool.pytest.ini_options]``), ``tox.ini``
(``[pytest]``) and ``setup.cfg`` (``[tool:pytest]``). In a folder, the first of these files, in
this order, that holds pytest's settings is the one pytest reads; a dedicated file (``pytest.*``)
counts even when it holds none.
"""

from __future__ import annotations

import configparser
import shlex
from dataclasses import dataclass
from typing import Any

from pytest_agentgate.texts import toml_document

FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
_DEDICATED = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini")


@dataclass(frozen=True)
class PytestTable:
    """The settings one file gives pytest, and the header of the table or section they are in
    (for line numbers)."""

    values: dict[str, Any]
    section: str


def read(name: str, text: str) -> PytestTable | None:
    """The settings file ``name`` (a file name, without folder) gives pytest; None when pytest
    reads none from it and looks on. A file pytest cannot parse gives none (pytest stops on it
    with an error), except a dedicated one, which gives empty settings."""
    if name in ("pytest.toml", ".pytest.toml"):
        data = toml_document(text)
        table = data.get("pytest") if data is not None else None
        return PytestTable(dict(table) if isinstance(table, dict) else {}, "pytest")
    if name == "pyproject.toml":
        data = toml_document(text)
        tool = data.get("tool") if data is not None else None
        pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(pytest_table, dict):
            return None
        native = {k: v for k, v in pytest_table.items() if k != "ini_options"}
        ini = pytest_table.get("ini_options")
        if native:
            # Both tables at once is an error to pytest; the gate reads them both.
            merged = {**ini, **native} if isinstance(ini, dict) else native
            return PytestTable(merged, "tool.pytest")
        if isinstance(ini, dict):
            return PytestTable(dict(ini), "tool.pytest.ini_options")
        return None
    section = {"setup.cfg": "tool:pytest"}.get(name, "pytest")
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return PytestTable({}, section) if name in _DEDICATED else None
    if parser.has_section(section):
        return PytestTable(dict(parser.items(section)), section)
    return PytestTable({}, section) if name in _DEDICATED else None


def as_text(value: Any) -> str:
    """A setting as one command-line string: a TOML list's items quoted as shell words."""
    if isinstance(value, (list, tuple)):
        return shlex.join(str(v) for v in value)
    return str(value)
