"""Use cases of history (R32 to R34): memory as it stood at a moment (a number on its clock), what changed."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from .. import errors as E
from ..plain import Obj
from ..rules.visibility import evidence_elsewhere, in_organization
from ..store import dashboard, past
from ..store.repository import Repository
from . import shapes as sh

R = TypeVar("R")

#: A moment of another organization, as a reader in this one sees it (R23): that it happened, not what.
ELSEWHERE = {"what": "a change in another organization (R23)", "run": None, "turn": None, "detail": None}


def _seen_from(moment: Obj, org: str | None) -> Obj:
    """A moment as organization `org` sees it: one of another organization's says only that it happened (R23)."""
    return {**moment, **ELSEWHERE} if org is not None and moment["org"] not in (org, None) else moment


def _on_the_clock(n: int, newest: int, *, given: str | None = None) -> int:
    """`n`, a moment of this memory's clock (R32); else UnknownMoment names what was `given`."""
    if not 0 <= n <= newest:
        raise E.UnknownMoment(given or str(n), f"moments run from 0 to {newest} on this memory")
    return n


class Past(Repository):
    """Read-only use cases over the memory's past."""

    def clock(self) -> int:
        """The newest moment (0: nothing changed since history was kept)."""
        return self._read(past.last_moment)

    def moments(
        self, *, first: int = 0, last: int | None = None, org: str | None = None, ids: Iterable[int] | None = None
    ) -> list[sh.MomentPublic]:
        """The moments after `first` up to `last`, oldest first; of one organization (and of none), or in `ids`."""
        moments = self._read(past.moments, first=first, last=last, org=org, ids=None if ids is None else list(ids))
        return cast(list[sh.MomentPublic], moments)

    def moment_numbers(self, *, last: int | None = None, org: str | None = None) -> list[int]:
        """The numbers of the moments up to `last`, oldest first, of one organization (and of none)."""
        return self._read(past.moment_numbers, last=last, org=org)

    def resolve_moment(self, given: str | int) -> int:
        """The moment a person names: a number, a turn id (right after it ended), or a time (ISO 8601, else UTC)."""
        with self.database.transaction(write=False) as s:
            newest = past.last_moment(s)
            text = str(given).strip()
            if re.fullmatch(r"-?\d+", text):
                return _on_the_clock(int(text), newest, given=text)
            ended = past.turn_end_moment(s, text)  # a turn's id: right after it ended
            if ended is not None:
                return ended
            try:
                when = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise E.UnknownMoment(
                    text, f"give a moment number (0 to {newest}), the id of a turn that ended, or a time (ISO 8601)"
                ) from None
            try:
                when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
            except OverflowError:  # 0001-01-01T00:00+14:00 is in year 0 in UTC
                raise E.UnknownMoment(text, "that time in UTC is outside the calendar (years 1 to 9999)") from None
            found = past.moment_by_time(s, when.isoformat(timespec="milliseconds"))
            if found is None:
                raise E.UnknownMoment(text, "memory's history starts after that time")
            return found

    def _then(self, n: int, read: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """A store read of memory as it stood after moment `n`, which must be on the clock (R32)."""
        with self.database.transaction(write=False) as s:
            _on_the_clock(n, past.last_moment(s))
            return read(s, *args, **kwargs)

    def state_at(self, n: int) -> Obj:
        """The whole memory as `memory-state/1` right after moment `n`, later erasures applied (R33)."""
        return self._then(n, past.export, n)

    def graph_at(self, graph: str, owner: str, n: int, *, limit: int | None = None, ids: bool = False) -> sh.GraphJson:
        """One graph as it stood after moment `n` (the Graphs page's time control)."""
        return cast(sh.GraphJson, self._then(n, past.graph_at, graph, owner, n, limit=limit, ids=ids))

    def map_at(self, org_id: str, n: int) -> sh.Map:
        """An organization's map (R18) as it stood after moment `n`."""
        return cast(sh.Map, self._then(n, past.map_at, org_id, n))

    def facts_between(
        self, a: int, b: int, *, org: str | None = None, graph: tuple[str, str] | None = None
    ) -> tuple[list[sh.FactThenPublic], list[sh.FactThenPublic]]:
        """The facts changed after `a` up to `b`, as they stood at each (R34); of `org`'s graphs, or of one `graph`."""
        with self.database.transaction(write=False) as s:
            newest = past.last_moment(s)
            lo, hi = sorted(_on_the_clock(n, newest) for n in (a, b))
            ids = past.changed_after(s, lo, hi)
            runs = dashboard.run_ids(s, org) if org is not None else []

            def keep(f: past.PastFact) -> bool:
                shown = org is None or in_organization(f.graph, f.owner, org_id=org, runs=runs)
                return shown and (graph is None or (f.graph, f.owner) == graph)

            out = [past.facts_then(s, n, ids, keep=keep) for n in (a, b)]
            return cast(list[sh.FactThenPublic], out[0]), cast(list[sh.FactThenPublic], out[1])

    def fact_history(self, fact_id: int, *, org: str | None = None) -> sh.FactHistory:
        """A fact's supports, disputes, retraction and their moments (R32); another organization's marked (R23)."""
        with self.database.transaction(write=False) as s:
            supports, disputes, retracted_at = past.timeline_rows(s, fact_id)
            wanted = {v["since"] for v in supports} | {v["until"] for v in supports if v["until"]}
            wanted |= {d["since"] for d in disputes} | ({retracted_at} if retracted_at else set())
            rows = {m["n"]: _seen_from(m, org) for m in past.moments(s, ids=wanted - {0})}  # one read
            for v in supports:
                v["elsewhere"] = evidence_elsewhere(v.pop("org"), reader_org=org)
            history = {"supports": supports, "disputes": disputes, "retracted_at": retracted_at, "moments": rows}
            return cast(sh.FactHistory, history)
