"""lcov tracefiles (``coverage lcov``, c8/nyc ``lcovonly``, jest, ``geninfo``, ``grcov``)."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from pytest_agentgate.reports._io import (
    MAX_COUNT,
    display_path,
    read_bytes,
    whole_number,
)
from pytest_agentgate.reports.coverage._common import ratio_of
from pytest_agentgate.reports.coverage._totals import report_from_details
from pytest_agentgate.reports.hints import COVERAGE_HINTS
from pytest_agentgate.reports.model import CoverageDetail, CoverageReport, Ratio, ReportError


class _LcovFile:
    __slots__ = ("branch_lines", "detail", "function_lines", "summary")

    def __init__(self) -> None:
        self.detail = CoverageDetail()
        self.summary: dict[str, int] = {}
        # For the lines diff-cover counts without a DA record: line -> [branches, taken,
        # executions] from BRDA, and function name -> the line of its FN record.
        self.branch_lines: dict[int, list[int]] = {}
        self.function_lines: dict[str, int] = {}

    def implied_lines(self) -> dict[int, bool] | None:
        """diff-cover's reading of the lines a DA record does not settle (see CoverageDetail):
        a BRDA line without DA is covered when every branch on it was taken; a DA line with
        zero hits is covered when a branch on it ran; an FN line without DA or BRDA is covered
        when its function ran."""
        lines = self.detail.lines
        implied: dict[int, bool] = {}
        for at, (branches, taken, executions) in self.branch_lines.items():
            if at not in lines:
                implied[at] = taken >= branches and executions > 0
            elif not lines[at] and executions > 0:
                implied[at] = True
        functions = self.detail.functions or {}
        for name, at in self.function_lines.items():
            if at not in lines and at not in implied:
                implied[at] = functions.get(name, False)
        return implied or None


def _lcov_int(value: str, source: str, number: int, hint: str) -> int:
    if value.strip() == "-":
        return 0
    result = whole_number(value)
    if result is None:
        shown = value.strip() if len(value.strip()) <= 32 else value.strip()[:32] + "…"
        raise ReportError(
            source,
            f"line {number}: {shown!r} is not a credible count (a whole number from 0 to "
            f"{MAX_COUNT:,})",
            hint,
        )
    return result


def _lcov_summary(
    summary: dict[str, int], total_key: str, hit_key: str, where: str, source: str
) -> Ratio | None:
    if total_key not in summary:
        return None
    return ratio_of(
        summary.get(hit_key, 0), summary[total_key], source, where, COVERAGE_HINTS["lcov"]
    )


def parse_lcov(
    text: str, source: str, *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    """An lcov tracefile: ``SF:`` records closed by ``end_of_record``.

    Counted from the detail lines (``DA:line,hits``, ``BRDA:line,block,branch,taken``,
    ``FN``/``FNDA`` and lcov 2's ``FNA``), a file that appears in several records once (a line,
    branch or function is covered when any record covered it). The summary lines ``LF/LH``,
    ``BRF/BRH`` and ``FNF/FNH`` are used only for a record that has no detail lines of that kind.
    Branches (functions) are None when no record has any branch (function) data.
    """
    return _parse(io.StringIO(text, newline=None), source, root=root)


def _parse(
    lines: Iterable[str], source: str, *, root: str | os.PathLike[str] | None
) -> CoverageReport:
    """:func:`parse_lcov` over the tracefile's lines, read one at a time: a large tracefile is
    never held whole, nor as a list of its lines."""
    hint = COVERAGE_HINTS["lcov"]
    files: dict[str, _LcovFile] = {}
    current: _LcovFile | None = None
    current_name = ""
    has_branches = has_functions = False
    started = False
    # Line numbers and branch names repeat from file to file: each is kept once, shared.
    shared_ints: dict[int, int] = {}
    shared_keys: dict[str, str] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if not started:
            started = True
            if not re.match(r"(?:TN|SF|VER):", line):
                raise ReportError(
                    source, f"is not an lcov tracefile (it starts with {line[:40]!r})", hint
                )
        if line == "end_of_record":
            if current is None:
                raise ReportError(source, f"line {number}: end_of_record outside a record", hint)
            current = None
            continue
        tag, sep, value = line.partition(":")
        if not sep:
            raise ReportError(source, f"line {number}: {line[:60]!r} is not an lcov line", hint)
        if tag == "SF":
            if current is not None:
                raise ReportError(
                    source, f"line {number}: record {current_name!r} has no end_of_record", hint
                )
            current_name = value
            current = files.setdefault(value, _LcovFile())
            continue
        if tag in ("TN", "VER"):
            continue
        if current is None:
            raise ReportError(source, f"line {number}: {tag} outside an SF record", hint)
        detail = current.detail
        if tag == "DA":
            parts = value.split(",")
            if len(parts) < 2:
                raise ReportError(source, f"line {number}: DA needs line,hits", hint)
            at = _lcov_int(parts[0], source, number, hint)
            at = shared_ints.setdefault(at, at)
            ran = _lcov_int(parts[1], source, number, hint) > 0
            detail.lines[at] = detail.lines.get(at, False) or ran
        elif tag == "BRDA":
            parts = value.split(",")
            if len(parts) < 4:
                raise ReportError(
                    source, f"line {number}: BRDA needs line,block,branch,taken", hint
                )
            has_branches = True
            key = ",".join(parts[:-1])
            key = shared_keys.setdefault(key, key)
            executions = _lcov_int(parts[-1], source, number, hint)
            taken = executions > 0
            if detail.branches is None:
                detail.branches = {}
            detail.branches[key] = detail.branches.get(key, False) or taken
            at = _lcov_int(parts[0], source, number, hint)
            counts = current.branch_lines.setdefault(shared_ints.setdefault(at, at), [0, 0, 0])
            counts[0] += 1
            counts[1] += taken
            counts[2] += executions
        elif tag in ("FN", "FNDA", "FNA"):
            has_functions = True
            if detail.functions is None:
                detail.functions = {}
            parts = value.split(",")
            if tag == "FN":  # FN:line,name or lcov 2's FN:start,end,name
                name = parts[-1]
                detail.functions.setdefault(name, False)
                if len(parts) >= 2:
                    current.function_lines[name] = _lcov_int(parts[0], source, number, hint)
            else:  # FNDA:hits,name  /  FNA:index,hits,name
                if len(parts) < (3 if tag == "FNA" else 2):
                    raise ReportError(source, f"line {number}: {tag} is incomplete", hint)
                hits = _lcov_int(parts[-2], source, number, hint)
                name = parts[-1]
                detail.functions[name] = detail.functions.get(name, False) or hits > 0
        elif tag in ("LF", "LH", "BRF", "BRH", "FNF", "FNH"):
            current.summary[tag] = _lcov_int(value, source, number, hint)
            if tag in ("BRF", "BRH"):
                has_branches = True
            elif tag in ("FNF", "FNH"):
                has_functions = True
        # Other tags (FNL, LN, checksums, MCDC, ...) carry nothing counted here.
    if not started:
        raise ReportError(source, "is empty", f"did the coverage step crash? {hint}")
    if current is not None:
        raise ReportError(
            source,
            f"is truncated: record {current_name!r} has no end_of_record",
            f"the coverage step may have been killed while writing it; {hint}",
        )
    if not files:
        raise ReportError(source, "has no SF record: not an lcov tracefile", hint)

    details: dict[str, CoverageDetail] = {}
    fallback: dict[str, tuple[Ratio | None, Ratio | None, Ratio | None]] = {}
    for name, entry in files.items():
        path = display_path(name, root)
        entry.detail.implied_lines = entry.implied_lines()
        details[path] = entry.detail
        fallback[path] = tuple(  # type: ignore[assignment]
            _lcov_summary(entry.summary, total, hit, f"{name!r} {what}", source)
            for total, hit, what in (
                ("LF", "LH", "lines"),
                ("BRF", "BRH", "branches"),
                ("FNF", "FNH", "functions"),
            )
        )
    return report_from_details(
        source,
        "lcov",
        details,
        branches=has_branches,
        functions=has_functions,
        fallback=fallback,
        root=root,
    )


def read_lcov(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> CoverageReport:
    source = os.fspath(path)
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed by the `with` below
    except OSError:
        read_bytes(source, hint=COVERAGE_HINTS["lcov"])  # raises the right ReportError
        raise  # pragma: no cover - read_bytes raised
    with handle:
        try:
            return _parse(_decoded(handle, source), source, root=root)
        except OSError as exc:
            raise ReportError(
                source, f"cannot be read: {exc.strerror or exc}", COVERAGE_HINTS["lcov"]
            ) from None


def _decoded(handle: BinaryIO, source: str) -> Iterator[str]:
    """The UTF-8 lines of an open file (a byte order mark is tolerated), one at a time."""
    offset = 0
    for raw in handle:
        try:
            line = raw.decode("utf-8-sig" if offset == 0 else "utf-8")
        except UnicodeDecodeError as exc:
            raise ReportError(
                source,
                f"is not UTF-8 text (undecodable byte at offset {offset + exc.start})",
                "point the gate at the report file itself, not a binary or compressed file",
            ) from None
        offset += len(raw)
        yield line
