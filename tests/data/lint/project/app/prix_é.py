"""A module with a non-ASCII file name."""
PASSWORD = "hunter2"


def check(value: str) -> bool:
    assert value
    return value == PASSWORD  # pylint: disable=comparison-with-callable
