"""Invoice totals."""

from __future__ import annotations

from dataclasses import dataclass, field

from .tax import TaxRule, apply_tax


@dataclass(frozen=True)
class LineItem:
    description: str
    unit_price: float
    quantity: int = 1

    @property
    def amount(self) -> float:
        return round(self.unit_price * self.quantity, 2)


@dataclass
class Invoice:
    rule: TaxRule
    items: list[LineItem] = field(default_factory=list)
    discount_percent: float = 0.0

    def add(self, item: LineItem) -> None:
        if item.quantity <= 0:
            raise ValueError("quantity must be positive")
        self.items.append(item)

    @property
    def subtotal(self) -> float:
        gross = sum(item.amount for item in self.items)
        return round(gross * (1 - self.discount_percent / 100), 2)

    @property
    def tax(self) -> float:
        return apply_tax(self.subtotal, self.rule)

    @property
    def total(self) -> float:
        return round(self.subtotal + self.tax, 2)

    def summary(self) -> str:
        lines = [f"{item.description}: {item.amount:.2f}" for item in self.items]
        lines.append(f"total: {self.total:.2f}")
        return "\n".join(lines)
