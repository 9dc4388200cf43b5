"""Invoices: line items, discounts and tax."""

from .tax import TaxRule, apply_tax
from .totals import Invoice, LineItem

__all__ = ["Invoice", "LineItem", "TaxRule", "apply_tax"]
