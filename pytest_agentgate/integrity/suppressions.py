"""suppression-added: a new ``noqa`` (ruff's, flake8's), ruff's ``ruff: disable[...]`` (a range),
``ruff: ignore[...]`` and ``ruff: file-ignore[...]``, ``type: ignore``, ``pragma: no cover``,
``nosec``, ``pylint: disable`` (``-next``, ``-msg``), ``pylint: skip-file``, ``eslint-disable``,
``@ts-ignore``... in a comment the change adds.

A suppression counts only in a comment (Python's by ``tokenize``, so "noqa" in a string is not
one; JS/TS comments by a tolerant scan). What was already there is not new: per file, the
suppressions at the base and now are compared as multisets of (kind, codes), so moving or
reformatting a suppressed line is not a finding, and a new one is reported at its line (the
lines the change added first).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from collections.abc import Iterable, Iterator

from pytest_agentgate.integrity.model import IntegrityFinding, Scan

PYTHON = (".py", ".pyi")
SCRIPT = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte")

_PY_PATTERNS = (
    (
        "noqa",
        re.compile(
            r"(?<![\w-])(?:ruff|flake8)?:?\s*noqa\b(?::?\s*([A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?",
            re.I,
        ),
    ),
    # ruff's own (0.15 and later): a range from `disable[...]` to its `enable[...]` (or to the
    # end of the scope), one line (`ignore[...]`), the file (`file-ignore[...]`); the codes are
    # rule codes or, in preview, rule names. Without codes ruff refuses them (RUF103).
    (
        "ruff: disable",
        re.compile(r"(?<![\w-])ruff\s*:\s*disable\s*\[([^\]]*)\]"),
    ),
    (
        "ruff: ignore",
        re.compile(r"(?<![\w-])ruff\s*:\s*ignore\s*\[([^\]]*)\]"),
    ),
    (
        "ruff: file-ignore",
        re.compile(r"(?<![\w-])ruff\s*:\s*file-ignore\s*\[([^\]]*)\]"),
    ),
    ("type: ignore", re.compile(r"\btype:\s*ignore\b(?:\[([\w\-, ]+)\])?")),
    ("pyright: ignore", re.compile(r"\bpyright:\s*ignore\b(?:\[([\w\-, ]+)\])?")),
    ("pragma: no cover", re.compile(r"\bpragma:\s*no\s*(?:cover|branch)\b", re.I)),
    ("nosec", re.compile(r"\bnosec\b(?:\s+([A-Z][0-9]+(?:[\s,]+[A-Z][0-9]+)*))?")),
    ("pylint: disable", re.compile(r"\bpylint:\s*disable(?:-next|-msg)?\s*=\s*([\w\-, ]+)")),
    ("pylint: skip-file", re.compile(r"\bpylint:\s*skip-file\b")),
    ("mypy: ignore-errors", re.compile(r"\bmypy:\s*ignore-errors\b")),
)
_JS_PATTERNS = (
    ("eslint-disable", re.compile(r"\beslint-disable(?:-next-line|-line)?\b([\w\-/@, ]*)")),
    ("@ts-ignore", re.compile(r"@ts-ignore\b")),
    ("@ts-expect-error", re.compile(r"@ts-expect-error\b")),
    ("@ts-nocheck", re.compile(r"@ts-nocheck\b")),
    ("istanbul ignore", re.compile(r"\bistanbul\s+ignore\b(?:\s+(next|if|else|file))?")),
    ("c8 ignore", re.compile(r"\bc8\s+ignore\b(?:\s+(next|start|stop))?")),
)
# Strings first, so that a "//" inside one is not taken for a comment.
_JS_TOKENS = re.compile(
    r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`|(//[^\n]*|/\*.*?\*/)", re.S
)

Key = tuple[str, str]  # (kind, codes)

# A word every pattern of the kind contains (lower case): a file with none of them has no
# suppression, and is not tokenized at all (most files of a large change).
_PY_WORDS = ("noqa", "ignore", "pragma", "nosec", "pylint", "ruff")
_JS_WORDS = ("eslint-disable", "@ts-", "istanbul", "c8")


def analyze(scan: Scan) -> Iterable[IntegrityFinding]:
    for path, status in sorted(scan.touched.items()):
        if status == "deleted" or not path.endswith((*PYTHON, *SCRIPT)):
            continue
        now = scan.sources.now(path)
        if now is None:
            continue
        before = scan.sources.at_base(scan.renamed_from.get(path, path)) or ""
        yield from _new_suppressions(path, before, now, scan.added_lines(path))


def _new_suppressions(
    path: str, before: str, now: str, added: set[int]
) -> Iterator[IntegrityFinding]:
    lowered = now.lower()
    if not any(word in lowered for word in (_PY_WORDS if path.endswith(PYTHON) else _JS_WORDS)):
        return
    found = list(suppressions(path, now))
    excess = Counter(key for _, key in found) - Counter(
        key for _, key in suppressions(path, before)
    )
    if not excess:
        return
    # The lines the change added first: those are the new ones.
    for line, key in sorted(found, key=lambda item: (item[0] not in added, item[0])):
        if excess[key] > 0:
            excess[key] -= 1
            kind, codes = key
            what = f"{kind} {codes}".strip() if codes else kind
            yield IntegrityFinding(
                "suppression-added",
                f"new `{what}`: the finding it silences must be fixed, not hidden",
                path,
                line,
            )


def suppressions(path: str, text: str) -> Iterator[tuple[int, Key]]:
    """(line, (kind, codes)) for every suppression comment in ``text``."""
    if path.endswith(PYTHON):
        for line, comment in _python_comments(text):
            yield from _match(line, comment, _PY_PATTERNS)
    else:
        for match in _JS_TOKENS.finditer(text):
            if match.group(1) is not None:
                line = text.count("\n", 0, match.start()) + 1
                yield from _match(line, match.group(1), _JS_PATTERNS)


def _match(
    line: int, comment: str, patterns: Iterable[tuple[str, re.Pattern[str]]]
) -> Iterator[tuple[int, Key]]:
    for kind, pattern in patterns:
        for found in pattern.finditer(comment):
            codes = (
                ",".join(sorted(c for c in re.split(r"[\s,]+", found.group(1) or "") if c))
                if pattern.groups
                else ""
            )
            yield line, (kind, codes)


def _python_comments(text: str) -> list[tuple[int, str]]:
    try:
        return [
            (token.start[0], token.string)
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # A file that does not tokenize: every `#` comment-looking tail, line by line.
        return [
            (number, line[line.index("#") :])
            for number, line in enumerate(text.splitlines(), start=1)
            if "#" in line
        ]
