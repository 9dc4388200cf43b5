"""Patch coverage and the integrity gate on a 2,000-line change.

Generates a git repository: a package of 250 modules (about 37,000 lines) on `main`, and a
branch that modifies, adds and deletes lines in 100 of them, adds 4 modules and deletes 2,
about 2,000 added lines in all. Its real tests run under coverage.py (`--branch`), which writes
a Cobertura report (`coverage xml`). Then, best of N wall-clock runs in this process, after one
warm-up run of each:

(a) patch coverage: agentgate (the change from its base, the coverage gate's collector over
    the Cobertura report, its judge: from `find_change` to the number) against diff-cover
    (`diff_cover_tool.main`, JSON report, quiet) on the same repository, report and base.
    Their figures must agree. Target: agentgate at least 2x faster.
(b) the integrity gate (`gates/integrity.py`'s collect + judge, with whatever analyzers
    `integrity/analyzers.py` lists when it runs) against `git diff BASE` over the same change.
    Target: at most 5x. Its time with the change computed too (`find_change`) is printed beside.

Run: `python benchmarks/bench_patch.py [--runs N] [--keep]`. Needs diff-cover (the test
extra). Exits 1 when a target is missed or the figures disagree.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODULES = 250
FUNCTIONS = 12
CHANGED_MODULES = 100
NEW_MODULES = 4
DELETED_MODULES = 2
PATCH_TARGET = 2.0  # agentgate at least this many times faster than diff-cover
INTEGRITY_TARGET = 5.0  # the integrity gate at most this many times `git diff BASE`


def function(name: str, seed: int) -> str:
    return (
        f"def {name}(x, y):\n"
        f'    """Fold {name} over y."""\n'
        f"    total = x + {seed}\n"
        "    if total > y:\n"
        "        total -= y\n"
        "    else:\n"
        "        total += y\n"
        f"    for k in range({seed % 5 + 1}):\n"
        "        total += k\n"
        "    return total\n"
    )


def new_function(name: str, seed: int) -> str:
    """16 lines, added by the change."""
    return (
        f"def {name}(items, limit=10):\n"
        f'    """Added by the change ({seed})."""\n'
        "    seen = set()\n"
        "    out = []\n"
        "    for item in items:\n"
        "        if item in seen:\n"
        "            continue\n"
        "        seen.add(item)\n"
        f"        value = item * {seed % 7 + 2}\n"
        "        if value > limit:\n"
        "            out.append(limit)\n"
        "        else:\n"
        "            out.append(value)\n"
        "    if not out:\n"
        "        return None\n"
        "    return sum(out)\n"
    )


def module(index: int) -> str:
    return "\n\n".join(function(f"f{i}", index * FUNCTIONS + i) for i in range(FUNCTIONS))


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    proc = subprocess.run(
        ["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout


def run(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "COVERAGE_"))}
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")


def module_path(root: Path, index: int) -> Path:
    return root / "pkg" / f"part{index % 10}" / f"mod{index:03d}.py"


def generate(root: Path) -> dict[str, int]:
    """The repository, its change, and coverage.py's Cobertura report of the change."""
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".coverage\ncoverage.*\n.agentgate/\n__pycache__/\n")
    (root / "agentgate.yml").write_text(
        "gates:\n"
        "  coverage: {report: coverage.xml, format: cobertura, patch: 80, lines: null,\n"
        "             branches: null, functions: null, statements: null}\n"
    )
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    for part in range(10):
        (root / "pkg" / f"part{part}").mkdir()
        (root / "pkg" / f"part{part}" / "__init__.py").write_text("")
    for index in range(MODULES):
        module_path(root, index).write_text(module(index))
    (root / "tests").mkdir()
    write_tests(root, changed=False)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")

    git(root, "checkout", "-q", "-b", "change")
    for index in range(0, CHANGED_MODULES * 2, 2):  # every other module
        path = module_path(root, index)
        text = path.read_text()
        seed = index * FUNCTIONS + 3
        text = text.replace(f"total = x + {seed}\n", f"total = x + {seed} + 1\n")
        text = text.replace(f"total = x + {seed + 1}\n", f"total = x - {seed + 1}\n")
        # The last function is deleted, a new one added in its place.
        text = text[: text.rindex("\n\ndef ")] + "\n\n\n" + new_function("added", index)
        path.write_text(text)
    for index in range(MODULES, MODULES + NEW_MODULES):
        path = module_path(root, index)
        path.write_text("\n\n".join(new_function(f"n{i}", index + i) for i in range(3)))
    for index in range(MODULES - DELETED_MODULES, MODULES):
        module_path(root, index).unlink()
    write_tests(root, changed=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "change")

    run(root, sys.executable, "-m", "coverage", "run", "--branch", "--source=pkg",
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")  # fmt: skip
    run(root, sys.executable, "-m", "coverage", "xml", "-q", "-o", "coverage.xml")
    # Files written in the second of the index's own timestamp are "racily clean": git hashes
    # them again on every diff. A working copy is not like that once `git status` has run, so
    # age the files and refresh the index, as that would.
    past = time.time() - 60
    for path in root.rglob("*"):
        if ".git" not in path.parts:
            os.utime(path, (past, past))
    git(root, "update-index", "-q", "--refresh")
    added = deleted = files = 0
    for line in git(root, "diff", "--numstat", "main").splitlines():
        plus, minus, _ = line.split("\t", 2)
        added, deleted, files = added + int(plus), deleted + int(minus), files + 1
    lines = sum(len(p.read_text().splitlines()) for p in (root / "pkg").rglob("*.py"))
    return {"added": added, "deleted": deleted, "files": files, "lines": lines}


def write_tests(root: Path, *, changed: bool) -> None:
    """One test that calls every even function of each module, and, after the change, the new
    function of every other changed module and the first function of each new module."""
    text = (
        "import importlib\n\n"
        f"MODULES = {MODULES}\n"
        f"FUNCTIONS = {FUNCTIONS}\n\n\n"
        "def test_modules():\n"
        "    for index in range(MODULES):\n"
        "        try:\n"
        '            module = importlib.import_module(f"pkg.part{index % 10}.mod{index:03d}")\n'
        "        except ImportError:  # deleted by the change\n"
        "            continue\n"
        "        for i in range(0, FUNCTIONS - 1, 2):\n"
        '            getattr(module, f"f{i}")(3, 2)\n'
    )
    if changed:
        text += (
            "\n\n"
            "def test_added():\n"
            f"    for index in range(0, {CHANGED_MODULES * 2}, 4):\n"
            '        module = importlib.import_module(f"pkg.part{index % 10}.mod{index:03d}")\n'
            "        module.added([1, 2, 2, 30])\n"
            f"    for index in range({MODULES}, {MODULES + NEW_MODULES}):\n"
            '        module = importlib.import_module(f"pkg.part{index % 10}.mod{index:03d}")\n'
            "        module.n0([1, 2, 2, 30])\n"
        )
    (root / "tests" / "test_all.py").write_text(text)


def best_of(runs: int, call: Callable[[], Any]) -> tuple[float, Any]:
    call()  # warm-up: imports, the page cache, git's index
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return min(times), result


def best_of_both(
    runs: int, first: Callable[[], Any], second: Callable[[], Any]
) -> tuple[tuple[float, Any], tuple[float, Any]]:
    """Best of ``runs`` for each, run in alternating rounds (the order switching every round),
    so that a machine that gets busier or quieter meanwhile favours neither."""
    calls = (first, second)
    best = [float("inf"), float("inf")]
    results: list[Any] = [first(), second()]  # warm-up
    for round_ in range(runs):
        for index in (0, 1) if round_ % 2 == 0 else (1, 0):
            start = time.perf_counter()
            results[index] = calls[index]()
            best[index] = min(best[index], time.perf_counter() - start)
    return (best[0], results[0]), (best[1], results[1])


def row(label: str, seconds: float, note: str = "") -> None:
    print(f"  {label:<40}{seconds * 1000:8.1f} ms" + (f"  ({note})" if note else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each (best is kept)")
    parser.add_argument("--keep", action="store_true", help="keep the generated repository")
    args = parser.parse_args()
    try:
        from diff_cover import diff_cover_tool
    except ImportError:
        print("diff-cover is not installed: pip install -e '.[test]'", file=sys.stderr)
        return 2

    from pytest_agentgate.config.resolve import resolve_config
    from pytest_agentgate.engine import Pipeline, Request, find_change
    from pytest_agentgate.gates.base import CollectContext
    from pytest_agentgate.gates.changed import ChangedFiles
    from pytest_agentgate.gates.coverage import CoverageEvidence
    from pytest_agentgate.gates.patch import measure_patch
    from pytest_agentgate.git import BaseMissing
    from pytest_agentgate.integrity.analyzers import ANALYZERS
    from pytest_agentgate.registry import get_registry

    tmp = Path(tempfile.mkdtemp(prefix="agentgate-bench-patch-"))
    root = tmp / "repo"
    root.mkdir()
    cwd = os.getcwd()
    try:
        made = generate(root)
        os.chdir(root)
        print(
            f"repository: {made['lines']:,} lines of Python; the change: +{made['added']:,} "
            f"-{made['deleted']:,} lines in {made['files']} files; "
            f"Cobertura report {(root / 'coverage.xml').stat().st_size / 1024:.0f} KiB"
        )
        registry = get_registry()
        config = resolve_config(root, registry=registry)

        def context(name: str, change: Any) -> CollectContext:
            gate = config.gate(name)
            assert gate is not None
            return CollectContext(
                config=gate,
                root=config.root,
                result=None,
                ran_commands=False,
                started_at=0.0,
                registry=registry,
                change_found=change,
                project=config,
            )

        coverage_kind = registry.kinds["coverage"]

        def direct_patch() -> tuple[int, int, float | None]:
            change = find_change(config, None)
            ctx = context("coverage", change)
            evidence = coverage_kind.collect(ctx)
            result = coverage_kind.judge(ctx.config, evidence)
            patch = evidence.patch
            assert patch is not None and patch.ratio is not None, result.problems
            return patch.ratio.total, patch.ratio.covered, result.actual["patch"]

        # The engine's own path (`agentgate verify --no-run` with the coverage gate only): the
        # pipeline reads the change in a thread while the collector reads the report.
        only_coverage = dataclasses.replace(
            config, gates=[g for g in config.gates if g.name == "coverage"]
        )

        def agentgate_patch() -> tuple[int, int, float | None]:
            request = Request(config=dataclasses.replace(only_coverage), run=False)
            verdict = Pipeline(request, registry).verdict()
            (gate,) = verdict.gates
            return expected[0], expected[1], gate.actual["patch"]

        # Its parts, timed alone: the change (shared with every gate that looks at it: the
        # integrity gate computes it anyway), reading the report (done for the other coverage
        # metrics anyway), and patch coverage itself with the judge.
        found = find_change(config, None)
        if found is None or isinstance(found, BaseMissing):
            raise SystemExit(f"no change to measure: {found}")
        report = registry.read_coverage_many([root / "coverage.xml"], "cobertura", config.root)
        changed = ChangedFiles.of(found, config.root)
        coverage_gate = config.gate("coverage")
        assert coverage_gate is not None

        def patch_and_judge() -> None:
            evidence = CoverageEvidence(config.root, report=report)
            evidence.patch = measure_patch(report, changed)
            coverage_kind.judge(coverage_gate, evidence)

        parts = {
            "the change (find_change)": lambda: find_change(config, None),
            "reading coverage.xml": lambda: registry.read_coverage_many(
                [root / "coverage.xml"], "cobertura", config.root
            ),
            "patch coverage + judge": patch_and_judge,
        }

        out = tmp / "diff-cover.json"
        argv = ["diff-cover", "coverage.xml", "--compare-branch=main", "-q"]
        argv += ["--format", f"json:{out}"]

        def diff_cover() -> tuple[int, int, float]:
            with contextlib.redirect_stdout(io.StringIO()):
                diff_cover_tool.main(argv)
            doc = json.loads(out.read_text())
            total = doc["total_num_lines"]
            return total, total - doc["total_num_violations"], doc["total_percent_covered"]

        expected = direct_patch()
        if agentgate_patch() != expected:
            raise SystemExit(f"the pipeline's figure differs: {agentgate_patch()} != {expected}")
        runs = args.runs
        (ours_s, ours), (theirs_s, theirs) = best_of_both(runs, agentgate_patch, diff_cover)
        cli_s, _ = best_of(runs, lambda: subprocess.run(
            [sys.executable, "-m", "diff_cover.diff_cover_tool", *argv[1:]],
            cwd=root, capture_output=True, check=True,
        ))  # fmt: skip
        failed = False
        print(f"\n(a) patch coverage, best of {runs}")
        row("diff-cover (main(), in this process)", theirs_s)
        row("agentgate (the pipeline, --no-run)", ours_s)
        part_s = {name: best_of(runs, call)[0] for name, call in parts.items()}
        for name, seconds in part_s.items():
            row(f"  {name}", seconds)
        # The engine reads the change while the gate commands run (engine.py, `alongside`):
        # what patch coverage adds after the tests end is the report and the judge.
        after = part_s["reading coverage.xml"] + part_s["patch coverage + judge"]
        row("  after the tests end (engine)", after, f"diff-cover / this = {theirs_s / after:.2f}x")
        row("diff-cover as a command (reference)", cli_s, "interpreter start included")
        print(
            f"  figures: agentgate {ours[1]}/{ours[0]} lines ({ours[2]:.2f}%), "
            f"diff-cover {theirs[1]}/{theirs[0]} lines ({theirs[2]}%, truncated)"
        )
        if ours[:2] != theirs[:2]:
            print("  FAIL: the figures disagree")
            failed = True
        speedup = theirs_s / ours_s
        verdict = "PASS" if speedup >= PATCH_TARGET else "FAIL"
        failed |= verdict == "FAIL"
        print(
            f"{verdict}: diff-cover / agentgate = {speedup:.2f}x "
            f"(target >= {PATCH_TARGET:.0f}x: agentgate at least {PATCH_TARGET:.0f}x faster)"
        )

        base_sha = found[1].base.sha
        integrity_kind = registry.kinds["integrity"]

        def integrity() -> int:
            ctx = context("integrity", found)
            evidence = integrity_kind.collect(ctx)
            result = integrity_kind.judge(ctx.config, evidence)
            return int(result.actual.get("findings") or 0)

        def integrity_with_change() -> int:
            ctx = context("integrity", find_change(config, None))
            evidence = integrity_kind.collect(ctx)
            result = integrity_kind.judge(ctx.config, evidence)
            return int(result.actual.get("findings") or 0)

        def git_diff() -> int:
            proc = subprocess.run(
                ["git", "diff", base_sha], cwd=root, capture_output=True, check=True
            )
            return len(proc.stdout)

        print(f"\n(b) integrity gate, best of {runs}; analyzers: {', '.join(ANALYZERS) or 'none'}")
        try:
            (gate_s, findings), (diff_s, diff_bytes) = best_of_both(runs, integrity, git_diff)
            whole_s, _ = best_of(runs, integrity_with_change)
        except Exception as exc:  # an analyzer another branch is still writing
            print(f"FAIL: the integrity gate raised {exc!r}")
            return 1
        ratio = gate_s / diff_s
        row(f"git diff BASE ({diff_bytes / 1024:.0f} KiB)", diff_s)
        row("integrity collect + judge", gate_s, f"{findings} findings")
        row("with the change computed too", whole_s, f"{whole_s / diff_s:.2f}x git diff")
        verdict = "PASS" if ratio <= INTEGRITY_TARGET else "FAIL"
        failed |= verdict == "FAIL"
        print(f"{verdict}: integrity / git diff = {ratio:.2f}x (target <= {INTEGRITY_TARGET:.0f}x)")
        return 1 if failed else 0
    finally:
        os.chdir(cwd)
        if args.keep:
            print(f"\nkept: {root}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
