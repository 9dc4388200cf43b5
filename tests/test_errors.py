"""One root for the errors agentgate raises on purpose, each with the exit code it stands for."""

from __future__ import annotations

import pytest

from pytest_agentgate.config import ConfigError
from pytest_agentgate.errors import AgentgateError, OutputError
from pytest_agentgate.reports.model import ReportError
from pytest_agentgate.state.task import LedgerError


@pytest.mark.parametrize(
    "error",
    [
        ConfigError("agentgate.yml", "gates.bulid", "unknown key", line=3),
        ReportError("junit.xml", "not XML", "run the tests again"),
        LedgerError("a task id cannot be empty"),
        OutputError("out/verdict.json", "Permission denied"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_every_error_is_an_agentgate_error_with_the_usage_exit_code(
    error: AgentgateError,
) -> None:
    assert isinstance(error, AgentgateError)
    assert error.exit_code == 2
    assert str(error)  # a message for a person, never empty


def test_ledger_error_is_still_a_value_error() -> None:
    with pytest.raises(ValueError, match="cannot be empty"):
        raise LedgerError("a task id cannot be empty")


def test_output_error_names_the_option_the_file_and_what_to_do() -> None:
    error = OutputError("out/v.json", "Permission denied", "choose a folder you can write")
    assert str(error) == "--output out/v.json: Permission denied; choose a folder you can write"
    assert (error.path, error.problem, error.option) == (
        "out/v.json",
        "Permission denied",
        "--output",
    )
    plain = OutputError("v.json", "is a folder", option="--agentgate-json")
    assert str(plain) == "--agentgate-json v.json: is a folder"
