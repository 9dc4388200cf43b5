"""Which coverage format a file holds, judged by its content (never by its name)."""

from __future__ import annotations

import os
import re
from typing import Any

from pytest_agentgate.reports._io import decode_text, load_json, read_bytes
from pytest_agentgate.reports.coverage._common import COVERAGE_FORMATS, SQLITE_MAGIC
from pytest_agentgate.reports.hints import missing_hint
from pytest_agentgate.reports.model import ReportError


def _unknown_format(source: str, what: str) -> ReportError:
    return ReportError(
        source,
        f"is not a coverage report agentgate reads ({what})",
        "agentgate reads coverage.py JSON (`coverage json`), the coverage.py data file "
        "(`.coverage`), istanbul `coverage-summary.json` (json-summary reporter), Cobertura XML "
        "(`coverage xml` and other tools' Cobertura reporters) and lcov tracefiles; "
        f"formats: {', '.join(COVERAGE_FORMATS)}",
    )


def _classify_json(data: object) -> str | None:
    if not isinstance(data, dict):
        return None
    meta, totals = data.get("meta"), data.get("totals")
    if isinstance(meta, dict) and ("format" in meta or "branch_coverage" in meta):
        return "coverage-json"
    if isinstance(totals, dict) and "num_statements" in totals:
        return "coverage-json"
    total = data.get("total")
    if isinstance(total, dict) and isinstance(total.get("lines"), dict):
        lines = total["lines"]
        if "pct" in lines or "total" in lines:
            return "istanbul-summary"
    return None


_SNIFF_BYTES = 64 * 1024
_LCOV_START = re.compile(rb"(?:TN|SF|VER):")
# The first element's start tag, past the XML declaration, comments and a DOCTYPE.
_FIRST_TAG = re.compile(
    rb"(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>|\s)*<([A-Za-z_][\w:.-]*)([^>]*)",
    re.DOTALL,
)


def _sniff_xml(head: bytes, source: str) -> str:
    found = _FIRST_TAG.match(head)
    if found is None:
        raise _unknown_format(source, "XML whose first element could not be found")
    tag, attrs = found.group(1).decode("ascii", "replace"), found.group(2)
    if tag == "coverage" and b"clover=" in attrs:
        raise _unknown_format(source, "Clover XML; write Cobertura or lcov instead")
    if tag == "coverage":
        return "cobertura"
    if tag == "report":
        raise _unknown_format(
            source, "JaCoCo XML? convert it to Cobertura (e.g. cover2cover) or lcov"
        )
    raise _unknown_format(source, f"XML with root element <{tag}>")


def sniff(data: bytes, source: str) -> tuple[str, Any]:
    """The format of ``data`` and, for JSON formats, the parsed document."""
    if data.startswith(SQLITE_MAGIC):
        return "coverage-data", None
    if not data.removeprefix(b"\xef\xbb\xbf").strip():  # nothing, or a byte order mark only
        raise ReportError(
            source, "is empty", f"did the coverage step crash? {missing_hint(source, None)}"
        )
    head = data[:_SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        return _sniff_xml(head, source), None
    if _LCOV_START.match(head):
        return "lcov", None
    text = decode_text(data, source)
    if text.lstrip()[:1] not in ("{", "["):
        raise _unknown_format(source, "not JSON, XML, lcov or a SQLite data file")
    document = load_json(text, source, hint=missing_hint(source, None))
    fmt = _classify_json(document)
    if fmt is None:
        what = "JSON of an unknown shape"
        if isinstance(document, dict) and any(
            isinstance(v, dict) and "statementMap" in v for v in document.values()
        ):
            what = "istanbul coverage-final.json; use the json-summary reporter instead"
        raise _unknown_format(source, what)
    return fmt, document


def detect_coverage_format(path: str | os.PathLike[str]) -> str:
    """The format of the coverage file at ``path``, judged by its content.

    Raises ReportError for a missing, empty or unreadable file, and for content that is none of
    :data:`COVERAGE_FORMATS` (the message lists them).
    """
    source = os.fspath(path)
    return sniff(read_bytes(path, hint=missing_hint(source, None)), source)[0]
