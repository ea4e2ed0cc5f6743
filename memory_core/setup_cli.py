"""`setup FILE`: a file's organizations, people and workflows (no events) added beside what memory holds (README, "Connect
an agent"); `identity link|unlink|list` (docs/signin.md): whoever holds the database needs no owner."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import FormatError, Refusal
from .format.scenario import load
from .rules.identity import identity_of
from .store.database import database_url, make_engine, shown
from .usecases.facade import MemoryService

USAGE = "identity link PERSON --org ORG (--issuer URL --subject SUB | --email ADDRESS)"


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


def cmd_identity(args: argparse.Namespace) -> int:
    """Exit 0 done, 1 refused or nothing to unlink, 2 bad input: nothing changed but on 0."""
    if args.action == "link" and not args.person:
        print(f"identity link needs the person: {USAGE}", file=sys.stderr)
        return 2
    if args.action != "link" and args.person:
        print(f"identity {args.action} takes no person ({args.person!r}): the identity names the link", file=sys.stderr)
        return 2
    service = MemoryService(make_engine(args.db or database_url(), existing=True))
    try:
        return _identity(service, args)
    except FormatError as exc:
        where = f"--{exc.path}" if exc.path in {"issuer", "subject", "email"} else "--issuer with --subject, or --email"
        print(f"{where}: {exc.problem}; nothing was changed", file=sys.stderr)
        return 2
    except Refusal as refusal:
        print(f"refused, {refusal.reason} ({refusal.rule}): {refusal.message}; nothing was changed", file=sys.stderr)
        return 1
    finally:
        service.engine.dispose()


def _identity(service: MemoryService, args: argparse.Namespace) -> int:
    given = {"issuer": args.issuer, "subject": args.subject, "email": args.email}
    if args.action == "list":
        links = service.identity_links(args.org)
        if args.json:
            print(json.dumps(links, indent=2, ensure_ascii=False))
        for link in [] if args.json else links:
            print(f"{link['person']} ({link['person_name']}): {link['identity']}, linked {link['linked_at']}")
        return 0
    if args.action == "link":
        if service.link_identity(args.person, org=args.org, **given):
            print(f"linked: {args.person} signs in to {args.org} with {_words(args)}")
        else:
            print(f"already linked: {args.person} signs in to {args.org} with {_words(args)}; nothing changed")
        return 0
    if service.unlink_identity(org=args.org, **given):
        print(f"unlinked: {_words(args)} no longer signs in to {args.org}")
        return 0
    print(f"{_words(args)} is linked to no one in {args.org}; nothing was unlinked", file=sys.stderr)
    return 1


def _words(args: argparse.Namespace) -> str:
    return identity_of(args.issuer, args.subject, args.email).words
