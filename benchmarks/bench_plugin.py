"""Benchmark ``pytest --agentgate=standard`` against plain ``pytest`` on 5,000 trivial tests.

Run from the repository root:  .venv/bin/python benchmarks/bench_plugin.py [--tests N] [--runs R]

Generates a small Python project in a temporary directory: a ``pyproject.toml``, a package of
one module, and N trivial tests (default 5,000, in files of 100), lint-clean so that the gated
run passes. No agentgate configuration, so the plugin uses the zero-config gates: compileall and
ruff run in the background while the tests run, and the tests are judged in-process.

Then it times, in fresh subprocesses of this interpreter, with the two variants interleaved so
that a slow spell of the machine hits both alike (R rounds, default 7, after one warm-up round):

- **plain**: ``python -m pytest -q -p no:cacheprovider tests``;
- **agentgate**: the same plus ``--agentgate=standard`` (and the verdict must pass).

Bytecode caching is on in the subprocesses (PYTHONDONTWRITEBYTECODE is removed from their
environment), so the warm-up round writes the caches a real installation has. Each variant's
time is the best of its R runs (wall clock, interpreter start included). Target:
agentgate at most 1.03x plain. Prints both times, the ratio and PASS/FAIL; exits 1 on FAIL.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAX_RATIO = 1.03
PER_FILE = 100


def make_project(root: Path, tests: int) -> None:
    (root / "pyproject.toml").write_text(
        '[project]\nname = "benchproject"\nversion = "0"\n', encoding="utf-8"
    )
    package = root / "benchpkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""A package for the tests to import."""\n\n\ndef double(x: int) -> int:\n'
        "    return 2 * x\n",
        encoding="utf-8",
    )
    test_dir = root / "tests"
    test_dir.mkdir()
    for start in range(0, tests, PER_FILE):
        count = min(PER_FILE, tests - start)
        body = ["from benchpkg import double", ""]
        for i in range(start, start + count):
            body += ["", f"def test_{i}():", f"    assert double({i}) == {2 * i}", ""]
        (test_dir / f"test_gen_{start // PER_FILE:03d}.py").write_text(
            "\n".join(body).rstrip() + "\n", encoding="utf-8"
        )


def run_once(root: Path, extra: list[str]) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTGATE_", "PYTEST_"))}
    # Bytecode caching on, as in any installation: without it every run recompiles agentgate's
    # modules and pytest re-rewrites every test file, which is not what a user pays.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, "tests"]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
        raise SystemExit(f"`{' '.join(command)}` exited with {proc.returncode}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=5000, help="number of generated tests")
    parser.add_argument("--runs", type=int, default=11, help="timed rounds per variant")
    args = parser.parse_args(argv)
    variants = {"plain": [], "agentgate": ["--agentgate=standard"]}
    with tempfile.TemporaryDirectory(prefix="agentgate-bench-plugin-") as tmp:
        root = Path(tmp)
        make_project(root, args.tests)
        times: dict[str, list[float]] = {name: [] for name in variants}
        for extra in variants.values():  # warm-up: file system caches, ruff's cache
            run_once(root, extra)
        for round_no in range(args.runs):
            # Alternate which variant goes first, so neither always runs on a cooler machine.
            order = list(variants.items())
            if round_no % 2:
                order.reverse()
            for name, extra in order:
                times[name].append(run_once(root, extra))
    best = {name: min(values) for name, values in times.items()}
    best_ratio = best["agentgate"] / best["plain"]
    # Each round's two runs are back to back: their ratio cancels the machine's slow drifts,
    # and the median of those ratios ignores the rounds a neighbour's load landed on.
    rounds = zip(times["agentgate"], times["plain"], strict=True)
    paired = statistics.median(a / p for a, p in rounds)
    print(f"{args.tests} trivial tests, {args.runs} rounds (interleaved, order alternating)")
    for name, values in times.items():
        shown = ", ".join(f"{v:.3f}" for v in values)
        print(f"  {name:<10} best {best[name]:.3f} s   (runs: {shown})")
    print(f"  ratio of the best runs        {best_ratio:.3f}x")
    verdict = "PASS" if paired <= MAX_RATIO else "FAIL"
    print(
        f"  median ratio within a round   {paired:.3f}x   (target <= {MAX_RATIO:.2f}x)   {verdict}"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
