"""Benchmark ``pytest --agentgate=standard`` against plain ``pytest`` on 5,000 trivial tests.

Run from the repository root:  .venv/bin/python benchmarks/bench_plugin.py [--tests N] [--rounds R]

Generates a small Python project in a temporary directory: a ``pyproject.toml``, a package of
one module, and N trivial tests (default 5,000, in files of 100), lint-clean so that the gated
run passes. No agentgate configuration, so the plugin uses the zero-config gates: compileall and
ruff run in agentgate's gate process while the tests run, and the tests are judged from the
session's own reports.

The two variants, each a fresh ``python -m pytest -q -p no:cacheprovider tests`` subprocess with
bytecode caching on (the warm-up writes the caches a real installation has):

- **plain**: that command under ``coverage run --branch --source=benchpkg``, as the project's
  zero-config test gate runs it (the pytest door measures the session's coverage the way the
  test command does, so the baseline measures it too: against an unmeasured pytest, a run of
  2026-11-27 read 4.14x, most of it coverage.py's tracer on 5,000 tests);
- **agentgate**: pytest with ``--agentgate=standard`` (its verdict must pass).

Target: agentgate at most 1.03x plain. It is measured two ways.

1. **Wall clock**, which decides. R rounds (default 21), each running both variants back to
   back, alternating which goes first. Each round gives one ratio; the estimate is the median of
   those ratios with its distribution-free 95% confidence interval (order statistics of the
   binomial). PASS when the whole interval is at or under the target, FAIL when the whole
   interval is over it. Otherwise the machine's run-to-run noise is wider than the difference
   being measured, and the result is INCONCLUSIVE.
2. **Instructions** (when ``valgrind`` is on PATH), a cross-check that does not decide: each
   variant runs once under ``valgrind --tool=cachegrind --cache-sim=no --trace-children=yes``
   with ``PYTHONHASHSEED=0``, which counts the instructions every process executes. The same
   code gives the same count to within a few parts in a million, whatever else the machine is
   doing, so it shows what a change costs even when the wall clock cannot. It is not time:
   imports and class creation run fewer instructions per cycle than pytest's test loop (when
   the engine ran in the pytest process: 2.7% more CPU time for 1.9% more instructions). The
   pytest process's ratio is printed; the background processes (the gate process, compileall,
   ruff) run beside it and are printed as a share of the plain run.

A second target: installed but not asked for (no ``--agentgate``), the plugin costs nothing
measurable. What it does then is fixed per session (import the ``pytest11`` module, add the
options, one ``pytest_configure`` call; it implements no per-test hook, which the tests check), so
it is counted in instructions on a suite of one test, where nothing else moves, and set against
the plain run of the benchmark suite. **off** is the plugin installed and not asked for,
**unloaded** the same command with ``-p no:agentgate``; off passes ``-p no:`` with a name no
plugin has, so that the option's own handling is the same on both sides. (Over a long run, the
counts of two configurations also differ by things outside the plugin, such as the length of
the folder's name, by tens of millions of instructions either way; that is why this is not
measured on the 5,000 tests.) Target: at most 0.1% of the plain run.

Exits 0 when the wall clock says PASS (and, when counted, the cost when off is within its
target), 1 on FAIL, 2 when the wall clock cannot decide.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAX_RATIO = 1.03
PER_FILE = 100
CONFIDENCE = 0.95
VARIANTS = {"plain": [], "agentgate": ["--agentgate=standard"]}
# The plugin's cost when installed and not asked for: counted under valgrind only.
OFF_VARIANTS = {
    "off": ["-p", "no:agentgate-bench-no-such-plugin"],
    "unloaded": ["-p", "no:agentgate"],
}
MAX_OFF_SHARE = 0.001


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


def pytest_command(extra: list[str]) -> list[str]:
    """The variant's command: ``extra`` given to pytest; the plain variant (no ``extra``)
    under coverage.py, as the zero-config test gate measures it."""
    pytest = ["-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, "tests"]
    if extra:
        return [sys.executable, *pytest]
    measure = ["-m", "coverage", "run", "--branch", "--source=benchpkg", "--data-file=.bench-cov"]
    return [sys.executable, *measure, *pytest]


def child_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTGATE_", "PYTEST_"))}
    # Bytecode caching on, as in any installation: without it every run recompiles agentgate's
    # modules and pytest re-rewrites every test file, which is not what a user pays.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(overrides)
    return env


def check(proc: subprocess.CompletedProcess[str], command: list[str]) -> None:
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
        raise SystemExit(f"`{' '.join(command)}` exited with {proc.returncode}")


def run_once(root: Path, extra: list[str]) -> float:
    command = pytest_command(extra)
    start = time.perf_counter()
    proc = subprocess.run(
        command, cwd=root, env=child_env(), capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    check(proc, command)
    return elapsed


# -- wall clock -------------------------------------------------------------------------------


def time_rounds(root: Path, rounds: int) -> dict[str, list[float]]:
    for extra in VARIANTS.values():  # warm-up: bytecode, file system caches, ruff's cache
        run_once(root, extra)
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for round_no in range(rounds):
        # Alternate which variant goes first, so neither always runs on a cooler machine.
        order = list(VARIANTS.items())
        if round_no % 2:
            order.reverse()
        for name, extra in order:
            times[name].append(run_once(root, extra))
    return times


def median_interval(values: list[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """A distribution-free confidence interval for the median of ``values``.

    The number of values below the true median is Binomial(n, 1/2); the interval runs from the
    k-th smallest value to the k-th largest, for the largest k whose two tails together hold at
    most ``1 - confidence``. Needs n >= 6 for 95%.
    """
    ordered = sorted(values)
    n = len(ordered)
    tail = (1 - confidence) / 2
    k = 0
    cumulative = 0.0
    while True:  # P(B <= k) for B ~ Binomial(n, 1/2)
        cumulative += math.comb(n, k) / 2**n
        if cumulative > tail:
            break
        k += 1
    if k == 0:
        raise SystemExit(f"{n} rounds are too few for a {confidence:.0%} interval; use 6 or more")
    return ordered[k - 1], ordered[n - k]


# -- instructions -----------------------------------------------------------------------------


def count_instructions(root: Path, extra: list[str]) -> tuple[int, int]:
    """(the pytest process's instructions, its child processes' together), under cachegrind."""
    import _cachegrind  # beside this script (benchmarks/): only where instructions are counted

    with tempfile.TemporaryDirectory(prefix="agentgate-bench-valgrind-") as logs:
        command = _cachegrind.wrapped(logs, pytest_command(extra))
        proc = subprocess.Popen(
            command,
            cwd=root,
            env=child_env(PYTHONHASHSEED="0"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = proc.communicate()
        check(subprocess.CompletedProcess(command, proc.returncode, out, err), command)
        counts = _cachegrind.counts(logs)
    if proc.pid not in counts:
        raise SystemExit(f"valgrind wrote no instruction count for pytest (pid {proc.pid})")
    main = counts.pop(proc.pid)
    return main, sum(counts.values())


def instruction_counts(root: Path) -> dict[str, tuple[int, int]]:
    """Both variants at once: each count is of its own processes, so they can share the CPU."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(VARIANTS)) as pool:
        futures = {name: pool.submit(count_instructions, root, x) for name, x in VARIANTS.items()}
        return {name: future.result() for name, future in futures.items()}


def off_cost() -> tuple[int, int]:
    """Instructions of a one-test session with the plugin off and unloaded, one after the other
    (two counts taken at once can differ by a few million instructions)."""
    with tempfile.TemporaryDirectory(prefix="agentgate-bench-off-") as tmp:
        root = Path(tmp)
        make_project(root, 1)
        for extra in OFF_VARIANTS.values():  # warm-up: bytecode
            run_once(root, extra)
        off = count_instructions(root, OFF_VARIANTS["off"])[0]
        unloaded = count_instructions(root, OFF_VARIANTS["unloaded"])[0]
    return off, unloaded


def judge_off(extra: int, plain: int) -> str:
    """PASS when the plugin off costs at most ``MAX_OFF_SHARE`` of the plain run."""
    return "PASS" if extra <= MAX_OFF_SHARE * plain else "FAIL"


# -- report -----------------------------------------------------------------------------------


def judge_interval(low: float, high: float) -> str:
    if high <= MAX_RATIO:
        return "PASS"
    if low > MAX_RATIO:
        return "FAIL"
    return "INCONCLUSIVE"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=5000, help="number of generated tests")
    parser.add_argument("--rounds", type=int, default=21, help="wall-clock rounds (>= 6)")
    parser.add_argument(
        "--no-instructions", action="store_true", help="skip the instruction count (valgrind)"
    )
    args = parser.parse_args(argv)
    valgrind = not args.no_instructions and shutil.which("valgrind") is not None

    with tempfile.TemporaryDirectory(prefix="agentgate-bench-plugin-") as tmp:
        root = Path(tmp)
        make_project(root, args.tests)
        times = time_rounds(root, args.rounds)
        counts = instruction_counts(root) if valgrind else None
    off = off_cost() if valgrind else None

    ratios = [a / p for a, p in zip(times["agentgate"], times["plain"], strict=True)]
    median = statistics.median(ratios)
    low, high = median_interval(ratios)
    by_time = judge_interval(low, high)
    spread = (max(times["plain"]) - min(times["plain"])) / statistics.median(times["plain"])

    target = f"--agentgate=standard at most {MAX_RATIO:.2f}x plain"
    print(f"{args.tests} trivial tests; target: {target}")
    print(f"wall clock, {args.rounds} rounds (variants back to back, order alternating):")
    for name, values in times.items():
        shown = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {name:<10} median {statistics.median(values):.3f} s   runs: {shown}")
    print(f"  plain runs spread over {spread:.0%} of their median")
    print(
        f"  ratio per round: median {median:.3f}x, {CONFIDENCE:.0%} interval "
        f"{low:.3f}x to {high:.3f}x   {by_time}"
    )
    if counts is not None:
        plain, plain_children = counts["plain"]
        gated, gated_children = counts["agentgate"]
        print("instructions (cachegrind, PYTHONHASHSEED=0; a cross-check, not time):")
        print(f"  plain      pytest {plain:,}")
        print(f"  agentgate  pytest {gated:,}   ({gated / plain:.4f}x)")
        extra = gated_children - plain_children
        print(
            f"  background processes (gate process, gates): {extra:,} more "
            f"({extra / plain:.1%} of plain pytest), run beside the tests"
        )
    else:
        print("instructions: not counted (valgrind is not on PATH, or --no-instructions)")
    by_off = None
    if counts is not None and off is not None:
        plain = counts["plain"][0]
        cost = off[0] - off[1]
        by_off = judge_off(cost, plain)
        # For scale only: this run's plain time per instruction.
        ms = statistics.median(times["plain"]) / plain * cost * 1000
        print(
            f"without --agentgate (one-test session, off vs -p no:agentgate; "
            f"target: at most {MAX_OFF_SHARE:.1%} of plain):"
        )
        print(
            f"  {cost:+,} instructions per session, {cost / plain:.3%} of plain "
            f"(about {ms:.1f} ms at its pace)   {by_off}"
        )
    result = by_time
    if by_off == "FAIL":
        print("result: FAIL: the plugin costs something measurable when it is not asked for")
        return 1
    if result == "INCONCLUSIVE":
        print(
            f"result: INCONCLUSIVE: the {CONFIDENCE:.0%} interval straddles {MAX_RATIO:.2f}x; "
            "run again on a quieter machine or with more --rounds"
        )
    else:
        print(f"result: {result}")
    return {"PASS": 0, "FAIL": 1}.get(result, 2)


if __name__ == "__main__":
    sys.exit(main())
