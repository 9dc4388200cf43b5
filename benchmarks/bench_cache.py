"""The verdict cache: re-verifying an unchanged tree against a full run, on examples/invoice.

Measures, in one run, on a git copy of examples/invoice, rounds of:

- full: `agentgate verify --no-cache` (every gate's command runs);
- cached: `agentgate verify` right after a full run, with nothing changed (the judged gates are
  reused, the attempt is counted).

Prints both medians and the ratio; target: the cached run costs at most 5% of the full run.
The example's gates take half a second, so the ratio is dominated by agentgate's own start-up;
on a project whose suite takes a minute the ratio is far smaller.
Run: `python benchmarks/bench_cache.py [--rounds N] [--project PATH]` (agentgate's own
repository: `--project . --rounds 1`, about three minutes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _example import example_repo

TARGET = 0.05


def timed(cmd: list[str], root: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--project", type=Path, help="a git project of your own instead of examples/invoice"
    )
    args = parser.parse_args()
    exe = shutil.which("agentgate", path=os.path.dirname(sys.executable))
    if exe is None:
        print("agentgate is not installed in this environment: pip install -e .", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = args.project.resolve() if args.project is not None else example_repo(Path(tmp))
        env = {**os.environ, "AGENTGATE_STATE_HOME": str(Path(tmp) / "state")}
        full, cached = [], []
        for _ in range(args.rounds):
            f, _ = timed([exe, "verify", "--no-cache"], root, env)
            timed([exe, "verify"], root, env)  # the full run the cache keeps
            c, out = timed([exe, "verify"], root, env)
            if "judged gates were reused" not in out:
                raise SystemExit("the second run was not served from the cache:\n" + out)
            full.append(f)
            cached.append(c)
    ratio = statistics.median(cached) / statistics.median(full)
    print(f"{args.project or 'examples/invoice'}, {args.rounds} rounds")
    print(f"  full run (--no-cache)   median {statistics.median(full):.3f} s")
    print(f"  unchanged tree, cached  median {statistics.median(cached):.3f} s")
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"  ratio {ratio:.3f} (target at most {TARGET:.2f})   {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
