"""Reading values out of arbitrary JSON reports, for custom gates."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from pytest_agentgate.reports._io import load_json as _load_json
from pytest_agentgate.reports.model import ReportError

# Severity words tools use, ranked. A word not here (Trivy's and GitLab's "unknown", a tool's own
# scale) cannot be ranked, so it counts as the highest: tolerating it must be asked for.
SEVERITY_RANK: dict[str, int] = {
    "none": 0,
    "info": 0,
    "informational": 0,
    "note": 0,
    "low": 1,
    "minor": 1,
    "warning": 2,
    "moderate": 2,
    "medium": 2,
    "high": 3,
    "major": 3,
    "error": 3,
    "critical": 4,
    "blocker": 4,
    "fatal": 4,
}
UNRANKED = max(SEVERITY_RANK.values())


def load_json(text: str, source: str) -> Any:
    """The parsed report; empty, truncated, malformed or absurdly nested text is a ReportError."""
    return _load_json(text, source, empty_hint="the command printed nothing or wrote no report")


def lookup(data: Any, dotted: str, source: str) -> float:
    """The number at ``a.b.0.c`` in ``data``."""
    node = data
    walked: list[str] = []
    for part in dotted.split("."):
        walked.append(part)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and (index := _index(part, len(node))) is not None:
            node = node[index]
        else:
            raise ReportError(source, f"has no value at `{'.'.join(walked)}` (metric `{dotted}`)")
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise ReportError(source, f"`{dotted}` is {json.dumps(node)[:60]}, not a number")
    try:
        value = float(node)
    except OverflowError:  # an integer too large for a float
        value = math.inf
    if not math.isfinite(value):
        # NaN compares false with every bound, so it would pass any min/max: never a pass.
        raise ReportError(source, f"`{dotted}` is {node!r}, not a finite number")
    return value


def _index(part: str, size: int) -> int | None:
    """``part`` as the index of an item of a list of ``size``: ASCII digits only (``str.isdigit``
    takes "²", which ``int`` refuses), leading zeros aside never longer than the list's size is
    written (5,000 digits are no index, and ``int`` refuses them)."""
    digits = part.lstrip("0") or "0"
    if not (part.isascii() and part.isdigit()) or len(digits) > len(str(size)):
        return None
    index = int(digits)
    return index if index < size else None


def severities(data: Any) -> Iterator[str]:
    """Every value of a key named ``severity`` (any case, any prefix) anywhere in the report.

    Walked with an explicit stack, in document order: a deeply nested report cannot overflow
    Python's recursion limit.
    """
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            children = []
            for key, value in node.items():
                if (
                    isinstance(key, str)
                    and key.lower().endswith("severity")
                    and isinstance(value, str)
                ):
                    yield value.lower()
                else:
                    children.append(value)
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(reversed(node))
