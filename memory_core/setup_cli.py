"""`python -m memory_core setup FILE [--db URL]`: a file's organizations, people and workflows (no events) added
beside what memory holds, for agents without a replay; then `token issue` and `mcp` (README, "Connect an agent")."""

from __future__ import annotations

import argparse
import sys

from .errors import FormatError, Refusal
from .format.scenario import load
from .store.database import database_url, shown
from .usecases.facade import MemoryService


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The `setup` command's arguments, under the command line's subcommands."""
    su = sub.add_parser("setup", help="add a scenario file's organizations, people and workflows (no events)")
    su.add_argument("file")
    su.add_argument("--db", help="database URL (default: MEMORY_DATABASE_URL or .memory/memory.db); may hold others")
    su.set_defaults(run=cmd_setup)


def cmd_setup(args: argparse.Namespace) -> int:
    """Add a file's organizations, people and workflows to a memory that may hold others (R32: one moment)."""
    scenario = load(args.file)
    if scenario.events:
        raise FormatError(
            "events",
            f"setup adds organizations, people and workflows only, and this file has events ({len(scenario.events)}): "
            "replay or load it into an empty database; nothing was added",
        )
    service = MemoryService.at(args.db)
    try:
        added = service.setup(
            organizations=scenario.organizations, people=scenario.people, workflows=scenario.workflows
        )
    except Refusal as refusal:
        print(f"{args.file}: {refusal.message}; nothing was added", file=sys.stderr)
        return 2
    finally:
        service.close()
    said = "; ".join(f"{kind} {', '.join(ids)}" for kind, ids in added.model_dump().items() if ids)
    outcome = f"added {said}" if said else "nothing added, all was there as defined"
    print(f"{shown(args.db or database_url())}: {outcome}")
    return 0
