"""How many tests a pytest collection selects: the integrity gate's count at the base.

agentgate collects the base commit's suite (``--collect-only``, in a checkout of its own, see
:mod:`pytest_agentgate.integrity.base_count`) with ``-p pytest_agentgate.pytest_plugin.count``
and ``AGENTGATE_COUNT_FILE`` naming a file. At the end of the session this plugin writes there,
as JSON: ``selected`` (the items left to run once collection is finished: what pytest would
run), ``deselected`` (``-k``, ``-m``, ``--deselect`` and the project's own deselection),
``errors`` (collectors that failed: a file that does not import) and ``status`` (pytest's exit
status). Counting from pytest's hooks, not from its printed output, keeps the figure exact
whatever the verbosity or the plugins that print. It imports nothing but pytest and
:mod:`pytest_agentgate.commands`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import pytest

from pytest_agentgate.commands import COUNT_FILE_ENV

_selected: int | None = None
_deselected = 0
_errors = 0


def pytest_sessionstart(session: pytest.Session) -> None:
    global _selected, _deselected, _errors
    _selected, _deselected, _errors = None, 0, 0


def pytest_collectreport(report: pytest.CollectReport) -> None:
    global _errors
    if report.failed:
        _errors += 1


def pytest_deselected(items: Sequence[pytest.Item]) -> None:
    global _deselected
    _deselected += len(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    global _selected
    _selected = len(session.items)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get(COUNT_FILE_ENV)
    if not path:
        return
    document = {
        "selected": _selected,
        "deselected": _deselected,
        "errors": _errors,
        "status": int(exitstatus),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
