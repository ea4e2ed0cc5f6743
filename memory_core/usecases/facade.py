"""The only door to memory: one method = one use case = one transaction, retried as a whole (store/retry.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..store.retry import use_case
from ..store.transactions import Database, Engine
from .agents import AgentSessions
from .corrections import Corrections
from .erasure import Erasure
from .explore import Explore
from .export import Export
from .identities import Identities
from .past import Past
from .reads import Reads
from .settings import OrgSettings
from .setup import Setup
from .tokens import Tokens
from .turns import Turns


class MemoryService(
    Turns, Reads, Corrections, Erasure, OrgSettings, Tokens, Identities, Explore, Past, Export, AgentSessions, Setup
):
    """The facade over one database: its families' use cases, plain data in and out (never live ORM rows)."""

    def __init__(self, engine: Engine | None = None, *, database: Database | None = None) -> None:
        self.database = database if database is not None else Database(engine)
        self.retries = 0  # conflicts with concurrent use cases that were retried (retry.py)

    @classmethod
    def at(cls, url: str | None = None, *, existing: bool = False, read: str | None = None) -> MemoryService:
        """The facade over the database at `url` (default: configured) and its standby `read` (docs/scaling.md)."""
        return cls(database=Database.at(url, existing=existing, read=read))

    def close(self) -> None:
        """Close the database's connections (the CLI, at a command's end); the service is done."""
        self.database.close()

    @property
    def engine(self) -> Engine:
        """The database's engine, for what sits above the use cases (the CLI, the benchmarks)."""
        return self.database.engine

    @contextmanager
    def sandbox(self) -> Iterator[MemoryService]:
        """A service whose use cases share one transaction rolled back at the end: what-ifs and previews."""
        with self.database.one_transaction(commit=False) as database:
            yield MemoryService(database=database)

    @contextmanager
    def all_or_nothing(self) -> Iterator[MemoryService]:
        """A service whose use cases share one transaction, committed at the end, rolled back by any error."""
        with self.database.one_transaction(commit=True) as database:  # what it erased leaves the files then (R31)
            yield MemoryService(database=database)

    @contextmanager
    def loading(self) -> Iterator[MemoryService]:
        """all_or_nothing for a load into an empty database: two loads into one run one after the other."""
        with self.database.one_load_at_a_time(), self.all_or_nothing() as box:
            yield box


# each public method of a family runs as a use case (run_use_case): retried as a whole
for _family in MemoryService.__bases__:
    for _name in [n for n in vars(_family) if not n.startswith("_")]:
        setattr(MemoryService, _name, use_case(getattr(_family, _name)))
