import pytest

from tax import tax


def test_tax_basic():
    assert tax(100) == 15.0


def test_tax_rate():
    assert tax(100, rate=0.2) == 20.0


def test_tax_negative():
    assert tax(-5) == 0.0


def test_tax_zero():
    # Deliberately wrong expectation: this is the one failing assert.
    assert tax(0) == 1.5


@pytest.fixture
def broken_setup():
    raise RuntimeError("database unavailable")


def test_setup_error(broken_setup):
    assert True


@pytest.fixture
def broken_teardown():
    yield 10
    raise RuntimeError("teardown failed: could not close connection")


def test_teardown_error(broken_teardown):
    assert broken_teardown == 10


@pytest.mark.skip(reason="not implemented yet")
def test_skipped():
    assert False


@pytest.mark.xfail(reason="known rounding bug")
def test_xfail():
    assert tax(0.1) == 0.015


@pytest.mark.xfail(strict=True, reason="expected to fail but passes")
def test_xpass_strict():
    assert tax(10) == 1.5
