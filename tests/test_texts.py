"""How agentgate reads the settings files of a project it does not own: what the tool would
read, or nothing (the tool itself reports a broken file), never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_agentgate.texts import read_regular, read_regular_text, toml_document


def test_a_settings_file_reads_as_its_tool_reads_it() -> None:
    assert toml_document('[tool.ruff]\nselect = ["E"]\n') == {"tool": {"ruff": {"select": ["E"]}}}


def test_an_invalid_or_bottomless_settings_file_reads_as_none() -> None:
    assert toml_document("[tool.ruff\n") is None
    # Nested deeper than the parser recurses: tomllib raises RecursionError, not a decode error.
    assert toml_document("a = " + "[" * 5000 + "]" * 5000) is None
    assert toml_document("a = " + "{b = " * 5000 + "1" + "}" * 5000) is None


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody writes to it: a plain read would wait for ever
    (tmp_path / "file.py").write_bytes(b"x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "file.py")
    (tmp_path / "to_fifo.py").symlink_to(fifo)
    assert read_regular(tmp_path / "link.py") == b"x = 1\n"  # a link to a file: the file
    for path in (fifo, tmp_path / "to_fifo.py", Path("/dev/zero"), tmp_path):
        with pytest.raises(OSError):
            read_regular(path)
    assert read_regular_text(tmp_path / "file.py") == "x = 1\n"
