"""Benchmark read_junit against a bare lxml iterparse loop on a large JUnit report.

Run from the repository root:  .venv/bin/python benchmarks/bench_junit.py [--cases N] [--large]

Generates a realistic JUnit XML file (default 100,000 test cases) in a temporary directory, then:

- times (best of 3, in this process) a bare ``lxml.etree.iterparse`` loop that only classifies
  test cases, ``read_junit``, and, for reference, junitparser's full parse;
- measures the peak memory of each in a fresh subprocess: the peak resident set size of that
  whole process (VmHWM on Linux, ``ru_maxrss`` elsewhere), next to the same figure for a
  subprocess that only starts the interpreter, so the delta is what the reader itself costs.

Targets: read_junit at most 1.5x the lxml loop's time and at most 64 MB peak RSS (absolute, not
delta). Prints PASS/FAIL for each and exits 1 if a target is missed.

``--large`` also runs 1,000,000 test cases (about 120 MB of XML; target: at most 100 MB peak RSS,
time ratio printed) and a report whose ``<system-out>`` text nodes are 12 MB each (read_junit
must read it; lxml refuses text nodes over 10 MB unless ``huge_tree=True``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MAX_TIME_RATIO = 1.5
MAX_PEAK_MB = 64.0
LARGE_CASES = 1_000_000
MAX_LARGE_PEAK_MB = 100.0
HUGE_TEXT_MB = 12
SUITE_SIZE = 50

TRACEBACK = """\
self = &lt;tests.test_billing.TestInvoice object at 0x7f3a2c1d9e50&gt;

    def test_total(self):
        invoice = make_invoice(lines=3)
&gt;       assert invoice.total() == Decimal("30.00")
E       AssertionError: assert Decimal('29.99') == Decimal('30.00')
E        +  where Decimal('29.99') = total()

tests/test_billing.py:{line}: AssertionError"""


def generate(path: Path, cases: int, seed: int = 7) -> None:
    """Write a JUnit report shaped like pytest's output, one suite per test module."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="bench">\n')
        for start in range(0, cases, SUITE_SIZE):
            module = f"tests/pkg_{start // 5000:02d}/test_mod_{start // SUITE_SIZE:04d}.py"
            classname = module[:-3].replace("/", ".") + ".TestThing"
            # Claims that are wrong on purpose: readers must count <testcase> elements.
            out.write(
                f'<testsuite name="{classname}" tests="{SUITE_SIZE + 1}" failures="0" '
                f'errors="0" skipped="0" time="1.234">\n'
            )
            for i in range(start, min(start + SUITE_SIZE, cases)):
                line = i % 997 + 1
                # pytest's default junit_family (xunit2): no file/line attributes.
                attrs = f'classname="{classname}" name="test_case_{i}" time="0.{i % 997:03d}"'
                roll = rng.random()
                if roll < 0.02:
                    out.write(
                        f'  <testcase {attrs}><failure message="AssertionError: assert '
                        f"Decimal('29.99') == Decimal('30.00')&#10; +  where ...\">"
                        f"{TRACEBACK.format(line=line)}</failure>"
                        "<system-out>computing totals\nline 2 of output\n</system-out>"
                        "</testcase>\n"
                    )
                elif roll < 0.025:
                    out.write(
                        f'  <testcase {attrs}><error message="failed on setup with '
                        '&quot;RuntimeError: database unavailable&quot;">'
                        f"{TRACEBACK.format(line=line)}</error></testcase>\n"
                    )
                elif roll < 0.055:
                    out.write(
                        f'  <testcase {attrs}><skipped type="pytest.skip" '
                        'message="requires network">tests/conftest.py:12: requires network'
                        "</skipped></testcase>\n"
                    )
                elif roll < 0.10:
                    out.write(
                        f"  <testcase {attrs}><system-out>"
                        + "".join(f"log line {k} for case {i}\n" for k in range(5))
                        + "</system-out></testcase>\n"
                    )
                else:
                    out.write(f"  <testcase {attrs} />\n")
            out.write("</testsuite>\n")
        out.write("</testsuites>\n")


# --- the measured functions -------------------------------------------------------------------


def lxml_loop(path: str) -> list[int]:
    """Idiomatic bounded-memory lxml: iterparse end events on testcase, clear as we go."""
    from lxml import etree

    counts = [0, 0, 0, 0]  # passed, skipped, failed, error
    for _event, elem in etree.iterparse(path, events=("end",), tag="testcase"):
        outcome = 0
        for child in elem:
            tag = child.tag
            if tag == "error":
                outcome = 3
            elif tag == "failure":
                outcome = max(outcome, 2)
            elif tag == "skipped":
                outcome = max(outcome, 1)
        counts[outcome] += 1
        elem.clear()
        while elem.getprevious() is not None:
            del elem.getparent()[0]
    return counts


def agentgate(path: str) -> list[int]:
    from pytest_agentgate.reports.junit import read_junit

    run = read_junit([path])
    return [run.passed, run.skipped, run.failed, run.errors]


def junitparser_full(path: str) -> list[int]:
    from junitparser import Error, Failure, JUnitXml, Skipped

    counts = [0, 0, 0, 0]
    for suite in JUnitXml.fromfile(path):
        for case in suite:
            kinds = {type(r) for r in case.result}
            if Error in kinds:
                counts[3] += 1
            elif Failure in kinds:
                counts[2] += 1
            elif Skipped in kinds:
                counts[1] += 1
            else:
                counts[0] += 1
    return counts


def empty(path: str) -> list[int]:
    return []


MODES: dict[str, Callable[[str], list[int]]] = {
    "empty": empty,
    "lxml": lxml_loop,
    "agentgate": agentgate,
    "junitparser": junitparser_full,
}


def best_of(fn: Callable[[str], Any], path: str, repeat: int = 3) -> float:
    fn(path)  # warm imports and the page cache
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(path)
        best = min(best, time.perf_counter() - start)
    return best


def peak_rss_mb(mode: str, path: str) -> float:
    """Peak RSS of a fresh interpreter that runs one mode once (imports included)."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode, path],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(json.loads(proc.stdout)["peak_mb"])


def peak_rss_kib() -> int:
    """Peak RSS of this process so far, in KiB.

    Linux: VmHWM from /proc/self/status, the high-water mark of this process's own address space.
    ``ru_maxrss`` would do elsewhere, but on Linux it carries over the parent's peak across
    fork+exec, so a child of this (large) benchmark process would report the parent's figure.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux/BSD
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes on macOS


def child(mode: str, path: str) -> None:
    result = MODES[mode](path)
    print(json.dumps({"peak_mb": peak_rss_kib() / 1024, "counts": result}))


def generate_huge_text(path: Path, megabytes: int = HUGE_TEXT_MB) -> None:
    """Three test cases whose <system-out> is ``megabytes`` MB of text: a pass, a failure with a
    message, and a failure with neither message nor text (cargo's libtest JUnit shape), whose
    message comes from its output."""
    line = "x" * 99 + "\n"
    blob = line * (megabytes * 2**20 // len(line))
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="big">\n')
        out.write(f'<testcase classname="big" name="passes"><system-out>{blob}</system-out>')
        out.write("</testcase>\n")
        out.write('<testcase classname="big" name="fails"><failure message="boom"/>')
        out.write(f"<system-out>{blob}</system-out></testcase>\n")
        out.write('<testcase classname="big" name="panics"><failure type="assert"/>')
        out.write(f"<system-out>thread panicked at src/lib.rs:3\n{blob}</system-out></testcase>\n")
        out.write("</testsuite></testsuites>\n")


def huge_text_check(tmp: str) -> bool:
    path = Path(tmp) / "huge-text.xml"
    generate_huge_text(path)
    size_mb = path.stat().st_size / 2**20
    print()
    print(
        f"huge text nodes: 3 test cases, <system-out> of {HUGE_TEXT_MB} MB each ({size_mb:.1f} MiB)"
    )
    try:
        lxml_loop(str(path))
        print("lxml iterparse (default): read it")
    except Exception as exc:  # lxml.etree.XMLSyntaxError
        print(f"lxml iterparse (default): refused: {str(exc)[:90]}")
    from pytest_agentgate.reports.junit import read_junit

    start = time.perf_counter()
    run = read_junit([path])
    elapsed = time.perf_counter() - start
    peak = peak_rss_mb("agentgate", str(path))
    messages = [f.message for f in run.failures]
    ok = (run.passed, run.failed) == (1, 2) and messages == [
        "boom",
        "thread panicked at src/lib.rs:3",
    ]
    verdict = "PASS" if ok else "FAIL"
    print(
        f"{verdict}: read_junit read it in {elapsed:.3f} s, peak RSS {peak:.1f} MB: "
        f"passed {run.passed}, failed {run.failed}, messages {messages}"
    )
    return ok


def run_size(tmp: str, cases: int, max_peak_mb: float, *, reference: bool = True) -> bool:
    path = Path(tmp) / f"junit-{cases}.xml"
    generate(path, cases)
    try:
        return measure(path, cases, max_peak_mb, reference=reference)
    finally:
        path.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument(
        "--large",
        action="store_true",
        help=f"also {LARGE_CASES:,} test cases and {HUGE_TEXT_MB} MB <system-out> text nodes",
    )
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0

    print(f"python {sys.version.split()[0]}, {sys.platform}")
    with tempfile.TemporaryDirectory() as tmp:
        ok = run_size(tmp, args.cases, MAX_PEAK_MB)
        if args.large:
            print()
            ok = run_size(tmp, LARGE_CASES, MAX_LARGE_PEAK_MB, reference=False) and ok
            ok = huge_text_check(tmp) and ok
    return 0 if ok else 1


def measure(path: Path, cases: int, max_peak_mb: float, *, reference: bool) -> bool:
    size_mb = path.stat().st_size / 2**20
    print(f"report: {cases:,} test cases, {size_mb:.1f} MiB ({path})")

    expected = lxml_loop(str(path))
    got = agentgate(str(path))
    if got != expected:
        print(f"FAIL: read_junit counts {got} != lxml counts {expected}")
        return False
    print(f"counts (passed, skipped, failed, error): {got}")

    # junitparser is a reference line only, and only where it is installed.
    reference = reference and importlib.util.find_spec("junitparser") is not None
    modes = [m for m in MODES if reference or m != "junitparser"]
    peaks = {mode: peak_rss_mb(mode, str(path)) for mode in modes}
    repeat = 3 if cases <= 200_000 else 1
    times = {mode: best_of(MODES[mode], str(path), repeat) for mode in ("lxml", "agentgate")}
    times["junitparser"] = float("nan")
    peaks.setdefault("junitparser", float("nan"))
    if reference:
        with contextlib.suppress(ImportError):
            times["junitparser"] = best_of(junitparser_full, str(path), repeat=1)

    base = peaks["empty"]
    print()
    print(f"time: best of {repeat} wall-clock runs in this process (junitparser: 1 run)")
    print("memory: peak RSS (VmHWM) of a fresh subprocess per reader, imports included;")
    print(f"        delta = over a subprocess that starts and reads nothing ({base:.1f} MB)")
    print()
    print(f"{'reader':<22}{'time s':>9}{'peak MB':>10}{'delta MB':>10}")
    labels = {
        "lxml": "lxml iterparse loop",
        "agentgate": "read_junit (expat)",
        "junitparser": "junitparser (ref)",
    }
    for mode, label in labels.items():
        print(f"{label:<22}{times[mode]:>9.3f}{peaks[mode]:>10.1f}{peaks[mode] - base:>10.1f}")

    ratio = times["agentgate"] / times["lxml"]
    ok_time = ratio <= MAX_TIME_RATIO
    ok_mem = peaks["agentgate"] <= max_peak_mb
    print()
    verdict = "PASS" if ok_time else "FAIL"
    print(f"{verdict}: read_junit / lxml time = {ratio:.2f}x (target <= {MAX_TIME_RATIO}x)")
    verdict = "PASS" if ok_mem else "FAIL"
    peak = peaks["agentgate"]
    print(f"{verdict}: read_junit peak RSS = {peak:.1f} MB (target <= {max_peak_mb:.0f} MB)")
    return ok_time and ok_mem


if __name__ == "__main__":
    sys.exit(main())
