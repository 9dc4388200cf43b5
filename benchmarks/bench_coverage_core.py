"""What coverage.py's measurement cores cost a suite: the same tests plain and under each core.

Generates a small CPU-bound project (functions with loops and branches, and tests that call
them), then times, best of N wall-clock runs each, in this run and with the given interpreter:

- plain: ``python -m pytest``;
- ``coverage run`` with the C tracer (``COVERAGE_CORE=ctrace``), lines, then lines and branches
  (``--branch``: what every agentgate profile gates);
- ``coverage run`` with ``sys.monitoring`` (``COVERAGE_CORE=sysmon``, Python 3.12+), lines, and
  lines and branches where coverage.py measures branches with it (Python 3.14+; before that it
  falls back to the C tracer, and the row says so instead of timing the fallback).

Prints each time and its ratio to the plain run; no target: the figures are what zero-config's
choice (coverage.py's own default core) is judged by, and what ``agentgate verify
--coverage-cost`` measures on a real suite.
Run: ``python benchmarks/bench_coverage_core.py [--python PATH] [--runs N]`` (the interpreter
needs pytest and coverage 7.4 or later).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CODE = """\
def collatz(n):
    steps = 0
    while n != 1:
        if n % 2:
            n = 3 * n + 1
        else:
            n //= 2
        steps += 1
    return steps


def classify(values):
    small = large = 0
    for value in values:
        if value < 50:
            small += 1
        elif value < 100:
            large += 1
    return small, large
"""
TESTS = """\
import pytest

from busy import classify, collatz


@pytest.mark.parametrize("start", range(1, 41))
def test_collatz(start):
    assert sum(collatz(n) for n in range(start, start + 2500)) > 0


def test_classify():
    assert sum(classify([collatz(n) for n in range(1, 20000)])) > 0
"""


def timed(python: str, args: list[str], root: Path, core: str | None) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    if core:
        env["COVERAGE_CORE"] = core
    start = time.perf_counter()
    done = subprocess.run(
        [python, *args], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        output = done.stdout + done.stderr
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{output}")
    if "Can't use core=" in done.stderr:
        raise SystemExit(f"coverage.py did not use core {core}: {done.stderr.strip()}")
    return elapsed


def version(python: str) -> tuple[int, int]:
    out = subprocess.run(
        [python, "-c", "import sys; print(*sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(out[0]), int(out[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter to measure")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each (best is kept)")
    args = parser.parse_args()
    python = args.python
    major, minor = version(python)
    pytest_args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:agentgate"]
    cov = ["-m", "coverage", "run", "--data-file=.cov"]
    rows: list[tuple[str, list[str], str | None, str]] = [
        ("plain", pytest_args, None, ""),
        ("ctrace, lines", [*cov, *pytest_args], "ctrace", ""),
        ("ctrace, lines and branches", [*cov, "--branch", *pytest_args], "ctrace", ""),
        ("sysmon, lines", [*cov, *pytest_args], "sysmon", "" if minor >= 12 else "3.12"),
        (
            "sysmon, lines and branches",
            [*cov, "--branch", *pytest_args],
            "sysmon",
            "" if minor >= 14 else "3.14",
        ),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "busy.py").write_text(CODE)
        (root / "test_busy.py").write_text(TESTS)
        print(f"Python {major}.{minor} ({python}), best of {args.runs}")
        plain = None
        for label, command, core, needs in rows:
            if needs:
                print(f"  {label:<30} not measured: coverage.py needs Python {needs}+ for it")
                continue
            timed(python, command, root, core)  # warm-up
            best = min(timed(python, command, root, core) for _ in range(args.runs))
            plain = plain if plain is not None else best
            print(f"  {label:<30} {best:7.3f} s   {best / plain:5.2f}x plain")
    return 0


if __name__ == "__main__":
    sys.exit(main())
