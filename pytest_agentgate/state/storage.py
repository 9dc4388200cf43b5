"""Where agentgate keeps what it remembers: the storage behind the attempts ledger and the history.

:class:`Storage` is the small interface the ledger needs; :class:`LocalStorage` keeps it in the
project's ``.agentgate/`` folder (git-ignored). The doors use :func:`default_storage`, a
:class:`MirroredStorage`: the project's folder, with every task's entry also kept in the user's
state directory (:func:`user_state_home`), so that attempts survive the agent: deleting
``.agentgate/`` restores them from the copy, with a notice, and ``agentgate reset`` leaves a
record there that the task's next verdict states. The GitHub Action will keep a pull request's
attempts in its comment, behind the same interface.

Files under ``.agentgate/``: ``state.json`` (counters, replaced atomically), ``history.jsonl``
(one line per verdict, appended), ``escalations/<task>.md`` and ``ledger.lock``. Every
read-modify-write holds an OS lock on ``ledger.lock``, so concurrent verifies of one project
neither lose nor duplicate an attempt. The copy is ``<state home>/projects/<hash of the
project's absolute path>/state.json``, under a ``ledger.lock`` of its own, taken after the
project's.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import getpass
import hashlib
import json
import math
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

STATE_DIR = ".agentgate"
STATE_FILE = "state.json"
HISTORY_FILE = "history.jsonl"
LOCK_FILE = "ledger.lock"
ESCALATIONS_DIR = "escalations"
STATE_SCHEMA = "agentgate.state/1"
# The user's state directory: overrides the platform's default (tests point it at a tmp folder).
STATE_HOME_ENV = "AGENTGATE_STATE_HOME"
# Who ran `agentgate reset`, besides the OS user: a harness or a person may name themselves.
ACTOR_ENV = "AGENTGATE_ACTOR"
MIRROR_PROJECTS = "projects"
KEPT_RESETS = 100
# How long a read-modify-write of the ledger waits for its lock. A verdict holds it for the
# moment it takes to count an attempt and append a line; a holder past this is not a verdict
# being recorded, and waiting on it would spend a stop hook's whole budget.
LEDGER_LOCK_WAIT_S = 5.0


class LockBusy(TimeoutError):
    """The ledger's lock was held by another process for :data:`LEDGER_LOCK_WAIT_S`."""


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

    def take_notices(self, task_id: str) -> list[str]:
        """What the task's next verdict must say about its state (a restore, a reset); said once.
        Called under the lock, between ``read_state`` and ``write_state``."""
        ...

    def note_reset(self, task_ids: list[str], now: float) -> None:
        """Record that a person cleared these tasks (agentgate reset); before ``write_state``."""
        ...


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
        directory = self.ensure()
        with locked(directory, wait_s=LEDGER_LOCK_WAIT_S):
            remove_stale_temporaries(directory)
            yield

    def has_state(self) -> bool:
        return not self.directory.is_symlink() and (self.directory / STATE_FILE).exists()

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

    def history_tail(self, size: int) -> str:
        return history_tail(self.directory / HISTORY_FILE, size)

    def escalation_location(self, task_id: str) -> str:
        return f"{STATE_DIR}/{ESCALATIONS_DIR}/{report_name(task_id)}"

    def write_escalation(self, task_id: str, report: str) -> None:
        folder = self.ensure() / ESCALATIONS_DIR
        folder.mkdir(exist_ok=True)
        write_atomic(folder / report_name(task_id), report)

    def take_notices(self, task_id: str) -> list[str]:
        return []

    def note_reset(self, task_ids: list[str], now: float) -> None:
        pass

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        """Lock, read the state, let the caller change it, write it back atomically."""
        with self.locked():
            state = self.read_state()
            yield state
            self.write_state(state)


# -- the copy outside the project -------------------------------------------------------------


def user_state_home() -> Path:
    """agentgate's folder in the user's state directory: ``$AGENTGATE_STATE_HOME``, else
    ``$XDG_STATE_HOME/agentgate`` or ``~/.local/state/agentgate``; macOS
    ``~/Library/Application Support/agentgate``; Windows ``%LOCALAPPDATA%\\agentgate``."""
    override = os.environ.get(STATE_HOME_ENV)
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        local = os.environ.get("LOCALAPPDATA")
        return (Path(local) if local else Path.home() / "AppData" / "Local") / "agentgate"
    if sys.platform == "darwin":  # pragma: no cover - exercised on macOS only
        return Path.home() / "Library" / "Application Support" / "agentgate"
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "agentgate"


class UserMirror:
    """A project's copy of its tasks in the user's state directory, keyed by the project's path.

    The document is an ``agentgate.state/1`` with three more keys: ``root`` (the project),
    ``pending`` (per task, what its next verdict must say) and ``resets`` (who cleared which
    task, when).
    """

    def __init__(self, root: Path, home: Path) -> None:
        self.root = str(root.resolve())
        key = hashlib.sha256(self.root.encode("utf-8")).hexdigest()[:20]
        self.directory = home / MIRROR_PROJECTS / key

    @property
    def path(self) -> Path:
        return self.directory / STATE_FILE

    def ensure(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self.directory

    def locked(self) -> contextlib.AbstractContextManager[None]:
        return locked(self.ensure(), wait_s=LEDGER_LOCK_WAIT_S)

    def read(self) -> dict[str, Any]:
        """The document; an empty one for a new project. Raises OSError when unreadable."""
        doc = read_state(self.directory) if self.path.exists() else empty_state()
        root = doc.setdefault("root", self.root)
        if root != self.root:
            raise OSError(f"{self.path} belongs to {root}, not to {self.root}")
        pending = doc.get("pending")
        if not isinstance(pending, dict) or not all(
            isinstance(v, list) and all(isinstance(n, str) for n in v) for v in pending.values()
        ):
            doc["pending"] = {}
        resets = doc.get("resets")
        if not isinstance(resets, list) or not all(isinstance(r, dict) for r in resets):
            doc["resets"] = []
        return doc

    def write(self, doc: Mapping[str, Any]) -> None:
        write_state(self.ensure(), doc)


class MirroredStorage:
    """The project's ``.agentgate/`` (:class:`LocalStorage`), with every task's entry also kept
    in a :class:`UserMirror`.

    - Reading the state, a task the project lacks (``.agentgate/`` deleted) or shows with fewer
      rejections than the copy is restored from the copy, and the task's next verdict says so.
    - Writing it, the copy follows: a task the ledger closed or a person reset is dropped, every
      other task's entry replaced.
    - :meth:`note_reset` records who reset which task, and the task's next verdict says so.
    - The copy failing (a read-only home) is a warning, never an error: the project's state is
      kept as before.
    - The project's folder failing (``chmod -w .agentgate``, a read-only checkout, a full disk,
      its lock held by another process past the wait) makes the copy the record: its lock, its
      state, its history and the escalation report; the task's verdict says so
      (:attr:`trouble`). Only when neither can be written does the
      ledger call the attempt unrecorded (and a failing task escalates): a folder made
      unwritable by the agent let it stop at its first try.
    """

    def __init__(self, local: LocalStorage, mirror: UserMirror | None) -> None:
        self.local = local
        self.mirror = mirror
        self.root = local.root
        self.directory = local.directory
        self._doc: dict[str, Any] | None = None  # the copy, read under the lock
        self._stack: contextlib.ExitStack | None = None  # the lock held, while it is
        self._opened = False
        self._seen: set[str] = set()  # the tasks of the state last read
        self._warned = False
        # Why the project's folder cannot be written, while the copy alone keeps the record.
        self.trouble: OSError | None = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            self._doc, self._stack, self._opened, self.trouble = None, stack, False, None
            try:
                try:
                    stack.enter_context(self.local.locked())
                    if (error := unwritable(self.local.directory)) is not None:
                        raise error
                except OSError as exc:
                    # A lock held past the wait counts the same way (red team 38: a `flock` on
                    # `.agentgate/ledger.lock` kept every block unrecorded, so the task never
                    # escalated, and the harness's own cap let the agent go).
                    self._alone(exc)
                yield
            finally:
                self._doc, self._stack = None, None

    def _alone(self, exc: OSError) -> None:
        """The project's folder cannot be written: the copy becomes the record, under its lock.
        Raises ``exc`` when the copy cannot be had either."""
        if self._copy() is None:
            raise exc
        self.trouble = exc

    def _copy(self) -> dict[str, Any] | None:
        """The copy, locked (after the project's lock) and read when first needed: a verdict
        that counts no task never touches the user's state directory."""
        if not self._opened and self._stack is not None and self.mirror is not None:
            self._opened = True
            try:
                self._stack.enter_context(self.mirror.locked())
                self._doc = self.mirror.read()
            except OSError as exc:
                self._trouble(exc)
        return self._doc

    def has_state(self) -> bool:
        if self.local.has_state():
            return True
        if self.mirror is None:
            return False
        try:
            return bool(self.mirror.path.exists() and self.mirror.read()["tasks"])
        except OSError:
            return False

    def read_state(self) -> dict[str, Any]:
        try:
            state = self.local.read_state()
        except OSError:
            if self.trouble is None:
                raise
            state = empty_state()  # unreadable too: the copy alone says
        doc = self._copy()
        if doc is not None and self.mirror is not None:
            tasks: dict[str, Any] = state["tasks"]
            for task_id, entry in doc["tasks"].items():
                mine = tasks.get(task_id)
                if mine is not None and mine["total"] >= entry["total"]:
                    continue
                tasks[task_id] = copy.deepcopy(entry)
                if self.trouble is not None:
                    continue  # the copy is the record: nothing was restored
                count = _rejections(entry["total"])
                if mine is None:
                    text = (
                        f"the project's attempt state was missing; restored task {task_id}'s "
                        f"{count} from {self.mirror.path}"
                    )
                else:
                    text = (
                        f"the project's attempt state showed task {task_id} with "
                        f"{_rejections(mine['total'])}, fewer than agentgate's copy; restored "
                        f"its {count} from {self.mirror.path}"
                    )
                doc["pending"].setdefault(task_id, []).append(text)
        self._seen = set(state["tasks"])
        return state

    def write_state(self, state: Mapping[str, Any]) -> None:
        if self.trouble is None:
            try:
                self.local.write_state(state)
            except OSError as exc:
                self._alone(exc)
        doc = self._doc
        if doc is None or self.mirror is None:
            return
        tasks: Mapping[str, Any] = state["tasks"]
        for task_id in self._seen - set(tasks):
            doc["tasks"].pop(task_id, None)
        doc["tasks"].update(copy.deepcopy(dict(tasks)))
        self._seen = set(tasks)
        try:
            self.mirror.write(doc)
        except OSError as exc:
            if self.trouble is not None:
                raise self._neither(exc) from exc
            self._trouble(exc)

    def _neither(self, exc: OSError) -> OSError:
        """Neither the project's folder nor the copy could be written: both reasons."""
        assert self.trouble is not None and self.mirror is not None
        mine = self.trouble.strerror or str(self.trouble)
        return OSError(
            exc.errno,
            f"{mine}; nor agentgate's copy in {self.mirror.directory}: {exc.strerror or exc}",
        )

    def take_notices(self, task_id: str) -> list[str]:
        if self._doc is None:
            return []
        notices: list[str] = self._doc["pending"].pop(task_id, [])
        if self.trouble is not None and self.mirror is not None:
            why = self.trouble.strerror or str(self.trouble)
            notices.insert(
                0,
                f"the project's {STATE_DIR}/ cannot be written ({why}): the attempts are counted "
                f"in agentgate's copy alone ({self.mirror.path}); the gates write their reports "
                f"in {STATE_DIR}/ too: make it writable",
            )
        return notices

    def note_reset(self, task_ids: list[str], now: float) -> None:
        if self._doc is None:
            warn(
                "the reset is recorded in the project only: agentgate's copy outside it "
                "could not be written"
            )
            return
        user, actor = reset_actor()
        who = f"{user} (AGENTGATE_ACTOR={actor})" if actor else user
        when = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        for task_id in task_ids:
            self._doc["resets"].append({"task": task_id, "user": user, "actor": actor, "time": now})
            self._doc["pending"][task_id] = [
                f"attempts were reset by {who} at {when} (agentgate reset)"
            ]
        self._doc["resets"] = self._doc["resets"][-KEPT_RESETS:]

    def append_history(self, record: Mapping[str, Any]) -> None:
        if self.trouble is None:
            try:
                self.local.append_history(record)
                return
            except OSError as exc:
                self._alone(exc)
        assert self.mirror is not None  # _alone raised without one
        append_line(self.mirror.ensure() / HISTORY_FILE, record)

    def read_history(self) -> list[dict[str, Any]]:
        return self.local.read_history()

    def history_tail(self, size: int) -> str:
        if self.trouble is not None and self.mirror is not None:
            return history_tail(self.mirror.directory / HISTORY_FILE, size)
        return self.local.history_tail(size)

    def escalation_location(self, task_id: str) -> str:
        """The project's ``.agentgate/escalations/``; the copy's folder (an absolute path) when
        the project's cannot be written (checked here too: a door asks before it records)."""
        if self.mirror is not None and (
            self.trouble is not None or unwritable(self.local.directory) is not None
        ):
            return str(self.mirror.directory / ESCALATIONS_DIR / report_name(task_id))
        return self.local.escalation_location(task_id)

    def write_escalation(self, task_id: str, report: str) -> None:
        if self.trouble is None:
            try:
                self.local.write_escalation(task_id, report)
                return
            except OSError as exc:
                self._alone(exc)
        assert self.mirror is not None  # _alone raised without one
        folder = self.mirror.ensure() / ESCALATIONS_DIR
        folder.mkdir(exist_ok=True, mode=0o700)
        write_atomic(folder / report_name(task_id), report, mode=0o600)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        """Lock, read the state, let the caller change it, write it back."""
        with self.locked():
            state = self.read_state()
            yield state
            self.write_state(state)

    def _trouble(self, exc: OSError) -> None:
        self._doc = None
        if not self._warned:
            self._warned = True
            where = self.mirror.directory if self.mirror is not None else "the user's state"
            warn(
                f"could not keep the attempts outside the project in {where}: {exc}; "
                f"only the project's {STATE_DIR}/ holds them (set {STATE_HOME_ENV} to a "
                "writable folder)"
            )


def _rejections(count: int) -> str:
    return f"{count} rejection{'' if count == 1 else 's'}"


def reset_actor() -> tuple[str, str | None]:
    """Who is resetting: the OS user, and ``$AGENTGATE_ACTOR`` when set."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError, ImportError):  # no user name for this uid
        user = f"uid {os.getuid()}" if hasattr(os, "getuid") else "an unknown user"
    return user, os.environ.get(ACTOR_ENV) or None


def default_storage(root: Path) -> MirroredStorage:
    """The storage every door records through: the project's ``.agentgate/``, mirrored."""
    try:
        mirror: UserMirror | None = UserMirror(root, user_state_home())
    except (OSError, RuntimeError) as exc:  # no home directory to find
        warn(f"could not find the user's state directory ({exc}); set {STATE_HOME_ENV}")
        mirror = None
    return MirroredStorage(LocalStorage(root), mirror)


def ensure_state_dir(root: Path) -> Path:
    """``.agentgate/`` in the project, with a .gitignore so nothing in it is ever committed."""
    state = root / STATE_DIR
    if state.is_symlink() or (os.path.lexists(state) and not state.is_dir()):
        # A link would put agentgate's state (and its reports) wherever the link points, a place
        # the change chose: it is not followed. It (or a file in the folder's place) is set
        # aside, and the attempts go on counting from agentgate's copy outside the project:
        # failing closed let the agent stop at its first try (red team 30).
        what = "a symbolic link" if state.is_symlink() else "not a folder"
        aside = set_aside(state)
        warn(
            f"{state} was {what}; set aside as {aside.name}: agentgate keeps its state in a "
            "real folder, and counts the attempts on from its copy outside the project"
        )
    state.mkdir(exist_ok=True)
    ignore = state / ".gitignore"
    made_regular(ignore)  # a link is never written through
    if not ignore.exists():
        ignore.write_text("# Written by agentgate: its reports and state are never committed.\n*\n")
    return state


class Anchors:
    """What the project's ``.agentgate/`` keeps of a record held in the user's state directory
    (a task's snapshot, its pinned base): one file of task key to value. Deleting the record
    in one place leaves the other: the gate then fails closed and says so, where deleting a
    lone copy would have made a fresh one, silently. Best effort both ways: a project that
    cannot be written keeps no anchor, and ``.agentgate`` as a link is never followed."""

    def __init__(self, root: Path, name: str) -> None:
        self.root = root
        self.path = root / STATE_DIR / name

    def read(self) -> dict[str, str]:
        if (self.root / STATE_DIR).is_symlink():
            return {}  # not followed (ensure_state_dir): the verdict fails closed anyway
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def get(self, key: str) -> str | None:
        return self.read().get(key)

    def put(self, key: str, value: str) -> None:
        anchors = self.read()
        anchors[key] = value
        with contextlib.suppress(OSError):
            ensure_state_dir(self.root)  # never through a link: the state fails closed there
            write_atomic(self.path, json.dumps(anchors, sort_keys=True), mode=0o600)

    def drop(self, key: str) -> bool:
        """Forget ``key`` (a person's reset); whether it was there."""
        anchors = self.read()
        if anchors.pop(key, None) is None:
            return False
        with contextlib.suppress(OSError):
            if not (self.root / STATE_DIR).is_symlink():
                write_atomic(self.path, json.dumps(anchors, sort_keys=True), mode=0o600)
        return True


def remove_stale_temporaries(directory: Path) -> None:
    """Remove what an interrupted atomic write left (``.NAME.XXXX.tmp``). Called under the
    lock, which every writer of these files holds: any such file is a dead writer's."""
    for folder in (directory, directory / ESCALATIONS_DIR):
        with contextlib.suppress(OSError):
            for path in folder.glob(".*.tmp"):
                with contextlib.suppress(OSError):
                    path.unlink()


def unwritable(directory: Path) -> OSError | None:
    """The error a write in ``directory`` would meet (or, while it is missing, making it in its
    parent), as the system answers for this process: root writes anywhere, a read-only mount
    stops everyone. None when it can be written."""
    where = directory if os.path.lexists(directory) else directory.parent
    if not os.path.isdir(where):
        return NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(where))
    if os.access(where, os.W_OK):
        return None
    code = errno.EACCES
    with contextlib.suppress(OSError, AttributeError):
        if os.statvfs(where).f_flag & os.ST_RDONLY:
            code = errno.EROFS
    return OSError(code, os.strerror(code), str(where))


def history_tail(path: Path, size: int) -> str:
    """The last ``size`` bytes of the history at ``path`` (decoded leniently); empty when there
    is none, or when something else is in its place (set aside when the next line is appended)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return ""
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def report_name(task_id: str) -> str:
    """A safe file name for a task id; ids that had to be altered get a hash to stay unique."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id).strip("._")[:80]
    if safe != task_id:
        digest = hashlib.sha1(task_id.encode("utf-8")).hexdigest()[:8]
        safe = f"{safe}-{digest}" if safe else digest
    return f"{safe}.md"


@contextlib.contextmanager
def locked(
    directory: Path,
    wait_s: float | None = None,
    wait_for: Callable[[str | None], bool] | None = None,
) -> Iterator[None]:
    """An exclusive OS lock on ``directory/ledger.lock`` for one read-modify-write.

    ``wait_s``: how long to wait for it (None: as long as it takes); past that, LockBusy,
    which names the process that holds the lock when the system says. ``wait_for``: past
    ``wait_s``, whether to go on waiting for that holder (its :func:`lock_holder` text)."""
    path = directory / LOCK_FILE
    made_regular(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        if wait_s is None:
            _lock(fd)
        else:
            _lock_within(fd, path, wait_s, wait_for)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _lock_within(
    fd: int, path: Path, wait_s: float, wait_for: Callable[[str | None], bool] | None = None
) -> None:
    end = time.monotonic() + wait_s
    while not _try_lock(fd):
        if time.monotonic() >= end:
            holder = lock_holder(fd)
            if wait_for is not None and wait_for(holder):
                end = time.monotonic() + 1.0  # asked again in a second: it may have gone
                continue
            by = f" by {holder}" if holder else " by another process"
            raise LockBusy(
                errno.EAGAIN, f"{path} is held{by}, and was not released within {wait_s:g} s"
            )
        time.sleep(0.05)


def lock_holder(fd: int) -> str | None:
    """Who holds the lock on ``fd``'s file: "process PID (COMMAND)", from Linux's /proc/locks;
    None where the system does not say."""
    try:
        ino = os.fstat(fd).st_ino
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF" ("->" marks a waiter)
        if len(fields) < 6 or "->" in fields[1]:
            continue
        pid, where = fields[4], fields[5]
        if where.rsplit(":", 1)[-1] == str(ino) and pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    argv = handle.read().split(b"\0")
                command = " ".join(a.decode(errors="replace") for a in argv if a)[:200]
            except OSError:
                command = ""
            return f"process {pid} ({command})" if command else f"process {pid}"
    return None


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for ~10 s, then raises
                return
            except OSError:
                continue

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    """Write a temp file next to ``path`` and rename it over: a reader sees old or new, whole.
    ``mode``: the team's files are for everyone to read; the user's private ones are not."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # A file name git gave that is not UTF-8 holds lone surrogates: written as the escape
        # JSON reads back (red team 16: `invoice/r\xe9sum\xe9.py` crashed every door).
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)  # mkstemp makes it private
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
    line = json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n"
    made_regular(path)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
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
        kind = os.lstat(path).st_mode
    except FileNotFoundError:
        return empty_state()
    # A folder, a link or a pipe in its place (red team 16: `mkdir .agentgate/state.json` made
    # every verdict unrecordable, which escalates) is set aside as a corrupt file is, and the
    # task's count restored from agentgate's copy outside the project.
    regular = stat.S_ISREG(kind)
    try:
        raw = path.read_bytes() if regular else b"null"
        data = json.loads(raw.decode("utf-8"))
        problem = _state_problem(data) if regular else "not a regular file"
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problem = f"invalid JSON ({exc})"
    except RecursionError:
        problem = "nested too deep to be agentgate's"
    if problem is None:
        return data  # type: ignore[no-any-return]
    aside = set_aside(path)
    warn(
        f"{path} is corrupt: {problem}; set aside as {aside.name}, "
        "starting with no recorded attempts"
    )
    return empty_state()


def made_regular(path: Path) -> None:
    """Set aside whatever is at ``path`` that is no regular file (a folder, a link, a pipe),
    so that agentgate writes a file of its own there: something else in the place of one of
    its files made every verdict unrecordable, and a failing one escalated at the first stop
    (red team 30: `history.jsonl`; red team 31: `ledger.lock`, `.gitignore`)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        aside = set_aside(path)
        warn(f"{path} was not a regular file; set aside as {aside.name}")


def set_aside(path: Path) -> Path:
    """Move ``path`` (a file, a folder, a link: nothing followed) to ``NAME.corrupt-STAMP``
    beside it, and say where: nothing of the user's is lost, and agentgate writes a new one."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    counter = 1
    while os.path.lexists(aside):
        counter += 1
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{counter}")
    os.replace(path, aside)
    return aside


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
    """Every readable history line. A torn or corrupt line is skipped with a warning; a folder,
    a link or a pipe in the file's place holds none (and is never waited on)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return []
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
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            record = None
        if _history_record_ok(record):
            records.append(record)
            continue
        where = "its last line is torn" if index == last else f"line {index + 1} is unreadable"
        warn(f"{path}: {where} (an interrupted write?); skipped it")
    return records


def _history_record_ok(record: Any) -> bool:
    """A history line of the shape agentgate writes: what the dashboard reads has its type."""
    if not isinstance(record, dict):
        return False
    ts = record.get("ts")
    if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not math.isfinite(ts):
        return False
    for key, kinds in (("status", str), ("task", str), ("source", str), ("profile", str)):
        if record.get(key) is not None and not isinstance(record[key], kinds):
            return False
    for key in ("wall_s",):
        value = record.get(key)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            return False
    gates = record.get("gates", [])
    if not isinstance(gates, list) or not all(
        isinstance(g, dict) and isinstance(g.get("name"), str) for g in gates
    ):
        return False
    attempt = record.get("attempt")
    return attempt is None or isinstance(attempt, dict)
