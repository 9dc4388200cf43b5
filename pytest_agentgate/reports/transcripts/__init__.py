"""Harness transcripts (JSON Lines), read as a stream: one module per harness's format.

``read.py`` finds the format and streams the lines; ``model.py`` holds what a transcript tells
the gate (:class:`~pytest_agentgate.reports.transcripts.model.Session`).
"""
