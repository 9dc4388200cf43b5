"""Billing helpers with deliberate problems for the linters."""
import os
import subprocess


def total(prices: list[float]) -> int:
    result: int = sum(prices)
    return result


def greet(name):
    unused = 1
    return "hello " + nam


def run(cmd: str) -> str:
    return subprocess.check_output(cmd, shell=True).decode()


def too_many(a, b, c, d, e, f, g):
    if a:
        return b
    else:
        return c


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


COUNTS: list[int] = [1, 2]
AVERAGE = mean(COUNTS)


def legacy():
    count: int = "many"
    return count
