"""Sample package linted by pylint, mypy, flake8 and bandit (see ../README.md)."""
