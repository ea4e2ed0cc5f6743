"""Memory as it stood after a moment (R32), with every later erasure applied (R33, R25 to R28, R34)."""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from sqlmodel import Session, col, select

from .. import errors as E
from ..plain import Obj
from ..rules.weights import score
from .dialect import dialect_of
from .driver import driver_of, json_value
from .facts import FactIdentity
from .graph import map_counts, map_of, triple
from .lookups import picked
from .models import Organization, Person, Run, Turn
from .snapshot import STATE_FORMAT, SUPPORT, fact_sort_key, settings_of, turns_json


@dataclass
class PastFact(FactIdentity):
    """A fact as it stood at a moment: its row's identity and its score then."""

    status: str
    weight: float
    log_odds: float
    sources: int
    supports: list[Obj] = field(default_factory=list)  # in the order made
    disputes: list[Obj] = field(default_factory=list)  # {"by", "contribution"}

    def json(self, ends: dict[int, Obj]) -> Obj:
        """A FACT of the state format: its ends by name and kind, its score, its supports and disputes."""
        named = triple(self, lambda i: {"name": ends[i]["name"], "kind": ends[i]["kind"]})
        score = {"status": self.status, "weight": self.weight, "log_odds": self.log_odds, "sources": self.sources}
        return {**named, **score, "supports": self.supports, "disputes": [dict(d) for d in self.disputes]}


#: A whole graph (graph, owner) the votes are read by, or None: by the facts' ids.
Whole = tuple[str, str] | None
#: Supports or disputes by (fact id, graph, owner).
ByFact = dict[Any, list[Obj]]


def _rows(s: Session, sql: str, params: Obj) -> list[tuple[Any, ...]]:
    """Plain rows on the driver, in the session's transaction (SQLAlchemy's Row objects cost as much as the query)."""
    with driver_of(s) as db:
        return db.rows(sql, params)


def _among(s: Session, column: str, values: Iterable[int], *, whole: Whole = None, of: str = "") -> tuple[str, Obj]:
    """A `whole` graph's rows (`of` a table's alias), else those whose `column` is one of these ids: one `:ids`."""
    if whole is not None:
        return f"{of}graph = :g AND {of}owner = :o", {"g": whole[0], "o": whole[1]}
    clause, value = dialect_of(s.get_bind()).among(column, "ids", sorted(set(values)))  # type: ignore[arg-type]
    return clause, {"ids": value}


@contextmanager
def bulk() -> Iterator[None]:
    """Around reading a whole graph of the past: the cyclic garbage collector paused (B9: 40% at 56k facts)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def last_moment(s: Session) -> int:
    """The newest moment (0: nothing happened since history was kept)."""
    return int(_rows(s, "SELECT coalesce(max(id), 0) FROM moment", {})[0][0])


def changed_after(s: Session, n: int, upto: int | None = None) -> set[int]:
    """Ids of the facts that moments after `n` (up to `upto`) changed: a scan of those moments only."""
    upper = "" if upto is None else " AND id <= :u"
    rows = _rows(s, f"SELECT facts FROM moment WHERE id > :n{upper}", {"n": n, "u": upto})
    return {i for (facts,) in rows for i in json_value(facts)}


_FACT_COLS = "id, graph, owner, subject_id, relation, object_id, value, status, weight, log_odds, sources, retracted_at"
_GONE_COLS = "id, graph, owner, subject_id, relation, object_id, value, NULL, 0.0, 0.0, 0, retracted_at"


def facts_at(
    s: Session, n: int, *, whole: Whole = None, ids: set[int] | None = None, votes: bool = True
) -> list[PastFact]:
    """A `whole` graph's facts, or those with these ids, as they stood after moment `n` with their votes."""
    if whole is None and not ids:
        return []
    where, params = _among(s, "id", ids or (), whole=whole)
    params["n"] = n
    facts, retracted, redo = _fact_rows(s, n, where, params)
    voted = facts if votes else [f for f in facts if f.id in redo]  # without `votes`, those rescored below need theirs
    with_votes(s, n, voted, whole=whole if votes else None)
    for f in facts:
        if f.id in redo:
            _rescore(f, retracted=retracted[f.id])
    return facts


def _fact_rows(s: Session, n: int, where: str, params: Obj) -> tuple[list[PastFact], dict[int, bool], set[int]]:
    """The fact rows there at `n` (present and gone since), whether each was retracted, and the ids to rescore."""
    live = _rows(s, f"SELECT {_FACT_COLS} FROM fact WHERE {where} AND since <= :n", params)
    gone = _rows(s, f"SELECT {_GONE_COLS} FROM factgone WHERE {where} AND since <= :n AND until > :n", params)
    later = changed_after(s, n)
    facts = [PastFact(*r[:11]) for r in live]
    retracted = {r[0]: r[11] is not None and r[11] <= n for r in [*live, *gone]}
    redo = {f.id for f in facts if f.id in later} | {r[0] for r in gone}
    return facts + [PastFact(*r[:11]) for r in gone], retracted, redo


def _rescore(f: PastFact, *, retracted: bool) -> None:
    """A fact's status, weight and sources from its supports and disputes then (R25 to R28)."""
    supports = [(v["origin"], v["key"], v["contribution"]) for v in f.supports]
    sc = score(supports, [d["contribution"] for d in f.disputes], retracted=retracted)
    f.status, f.weight, f.log_odds, f.sources = sc.status, sc.weight, sc.log_odds, sc.sources


def with_votes(s: Session, n: int, facts: list[PastFact], *, whole: Whole = None) -> None:
    """Give these facts their supports and disputes at moment `n` (by graph when they are a whole graph)."""
    if not facts:
        return
    ids = [f.id for f in facts]
    # the same parameters, of a support or dispute (x, its fact f) and of its history
    (joined, p), (plain, _) = _among(s, "x.fact_id", ids, whole=whole, of="f."), _among(s, "fact_id", ids, whole=whole)
    graphs = {(f.graph, f.owner) for f in facts}
    votes = {t: _votes(s, t, (joined, plain), p | {"n": n}, graphs, ordered=whole is not None) for t in _VOTES}
    for f in facts:
        f.supports, f.disputes = (votes[t].get((f.id, f.graph, f.owner), []) for t in ("support", "dispute"))


#: Each table of votes: its columns as its history keeps them, a whole graph's order, a row's order key and vote.
_VOTES: dict[str, tuple[str, str, Callable[[Any], tuple[Any, Obj]]]] = {
    "support": (
        'id, fact_id, graph, owner, "key", origin, run_id, turn_id, record_id, contribution',
        "x.id",
        lambda r: (r[0], dict(zip(SUPPORT, r[4:], strict=True))),
    ),
    "dispute": (
        'gid, fact_id, graph, owner, "by", contribution, since',
        "x.since, x.id",
        lambda r: ((r[6], r[0]), {"by": r[4], "contribution": r[5]}),
    ),
}


def _votes(s: Session, table: str, where: tuple[str, str], p: Obj, graphs: set[Any], *, ordered: bool) -> ByFact:
    """A table's votes at :n by (fact id, graph, owner), present and withdrawn (of these graphs), in the order made.
    A whole graph is read in order; a few facts by id are sorted here (ORDER BY made SQLite walk the support table in
    id order rather than probe each fact's supports: 84x for a 999-turn diff)."""
    cols, order, pair = _VOTES[table]
    x = ", ".join("x.id" if c == "gid" else f"f.{c}" if c in ("graph", "owner") else f"x.{c}" for c in cols.split(", "))
    sql = f"SELECT {x} FROM {table} x JOIN fact f ON f.id = x.fact_id WHERE {where[0]} AND x.since <= :n"
    live = _rows(s, sql + (f" ORDER BY {order}" if ordered else ""), p)
    gone = _rows(s, f"SELECT {cols} FROM {table}gone WHERE {where[1]} AND since <= :n AND until > :n", p)
    out: dict[Any, list[tuple[Any, Obj]]] = defaultdict(list)
    for r in [*live, *(r for r in gone if (r[2], r[3]) in graphs)]:
        out[(r[1], r[2], r[3])].append(pair(r))
    for pairs in out.values():
        pairs.sort(key=itemgetter(0))  # stable: the present first where an order key is shared
    return {k: [v for _, v in pairs] for k, pairs in out.items()}


def entities_at(s: Session, n: int, ids: Iterable[int], *, whole: Whole = None) -> dict[int, Obj]:
    """Entities by id as they stood at `n`: name, kind, and the aliases they had by then."""
    keep, cols = set(ids), "id, name, kind, aliases, alias_since"
    if not keep:
        return {}
    where, p = _among(s, "id", keep, whole=whole)
    p["n"] = n
    rows = _rows(s, f"SELECT {cols} FROM entity WHERE {where} AND since <= :n", p)
    rows += _rows(s, f"SELECT {cols} FROM entitygone WHERE {where} AND since <= :n AND until > :n", p)
    out: dict[int, Obj] = {}
    for eid, name, kind, aliases, since in rows:
        if eid in keep:
            kept = [a for a, m in zip(json_value(aliases), json_value(since), strict=False) if m <= n]
            out[eid] = {"name": name, "kind": kind, "aliases": kept}
    return out


def map_at(s: Session, org_id: str, n: int) -> Obj:
    """R18 at moment `n`: each counter's last logged value by then, one index probe per kind."""
    sql = """SELECT c.kind, (SELECT l.n FROM maplog l WHERE l.org_id = c.org_id AND l.kind = c.kind
 AND l.moment <= :n ORDER BY l.moment DESC LIMIT 1) FROM mapcount c WHERE c.org_id = :o"""
    return map_of({kind: int(v) for kind, v in _rows(s, sql, {"o": org_id, "n": n}) if v is not None})


def settings_at(s: Session, org_id: str, present: dict[str, bool], n: int) -> dict[str, bool]:
    """The settings after moment `n`: the present ones, each later change undone (newest first)."""
    sql = "SELECT setting, old FROM settingsaudit WHERE org_id = :o AND moment > :n ORDER BY moment DESC, id DESC"
    return present | {setting: bool(old) for setting, old in _rows(s, sql, {"o": org_id, "n": n})}  # the oldest last


def moments(
    s: Session,
    *,
    first: int = 0,
    last: int | None = None,
    org: str | None = None,
    run: str | None = None,
    ids: Iterable[int] | None = None,
) -> list[Obj]:
    """The moments in (first, last], oldest first: of `org` (and of none), of a `run` (and its settings), or `ids`."""
    sql = "SELECT id, at, what, org_id, run_id, turn_id, person_id, detail, facts FROM moment WHERE id > :a"
    params: Obj = {"a": first}
    if ids is not None:
        if not set(ids):
            return []
        clause, named = _among(s, "id", ids)
        sql, params = f"{sql} AND {clause}", {**params, **named}
    cols = ("n", "at", "what", "org", "run", "turn", "person", "detail", "facts")
    return [
        {**dict(zip(cols, r, strict=True)), "facts": list(json_value(r[8]))}
        for r in _rows(s, _in_scope(sql, params, last=last, org=org, run=run), params)
    ]


def _in_scope(sql: str, params: Obj, *, last: int | None, org: str | None, run: str | None = None) -> str:
    """A query of moments limited to those up to `last`, and to those about `org` (and about none), in order."""
    if last is not None:
        sql, params["b"] = sql + " AND id <= :b", last
    if run is not None:
        params.update(r=run, o=org)
        sql += " AND (run_id = :r OR (org_id = :o AND what = 'settings'))"
    elif org is not None:
        sql, params["o"] = sql + " AND (org_id = :o OR org_id IS NULL)", org
    return sql + " ORDER BY id"


def moment_numbers(s: Session, *, last: int | None = None, org: str | None = None) -> list[int]:
    """The numbers of the moments up to `last`, oldest first, optionally of one organization (and of none)."""
    params = Obj()
    sql = _in_scope("SELECT id FROM moment WHERE id > 0", params, last=last, org=org)
    return [int(r[0]) for r in _rows(s, sql, params)]


def turn_end_moment(s: Session, turn_id: str) -> int | None:
    """The moment a turn ended, None if memory holds no turn of that id (erased ones neither); refused if still open."""
    if s.get(Turn, turn_id) is None:
        return None
    rows = _rows(s, "SELECT id FROM moment WHERE turn_id = :t AND what = 'turn_ended'", {"t": turn_id})
    if not rows:
        raise E.UnknownMoment(turn_id, "that turn has not ended yet")
    return int(rows[0][0])


def moment_by_time(s: Session, at: str) -> int | None:
    """The last moment at or before a time (ISO 8601, UTC), None if there is none."""
    rows = _rows(s, "SELECT max(id) FROM moment WHERE at <= :t", {"t": at})
    return None if rows[0][0] is None else int(rows[0][0])


def timeline_rows(s: Session, fact_id: int) -> tuple[list[Obj], list[Obj], int | None]:
    """Every support and dispute a live fact ever had (withdrawn ones with `until`), and when it was retracted."""
    fact = _rows(s, "SELECT graph, owner, since, retracted_at FROM fact WHERE id = :f", {"f": fact_id})
    if not fact:
        return [], [], None
    graph, owner, born, retracted_at = fact[0]
    p = {"f": fact_id, "g": graph, "o": owner, "b": born}
    # `org`: the organization of the run that taught it, kept after the run's erasure (R23)
    keys = ("id", "key", "origin", "run", "turn", "record", "contribution", "since", "org", "until")
    picked = 'x.id, x."key", x.origin, x.run_id, x.turn_id, x.record_id, x.contribution, x.since, '
    picked += "coalesce(ru.org_id, x.erased_run_org)"
    joined = "LEFT JOIN run ru ON ru.id = x.run_id WHERE x.fact_id = :f"
    now = _rows(s, f"SELECT {picked}, NULL FROM support x {joined}", p)
    since_born = "AND x.graph = :g AND x.owner = :o AND x.since >= :b"  # this fact's, not an earlier one of that id
    gone = _rows(s, f"SELECT {picked}, x.until FROM supportgone x {joined} {since_born}", p)
    supports = [dict(zip(keys, r, strict=True)) for r in [*now, *gone]]
    disputed = _rows(s, 'SELECT "by", contribution, since FROM dispute WHERE fact_id = :f ORDER BY since, id', p)
    disputes = [dict(zip(("by", "contribution", "since"), r, strict=True)) for r in disputed]
    return sorted(supports, key=lambda v: v["id"]), disputes, retracted_at


# --- the `memory-state/1` document as memory stood after a moment (R32, R33) ----------------------


def facts_then(s: Session, n: int, ids: set[int], *, keep: Callable[[PastFact], bool]) -> list[Obj]:
    """The facts with these ids that `keep` keeps, as they stood after `n`: FACTs with `graph`, `owner` and `id`."""
    facts = [f for f in facts_at(s, n, ids=ids) if keep(f)]
    ends = entities_at(s, n, {i for f in facts for i in f.entity_ids})
    return [{"graph": f.graph, "owner": f.owner, "id": f.id, **f.json(ends)} for f in facts]


def graph_at(
    s: Session, graph: str, owner: str, n: int | None = None, *, limit: int | None = None, ids: bool = False
) -> Obj:
    """One graph as it stood after moment `n` (R32; None: the last, now): its entities by name then kind; with `limit`,
    its heaviest facts, their entities and `total`; with `ids`, each fact's id."""
    n = last_moment(s) if n is None else n
    with bulk():
        facts = facts_at(s, n, whole=(graph, owner), votes=limit is None)
        total = len(facts)
        if limit is not None:  # the heaviest then; only they are read with their supports
            facts = sorted(facts, key=lambda f: -f.weight)[:limit]
            with_votes(s, n, facts)
        named = {i for f in facts for i in f.entity_ids}
        ends = entities_at(s, n, named, whole=(graph, owner))
        items = sorted(((f, f.json(ends)) for f in facts), key=lambda pair: fact_sort_key(pair[1]))
        out: Obj = {
            "entities": sorted((ends[i] for i in named), key=lambda e: (e["name"], e["kind"])),
            "facts": [{"id": f.id, **item} if ids else item for f, item in items],
        }
        return out if limit is None else out | {"total": total}


def export(s: Session, n: int | None = None) -> Obj:
    """All memory as `memory-state/1`, no `reads` or `refused`: now, or as it stood after moment `n` (R32, R33)."""
    last = last_moment(s) if n is None else n

    def rows(model: Any, since: Any) -> Sequence[Any]:
        return s.exec(select(model).where(*(() if n is None else (since <= n,))).order_by(col(model.seq))).all()

    def org(o: Organization) -> Obj:
        settings = settings_of(o) if n is None else settings_at(s, o.id, settings_of(o), n)
        taken = map_counts(s, o.id) if n is None else map_at(s, o.id, n)
        return {"settings": settings, "map": taken, "world": graph_at(s, "world", o.id, last)}

    def run(r: Run) -> Obj:
        ended = r.ended if n is None else r.ended_at is not None and r.ended_at <= n
        head = picked(r, "org=org_id person=person_id surface requested_ephemeral ephemeral")
        return {**head, "ended": ended, "turns": turns_json(s, r.id, n), "flow": graph_at(s, "flow", r.id, last)}

    return {
        "format": STATE_FORMAT,
        "organizations": {o.id: org(o) for o in rows(Organization, Organization.since)},
        "people": {p.id: {"user": graph_at(s, "user", p.id, last)} for p in rows(Person, Person.since)},
        "runs": {r.id: run(r) for r in rows(Run, Run.started_at)},
    }
