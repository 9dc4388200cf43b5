"""Where agentgate keeps what it remembers: the storage behind the attempts ledger and the history.

:class:`Storage` is the small interface the ledger needs; :class:`LocalStorage` keeps it in the
project's ``.agentgate/`` folder (git-ignored), which is what every door uses today. The GitHub
Action will keep a pull request's attempts in its comment, behind the same interface.

Files under ``.agentgate/``: ``state.json`` (counters, replaced atomically), ``history.jsonl``
(one line per verdict, appended), ``escalations/<task>.md`` and ``ledger.lock``. Every
read-modify-write holds an OS lock on ``ledger.lock``, so concurrent verifies of one project
neither lose nor duplicate an attempt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

STATE_DIR = ".agentgate"
STATE_FILE = "state.json"
HISTORY_FILE = "history.jsonl"
LOCK_FILE = "ledger.lock"
ESCALATIONS_DIR = "escalations"
STATE_SCHEMA = "agentgate.state/1"


def warn(message: str) -> None:
    """State trouble is reported, never raised: a verdict must not die on its bookkeeping."""
    print(f"agentgate: warning: {message}", file=sys.stderr)


class Storage(Protocol):
    """What the ledger needs from a place to keep state."""

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Hold the state exclusively for one read-modify-write."""
        ...

    def read_state(self) -> dict[str, Any]:
        """The state document (``agentgate.state/1``), or an empty one."""
        ...

    def write_state(self, state: Mapping[str, Any]) -> None: ...

    def append_history(self, record: Mapping[str, Any]) -> None: ...

    def read_history(self) -> list[dict[str, Any]]: ...

    def escalation_location(self, task_id: str) -> str:
        """Where the escalation report of ``task_id`` is kept, as a person would look for it."""
        ...

    def write_escalation(self, task_id: str, report: str) -> None: ...


class LocalStorage:
    """State in the project's ``.agentgate/`` folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.directory = root / STATE_DIR

    def ensure(self) -> Path:
        """The folder, made on first use, with a .gitignore so nothing in it is ever committed."""
        return ensure_state_dir(self.root)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with locked(self.ensure()):
            yield

    def has_state(self) -> bool:
        return (self.directory / STATE_FILE).exists()

    def read_state(self) -> dict[str, Any]:
        if not self.has_state():
            return empty_state()
        return read_state(self.directory)

    def write_state(self, state: Mapping[str, Any]) -> None:
        write_state(self.ensure(), state)

    def append_history(self, record: Mapping[str, Any]) -> None:
        append_line(self.ensure() / HISTORY_FILE, record)

    def read_history(self) -> list[dict[str, Any]]:
        return read_history_file(self.directory / HISTORY_FILE)

    def escalation_location(self, task_id: str) -> str:
        return f"{STATE_DIR}/{ESCALATIONS_DIR}/{report_name(task_id)}"

    def write_escalation(self, task_id: str, report: str) -> None:
        folder = self.ensure() / ESCALATIONS_DIR
        folder.mkdir(exist_ok=True)
        write_atomic(folder / report_name(task_id), report)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        """Lock, read the state, let the caller change it, write it back atomically."""
        with self.locked():
            state = self.read_state()
            yield state
            self.write_state(state)


def ensure_state_dir(root: Path) -> Path:
    """``.agentgate/`` in the project, with a .gitignore so nothing in it is ever committed."""
    state = root / STATE_DIR
    state.mkdir(exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Written by agentgate: its reports and state are never committed.\n*\n")
    return state


def report_name(task_id: str) -> str:
    """A safe file name for a task id; ids that had to be altered get a hash to stay unique."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id).strip("._")[:80]
    if safe != task_id:
        digest = hashlib.sha1(task_id.encode("utf-8")).hexdigest()[:8]
        safe = f"{safe}-{digest}" if safe else digest
    return f"{safe}.md"


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """An exclusive OS lock on ``directory/ledger.lock`` for one read-modify-write."""
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _lock(fd)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for ~10 s, then raises
                return
            except OSError:
                continue

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def write_atomic(path: Path, text: str) -> None:
    """Write a temp file next to ``path`` and rename it over: a reader sees old or new, whole."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; these files are for the team to read
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def append_line(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line with a single ``write()`` on an O_APPEND descriptor.

    Called under the lock. A line torn by a killed process is ended first, so the new line
    never glues onto it.
    """
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = "\n" + line
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def empty_state() -> dict[str, Any]:
    return {"schema": STATE_SCHEMA, "tasks": {}}


def read_state(directory: Path) -> dict[str, Any]:
    """The state, or an empty one; a corrupt file is set aside and reported, never raised."""
    path = directory / STATE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return empty_state()
    try:
        data = json.loads(text)
        problem = _state_problem(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problem = f"invalid JSON ({exc})"
    if problem is None:
        return data  # type: ignore[no-any-return]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = directory / f"{STATE_FILE}.corrupt-{stamp}"
    counter = 1
    while aside.exists():
        counter += 1
        aside = directory / f"{STATE_FILE}.corrupt-{stamp}-{counter}"
    os.replace(path, aside)
    warn(
        f"{path} is corrupt: {problem}; set aside as {aside.name}, "
        "starting with no recorded attempts"
    )
    return empty_state()


def _state_problem(data: Any) -> str | None:
    if not isinstance(data, dict) or data.get("schema") != STATE_SCHEMA:
        return f"not an {STATE_SCHEMA} document"
    tasks = data.get("tasks")
    if not isinstance(tasks, dict):
        return "'tasks' is not a mapping"
    for name, entry in tasks.items():
        if not (
            isinstance(entry, dict)
            and _is_count(entry.get("total"))
            and _is_count(entry.get("verifies"))
            and isinstance(entry.get("sources"), dict)
            and all(_is_count(v) for v in entry["sources"].values())
            and isinstance(entry.get("attempts"), list)
            and all(isinstance(a, dict) for a in entry["attempts"])
            and isinstance(entry.get("blockers"), list)
            and all(isinstance(b, dict) for b in entry["blockers"])
        ):
            return f"task {name!r} is malformed"
    return None


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def write_state(directory: Path, state: Mapping[str, Any]) -> None:
    write_atomic(directory / STATE_FILE, json.dumps(state, indent=1, ensure_ascii=False) + "\n")


def read_history_file(path: Path) -> list[dict[str, Any]]:
    """Every readable history line. A torn or corrupt line is skipped with a warning."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    records = []
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            record = None
        if isinstance(record, dict) and isinstance(record.get("ts"), (int, float)):
            records.append(record)
            continue
        where = "its last line is torn" if index == last else f"line {index + 1} is unreadable"
        warn(f"{path}: {where} (an interrupted write?); skipped it")
    return records
