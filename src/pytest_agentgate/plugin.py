"""The pytest plugin (entry point ``pytest11``). Without ``--agentgate`` it does nothing."""

from __future__ import annotations
