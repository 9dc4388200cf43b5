"""suppression-added: a new ``noqa`` (ruff's, flake8's), ruff's ``ruff: disable[...]`` (a range),
``ruff: ignore[...]`` and ``ruff: file-ignore[...]``, ``type: ignore``, ``pragma: no cover``,
``nosec``, ``pylint: disable`` (``-next``, ``-msg``), ``pylint: skip-file``, ``eslint-disable``,
``@ts-ignore``... in a comment the change adds; and a line the change adds that coverage.py
excludes by a comment or a string, or by an ``if TYPE_CHECKING:`` whose name is not typing's
(coverage.py's own regexes, as the base's settings give them: see ``exclusions``).

A suppression counts only in a comment (Python's by ``tokenize``, so "noqa" in a string is not
one; JS/TS comments by a tolerant scan). What was already there is not new: per file, the
suppressions at the base and now are compared as multisets of (kind, codes), so moving or
reformatting a suppressed line is not a finding, and a new one is reported at its line (the
lines the change added first).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Iterator

from pytest_agentgate import syntax
from pytest_agentgate.integrity.model import IntegrityFinding, Scan, past_the_base
from pytest_agentgate.integrity.settings import (
    coverage_exclusions_at_base,
    coverage_sources_at_base,
    measured_by,
)

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

# Suppressions only a type checker reads (mypy, pyright, pytype, pyre; TypeScript's compiler):
# in a project whose gates run none, they hide nothing the gate measures. A test that calls a
# function wrongly on purpose, inside `pytest.raises(TypeError)`, needs one under the project's
# own strict mypy (review 15: blinker, markupsafe).
_TYPE_CHECKERS_OWN = tuple(
    f"new `{kind}"
    for kind in (
        "type: ignore", "pyright: ignore", "mypy: ignore-errors", "@ts-ignore",
        "@ts-expect-error", "@ts-nocheck",
    )
)  # fmt: skip
_CHECKERS = re.compile(r"d?mypy|(?:based)?pyright|pytype|pyre|tsc|vue-tsc")
# Programs that run what the project's own files say (a tox environment, a make target, an
# npm script, pre-commit's hooks, a shell script): one may run a type checker.
_RUNNERS = re.compile(
    r"tox|nox|make|pre-commit|prek|npm|npx|yarn|pnpm|bun|bunx|just|hatch|invoke|poe|pdm|"
    r"poetry|uv|task|bash|sh|zsh|\./"
)
# pytest plugins that make the type checker a test (pytest-mypy's `--mypy`).
_TYPE_CHECKED_TESTS = re.compile(r"--(?:mypy|pyright)\b")
_PYTEST_SETTINGS = ("pyproject.toml", "pytest.ini", ".pytest.ini", "setup.cfg", "tox.ini")

# A word every pattern of the kind contains (lower case): a file with none of them has no
# suppression, and is not tokenized at all (most files of a large change).
_PY_WORDS = ("noqa", "ignore", "pragma", "nosec", "pylint", "ruff")
_JS_WORDS = ("eslint-disable", "@ts-", "istanbul", "c8")


def analyze(scan: Scan) -> Iterable[IntegrityFinding]:
    patterns: list[re.Pattern[str]] | None = None
    is_test: Callable[[str], bool] | None = None
    sources: list[str] = []
    checked: bool | None = None
    for path, status in sorted(scan.touched.items()):
        if status == "deleted" or not path.endswith((*PYTHON, *SCRIPT)):
            continue
        now = scan.sources.now(path)
        if now is None:
            continue
        before = scan.sources.at_base(scan.renamed_from.get(path, path)) or ""
        added = scan.added_lines(path)
        for finding in _new_suppressions(path, before, now, added):
            if finding.message.startswith(_TYPE_CHECKERS_OWN):
                if checked is None:
                    checked = type_checked(scan)
                if not checked:
                    continue  # it hides nothing from a gate: no gate runs a type checker
            yield finding
        if path.endswith(".py"):
            if patterns is None:
                patterns = _compiled(coverage_exclusions_at_base(scan))
                is_test = _test_files(scan)
                sources = coverage_sources_at_base(scan)
            assert is_test is not None
            strings = True
            if is_test(path):
                # A test file the base's coverage does not measure: what coverage.py excludes
                # there is in no figure. Unknown (no source named): a string in a test is its
                # data (a tool's test about pragmas), not an exclusion.
                if sources and not measured_by(path, sources):
                    continue
                strings = bool(sources)
            yield from _new_exclusions(path, before, now, added, patterns, strings=strings)


def type_checked(scan: Scan) -> bool:
    """Whether a gate of the verdict may run a type checker: a command that names one, or that
    runs what the project's files say (a tox environment, an npm script: it may), a lint gate
    reading one's output, or pytest settings that make one a test."""
    for gate in scan.config.gates:
        if not gate.enabled:
            continue
        programs = _programs(gate.command or "")
        if gate.format in ("mypy", "pyright", "tsc"):
            return True
        if any(_CHECKERS.fullmatch(p) or _RUNNERS.fullmatch(p) for p in programs):
            return True
    return any(
        _TYPE_CHECKED_TESTS.search(scan.sources.now(name) or "") for name in _PYTEST_SETTINGS
    )


def _programs(command: str) -> list[str]:
    """The programs a command line runs, by name: its first word, each word after a `&&`,
    `||`, `;` or `|`, and a module `-m` runs (`python -m mypy`), without their folders (a
    `.tox/py311/bin/python` runs python, not tox: review 16); a script run by its path
    (`./check`, `x.sh`) is named `./`."""
    import shlex

    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    found: list[str] = []
    starts = True
    for index, word in enumerate(words):
        if word in ("&&", "||", ";", "|"):
            starts = True
            continue
        if starts or (index and words[index - 1] == "-m"):
            if word.startswith("./") or word.endswith(".sh"):
                found.append("./")
            else:
                found.append(word.rsplit("/", 1)[-1].removesuffix(".exe").lower())
        starts = False
        if word in ("run", "exec", "x") and found and found[-1] in ("uv", "npx", "pnpm", "bunx"):
            starts = True  # `uv run mypy`: the program after the runner runs too
    return found


def _new_suppressions(
    path: str, before: str, now: str, added: set[int]
) -> Iterator[IntegrityFinding]:
    lowered = now.lower()
    if not any(word in lowered for word in (_PY_WORDS if path.endswith(PYTHON) else _JS_WORDS)):
        return
    for line, key in past_the_base(_counted(path, now), _counted(path, before), added):
        kind, codes = key
        what = f"{kind} {codes}".strip() if codes else kind
        yield IntegrityFinding(
            "suppression-added",
            f"new `{what}`: the finding it silences must be fixed, not hidden",
            path,
            line,
        )


def _counted(path: str, text: str) -> list[tuple[int, Key]]:
    """The suppressions of ``text`` that suppress something: a coverage pragma on a line that
    is only a comment (outside brackets) leaves no statement out and opens no block, so coverage
    figures are the same with or without it (a comment that mentions the pragma)."""
    found = list(suppressions(path, text))
    if not path.endswith(PYTHON) or not any(kind == "pragma: no cover" for _, (kind, _) in found):
        return found
    lone = comment_only_lines(text)
    return [item for item in found if not (item[1][0] == "pragma: no cover" and item[0] in lone)]


def comment_only_lines(text: str) -> set[int]:
    """The lines of ``text`` that hold only a comment, between statements (not inside the
    brackets of one, whose lines coverage.py counts as the statement's). None when ``text``
    does not tokenize."""
    out: set[int] = set()
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(depth - 1, 0)
            elif (
                token.type == tokenize.COMMENT
                and depth == 0
                and not token.line[: token.start[1]].strip()
            ):
                out.add(token.start[0])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set()
    return out


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


# -- coverage.py's exclusions -------------------------------------------------------------------
#
# coverage.py leaves out of its figures every line one of its exclusion regexes matches (its
# defaults, or the project's ``exclude_lines``, plus ``exclude_also``; ``partial_branches`` and
# ``partial_also`` for branches), and the whole block when that line opens one. Such a line
# the change adds is a suppression when the text that made it match is no code: a comment
# (``# pragma no cover``, a ``def`` line whose comment ends in ``: ...``) or a string, or
# ``if TYPE_CHECKING:`` where the name is not typing's. The code idioms an exclusion is meant
# for (``if TYPE_CHECKING:`` from typing, a stub whose body is ``...``, the project's own
# patterns matched by code) are not.


def _compiled(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    out = []
    for pattern in patterns:
        try:
            out.append(re.compile(pattern, re.MULTILINE))
        except re.error:
            continue  # coverage.py refuses it too
    return out


def _test_files(scan: Scan) -> Callable[[str], bool]:
    """Whether a file is a test: pytest collects it by the base's settings, or it is under a
    tests folder."""
    from pytest_agentgate.integrity.tests_python import TestFiles, read_settings
    from pytest_agentgate.project import TEST_DIRS

    which = TestFiles(read_settings(scan.sources.at_base), scan.sources.at_base)

    def is_test(path: str) -> bool:
        parts = path.split("/")[:-1]
        return which.is_test(path) or any(part in TEST_DIRS for part in parts)

    return is_test


def _new_exclusions(
    path: str,
    before: str,
    now: str,
    added: set[int],
    patterns: list[re.Pattern[str]],
    *,
    strings: bool = True,
) -> Iterator[IntegrityFinding]:
    if not any(p.search(now) for p in patterns):
        return
    found = exclusions(now, patterns, strings=strings)
    had = exclusions(before, patterns, strings=strings)
    for line, key in past_the_base(found, had, added):
        yield IntegrityFinding(
            "suppression-added",
            f"new coverage exclusion `{key}`: coverage.py leaves this line (and the block "
            "it opens) out of its figures; the code must be tested, not hidden",
            path,
            line,
        )


def exclusions(
    text: str, patterns: list[re.Pattern[str]], *, strings: bool = True
) -> list[tuple[int, str]]:
    """(line, the text matched) for every line of ``text`` coverage.py excludes by a comment,
    a string (unless ``strings`` is false), or a ``TYPE_CHECKING`` that is not typing's; a
    line already a ``pragma: no cover`` suppression is left to that one."""
    if not text or not any(p.search(text) for p in patterns):
        return []
    comments, string_spans = _comment_and_string_spans(text)
    blanked = list(text)
    for start, end in comments:
        blanked[start:end] = " " * (end - start)
    code = "".join(blanked)
    pragma_lines = {
        line for line, (kind, _) in suppressions("x.py", text) if kind.startswith("pragma")
    }
    # A line that is only a comment leaves no statement out and opens no block: coverage.py's
    # figures are the same with or without it (a comment that mentions an exclusion).
    lone = comment_only_lines(text)
    try:
        tree: ast.Module | None = syntax.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    foreign = _foreign_type_checking(tree)
    bare_strings = {
        line
        for node in (ast.walk(tree) if tree is not None else ())
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    starts = _statement_lines(tree)
    out: dict[int, str] = {}
    for pattern in patterns:
        in_code = {_line_of(code, m) for m in pattern.finditer(code)}
        for match in pattern.finditer(text):
            line = _line_of(text, match)
            if line in out or line in pragma_lines:
                continue
            last = text.count("\n", 0, max(match.end() - 1, match.start())) + 1
            if all(n in lone for n in range(line, last + 1)):
                continue
            if line in bare_strings:
                continue  # a docstring's line: it opens no block, and leaves no code out
            matched = match.group(0)
            in_string = any(a <= match.start() < b for a, b in string_spans)
            if in_string and not strings:
                continue  # a test's data
            not_code = line not in in_code or in_string
            # A match on a line where no statement starts lies inside one (a lone `...` in a
            # function's parameter list): coverage.py then leaves out the whole statement, and
            # its block (red team 35: an untested function gone from every figure).
            # Only a line that is the match alone: `tuple[int, ...]` in a wrapped signature is
            # typing's, and a pattern the base chose matches it wrapped or not (review 22).
            whole = text.splitlines()[line - 1].strip() == matched.strip()
            inside = starts is not None and line not in starts and whole
            if not_code or inside or ("TYPE_CHECKING" in matched and foreign(matched)):
                out[line] = " ".join(matched.split())[:60]
    return sorted(out.items())


def _statement_lines(tree: ast.Module | None) -> set[int] | None:
    """The lines where a statement, a decorator or an ``except`` starts; None unparsed."""
    if tree is None:
        return None
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.stmt, ast.ExceptHandler)):
            lines.add(node.lineno)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lines.update(d.lineno for d in node.decorator_list)
    return lines


def _line_of(text: str, match: re.Match[str]) -> int:
    """The line of the first character a match shows (a ``^\\s*`` may start it a line
    before)."""
    matched = match.group(0)
    offset = match.start() + len(matched) - len(matched.lstrip())
    return text.count("\n", 0, offset) + 1


def _comment_and_string_spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Where the comments and the strings are (offsets into ``text``)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(row: int, col: int) -> int:
        return starts[row - 1] + col if row - 1 < len(starts) else len(text)

    comments: list[tuple[int, int]] = []
    strings: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments.append((offset(*token.start), offset(*token.end)))
            elif token.type == tokenize.STRING or token.type in _FSTRING_PARTS:
                strings.append((offset(*token.start), offset(*token.end)))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            if "#" in line:
                comments.append((starts[number - 1] + line.index("#"), starts[number]))
    return comments, strings


_FSTRING_PARTS = {
    getattr(tokenize, name)
    for name in ("FSTRING_MIDDLE", "TSTRING_MIDDLE")
    if hasattr(tokenize, name)
}


def _foreign_type_checking(tree: ast.Module | None) -> Callable[[str], bool]:
    """Whether ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) in ``text`` reads a name
    bound to something other than typing's: an import of another module's name as
    ``TYPE_CHECKING``, a loop or ``with`` target, a ``typing`` that is another module. (An
    assignment of a value is the under-test analyzer's finding.) Without a tree, none."""
    if tree is None:
        return lambda matched: False
    name_foreign = typing_foreign = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name
                if bound == "TYPE_CHECKING" and not (
                    node.module in _TYPING and alias.name == "TYPE_CHECKING" and not node.level
                ):
                    name_foreign = True
                if bound == "typing":
                    typing_foreign = True
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".", 1)[0]
                if bound == "TYPE_CHECKING":
                    name_foreign = True
                if bound == "typing" and alias.name not in _TYPING:
                    typing_foreign = True
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            name_foreign |= _binds(node.target, "TYPE_CHECKING")
            typing_foreign |= _binds(node.target, "typing")
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    name_foreign |= _binds(item.optional_vars, "TYPE_CHECKING")
                    typing_foreign |= _binds(item.optional_vars, "typing")
        elif isinstance(node, ast.NamedExpr):
            name_foreign |= _binds(node.target, "TYPE_CHECKING")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name_foreign |= node.name == "TYPE_CHECKING"
            typing_foreign |= node.name == "typing"
        elif isinstance(node, ast.Assign):
            typing_foreign |= any(_binds(t, "typing") for t in node.targets)

    def foreign(matched: str) -> bool:
        return typing_foreign if "typing.TYPE_CHECKING" in matched else name_foreign

    return foreign


_TYPING = ("typing", "typing_extensions")


def _binds(target: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))
