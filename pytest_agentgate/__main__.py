"""``python -m pytest_agentgate``: the ``agentgate`` command.

``python -m`` puts the current directory first on ``sys.path``. agentgate is usually run from the
project it gates, whose files must not be imported into the gate: a ``yaml.py`` there, or a
``*.dist-info`` folder registering an ``agentgate`` plugin. That entry is dropped before
anything else is imported (this package was found already; the rest of it comes from its own
folder). The gate's commands still run in the project with the caller's environment.
"""

from __future__ import annotations

import os
import sys


def _drop_current_directory() -> None:
    """Drop the entry ``python -m`` put first. A later entry for the same folder stays: the
    caller's ``PYTHONPATH``, or an editable install of a project whose modules sit at its root
    (the registry still ignores a ``*.dist-info`` folder found there)."""
    if getattr(sys.flags, "safe_path", False) or not sys.path:  # python -P: nothing was put
        return
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the directory was removed: nothing of it can be imported either
        return
    if not sys.path[0] or os.path.realpath(sys.path[0]) == cwd:
        del sys.path[0]


_drop_current_directory()

from pytest_agentgate.cli.main import main  # noqa: E402

sys.exit(main())
