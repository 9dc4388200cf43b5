"""What the change does to the JavaScript and TypeScript tests: removed, skipped, focused with
``.only``, rerun, or asserting nothing.

No JS parser: a tolerant scan blanks comments, strings, template literals and regular
expressions (keeping every offset and newline), then reads the ``it``/``test``/``describe``
calls (jest, vitest, mocha, jasmine, playwright), their modifiers (``.skip``, ``.only``,
``.todo``, ``.each``, ``.skipIf(...)``...) and their bodies by matching brackets. A file it
cannot make sense of yields fewer tests on both sides, never an error. See
:mod:`pytest_agentgate.integrity.testfiles` for how the two sides are compared.
"""

from __future__ import annotations

import bisect
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property, partial
from pathlib import PurePosixPath

from pytest_agentgate.integrity.model import IntegrityFinding, Scan
from pytest_agentgate.integrity.testfiles import (
    FACTS,
    Body,
    Case,
    Category,
    Change,
    CodeRemoved,
    Mark,
    Side,
    Words,
    compare,
    tokens,
)

JS_EXTENSIONS = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
WORDS = Words("the test runner", "a test file name (*.test.*, *.spec.*, __tests__/)")

TESTS = {"it", "test", "specify"}
SUITES = {"describe", "context", "suite"}
SKIPPED_HEADS = {"xit", "xtest", "xspecify", "xdescribe", "xcontext"}
FOCUSED_HEADS = {"fit", "fdescribe"}
HEADS = TESTS | SUITES | SKIPPED_HEADS | FOCUSED_HEADS
# Modifiers a test call may carry; any other (test.step, test.use, test.beforeEach) is no test.
SKIPPING = {"skip", "todo", "fixme", "failing", "fails"}
CONDITIONAL = {"skipIf", "runIf"}
NEUTRAL = {"each", "concurrent", "serial", "parallel", "sequential", "shuffle", "describe"}
MODIFIERS = SKIPPING | CONDITIONAL | NEUTRAL | {"only"}

_IDENT = r"[A-Za-z_$][\w$]*"
_CALL = re.compile(
    rf"(?<![\w$.])(?P<head>{'|'.join(sorted(HEADS, key=len, reverse=True))})"
    rf"(?P<chain>(?:\s*\.\s*{_IDENT})*)\s*(?=[(`])"
)
_ASSERT = re.compile(
    r"(?<![\w$.])(?:expect|assert\w*)(?:\s*\.\s*[\w$]+)*\s*\("
    r"|\.should\b|(?<![\w$.])should\s*\("
    r"|(?<![\w$.])t\s*\.\s*(?:is|not|deepEqual|notDeepEqual|truthy|falsy|true|false|throws"
    r"|throwsAsync|notThrows|regex|snapshot|like|equal|same|ok|match|fail|assert)\s*\("
    r"|(?<![\w$.])throw\b"
    # Testing Library's queries throw when nothing matches: they assert.
    r"|(?<![\w$])(?:get|getAll|find|findAll)By[A-Z]\w*\s*\("
)
# TypeScript a type test states: `x satisfies T`, `const x: T`, `create<T>(...)`.
_TYPED = re.compile(
    r"\bsatisfies\b|\b(?:const|let|var)\s+[\w$]+\s*:\s*[\w${\[(]|[\w$]\s*<[^<>;()=]+>\s*\("
    r"|\)\s*:\s*[\w$.<>\[\]]+\s*=>"
)
_IMPORT = re.compile(
    r"\bimport\s+(?:type\s+)?(?:(?P<default>[\w$]+)\s*,?\s*)?"
    r"(?:\{(?P<named>[^}]*)\}|\*\s*as\s+(?P<star>[\w$]+))?\s*from\s*['\"](?P<path>[^'\"]+)['\"]"
    r"|\b(?:const|let|var)\s+(?:\{(?P<required>[^}]*)\}|(?P<single>[\w$]+))\s*=\s*"
    r"require\(\s*['\"](?P<rpath>[^'\"]+)['\"]\s*\)"
)
_EXIT = re.compile(r"(?<![\w$.])process\s*\.\s*exit\s*\(")
_NEVER = re.compile(r"\b(?:if|while)\s*\(\s*(?:false|0|!\s*true|!\s*1|null|undefined)\s*\)\s*\{")
_MATCHER = re.compile(r"\s*\.\s*(?:toBe|toEqual|toStrictEqual)\s*\(")
_BODY_SKIP = re.compile(r"(?<![\w$.])(?:this|ctx|t)\s*\.\s*skip\s*\(")
# A test function's skipping or focusing modifier kept under another name, to be called later
# where the call parser does not look for it: `const later = it.skip;`, `= describe.only`.
_ALIAS = re.compile(
    r"(?<![=!<>])=\s*(?:it|test|describe|context|specify|suite)\s*(?:\.\s*[\w$]+\s*)*?"
    r"\.\s*(?:skip|only|todo|fixme|failing)\b(?!\s*[\w$(`])"
)
_RERUN = re.compile(
    r"(?<![\w$.])jest\s*\.\s*retryTimes\s*\("
    r"|(?<![\w$.])this\s*\.\s*retries\s*\("
    r"|\.\s*configure\s*\(\s*\{[^}]*\bretries\s*:"
)
_RETRY_OPTION = re.compile(r"\bretr(?:y|ies)\s*:")
_FUNCTION = re.compile(
    rf"^(?:async\s+)?(?:function\b|\([^()]*\)\s*(?::[^=]*)?=>|{_IDENT}\s*=>)", re.DOTALL
)
_LITERAL = re.compile(r"^(?:true|false|null|undefined|-?\d[\w.]*|(['\"`])\s*\1|)$")
_DEFINED = re.compile(
    rf"^[ \t]*(?:export\s+)?(?:default\s+)?(?:async\s+)?"
    rf"(?:function\s*\*?\s*({_IDENT})|class\s+({_IDENT})"
    rf"|(?:const|let|var)\s+({_IDENT})\s*(?::[^=\n]+)?=)",
    re.MULTILINE,
)
_HELPER = re.compile(
    rf"(?:\bfunction\s*\*?\s*({_IDENT})\s*\(|\b(?:const|let|var)\s+({_IDENT})\s*=\s*"
    rf"(?:async\s*)?(?:function\b|\([^()]*\)\s*(?::[^=]*)?=>|{_IDENT}\s*=>))"
)
_STRING = re.compile(r"(['\"`])((?:\\.|(?!\1)[^\\\n])*)\1")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^")
_REGEX_WORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void"}
_REGEX_WORDS |= {"throw", "yield", "await"}


def package_name(text: str | None) -> str | None:
    """The ``name`` of a package.json, if it has one."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else None


def is_test_file(path: str) -> bool:
    pure = PurePosixPath(path)
    if not path.endswith(JS_EXTENSIONS) or "node_modules" in pure.parts:
        return False
    stem_parts = pure.name.split(".")
    return "test" in stem_parts[1:-1] or "spec" in stem_parts[1:-1] or "__tests__" in pure.parts


def is_code(path: str) -> bool:
    return path.endswith(JS_EXTENSIONS) and not is_test_file(path)


def analyze(scan: Scan) -> Iterable[IntegrityFinding]:
    if not any(is_test_file(p) for p in [*scan.touched, *scan.renamed_from.values()]):
        return []
    package = package_name(scan.sources.at_base("package.json"))
    base_side, now_side = Side(), Side()
    origin: dict[str, str] = {}
    gone: dict[str, str] = {}
    for path, status in sorted(scan.touched.items()):
        base_path = None if status == "added" else scan.renamed_from.get(path, path)
        now_test = status != "deleted" and is_test_file(path)
        base_test = base_path is not None and is_test_file(base_path)
        if now_test:
            text = scan.sources.now(path)
            if text is None:
                continue
            origin[path] = base_path or path
            JsFile(path, text, package).read_into(now_side)
        if base_test and base_path is not None:
            text = scan.sources.at_base(base_path)
            if text is None:
                continue
            JsFile(base_path, text, package).read_into(base_side)
            if not now_test:
                gone[base_path] = (
                    "its file was deleted"
                    if status == "deleted"
                    else f"its file was renamed to {path}, which is not {WORDS.test_file}"
                )
    if not base_side.tests and not now_side.tests and not now_side.marks:
        return []
    change = Change(origin, gone, lambda: removed_code(scan))
    return compare(base_side, now_side, change, WORDS)


# -- the scan ------------------------------------------------------------------------------------


def mask(source: str) -> str:
    """``source`` with comments, strings, templates and regexes blanked (same offsets; quotes
    and newlines kept). A string that reaches the end of its line ends there (JSX text)."""
    out = list(source)
    n = len(source)

    def blank(start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    i = 0
    while True:
        found = _SPECIAL.search(source, i)
        if found is None:
            break
        i = found.start()
        c = source[i]
        nxt = source[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            end = source.find("\n", i)
            end = n if end < 0 else end
        elif c == "/" and nxt == "*":
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif c in "'\"":
            end = i + 1
            while end < n and source[end] != c and source[end] != "\n":
                end += 2 if source[end] == "\\" else 1
            blank(i + 1, end)
            i = end + 1 if end < n and source[end] == c else end
            continue
        elif c == "`":
            end = _template_end(source, i + 1)
            blank(i + 1, end)
            i = end + 1
            continue
        elif _regex_may_start(out, i):
            end = _regex_end(source, i + 1)
            blank(i + 1, end)
            i = end + 1
            continue
        else:
            i += 1
            continue
        blank(i, end)
        i = end
    return "".join(out)


_SPECIAL = re.compile(r"[/'\"`]")


def _template_end(source: str, j: int) -> int:
    """The closing backtick of a template literal (its ``${...}`` included)."""
    depth = 0
    n = len(source)
    while j < n:
        c = source[j]
        if c == "\\":
            j += 2
            continue
        if depth == 0 and c == "`":
            return j
        if source.startswith("${", j):
            depth += 1
            j += 2
            continue
        if depth and c == "{":
            depth += 1
        elif depth and c == "}":
            depth -= 1
        j += 1
    return n


def _regex_may_start(out: list[str], i: int) -> bool:
    """A ``/`` starts a regular expression after an operator or a keyword, not after a value."""
    k = i - 1
    while k >= 0 and out[k].isspace():
        k -= 1
    if k < 0 or out[k] in _REGEX_BEFORE:
        return True
    end = k + 1
    while k >= 0 and (out[k].isalnum() or out[k] in "_$"):
        k -= 1
    return "".join(out[k + 1 : end]) in _REGEX_WORDS


def _regex_end(source: str, j: int) -> int:
    in_class = False
    n = len(source)
    while j < n and source[j] != "\n":
        c = source[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            in_class = True
        elif c == "]":
            in_class = False
        elif c == "/" and not in_class:
            return j
        j += 1
    return j


def close(code: str, start: int) -> int:
    """The offset of the bracket closing the one at ``start`` (or the end of the text)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    for i in range(start, len(code)):
        c = code[i]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if stack and stack[-1] == c:
                stack.pop()
            if not stack:
                return i
    return len(code)


def split_args(code: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of the top-level arguments between ``start`` and ``end`` (exclusive)."""
    spans: list[tuple[int, int]] = []
    depth = 0
    begin = start
    for i in range(start, end):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((begin, i))
            begin = i + 1
    if code[begin:end].strip():
        spans.append((begin, end))
    return [(a, b) for a, b in spans if code[a:b].strip()]


@dataclass
class Call:
    """An ``it``/``test``/``describe`` call."""

    kind: str  # "test" | "suite" | "skip-call" (test.skip() inside a test)
    head: str
    modifiers: list[str]
    title: str
    start: int
    end: int  # the closing parenthesis
    body: tuple[int, int] | None  # the function's body, without its braces
    condition: str | None = None  # skipIf / runIf
    options: str = ""  # an options object ({ retry: 3 })
    parent: Call | None = None
    qualname: str = ""


@dataclass
class JsFile:
    path: str
    source: str
    package: str | None = None  # the project's own package name (package.json), if any
    code: str = ""
    calls: list[Call] = field(default_factory=list)
    helpers: dict[str, tuple[int, int]] = field(default_factory=dict)
    _lines: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.code = mask(self.source)
        self._lines = [i for i, c in enumerate(self.source) if c == "\n"]
        self.calls = self._calls()
        self.helpers = self._helpers()

    @cached_property
    def imported(self) -> frozenset[str]:
        """The names this file imports from the project (a relative path)."""
        names: set[str] = set()
        for match in _IMPORT.finditer(self.source):
            path = match.group("path") or match.group("rpath") or ""
            own = self.package is not None and (
                path == self.package or path.startswith(self.package + "/")
            )
            if not (own or path.startswith((".", "/", "@/", "~/"))):
                continue
            for group in ("default", "named", "star", "required", "single"):
                for part in (match.group(group) or "").split(","):
                    name = part.split(" as ")[-1].split(":")[-1].strip()
                    if re.fullmatch(_IDENT, name):
                        names.add(name)
        return frozenset(names)

    @property
    def typescript(self) -> bool:
        return self.path.endswith((".ts", ".tsx", ".mts", ".cts"))

    @property
    def type_tests(self) -> bool:
        """A file of type tests (vitest's ``*.test-d.ts``, ``types.test.ts``): the compiler
        checks what its tests state."""
        name = PurePosixPath(self.path).name.lower()
        return self.typescript and (".test-d." in name or "type" in name)

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self._lines, offset) + 1

    # reading

    def _calls(self) -> list[Call]:
        code = self.code
        calls: list[Call] = []
        for found in _CALL.finditer(code):
            before = code[max(0, found.start() - 40) : found.start()].rstrip()
            if re.search(r"(?<![\w$])(?:function|const|let|var)$", before):
                continue  # it names a function or a variable; it does not call one
            chain = [m.strip() for m in found.group("chain").split(".") if m.strip()]
            if any(m not in MODIFIERS for m in chain):
                continue
            call = self._read_call(found.group("head"), chain, found.start(), found.end())
            if call is not None:
                calls.append(call)
        self._nest(calls)
        return calls

    def _read_call(self, head: str, chain: list[str], start: int, pos: int) -> Call | None:
        code = self.code
        condition = None
        if "each" in chain or any(m in CONDITIONAL for m in chain):
            # test.each(table)(title, fn), test.each`table`(...), it.skipIf(cond)(title, fn)
            if code[pos] == "`":
                end = code.find("`", pos + 1)
                if end < 0:
                    return None
            else:
                end = close(code, pos)
                if any(m in CONDITIONAL for m in chain):
                    condition = self.source[pos + 1 : end].strip()
            pos = end + 1
            while pos < len(code) and code[pos].isspace():
                pos += 1
        if pos >= len(code) or code[pos] != "(":
            return None
        end = close(code, pos)
        args = split_args(code, pos + 1, end)
        if not args and not any(m in ("skip", "fixme") for m in chain):
            return None  # a call of a function named test(), not a test
        title = self._title(args[0]) if args else ""
        body = None
        options = ""
        for a, b in args[1:] if args else []:
            text = code[a:b].strip()
            if _FUNCTION.match(text):
                body = self._body(a, b)
            elif text.startswith("{"):
                options = text
        suite = (
            head in SUITES
            or head in ("xdescribe", "xcontext", "fdescribe")
            or ("describe" in chain)
        )
        kind = "suite" if suite else "test"
        if (
            not suite
            and body is None
            and any(m in ("skip", "fixme") for m in chain)
            and not (args and code[args[0][0] : args[0][1]].strip()[:1] in "'\"`")
        ):
            kind = "skip-call"  # test.skip() / test.skip(cond, reason) inside a test
            condition = self.source[args[0][0] : args[0][1]].strip() if args else "true"
        return Call(kind, head, chain, title, start, end, body, condition, options)

    def _title(self, span: tuple[int, int]) -> str:
        text = self.source[span[0] : span[1]].strip()
        if len(text) >= 2 and text[0] in "'\"`" and text[-1] == text[0]:
            return text[1:-1]
        return " ".join(text.split())

    def _body(self, a: int, b: int) -> tuple[int, int]:
        code = self.code
        text = code[a:b]
        arrow = text.find("=>")
        if arrow < 0 or text.lstrip().startswith(("function", "async function")):
            brace = code.find("{", a, b)
            if brace < 0:
                return (a, b)
            return (brace + 1, close(code, brace))
        k = a + arrow + 2
        while k < b and code[k].isspace():
            k += 1
        if k < b and code[k] == "{":
            return (k + 1, close(code, k))
        return (k, b)

    def _nest(self, calls: list[Call]) -> None:
        """Each call's suite, and its name: the suites' titles and its own."""
        seen: dict[str, int] = {}
        open_suites: list[Call] = []  # the suites whose bodies hold the current offset
        for call in sorted(calls, key=lambda c: c.start):
            while open_suites and not _holds(open_suites[-1], call.start):
                open_suites.pop()
            call.parent = open_suites[-1] if open_suites else None
            if call.kind == "suite" and call.body is not None:
                open_suites.append(call)
            titles = [call.title]
            parent = call.parent
            while parent is not None:
                titles.append(parent.title)
                parent = parent.parent
            name = " > ".join(reversed(titles))
            seen[name] = seen.get(name, 0) + 1
            call.qualname = name if seen[name] == 1 else f"{name} #{seen[name]}"

    def _helpers(self) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        for match in _HELPER.finditer(self.code):
            name = match.group(1) or match.group(2)
            brace = self.code.find("{", match.end())
            if brace < 0:
                continue
            if match.group(1):  # function name(...) {: the brace after the parameters
                params = close(self.code, match.end() - 1)
                brace = self.code.find("{", params)
                if brace < 0:
                    continue
            elif self.code[match.end() : brace].strip():
                continue  # an arrow with an expression body
            found[name] = (brace + 1, close(self.code, brace))
        return found

    def enclosing(self, offset: int) -> Call | None:
        best: Call | None = None
        for call in self.calls:
            if (
                call.kind != "skip-call"
                and call.body is not None
                and call.body[0] <= offset < call.body[1]
                and (best is None or call.start > best.start)
            ):
                best = call
        return best

    # the side

    def read_into(self, side: Side) -> None:
        for call in self.calls:
            if call.kind == "test":
                side.add(self._case(call))
            self._call_marks(call, side)
        for pattern, category in (
            (_BODY_SKIP, "skip"),
            (_RERUN, "rerun"),
            (_EXIT, "exit"),
            (_ALIAS, "alias"),
        ):
            for match in pattern.finditer(self.code):
                owner = self.enclosing(match.start())
                here: bool | None = True
                if category == "skip" and not self._unguarded(match.start(), owner):
                    here = None
                text = " ".join(self.source[match.start() : match.end()].split())
                kind: Category = (
                    "exit" if category == "exit" else "rerun" if category == "rerun" else "skip"
                )
                if category == "alias":
                    kind = "only" if text.endswith("only") else "skip"
                    text = text.lstrip("= ")
                elif not text.endswith("("):
                    text += "..."
                side.marks.append(
                    Mark(
                        self.path,
                        owner.qualname if owner is not None else "",
                        kind,
                        text + ")" if text.endswith("(") else text,
                        self.line(match.start()),
                        here,
                    )
                )

    def _case(self, call: Call) -> Case:
        body = call.body
        text = self.source[body[0] : body[1]] if body else ""
        masked = self.code[body[0] : body[1]] if body else ""

        def read_body() -> Body:
            return Body(
                _normal(text),
                tokens(_COMMENT.sub("", text).replace('"', "'")),
                frozenset(re.findall(_IDENT, masked)) & self.imported,
                tuple(m.group(2) for m in _STRING.finditer(text)),
                self.typescript
                and (self.type_tests or bool(_TYPED.search(masked)) or "@ts-expect-error" in text),
            )

        return Case(
            self.path,
            call.qualname,
            call.title,
            self.line(call.start),
            read_body,
            partial(self.why_nothing, call),
            runs=body is not None and "todo" not in call.modifiers,
            written=lambda: text,
            facts=cache(partial(_facts, text, masked)),
        )

    def _call_marks(self, call: Call, side: Side) -> None:
        line = self.line(call.start)
        spelled = ".".join([call.head, *call.modifiers])
        scope = call.qualname
        if call.kind == "skip-call":
            owner = self.enclosing(call.start)
            scope = owner.qualname if owner is not None else ""
            here = _js_condition(call.condition or "true")
            if here is True and not self._unguarded(call.start, owner):
                here = None
            side.marks.append(Mark(self.path, scope, "skip", f"{spelled}()", line, here))
            return
        marks: list[Mark] = []
        if call.head in SKIPPED_HEADS:
            marks.append(Mark(self.path, scope, "skip", call.head, line, True))
        if call.head in FOCUSED_HEADS or "only" in call.modifiers:
            marks.append(Mark(self.path, scope, "only", spelled, line, True))
        for modifier in call.modifiers:
            if modifier in ("skip", "fixme"):
                marks.append(Mark(self.path, scope, "skip", spelled, line, True))
            elif modifier == "todo":
                marks.append(
                    Mark(self.path, scope, "skip", spelled, line, True, replaces_only=True)
                )
            elif modifier in ("failing", "fails"):
                effect = "it passes while it fails"
                marks.append(Mark(self.path, scope, "skip", spelled, line, True, effect=effect))
            elif modifier in CONDITIONAL:
                here = _js_condition(call.condition or "")
                if modifier == "runIf" and here is not None:
                    here = not here
                what = f"{spelled}({call.condition})"
                asks = "process.platform" in (call.condition or "")
                marks.append(Mark(self.path, scope, "skip", what, line, here, environmental=asks))
        if (
            call.kind == "test"
            and call.body is None
            and not any(m.category == "skip" for m in marks)
        ):
            what = f"{call.head}() without a function (a pending test)"
            marks.append(Mark(self.path, scope, "skip", what, line, True, replaces_only=True))
        if _RETRY_OPTION.search(call.options):
            what = f"{spelled}(..., {' '.join(call.options.split())[:40]}, ...)"
            marks.append(Mark(self.path, scope, "rerun", what, line, True))
        side.marks.extend(marks)

    def _unguarded(self, offset: int, owner: Call | None) -> bool:
        """The statement at ``offset`` runs whenever its function does: it is directly in the
        function's body, not under an if, a loop, a catch or a condition."""
        code = self.code
        opened = _innermost_block(code, offset)
        if owner is None or owner.body is None:
            top_level = opened is None
        else:
            block = owner.body[0] - 1
            top_level = opened == block if block >= 0 and code[block] == "{" else True
        if not top_level:
            return False
        start = max(code.rfind(c, 0, offset) for c in ";{}")
        statement = code[start + 1 : offset]
        return not re.search(r"\bif\b|\belse\b|\?|&&|\|\|", statement)

    # assertions

    def why_nothing(self, call: Call) -> str | None:
        if call.body is None:
            return "it has no body"
        start, end = call.body
        code = self.code
        dead_from, dead_line = self._dead(start, end)
        skipped = [
            *(
                (span, "its assertions are inside a try whose catch swallows them")
                for span in self._swallowed(start, end)
            ),
            *(
                (span, "its assertions are inside a block that never runs (if (false))")
                for span in self._never(start, end)
            ),
        ]
        reasons: list[str] = []
        for match in _ASSERT.finditer(code, start, end):
            at = match.start()
            why = next((w for (a, b), w in skipped if a <= at < b), None)
            if at >= dead_from:
                why = f"it returns on line {dead_line}, before its asserts"
            elif why is None and self._local_helper(match) is not None:
                continue  # a helper of this file: judged by its body below
            elif why is None and self._vacuous(match):
                why = f"its assertion on line {self.line(at)} checks a constant"
            if why is None:
                return None
            reasons.append(why)
        for found in re.finditer(rf"(?<![\w$.])({_IDENT})\s*\(", code[start:dead_from]):
            at = start + found.start()
            span = self.helpers.get(found.group(1))
            if span is None or any(a <= at < b for (a, b), _ in skipped):
                continue
            if any(
                self._local_helper(m) is None and not self._vacuous(m)
                for m in _ASSERT.finditer(code, span[0], span[1])
            ):
                return None
        if reasons:
            return reasons[0]
        if not code[start:end].strip():
            return "its body is empty"
        return "no expect(), assert or should"

    def _local_helper(self, match: re.Match[str]) -> str | None:
        """The name of this file's own function an assert-like call calls (``assertOk(x)``)."""
        callee = "".join(match.group(0).split()).rstrip("(")
        return callee if callee in self.helpers else None

    def _dead(self, start: int, end: int) -> tuple[int, int]:
        """Where the body stops running: after a return at its top level."""
        code = self.code
        depth = 0
        i = start
        while i < end:
            c = code[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif depth == 0 and code.startswith("return", i) and _word_at(code, i, "return"):
                j = i + 6
                stop = end
                inner = 0
                while j < end:
                    d = code[j]
                    if d in "([{":
                        inner += 1
                    elif d in ")]}":
                        inner -= 1
                    elif inner == 0 and d == ";":
                        stop = j + 1
                        break
                    elif inner == 0 and d == "\n" and code[i + 6 : j].strip():
                        following = code[j:end].lstrip()
                        if not following.startswith((".", "?", ":", "+", "-", "&", "|")):
                            stop = j
                            break
                    j += 1
                return stop, self.line(i)
            i += 1
        return end, 0

    def _swallowed(self, start: int, end: int) -> list[tuple[int, int]]:
        code = self.code
        spans: list[tuple[int, int]] = []
        for match in re.finditer(r"\btry\s*\{", code[start:end]):
            brace = start + match.end() - 1
            closing = close(code, brace)
            after = re.match(r"\s*catch\s*(?:\([^)]*\))?\s*\{", code[closing + 1 : end])
            if after is None:
                continue
            catch_brace = closing + 1 + after.end() - 1
            handler = code[catch_brace + 1 : close(code, catch_brace)]
            if not _ASSERT.search(handler):
                spans.append((brace + 1, closing))
        return spans

    def _same(self, one: tuple[int, int], other: tuple[int, int]) -> bool:
        return _normal(self.source[one[0] : one[1]]) == _normal(self.source[other[0] : other[1]])

    def _never(self, start: int, end: int) -> list[tuple[int, int]]:
        """The blocks of ``if (false) {...}`` and the like: code that never runs."""
        spans: list[tuple[int, int]] = []
        for match in _NEVER.finditer(self.code, start, end):
            spans.append((match.end(), close(self.code, match.end() - 1)))
        return spans

    def _vacuous(self, match: re.Match[str]) -> bool:
        """``expect(true)``, ``assert(1)``, ``assert.equal(1, 1)``: a constant is checked."""
        code = self.code
        callee = "".join(match.group(0).split())[:-1]  # "expect", "assert.equal"
        head = callee.split(".")[0]
        if callee != "expect" and not (head == "assert" and callee != "assert.fail"):
            return False  # expect.assertions(1), assert.fail(): not a constant checked
        opened = match.end() - 1
        closing = close(code, opened)
        args = split_args(code, opened + 1, closing)
        if callee == "expect" and len(args) == 1:
            matcher = _MATCHER.match(code, closing + 1)
            if matcher is not None:  # expect(x).toBe(x): the same thing on both sides
                expected = split_args(code, matcher.end(), close(code, matcher.end() - 1))
                if len(expected) == 1 and self._same(args[0], expected[0]):
                    return True
        if not all(_LITERAL.match(code[a:b].strip()) for a, b in args):
            return False
        first = self.source[args[0][0] : args[0][1]].strip() if args else ""
        falsy = first in ("false", "0", "null", "undefined", "''", '""', "``")
        return not (head == "assert" and falsy)  # assert(false) always fails: not vacuous


def _holds(call: Call, offset: int) -> bool:
    return call.body is not None and call.body[0] <= offset < call.body[1]


def _innermost_block(code: str, offset: int) -> int | None:
    """The offset of the ``{`` whose block holds ``offset``."""
    depth = 0
    for i in range(offset - 1, -1, -1):
        c = code[i]
        if c == "}":
            depth += 1
        elif c == "{":
            if depth == 0:
                return i
            depth -= 1
    return None


def _word_at(code: str, i: int, word: str) -> bool:
    before = code[i - 1] if i else " "
    after = code[i + len(word)] if i + len(word) < len(code) else " "
    return not (before.isalnum() or before in "_$.") and not (after.isalnum() or after in "_$")


_CALLED = re.compile(r"(?<![\w$])([A-Za-z_$][\w$]*)\s*\(")
_NUMBER = re.compile(r"(?<![\w$.])\d[\d_]*(?:\.\d+)?(?![\w$])")
_KEYWORDS = {"if", "for", "while", "switch", "catch", "function", "return", "typeof", "await"}


def _facts(text: str, masked: str) -> tuple[str, ...]:
    """What a test's body checks, as a rename or a move keeps it: each call with its arguments
    (``sum(1, 2)``, ``toBe(3)``; what it is called on aside), each string and number it writes
    outside a call."""
    found: list[str] = []
    inside = bytearray(len(masked))
    for count, match in enumerate(_CALLED.finditer(masked)):
        if count >= FACTS:
            break
        if match.group(1) in _KEYWORDS:
            continue
        end = _closing(masked, match.end() - 1)
        inside[match.end() : end] = b"\x01" * max(0, end - match.end())
        found.append("call " + _normal(text[match.start() : end + 1]))
    code = _COMMENT.sub(lambda m: " " * len(m.group(0)), text)
    found += ["value " + m.group(2) for m in _STRING.finditer(code) if not inside[m.start()]]
    found += ["value " + m.group(0) for m in _NUMBER.finditer(masked) if not inside[m.start()]]
    return tuple(found)


def _closing(code: str, start: int, reach: int = 400) -> int:
    """The bracket that closes the one at ``start`` in masked code (``reach`` characters on
    at most, where a longer call is cut: what a fact needs)."""
    depth = 0
    last = min(len(code), start + reach)
    for index in range(start, last):
        if code[index] in "([{":
            depth += 1
        elif code[index] in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return last - 1


def _normal(text: str) -> str:
    """A body as a formatter would not change it: no whitespace, one kind of quote, no
    semicolons or trailing commas."""
    text = _COMMENT.sub("", text)
    text = re.sub(r"\s+", "", text).replace('"', "'").replace(";", "")
    return re.sub(r",([)\]}])", r"\1", text)


def _js_condition(text: str) -> bool | None:
    text = text.strip()
    negated = False
    while text.startswith("!"):
        negated = not negated
        text = text[1:].strip()
    literal = {"true": True, "false": False, "1": True, "0": False}.get(text)
    if literal is None:
        found = re.fullmatch(r"process\.platform\s*(===|==|!==|!=)\s*(['\"])(\w+)\2", text)
        if found is None:
            return None
        equal = sys.platform == found.group(3)
        literal = equal if found.group(1).startswith("=") else not equal
    return literal != negated


# -- what the change deletes from the code ------------------------------------------------------


def removed_code(scan: Scan) -> CodeRemoved:
    """What the change deletes from JS/TS code that is not a test."""
    texts = [
        (
            None if status == "added" else scan.sources.at_base(scan.renamed_from.get(path, path)),
            None if status == "deleted" else scan.sources.now(path),
        )
        for path, status in scan.touched.items()
        if is_code(path)
    ]
    return CodeRemoved.of(texts, _defined)


def _defined(text: str | None) -> set[str]:
    if text is None:
        return set()
    return {next(g for g in m.groups() if g) for m in _DEFINED.finditer(mask(text))}
