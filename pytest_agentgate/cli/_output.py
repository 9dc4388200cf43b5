"""Writing what a subcommand made: to ``--output FILE``, and nowhere after a broken pipe."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from pytest_agentgate.errors import OutputError


def refuse_folder(output: str | None, what: str) -> None:
    """``--output`` naming a folder is refused before any work is done (or attempt counted)."""
    if output and Path(output).is_dir():
        raise OutputError(output, "is a folder", f"name the file to write {what} to")


def write_output(path: Path, text: str, what: str) -> None:
    """Write ``text`` (``what`` it is, for the message) to ``path``, or raise an OutputError
    that names the file, what went wrong and what to do."""
    from pytest_agentgate.state.storage import write_atomic

    try:
        if _not_a_file(path):
            # `/dev/null`, `/dev/stdout`, a FIFO a pipeline reads: written to, never replaced
            # (an atomic write renames a new file over it: as root, `--output /dev/null`
            # turned the machine's /dev/null into a regular file).
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            try:
                os.set_blocking(fd, True)
                with os.fdopen(fd, "w", encoding="utf-8", closefd=False) as handle:
                    handle.write(text + "\n")
            finally:
                os.close(fd)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        # Atomic: a full disk or a kill leaves the old file (or none), never a truncated one.
        write_atomic(path, text + "\n")
    except OSError as exc:
        blocker = _file_in_the_way(path)
        if blocker is not None:
            problem, hint = f"{blocker} is a file, not a folder", "choose another path"
        else:
            problem, hint = exc.strerror or str(exc), "choose a path you can write"
        raise OutputError(str(path), f"cannot write {what}: {problem}", hint) from None


def _not_a_file(path: Path) -> bool:
    """Whether ``path`` exists and is something other than a regular file or a folder."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _file_in_the_way(path: Path) -> Path | None:
    """The nearest existing parent of ``path``, when it is a file rather than a folder."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def silence_stdout() -> None:
    """After a broken pipe, send what is still buffered nowhere, so exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
