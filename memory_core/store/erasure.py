"""Erasure (R17, R29 to R31): runs and accounts go, what they contributed to weights stays."""

from __future__ import annotations

import os
import threading
import time
import weakref

from sqlalchemy import delete, func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from ..plain import Obj
from . import reads
from .database import scrub
from .dialect import dialect_of
from .graph import drop_graph
from .identities import erase_links
from .lookups import PersonRef, RunRef
from .markers import scrub_due
from .models import (
    ApiToken,
    Dispute,
    DisputeGone,
    ErasedAccount,
    Fact,
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


def run_preview(s: Session, run: RunRef) -> Obj:
    """What deleting a run erases and what stays (the dashboard's preview)."""
    flow_facts = s.exec(select(func.count()).select_from(Fact).where(Fact.graph == "flow", Fact.owner == run.id)).one()
    records = s.exec(select(func.count()).select_from(Record).where(Record.run_id == run.id)).one()
    turns = s.exec(select(func.count()).select_from(Turn).where(Turn.run_id == run.id)).one()
    kept = s.exec(
        select(func.count())
        .select_from(Support)
        .join(Fact, col(Fact.id) == Support.fact_id)
        .where(Support.run_id == run.id, Fact.graph != "flow")
    ).one()
    return {
        "run": run.id,
        "turns": int(turns),
        "records": int(records),
        "flow_facts": int(flow_facts),
        "supports_kept": int(kept),
    }


def erase_run(s: Session, run: RunRef) -> Obj:
    """R29: erase a run's records and Flow graph; its World and User supports keep key, origin and
    contribution, with the pointer set to null, so no weight changes."""
    summary = run_preview(s, run)
    drop_graph(s, "flow", run.id)
    of_user_fact = select(Fact.id).where(col(Fact.id) == Support.fact_id, Fact.graph == "user").exists()
    s.exec(
        update(Support)
        .where(col(Support.run_id) == run.id, of_user_fact)  # type: ignore[call-overload]
        .values(erased_run_org=run.org_id)  # R23: its evidence was elsewhere, and stays hidden there
    )
    s.exec(
        update(Support)
        .where(col(Support.run_id) == run.id)  # type: ignore[call-overload]
        .values(run_id=None, turn_id=None, record_id=None)
    )
    # R33: its history goes with it; the past keeps its supports as the present does.
    s.exec(
        update(SupportGone)
        .where(col(SupportGone.run_id) == run.id, col(SupportGone.graph) == "user")  # type: ignore[call-overload]
        .values(erased_run_org=run.org_id)
    )
    s.exec(
        update(SupportGone)
        .where(col(SupportGone.run_id) == run.id)  # type: ignore[call-overload]
        .values(run_id=None, turn_id=None, record_id=None)
    )
    turn_ids = select(Turn.id).where(Turn.run_id == run.id)
    s.exec(delete(TurnLog).where(col(TurnLog.turn_id).in_(turn_ids)))  # type: ignore[call-overload]
    # R33: no moment names the run, its turns, or (a replacing turn's detail) the turn it replaced.
    s.exec(
        update(Moment)
        .where(col(Moment.run_id) == run.id, col(Moment.what) == "turn_opened")  # type: ignore[call-overload]
        .values(detail=None)
    )
    s.exec(update(Moment).where(col(Moment.run_id) == run.id).values(run_id=None, turn_id=None))  # type: ignore[call-overload]
    s.exec(delete(Record).where(col(Record.run_id) == run.id))  # type: ignore[call-overload]
    reads.erase(s, turn_ids)
    s.exec(delete(NestedWork).where(col(NestedWork.turn_id).in_(turn_ids)))  # type: ignore[call-overload]
    s.exec(delete(Turn).where(col(Turn.run_id) == run.id))  # type: ignore[call-overload]
    s.exec(delete(Run).where(col(Run.id) == run.id))  # type: ignore[call-overload]
    s.add(ScrubDue(reason="end_run" if run.ended else "delete_run"))  # R31: the files still hold the text
    return summary


def account_preview(s: Session, person: PersonRef) -> Obj:
    """What deleting an account erases (User graph, memberships) and what stays (its runs)."""
    user_facts = s.exec(
        select(func.count()).select_from(Fact).where(Fact.graph == "user", Fact.owner == person.id)
    ).one()
    runs = s.exec(select(Run.id).where(Run.person_id == person.id).order_by(col(Run.seq))).all()
    memberships = s.exec(select(Membership.org_id).where(Membership.person_id == person.id)).all()
    return {
        "person": person.id,
        "user_facts": int(user_facts),
        "memberships": list(memberships),
        "runs_kept": list(runs),
    }


def erase_account(s: Session, person: PersonRef) -> Obj:
    """R30: the User graph and memberships go; runs stay with the person erased from them.

    Decision: a deleted person's disputes stay as votes without their author, as a deleted
    run's supports stay without their pointer (R29), so no weight changes. Nothing of their id is
    kept: supports keyed by it (origin `person`, R25) and their records' `source` take one key
    that names no one, `person:erased:N`, N counting deleted accounts in order, the same for all
    of them, so R25 still counts them as one source; their API tokens and sign-in links go."""
    summary = account_preview(s, person)
    n = int(s.exec(select(func.coalesce(func.max(ErasedAccount.n), 0))).one()) + 1
    s.add(ErasedAccount(n=n))
    erased_key = f"person:erased:{n}"
    s.exec(
        update(Support)
        .where(col(Support.origin) == "person", col(Support.key) == person.id)  # type: ignore[call-overload]
        .values(key=erased_key)
    )
    s.exec(
        update(SupportGone)
        .where(col(SupportGone.origin) == "person", col(SupportGone.key) == person.id)  # type: ignore[call-overload]
        .values(key=erased_key)
    )
    s.exec(
        update(Record)
        .where(col(Record.origin) == "person", col(Record.source) == person.id)  # type: ignore[call-overload]
        .values(source=erased_key)
    )
    drop_graph(s, "user", person.id)
    s.exec(delete(ApiToken).where(col(ApiToken.person_id) == person.id))  # type: ignore[call-overload]
    erase_links(s, person.id)
    s.exec(delete(Membership).where(col(Membership.person_id) == person.id))  # type: ignore[call-overload]
    reads.erase(s, select(Turn.id).join(Run, col(Run.id) == Turn.run_id).where(Run.person_id == person.id))
    s.exec(update(Run).where(col(Run.person_id) == person.id).values(person_id=None))  # type: ignore[call-overload]
    s.exec(update(Dispute).where(col(Dispute.by) == person.id).values(by=None))  # type: ignore[call-overload]
    s.exec(update(DisputeGone).where(col(DisputeGone.by) == person.id).values(by=None))  # type: ignore[call-overload]
    s.exec(update(Moment).where(col(Moment.person_id) == person.id).values(person_id=None))  # type: ignore[call-overload]
    s.exec(update(SettingsAudit).where(col(SettingsAudit.by) == person.id).values(by=None))  # type: ignore[call-overload]
    s.exec(delete(Person).where(col(Person.id) == person.id))  # type: ignore[call-overload]
    s.add(ScrubDue(reason="delete_account"))  # R31: the files still hold the text
    summary["erased_key"] = erased_key
    return summary


# --- R31: the bytes, after the rows --------------------------------------------------------------
# A deletion's transaction removes the rows and writes a marker (ScrubDue); the files may still
# hold the text until a scrub (db.scrub). Where the dialect's scrub is cheap (SQLite's checkpoint)
# it runs inline right after the commit; where it is not (PostgreSQL rewrites every table) it runs
# right after in a background thread (Dialect.scrubs_inline), and the deletion's outcome says
# whether the bytes are gone yet. Whatever is not finished (a long SQLite reader, a process
# killed) is finished by the finisher's retries, and at the latest when the database is next
# opened (MemoryService's constructor).


class Finisher:
    """One background scrubber per engine: runs db.scrub until no marker is left, retrying with
    backoff while SQLite's log cannot be folded or the server refuses (a lock, a lost connection)."""

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
                gone = scrub(self.engine)
                self.error = None
            except Exception as exc:  # noqa: BLE001  (the marker stays; the next try or opening finishes)
                gone, self.error = False, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if gone:
                tries = 0
                if scrub_due(self.engine):  # a deletion committed meanwhile: once more
                    with self.lock:
                        self.again = True
                continue
            with self.lock:
                self.again = True
            time.sleep(self.PAUSES[min(tries, len(self.PAUSES) - 1)])
            tries += 1

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background scrub; True when it finished (no marker left)."""
        return self.done.wait(timeout)

    @property
    def running(self) -> bool:
        return not self.done.is_set()


_FINISHERS: weakref.WeakKeyDictionary[Engine, Finisher] = weakref.WeakKeyDictionary()
_FINISHERS_LOCK = threading.Lock()


def finisher(engine: Engine) -> Finisher:
    with _FINISHERS_LOCK:
        f = _FINISHERS.get(engine)
        if f is None:
            f = _FINISHERS[engine] = Finisher(engine)
        return f


def _forget_finishers_in_child() -> None:  # a forked child has none of its parent's threads
    for f in list(_FINISHERS.values()):
        f.thread, f.again, f.lock = None, False, threading.Lock()
        f.done.set()


os.register_at_fork(after_in_child=_forget_finishers_in_child)


def after_erasure(engine: Engine) -> bool:
    """Right after a deletion committed: take its text out of the files (R31). A dialect that
    scrubs inline (SQLite's checkpoint) does it now (True: gone); if it cannot yet (a reader holds
    the log), the finisher retries. Otherwise (PostgreSQL) the finisher scrubs in the background
    (False: not gone yet; `erasure_status` says when)."""
    if dialect_of(engine).scrubs_inline:
        try:
            if scrub(engine):
                return True
        except Exception:  # noqa: BLE001  (the deletion has committed; never run it again: the finisher retries)
            pass
    finisher(engine).kick()
    return False


def heal(engine: Engine) -> None:
    """On opening a database: a deletion whose scrub never finished (a process killed between the
    commit and the scrub) is finished now or right after, in the background, as `after_erasure`."""
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
        "scrubbing": bool(f is not None and f.running),
        "last_error": f.error if f is not None else None,
    }
