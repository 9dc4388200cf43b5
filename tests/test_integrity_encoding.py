"""A Python file's text read as Python reads it: its PEP 263 coding declaration honoured.

Python decodes a source file by the encoding it declares. Read as UTF-8 instead, a file can
show a comment where Python runs a ``return`` (UTF-7's ``+AAo-`` is a line break), or not be
read at all (Latin-1) and so escape every integrity rule.
"""

from __future__ import annotations

import pytest

TESTS = """\
from calc import add


def test_add_zero():
    assert add(1, 0) == 1


def test_add():
    assert add(2, 2) == 4
"""


@pytest.mark.parametrize(
    ("path", "data", "text"),
    [
        (
            "a.py",
            b"# -*- coding: utf-7 -*-\n# x +AAo-return\n",
            "# -*- coding: utf-7 -*-\n# x \nreturn\n",
        ),
        ("a.py", b"# coding: latin-1\n# r\xe9vis\xe9\n", "# coding: latin-1\n# r\xe9vis\xe9\n"),
        (
            "a.py",
            b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\x80'\n",
            "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\u20ac'\n",
        ),
        ("a.py", b"\xef\xbb\xbfx = 1\n", "x = 1\n"),  # the BOM is not part of the code
        ("a.py", b"x = '\xc3\xa9'\n", "x = '\xe9'\n"),  # no declaration: UTF-8
        ("a.py", b"# coding: latin-1\n\xff", "# coding: latin-1\n\xff"),
        ("a.py", b"# coding: rot13\nk = 1\n", None),  # no text codec: Python refuses it too
        ("a.py", b"# coding: no-such-codec\n", None),
        ("a.py", b"\xff\n", None),  # not UTF-8, and no declaration
        ("a.py", b"\n\n# coding: latin-1\n\xe9\n", None),  # a declaration on line 3 is none
        ("notes.txt", b"# coding: latin-1\n\xe9\n", None),  # only Python files declare
    ],
)
def test_a_file_is_decoded_as_python_decodes_it(path: str, data: bytes, text: str | None) -> None:
    from pytest_agentgate.texts import decode

    assert decode(path, data) == text
    if text is not None and path.endswith(".py"):
        try:
            expected = compile(data, path, "exec").co_consts  # Python reads the same code
        except SyntaxError:
            return
        assert compile(text, path, "exec").co_consts == expected


@pytest.mark.parametrize(
    ("data", "hidden"),
    [
        (b"# -*- coding: utf-7 -*-\n# x +AAo-return\n", True),
        (b"# -*- coding: raw_unicode_escape -*-\n# x \\u000areturn\n", True),
        (b"# -*- coding: unicode_escape -*-\n# x \\x0areturn\n", True),
        (b"# coding: shift_jis\nx = '\x81\\'\n", True),  # its trail byte is a backslash
        (b"# coding: latin-1\n# r\xe9vis\xe9es\n", False),
        (b"# coding: cp1252\nx = '\x93q\x94'\n", False),
        (b"# coding: ascii\nx = 1\n", False),
        (b"# -*- coding: utf-8 -*-\nx = '\xc3\xa9'\n", False),
        (b"# -*- coding: utf-7 -*-\nx = 1\n", False),  # utf-7, but it hides nothing
    ],
)
def test_a_declared_encoding_hides_code_when_its_ascii_reads_otherwise(
    data: bytes, hidden: bool
) -> None:
    from pytest_agentgate.texts import decode, disguised

    text = decode("a.py", data)
    assert text is not None
    assert disguised(data, text) is hidden
