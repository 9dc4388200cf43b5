import pytest

from invoice import Invoice, LineItem, TaxRule, apply_tax

STANDARD = TaxRule("standard", 20.0)
REDUCED = TaxRule("reduced", 5.0)
ZERO = TaxRule("zero", 0.0)
SMALL = TaxRule("small", 10.0, exempt_below=50.0)


def test_tax_standard():
    assert apply_tax(100.0, STANDARD) == 20.0


def test_tax_reduced():
    assert apply_tax(100.0, REDUCED) == 5.0


def test_tax_zero():
    assert apply_tax(100.0, ZERO) == 0.0


def test_tax_rounds_to_cents():
    assert apply_tax(10.01, STANDARD) == 2.0


def test_tax_exempt_below():
    assert apply_tax(49.99, SMALL) == 0.0


def test_tax_at_exemption_limit():
    assert apply_tax(50.0, SMALL) == 5.0


def test_negative_amount_rejected():
    with pytest.raises(ValueError):
        apply_tax(-1.0, STANDARD)


def test_rate_out_of_range():
    with pytest.raises(ValueError):
        TaxRule("bad", 101.0)


def test_line_item_amount():
    assert LineItem("pen", 1.25, 4).amount == 5.0


def test_line_item_default_quantity():
    assert LineItem("book", 12.5).amount == 12.5


def test_invoice_subtotal():
    invoice = Invoice(STANDARD, [LineItem("a", 10.0), LineItem("b", 5.0, 2)])
    assert invoice.subtotal == 20.0


def test_invoice_tax():
    invoice = Invoice(STANDARD, [LineItem("a", 10.0)])
    assert invoice.tax == 2.0


def test_invoice_total():
    invoice = Invoice(STANDARD, [LineItem("a", 10.0)])
    assert invoice.total == 12.0


def test_invoice_discount():
    invoice = Invoice(STANDARD, [LineItem("a", 100.0)], discount_percent=10.0)
    assert invoice.subtotal == 90.0


def test_invoice_add():
    invoice = Invoice(REDUCED)
    invoice.add(LineItem("a", 3.0))
    assert len(invoice.items) == 1


def test_invoice_add_rejects_zero_quantity():
    with pytest.raises(ValueError):
        Invoice(REDUCED).add(LineItem("a", 3.0, 0))


def test_empty_invoice_total():
    assert Invoice(STANDARD).total == 0.0


def test_summary_lists_items():
    invoice = Invoice(REDUCED, [LineItem("pen", 2.0)])
    assert "pen: 2.00" in invoice.summary()


def test_summary_total_line():
    invoice = Invoice(REDUCED, [LineItem("pen", 2.0)])
    assert invoice.summary().endswith("total: 2.10")


def test_reduced_invoice_total():
    invoice = Invoice(REDUCED, [LineItem("a", 40.0)])
    assert invoice.total == 42.0
