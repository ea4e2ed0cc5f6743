"""The only door to memory: one method = one use case = one transaction.

Each method checks an action in the order rules.md gives (the ids it names exist, then
membership and role, then the state of the turn, run or nested work, then the budget),
raises the Refusal of the first failure with nothing changed, or applies the rules' pure
decisions and commits."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..store.erasure import after_erasure
from ..store.retry import use_case
from ..store.snapshot import export, holds_memory
from .agents import AgentSessions
from .base import Obj
from .corrections import Corrections
from .erasure import Erasure
from .explore import Explore
from .export import Export
from .history import History
from .reads import Reads
from .settings import Settings
from .tokens import Tokens

#: Public members that are not use cases: each opens no transaction of its own that could lose a
#: race (the use cases run inside them retry as a whole).
NOT_USE_CASES = ("sandbox", "all_or_nothing")


class MemoryService(AgentSessions, Reads, Corrections, Erasure, Settings, Tokens, Explore, History, Export):
    """The facade over one database. Plain data in and out; never live ORM rows."""

    @contextmanager
    def sandbox(self) -> Iterator[MemoryService]:
        """A service whose use cases all happen in one transaction that is rolled back at the end:
        for what-ifs (what would this turn teach if it failed?) and previews, changing nothing."""
        with self._store.boxed(commit=False) as s:
            yield MemoryService(self.engine, box=s)

    @contextmanager
    def all_or_nothing(self) -> Iterator[MemoryService]:
        """A service whose use cases all happen in one transaction, committed when the block ends
        and rolled back by any error in it: a replay into a database keeps all of its file or
        none of it. SQLite holds the write lock from the first statement to the commit; a
        conflict with another writer aborts the whole (the caller may run it again)."""
        with self._store.boxed(commit=True) as s:
            box = MemoryService(self.engine, box=s)
            yield box
        if box._erased:
            after_erasure(self.engine)  # what the box erased leaves the files now (R31)

    def holds_memory(self) -> bool:
        """Whether the database holds an organization, person or run (a replay goes only into none)."""
        with self._read() as s:
            return holds_memory(s)

    def export_state(self) -> Obj:
        """The whole memory as `memory-state/1` (without a replay's reads and refusals)."""
        with self._read() as s:
            return export(s)


def _retry_every_use_case(cls: type) -> None:
    """Retry applied in one place: every public method but NOT_USE_CASES is a use case (retry.py)."""
    for name in dir(cls):
        if not name.startswith("_") and name not in NOT_USE_CASES and callable(getattr(cls, name)):
            setattr(cls, name, use_case(getattr(cls, name)))


_retry_every_use_case(MemoryService)
