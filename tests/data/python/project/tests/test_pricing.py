from shop.pricing import discount, shipping


def test_discount_member_big():
    assert discount(200, True) == 175.0


def test_discount_nonmember_big():
    assert discount(200, False) == 195.0


def test_shipping_heavy_express():
    assert shipping(20, True) == 30.0


def test_shipping_light_express():
    assert shipping(1, True) == 10.0
