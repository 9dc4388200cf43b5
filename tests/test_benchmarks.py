"""The statistics the plugin benchmark decides with (the benchmarks themselves are not run here)."""

from __future__ import annotations

import importlib.util
import math

import pytest
from _helpers import REPO


def load_bench_plugin():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "bench_plugin", REPO / "benchmarks/bench_plugin.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = load_bench_plugin()


def coverage_of(n: int, k: int) -> float:
    """P(the k-th smallest <= median <= the k-th largest) for n samples."""
    return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2**n


@pytest.mark.parametrize(("n", "k"), [(6, 1), (15, 4), (25, 8)])
def test_median_interval_is_the_widest_95_percent_order_statistics(n: int, k: int) -> None:
    values = [float(v) for v in range(n, 0, -1)]  # unsorted on purpose
    low, high = bench.median_interval(values)
    assert (low, high) == (float(k), float(n - k + 1))
    assert coverage_of(n, k) >= 0.95 > coverage_of(n, k + 1)


def test_median_interval_needs_six_rounds() -> None:
    with pytest.raises(SystemExit, match="5 rounds are too few"):
        bench.median_interval([1.0] * 5)


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [(0.99, 1.03, "PASS"), (1.031, 1.05, "FAIL"), (1.0, 1.04, "INCONCLUSIVE")],
)
def test_an_interval_decides_only_when_it_is_on_one_side(
    low: float, high: float, verdict: str
) -> None:
    assert bench.judge_interval(low, high) == verdict


@pytest.mark.parametrize(
    ("extra", "verdict"), [(-1_000, "PASS"), (1_000_000, "PASS"), (1_000_001, "FAIL")]
)
def test_the_plugin_off_may_cost_at_most_a_thousandth_of_the_run(extra: int, verdict: str) -> None:
    assert bench.judge_off(extra, plain=1_000_000_000) == verdict
