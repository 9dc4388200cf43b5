"""Benchmark: gate commands run in parallel, so a run costs about as long as its slowest gate.

Three gates (`build`, `lint`, `test`) are `sleep`-like commands of 0.8, 1.0 and 1.0 seconds run
through ``pytest_agentgate.process.run_commands``. The baseline is the slowest command run alone
through ``run_command``, measured in the same invocation (so process start-up and the run loop's
overhead are in both numbers). Each is measured ``--repeat`` times (default 3) and the best time
is kept.

    ratio = parallel time / baseline          target: ratio <= 1.15

Serial execution would give a ratio of about 2.8. Prints both times, the ratio and PASS or FAIL;
exits 1 on FAIL.

Run: ``.venv/bin/python benchmarks/bench_parallel.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

try:
    from pytest_agentgate.process import CommandResult, CommandSpec, run_command, run_commands
except ImportError:  # running from a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pytest_agentgate.process import CommandResult, CommandSpec, run_command, run_commands

TARGET_RATIO = 1.15
DURATIONS = {"build": 0.8, "lint": 1.0, "test": 1.0}


def sleep_command(seconds: float) -> str:
    """A portable `sleep` (fractional seconds are not POSIX `sleep`)."""
    return f"{shlex.quote(sys.executable)} -c 'import time; time.sleep({seconds})'"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        specs = [
            CommandSpec(key=key, command=sleep_command(seconds), cwd=cwd, timeout=30)
            for key, seconds in DURATIONS.items()
        ]
        slowest = max(specs, key=lambda s: DURATIONS[s.key])

        def check(results: Mapping[str, CommandResult]) -> None:
            bad = [k for k, r in results.items() if r.exit_code != 0]
            if bad:
                raise SystemExit(f"bench_parallel: commands failed: {', '.join(bad)}")

        baseline = min(
            timed(lambda: check({slowest.key: run_command(slowest)})) for _ in range(args.repeat)
        )
        parallel = min(timed(lambda: check(run_commands(specs))) for _ in range(args.repeat))

    ratio = parallel / baseline
    ok = ratio <= TARGET_RATIO
    gates = ", ".join(f"{k} {v:.1f}s" for k, v in DURATIONS.items())
    print(f"gates: {gates} (best of {args.repeat})")
    print(f"baseline (slowest gate alone): {baseline:.3f} s")
    print(f"parallel (all three gates):    {parallel:.3f} s")
    print(f"ratio: {ratio:.3f} (target <= {TARGET_RATIO})")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
