"""Error lines in build output: the specifics the continuation text quotes.

Pure text in, findings out. Recognised shapes: Python's compileall and tracebacks,
``file:line[:col]: error: message`` (gcc, clang, mypy, tsc --pretty false, go vet) and
rustc/cargo ``error[E0308]: message`` followed by its ``--> file:line:col`` location.
"""

from __future__ import annotations

import re

from pytest_agentgate.reports._io import whole_number
from pytest_agentgate.verdict import Finding

_FILE_LINE_ERROR = re.compile(
    r"^(?P<path>[^\s:][^:]*?):(?P<line>\d+)(?::(?P<col>\d+))?:\s*(?:fatal )?error:\s*(?P<msg>.+)$"
)
_TSC_ERROR = re.compile(
    r"^(?P<path>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\):\s*error\s+(?P<code>TS\d+):\s*(?P<msg>.+)$"
)
_RUST_ERROR = re.compile(r"^error(?:\[(?P<code>E\d+)\])?:\s*(?P<msg>.+)$")
# cargo's closing lines count the errors above them; they are not errors of their own.
_RUST_SUMMARY = re.compile(r"^(aborting due to|could not compile) ")
_RUST_LOCATION = re.compile(r"^\s*-->\s*(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+)")
_PY_COMPILE = re.compile(r"^\*\*\* Error compiling '(?P<path>[^']+)'")
_PY_FILE_LINE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_PY_EXCEPTION = re.compile(r"^(?P<name>[A-Z]\w*(?:Error|Exception)):\s*(?P<msg>.*)$")
# What Python prints for an error it reports without a traceback (a TabError, an
# IndentationError): `Sorry: TabError: inconsistent use of tabs ... (E10.py, line 5)`.
_PY_SORRY = re.compile(
    r"^Sorry: (?P<name>[A-Z]\w*(?:Error|Exception)): (?P<msg>.*?)"
    r"(?: \([^()]*, line (?P<line>\d+)\))?$"
)

MAX_TAIL_LINES = 20


def extract_errors(output: str) -> list[Finding]:
    """The error lines found in ``output``, in order, each with its location when known."""
    findings: list[Finding] = []
    lines = output.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].rstrip()
        consumed = 1
        finding: Finding | None = None
        if m := _FILE_LINE_ERROR.match(line):
            finding = Finding(
                m["msg"].strip(), path=m["path"], line=_int(m["line"]), column=_int(m["col"])
            )
        elif m := _TSC_ERROR.match(line):
            finding = Finding(
                m["msg"].strip(),
                path=m["path"],
                line=_int(m["line"]),
                column=_int(m["col"]),
                code=m["code"],
            )
        elif (m := _RUST_ERROR.match(line)) and not _RUST_SUMMARY.match(m["msg"]):
            finding, consumed = _rust_error(m, lines, index)
        elif m := _PY_COMPILE.match(line):
            finding, consumed = _python_compile_error(m["path"], lines, index)
        if finding is not None:
            findings.append(finding)
        index += consumed
    return findings


def tail_lines(output: str, count: int = MAX_TAIL_LINES) -> list[str]:
    """The last non-blank lines of output, for builds whose errors have no known shape."""
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    return lines[-count:]


def _int(text: str | None) -> int | None:
    """A line or column number; None when absent or not credible (thousands of digits)."""
    return None if text is None else whole_number(text)


def _rust_error(m: re.Match[str], lines: list[str], index: int) -> tuple[Finding, int]:
    message = m["msg"].strip()
    for offset in range(1, 4):
        if index + offset >= len(lines):
            break
        if loc := _RUST_LOCATION.match(lines[index + offset]):
            finding = Finding(
                message,
                path=loc["path"],
                line=_int(loc["line"]),
                column=_int(loc["col"]),
                code=m["code"],
            )
            return finding, offset + 1
    return Finding(message, code=m["code"]), 1


def _python_compile_error(path: str, lines: list[str], index: int) -> tuple[Finding, int]:
    """compileall prints the file, then a (possibly multi-line) SyntaxError report."""
    line_no: int | None = None
    message = "could not be compiled"
    consumed = 1
    for offset in range(1, 12):
        if index + offset >= len(lines):
            break
        text = lines[index + offset]
        if _PY_COMPILE.match(text):
            break
        consumed = offset + 1
        if (loc := _PY_FILE_LINE.match(text)) and line_no is None:
            line_no = _int(loc["line"])
        elif sorry := _PY_SORRY.match(text.strip()):
            message = f"{sorry['name']}: {sorry['msg']}"
            line_no = _int(sorry["line"]) if sorry["line"] else line_no
            break
        elif exc := _PY_EXCEPTION.match(text.strip()):
            message = f"{exc['name']}: {exc['msg']}".rstrip(": ")
            break
    return Finding(message, path=path, line=line_no), consumed
