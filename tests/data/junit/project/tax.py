"""Tiny module under test."""


def tax(amount: float, rate: float = 0.15) -> float:
    if amount <= 0:
        return 0.0
    return round(amount * rate, 2)
