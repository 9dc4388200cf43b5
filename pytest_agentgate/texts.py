"""A file's text as the program that runs it reads it.

Python decodes a source file by PEP 263: a byte-order mark, else a coding declaration in its
first two lines (``# -*- coding: latin-1 -*-``), else UTF-8. agentgate reads a Python file's
text the same way wherever it looks at one, so the code it checks is the code Python runs (a
file read as UTF-8 where it declares ``utf-7`` would show a comment where Python runs a
``return``). Every other file is read as UTF-8.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import re
import stat
import sys
import tokenize
from pathlib import Path
from typing import Any

PYTHON_SUFFIXES = (".py", ".pyw", ".pyi")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def read_regular(path: Path | str) -> bytes:
    """The bytes of the regular file ``path`` (a symbolic link to one is followed). Anything
    else is an :class:`OSError`: a FIFO, a device or ``/dev/zero`` put in a file's place by the
    change would be read for ever. Opened without blocking, so a FIFO is seen, not waited on."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return handle.read()


def read_regular_text(path: Path | str, *, errors: str = "strict") -> str:
    """:func:`read_regular` as UTF-8 (``UnicodeDecodeError``, a ``ValueError``, when it is
    not, unless ``errors`` says otherwise)."""
    return read_regular(path).decode("utf-8", errors)


def is_python(path: str) -> bool:
    return path.endswith(PYTHON_SUFFIXES)


def source_encoding(data: bytes) -> str | None:
    """The codec Python decodes the source ``data`` with, by its canonical name (None: the
    declaration names no codec Python knows, or is not legal)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return codecs.lookup(encoding).name
    except (SyntaxError, LookupError):
        return None


def decode(path: str, data: bytes) -> str | None:
    """The text of the file ``path`` whose bytes are ``data`` (None: it does not decode)."""
    encoding = source_encoding(data) if is_python(path) else "utf-8"
    if encoding is None:
        return None
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):  # LookupError: not a text codec (rot13, zlib)
        return None


def universal_newlines(text: str) -> str:
    r"""``\r\n`` and ``\r`` as ``\n``, as a file opened in text mode reads them."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def disguised(data: bytes, text: str) -> bool:
    """Whether ``text``, the source ``data`` as Python decodes it, reads otherwise than the
    same bytes read as UTF-8 (as an editor, a linter or a diff shows them): its ASCII, the
    code's keywords, names and line breaks, differ. Characters outside ASCII are compared
    only by where they are: a Latin-1 ``é`` that UTF-8 shows as a replacement character hides
    no code."""
    shown = data.decode("utf-8", "replace").removeprefix("\ufeff")
    return _NON_ASCII.sub("\x80", shown) != _NON_ASCII.sub("\x80", text.removeprefix("\ufeff"))


def toml_document(text: str) -> dict[str, Any] | None:
    """``text`` parsed as TOML, for the readers that look at a project's settings without
    judging the file itself (None: it is not TOML, or is nested deeper than the parser
    recurses). The tool that owns the file reports its errors; agentgate's own configuration
    is read with its errors named (``config.files``)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None
