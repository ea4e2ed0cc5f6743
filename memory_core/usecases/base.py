"""The base of every family of use cases: the engine, its transactions, the look-ups that refuse."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from .. import errors as E
from ..store.database import driver_connection, make_engine, writer
from ..store.driver import Driver
from ..store.erasure import after_erasure, heal
from ..store.graph import FactChange
from ..store.lookups import Lookups
from ..store.models import (
    Membership,
    NestedWork,
    Run,
    Turn,
    UsedId,
    Workflow,
)

Obj = dict[str, Any]


@dataclass
class Outcome:
    """What one use case did: fact changes graph by graph, and what it has to say."""

    changes: list[FactChange] = field(default_factory=list)
    detail: Obj = field(default_factory=dict)


class UseCases(Lookups):
    """The engine and the transactions every use case runs in."""

    def __init__(self, engine: Engine | None = None) -> None:
        self.engine = engine if engine is not None else make_engine()
        self._write = writer(self.engine)
        self._sandbox: Session | None = None
        self.retries = 0  # conflicts with concurrent use cases that were retried (retry.py)
        self._erased = False  # inside one transaction: something was erased, to scrub after it
        heal(self.engine)  # R31: a deletion whose scrub a killed process never finished

    @contextmanager
    def _tx(self) -> Iterator[Session]:
        """One use case's transaction: committed at the end, rolled back by any error or refusal."""
        if self._sandbox is not None:
            with self._sandbox.begin_nested():  # a refusal rolls back this use case only
                yield self._sandbox
            return
        with Session(self._write, expire_on_commit=False) as s:
            yield s
            s.commit()

    @contextmanager
    def _read(self) -> Iterator[Session]:
        """A read-only use case: never takes a write lock."""
        if self._sandbox is not None:
            yield self._sandbox
            return
        with Session(self.engine, expire_on_commit=False) as s:
            yield s

    @contextmanager
    def _driver_tx(self, *, serializable: bool = False) -> Iterator[Driver]:
        """A driver use case's transaction on the pooled connection: committed at the end, rolled back by
        any error or refusal. SQLite takes the write lock up front (BEGIN IMMEDIATE); PostgreSQL
        runs it READ COMMITTED, the guarded UPDATE keeping the count right."""
        pg = self.engine.dialect.name == "postgresql"
        if self._sandbox is not None:
            with self._sandbox.begin_nested():
                db = Driver(self._sandbox.connection().connection.dbapi_connection, pg)
                try:
                    yield db
                finally:
                    db.close()
            self._sandbox.expire_all()  # rows changed under the session's objects
            return
        with driver_connection(self.engine) as dbapi:
            db = Driver(dbapi, pg)
            try:
                if not pg:
                    db.cur.execute("BEGIN IMMEDIATE")
                elif serializable:  # as the ORM's writers (db.writer): concurrent teachers lose nothing
                    db.cur.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
                yield db
            except BaseException:
                db.close()
                dbapi.rollback()
                raise
            db.close()
            dbapi.commit()

    def _scrub_after(self, detail: Obj) -> None:
        """R31, right after a deletion committed: its text leaves the files now (SQLite's checkpoint)
        or in the background (PostgreSQL's rewrite, or a SQLite log a reader holds); the outcome
        says which (`bytes_gone`), and `erasure_status` says when it is done."""
        if self._sandbox is None:
            detail["bytes_gone"] = after_erasure(self.engine)
        else:
            self._erased = True  # all_or_nothing scrubs once its one transaction commits

    @classmethod
    def _require_open(cls, turn: Turn, run: Run) -> None:
        cls._refuse_unless_open(turn.id, turn.status, run.id, run.ended)

    @staticmethod
    def _refuse_unless_open(turn_id: str, status: str, run_id: str, ended: bool) -> None:
        if ended:
            raise E.RunEnded(f"run {run_id!r} has ended; nothing more happens in it (R17)")
        if status != "open":
            why = {"completed": "a turn ends and teaches once (R1)", "replaced": "a replaced turn teaches nothing (R3)"}
            raise E.TurnNotOpen(
                f"turn {turn_id!r} is {status}, not open: {why.get(status, 'an ended turn takes no more events (R2)')}"
            )

    @staticmethod
    def _role(s: Session, person_id: str, org_id: str) -> str | None:
        m = s.get(Membership, (person_id, org_id))
        return m.role if m else None

    @staticmethod
    def _open_work(s: Session, turn_id: str, work: str) -> NestedWork | None:
        return s.exec(
            select(NestedWork).where(
                NestedWork.turn_id == turn_id, NestedWork.work == work, NestedWork.status == "open"
            )
        ).first()

    @staticmethod
    def _used(s: Session, kind: str, ident: str) -> None:
        if s.get(UsedId, (kind, ident)) is not None:
            raise E.DuplicateId(f"the {kind} id {ident!r} is already used in this memory, perhaps by an erased {kind}")
        s.add(UsedId(kind=kind, id=ident))

    @classmethod
    def _step(cls, s: Session, run: Run, step: str) -> Obj:
        wf = s.get(Workflow, run.workflow_id) if run.workflow_id else None
        return cls._step_of(wf.id if wf else None, wf.steps if wf else [], step)

    @staticmethod
    def _step_of(workflow_id: str | None, steps: list[Obj], step: str) -> Obj:
        for spec in steps:
            if spec["id"] == step:
                return spec
        where = f"workflow {workflow_id!r}" if workflow_id else "no workflow (the run was started without one)"
        raise E.UnknownStep(f"step {step!r} is not in the run's {where}")

    @staticmethod
    def _exhausted(turn_id: str, cap: int | None) -> E.Refusal:
        return E.BudgetExhausted(f"turn {turn_id!r} has used all {cap} of its MemoryProbes (R21)")
