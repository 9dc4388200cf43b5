"""Tiny package used to produce real coverage.py and ruff reports."""
