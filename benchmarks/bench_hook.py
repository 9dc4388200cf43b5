"""The cost of `agentgate hook` beside the gates' own commands, on examples/invoice.

Measures, in one run, rounds of (order alternating each round):

- baseline: the gate commands of examples/invoice's agentgate.yml, run in parallel in plain
  ``subprocess`` threads, the way agentgate runs them: what any gate has to pay;
- hook: ``agentgate hook claude`` with a Claude Code stop event on stdin, from the event to the
  answer on stdout (a new session each round, so no attempt budget runs out, and a changed file,
  so the verdict cache never answers).

Prints both medians and the median of the per-round ratios; target: at most 1.05x.
With ``--instructions`` (valgrind on PATH), also counts the instructions of one hook and of
the commands alone, every process of each (cachegrind): a figure a busy machine does not move.
Run: `python benchmarks/bench_hook.py [--rounds N] [--instructions]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import _cachegrind
from _example import example_repo

TARGET = 1.05


def gate_commands(root: Path) -> list[tuple[str, dict[str, str]]]:
    from pytest_agentgate.config.resolve import resolve_config
    from pytest_agentgate.engine import command_environment, make_plan
    from pytest_agentgate.registry import get_registry

    registry = get_registry()
    plan = make_plan(resolve_config(root, registry=registry), registry)
    # As agentgate runs them: this environment's `bin` first on PATH (without it, a shell's
    # own `python`, with no coverage.py, made the test command fail at once, and the baseline
    # too short).
    env = {**os.environ, **command_environment()}
    return [(spec.command, {**env, **(spec.env or {})}) for spec in plan.commands]


def run_baseline(root: Path, commands: list[tuple[str, dict[str, str]]]) -> float:
    start = time.perf_counter()

    def one(command: str, env: dict[str, str]) -> None:
        done = subprocess.run(command, shell=True, cwd=root, env=env, capture_output=True)
        if done.returncode not in (0, 1) or b"No module named" in done.stderr:
            raise SystemExit(f"the baseline's command cannot run: {command}\n{done.stderr!r}")

    threads = [threading.Thread(target=one, args=c) for c in commands]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def run_hook(exe: str, root: Path, session: str) -> float:
    # A new untracked file each time: the tree changed, so the verdict cache cannot answer and
    # every round measures a whole gating run (an unchanged tree is bench_cache.py's).
    (root / "work-in-progress.txt").write_text(session)
    event = json.dumps(
        {
            "session_id": session,
            "cwd": str(root),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": "All done.",
        }
    ).encode()
    start = time.perf_counter()
    done = subprocess.run([exe, "hook", "claude"], input=event, cwd=root, capture_output=True)
    elapsed = time.perf_counter() - start
    answer = json.loads(done.stdout)
    if answer.get("decision") != "block":  # the example has a defect: it must be blocked
        raise SystemExit(f"unexpected answer: {done.stdout!r} {done.stderr!r}")
    return elapsed


def instructions(
    command: list[str], root: Path, stdin: bytes = b"", env: dict[str, str] | None = None
) -> int:
    """The instructions every process of ``command`` executed, under cachegrind."""
    with tempfile.TemporaryDirectory(prefix="agentgate-bench-valgrind-") as logs:
        seeded = {**(env or os.environ), "PYTHONHASHSEED": "0"}
        subprocess.run(
            _cachegrind.wrapped(logs, command),
            input=stdin,
            cwd=root,
            env=seeded,
            capture_output=True,
            check=False,
        )
        return sum(_cachegrind.counts(logs).values())


def count(exe: str, root: Path, commands: list[tuple[str, dict[str, str]]]) -> tuple[int, int]:
    """(the hook's instructions, the commands' alone), every process of each."""
    (root / "work-in-progress.txt").write_text("counted")
    event = json.dumps(
        {"session_id": "counted", "cwd": str(root), "hook_event_name": "Stop",
         "stop_hook_active": False, "last_assistant_message": "All done."}
    ).encode()  # fmt: skip
    hook = instructions([exe, "hook", "claude"], root, event)
    script = " ; ".join(command for command, _ in commands)
    alone = instructions(["sh", "-c", script], root, env=commands[0][1])
    return hook, alone


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--instructions", action="store_true", help="count them (valgrind)")
    args = parser.parse_args()
    exe = shutil.which("agentgate", path=os.path.dirname(sys.executable))
    if exe is None:
        print("agentgate is not installed in this environment: pip install -e .", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = example_repo(Path(tmp))
        commands = gate_commands(root)
        run_baseline(root, commands)  # warm-up: imports, .pyc files
        run_hook(exe, root, "warm-up")
        baseline, hook, ratios = [], [], []
        counted = (0, 1)
        for n in range(args.rounds):
            if n % 2:
                h = run_hook(exe, root, f"round-{n}")
                b = run_baseline(root, commands)
            else:
                b = run_baseline(root, commands)
                h = run_hook(exe, root, f"round-{n}")
            baseline.append(b)
            hook.append(h)
            ratios.append(h / b)
        if args.instructions and shutil.which("valgrind") is not None:
            counted = count(exe, root, commands)  # warm, as the rounds were
    ratio = statistics.median(ratios)
    print(f"examples/invoice, {len(commands)} gate commands, {args.rounds} rounds")
    print(f"  gate commands alone  median {statistics.median(baseline):.3f} s")
    print(f"  agentgate hook       median {statistics.median(hook):.3f} s (stdin to answer)")
    extra = statistics.median(h - b for h, b in zip(hook, baseline, strict=True))
    print(f"  agentgate's own time per stop: median {extra * 1000:.0f} ms")
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"  ratio per round: median {ratio:.3f}x (target at most {TARGET}x)   {verdict}")
    if args.instructions:
        if shutil.which("valgrind") is None:
            print("  instructions: valgrind is not on PATH", file=sys.stderr)
            return 2
        hook_n, alone_n = counted
        print(
            f"  instructions: hook {hook_n / 1e9:.2f} billion, commands alone {alone_n / 1e9:.2f}"
        )
        print(f"  agentgate's own: {(hook_n - alone_n) / 1e9:.2f} billion, {hook_n / alone_n:.2f}x")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
