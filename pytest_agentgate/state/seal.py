"""Records agentgate keeps in the user's state directory, sealed: one edited by hand is known.

The verdict cache's entries, a task's pinned base, its test environment and where a harness
session started decide what a stop is judged against. They live outside the project, so that
deleting or writing ``.agentgate/`` moves none of them; but they are plain files of the user's,
and an agent can write them too (red team 10 set a cached gate's status to "pass"; red team 16
pointed a task's pin at a commit of its own, re-pinned its test environment after installing a
plugin, and pointed its session at a scratch copy of the project). Each is sealed: an HMAC of
its content with a secret made once in that directory, readable by the user alone. A record
whose seal does not match was changed after agentgate wrote it, and is not trusted. Whoever
reads the secret and agentgate's code can still make one, as they can change anything the
user can: the seal makes the cheap way (editing a JSON file) fail, and the GitHub Action, on a
runner of its own, is where nothing of the agent's is trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_agentgate.state.storage import user_state_home

# Where the secret is kept: a folder of its own, so that clearing the verdict cache (its first
# home) does not make every task's records untrusted (a review on real projects).
KEY_FOLDER = "seal"
KEY_FILE = "key"
FIELD = "seal"


def key_path() -> Path:
    return user_state_home() / KEY_FOLDER / KEY_FILE


def key() -> bytes | None:
    """The user's secret (created once, readable by the user alone); None when it can be
    neither read nor made, or is damaged (then nothing is trusted that needs it). It appears
    whole or not at all (written aside, then linked in place): a run that reads it while
    another makes it never reads half of it."""
    path = key_path()
    for attempt in range(5):
        try:
            found = path.read_bytes()
        except FileNotFoundError:
            found = None
        except OSError:
            return None
        if found is not None and len(found) == 32:
            return found
        if found is not None:  # being written in place, or damaged: looked at again
            time.sleep(0.05 * (attempt + 1))
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, made = tempfile.mkstemp(dir=path.parent, prefix=".key-")
        except OSError:
            return None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
            try:
                os.link(made, path)
            except FileExistsError:
                pass  # another run made it first: read theirs
            except OSError:  # no hard links (FAT, a shared folder): made in place instead
                _made_in_place(path)
        except OSError:
            return None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(made)
    return None


def _made_in_place(path: Path) -> None:
    """The secret written straight into ``path`` where the file system has no hard links
    (a run that reads it while it is written reads it again)."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))


def seal_of(secret: bytes, document: Mapping[str, Any]) -> str:
    text = json.dumps({k: v for k, v in document.items() if k != FIELD}, sort_keys=True)
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()


def sealed(document: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` with its seal (unsealed when there is no secret: then it is never
    trusted when read back, which costs a record, never a wrong one)."""
    secret = key()
    out = dict(document)
    if secret is not None:
        out[FIELD] = seal_of(secret, document)
    return out


def intact(document: Mapping[str, Any]) -> bool:
    """Whether ``document`` is as agentgate wrote it."""
    secret = key()
    found = document.get(FIELD)
    return (
        secret is not None
        and isinstance(found, str)
        and hmac.compare_digest(found, seal_of(secret, document))
    )
