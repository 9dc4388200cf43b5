"""The seal of agentgate's records in the user's state directory (``state/seal.py``)."""

from __future__ import annotations

import threading

import pytest

from pytest_agentgate.state import seal


def test_a_record_is_intact_until_it_is_changed(fresh_state_home: object) -> None:
    record = seal.sealed({"sha": "a" * 40, "at": 1.0})
    assert seal.intact(record)
    assert not seal.intact({**record, "sha": "b" * 40})
    assert not seal.intact({"sha": "a" * 40, "at": 1.0})  # never sealed


def test_runs_that_make_the_secret_at_once_all_get_it_whole(fresh_state_home: object) -> None:
    # A review on real projects: a run reading the secret while another wrote it got none.
    for _ in range(20):
        seal.key_path().unlink(missing_ok=True)
        keys: list[bytes | None] = []
        start = threading.Barrier(8)
        threads = [threading.Thread(target=_make, args=(start, keys)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(set(keys)) == 1 and keys[0] is not None and len(keys[0]) == 32


def _make(start: threading.Barrier, keys: list[bytes | None]) -> None:
    start.wait()
    keys.append(seal.key())


def test_without_hard_links_the_secret_is_made_in_place(
    fresh_state_home: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A review on real projects: on FAT or a shared folder `os.link` fails (EPERM), and no
    # secret was ever made, so every record read as changed.
    import errno
    import os

    def no_links(source: object, target: object) -> None:
        raise OSError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(os, "link", no_links)
    made = seal.key()
    assert made is not None and len(made) == 32 and seal.key() == made
    assert seal.intact(seal.sealed({"sha": "a" * 40}))
