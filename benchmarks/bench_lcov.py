"""Reading a large lcov tracefile: peak memory and time of ``read_lcov``.

Generates a tracefile of about ``--mb`` MB (default 50; ``--mb 200`` is the size the hardening
issue measured at 2.8 GB): records of 1,000 ``DA`` lines, a branch pair on every tenth line,
``LF``/``LH``, in 1,000-line modules as `coverage lcov` writes them. Then, each in a fresh
subprocess that reports its peak resident memory (VmHWM on Linux) and its time:

- baseline: the least any reader that keeps per-line detail can do in Python: the file read
  line by line, each ``DA`` line into a ``{line: ran}`` dict per record (no branches, no
  checks);
- ``read_lcov`` on it: every line checked, branches and summaries kept, the report totalled.

Prints both, the ratios, and the delta over an interpreter that only imports. Target: peak
memory at most 2x the baseline's. Exits 1 when it is missed.
Run: ``python benchmarks/bench_lcov.py [--mb 50]``.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET = 2.0

BASELINE = """
import sys
files = {}
current = None
with open(sys.argv[1], "rb") as handle:
    for raw in handle:
        if raw.startswith(b"SF:"):
            current = files.setdefault(raw[3:].strip().decode(), {})
        elif raw.startswith(b"DA:") and current is not None:
            at, hits = raw[3:].split(b",")[:2]
            current[int(at)] = current.get(int(at), False) or int(hits) > 0
print(sum(len(lines) for lines in files.values()))
"""

READER = """
import sys
from pytest_agentgate.reports.coverage.lcov import read_lcov
report = read_lcov(sys.argv[1])
print(report.lines.total)
"""

IMPORT_ONLY = """
import sys
from pytest_agentgate.reports.coverage.lcov import read_lcov
print(0)
"""

MEASURE = """
import resource, sys, time
start = time.perf_counter()
exec(compile(sys.argv.pop(1), "<measured>", "exec"))
elapsed = time.perf_counter() - start
peak = 0
try:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1])
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{peak} {elapsed}", file=sys.stderr)
"""


def generate(path: Path, size: int) -> int:
    """Write a tracefile of about ``size`` bytes; return its number of DA lines."""
    rng = random.Random(1)
    written = count = module = 0
    with path.open("w", encoding="utf-8") as out:
        while written < size:
            module += 1
            parts = [f"TN:\nSF:src/pkg/module_{module:06d}.py\n"]
            for line in range(1, 1001):
                parts.append(f"DA:{line},{rng.choice((0, 1, 3))}\n")
                if line % 10 == 0:
                    parts.append(f"BRDA:{line},0,0,{rng.choice(('-', '0', '2'))}\n")
                    parts.append(f"BRDA:{line},0,1,1\n")
            parts.append("LF:1000\nLH:700\nend_of_record\n")
            text = "".join(parts)
            out.write(text)
            written += len(text)
            count += 1000
    return count


def measure(code: str, path: Path) -> tuple[float, float, str]:
    """(peak MB, seconds, stdout) of ``code`` run in a fresh interpreter on ``path``."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, code, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    peak_kb, seconds = done.stderr.strip().splitlines()[-1].split()
    return int(peak_kb) / 1024, float(seconds), done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.info"
        lines = generate(path, int(args.mb * 1024 * 1024))
        size_mb = path.stat().st_size / 1024 / 1024
        idle, _, _ = measure(IMPORT_ONLY, path)
        base_mb, base_s, base_out = measure(BASELINE, path)
        ours_mb, ours_s, ours_out = measure(READER, path)
    if base_out != ours_out:
        print(f"FAIL: the readers disagree on the lines ({base_out} and {ours_out})")
        return 1
    ratio = (ours_mb - idle) / max(base_mb - idle, 1.0)
    print(f"lcov tracefile of {size_mb:.0f} MB, {lines:,} DA lines")
    print(f"  interpreter + imports       {idle:8.0f} MB")
    print(f"  baseline (a dict per file)  {base_mb:8.0f} MB  {base_s:6.2f} s")
    print(f"  read_lcov                   {ours_mb:8.0f} MB  {ours_s:6.2f} s")
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(
        f"{verdict}: read_lcov / baseline memory (over the imports) = {ratio:.2f}x "
        f"(target at most {TARGET:.0f}x); time {ours_s / base_s:.2f}x"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
