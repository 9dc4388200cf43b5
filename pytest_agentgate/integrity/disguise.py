"""Python source whose declared encoding makes it read one way and run another.

``source-disguised``: a Python file of the change declares an encoding (PEP 263, ``# -*- coding:
utf-7 -*-``) under which its text differs from what the same bytes show as UTF-8, the way an
editor, a linter, ``git diff`` and a reviewer read them. In UTF-7 ``# note +AAo-    return`` is a
comment to all of them and a ``return`` to Python; ``raw_unicode_escape`` does the same with
``\\u000a``. The code Python runs is not the code anyone reviewed. agentgate's own analyzers
read the file as Python does (:mod:`pytest_agentgate.texts`), so they see the hidden code too;
the finding says that what a human sees is not it.

A file counts when it is new, or its declared encoding is not the base's: a file the project
kept in such an encoding before the change is its own choice. Latin-1 or cp1252 text whose
ASCII reads the same both ways hides nothing and is no finding.

A Python file of the change nested deeper than Python's parser reads at its default limit is
the same rule (red team 51): no analyzer of the change could read it, and Python runs it under
a raised limit (a conftest's ``sys.setrecursionlimit``) or from a compiled file.
"""

from __future__ import annotations

from collections.abc import Iterator

from pytest_agentgate import syntax
from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.texts import decode, disguised, is_python, read_regular, source_encoding

RULE = "source-disguised"


def analyze(scan: Scan) -> Iterator[IntegrityFinding]:
    for path, status in sorted(scan.touched.items()):
        if status == "deleted" or not is_python(path):
            continue
        try:
            data = read_regular(scan.root / path)
        except OSError:
            continue
        encoding = source_encoding(data)
        text = decode(path, data)
        if text is not None and _too_deep(text):
            yield IntegrityFinding(
                RULE,
                f"{path} nests its code deeper than agentgate reads it (Python's parser gives "
                "up on it at its default recursion limit): Python may still run it, under a "
                "raised limit or from a compiled file, and nothing of it was judged; write the "
                "expression or the elif chain in pieces",
                path,
            )
            continue
        if encoding is None or text is None or not disguised(data, text):
            continue
        before = scan.sources.at_base(scan.renamed_from.get(path, path))
        if before is not None and _declared(before) == encoding:
            continue
        yield IntegrityFinding(
            RULE,
            f"{path} declares the encoding {encoding}, under which Python reads code that "
            "its text read as UTF-8 (by an editor, a linter, a diff, a reviewer) does not show",
            path,
            _line(data),
        )


def _too_deep(text: str) -> bool:
    """Whether Python's parser gives up on ``text`` for its depth (red team 51: a test file
    of 3000 elif branches, imported under a conftest's ``sys.setrecursionlimit``, that every
    analyzer of the change read as nothing to judge)."""
    try:
        syntax.parse(text)
    except (RecursionError, MemoryError):
        return True
    except (SyntaxError, ValueError):
        return False  # Python does not run it either: the build and the linter say so
    return False


def _declared(text: str) -> str | None:
    """The encoding the base's text (decoded) declares: its first two lines are ASCII."""
    head = "\n".join(text.splitlines()[:2]) + "\n"
    return source_encoding(head.encode("utf-8", "replace"))


def _line(data: bytes) -> int:
    """The line of the coding declaration (1 or 2)."""
    first = data.split(b"\n", 1)[0]
    return 1 if b"coding" in first else 2
