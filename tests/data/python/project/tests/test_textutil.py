from shop.textutil import initials, slug, title


def test_slug():
    assert slug("Hello Big World") == "hello-big-world"


def test_title():
    assert title("  red apple ") == "Red Apple"


def test_initials():
    assert initials("agent gate") == "AG"
