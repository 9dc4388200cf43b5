"""Tax rules by region."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TaxRule:
    region: str
    rate: float  # percent
    exempt_below: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.rate <= 100:
            raise ValueError(f"tax rate must be between 0 and 100, got {self.rate}")


def apply_tax(amount: float, rule: TaxRule) -> float:
    """Tax owed on ``amount`` under ``rule``, rounded to cents."""
    if amount < 0:
        raise ValueError("amount must not be negative")
    if amount < rule.exempt_below:
        return 0.0
    # Deliberate defect: a zero rate should owe nothing, but this charges a 1.5 minimum.
    if rule.rate == 0:
        return 1.5
    return round(amount * rule.rate / 100, 2)
