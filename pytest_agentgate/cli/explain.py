"""``agentgate explain``: print each gate's effective thresholds, as text or JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_agentgate.cli._args import add_config_and_profile
from pytest_agentgate.cli._exit import EXIT_PASS

if TYPE_CHECKING:
    from pytest_agentgate.cli._args import Parser, Subparsers
    from pytest_agentgate.config.model import GateConfig


def add_parser(subparsers: Subparsers) -> Parser:
    parser = subparsers.add_parser("explain", help="print each gate's effective thresholds")
    add_config_and_profile(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def run(args: argparse.Namespace) -> int:
    from pytest_agentgate.config.resolve import resolve_config
    from pytest_agentgate.registry import get_registry

    registry = get_registry()
    config = resolve_config(
        Path.cwd(), config_path=args.config, profile=args.profile, registry=registry
    )
    source = str(config.path) if config.path else "zero-config defaults"
    lint_formats, coverage_formats = (
        sorted(registry.lint_formats),
        sorted(registry.coverage_formats),
    )
    if args.format == "json":
        doc = {
            "config": source,
            "profile": config.profile,
            "attempts_max": config.attempts_max,
            "max_chars": config.max_chars,
            "gates": [_gate_dict(g) for g in config.gates],
            # Judged only when a door gives the agent's session (a hook, --transcript, --claim).
            "session": None if config.session is None else _gate_dict(config.session),
            "notices": config.notices,
            "formats": {"lint": lint_formats, "coverage": coverage_formats},
        }
        print(json.dumps(doc, indent=2))
        return EXIT_PASS
    print(f"config: {source}")
    print(
        f"profile: {config.profile}   attempts: {config.attempts_max}   "
        f"continuation: {config.max_chars} chars"
    )
    for gate in config.gates:
        _print_gate(gate)
    if config.session is not None:
        _print_gate(config.session)
        print("  (judged when a hook, --transcript or --claim gives the agent's session)")
    for notice in config.notices:
        print(f"\nnote: {notice}")
    print(f"\nlint formats: {', '.join(lint_formats)}")
    print(f"coverage formats: {', '.join(coverage_formats)}")
    return EXIT_PASS


def _gate_dict(gate: GateConfig) -> dict[str, Any]:
    return {
        "name": gate.name,
        "kind": gate.kind,
        "enabled": gate.enabled,
        "blocking": gate.blocking,
        "command": gate.command,
        "timeout_s": gate.timeout,
        "reports": gate.reports,
        "format": gate.format,
        "thresholds": gate.thresholds,
        **({"options": gate.options} if gate.options else {}),
    }


def _print_gate(gate: GateConfig) -> None:
    state = "" if gate.enabled else "  (disabled)"
    advisory = "" if gate.blocking else "  (advisory)"
    print(f"\n{gate.name} [{gate.kind}]{state}{advisory}")
    if gate.command:
        print(f"  command:  {gate.command}  (timeout {gate.timeout:g}s)")
    if gate.reports:
        fmt = f"  ({gate.format})" if gate.format else ""
        print(f"  reports:  {', '.join(gate.reports)}{fmt}")
    for key, value in gate.thresholds.items():
        shown = "off" if value is None else (f"{value:g}" if isinstance(value, float) else value)
        print(f"  {key:<14} {shown}")
