"""How agentgate reads the settings files of a project it does not own: what the tool would
read, or nothing (the tool itself reports a broken file), never a traceback."""

from __future__ import annotations

from pytest_agentgate.texts import toml_document


def test_a_settings_file_reads_as_its_tool_reads_it() -> None:
    assert toml_document('[tool.ruff]\nselect = ["E"]\n') == {"tool": {"ruff": {"select": ["E"]}}}


def test_an_invalid_or_bottomless_settings_file_reads_as_none() -> None:
    assert toml_document("[tool.ruff\n") is None
    # Nested deeper than the parser recurses: tomllib raises RecursionError, not a decode error.
    assert toml_document("a = " + "[" * 5000 + "]" * 5000) is None
    assert toml_document("a = " + "{b = " * 5000 + "1" + "}" * 5000) is None
