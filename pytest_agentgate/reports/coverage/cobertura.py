"""Cobertura XML (``coverage xml``, istanbul/c8, coverlet, gcovr, ...), streamed with expat."""

from __future__ import annotations

import os
import re
from typing import Any
from xml.parsers import expat

from pytest_agentgate.reports._io import (
    MAX_COUNT,
    XmlRejected,
    display_path,
    hardened_expat,
    read_bytes,
    whole_number,
)
from pytest_agentgate.reports.coverage._totals import report_from_details
from pytest_agentgate.reports.hints import COVERAGE_HINTS
from pytest_agentgate.reports.model import CoverageDetail, CoverageReport, ReportError

_CONDITION = re.compile(r"\((\d+)\s*/\s*(\d+)\)")
_COBERTURA_NAMES = ("coverage", "sources", "source", "class", "method", "line", "lines")

# The shape coverage.py writes, read without a Python call per element (about twice as fast):
# each ``<class>`` start, ``</class>`` end and ``<line .../>`` exactly as coverage.py spells them.
_FAST_MAX_BYTES = 64 * 1024 * 1024
_FAST_CLASS = re.compile(
    # No tab or line break in a filename: XML reads them as spaces, the expression would not.
    rb'<class name="[^"<>&]*" filename="([^"<>&\t\r\n]+)"(?: [A-Za-z_][\w.-]*="[^"<>&]*")*>'
    # The body never runs into the next class: a report whose end tags are spelled otherwise
    # (`</class >`) fails each class at the next one, not at the end of the file.
    rb"([^<]*(?:<(?!/class>|class[\s/>])[^<]*)*)</class>"
)
_FAST_LINE = re.compile(
    rb'<line number="(\d{1,15})" hits="(0|[1-9]\d{0,14})"'
    rb'(?: branch="true" condition-coverage="\d{1,3}% \((\d{1,15})/(\d{1,15})\)"'
    rb'(?: missing-branches="[^"<>&]*")?)?/>'
)
_FAST_SOURCE = re.compile(rb"<source>([^<>&]*)</source>")
_FAST_ROOT = re.compile(
    rb'(?:<\?xml version="1\.0"(?: encoding="(?i:utf-8)")? ?\?>)?\s*<coverage[\s>]'
)
_COMMENT = re.compile(rb"<!--(.*?)-->", re.DOTALL)
_METHOD = re.compile(rb"<method[\s/>]")
# Every byte but those XML 1.0 forbids anywhere in a document (expat refuses them):
# ``data.translate(None, _ALLOWED)`` keeps only the forbidden ones, at memory speed.
_ALLOWED = bytes(b for b in range(256) if b >= 0x20 or b in (0x09, 0x0A, 0x0D))
# U+FFFE and U+FFFF in UTF-8: no XML characters either (surrogates are no UTF-8 at all).
_NONCHARACTERS = (b"\xef\xbf\xbe", b"\xef\xbf\xbf")


def _cobertura_handlers(
    parser: Any, details: dict[str, CoverageDetail], sources: list[str]
) -> dict[str, bool]:
    """Install handlers that fold every ``<line>`` into ``details``; returns the flags they set."""
    flags = {"root": False, "branches": False, "functions": False}
    detail: CoverageDetail | None = None
    class_name = ""
    method: str | None = None
    method_lines = method_ran = False
    text: list[str] = []

    def number(attrs: dict[str, str], key: str) -> int:
        raw = attrs.get(key)
        if raw is None:
            raise XmlRejected(
                f"line {parser.CurrentLineNumber}: <line> without a {key} attribute",
                COVERAGE_HINTS["cobertura"],
            )
        value = whole_number(raw)  # some tools write hits as "1.0"
        if value is None:
            shown = raw if len(raw) <= 32 else raw[:32] + "…"
            raise XmlRejected(
                f"line {parser.CurrentLineNumber}: <line> {key}={shown!r} is not a credible "
                f"count (a whole number from 0 to {MAX_COUNT:,})",
                COVERAGE_HINTS["cobertura"],
            )
        return value

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal detail, class_name, method, method_lines, method_ran
        if tag == "line":
            if detail is None:
                return  # a <line> outside any <class>: not tied to a file
            try:  # the common case inline: a short whole number
                raw_hits = attrs["hits"]
                hits = int(raw_hits) if len(raw_hits) <= 15 else -1
            except (KeyError, ValueError):
                hits = -1
            ran = (hits if hits >= 0 else number(attrs, "hits")) > 0
            if method is not None:
                method_lines = True
                method_ran = method_ran or ran
                return
            try:
                line = int(attrs["number"])
            except (KeyError, ValueError):
                line = -1
            if line < 0:
                line = number(attrs, "number")
            detail.lines[line] = detail.lines.get(line, False) or ran
            condition = attrs.get("condition-coverage")
            if condition is not None and attrs.get("branch", "true") != "false":
                found = _CONDITION.search(condition)
                if found is None:
                    return
                covered, total = int(found.group(1)), int(found.group(2))
                if covered > total:
                    raise XmlRejected(
                        f"line {parser.CurrentLineNumber}: condition-coverage {condition!r} "
                        "covers more than its total",
                        COVERAGE_HINTS["cobertura"],
                    )
                flags["branches"] = True
                if detail.line_branches is None:
                    detail.line_branches = {}
                previous = detail.line_branches.get(line)
                if previous is None or (covered, total) > previous:
                    detail.line_branches[line] = (covered, total)
        elif tag == "class":
            filename = attrs.get("filename")
            if not filename:
                raise XmlRejected(
                    f"line {parser.CurrentLineNumber}: <class> without a filename",
                    COVERAGE_HINTS["cobertura"],
                )
            detail = details.setdefault(filename, CoverageDetail())
            class_name = attrs.get("name", "")
        elif tag == "method" and detail is not None:
            method = f"{class_name}.{attrs.get('name', '')}{attrs.get('signature', '')}"
            method_lines = method_ran = False
        elif tag == "source":
            text.clear()
            parser.CharacterDataHandler = text.append
        elif tag == "coverage" and not flags["root"]:
            flags["root"] = True

    def end(tag: str) -> None:
        nonlocal detail, method
        if tag == "method" and method is not None and detail is not None:
            if method_lines:  # a method without lines says nothing about whether it ran
                flags["functions"] = True
                if detail.functions is None:
                    detail.functions = {}
                detail.functions[method] = detail.functions.get(method, False) or method_ran
            method = None
        elif tag == "class":
            detail = None
        elif tag == "source":
            parser.CharacterDataHandler = None
            sources.append("".join(text).strip())

    def start_root(tag: str, attrs: dict[str, str]) -> None:
        if tag != "coverage":
            raise XmlRejected(
                f"not a Cobertura report: the root element is <{tag}>, expected <coverage>",
                COVERAGE_HINTS["cobertura"],
            )
        parser.StartElementHandler = start
        start(tag, attrs)

    parser.StartElementHandler = start_root
    parser.EndElementHandler = end
    return flags


def _read_fast(data: bytes, details: dict[str, CoverageDetail], sources: list[str]) -> bool | None:
    """A well-formed report in coverage.py's exact shape, read with regular expressions: the
    same details and sources as the expat handlers, and whether it has branch data. None when
    the report is of any other shape (or anything is in doubt): the expat reader then reads it
    and says what is wrong.

    Well-formedness is checked without a pass of expat over the whole report (it took a quarter
    of the read): every ``<line>`` is one the expression read, every class body is exactly
    ``<methods/><lines>`` those lines ``</lines>`` (or ``<methods/><lines/>``), and expat reads
    the rest, the skeleton with each class's own start tag but not its body. What no part may
    hold is refused first: an entity or character reference (``&``), a character XML forbids
    (controls, U+FFFE, U+FFFF), ``]]>``, bytes that are not UTF-8."""
    if not _FAST_ROOT.match(data) or _METHOD.search(data):
        return None
    if b"&" in data or b"]]>" in data or data.translate(None, _ALLOWED):
        return None
    if any(nonchar in data for nonchar in _NONCHARACTERS):
        return None
    # Nothing but comments without markup may hide text from the expression: no CDATA, no
    # DOCTYPE, no processing instruction but the XML declaration.
    comments = _COMMENT.findall(data)
    if data.count(b"<!") != len(comments) or any(b"<" in c for c in comments):
        return None
    if data.count(b"<?") > data.startswith(b"<?xml "):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    branches = False
    blocks = lines_read = 0
    skeleton: list[bytes] = []
    end = 0
    for block in _FAST_CLASS.finditer(data):
        body = block.group(2)
        found = _FAST_LINE.findall(body)
        frame = _frame(body)
        marks = len(found) + frame  # the lines and the frame's tags
        if not frame or body.count(b"<") != marks or body.count(b">") != marks:
            return None
        if frame == 2 and found:
            return None
        blocks += 1
        lines_read += len(found)
        hits = {int(number): ran != b"0" for number, ran, _, _ in found}
        if len(hits) != len(found):
            return None  # a line written twice
        detail = details.setdefault(block.group(1).decode("utf-8"), CoverageDetail())
        if detail.lines:
            return None  # a file in two classes: the expat reader folds them
        detail.lines = hits
        if any(c for _, _, c, _ in found):
            counts = {int(n): (int(c), int(t)) for n, _, c, t in found if c}
            if any(c > t for c, t in counts.values()):
                return None  # more branches covered than there are
            branches = True
            detail.line_branches = counts
        skeleton += (data[end : block.start(2)], b"</class>")
        end = block.end()
    skeleton.append(data[end:])
    written = (
        data.count(b"<line") - data.count(b"<lines"),
        data.count(b"<class") - data.count(b"<classes"),
        data.count(b"</class") - data.count(b"</classes"),
    )
    if written != (lines_read, blocks, blocks):
        return None  # an element in another spelling, or out of place: expat reads them all
    parser = hardened_expat(allow_doctype=False)
    try:
        parser.Parse(b"".join(skeleton), True)
    except (XmlRejected, expat.ExpatError, ValueError, LookupError):
        return None
    found_sources = _FAST_SOURCE.findall(data)
    if len(found_sources) != data.count(b"<source") - data.count(b"<sources"):
        return None
    if any(b"\r" in s for s in found_sources):
        return None  # XML reads a carriage return as a line feed; the expression would not
    sources.extend(s.decode("utf-8").strip() for s in found_sources)
    return branches


def _frame(body: bytes) -> int:
    """How many tags frame a class body's lines: 3 for ``<methods/>``, then ``<lines>`` holding
    all its ``<line>``s, then ``</lines>``; 2 for ``<methods/><lines/>`` (a file without
    lines); 0 for anything else."""
    inner = body.strip()
    if not inner.startswith(b"<methods/>"):
        return 0
    rest = inner[len(b"<methods/>") :].lstrip()
    if rest == b"<lines/>":
        return 2
    return 3 if rest.startswith(b"<lines>") and rest.endswith(b"</lines>") else 0


def _resolve(filename: str, sources: list[str], root: str | os.PathLike[str] | None) -> str:
    """A Cobertura filename as a project path: joined to the ``<source>`` where it exists."""
    if os.path.isabs(filename):
        return _relative(filename, root)
    for base in sources:
        if base and os.path.exists(os.path.join(base, filename)):
            return _relative(os.path.join(base, filename), root)
    return filename


def _relative(path: str, root: str | os.PathLike[str] | None) -> str:
    """``display_path(path, root)``, without resolving links when the strings already say it
    (resolving every file of a large report took longer than reading it)."""
    base = os.path.abspath(os.getcwd() if root is None else os.fspath(root)).rstrip(os.sep)
    normal = os.path.normpath(path)
    if normal.startswith(base + os.sep):
        return normal[len(base) + 1 :]
    return display_path(path, root)


def read_cobertura(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """Cobertura XML (``coverage xml``, istanbul/c8, coverlet, gcovr, ...), streamed with expat.

    The ``line-rate``/``branch-rate`` and ``lines-valid`` attributes are never read: lines are
    counted from the ``<line>`` elements of each ``<class>`` (one per file and line, covered when
    any occurrence has hits > 0), branches from ``condition-coverage="50% (1/2)"``. Functions
    come from ``<method>`` elements that carry ``<line>``s (istanbul, coverlet), covered when one
    of their lines ran; a report without them (coverage.py writes ``<methods/>``) has no function
    data: None. A report with no ``condition-coverage`` at all has no branch data: None. A bare
    DOCTYPE reference (istanbul writes one) is tolerated, never fetched; entities are refused.
    """
    source = os.fspath(path)
    hint = COVERAGE_HINTS["cobertura"]
    details: dict[str, CoverageDetail] = {}
    sources: list[str] = []
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed by the `with` below
    except OSError:
        read_bytes(source, hint=hint)  # raises the right ReportError
        raise  # pragma: no cover - read_bytes raised
    fast = _fast(handle, details, sources)
    if fast is not None:
        handle.close()
        return _report(source, details, sources, root, branches=fast, functions=False)
    parser = hardened_expat(names=_COBERTURA_NAMES, allow_doctype=True)
    parser.buffer_text = True
    flags = _cobertura_handlers(parser, details, sources)
    got = False
    final = False
    try:
        with handle:
            handle.seek(0)
            while chunk := handle.read(1 << 20):
                got = got or bool(chunk.strip())
                parser.Parse(chunk, False)
            if not got:
                raise ReportError(source, "is empty", f"did the coverage step crash? {hint}")
            final = True
            parser.Parse(b"", True)
    except XmlRejected as exc:
        raise ReportError(source, exc.problem, exc.hint) from None
    except expat.ExpatError as exc:
        what = expat.errors.messages.get(exc.code, str(exc))
        problem = "is truncated XML" if final and flags["root"] else "is not well-formed XML"
        raise ReportError(source, f"{problem} ({what} at line {exc.lineno})", hint) from None
    except (LookupError, ValueError) as exc:
        raise ReportError(source, f"cannot be decoded: {exc}", hint) from None
    except OSError as exc:
        raise ReportError(source, f"cannot be read: {exc.strerror or exc}", hint) from None
    finally:
        parser.StartElementHandler = parser.EndElementHandler = None
        parser.CharacterDataHandler = None
    return _report(
        source, details, sources, root, branches=flags["branches"], functions=flags["functions"]
    )


def _fast(handle: Any, details: dict[str, CoverageDetail], sources: list[str]) -> bool | None:
    """:func:`_read_fast` over an open report of at most :data:`_FAST_MAX_BYTES`; None (and
    ``details`` and ``sources`` left empty) when it cannot read it."""
    try:
        if os.fstat(handle.fileno()).st_size > _FAST_MAX_BYTES:
            return None
        data = handle.read(_FAST_MAX_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > _FAST_MAX_BYTES:
        return None
    found = _read_fast(data, details, sources)
    if found is None:
        details.clear()
        sources.clear()
    return found


def _report(
    source: str,
    details: dict[str, CoverageDetail],
    sources: list[str],
    root: str | os.PathLike[str] | None,
    *,
    branches: bool,
    functions: bool,
) -> CoverageReport:
    resolved: dict[str, CoverageDetail] = {}
    for filename, detail in details.items():
        name = _resolve(filename, sources, root)
        if name in resolved:  # two spellings of one file
            other = resolved[name]
            for line, ran in detail.lines.items():
                other.lines[line] = other.lines.get(line, False) or ran
        else:
            resolved[name] = detail
    return report_from_details(
        source, "cobertura", resolved, branches=branches, functions=functions, root=root
    )
