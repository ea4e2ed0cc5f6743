"""The word index (models.Word): the words of entities' names and aliases as rules/words.py folds them,
written where entities and aliases are (facts.GraphWriter, the generator's bulk load, migration 0013),
gone with their entity (ON DELETE CASCADE). GraphResolve's `match: "words"` and its `near` read it.

A word's prefix is a range of the index (`word >= 'brig' AND word < 'brih'`); the index proposes,
rules.words.matches decides, so a word cut at WORD_CHARS never answers wrongly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from sqlalchemy import Connection, text

from ..plain import Obj
from ..rules.keys import name_key
from ..rules.words import WORD_CHARS, indexed, matches, words
from .driver import Driver, json_value
from .probes import resolve, resolved

#: How many entities `near` names at most (agent-tools.md, Version 2).
NEAR = 5

_ADD = "INSERT INTO word (word, entity_id) VALUES (:w, :e) ON CONFLICT DO NOTHING"


class Named(Protocol):
    """An entity as the index takes it: its id, name and aliases."""

    id: int
    name: str
    aliases: list[str]


def index(db: Driver, *groups: Iterable[Named]) -> None:
    """Index the words of these entities' names and aliases (those already kept are left as they are)."""
    rows = {(w, e.id) for group in groups for e in group for text in (e.name, *e.aliases) for w in indexed(text)}
    db.many(_ADD, [{"w": w, "e": e} for w, e in sorted(rows)])


def index_all(conn: Connection, *, chunk: int = 5000) -> None:
    """Index every entity (after the generator's bulk load), a chunk of ids at a time."""
    last, add = 0, text(_ADD)
    while batch := conn.execute(text(_EVERY), {"i": last, "n": chunk}).all():
        conn.execute(add, [{"w": w, "e": i} for i, n, a in batch for w in sorted({*indexed(n), *_alias_words(a)})])
        last = batch[-1][0]


_EVERY = "SELECT id, name, aliases FROM entity WHERE id > :i ORDER BY id LIMIT :n"


def _alias_words(aliases: Any) -> set[str]:
    return {w for a in json_value(aliases) or [] for w in indexed(a)}


def _next(word: str) -> str:
    """The first text after every text that begins with `word` (by code point, skipping surrogates)."""
    after = ord(word[-1]) + 1
    return word[:-1] + chr(0xE000 if 0xD800 <= after < 0xE000 else after)


def find(db: Driver, seen: dict[str, str | None], name: str, kind: str | None = None) -> list[Obj]:
    """GraphResolve by words: entities of active facts in the graphs `seen` names (R20, R23) whose name
    or an alias matches `name` by words (rules.words.matches), exact matches first."""
    asked, graphs = [w[:WORD_CHARS] for w in words(name)], [(g, o) for g, o in seen.items() if o is not None]
    if not asked or not graphs:
        return []
    params: Obj = {} if kind is None else {"kind": kind}
    for i, w in enumerate(asked):
        params |= {f"lo{i}": w, f"hi{i}": _next(w)}
    for i, (g, o) in enumerate(graphs):
        params |= {f"g{i}": g, f"o{i}": o}
    hits = " INTERSECT ".join(
        f"SELECT entity_id FROM word WHERE word >= :lo{i} AND word < :hi{i}" for i in range(len(asked))
    )
    visible = " OR ".join(f"(e.graph = :g{i} AND e.owner = :o{i})" for i in range(len(graphs)))
    sql = (
        f"SELECT e.name, e.kind, e.aliases, e.graph FROM entity e WHERE e.id IN ({hits}) AND e.active_facts > 0 "
        f"AND ({visible}){'' if kind is None else ' AND e.kind = :kind'}"
    )
    found = resolved(r for r in db.rows(sql, params) if matches(name, [r[0], *json_value(r[2])]))
    key = name_key(name)
    return sorted(found, key=lambda e: all(name_key(t) != key for t in (e["name"], *e["aliases"])))


def near(db: Driver, seen: dict[str, str | None], name: str, kind: str | None = None) -> list[Obj]:
    """What an exact resolve that found nothing carries: up to NEAR entities the same read sees whose
    names match by words, as {name, kind, graph} (R20: nothing the turn may not see)."""
    return [{"name": e["name"], "kind": e["kind"], "graph": e["graph"]} for e in find(db, seen, name, kind)[:NEAR]]


def resolve_read(db: Driver, seen: dict[str, str | None], args: Obj) -> tuple[list[Obj], list[Obj] | None]:
    """A GraphResolve as its `match` asks (exact by default), and its `near`: None but for an exact
    resolve that found nothing while something matches by words (an empty `near` is left out, so a
    state written before `near` existed reads the same)."""
    name, kind = args["name"], args.get("kind")
    if args.get("match") == "words":
        return find(db, seen, name, kind), None
    result = resolve(db, seen, name, kind)
    return result, (None if result else near(db, seen, name, kind) or None)
