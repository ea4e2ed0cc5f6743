"""The word index (models.Word) of entities' names and aliases, read by GraphResolve's `match: "words"` and `near` (R23)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text

from ..plain import Obj
from ..rules.keys import name_key
from ..rules.words import WORD_CHARS, indexed, matches, words
from . import probes
from .driver import Driver, json_value

if TYPE_CHECKING:
    from .facts import EntityRow

#: How many entities `near` names at most (agent-tools.md, Version 2).
NEAR = 5
#: How many of the asked words the index narrows by (a statement of bounded size); the rule checks them all.
INDEXED_WORDS = 16

_ADD = "INSERT INTO word (graph, owner, word, entity_id) VALUES (:g, :o, :w, :e) ON CONFLICT DO NOTHING"
_EVERY = "SELECT id, graph, owner, name, aliases FROM entity WHERE id > :i ORDER BY id LIMIT :n"


def rows_of(entity: int, graph: str, owner: str, texts: Iterable[str]) -> list[Obj]:
    """The index's rows of one entity: a row per word of its name and aliases."""
    return [{"g": graph, "o": owner, "w": w, "e": entity} for w in sorted({w for t in texts for w in indexed(t)})]


def index(db: Driver, *groups: Iterable[EntityRow]) -> None:
    """Index the words of these entities' names and aliases, in the index's order (two writers wait, never deadlock)."""
    rows = [r for g in groups for e in g for r in rows_of(e.id, e.graph, e.owner, [e.name, *e.aliases])]
    db.many(_ADD, sorted(rows, key=lambda r: (r["g"], r["o"], r["w"], r["e"])))


def index_all(conn: Connection, *, chunk: int = 5000) -> None:
    """Index every entity (after the generator's bulk load), a chunk of ids at a time."""
    last = 0
    while batch := conn.execute(text(_EVERY), {"i": last, "n": chunk}).all():
        conn.execute(text(_ADD), [r for i, g, o, n, a in batch for r in rows_of(i, g, o, [n, *json_value(a)])])
        last = batch[-1][0]


def _next(word: str) -> str:
    """The first text after every text that begins with `word` (by code point, skipping surrogates)."""
    after = ord(word[-1]) + 1
    return word[:-1] + chr(0xE000 if 0xD800 <= after < 0xE000 else after)


def find(db: Driver, seen: dict[str, str | None], name: str, kind: str | None = None) -> list[Obj]:
    """GraphResolve by words: entities of the graphs `seen` names matching `name` by words, exact first (R20, R23)."""
    graphs = [(g, o) for g, o in seen.items() if o is not None]
    if not words(name) or not graphs:
        return []
    sql, params = _find_sql(name, {g: f":o{j}" for j, (g, _) in enumerate(graphs)}, kind)
    return _found(name, db.rows(sql, params | {f"o{j}": o for j, (_, o) in enumerate(graphs)}))


#: The owners of the graphs a turn sees (R20), as probes' counted row names them, for one statement.
_SEEN_BY_TURN = """WITH c AS MATERIALIZED (SELECT r.org_id AS world, r.person_id AS usr, r.id AS flow FROM turn t
 JOIN run r ON r.id = t.run_id WHERE t.id = :t) SELECT q.* FROM c CROSS JOIN LATERAL ({query}) q"""


def turn_near(db: Driver, turn_id: str, args: Obj) -> list[Obj]:
    """The `near` of a counted exact GraphResolve that found nothing, its owners read from the turn's run (R20)."""
    if not words(args["name"]):
        return []
    sql, params = _find_sql(args["name"], probes._COUNTED_OWNER, args.get("kind"))
    return _near(_found(args["name"], db.rows(_SEEN_BY_TURN.format(query=sql), {"t": turn_id, **params})))


def _find_sql(name: str, owners: dict[str, str], kind: str | None) -> tuple[str, Obj]:
    """A words resolve's statement: each asked word a range of the index in each graph of `owners` (R20)."""
    params: Obj = {} if kind is None else {"kind": kind}
    wheres = []
    for i, w in enumerate(w[:WORD_CHARS] for w in words(name)[:INDEXED_WORDS]):
        params |= {f"lo{i}": w, f"hi{i}": _next(w)}
        scans = (f"SELECT entity_id FROM word WHERE graph = '{g}' AND owner = {o}" for g, o in owners.items())
        ranges = " UNION ALL ".join(f"{scan} AND word >= :lo{i} AND word < :hi{i}" for scan in scans)
        wheres.append(f"e.id IN ({ranges})")
    sql = f"SELECT e.name, e.kind, e.aliases, e.graph FROM entity e WHERE {' AND '.join(wheres)}"
    return f"{sql} AND e.active_facts > 0{'' if kind is None else ' AND e.kind = :kind'}", params


def _found(name: str, rows: list[tuple[Any, ...]]) -> list[Obj]:
    """The answer from the statement's rows, exact first; where the statement saw part of the words, the rule decides."""
    every = words(name)
    if len(every) > INDEXED_WORDS or any(len(w) > WORD_CHARS for w in every):
        rows = [r for r in rows if matches(name, [r[0], *json_value(r[2])])]
    key = name_key(name)
    return sorted(probes.resolved(rows), key=lambda e: all(name_key(t) != key for t in (e["name"], *e["aliases"])))


def _near(found: list[Obj]) -> list[Obj]:
    """What an exact resolve that found nothing carries: up to NEAR entities matching by words (R20, R23)."""
    return [{"name": e["name"], "kind": e["kind"], "graph": e["graph"]} for e in found[:NEAR]]


def resolve_read(db: Driver, seen: dict[str, str | None], args: Obj) -> tuple[list[Obj], list[Obj] | None]:
    """A GraphResolve as its `match` asks, and its `near` (None but for an exact miss with something near, R23)."""
    name, kind = args["name"], args.get("kind")
    if args.get("match") == "words":
        return find(db, seen, name, kind), None
    result = probes.resolve(db, seen, name, kind)
    return result, (None if result else _near(find(db, seen, name, kind)) or None)
