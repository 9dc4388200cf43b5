"""``agentgate schema``: print the verdict JSON Schema shipped with the package."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pytest_agentgate.cli._exit import EXIT_PASS

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers


def add_parser(subparsers: Subparsers) -> Parser:
    return subparsers.add_parser("schema", help="print the verdict JSON Schema")


def schema_text() -> str:
    from importlib.resources import files

    return files("pytest_agentgate").joinpath("schema/verdict.schema.json").read_text("utf-8")


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(schema_text())
    return EXIT_PASS
