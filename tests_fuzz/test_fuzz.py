"""Fuzzing every parser with hypothesis: random bytes, and structured documents of each format.

Every reader of outside input is here: JUnit XML; the lint formats (and their detection); the
coverage formats (coverage.py JSON and data files, istanbul summary, Cobertura, lcov, shards
merged); custom gates' JSON reports; build output; harness transcripts; the configuration (YAML,
TOML, pyproject.toml, the workspace JSON shape, validated); and the stop hooks' stdin.

Each test feeds one reader either random bytes, real samples from ``tests/data`` with bytes
flipped, cut or repeated, or a generated document of its format that is mostly valid with
hostile values mixed in (huge, negative, fractional, NaN, infinite or textual counts, keys
missing or of the wrong type, deep nesting, control characters and ANSI escapes, any unicode).

The property: the reader returns a result or raises its own error type (``ReportError``,
``ConfigError``, ``EventError``); any other exception is a bug. A result's numbers are
non-negative whole numbers a float can hold, or finite floats (None where "not measured");
every ratio is a percentage from 0 to 100; a coverage report measured at least one file.

This folder is not part of the unit suite (``testpaths`` is ``tests``): hypothesis stays out of
its environment. ``.ci/run`` runs it in a virtualenv of its own with the "ci" profile
(``conftest.py``); the profiles, from the repository root:

    pip install . -r tests_fuzz/requirements.txt
    python -m pytest tests_fuzz --hypothesis-profile=ci     # what CI runs, about a minute
    python -m pytest tests_fuzz                             # "dev": a few examples a test
    python -m pytest tests_fuzz --hypothesis-profile=long   # 5,000 examples a test

The long run keeps its failing examples in ``.hypothesis/`` (ignored by git) and replays them
first; the others keep nothing. A crash found is a bug of the reader: fix it there, and keep
the input as a plain case in ``tests/`` (``tests/test_bad_input_regressions.py``, or the
parser's own test module), asserting what the user sees.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentgate.config.files import parse_raw, read_raw
from pytest_agentgate.config.model import ConfigError
from pytest_agentgate.config.validate import load_config, validate
from pytest_agentgate.harness.protocols import HARNESSES, EventError
from pytest_agentgate.registry import get_registry
from pytest_agentgate.reports._io import MAX_COUNT
from pytest_agentgate.reports.build import extract_errors, tail_lines
from pytest_agentgate.reports.coverage import (
    COVERAGE_FORMATS,
    merge_coverage,
    parse_coverage_json,
    parse_istanbul_summary,
    parse_lcov,
    read_cobertura,
    read_coverage,
    read_coverage_data,
    read_coverage_files,
)
from pytest_agentgate.reports.jsonvalue import load_json, lookup, severities
from pytest_agentgate.reports.junit import read_junit
from pytest_agentgate.reports.lint import LINT_FORMATS, parse_lint, read_lint
from pytest_agentgate.reports.model import (
    CoverageReport,
    LintReport,
    Ratio,
    ReportError,
)
from pytest_agentgate.reports.model import (
    TestRun as JUnitRun,
)
from pytest_agentgate.reports.transcripts.read import read_transcript

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
# coverage.py data files are reported by coverage.py in a child process: a tenth as many
# examples as the profile gives the other tests.
SLOW = settings(max_examples=max(3, settings.default.max_examples // 10))

REGISTRY = get_registry()

# -- the property ----------------------------------------------------------------------------

# Numbers that may be negative: exit codes, a harness's timestamp, a call's hash, times.
_SIGNED = frozenset({"exit_code", "stamp", "key", "started", "ended"})
# The largest whole number a result may hold: one a float holds, so that every percentage and
# comparison made of it works (10**400 overflows). Each count a reader takes is at most
# MAX_COUNT (10**15); totals add several up.
USABLE = 10**300


def sane(result: object, *, signed_floats: bool = False) -> None:
    """Every number in ``result`` (walked through dataclasses, lists, tuples and dicts, keys
    too) is a whole number from 0 to ``USABLE`` or a finite float (non-negative unless
    ``signed_floats``), and every Ratio is a share from 0 to 100 percent."""
    stack: list[tuple[object, str]] = [(result, type(result).__name__)]
    seen: set[int] = set()
    while stack:
        node, at = stack.pop()
        if node is None or isinstance(node, (bool, str, bytes, Path)):
            continue
        if isinstance(node, int):
            assert 0 <= node <= USABLE, f"{at} is {node}"
        elif isinstance(node, float):
            assert math.isfinite(node), f"{at} is {node}"
            assert signed_floats or node >= 0, f"{at} is {node}"
        elif id(node) in seen:
            continue
        elif isinstance(node, dict):
            seen.add(id(node))
            for key, value in node.items():
                stack.append((key, f"{at} key"))
                stack.append((value, f"{at}[{key!r}]"))
        elif isinstance(node, (list, tuple, set, frozenset)):
            seen.add(id(node))
            stack.extend((item, f"{at}[{i}]") for i, item in enumerate(node))
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            seen.add(id(node))
            if isinstance(node, Ratio):
                assert node.covered <= node.total, f"{at}: {node}"
                assert 0.0 <= node.percent <= 100.0, f"{at}: {node.percent}%"
            for f in dataclasses.fields(node):
                value = getattr(node, f.name)
                if f.name in _SIGNED:
                    assert value is None or (
                        isinstance(value, (int, float)) and math.isfinite(value)
                    ), f"{at}.{f.name} is {value!r}"
                else:
                    stack.append((value, f"{at}.{f.name}"))


def sane_run(run: JUnitRun) -> None:
    sane(run)
    assert run.passed + run.failed + run.errors + run.skipped == run.total, run
    assert run.xfailed <= run.skipped and run.xpassed <= run.passed, run


def sane_lint(report: LintReport) -> None:
    sane(report)
    assert all(f.severity in ("error", "warning") for f in report.findings)


def sane_coverage(report: CoverageReport) -> None:
    sane(report)
    assert report.files, "a coverage report that measured nothing must be an error"
    assert report.lines is not None


def outcome(call: Callable[[], Any], *errors: type[Exception]) -> Any:
    """``call()``, or None when it raised one of ``errors`` (the reader's own): any other
    exception propagates and fails the test."""
    try:
        return call()
    except errors as exc:
        assert str(exc), "an error says what is wrong"
        return None


def write(tmp: Path, name: str, data: bytes | str) -> Path:
    path = tmp / name
    path.write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    return path


# -- hostile values --------------------------------------------------------------------------


class Long(str):
    """A string whose repr stays short: hypothesis shows its strategies and examples."""

    def __repr__(self) -> str:
        head = str.__repr__(str(self[:12]))
        return head if len(self) <= 12 else f"{type(self).__name__}({head}... {len(self)} chars)"


class Raw(Long):
    """A token written into a document as it is (``1e400``, 5,000 digits, deep nesting)."""


NASTY_TEXT = [
    "",
    " ",
    "\x00",
    "\x1b[31mred\x1b[0m",
    "\x1b[2J\x1b[H",
    "\x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
    "line one\nline two\r\n",
    "\u202etxt.exe",
    "\ufeffbom",
    "\U0001f4a5",
    "\u0661\u0662",  # Arabic-Indic digits: str.isdigit() and int() accept them
    "\u00b2",  # superscript two: isdigit() is True, int() refuses it
    "é/ü.py",
    "../../etc/passwd",
    "/\x00/abs.py",
    "/tmp/a\x00b.py",
    "%00%2e%2e",
    "file:///C:/x%00.py",
    "C:\\Windows\\x.py",
    "NaN",
    "-1",
    "1e400",
    "9" * 40,
    "null",
    "<![CDATA[x]]>",
    "&amp;&lt;&#0;",
    "Exit code 1",
    "Process exited with code 99999999999999999999",
    "*** Begin Patch\n*** Update File: a.py\n*** End Patch",
    Long("x" * 3000),
]
text = st.one_of(st.text(max_size=30), st.sampled_from(NASTY_TEXT))
NUMBER_TOKENS = [
    -1,
    0,
    1,
    2**31,
    2**63,
    2**64 + 1,
    MAX_COUNT,
    MAX_COUNT + 1,
    10**30,
    10**400,
    -(10**400),
    0.5,
    -0.0,
    1e308,
    math.inf,
    -math.inf,
    math.nan,
    True,
    False,
    Raw("1" * 5000),  # longer than Python's int-to-string limit
    Raw("1e400"),  # a float that is infinite
    Raw("-0"),
    Raw("1E5"),
]
hostile_number = st.one_of(
    st.sampled_from(NUMBER_TOKENS), st.integers(-(2**70), 2**70), st.floats(allow_nan=True)
)
_DEEP = Raw("[" * 3000 + "]" * 3000)


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each as often as its weight says (``st.one_of`` draws its
    branches evenly, whatever their number)."""
    table = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda i: table[i])


# Any JSON value where a report has something else: mostly a number (where a list, an object or
# a string belongs, a number is the likeliest mistake), sometimes text, null, deep nesting.
hostile = weighted(
    (4, hostile_number),
    (2, text),
    (1, st.none()),
    (1, st.just(_DEEP)),
    (1, st.just(Raw('{"a":' * 400 + "1" + "}" * 400))),
    (1, st.lists(st.integers(-3, 3), max_size=3)),
    (1, st.dictionaries(st.text(max_size=4), st.integers(-3, 3), max_size=2)),
)


def mostly(usual: st.SearchStrategy[Any], rare: st.SearchStrategy[Any], odds: int = 6) -> Any:
    """``usual``, and one time in ``odds`` ``rare`` instead."""
    return weighted((odds - 1, usual), (1, rare))


def maybe(valid: st.SearchStrategy[Any]) -> Any:
    """Mostly ``valid``, now and then a hostile value: a document has dozens of such places,
    and a good share of documents must be whole to get deep into their reader."""
    return mostly(valid, hostile, odds=20)


# A count a report writes: mostly a small whole number, sometimes anything.
count = maybe(st.integers(0, 40))
small = st.integers(0, 40)
flag = maybe(st.booleans())
path_text = st.one_of(
    st.sampled_from(["src/app.py", "pkg/mod.py", "/abs/proj/src/x.py", "a b/ü.js", "x.ts"]),
    text,
)


def to_json(value: Any) -> str:
    """JSON text of ``value``, NaN and infinities as Python writes them, Raw tokens as is."""
    if isinstance(value, Raw):
        return str(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)  # NaN, Infinity, -Infinity
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{to_json(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


@st.composite
def mangled(draw: st.DrawFn, documents: st.SearchStrategy[Any]) -> Any:
    """A document with up to three places broken: a key dropped, a value replaced by a
    hostile one, a value wrapped in a list."""
    doc = draw(documents)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))):
        places: list[tuple[Any, Any]] = []
        stack = [doc]
        while stack and len(places) < 500:
            node = stack.pop()
            if isinstance(node, dict):
                places.extend((node, key) for key in node)
                stack.extend(node.values())
            elif isinstance(node, list):
                places.extend((node, index) for index in range(len(node)))
                stack.extend(node)
        if not places:
            return draw(hostile)
        # Half the time a list or an object is hit: "toolCalls": 5 is the likelier mistake.
        containers = [(p, k) for p, k in places if isinstance(p[k], (dict, list))]
        pool = containers if containers and draw(st.booleans()) else places
        parent, key = pool[draw(st.integers(0, len(pool) - 1))]
        action = draw(st.sampled_from(["drop", "replace", "replace", "wrap"]))
        if action == "drop" and isinstance(parent, dict):
            del parent[key]
        elif action == "wrap":
            parent[key] = [parent[key]]
        else:
            parent[key] = draw(hostile)
    return doc


@st.composite
def damaged(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> str:
    """Text of a document, mostly whole; sometimes cut short, with garbage inserted, with a
    byte order mark or Windows line ends."""
    value = draw(texts)
    how = draw(st.sampled_from(["whole", "whole", "whole", "cut", "insert", "bom", "crlf"]))
    if how == "cut" and value:
        value = value[: draw(st.integers(0, len(value) - 1))]
    elif how == "insert":
        at = draw(st.integers(0, len(value)))
        value = value[:at] + draw(text) + value[at:]
    elif how == "bom":
        value = "\ufeff" + value
    elif how == "crlf":
        value = value.replace("\n", "\r\n")
    return value


@st.composite
def flipped(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with a few bytes flipped, a range cut or repeated, or the end cut off."""
    buffer = bytearray(data)
    rng = random.Random(draw(st.integers(0, 2**32)))
    for _ in range(draw(st.integers(1, 4))):
        if not buffer:
            break
        at = rng.randrange(len(buffer))
        how = draw(st.sampled_from(["flip", "cut", "repeat", "truncate", "insert"]))
        if how == "flip":
            buffer[at] = rng.randrange(256)
        elif how == "cut":
            del buffer[at : at + rng.randrange(1, 64)]
        elif how == "repeat":
            buffer[at:at] = buffer[at : at + rng.randrange(1, 256)]
        elif how == "truncate":
            del buffer[at:]
        else:
            buffer[at:at] = draw(st.binary(min_size=1, max_size=16))
    return bytes(buffer)


def xml_attrs(attrs: dict[str, Any]) -> str:
    out = []
    for name, value in attrs.items():
        shown = str(value)
        if isinstance(value, Raw):  # written unquoted-escaped: may be malformed on purpose
            out.append(f' {name}="{shown}"')
        else:
            out.append(f" {name}={quoteattr(shown)}")
    return "".join(out)


def element(tag: str, attrs: dict[str, Any], children: list[str] | str = "") -> str:
    body = children if isinstance(children, str) else "".join(children)
    if not body:
        return f"<{tag}{xml_attrs(attrs)}/>"
    return f"<{tag}{xml_attrs(attrs)}>{body}</{tag}>"


def attr_value() -> st.SearchStrategy[Any]:
    numbers = st.one_of(st.integers(-5, 50), st.sampled_from(NUMBER_TOKENS))
    raw = st.sampled_from([Raw("&bogus;"), Raw("<"), Raw('"'), Raw("&#0;"), Raw("a&amp;b")])
    return st.one_of(numbers, text, raw)


XML_PROLOGUES = [
    "",
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    '<?xml version="1.0" encoding="latin-1"?>\n',
    '<?xml version="1.0" encoding="utf-16"?>\n',
    '<?xml version="1.0" encoding="no-such-encoding"?>\n',
    "<!-- a comment -->",
    '<!DOCTYPE coverage SYSTEM "http://cobertura.sourceforge.net/xml/coverage-04.dtd">\n',
    '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]>\n',
    '<?xml-stylesheet href="x"?>',
]


def xml_text(value: str) -> str:
    return escape(value)


# -- JUnit XML -------------------------------------------------------------------------------

junit_child = st.one_of(
    st.builds(
        lambda tag, attrs, body: element(tag, attrs, xml_text(body)),
        st.sampled_from(
            ["failure", "error", "skipped", "flakyFailure", "flakyError", "rerunFailure"]
        ),
        st.fixed_dictionaries(
            {}, optional={"message": attr_value(), "type": st.sampled_from(["pytest.xfail", "x"])}
        ),
        text,
    ),
    st.builds(
        lambda tag, body: element(tag, {}, xml_text(body)),
        st.sampled_from(["system-out", "system-err"]),
        text,
    ),
    st.builds(
        lambda body: element("failure", {"message": "collection failure"}, xml_text(body)),
        st.sampled_from(["E   ImportError: no module\nE   boom", "", "\n\n"]),
    ),
)


def _testcase(attrs: dict[str, Any], children: list[str], nested: bool) -> str:
    if nested:
        children = [*children, element("testcase", {"name": "inner"}, children)]
    return element("testcase", attrs, children)


testcase = st.builds(
    _testcase,
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.one_of(st.sampled_from(["test_a", "test_b", "test_c"]), attr_value()),
            "classname": st.sampled_from(["tests.test_x", "", "tests.test_y"]),
            "file": path_text,
            "line": attr_value(),
            "time": attr_value(),
        },
    ),
    st.lists(junit_child, max_size=3),
    st.booleans(),
)
properties = st.lists(
    st.builds(
        lambda name, value: element("property", {"name": name, "value": value}),
        st.sampled_from(["agentgate_xpassed", "agentgate_run_id", "agentgate_selected", "x"]),
        attr_value(),
    ),
    max_size=3,
)
testsuite = st.builds(
    lambda attrs, props, cases: element(
        "testsuite", attrs, [element("properties", {}, props) if props else "", *cases]
    ),
    st.fixed_dictionaries(
        {"name": st.just("suite")},
        optional={"tests": attr_value(), "failures": attr_value(), "file": path_text},
    ),
    properties,
    st.lists(testcase, max_size=6),
)
junit_document = damaged(
    st.builds(
        lambda prologue, root, suites: prologue + element(root, {}, suites),
        st.sampled_from(XML_PROLOGUES),
        st.sampled_from(["testsuites", "testsuites", "testsuite", "testrun"]),
        st.lists(testsuite, max_size=3),
    )
)


@given(data=st.binary())
def test_junit_random_bytes(tmp_path: Path, data: bytes) -> None:
    report = write(tmp_path, "junit.xml", data)
    run = outcome(lambda: read_junit([report]), ReportError)
    if run is not None:
        sane_run(run)


@given(document=junit_document, second=st.one_of(st.none(), junit_document))
def test_junit_documents(tmp_path: Path, document: str, second: str | None) -> None:
    paths = [write(tmp_path, "junit.xml", document)]
    if second is not None:
        paths.append(write(tmp_path, "junit-2.xml", second))
    run = outcome(lambda: read_junit(paths), ReportError)
    if run is not None:
        sane_run(run)


# -- lint reports ----------------------------------------------------------------------------

LINT_CHOICES = [*LINT_FORMATS, None]
location = st.fixed_dictionaries({"row": count, "column": count})
ruff_item = st.fixed_dictionaries(
    {
        "code": maybe(st.sampled_from(["F401", "E501", None])),
        "message": text,
        "filename": path_text,
        "location": location,
    },
    optional={"end_location": location, "cell": count, "fix": st.none(), "noqa_row": count},
)
eslint_message = st.fixed_dictionaries(
    {
        "ruleId": maybe(st.sampled_from(["no-unused-vars", None])),
        "severity": maybe(st.sampled_from([1, 2, 2, 0])),
        "message": text,
        "line": count,
        "column": count,
    },
    optional={"fatal": flag},
)
eslint_file = st.fixed_dictionaries(
    {"filePath": path_text, "messages": st.lists(eslint_message, max_size=4)},
    optional={"errorCount": count, "warningCount": count},
)
pylint_message = st.fixed_dictionaries(
    {
        "type": st.one_of(
            st.sampled_from(["error", "fatal", "warning", "convention", "info"]), hostile
        ),
        "message": text,
        "symbol": maybe(st.sampled_from(["unused-import"])),
        "module": st.just("m"),
        "line": count,
        "column": count,
    },
    optional={"path": path_text, "absolutePath": path_text, "messageId": text},
)
mypy_line = st.fixed_dictionaries(
    {
        "file": path_text,
        "line": count,
        "column": count,
        "message": text,
        "severity": maybe(st.sampled_from(["error", "error", "note"])),
        "code": maybe(st.sampled_from(["arg-type", None])),
    },
    optional={"hint": maybe(text)},
)
flake8_violation = st.fixed_dictionaries(
    {
        "code": maybe(st.sampled_from(["E501", "F401"])),
        "line_number": count,
        "column_number": count,
        "text": text,
    },
    optional={"filename": path_text, "physical_line": text},
)
sarif_result = st.fixed_dictionaries(
    {"message": st.fixed_dictionaries({"text": text}, optional={"markdown": text, "id": text})},
    optional={
        "ruleId": maybe(text),
        "ruleIndex": count,
        "rule": st.fixed_dictionaries({}, optional={"id": text, "index": count}),
        "level": maybe(st.sampled_from(["error", "warning", "note", "none"])),
        "kind": maybe(st.sampled_from(["fail", "pass", "review"])),
        "baselineState": st.sampled_from(["new", "absent"]),
        "suppressions": st.lists(
            st.fixed_dictionaries({}, optional={"status": st.sampled_from(["accepted", "x"])})
        ),
        "locations": st.lists(
            st.fixed_dictionaries(
                {
                    "physicalLocation": st.fixed_dictionaries(
                        {
                            "artifactLocation": st.fixed_dictionaries({"uri": path_text}),
                            "region": st.fixed_dictionaries(
                                {"startLine": count, "startColumn": count}
                            ),
                        }
                    )
                }
            ),
            max_size=2,
        ),
    },
)
sarif_run = st.fixed_dictionaries(
    {
        "tool": st.fixed_dictionaries(
            {
                "driver": st.fixed_dictionaries(
                    {"name": st.one_of(st.sampled_from(["bandit", "semgrep"]), text)},
                    optional={
                        "rules": st.lists(
                            st.fixed_dictionaries(
                                {"id": text},
                                optional={
                                    "defaultConfiguration": st.fixed_dictionaries(
                                        {"level": st.sampled_from(["error", "note", "warning"])}
                                    )
                                },
                            ),
                            max_size=3,
                        )
                    },
                )
            }
        ),
        "results": st.lists(sarif_result, max_size=4),
    },
    optional={
        "invocations": st.lists(
            st.fixed_dictionaries(
                {
                    "toolExecutionNotifications": st.lists(
                        st.fixed_dictionaries(
                            {"level": st.sampled_from(["error", "warning"]), "message": text}
                        ),
                        max_size=2,
                    )
                }
            ),
            max_size=1,
        )
    },
)
# The JSON formats, as objects: mangled, then written.
LINT_OBJECTS: dict[str, st.SearchStrategy[Any]] = {
    "ruff": st.lists(ruff_item, max_size=5),
    "eslint": st.lists(eslint_file, max_size=3),
    "pylint": st.one_of(
        st.builds(
            lambda messages, stats: {"messages": messages, "statistics": stats},
            st.lists(pylint_message, max_size=4),
            st.fixed_dictionaries({}, optional={"messageTypeCount": st.just({})}),
        ),
        st.lists(pylint_message, max_size=4),
    ),
    "flake8": st.dictionaries(path_text, st.lists(flake8_violation, max_size=3), max_size=3),
    "sarif": st.fixed_dictionaries(
        {
            "version": maybe(st.just("2.1.0")),
            "runs": st.lists(sarif_run, max_size=2),
        },
        optional={"$schema": text},
    ),
}
LINT_DOCUMENTS: dict[str, st.SearchStrategy[str]] = {
    **{
        fmt: damaged(st.one_of(objects, mangled(objects)).map(to_json))
        for fmt, objects in LINT_OBJECTS.items()
    },
    "mypy": damaged(
        st.lists(mangled(mypy_line).map(to_json), max_size=5).map(
            lambda lines: "\n".join([*lines, "Found 3 errors in 1 file"][: len(lines) + 1])
        )
    ),
    "flake8-text": damaged(
        st.lists(
            st.builds(
                lambda path, line, column, code, message: (
                    f"{path}:{line}:{column}: {code} {message}"
                ),
                st.one_of(st.sampled_from(["a.py", "/x/b.py"]), text),
                st.one_of(small, st.sampled_from([Long("9" * 5000), "0", "-1", "\u0661"])),
                st.one_of(small, st.sampled_from([Long("9" * 5000), ""])),
                st.sampled_from(["E501", "W291", "F401", "e1"]),
                text,
            ),
            max_size=5,
        ).map("\n".join)
    ),
}


@given(fmt=st.sampled_from(LINT_CHOICES), data=st.binary())
def test_lint_random_bytes(tmp_path: Path, fmt: str | None, data: bytes) -> None:
    report = write(tmp_path, "lint.json", data)
    result = outcome(lambda: read_lint(report, format=fmt), ReportError)
    if result is not None:
        sane_lint(result)


@given(fmt=st.sampled_from(LINT_CHOICES), content=st.text())
def test_lint_random_text(fmt: str | None, content: str) -> None:
    result = outcome(
        lambda: parse_lint(content, format=fmt, source="<stdout of lint>"), ReportError
    )
    if result is not None:
        sane_lint(result)


def tagged(documents: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[tuple[str, Any]]:
    """(name, document) pairs: a document of each kind, with the kind it is."""
    return st.one_of(*(st.tuples(st.just(name), s) for name, s in documents.items()))


@given(case=tagged(LINT_DOCUMENTS), detect=st.booleans())
def test_lint_documents(case: tuple[str, str], detect: bool) -> None:
    """Each format's documents, read as that format and, detected by content, as any."""
    fmt, document = case
    chosen = None if detect else fmt
    result = outcome(lambda: parse_lint(document, format=chosen, source="lint.json"), ReportError)
    if result is not None:
        sane_lint(result)


# -- coverage reports ------------------------------------------------------------------------

line_number = maybe(st.integers(1, 60))


def share(
    covered: str, total: str, **optional: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """``{covered: c, total: t}`` with c <= t, now and then any count at all."""
    return st.integers(0, 40).flatmap(
        lambda t: st.fixed_dictionaries(
            {covered: mostly(st.integers(0, t), count), total: mostly(st.just(t), count)},
            optional=optional,
        )
    )


def merged(*parts: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(*parts).map(lambda dicts: {k: v for d in dicts for k, v in d.items()})


coverage_summary = share(
    "covered_lines", "num_statements", percent_covered=hostile, missing_lines=count
)
coveragepy_file = st.fixed_dictionaries(
    {
        "summary": coverage_summary,
        "missing_lines": st.lists(line_number, max_size=6),
        "executed_lines": st.lists(line_number, max_size=6),
    },
    optional={
        "executed_branches": st.lists(st.lists(line_number, max_size=3), max_size=4),
        "missing_branches": st.lists(st.lists(line_number, max_size=3), max_size=4),
        "functions": st.dictionaries(
            st.sampled_from(["", "f", "C.m"]),
            st.fixed_dictionaries({"summary": coverage_summary}),
            max_size=3,
        ),
    },
)
coveragepy_document = st.fixed_dictionaries(
    {
        "meta": st.fixed_dictionaries(
            {"format": st.just(3)}, optional={"branch_coverage": flag, "version": text}
        ),
        "totals": merged(
            share("covered_lines", "num_statements"),
            mostly(share("covered_branches", "num_branches"), st.just({})),
        ),
        "files": st.dictionaries(path_text, coveragepy_file, max_size=4),
    }
)
istanbul_metric = share("covered", "total", pct=hostile, skipped=count)
istanbul_entry = st.fixed_dictionaries(
    {
        "lines": istanbul_metric,
        "statements": istanbul_metric,
        "functions": istanbul_metric,
        "branches": istanbul_metric,
    }
)
istanbul_document = st.builds(
    lambda total, files: {"total": total, **files},
    istanbul_entry,
    st.dictionaries(path_text, istanbul_entry, max_size=4),
)

lcov_number = st.one_of(
    small.map(str),
    small.map(str),
    st.sampled_from(["-", "-1", "1.0", "1.5", "1e400", "nan", "inf", Long("9" * 5000), "", " 7 "]),
    st.sampled_from(["\u0661", "0x10", "1_0", "+3"]),
)
lcov_line = st.one_of(
    st.builds("DA:{},{}".format, lcov_number, lcov_number),
    st.builds("DA:{},{},{}".format, lcov_number, lcov_number, text),
    st.builds("BRDA:{},{},{},{}".format, lcov_number, small, small, lcov_number),
    st.builds("BRDA:{}".format, lcov_number),
    st.builds("FN:{},{}".format, lcov_number, st.sampled_from(["f", "g", ""])),
    st.builds("FN:{},{},{}".format, lcov_number, lcov_number, st.sampled_from(["f", "h"])),
    st.builds("FNDA:{},{}".format, lcov_number, st.sampled_from(["f", "g", "x"])),
    st.builds("FNA:{},{},{}".format, small, lcov_number, st.sampled_from(["f", "g"])),
    st.builds(
        "{}:{}".format, st.sampled_from(["LF", "LH", "BRF", "BRH", "FNF", "FNH"]), lcov_number
    ),
    st.sampled_from(["", "TN:", "VER:2", "FNL:0,1", "end_of_record", "garbage", "DA:"]),
)
lcov_record = st.builds(
    lambda name, lines, closed: "\n".join(
        [f"SF:{name}", *lines, *(["end_of_record"] if closed else [])]
    ),
    path_text,
    st.lists(lcov_line, max_size=8),
    st.sampled_from([True, True, True, False]),
)
lcov_document = damaged(
    st.builds(
        lambda head, records: "\n".join([*head, *records]) + "\n",
        st.lists(st.sampled_from(["TN:", "TN:name", "VER:2.0"]), max_size=2),
        st.lists(lcov_record, max_size=4),
    )
)

cobertura_line = st.builds(
    lambda attrs: element("line", attrs),
    st.fixed_dictionaries(
        {"number": st.one_of(st.integers(1, 60), attr_value()), "hits": attr_value()},
        optional={
            "branch": st.sampled_from(["true", "false", "TRUE"]),
            "condition-coverage": st.one_of(
                share("c", "t").map(lambda d: f"{d['c']}% ({d['c']}/{d['t']})"),
                st.sampled_from(["50% (1/2)", "(3/2)", "(99999999999999999999/1)", "x"]),
                text,
            ),
        },
    ),
)
cobertura_method = st.builds(
    lambda attrs, lines: element("method", attrs, [element("lines", {}, lines)]),
    st.fixed_dictionaries({"name": st.sampled_from(["f", "g", ""])}, optional={"signature": text}),
    st.lists(cobertura_line, max_size=3),
)
cobertura_class = st.builds(
    lambda attrs, methods, lines: element(
        "class", attrs, [element("methods", {}, methods), element("lines", {}, lines)]
    ),
    st.fixed_dictionaries(
        {"filename": st.one_of(st.sampled_from(["a.py", "pkg/b.py"]), path_text)},
        optional={"name": text, "line-rate": attr_value()},
    ),
    st.lists(cobertura_method, max_size=2),
    st.lists(cobertura_line, max_size=6),
)
cobertura_document = damaged(
    st.builds(
        lambda prologue, root, sources, classes, stray: (
            prologue
            + element(
                root,
                {"line-rate": "0.5", "version": "7"},
                [
                    element("sources", {}, [element("source", {}, xml_text(s)) for s in sources]),
                    element(
                        "packages",
                        {},
                        [element("package", {"name": "p"}, [element("classes", {}, classes)])],
                    ),
                    stray,
                ],
            )
        ),
        st.sampled_from(XML_PROLOGUES),
        st.sampled_from(["coverage", "coverage", "coverage", "report"]),
        st.lists(st.one_of(st.just("/abs/proj"), st.just("."), text), max_size=2),
        st.lists(cobertura_class, max_size=4),
        st.one_of(st.just(""), cobertura_line),  # a <line> outside any <class>
    )
)
COVERAGE_DOCUMENTS: dict[str, st.SearchStrategy[str]] = {
    "coverage-json": st.one_of(
        mangled(coveragepy_document).map(to_json), coveragepy_document.map(to_json)
    ),
    "istanbul-summary": st.one_of(
        mangled(istanbul_document).map(to_json), istanbul_document.map(to_json)
    ),
    "lcov": lcov_document,
    "cobertura": cobertura_document,
}


@given(fmt=st.sampled_from([*COVERAGE_FORMATS, "coverage-xml", None]), data=st.binary())
def test_coverage_random_bytes(tmp_path: Path, fmt: str | None, data: bytes) -> None:
    if fmt == "coverage-data" or (fmt is None and data.startswith(b"SQLite format 3\x00")):
        data = b"not " + data  # a SQLite header starts coverage.py: test_coverage_data_bytes
    report = write(tmp_path, "coverage.out", data)
    result = outcome(lambda: read_coverage(report, format=fmt, root=tmp_path), ReportError)
    if result is not None:
        sane_coverage(result)


@given(case=tagged(COVERAGE_DOCUMENTS), detect=st.booleans())
def test_coverage_documents(tmp_path: Path, case: tuple[str, str], detect: bool) -> None:
    """Each format's documents, read as that format and, detected by content, as any."""
    fmt, document = case
    report = write(tmp_path, "coverage.out", document)
    chosen = None if detect else fmt
    result = outcome(lambda: read_coverage(report, format=chosen, root=tmp_path), ReportError)
    if result is not None:
        sane_coverage(result)


@given(document=maybe(mangled(coveragepy_document)))
def test_coverage_json_documents(document: Any) -> None:
    """The parsed document straight to the reader, NaN, infinities and huge ints included."""
    result = outcome(lambda: parse_coverage_json(document, "coverage.json"), ReportError)
    if result is not None:
        sane_coverage(result)


@given(document=maybe(mangled(istanbul_document)))
def test_istanbul_documents(tmp_path: Path, document: Any) -> None:
    result = outcome(
        lambda: parse_istanbul_summary(document, "coverage-summary.json", root=tmp_path),
        ReportError,
    )
    if result is not None:
        sane_coverage(result)


@given(document=st.one_of(lcov_document, st.text()))
def test_lcov_text(tmp_path: Path, document: str) -> None:
    result = outcome(lambda: parse_lcov(document, "lcov.info", root=tmp_path), ReportError)
    if result is not None:
        sane_coverage(result)


@given(document=cobertura_document)
def test_cobertura_documents(tmp_path: Path, document: str) -> None:
    report = write(tmp_path, "coverage.xml", document)
    result = outcome(lambda: read_cobertura(report, root=tmp_path), ReportError)
    if result is not None:
        sane_coverage(result)


# coverage.py's own report takes a reader of regular expressions (cobertura._read_fast); any
# damaged copy it still reads must be read exactly as the expat reader reads it.
COVERAGE_PY_XML = (
    Path(__file__).parent.parent / "tests" / "data" / "python" / "coverage-partial.xml"
).read_bytes()


@given(data=st.data())
def test_cobertura_fast_reader_agrees_with_expat(tmp_path: Path, data: st.DataObject) -> None:
    from pytest_agentgate.reports.coverage import cobertura

    document = data.draw(flipped(COVERAGE_PY_XML))
    report = write(tmp_path, "coverage.xml", document)
    fast = outcome(lambda: read_cobertura(report, root=tmp_path), ReportError)
    taken = cobertura._read_fast(document, {}, []) is not None
    limit = cobertura._FAST_MAX_BYTES
    cobertura._FAST_MAX_BYTES = -1  # every report through expat
    try:
        slow = outcome(lambda: read_cobertura(report, root=tmp_path), ReportError)
    finally:
        cobertura._FAST_MAX_BYTES = limit
    if taken:  # (not taken, both calls went through expat)
        assert fast == slow, "the fast reader read a report expat reads otherwise"


@given(
    shards=st.one_of(
        *(
            st.lists(st.tuples(st.just(fmt), documents), min_size=2, max_size=3)
            for fmt, documents in COVERAGE_DOCUMENTS.items()
        ),
        st.lists(tagged(COVERAGE_DOCUMENTS), min_size=2, max_size=3),
    ),
    detect=st.booleans(),
)
def test_coverage_shards(tmp_path: Path, shards: list[tuple[str, str]], detect: bool) -> None:
    """Shards read and merged line by line (read_coverage_files, merge_coverage)."""
    paths = [write(tmp_path, f"shard{i}.out", doc) for i, (_, doc) in enumerate(shards)]
    formats = {fmt for fmt, _ in shards}
    chosen = formats.pop() if len(formats) == 1 and not detect else None
    result = outcome(lambda: read_coverage_files(paths, format=chosen, root=tmp_path), ReportError)
    if result is not None:
        sane_coverage(result)
        again = outcome(lambda: merge_coverage([result, result]), ReportError)
        if again is not None:
            sane_coverage(again)


# coverage.py data files: written by coverage.py itself, then damaged.


@st.composite
def coverage_data_file(draw: st.DrawFn, root: Path) -> bytes:
    from coverage import CoverageData

    source = root / "mod.py"
    source.write_text("".join(f"x{i} = {i}\n" for i in range(draw(st.integers(0, 8)))))
    names = draw(
        st.lists(
            st.sampled_from(
                [str(source), str(root / "gone.py"), "relative.py", str(root / "bad\u00e9.py")]
            ),
            max_size=3,
        )
    )
    data_path = root / "build.coverage"
    data_path.unlink(missing_ok=True)
    data = CoverageData(basename=str(data_path))
    # coverage.py's writer only takes line numbers from 0 up (it stores them as bits); a
    # negative or huge number is the damage step's job, not the writer's.
    lines = st.lists(st.integers(0, 10**6), max_size=6)
    if draw(st.booleans()):
        data.add_lines({name: draw(lines) for name in names})
    else:
        data.add_arcs(
            {
                name: draw(
                    st.lists(st.tuples(st.integers(-3, 30), st.integers(-3, 30)), max_size=6)
                )
                for name in names
            }
        )
    data.write()
    raw = data_path.read_bytes()
    return draw(st.one_of(st.just(raw), flipped(raw)))


@SLOW
@given(data=st.binary(), header=st.booleans())
def test_coverage_data_bytes(tmp_path: Path, data: bytes, header: bool) -> None:
    report = write(tmp_path, ".coverage", (b"SQLite format 3\x00" if header else b"") + data)
    result = outcome(lambda: read_coverage_data(report, root=tmp_path), ReportError)
    if result is not None:
        sane_coverage(result)


@SLOW
@given(data=st.data())
def test_coverage_data_files(tmp_path: Path, data: st.DataObject) -> None:
    report = write(tmp_path, ".coverage", data.draw(coverage_data_file(tmp_path)))
    result = outcome(lambda: read_coverage(report, root=tmp_path), ReportError)
    if result is not None:
        sane_coverage(result)


# -- custom gates' JSON reports, and build output ---------------------------------------------

dotted = st.one_of(
    st.sampled_from(["total", "a.b", "results.0.score", "x.99999999999999999999", "a.\u00b2"]),
    st.lists(
        st.one_of(st.sampled_from(["a", "b", "0", "1", "\u0661", "\u00b2"]), text),
        min_size=1,
        max_size=4,
    ).map(".".join),
)
json_tree = st.recursive(
    st.one_of(hostile_number, text, st.none()),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(["a", "b", "0", "severity", "Severity", "total", "score"]),
            children,
            max_size=3,
        ),
    ),
    max_leaves=12,
)


@given(document=st.one_of(json_tree.map(to_json), st.text()), metric=dotted)
def test_custom_report_json(document: str, metric: str) -> None:
    data = outcome(lambda: load_json(document, "report.json"), ReportError)
    if data is None:
        return
    value = outcome(lambda: lookup(data, metric, "report.json"), ReportError)
    assert value is None or (isinstance(value, float) and math.isfinite(value))
    assert all(isinstance(word, str) for word in severities(data))


build_line = st.one_of(
    text,
    st.builds("{}:{}:{}: error: {}".format, path_text, lcov_number, lcov_number, text),
    st.builds("{}({},{}): error TS{}: {}".format, path_text, lcov_number, lcov_number, small, text),
    st.builds("error[E{}]: {}".format, small, text),
    st.builds("  --> {}:{}:{}".format, path_text, lcov_number, lcov_number),
    st.builds("*** Error compiling '{}'...".format, path_text),
    st.builds('  File "{}", line {}'.format, path_text, lcov_number),
    st.builds("{}Error: {}".format, st.sampled_from(["Syntax", "Value", "x"]), text),
)


@given(output=st.one_of(st.lists(build_line, max_size=12).map("\n".join), st.text()))
def test_build_output(output: str) -> None:
    """Build output has no error type: any text gives findings, never an exception."""
    findings = extract_errors(output)
    sane(findings)
    assert len(tail_lines(output)) <= 20


# -- harness transcripts ---------------------------------------------------------------------

timestamp = st.one_of(
    st.sampled_from(
        [
            "2026-11-23T23:43:09.956Z",
            "2026-11-23T23:43:09",
            "0001-01-01T00:00:00",
            "9999-12-31T23:59:59.999999",
            "9999-12-31T23:59:59-14:00",
            "0001-01-01T00:00:00+14:00",
            "2026-13-45T99:99:99Z",
        ]
    ),
    st.integers(0, 2 * 10**12),
    hostile,
)
tool_name = st.sampled_from(
    ["Bash", "Edit", "Write", "apply_patch", "shell", "exec_command", "run_shell_command", "x"]
)
tool_input = st.fixed_dictionaries(
    {},
    optional={
        "command": st.one_of(
            text, st.lists(st.sampled_from(["bash", "-lc", "pytest -q", "ls"]), max_size=3)
        ),
        "file_path": path_text,
        "path": path_text,
        "input": text,
    },
)
call_id = st.sampled_from(["c1", "c2", "c3"])
usage_count = maybe(st.integers(0, 300_000))
claude_line = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["assistant", "user", "system", "summary"]),
        "uuid": st.just("u"),
        "sessionId": st.just("s"),
        "timestamp": timestamp,
        "message": st.fixed_dictionaries(
            {
                "content": st.lists(
                    st.one_of(
                        st.fixed_dictionaries(
                            {"type": st.just("tool_use"), "id": call_id, "name": tool_name},
                            optional={"input": maybe(tool_input)},
                        ),
                        st.fixed_dictionaries({"type": st.just("text"), "text": text}),
                        st.fixed_dictionaries(
                            {"type": st.just("tool_result"), "tool_use_id": call_id},
                            optional={
                                "content": st.one_of(
                                    text, st.lists(st.fixed_dictionaries({"text": text}))
                                ),
                                "is_error": flag,
                            },
                        ),
                    ),
                    max_size=3,
                )
            },
            optional={
                "id": st.sampled_from(["m1", "m2"]),
                "model": maybe(st.sampled_from(["claude-x", "claude-x[1m]"])),
                "usage": st.fixed_dictionaries(
                    {},
                    optional={
                        "input_tokens": usage_count,
                        "output_tokens": usage_count,
                        "cache_creation_input_tokens": usage_count,
                        "cache_read_input_tokens": usage_count,
                    },
                ),
            },
        ),
    },
    optional={"isSidechain": flag},
)


def codex_record(kind: str, payload: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {"timestamp": timestamp, "type": st.just(kind), "payload": payload}
    )


def event(kind: str | list[str], **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """An object whose "type" is ``kind`` (or one of them), with ``fields``, each optional."""
    kinds = st.just(kind) if isinstance(kind, str) else st.sampled_from(kind)
    return st.fixed_dictionaries({"type": kinds}, optional=fields)


codex_token_usage = st.fixed_dictionaries({"total_tokens": usage_count})
codex_line = st.one_of(
    codex_record("session_meta", st.fixed_dictionaries({"id": st.just("s"), "cwd": path_text})),
    codex_record("turn_context", st.fixed_dictionaries({"model": maybe(text)})),
    codex_record(
        "response_item",
        event(
            "function_call",
            call_id=call_id,
            name=tool_name,
            arguments=st.one_of(
                tool_input.map(to_json),
                st.just(Long("[" * 5000 + "]" * 5000)),  # JSON in a string, nested too deep
                text,
                hostile,
            ),
        ),
    ),
    codex_record(
        "response_item", event("custom_tool_call", call_id=call_id, name=tool_name, input=text)
    ),
    codex_record(
        "response_item",
        event(
            ["function_call_output", "custom_tool_call_output"],
            call_id=call_id,
            output=maybe(text),
        ),
    ),
    codex_record(
        "response_item",
        event(
            "message",
            role=st.just("assistant"),
            content=maybe(
                st.lists(st.fixed_dictionaries({"type": st.just("output_text"), "text": text}))
            ),
        ),
    ),
    codex_record(
        "event_msg",
        event(
            "token_count",
            info=maybe(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "model_context_window": usage_count,
                        "last_token_usage": maybe(codex_token_usage),
                        "total_token_usage": maybe(codex_token_usage),
                    },
                )
            ),
        ),
    ),
    codex_record(
        "event_msg",
        event(
            "item_completed",
            item=maybe(
                st.fixed_dictionaries(
                    {"type": st.sampled_from(["CommandExecution", "FileChange"]), "id": call_id},
                    optional={
                        "exit_code": hostile_number,
                        "changes": maybe(st.dictionaries(path_text, st.none(), max_size=2)),
                    },
                )
            ),
        ),
    ),
    codex_record("event_msg", event("task_complete", last_agent_message=maybe(text))),
    codex_record(
        "token_usage_record",
        st.fixed_dictionaries(
            {},
            optional={
                "response_id": st.sampled_from(["r1", "r2"]),
                "usage": maybe(
                    st.fixed_dictionaries(
                        {}, optional={"input_tokens": usage_count, "output_tokens": usage_count}
                    )
                ),
            },
        ),
    ),
)
gemini_message = st.fixed_dictionaries(
    {"id": st.sampled_from(["g1", "g2"]), "type": st.sampled_from(["gemini", "user"])},
    optional={
        "timestamp": timestamp,
        "model": maybe(st.just("gemini-2.5-flash")),
        "tokens": st.fixed_dictionaries(
            {}, optional={"input": usage_count, "output": usage_count, "total": usage_count}
        ),
        "toolCalls": maybe(
            st.lists(
                st.fixed_dictionaries(
                    {"id": call_id, "name": tool_name},
                    optional={
                        "args": maybe(tool_input),
                        "status": st.sampled_from(["success", "error", "cancelled"]),
                        "result": maybe(
                            st.lists(
                                st.fixed_dictionaries(
                                    {
                                        "functionResponse": st.fixed_dictionaries(
                                            {
                                                "response": st.fixed_dictionaries(
                                                    {}, optional={"output": text, "error": text}
                                                )
                                            }
                                        )
                                    }
                                ),
                                max_size=2,
                            )
                        ),
                    },
                ),
                max_size=2,
            )
        ),
        "content": st.one_of(text, st.lists(st.fixed_dictionaries({"text": text}), max_size=2)),
    },
)
gemini_line = st.one_of(
    st.fixed_dictionaries(
        {"sessionId": st.just("s"), "projectHash": st.just("h"), "startTime": timestamp}
    ),
    gemini_message,
    st.builds(lambda messages: {"$set": {"messages": messages}}, st.lists(gemini_message)),
    st.builds(lambda when: {"$set": {"lastUpdated": when}}, timestamp),
)


def copilot_record(kind: str, **data: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {
            "type": st.just(kind),
            "data": maybe(st.fixed_dictionaries({}, optional=data)),
            "id": st.just("e"),
            "timestamp": timestamp,
        }
    )


copilot_line = st.one_of(
    copilot_record(
        "assistant.message",
        toolRequests=maybe(
            st.lists(
                st.fixed_dictionaries(
                    {"toolCallId": call_id, "name": tool_name},
                    optional={"arguments": maybe(tool_input)},
                ),
                max_size=2,
            )
        ),
        model=maybe(text),
        content=maybe(text),
        parentToolCallId=st.one_of(st.none(), call_id),
    ),
    copilot_record(
        "tool.execution_complete",
        toolCallId=call_id,
        success=flag,
        shellExecution=maybe(st.fixed_dictionaries({"exitCode": hostile_number})),
        fileEdits=maybe(st.lists(maybe(st.fixed_dictionaries({"path": path_text})), max_size=2)),
    ),
    copilot_record(
        "session.usage_record",
        usage=maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "inputTokens": usage_count,
                    "outputTokens": usage_count,
                    "apiCallId": st.sampled_from(["a1", "a2"]),
                    "maxPromptTokens": usage_count,
                },
            )
        ),
    ),
    copilot_record("session.start", sessionId=st.just("s")),
)
TRANSCRIPT_LINES = {
    "claude": claude_line,
    "codex": codex_line,
    "gemini": gemini_line,
    "copilot": copilot_line,
}
junk_line = st.one_of(
    text.map(lambda t: t.replace("\n", " ")),
    st.just(Long(_DEEP)),
    st.just(Long('{"a":' * 5000 + "1" + "}" * 5000)),
    hostile.map(to_json),
)


def transcript(harness: str) -> st.SearchStrategy[str]:
    line = mangled(TRANSCRIPT_LINES[harness]).map(to_json)
    return st.lists(mostly(line, junk_line), max_size=8).map("\n".join)


@given(data=st.binary(), hint=st.sampled_from([None, "claude", "codex", "gemini", "copilot", "x"]))
def test_transcript_random_bytes(tmp_path: Path, data: bytes, hint: str | None) -> None:
    path = write(tmp_path, "t.jsonl", data)
    session = outcome(lambda: read_transcript(path, harness=hint), ReportError)
    if session is not None:
        sane(session)


@given(
    case=tagged({name: damaged(transcript(name)) for name in TRANSCRIPT_LINES}),
    hint=st.sampled_from([None, "claude", "codex", "gemini", "copilot"]),
)
def test_transcript_documents(tmp_path: Path, case: tuple[str, str], hint: str | None) -> None:
    """Each harness's transcripts, read with each harness named as the hint."""
    path = write(tmp_path, "t.jsonl", case[1])
    session = outcome(lambda: read_transcript(path, harness=hint), ReportError)
    if session is not None:
        sane(session)
        assert session.duration_s is None or 0 <= session.duration_s < math.inf


# -- real samples, damaged --------------------------------------------------------------------


def _sample_reader(path: Path) -> Callable[[Path, Path], object] | None:
    name, folder = path.name, path.parent.name
    if folder == "transcripts" and name.endswith(".jsonl"):
        return lambda p, root: read_transcript(p)
    if folder == "junit" or (name.endswith(".xml") and "junit" in name):
        return lambda p, root: read_junit([p])
    if name.startswith(("coverage", "c8", "lcov", "cobertura")) and not name.endswith(".data"):
        return lambda p, root: read_coverage(p, root=root)
    lint_name = folder == "lint" or name.startswith(("ruff", "eslint", "mypy", "sarif"))
    if lint_name and name.endswith((".json", ".jsonl", ".txt", ".sarif")):
        return lambda p, root: read_lint(p)
    return None


SAMPLES = sorted(
    (path, reader)
    for path in DATA.glob("*/*")
    if path.is_file() and (reader := _sample_reader(path)) is not None
)


def test_every_kind_of_sample_is_fuzzed() -> None:
    kinds = {path.parent.name for path, _ in SAMPLES}
    assert {"junit", "lint", "python", "js", "transcripts", "bad"} <= kinds
    assert len(SAMPLES) >= 30, [p.name for p, _ in SAMPLES]


@given(data=st.data(), index=st.integers(0, max(0, len(SAMPLES) - 1)))
def test_damaged_samples(tmp_path: Path, data: st.DataObject, index: int) -> None:
    sample, reader = SAMPLES[index]
    damaged_bytes = data.draw(flipped(sample.read_bytes()))
    path = write(tmp_path, sample.name, damaged_bytes)
    result = outcome(lambda: reader(path, tmp_path), ReportError)
    if isinstance(result, JUnitRun):
        sane_run(result)
    elif isinstance(result, CoverageReport):
        sane_coverage(result)
    elif result is not None:
        sane(result)


# -- configuration ---------------------------------------------------------------------------

OPTION_NAMES = sorted({o.name for kind in REGISTRY.kinds.values() for o in kind.options})
PATHS = st.sampled_from(["report.xml", "out/*.xml", "coverage.json", "lcov.info", "r.sarif"])
OPTION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "str": st.sampled_from(["pytest -q", "ruff check .", "eslint .", "ruff", "lcov", "total"]),
    "bool": st.booleans(),
    "int": st.integers(0, 50),
    "percent": st.one_of(st.integers(0, 100), st.floats(0, 100)),
    "number": st.one_of(st.integers(-5, 900), st.floats(-5, 900)),
    "globs": st.one_of(PATHS, st.lists(PATHS, min_size=1, max_size=2)),
    "env": st.dictionaries(st.sampled_from(["A", "B"]), st.one_of(text, st.integers(), hostile)),
}


def gate_body(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """A gate of ``kind``: its options (from the registry), each of its type, now and then
    hostile; now and then an unknown key."""
    options = {
        o.name: maybe(st.sampled_from(o.choices) if o.choices else OPTION_VALUES[o.type])
        for o in REGISTRY.kinds[kind].options
    }
    if "timeout" in options:
        options["timeout"] = maybe(st.floats(0.5, 900))
    if "format" in options:
        formats = LINT_FORMATS if kind == "lint" else COVERAGE_FORMATS
        options["format"] = maybe(st.sampled_from(sorted(formats)))
    # A gate that runs a command is the usual one (without command or report it is refused).
    required = {"command": options.pop("command")} if "command" in options else {}
    body = st.fixed_dictionaries(required, optional=options)
    return mostly(body, merged(body, st.dictionaries(text, hostile, min_size=1, max_size=1)))


gate_name = st.one_of(
    st.sampled_from(["build", "lint", "test", "coverage", "session", "mine", "tset"]), text
)
custom_gate = st.builds(lambda name, body: {**body, "name": name}, text, gate_body("custom"))
gates = mostly(
    st.fixed_dictionaries(
        {},
        optional={
            **{kind: gate_body(kind) for kind in ("build", "lint", "test", "coverage", "session")},
            "custom": maybe(st.lists(custom_gate, max_size=2)),
            "mine": gate_body("custom").map(lambda body: {**body, "kind": "custom"}),
        },
    ),
    st.dictionaries(gate_name, st.one_of(gate_body("lint"), hostile), max_size=3),
    odds=4,
)
config_document = st.fixed_dictionaries(
    {},
    optional={
        "profile": maybe(st.sampled_from(["strict", "standard", "relaxed"])),
        "gates": gates,
        "attempts": st.fixed_dictionaries(
            {},
            optional={
                "max": maybe(st.integers(1, 9)),
                "global_max": maybe(st.integers(1, 20)),
                "per_branch": flag,
            },
        ),
        "continuation": st.fixed_dictionaries(
            {}, optional={"max_chars": maybe(st.integers(200, 9000))}
        ),
        "enabled": flag,
        "base": maybe(st.sampled_from(["origin/main", "HEAD~1"])),
        "integrity": st.fixed_dictionaries(
            {},
            optional={
                "allow": st.lists(
                    st.fixed_dictionaries(
                        {
                            "rule": maybe(st.just("test-deleted")),
                            "path": maybe(st.just("tests/*")),
                            "reason": maybe(st.just("approved in review")),
                        }
                    ),
                    max_size=2,
                )
            },
        ),
        "budget": st.fixed_dictionaries(
            {},
            optional={
                "max_tool_calls": maybe(st.integers(1, 500)),
                "max_tokens": maybe(st.integers(1, 10**7)),
                "max_context_percent": maybe(st.floats(1, 100)),
            },
        ),
        "hook": st.fixed_dictionaries({}, optional={"budget": maybe(st.integers(10, 600))}),
    },
)
YAML_TOKENS = [
    "!!set {a, b}",
    "!!binary aGVsbG8=",
    "!!timestamp 2001-12-14t21:59:43.10-05:00",
    "2001-12-14",
    "2026-13-45",
    "!!python/object/apply:os.system [echo]",
    "!!float 1e400",
    "!!float abc",
    "!!bool maybe",
    "!!timestamp today",
    "!!int 0x",
    Long("!!int " + "1" * 5000),
    Long("1" * 5000),
    Long("0x" + "f" * 5000),
    "190:20:30",
    "0b101",
    "0o777",
    "1_000",
    ".inf",
    ".nan",
    "~",
    "&a [1, 2]",
    "*a",
    "*undefined",
    "{? [a]: b}",
    Long("[" * 100 + "]" * 100),
    "'unterminated",
    "!!str",
    "!<tag:yaml.org,2002:omap> [a: 1]",
    "!!pairs [a: 1, a: 2]",
]
yaml_hostile = st.one_of(hostile, st.sampled_from([Raw(t) for t in YAML_TOKENS]))


def to_yaml_flow(value: Any) -> str:
    """YAML in flow style (JSON-like), where a Raw token is YAML text put in as it is.

    Deep nesting is written 200 levels deep, not 3,000: PyYAML's scanner spends about a second
    on the first thousand levels before the recursion limit stops it (tests/test_config_hostile.py
    has the full depth); 200 levels meet the same check (MAX_DEPTH is 64).
    """
    if value is _DEEP:
        return "[" * 200 + "]" * 200
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k))}: {to_yaml_flow(v)}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_yaml_flow(v) for v in value) + "]"
    return to_json(value)


def _plain(value: Any) -> Any:
    """``value`` with plain strings only, for yaml.safe_dump."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


TOML_TOKENS = [
    "1979-05-27T07:32:00Z",
    "2026-13-45",
    Long("1" * 5000),
    Long("0x" + "f" * 5000),
    "inf",
    "nan",
    "-inf",
    "'''x",
    '"\\ud800"',
    Long("[" * 100 + "]" * 100),
    "{a = {b = {c = 1}}}",
    "1e400",
    "00:00:99",
]


def to_toml_value(value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # TOML has no surrogate escapes
    if isinstance(value, list):
        return "[" + ", ".join(to_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k))} = {to_toml_value(v)}" for k, v in value.items())
            + "}"
        )
    raise TypeError(type(value))


def to_toml(document: Any, table: str | None) -> str:
    """``document``'s keys as a TOML table (None: the top level)."""
    lines = [] if table is None else [f"[{table}]"]
    if isinstance(document, dict):
        lines += [f"{json.dumps(str(k))} = {to_toml_value(v)}" for k, v in document.items()]
    else:
        lines.append(f"value = {to_toml_value(document)}")
    return "\n".join(lines) + "\n"


toml_hostile = st.one_of(hostile, st.sampled_from([Raw(t) for t in TOML_TOKENS]))


@st.composite
def with_hostile(draw: st.DrawFn, documents: st.SearchStrategy[Any], values: Any) -> Any:
    """``mangled`` with the format's own hostile values (YAML tags, TOML dates) put in."""
    doc = draw(mangled(documents))
    if isinstance(doc, dict) and draw(st.booleans()):
        doc[draw(st.sampled_from(["profile", "base", "enabled", "gates", "attempts"]))] = draw(
            values
        )
    if isinstance(doc, dict) and isinstance(doc.get("gates"), dict) and draw(st.booleans()):
        for body in doc["gates"].values():
            if isinstance(body, dict):
                body[draw(st.sampled_from(OPTION_NAMES))] = draw(values)
                break
    return doc


ws_gate = st.fixed_dictionaries(
    {},
    optional={
        "enabled": flag,
        "command": maybe(st.sampled_from(["pytest", "ruff check ."])),
        "timeout": count,
        "maxErrors": count,
        "maxWarnings": count,
        "reportPath": maybe(st.just("r.xml")),
        "format": maybe(st.sampled_from(["ruff", "lcov"])),
        "minPassRate": count,
        "thresholds": st.dictionaries(
            st.sampled_from(["lines", "branches", "functions", "statements", "x"]), count
        ),
    },
)
ws_document = st.fixed_dictionaries(
    {},
    optional={
        "enabled": flag,
        "profile": st.sampled_from(["strict", "standard"]),
        "$schema": text,
        "tokenBudget": count,
        "gates": st.fixed_dictionaries(
            {},
            optional={
                "build": ws_gate,
                "lint": ws_gate,
                "test": ws_gate,
                "coverage": ws_gate,
                "custom": st.lists(
                    st.fixed_dictionaries(
                        {"name": text},
                        optional={
                            "command": text,
                            "maxSeverity": text,
                            "metric": text,
                            "max": count,
                            "min": count,
                            "reportPath": text,
                        },
                    ),
                    max_size=2,
                ),
            },
        ),
        "rejection": st.fixed_dictionaries(
            {}, optional={"maxRetries": count, "escalateToUser": flag}
        ),
    },
)
CONFIG_TEXTS: dict[str, st.SearchStrategy[str]] = {
    "agentgate.yml": st.one_of(
        with_hostile(config_document, yaml_hostile).map(to_yaml_flow),
        mangled(config_document).map(lambda d: yaml.safe_dump(_plain(d), allow_unicode=True)),
    ),
    "agentgate.toml": with_hostile(config_document, toml_hostile).map(lambda d: to_toml(d, None)),
    "pyproject.toml": with_hostile(config_document, toml_hostile).map(
        lambda d: '[project]\nname = "p"\n' + to_toml(d, "tool.agentgate")
    ),
    "agentgate.json": st.one_of(mangled(ws_document), ws_document).map(to_json),
}


def sane_config(config: Any) -> None:
    # A custom gate's min and max may be negative.
    sane(config, signed_floats=True)


def _load(text_: str, name: str, root: Path) -> Any:
    raw = parse_raw(text_, name, name)
    return validate(raw, REGISTRY, root=root, path=None)


@given(case=tagged({name: damaged(texts) for name, texts in CONFIG_TEXTS.items()}))
def test_config_documents(tmp_path: Path, case: tuple[str, str]) -> None:
    """Each kind of configuration file, read and validated."""
    name, document = case
    config = outcome(lambda: _load(document, name, tmp_path), ConfigError)
    if config is not None:
        sane_config(config)


@given(content=st.text(), name=st.sampled_from(list(CONFIG_TEXTS)))
def test_config_random_text(tmp_path: Path, content: str, name: str) -> None:
    config = outcome(lambda: _load(content, name, tmp_path), ConfigError)
    if config is not None:
        sane_config(config)


@given(data=st.binary(), name=st.sampled_from([*CONFIG_TEXTS, ".agentgate.yaml"]))
def test_config_random_bytes(tmp_path: Path, data: bytes, name: str) -> None:
    path = write(tmp_path, name, data)
    outcome(lambda: read_raw(path), ConfigError)
    config = outcome(lambda: load_config(path, REGISTRY), ConfigError)
    if config is not None:
        sane_config(config)


# -- the stop hooks' stdin -------------------------------------------------------------------

hook_event = st.fixed_dictionaries(
    {},
    optional={
        "session_id": maybe(st.just("s1")),
        "cwd": maybe(st.just("/proj")),
        "transcript_path": maybe(st.just("/t.jsonl")),
        "last_assistant_message": maybe(text),
        "prompt_response": maybe(text),
        "hook_event_name": st.sampled_from(
            ["Stop", "AfterAgent", "agentStop", "stop", "SessionStart", "sessionStart"]
        ),
        "source": maybe(st.sampled_from(["startup", "resume", "new"])),
        "stop_hook_active": flag,
        "timestamp": st.one_of(timestamp, hostile_number),
        "sessionId": maybe(st.just("s2")),
        "transcriptPath": maybe(st.just("/t.jsonl")),
        "conversation_id": maybe(st.just("c")),
        "workspace_roots": maybe(st.lists(maybe(st.just("/proj")))),
        "status": maybe(st.sampled_from(["completed", "aborted", "error"])),
        "loop_count": count,
    },
)


@st.composite
def hook_stdin(draw: st.DrawFn) -> bytes:
    content = to_json(draw(mangled(hook_event)))
    if draw(st.booleans()):
        content = draw(damaged(st.just(content)))
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-16", "utf-32-le", "utf-8-sig"]))
    return content.encode(encoding, "surrogatepass")


@given(harness=st.sampled_from(list(HARNESSES)), raw=st.one_of(st.binary(), hook_stdin()))
def test_hook_stdin(harness: str, raw: bytes) -> None:
    event = outcome(lambda: HARNESSES[harness].parse(raw), EventError)
    if event is not None:
        sane(event)
        assert isinstance(event.session, str) and isinstance(event.cwd, str)


@given(
    harness=st.sampled_from(list(HARNESSES)),
    raw=st.one_of(st.binary(), hook_stdin()),
    flagged=st.booleans(),
)
def test_session_start_stdin(
    harness: str, raw: bytes, flagged: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever comes on stdin, the session's start answers nothing and exits 0."""
    from pytest_agentgate.harness.start import is_start, start_session

    monkeypatch.setenv("AGENTGATE_STATE_HOME", str(tmp_path / "state"))
    if not is_start(HARNESSES[harness], raw, flagged):
        return
    answer = start_session(HARNESSES[harness], raw)
    assert (answer.stdout, answer.exit_code) == ("", 0)


def test_profiles() -> None:
    """CI's run is bounded and has no deadline (a shared machine's pauses are no bug); neither it
    nor the default run keeps examples in the repository."""
    ci = settings.get_profile("ci")
    assert ci.max_examples <= 200 and ci.deadline is None and ci.database is None
    assert settings.get_profile("dev").database is None
    assert settings.get_profile("long").max_examples >= 2000
