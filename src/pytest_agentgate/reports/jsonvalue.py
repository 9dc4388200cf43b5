"""Reading values out of arbitrary JSON reports, for custom gates."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .model import ReportError

# Severity words tools use, ranked. Unknown words rank as "warning" would: they are findings.
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


def load_json(text: str, source: str) -> Any:
    if not text.strip():
        raise ReportError(source, "is empty, expected a JSON report")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(
            source, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def lookup(data: Any, dotted: str, source: str) -> float:
    """The number at ``a.b.0.c`` in ``data``."""
    node = data
    walked: list[str] = []
    for part in dotted.split("."):
        walked.append(part)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise ReportError(source, f"has no value at `{'.'.join(walked)}` (metric `{dotted}`)")
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise ReportError(source, f"`{dotted}` is {json.dumps(node)[:60]}, not a number")
    return float(node)


def severities(data: Any) -> Iterator[str]:
    """Every value of a key named ``severity`` (any case, any prefix) anywhere in the report."""
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str) and key.lower().endswith("severity") and isinstance(value, str):
                yield value.lower()
            else:
                yield from severities(value)
    elif isinstance(data, list):
        for item in data:
            yield from severities(item)
