import pytest


@pytest.fixture
def flaky_resource():
    yield "conn"
    raise RuntimeError("teardown failed: resource leaked")


def test_call_fails_and_teardown_errors(flaky_resource):
    # Fails in the call phase AND errors in teardown: pytest's junitxml writes
    # two <testcase> elements with the same classname/name (failure, then error).
    assert flaky_resource == "other"


def test_ok():
    assert True
