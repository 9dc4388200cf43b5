"""Reports are read only if they are regular files of a bounded size inside the project (or named
outside it on purpose); globbing is linear and safe from symlink loops."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import CliRun

from pytest_agentgate.gates import collect

Agentgate = Callable[..., CliRun]
WriteConfig = Callable[[str], Path]

JUNIT = '<testsuite><testcase classname="t" name="a"/></testsuite>'


def verify_test_gate(
    agentgate: Agentgate, write_config: WriteConfig, report: str
) -> dict[str, Any]:
    write_config(f"gates:\n  test:\n    report: {report}\n")
    return agentgate("verify", "--format", "json", "--no-run").gate("test")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_is_refused_without_blocking(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    os.mkfifo(project / "junit.xml")
    gate = verify_test_gate(agentgate, write_config, "junit.xml")
    assert gate["status"] == "fail" and "junit.xml: is not a regular file" in gate["problems"][0]


def test_links_out_of_the_project_are_refused(
    project: Path, write_config: WriteConfig, agentgate: Agentgate, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere.xml"
    elsewhere.write_text(JUNIT)
    (project / "junit.xml").symlink_to(elsewhere)
    gate = verify_test_gate(agentgate, write_config, "junit.xml")
    assert "junit.xml: is a link to a file outside the project" in gate["problems"][0]
    if Path("/dev/zero").exists():
        (project / "zero.xml").symlink_to("/dev/zero")
        gate = verify_test_gate(agentgate, write_config, "zero.xml")
        assert "zero.xml: is not a regular file" in gate["problems"][0]
    # Named outside on purpose (a CI artifact folder), the same file is read.
    gate = verify_test_gate(agentgate, write_config, str(elsewhere))
    assert gate["status"] == "pass" and gate["actual"]["total"] == 1


def test_a_report_over_the_size_cap_is_refused_unread(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    with open(project / "huge.xml", "wb") as handle:  # sparse: no disk is used
        handle.truncate(collect.MAX_REPORT_BYTES + 1)
    gate = verify_test_gate(agentgate, write_config, "huge.xml")
    assert "huge.xml: is 256 MiB, more than agentgate reads (256 MiB)" in gate["problems"][0]


def test_globs_survive_symlink_loops_and_match_like_glob(
    project: Path, write_config: WriteConfig, agentgate: Agentgate
) -> None:
    shards = project / "reports" / "shard-1"
    shards.mkdir(parents=True)
    (shards / "junit.xml").write_text(JUNIT)
    (project / "reports" / "shard-2").mkdir()
    (project / "reports" / "shard-2" / "junit.xml").write_text(
        JUNIT.replace('name="a"', 'name="b"')
    )
    (project / "reports" / ".hidden").mkdir()
    (project / "reports" / ".hidden" / "junit.xml").write_text(JUNIT.replace('"a"', '"c"'))
    (shards / "loop").symlink_to(project / "reports")  # reports/shard-1/loop -> reports
    (project / "reports" / "self").symlink_to(".")
    gate = verify_test_gate(agentgate, write_config, "reports/**/*.xml")
    assert gate["status"] == "pass" and gate["actual"]["total"] == 2


def test_match_follows_glob_rules() -> None:
    assert collect._match(("a", "b", "c.xml"), ("**", "*.xml"))
    assert collect._match(("c.xml",), ("**", "*.xml"))
    assert not collect._match((".git", "c.xml"), ("**", "*.xml"))
    assert not collect._match((".c.xml",), ("*.xml",))
    assert collect._match((".coverage.host.1",), (".coverage*",))
    assert collect._match(("x", "junit", "r.xml"), ("**", "junit", "*.xml"))
    assert not collect._match(("x", "r.xml"), ("**", "junit", "*.xml"))
