"""Reading a 100 MB harness transcript: time and peak memory of ``read_transcript``.

Generates a transcript of about 100 MB per harness from the real samples in
tests/data/transcripts/ (their own lines repeated with fresh ids: tool calls with their results,
assistant text, every twentieth tool result a 60 KB file's content, as a Read of a big file
gives), then measures, in this run:

- baseline: the same file read line by line with ``json.loads`` on each line, the floor of any
  JSON Lines reader in Python (best of 3);
- ``read_transcript`` on it (best of 3), with the ratio to the baseline;
- the peak resident memory of a fresh subprocess that reads it (VmHWM on Linux), next to one
  that only imports the reader, so the delta is what reading costs.

Targets: under 1 s and under 64 MB peak (absolute, interpreter and imports included) for each
harness. Prints PASS/FAIL per target and exits 1 when one is missed.
Run: ``python benchmarks/bench_transcript.py [--mb 100] [--harness NAME|all]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "data" / "transcripts"
FILES = {
    "claude": "claude-code.jsonl",
    "codex": "codex-rollout.jsonl",
    "gemini": "gemini-chat.jsonl",
    "copilot": "copilot-events.jsonl",
}
TARGET_S = 1.0
TARGET_MB = 64.0
BIG = "x = 1  # a line of a big file\n" * 2000  # about 60 KB


def generate(harness: str, path: Path, size: int) -> int:
    """Write a transcript of about ``size`` bytes; return how many lines it has."""
    lines = [json.loads(x) for x in (SAMPLES / FILES[harness]).read_text().splitlines()]
    head, body = lines[:2], lines[2:]
    written = count = 0
    with path.open("w", encoding="utf-8") as out:
        for record in head:
            text = json.dumps(record) + "\n"
            out.write(text)
            written += len(text)
            count += 1
        n = 0
        while written < size:
            n += 1
            for record in body:
                fresh = _renamed(record, n)
                if n % 20 == 0:
                    fresh = _big(fresh)
                text = json.dumps(fresh, separators=(",", ":")) + "\n"
                out.write(text)
                written += len(text)
                count += 1
    return count


ID_KEYS = frozenset(
    {"id", "call_id", "tool_use_id", "toolCallId", "apiCallId", "messageId", "response_id"}
)


def _renamed(record: Any, n: int) -> Any:
    """A copy whose ids are new, so that every tool call and response counts."""
    if isinstance(record, dict):
        return {
            k: f"{n}-{v}" if k in ID_KEYS and isinstance(v, str) else _renamed(v, n)
            for k, v in record.items()
        }
    if isinstance(record, list):
        return [_renamed(v, n) for v in record]
    return record


def _big(record: Any) -> Any:
    """The same record with a tool result as long as a big file's content."""
    fresh = copy.deepcopy(record)
    blob = json.dumps(fresh)
    if '"tool_result"' in blob or "function_call_output" in blob or '"result"' in blob:
        return json.loads(blob.replace("1 test passed", BIG.replace("\n", "\\n"), 1))
    return fresh


def baseline(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as handle:
        for line in handle:
            json.loads(line)
    return time.perf_counter() - start


def reader(path: Path) -> tuple[float, Any]:
    from pytest_agentgate.reports.transcripts.read import read_transcript

    start = time.perf_counter()
    session = read_transcript(path)
    return time.perf_counter() - start, session


def peak_kib() -> int:
    """This process's peak resident memory (VmHWM on Linux: ru_maxrss carries the parent's)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def child(mode: str, path: str) -> None:
    from pytest_agentgate.reports.transcripts.read import read_transcript

    if mode == "read":
        read_transcript(Path(path))
    print(peak_kib())


def child_peak_mb(mode: str, path: Path) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip()) / 1024


def best(fn: Any, path: Path, runs: int = 3) -> tuple[float, Any]:
    times, last = [], None
    for _ in range(runs):
        result = fn(path)
        if isinstance(result, tuple):
            seconds, last = result
        else:
            seconds = result
        times.append(seconds)
    return min(times), last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="transcript size (default 100)")
    parser.add_argument("--harness", choices=(*FILES, "all"), default="all")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    harnesses = list(FILES) if args.harness == "all" else [args.harness]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        imports_mb = child_peak_mb("imports", Path(tmp))
        for harness in harnesses:
            path = Path(tmp) / f"{harness}.jsonl"
            lines = generate(harness, path, int(args.mb * 1024 * 1024))
            size = path.stat().st_size / 2**20
            reader(path)  # warm-up: the file in the page cache, the modules imported
            floor, _ = best(baseline, path)
            seconds, session = best(reader, path)
            peak = child_peak_mb("read", path)
            print(
                f"{harness}: {size:.1f} MiB, {lines:,} lines, {len(session.calls):,} tool calls, "
                f"{session.tokens:,} tokens"
            )
            print(f"  json.loads per line (baseline)  {floor:7.3f} s")
            print(
                f"  read_transcript                 {seconds:7.3f} s  ({seconds / floor:.2f}x the "
                f"baseline)  peak {peak:.1f} MB (imports alone {imports_mb:.1f} MB, "
                f"delta {peak - imports_mb:.1f} MB)"
            )
            for ok, text in (
                (seconds < TARGET_S, f"time {seconds:.3f} s (target < {TARGET_S:g} s)"),
                (peak < TARGET_MB, f"peak RSS {peak:.1f} MB (target < {TARGET_MB:g} MB)"),
            ):
                print(f"  {'PASS' if ok else 'FAIL'}: {text}")
                failed |= not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
