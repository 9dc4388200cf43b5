"""Startup cost of the `agentgate` front door.

Measures, in one run, best of N wall-clock times of fresh processes:

- baseline: a bare interpreter (`python -c pass`), the floor every Python CLI pays;
- `agentgate --version` (target: at most 150 ms);
- a report-only `agentgate verify --no-run` over typical reports: a pytest JUnit file, a
  coverage.py JSON report and a ruff JSON report from tests/data (target: at most 300 ms).

Prints each time and its ratio to the baseline; exits 1 when a target is missed.
Run: `python benchmarks/bench_startup.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TARGETS_S = {"agentgate --version": 0.150, "verify --no-run (typical reports)": 0.300}


def best_of(cmd: list[str], runs: int, cwd: Path) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    exe = shutil.which("agentgate", path=os.path.dirname(sys.executable)) or shutil.which(
        "agentgate"
    )
    if exe is None:
        print("agentgate is not installed in this environment: pip install -e .", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(DATA / "junit" / "pytest-xunit1.xml", work / "junit.xml")
        shutil.copy(DATA / "python" / "coverage-branches.json", work / "coverage.json")
        shutil.copy(DATA / "python" / "ruff.json", work / "ruff.json")
        verify = [
            exe,
            "verify",
            "--no-run",
            "--junit",
            "junit.xml",
            "--coverage",
            "coverage.json",
            "--lint",
            "ruff.json",
            "--lint-format",
            "ruff",
            "--format",
            "json",
        ]
        # One untimed run of each so byte-compilation is not measured.
        for cmd in ([exe, "--version"], verify):
            subprocess.run(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        baseline = best_of([sys.executable, "-c", "pass"], args.runs, work)
        measured = {
            "agentgate --version": best_of([exe, "--version"], args.runs, work),
            "verify --no-run (typical reports)": best_of(verify, args.runs, work),
        }
    print(f"{'measurement':<36} {'best s':>8} {'x python -c pass':>17} {'target s':>9}")
    print(f"{'python -c pass (baseline)':<36} {baseline:8.3f} {1.0:17.2f} {'':>9}")
    failed = False
    for name, seconds in measured.items():
        target = TARGETS_S[name]
        ok = seconds <= target
        failed |= not ok
        print(
            f"{name:<36} {seconds:8.3f} {seconds / baseline:17.2f} {target:9.3f}"
            f"  {'PASS' if ok else 'FAIL'}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
