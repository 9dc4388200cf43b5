"""What the benchmarks that count instructions share: valgrind's cachegrind, one log per
process (a child's own summary would otherwise go to its stderr, which whoever ran it
captures), and the instructions each process executed."""

from __future__ import annotations

import re
from pathlib import Path

_REFS = re.compile(r"^==(\d+)== I\s+refs:\s+([\d,]+)", re.MULTILINE)


def wrapped(logs: str, command: list[str]) -> list[str]:
    """``command`` under cachegrind, every child traced, one log per process in ``logs``."""
    return [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--trace-children=yes",
        "--cachegrind-out-file=/dev/null",
        f"--log-file={logs}/%p.log",
        *command,
    ]


def counts(logs: str) -> dict[int, int]:
    """The instructions of each process (by pid) that wrote a log into ``logs``."""
    found: dict[int, int] = {}
    for log in Path(logs).glob("*.log"):
        text = log.read_text(encoding="utf-8", errors="replace")
        found.update((int(pid), int(refs.replace(",", ""))) for pid, refs in _REFS.findall(text))
    return found
