"""Erasure (R17, R29 to R31): runs and accounts go, what they contributed to weights stays."""

from __future__ import annotations

import os
import threading
import time
import weakref
from contextlib import suppress
from typing import Any

from sqlalchemy import delete, func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from ..plain import Obj
from . import reads
from .database import scrub
from .dialect import dialect_of, scrub_due
from .graph import drop_graph
from .lookups import PersonRef, RunRef
from .models import (
    ApiToken,
    Dispute,
    DisputeGone,
    ErasedAccount,
    Fact,
    IdentityLink,
    Membership,
    Moment,
    NestedWork,
    Person,
    Record,
    Run,
    ScrubDue,
    SettingsAudit,
    Support,
    SupportGone,
    Turn,
    TurnLog,
)


def _count(s: Session, model: type, *where: Any) -> int:
    return int(s.exec(select(func.count()).select_from(model).where(*where)).one())


def _set(s: Session, model: type, *where: Any, **values: Any) -> None:
    s.exec(update(model).where(*where).values(**values))  # type: ignore[call-overload]


def _drop(s: Session, model: type, *where: Any) -> None:
    s.exec(delete(model).where(*where))  # type: ignore[call-overload]


def run_preview(s: Session, run: RunRef) -> Obj:
    """What deleting a run erases and what stays (the dashboard's preview)."""
    not_flow = select(Fact.id).where(Fact.graph != "flow")
    return {
        "run": run.id,
        "turns": _count(s, Turn, Turn.run_id == run.id),
        "records": _count(s, Record, Record.run_id == run.id),
        "flow_facts": _count(s, Fact, Fact.graph == "flow", Fact.owner == run.id),
        "supports_kept": _count(s, Support, col(Support.run_id) == run.id, col(Support.fact_id).in_(not_flow)),
    }


def erase_run(s: Session, run: RunRef) -> Obj:
    """R29: erase a run's records and Flow graph; its other supports keep their votes, their pointers nulled."""
    summary = run_preview(s, run)
    drop_graph(s, "flow", run.id)
    of_user_fact = select(Fact.id).where(col(Fact.id) == Support.fact_id, Fact.graph == "user").exists()
    # R23: a User fact's evidence was elsewhere, and stays hidden there; R33: the past keeps its supports as the present
    for votes, of_user in ((Support, of_user_fact), (SupportGone, col(SupportGone.graph) == "user")):
        _set(s, votes, col(votes.run_id) == run.id, of_user, erased_run_org=run.org_id)
        _set(s, votes, col(votes.run_id) == run.id, run_id=None, turn_id=None, record_id=None)
    turn_ids = select(Turn.id).where(Turn.run_id == run.id)
    _drop(s, TurnLog, col(TurnLog.turn_id).in_(turn_ids))
    # R33: no moment names the run, its turns, or (a replacing turn's detail) the turn it replaced.
    _set(s, Moment, col(Moment.run_id) == run.id, col(Moment.what) == "turn_opened", detail=None)
    _set(s, Moment, col(Moment.run_id) == run.id, run_id=None, turn_id=None)
    _drop(s, Record, col(Record.run_id) == run.id)
    reads.erase(s, turn_ids)
    _drop(s, NestedWork, col(NestedWork.turn_id).in_(turn_ids))
    _drop(s, Turn, col(Turn.run_id) == run.id)
    _drop(s, Run, col(Run.id) == run.id)
    s.add(ScrubDue(reason="end_run" if run.ended else "delete_run"))  # R31: the files still hold the text
    return summary


def account_preview(s: Session, person: PersonRef) -> Obj:
    """What deleting an account erases (User graph, memberships) and what stays (its runs)."""
    runs = s.exec(select(Run.id).where(Run.person_id == person.id).order_by(col(Run.seq))).all()
    memberships = s.exec(select(Membership.org_id).where(Membership.person_id == person.id)).all()
    user_facts = _count(s, Fact, Fact.graph == "user", Fact.owner == person.id)
    return {"person": person.id, "user_facts": user_facts, "memberships": list(memberships), "runs_kept": list(runs)}


def erase_account(s: Session, person: PersonRef) -> Obj:
    """R30: the User graph and memberships go; runs stay with the person erased from them (R29, R25)."""
    summary = account_preview(s, person)
    n = int(s.exec(select(func.coalesce(func.max(ErasedAccount.n), 0))).one()) + 1
    s.add(ErasedAccount(n=n))
    erased_key = f"person:erased:{n}"
    for said, by in ((Support, "key"), (SupportGone, "key"), (Record, "source")):  # what the person said, keyed anew
        _set(s, said, col(said.origin) == "person", col(getattr(said, by)) == person.id, **{by: erased_key})
    drop_graph(s, "user", person.id)
    for held in (ApiToken, IdentityLink, Membership):  # R30: its tokens, sign-in links and memberships
        _drop(s, held, col(held.person_id) == person.id)
    reads.erase(s, select(Turn.id).join(Run, col(Run.id) == Turn.run_id).where(Run.person_id == person.id))
    nulled = ((Run, "person_id"), (Dispute, "by"), (DisputeGone, "by"), (Moment, "person_id"), (SettingsAudit, "by"))
    for kept, by in nulled:  # kept, without the person
        _set(s, kept, col(getattr(kept, by)) == person.id, **{by: None})
    _drop(s, Person, col(Person.id) == person.id)
    s.add(ScrubDue(reason="delete_account"))  # R31: the files still hold the text
    return summary | {"erased_key": erased_key}


# --- R31: the bytes, after the rows: a deletion writes a marker (ScrubDue); a scrub inline (Dialect.scrubs_inline) or
# in the background takes the text out of the files; what is left is finished by retries, or when next opened.


class Finisher:
    """One background scrubber per engine: scrubs until no marker is left, retrying with backoff."""

    PAUSES = (0.05, 0.2, 0.5, 1.0, 2.0, 5.0)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.again = False
        self.done = threading.Event()
        self.done.set()
        self.error: str | None = None

    def kick(self) -> None:
        """A deletion committed: scrub after it, in the background."""
        with self.lock:
            self.again = True
            self.done.clear()
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._loop, name="memory-scrub", daemon=True)
                self.thread.start()

    def _loop(self) -> None:
        tries = 0
        while True:
            with self.lock:
                if not self.again:
                    self.done.set()
                    self.thread = None
                    return
                self.again = False
            try:
                gone, self.error = scrub(self.engine), None
            except Exception as exc:  # noqa: BLE001  (the marker stays; the next try or opening finishes)
                gone, self.error = False, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if not gone or scrub_due(self.engine):  # failed, or a deletion committed meanwhile: once more
                with self.lock:
                    self.again = True
            if not gone:
                time.sleep(self.PAUSES[min(tries, len(self.PAUSES) - 1)])
            tries = 0 if gone else tries + 1

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background scrub; True when it finished (no marker left)."""
        return self.done.wait(timeout)


_FINISHERS: weakref.WeakKeyDictionary[Engine, Finisher] = weakref.WeakKeyDictionary()
_FINISHERS_LOCK = threading.Lock()


def finisher(engine: Engine) -> Finisher:
    """The engine's background scrubber (R31), made at its first use, not again at each call."""
    with _FINISHERS_LOCK:
        return _FINISHERS.get(engine) or _FINISHERS.setdefault(engine, Finisher(engine))


def _forget_finishers_in_child() -> None:  # a forked child has none of its parent's threads
    for f in list(_FINISHERS.values()):
        f.thread, f.again, f.lock = None, False, threading.Lock()
        f.done.set()


os.register_at_fork(after_in_child=_forget_finishers_in_child)


def after_erasure(engine: Engine) -> bool:
    """Right after a deletion committed: take its text out of the files (R31)."""
    if dialect_of(engine).scrubs_inline:
        with suppress(Exception):  # the deletion has committed; never run it again: the finisher retries
            if scrub(engine):
                return True
    finisher(engine).kick()
    return False


def heal(engine: Engine) -> None:
    """On opening a database: a deletion whose scrub never finished is finished now or in the background (R31)."""
    try:
        if scrub_due(engine):
            after_erasure(engine)
    except Exception:  # noqa: BLE001  (opening never fails on this: the finisher retries)
        finisher(engine).kick()


def erasure_status(engine: Engine) -> Obj:
    """Whether every deletion's text is out of the database files yet (R31)."""
    due = scrub_due(engine)
    f = _FINISHERS.get(engine)
    return {
        "bytes_gone": due == 0,
        "pending": due,
        "scrubbing": f is not None and not f.done.is_set(),
        "last_error": f.error if f is not None else None,
    }
