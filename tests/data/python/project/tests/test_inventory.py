import pytest

from shop.inventory import Inventory


def test_add_and_report():
    inv = Inventory()
    inv.add("pear", 2)
    inv.add("apple", 1)
    assert inv.report() == ["apple: 1", "pear: 2"]


def test_add_rejects_zero():
    with pytest.raises(ValueError):
        Inventory().add("x", 0)


def test_remove_clamps_at_zero():
    inv = Inventory()
    inv.add("x", 1)
    assert inv.remove("x", 5) == 0
