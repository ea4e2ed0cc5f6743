"""The command line: `python -m memory_core replay FILE --json [--strict] [--db URL]`, `schema`, and more."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from . import setup_cli
from .errors import DatabaseNotEmpty, FormatError, Refusal, UnknownMoment, UnknownOrg, UnknownRun, Unreachable
from .format.checks import Scenario
from .format.documents import schema_text
from .format.replay import EventFailed, EventResult, replay, replay_into
from .format.scenario import load, parse
from .generate import generate, progress_bar
from .plain import Obj
from .store.database import (
    CONNECTION_ERRORS,
    DatabaseUnusable,
    Engine,
    checkpoint,
    database_url,
    make_engine,
    shown,
    sqlite_file,
)
from .store.dialect import dialect_of
from .usecases.facade import MemoryService
from .views import history

#: Why the text of a deletion is still in the files after the wait (R31), on either backend.
HELD = "a reader holds SQLite's log, or on PostgreSQL a transaction older than the deletion is still open"


def _into(url: str, scenario: Scenario, *, strict: bool = False) -> tuple[object, EventResult | None, Obj]:
    """Replay a scenario into the empty database at `url`, all or nothing: a failure leaves it as it was (R31)."""
    path = sqlite_file(url)
    made: list[Path] = []
    if path is not None and not path.exists():  # what creating it makes (its log, directories), for a failure to undo
        made = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
        made += [p for p in path.parents if not p.exists()]
    engine: Engine | None = None
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
        _undo(engine, path=path, made=made)
        engine = None
        raise
    finally:
        if engine is not None:
            engine.dispose()


def _undo(engine: Engine | None, *, path: Path | None, made: list[Path]) -> None:
    """After a failed load: rolled-back pages out of a SQLite log (R31), the engine closed, what it made removed."""
    if engine is not None and path is not None and not made:
        with suppress(Exception):  # a disk still full: the rolled-back pages count for nothing
            checkpoint(engine)
    if engine is not None:
        engine.dispose()
    for item in made:
        if item.is_dir():
            item.rmdir()
        elif item.exists():
            item.unlink()


def _finish_erasure(service: MemoryService) -> None:
    """R31: a command that deleted something waits (its dialect's finish_timeout) for the scrub, and says so."""
    status = service.erasure_status()
    if not (status["pending"] or status["scrubbing"]):
        return  # nothing deleted, or already gone (SQLite's checkpoint, inline)
    status = service.finish_erasure(timeout=dialect_of(service.engine).finish_timeout)
    standby = status.get("standby_bytes_gone", True)
    if status["bytes_gone"] and not standby:
        said = (
            "the erased text is out of the primary's files; the standby has not replayed that yet "
            f"({'it cannot be reached' if standby is None else 'it is behind'}): its files keep it until it has"
        )
    elif status["bytes_gone"]:
        also = ", the standby's included" if "standby_bytes_gone" in status else ""
        said = f"the erased text is out of the database files{also}"
    else:
        said = f"{status['pending']} deletion(s) still have text in the database files ({HELD}); the next opening "
        said += "of the database, or `db scrub`, finishes it"
    print(f"R31: {said}", file=sys.stderr)


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay a scenario and print the state it ends in (or stood in after event `--at`, R32)."""
    scenario = load(args.file)  # checked whole before any database is touched
    if problem := _no_event(args.at, scenario):
        print(f"{args.file}: {problem}", file=sys.stderr)
        return 2
    engine, stopped, state = _replayed(scenario, db=args.db, strict=args.strict)
    refused = state["refused"]
    if args.at is not None:  # R32: the whole file ran; the state as it stood right after event N
        if stopped is not None and args.at > stopped.index:
            print(f"{args.file}: --strict stopped at events[{stopped.index}], before event {args.at}", file=sys.stderr)
            return 1
        state = engine.state_at(args.at)
    for item in refused:
        print(f"events[{item['event']}] ({item['do']}) refused, {item['reason']}: {item['message']}", file=sys.stderr)
    if args.json:
        _print_json(state)
    else:
        print(f"{scenario.title or args.file}: {len(scenario.events)} events, {len(refused)} refused")
        for org_id, org in state["organizations"].items():  # each organization's active World facts (R18)
            print(f"  {org_id}: {org['map']['facts']} active world facts")
    if stopped is not None:
        print(f"--strict: stopped at events[{stopped.index}]", file=sys.stderr)
        return 1
    return 0


def _no_event(at: int | None, scenario: Scenario) -> str | None:
    """Why `--at` names no event of the scenario (R32), or None."""
    if at is None or 0 <= at < len(scenario.events):
        return None
    last = f"0 to {len(scenario.events) - 1}" if scenario.events else "none: the file has no events"
    return f"--at {at} names no event (events are counted from 0: {last})"


def _replayed(scenario: Scenario, *, db: str | None, strict: bool) -> tuple[Any, EventResult | None, Obj]:
    """The event engine, where --strict stopped, and the state: in memory, or kept in the database `db`."""
    if db is not None:
        return _into(db, scenario, strict=strict)
    engine, stopped = replay(scenario, MemoryService(make_engine("sqlite://")), strict=strict)
    return engine, stopped, engine.state()


def _print_json(value: object) -> None:
    """A document on standard output as the commands print JSON: indented, UTF-8 as it is."""
    print(json.dumps(value, indent=2, ensure_ascii=False))


@contextmanager
def _memory(db: str | None) -> Iterator[MemoryService]:
    """The memory a command reads (a standby's, if any); a scrub found on opening ends before the command (R31)."""
    service = MemoryService.at(db, existing=True)
    try:
        yield service
    finally:
        _finish_erasure(service)
        service.close()


def cmd_load(args: argparse.Namespace) -> int:
    """Load a scenario into the configured database unless it already holds memory."""
    url = args.db or database_url()
    scenario = load(args.file)
    try:
        _, _, state = _into(url, scenario)
    except DatabaseNotEmpty:
        print(f"{shown(url)} already holds memory; nothing loaded", file=sys.stderr)
        return 0 if args.if_empty else 2
    print(f"loaded {args.file} into {shown(url)}: {len(scenario.events)} events, {len(state['refused'])} refused")
    return 0


def cmd_state(args: argparse.Namespace) -> int:
    """A memory as memory-state/1; `--at`, as it stood right after a moment, later erasures applied (R32, R33)."""
    with _memory(args.db) as service:
        at = None if args.at is None else service.resolve_moment(args.at)
        _print_json({**(service.export_state() if at is None else service.state_at(at)), **service.read_trace(at)})
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """What a database recorded as memory-scenario/1; what cannot be written back (R17, R29 to R31) on stderr."""
    url = args.db or database_url()
    with _memory(args.db) as service:
        try:
            doc, omitted = service.export_scenario(org=args.org, run=args.run_id, where=shown(url))
        except (UnknownOrg, UnknownRun) as exc:
            print(f"export: {exc.message}; nothing was exported", file=sys.stderr)
            return 2
        text = json.dumps(doc, indent=2, ensure_ascii=False)
        try:
            parse(text)  # the check replay makes: what is printed replays
        except FormatError as exc:
            print(
                f"export: the document does not pass the scenario check ({exc}); nothing was printed", file=sys.stderr
            )
            return 1
        for line in omitted:
            print(f"left out: {line}", file=sys.stderr)
        sys.stdout.write(text + "\n")
        return 0


def _moment_named(service: MemoryService, n: int, names: dict[str, str]) -> Obj:
    """An end of `diff` (R32): the moment's number, its time and what happened in it."""
    rows = service.moments(first=n - 1, last=n) if n else []
    if not rows:
        return {"moment": n, "at": None, "what": "before history was kept" if n == 0 else "no change"}
    what = history.moment_label(rows[0], names, history.fact_names(service, rows))
    return {"moment": n, "at": rows[0]["at"], "what": what}


def cmd_diff(args: argparse.Namespace) -> int:
    """What changed between two moments, per graph (R32): facts added, gone, changed in weight or status."""
    with _memory(args.db) as service:
        a, b = service.resolve_moment(args.start), service.resolve_moment(args.end)
        before, after = service.facts_between(a, b)
        names = {p["id"]: p["name"] for p in service.people()}
        out = {"from": _moment_named(service, a, names), "to": _moment_named(service, b, names)}
        out["graphs"] = history.diff(before, after)
        if args.json:
            _print_json(history.tidy(out))
        else:
            print("\n".join(history.diff_lines(out)))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """The moments of a memory (R32), oldest first: each one's number, time and what happened."""
    with _memory(args.db) as service:
        names = {p["id"]: p["name"] for p in service.people()}
        rows = service.moments(org=args.org)
        facts = history.fact_names(service, rows)
        if args.json:
            _print_json([{**m, "label": history.moment_label(m, names, facts)} for m in rows])
        else:
            print("\n".join(history.history_lines(rows, names, facts)))
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    """`db upgrade` brings a database's schema to the newest migration; `db current` says where it is."""
    from .store.database import current, head, scrub, upgrade

    url = args.db or database_url()
    engine = make_engine(url, create=False, existing=args.action != "upgrade")  # only upgrade creates
    try:
        if args.action == "upgrade":
            upgrade(engine)
        if args.action == "scrub":
            if not scrub(engine):
                print(f"{shown(url)}: {HELD}; erased text is not out of the files yet (R31)", file=sys.stderr)
                return 1
            print(f"{shown(url)}: erased text rewritten out of the database files (R31)")
        print(f"{shown(url)}: schema at revision {current(engine) or '(none)'}; newest is {head()}")
        return 0
    finally:
        engine.dispose()  # the connections closed (a SQLite log checkpointed) before the command ends


def cmd_token(args: argparse.Namespace) -> int:
    """`token issue PERSON --org ORG` prints a new token (only its hash is kept); `token revoke TOKEN`."""
    with _memory(args.db) as service:
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


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve memory to agents over MCP: one over stdio (MEMORY_TOKEN), many over HTTP (`--http`)."""
    from .agents.serve import serve_http, serve_stdio

    service = MemoryService.at(args.db, existing=True)  # reads outside a turn from the standby, if any
    if args.http:
        per_token = args.max_sessions_per_token
        return serve_http(service, host=args.host, port=args.port, idle_timeout=args.idle_timeout, per_token=per_token)
    dialect_of(service.engine).small_page_cache(service.engine, kib=256)  # a long session's memory stays flat (#38.10)
    return serve_stdio(service, os.environ.get("MEMORY_TOKEN"), database_errors=CONNECTION_ERRORS)


def cmd_generate(args: argparse.Namespace) -> int:
    """Build a believable organization of about N supports, deterministically, into an empty database."""
    url = args.db or database_url()
    engine = make_engine(url)
    try:
        if MemoryService(engine).holds_memory():
            raise DatabaseNotEmpty(shown(url), "generate")
        counts = generate(engine, supports=args.supports, seed=args.seed, progress=progress_bar)
    finally:
        engine.dispose()
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    """The JSON Schema (draft 2020-12) of a document, generated from the format's models."""
    sys.stdout.write(schema_text(args.document))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m memory_core", description="Memory Explorer's command line.")
    sub = p.add_subparsers(dest="command", required=True)
    db_option = argparse.ArgumentParser(add_help=False)
    db_option.add_argument("--db", help="database URL (default: MEMORY_DATABASE_URL or .memory/memory.db)")

    def command(
        name: str, run: Callable[[argparse.Namespace], int], about: str, *, db: bool = True
    ) -> argparse.ArgumentParser:
        """A subcommand that runs `run`, with --db unless `db` is False."""
        cmd = sub.add_parser(name, help=about, parents=[db_option] if db else [])
        cmd.set_defaults(run=run)
        return cmd

    r = command("replay", cmd_replay, "run a scenario and print the state it ends in", db=False)
    r.add_argument("file")
    r.add_argument("--json", action="store_true", help="print the state as memory-state/1 JSON")
    r.add_argument("--strict", action="store_true", help="stop at the first refusal and exit 1")
    r.add_argument("--db", help="replay into this empty database (SQLAlchemy URL) and keep the memory there")
    r.add_argument(
        "--at", type=int, metavar="N", help="print the state as it stood right after event N (from 0), from history"
    )
    ld = command("load", cmd_load, "load a scenario into the configured database")
    ld.add_argument("file")
    ld.add_argument("--if-empty", action="store_true", help="do nothing (exit 0) when memory is already there")
    st = command("state", cmd_state, "print the memory of a database as memory-state/1")
    st.add_argument(
        "--at",
        metavar="MOMENT",
        help="as it stood right after a moment: its number (`history` lists them), a turn id, or a time (ISO 8601)",
    )
    su = command(
        "setup", setup_cli.cmd_setup, "add a scenario file's organizations, people and workflows (no events)", db=False
    )
    su.add_argument("file")
    su.add_argument("--db", help="database URL (default: MEMORY_DATABASE_URL or .memory/memory.db); may hold others")
    ex = command("export", cmd_export, "what a database recorded, as a scenario that replays to its state")
    ex.add_argument("--org", help="only this organization: its members, workflows, runs and corrections")
    ex.add_argument(
        "--run", dest="run_id", metavar="RUN", help="only this run, with its organization, people and workflow"
    )
    df = command("diff", cmd_diff, "what changed between two moments, per graph")
    df.add_argument("--from", dest="start", required=True, metavar="MOMENT", help="a moment number, turn id or time")
    df.add_argument("--to", dest="end", required=True, metavar="MOMENT", help="a moment number, turn id or time")
    df.add_argument("--json", action="store_true", help="print the difference as JSON")
    hi = command("history", cmd_history, "the moments of a memory, each with what happened")
    hi.add_argument("--org", help="only the moments about this organization (and the memory's own)")
    hi.add_argument("--json", action="store_true")
    db = command("db", cmd_db, "schema migrations (Alembic), and scrub: erased text out of the files now")
    db.add_argument("action", choices=["upgrade", "current", "scrub"])
    said = "bearer tokens: for the MCP server (MEMORY_TOKEN, Authorization: Bearer), the dashboard's sign-in and the preferences API"
    tk = command("token", cmd_token, said)
    tk.description = said
    tk.add_argument("action", choices=["issue", "revoke"])
    tk.add_argument("subject", help="issue: the person id; revoke: the token")
    tk.add_argument("--org", help="issue: the organization the token speaks in")
    ident = command(
        "identity", setup_cli.cmd_identity, "link people to the identities they sign in to the dashboard with"
    )
    ident.add_argument("action", choices=["link", "unlink", "list"])
    ident.add_argument("person", nargs="?", help="link: the person's id")
    ident.add_argument("--org", required=True, help="the organization the link speaks in")
    ident.add_argument("--issuer", help="the identity provider's issuer URL (its discovery document's `issuer`)")
    ident.add_argument("--subject", help="the person's subject (`sub`) at that issuer")
    ident.add_argument("--email", help="or: an email address the identity provider verifies (`email_verified`)")
    ident.add_argument("--json", action="store_true", help="list: as JSON")
    mc = command("mcp", cmd_mcp, "serve memory to agents over MCP (stdio; --http for Streamable HTTP at /mcp)")
    mc.add_argument("--http", action="store_true", help="serve many agents over Streamable HTTP at /mcp")
    mc.add_argument("--host", default="127.0.0.1", help="HTTP: the address to listen on (default: loopback only)")
    mc.add_argument("--port", type=int, default=8765)
    mc.add_argument(
        "--idle-timeout", type=float, default=300.0, metavar="SECONDS", help="HTTP: a session idle this long ends"
    )
    mc.add_argument("--max-sessions-per-token", type=int, default=64, metavar="N", help="HTTP: open sessions per token")
    gen = command("generate", cmd_generate, "a believable organization of N supports, for benchmarks")
    gen.add_argument("--supports", type=int, required=True)
    gen.add_argument("--seed", type=int, default=1)
    sc = command(
        "schema", cmd_schema, "the JSON Schema of a scenario (memory-scenario/1) or a state (memory-state/1)", db=False
    )
    sc.add_argument("document", nargs="?", choices=["scenario", "state"], default="scenario")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:  # the reader stopped reading (`| head`): nothing to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (Python's flush at exit must not fail again)
        return 1
    except (FormatError, DatabaseNotEmpty, UnknownMoment, EventFailed, DatabaseUnusable, Unreachable) as exc:
        print(_failure(exc, args), file=sys.stderr)
        return 1 if isinstance(exc, EventFailed) else 2
    except OSError as exc:
        print(f"cannot read {getattr(args, 'file', '')}: {exc.strerror}", file=sys.stderr)
        return 2
    except CONNECTION_ERRORS as exc:
        url = shown(getattr(args, "db", None) or database_url())
        print(f"cannot use the database {url}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2


def _failure(exc: Exception, args: argparse.Namespace) -> str:
    """What the command line says of a failure of the format, the memory or the database."""
    if isinstance(exc, FormatError):
        return f"{getattr(args, 'file', '')}: {exc}"
    if isinstance(exc, EventFailed):
        where = shown(args.db) if getattr(args, "db", None) else None
        return f"{args.file}: {exc}" + (f"; nothing of {args.file} was kept in {where}" if where else "")
    if isinstance(exc, DatabaseUnusable):
        return f"cannot use the database {exc}"
    if isinstance(exc, Unreachable):  # a change with the primary down (reads come from a standby, if any)
        return f"cannot use the database: {exc}"
    return str(exc)  # DatabaseNotEmpty, UnknownMoment


if __name__ == "__main__":
    sys.exit(main())
