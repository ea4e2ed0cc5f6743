"""The command line: `python -m memory_core replay FILE --json [--strict] [--db URL]`, and more."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import DatabaseNotEmpty, FormatError, Refusal
from .format.checks import Scenario
from .format.replay import EventFailed, EventResult, holds_memory, replay, replay_into
from .format.scenario import load
from .store.database import (
    CONNECTION_ERRORS,
    DatabaseUnusable,
    checkpoint,
    database_url,
    make_engine,
    shown,
    sqlite_file,
)
from .store.dialect import dialect_of
from .usecases.facade import MemoryService

Obj = dict[str, object]


def _made_by(path: Path) -> list[Path]:
    """What creating a SQLite file at `path` makes: the directories missing on its way, the file and
    its log; so a load that fails can take away all it made."""
    made = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    parent = path.parent
    while not parent.exists():
        made.append(parent)
        parent = parent.parent
    return made


def _into(url: str, scenario: Scenario, *, strict: bool = False) -> tuple[object, EventResult | None, Obj]:
    """Replay a scenario into the database at `url`, which must hold no memory: all or nothing (see
    engine.replay_into). When it fails, the database is as it was before: the transaction is rolled
    back, a SQLite log keeps none of its pages, and a SQLite file this command created is removed."""
    path = sqlite_file(url)
    made = _made_by(path) if path is not None and not path.exists() else []
    engine = None
    service = None
    try:
        engine = make_engine(url)
        service = MemoryService(engine)
        result = replay_into(scenario, service, where=shown(url), strict=strict)
        _finish_erasure(service)  # R31: the command ends when the deleted text is out of the files
        return result
    except DatabaseNotEmpty:
        if service is not None:
            _finish_erasure(service)  # a scrub found on opening (a killed deletion's) ends first
        raise  # another command's memory: left alone
    except BaseException:
        if engine is not None and path is not None and not made:
            try:
                checkpoint(engine)  # rolled-back pages out of the log (R31)
            except Exception:  # noqa: BLE001  (a disk still full; the rolled-back pages count for nothing)
                pass
        if engine is not None:
            engine.dispose()
            engine = None
        for item in made:
            if item.is_dir():
                item.rmdir()
            elif item.exists():
                item.unlink()
        raise
    finally:
        if engine is not None:
            engine.dispose()


def _say_refusal(result: EventResult) -> None:
    print(f"events[{result.index}] ({result.do}) refused, {result.reason}: {result.message}", file=sys.stderr)


def _finish_erasure(service: MemoryService) -> None:
    """R31: a command that deleted something waits for the scrub that takes the text out of the
    database files (PostgreSQL's runs right after the deletion, in the background) and says so;
    as long as the dialect says (Dialect.finish_timeout: a SQLite log a reader holds is not waited
    for)."""
    status = service.erasure_status()
    if not (status["pending"] or status["scrubbing"]):
        return  # nothing deleted, or already gone (SQLite's checkpoint, inline)
    status = service.finish_erasure(timeout=dialect_of(service.engine).finish_timeout)
    if status["bytes_gone"]:
        print("R31: the erased text is out of the database files", file=sys.stderr)
    else:
        print(
            f"R31: {status['pending']} deletion(s) still have text in the database files (a reader holds "
            "SQLite's log); the next opening of the database, or `db scrub`, finishes it",
            file=sys.stderr,
        )


def cmd_replay(args: argparse.Namespace) -> int:
    scenario = load(args.file)  # checked whole before any database is touched
    if args.db is None:
        engine, stopped = replay(scenario, MemoryService(make_engine("sqlite://")), strict=args.strict)
        state = engine.state()
    else:
        _, stopped, state = _into(args.db, scenario, strict=args.strict)
    refused = state["refused"]
    assert isinstance(refused, list)
    for item in refused:
        print(f"events[{item['event']}] ({item['do']}) refused, {item['reason']}: {item['message']}", file=sys.stderr)
    if args.json:
        json.dump(state, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(f"{scenario.title or args.file}: {len(scenario.events)} events, {len(refused)} refused")
        organizations = state["organizations"]
        assert isinstance(organizations, dict)
        for org_id, org in organizations.items():
            print(f"  {org_id}: {org['map']['facts']} active world facts")
    if stopped is not None:
        print(f"--strict: stopped at events[{stopped.index}]", file=sys.stderr)
        return 1
    return 0


def cmd_load(args: argparse.Namespace) -> int:
    """Load a scenario into the configured database unless it already holds memory."""
    url = args.db or database_url()
    scenario = load(args.file)
    try:
        _, _, state = _into(url, scenario)
    except DatabaseNotEmpty:
        print(f"{shown(url)} already holds memory; nothing loaded", file=sys.stderr)
        return 0 if args.if_empty else 2
    refused = state["refused"]
    assert isinstance(refused, list)
    print(f"loaded {args.file} into {shown(url)}: {len(scenario.events)} events, {len(refused)} refused")
    return 0


def cmd_state(args: argparse.Namespace) -> int:
    service = MemoryService(make_engine(args.db or database_url(), existing=True))
    json.dump(service.export_state(), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    _finish_erasure(service)  # R31: a scrub a killed process left, healed on opening, ends before we do
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    """`db upgrade` brings a database's schema to the newest migration; `db current` says where it is."""
    from .store.database import scrub
    from .store.migrate import current, head, upgrade

    url = args.db or database_url()
    engine = make_engine(url, create=False, existing=args.action != "upgrade")  # only upgrade creates
    if args.action == "upgrade":
        upgrade(engine)
    if args.action == "scrub":
        if not scrub(engine):
            print(
                f"{shown(url)}: a reader holds SQLite's log; erased text is not out of the files yet (R31)",
                file=sys.stderr,
            )
            return 1
        print(f"{shown(url)}: erased text rewritten out of the database files (R31)")
    print(f"{shown(url)}: schema at revision {current(engine) or '(none)'}; newest is {head()}")
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    """`token issue PERSON --org ORG` prints a new token (only its hash is kept); `token revoke TOKEN`."""
    service = MemoryService(make_engine(args.db or database_url(), existing=True))
    try:
        return _token(service, args)
    finally:
        _finish_erasure(service)  # R31: a scrub a killed process left, healed on opening, ends before we do


def _token(service: MemoryService, args: argparse.Namespace) -> int:
    if args.action == "issue":
        if not args.org:
            print("token issue needs --org ORG", file=sys.stderr)
            return 2
        try:
            print(service.issue_token(args.subject, org=args.org))
        except Refusal as refusal:
            print(f"refused, {refusal.reason}: {refusal.message}", file=sys.stderr)
            return 1
        return 0
    if service.revoke_token(args.subject):
        print("revoked")
        return 0
    print("no live token matches; nothing revoked", file=sys.stderr)
    return 1


def cmd_generate(args: argparse.Namespace) -> int:
    """Build a believable organization of about N supports, deterministically, into an empty database."""
    from .generate import generate, progress_bar

    url = args.db or database_url()
    engine = make_engine(url)
    if holds_memory(MemoryService(engine)):
        raise DatabaseNotEmpty(f"{shown(url)} already holds memory; generate into an empty database")
    counts = generate(engine, supports=args.supports, seed=args.seed, progress=progress_bar)
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m memory_core", description="Memory Explorer's command line.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("replay", help="run a scenario and print the state it ends in")
    r.add_argument("file")
    r.add_argument("--json", action="store_true", help="print the state as memory-state/1 JSON")
    r.add_argument("--strict", action="store_true", help="stop at the first refusal and exit 1")
    r.add_argument("--db", help="replay into this empty database (SQLAlchemy URL) and keep the memory there")
    r.set_defaults(run=cmd_replay)
    ld = sub.add_parser("load", help="load a scenario into the configured database")
    ld.add_argument("file")
    ld.add_argument("--db")
    ld.add_argument("--if-empty", action="store_true", help="do nothing (exit 0) when memory is already there")
    ld.set_defaults(run=cmd_load)
    st = sub.add_parser("state", help="print the memory of a database as memory-state/1")
    st.add_argument("--db")
    st.set_defaults(run=cmd_state)
    db = sub.add_parser("db", help="schema migrations (Alembic), and scrub: erased text out of the files now")
    db.add_argument("action", choices=["upgrade", "current", "scrub"])
    db.add_argument("--db", help="database URL (default: MEMORY_DATABASE_URL or .memory/memory.db)")
    db.set_defaults(run=cmd_db)
    tk = sub.add_parser("token", help="bearer tokens for the preferences API")
    tk.add_argument("action", choices=["issue", "revoke"])
    tk.add_argument("subject", help="issue: the person id; revoke: the token")
    tk.add_argument("--org", help="issue: the organization the token speaks in")
    tk.add_argument("--db")
    tk.set_defaults(run=cmd_token)
    gen = sub.add_parser("generate", help="a believable organization of N supports, for benchmarks")
    gen.add_argument("--supports", type=int, required=True)
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--db")
    gen.set_defaults(run=cmd_generate)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except FormatError as exc:
        print(f"{getattr(args, 'file', '')}: {exc}", file=sys.stderr)
        return 2
    except DatabaseNotEmpty as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except EventFailed as exc:
        where = shown(args.db) if getattr(args, "db", None) else None
        kept = f"; nothing of {args.file} was kept in {where}" if where else ""
        print(f"{args.file}: {exc}{kept}", file=sys.stderr)
        return 1
    except DatabaseUnusable as exc:
        print(f"cannot use the database {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cannot read {getattr(args, 'file', '')}: {exc.strerror}", file=sys.stderr)
        return 2
    except CONNECTION_ERRORS as exc:
        url = shown(getattr(args, "db", None) or database_url())
        print(f"cannot use the database {url}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
