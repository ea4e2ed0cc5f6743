"""The only door to memory: one method = one use case = one transaction.

Each method checks an action in the order rules.md gives (the ids it names exist, then
membership and role, then the state of the turn, run or nested work, then the budget),
raises the Refusal of the first failure with nothing changed, or applies the rules' pure
decisions and commits.

The facade holds one of each family of use cases (plain classes over one shared `Database`) and
delegates each public method to its family through `run_use_case` (store/retry.py), the one
place retry is applied; a whole replay (format/replay.py) goes through it too."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, TypeVar

from ..store.retry import run_use_case
from ..store.snapshot import export, holds_memory
from ..store.transactions import Database, Engine
from .agents import AgentSessions
from .base import Obj
from .corrections import Corrections
from .erasure import Erasure
from .explore import Explore
from .export import Export
from .identities import Identities
from .past import Past
from .reads import Reads
from .settings import OrgSettings
from .tokens import Tokens
from .turns import Turns

P = ParamSpec("P")
R = TypeVar("R")

#: Public members that are not use cases: each opens no transaction of its own that could lose a
#: race (the use cases run inside them retry as a whole).
NOT_USE_CASES = ("sandbox", "all_or_nothing", "loading", "at", "close")


def delegate(family: str, method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[MemoryService, P], R]:
    """The facade's method that runs `method` of the family held in attribute `family`, as a use
    case (run_use_case: retried when it lost a race, once inside one transaction)."""
    name = method.__name__

    def call(self: MemoryService, /, *args: P.args, **kwargs: P.kwargs) -> R:
        bound = getattr(getattr(self, family), name)
        return run_use_case(self, lambda: bound(*args, **kwargs))

    functools.update_wrapper(call, method)
    call.__use_case__ = True  # type: ignore[attr-defined]
    return call


class MemoryService:
    """The facade over one database. Plain data in and out; never live ORM rows."""

    def __init__(self, engine: Engine | None = None, *, database: Database | None = None) -> None:
        self.database = database if database is not None else Database(engine)
        self.retries = 0  # conflicts with concurrent use cases that were retried (retry.py)
        self._turns = Turns(self.database)
        self._reads = Reads(self.database)
        self._corrections = Corrections(self.database)
        self._erasure = Erasure(self.database)
        self._settings = OrgSettings(self.database)
        self._tokens = Tokens(self.database)
        self._identities = Identities(self.database)
        self._explore = Explore(self.database)
        self._past = Past(self.database)
        self._export = Export(self.database)
        self._agents = AgentSessions(self.database)
        self._agents.end_run = self.end_run  # a session that ends ends its runs through the facade

    @classmethod
    def at(cls, url: str | None = None, *, existing: bool = False, read: str | None = None) -> MemoryService:
        """The facade over the database at `url` (default: MEMORY_DATABASE_URL, or the SQLite file
        under .memory/); with `existing`, a database that is not there yet is refused. `read`: a hot
        standby of it for reads (default: MEMORY_READ_DATABASE_URL, for the configured database;
        docs/scaling.md)."""
        return cls(database=Database.at(url, existing=existing, read=read))

    def close(self) -> None:
        """Close the database's connections (the CLI, at a command's end); the service is done."""
        self.database.close()

    @property
    def engine(self) -> Engine:
        """The database's engine, for what sits above the use cases and opens its own (the CLI, the
        benchmarks): no use case reaches it."""
        return self.database.engine

    @property
    def _sandbox(self) -> bool | None:
        """True inside one transaction that every use case joins (run_use_case runs it once)."""
        return True if self.database.in_one_transaction else None

    @contextmanager
    def sandbox(self) -> Iterator[MemoryService]:
        """A service whose use cases all happen in one transaction that is rolled back at the end:
        for what-ifs (what would this turn teach if it failed?) and previews, changing nothing."""
        with self.database.one_transaction(commit=False) as database:
            yield MemoryService(database=database)

    @contextmanager
    def all_or_nothing(self) -> Iterator[MemoryService]:
        """A service whose use cases all happen in one transaction, committed when the block ends
        and rolled back by any error in it: a replay into a database keeps all of its file or
        none of it. SQLite holds the write lock from the first statement to the commit; a
        conflict with another writer aborts the whole (the caller may run it again)."""
        with self.database.one_transaction(
            commit=True
        ) as database:  # what it erased leaves the files at its commit (R31)
            yield MemoryService(database=database)

    @contextmanager
    def loading(self) -> Iterator[MemoryService]:
        """all_or_nothing for a load into an empty database: two loads into one database run one
        after the other (SQLite: the write lock; PostgreSQL: an advisory lock)."""
        with self.database.one_load_at_a_time(), self.all_or_nothing() as box:
            yield box

    def _holds_memory(self) -> bool:
        with self.database.transaction(write=False, fresh=True) as s:  # a load follows: as the primary has it
            return holds_memory(s)

    def _export_state(self) -> Obj:
        with self.database.transaction(write=False) as s:
            return export(s)

    def holds_memory(self) -> bool:
        """Whether the database holds an organization, person or run (a replay goes only into none)."""
        return run_use_case(self, self._holds_memory)

    def export_state(self) -> Obj:
        """The whole memory as `memory-state/1` (without a replay's reads and refusals)."""
        return run_use_case(self, self._export_state)

    holds_memory.__use_case__ = True  # type: ignore[attr-defined]
    export_state.__use_case__ = True  # type: ignore[attr-defined]

    # Turns (turns.py)
    load_setup = delegate("_turns", Turns.load_setup)
    start_run = delegate("_turns", Turns.start_run)
    open_turn = delegate("_turns", Turns.open_turn)
    record = delegate("_turns", Turns.record)
    run_step = delegate("_turns", Turns.run_step)
    call = delegate("_turns", Turns.call)
    return_work = delegate("_turns", Turns.return_work)
    end_turn = delegate("_turns", Turns.end_turn)
    end_run = delegate("_turns", Turns.end_run)
    # Reads (reads.py)
    read = delegate("_reads", Reads.read)
    org_map = delegate("_reads", Reads.org_map)
    # Corrections (corrections.py)
    dispute = delegate("_corrections", Corrections.dispute)
    retract = delegate("_corrections", Corrections.retract)
    # Erasure (erasure.py)
    erasure_status = delegate("_erasure", Erasure.erasure_status)
    finish_erasure = delegate("_erasure", Erasure.finish_erasure)
    delete_run = delegate("_erasure", Erasure.delete_run)
    delete_account = delegate("_erasure", Erasure.delete_account)
    # OrgSettings (settings.py)
    get_settings = delegate("_settings", OrgSettings.get_settings)
    set_settings = delegate("_settings", OrgSettings.set_settings)
    audit = delegate("_settings", OrgSettings.audit)
    # Tokens (tokens.py)
    issue_token = delegate("_tokens", Tokens.issue_token)
    token_caller = delegate("_tokens", Tokens.token_caller)
    revoke_token = delegate("_tokens", Tokens.revoke_token)
    # Identities (identities.py): who signs in to the dashboard as whom
    link_identity = delegate("_identities", Identities.link_identity)
    unlink_identity = delegate("_identities", Identities.unlink_identity)
    identity_links = delegate("_identities", Identities.identity_links)
    identity_callers = delegate("_identities", Identities.identity_callers)
    # Explore (explore.py)
    organizations = delegate("_explore", Explore.organizations)
    members = delegate("_explore", Explore.members)
    workflows = delegate("_explore", Explore.workflows)
    people = delegate("_explore", Explore.people)
    runs = delegate("_explore", Explore.runs)
    run_ids = delegate("_explore", Explore.run_ids)
    run_detail = delegate("_explore", Explore.run_detail)
    graph = delegate("_explore", Explore.graph)
    graph_drawing = delegate("_explore", Explore.graph_drawing)
    facts_table = delegate("_explore", Explore.facts_table)
    fact_breakdown = delegate("_explore", Explore.fact_breakdown)
    turn_view = delegate("_explore", Explore.turn_view)
    run_erasure_preview = delegate("_explore", Explore.run_erasure_preview)
    account_erasure_preview = delegate("_explore", Explore.account_erasure_preview)
    version = delegate("_explore", Explore.version)
    read_servers = delegate("_explore", Explore.read_servers)
    counts = delegate("_explore", Explore.counts)
    # Past (past.py)
    clock = delegate("_past", Past.clock)
    moments = delegate("_past", Past.moments)
    moment_numbers = delegate("_past", Past.moment_numbers)
    resolve_moment = delegate("_past", Past.resolve_moment)
    state_at = delegate("_past", Past.state_at)
    graph_at = delegate("_past", Past.graph_at)
    map_at = delegate("_past", Past.map_at)
    facts_between = delegate("_past", Past.facts_between)
    fact_history = delegate("_past", Past.fact_history)
    # Export (export.py)
    export_scenario = delegate("_export", Export.export_scenario)
    # AgentSessions (agents.py)
    agent_server_started = delegate("_agents", AgentSessions.agent_server_started)
    agent_server_alive = delegate("_agents", AgentSessions.agent_server_alive)
    agent_server_stopped = delegate("_agents", AgentSessions.agent_server_stopped)
    agent_session_opened = delegate("_agents", AgentSessions.agent_session_opened)
    agent_session_ended = delegate("_agents", AgentSessions.agent_session_ended)
    end_gone_sessions = delegate("_agents", AgentSessions.end_gone_sessions)
    run_clients = delegate("_agents", AgentSessions.run_clients)
    started_by = delegate("_agents", AgentSessions.started_by)
