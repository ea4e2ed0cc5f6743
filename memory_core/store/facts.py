"""Graph writes on the driver, in the caller's transaction: entities, facts, supports, weights (R24 to R28, R18, R3)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..plain import Obj
from ..rules.keys import display_name, entity_key, name_key, value_key
from ..rules.weights import score
from . import moments, words
from .dialect import in_list
from .driver import Driver, column_names, columns, insert, json_value
from .graph import FactChanges, triple
from .lookups import picked
from .models import Entity, Fact


@dataclass
class EntityRow:
    id: int
    graph: str
    owner: str
    kind: str
    key: str
    name: str
    aliases: list[str]
    active_facts: int
    since: int  # R32: the moment it was made, and each alias's
    alias_since: list[int]
    fresh_aliases: list[str] = field(default_factory=list)  # alias keys added in this use case


Ends = dict[int, EntityRow]  # the entities facts name, by id


@dataclass
class FactIdentity:
    """Which fact a row is: its id, its graph and owner, and its triple (R3)."""

    id: int
    graph: str
    owner: str
    subject_id: int
    relation: str
    object_id: int | None
    value: str | None

    @property
    def entity_ids(self) -> list[int]:
        """The entities it names: its subject, and its object unless a value."""
        return [self.subject_id] if self.object_id is None else [self.subject_id, self.object_id]


@dataclass
class StoredFact(FactIdentity):
    object_key: str
    retracted: bool
    status: str
    log_odds: float
    weight: float
    sources: int
    since: int  # R32
    retracted_at: int | None


#: The columns of entity and fact rows, from the models' tables, in the order EntityRow and StoredFact take them.
_COLS = {"entity": columns(Entity.__table__), "fact": columns(Fact.__table__)}  # type: ignore[attr-defined]
_E_COLS_OF_E, _F_COLS_OF_F = columns(Entity.__table__, "e"), columns(Fact.__table__, "f")  # type: ignore[attr-defined]
_E_INSERT = insert(Entity.__table__)  # type: ignore[attr-defined]
_F_INSERT = insert(Fact.__table__)  # type: ignore[attr-defined]
assert column_names(Entity.__table__) == [*EntityRow.__dataclass_fields__][:-1]  # type: ignore[attr-defined]
assert column_names(Fact.__table__) == [*StoredFact.__dataclass_fields__]  # type: ignore[attr-defined]


def _chunks(items: list[Any], size: int = 500) -> Iterable[list[Any]]:
    """`items` a few hundred at a time: IN lists of a size every backend takes."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _entities(rows: list[tuple[Any, ...]]) -> list[EntityRow]:
    return [EntityRow(*r[:6], _listed(r[6]), r[7], r[8], _listed(r[9])) for r in rows]  # type: ignore[call-arg]


def _listed(value: Any) -> list[Any]:
    """A JSON list column's value (most entities have no alias: `[]` is not decoded)."""
    return [] if value in ("[]", []) else list(json_value(value))


def _facts(rows: list[tuple[Any, ...]]) -> list[StoredFact]:
    return [StoredFact(*r[:8], bool(r[8]), *r[9:]) for r in rows]  # type: ignore[call-arg]


def _by_id(db: Driver, ids: Iterable[int], table: str) -> list[tuple[Any, ...]]:
    """The rows of `table` (entity or fact) with these ids, all columns, a few hundred at a time."""
    out: list[tuple[Any, ...]] = []
    for chunk in _chunks(sorted(set(ids))):
        params: Obj = {}
        out += db.rows(f"SELECT {_COLS[table]} FROM {table} WHERE id IN ({in_list('i', chunk, params)})", params)
    return out


def load_facts(db: Driver, ids: Iterable[int]) -> list[StoredFact]:
    return _facts(_by_id(db, ids, "fact"))


Votes = dict[int, list[tuple[str, str, float]]]
Disputes = dict[int, list[float]]  # each fact's disputes' contributions


class GraphWriter:
    """Batched writes: the entities and facts a turn's claims name, looked up and inserted a few at a time."""

    def __init__(self, db: Driver, moment: int) -> None:
        self.db = db
        self.moment = moment  # R32: what it makes is made at this moment
        self.entities: dict[tuple[str, str, str, str], EntityRow] = {}
        self.facts: dict[tuple[str, str, int, str, str], StoredFact] = {}
        # Made by facts_for with their ids, written by insert_new once their weights and counters
        # are known (refresh_facts), so a new row is inserted once and never updated after.
        self.new_entities: list[EntityRow] = []
        self.new_facts: list[StoredFact] = []
        self.pending: Votes = {}  # each fact's votes teaching writes after: (origin, key, contribution) (R26)

    def load(self, claims: list[tuple[str, str, Obj]]) -> None:
        """Preload the entities and facts that these (graph, owner, claim) triples may name."""
        wanted: dict[tuple[str, str], set[str]] = {}
        for graph, owner, claim in claims:
            names = (name_key(e["name"]) for e in (claim["subject"], claim["object"]) if "value" not in e)
            wanted.setdefault((graph, owner), set()).update(names)
        for (graph, owner), keys in wanted.items():
            for chunk in _chunks(sorted(keys)):
                for e in _entities(self.db.rows(*self.db.dialect.entities_named(_E_COLS_OF_E, graph, owner, chunk))):
                    self.entities[(graph, owner, e.kind, e.key)] = e
        # Then exactly the facts the claims name whose ends both exist: one unique-index look-up each.
        named: dict[tuple[str, str], set[tuple[int, str, str]]] = {}
        for graph, owner, claim in claims:
            subject, obj = self.entities.get(_named(graph, owner, claim["subject"])), claim["object"]
            target = None if "value" in obj else self.entities.get(_named(graph, owner, obj))
            if subject is not None and ("value" in obj or target is not None):
                named.setdefault((graph, owner), set()).add((subject.id, claim["relation"], _object_key(obj, target)))
        for (graph, owner), wanted_facts in named.items():
            for fchunk in _chunks(sorted(wanted_facts), 200):
                for f in _facts(self.db.rows(*self.db.dialect.facts_named(_F_COLS_OF_F, graph, owner, fchunk))):
                    self.facts[(graph, owner, f.subject_id, f.relation, f.object_key)] = f

    def facts_for(self, writes: list[tuple[str, str, Obj]]) -> list[StoredFact]:
        """The fact each (graph, owner, claim) names; missing ones get their ids (written by insert_new)."""

        def entity(graph: str, owner: str, spec: Obj) -> EntityRow:
            key = _named(graph, owner, spec)
            e = self.entities.get(key)
            if e is None:
                e = EntityRow(0, graph, owner, spec["kind"], key[3], display_name(spec["name"]), [], 0, self.moment, [])
                self.entities[key] = e
                self.new_entities.append(e)
            if spec.get("aliases"):
                _merge_aliases(e, spec["aliases"], self.moment)
            return e

        ends = [
            (entity(g, o, c["subject"]), None if "value" in c["object"] else entity(g, o, c["object"]))
            for g, o, c in writes
        ]
        for e, i in zip(self.new_entities, self.db.new_ids("entity", len(self.new_entities)), strict=True):
            e.id = i
        out = []
        for (graph, owner, claim), (subject, target) in zip(writes, ends, strict=True):
            okey = _object_key(claim["object"], target)
            key = (graph, owner, subject.id, claim["relation"], okey)
            fact = self.facts.get(key)
            if fact is None:
                value = claim["object"]["value"] if target is None else None
                oid = None if target is None else target.id
                new = (0, graph, owner, subject.id, claim["relation"], oid, value, okey, False, "new", 0, 0.5, 0)
                fact = StoredFact(*new, self.moment, None)
                self.facts[key] = fact
                self.new_facts.append(fact)
            out.append(fact)
        for fact, i in zip(self.new_facts, self.db.new_ids("fact", len(self.new_facts)), strict=True):
            fact.id = i
        return out

    def insert_new(self) -> None:
        """Write the new entities, aliases (existing entities' too) and facts, one statement each, in that order."""
        none = self.db.json([])  # most new entities have no alias: one parameter for them all
        listed = lambda values: self.db.json(values) if values else none
        made = [
            {**vars(e), "aliases": listed(e.aliases), "alias_since": listed(e.alias_since)} for e in self.new_entities
        ]
        self.db.many(_E_INSERT, made)
        words.index(self.db, self.new_entities, [e for e in self.entities.values() if e.fresh_aliases])
        new = set(map(id, self.new_entities))
        rows, changed = [], []
        for e in self.entities.values():
            if e.fresh_aliases:
                rows += [{"entity_id": e.id, "key": k} for k in e.fresh_aliases]
                e.fresh_aliases = []
                if id(e) not in new:
                    changed.append({"eid": e.id, "aliases": listed(e.aliases), "since": listed(e.alias_since)})
        self.db.many('INSERT INTO alias (entity_id, "key") VALUES (:entity_id, :key)', rows)
        self.db.many("UPDATE entity SET aliases = :aliases, alias_since = :since WHERE id = :eid", changed)
        self.db.many(_F_INSERT, [vars(f) for f in self.new_facts])
        self.new_entities, self.new_facts = [], []


def _named(graph: str, owner: str, spec: Obj) -> tuple[str, str, str, str]:
    """The key of the entity a claim's end names in a graph: its kind and its name's key (R23)."""
    return graph, owner, spec["kind"], name_key(spec["name"])


def _object_key(obj: Obj, target: EntityRow | None) -> str:
    """A claim's object as a fact's identity keeps it (R3): its entity's id (`target`), else its value's key."""
    return value_key(obj["value"]) if target is None else entity_key(target.id)


def _merge_aliases(e: EntityRow, aliases: Iterable[str], moment: int) -> None:
    known = {e.key, *(name_key(a) for a in e.aliases)}
    for alias in aliases:
        key = name_key(alias)
        if key and key not in known:
            known.add(key)
            e.aliases = [*e.aliases, display_name(alias)]
            e.alias_since = [*e.alias_since, moment]
            e.fresh_aliases.append(key)


def refresh_facts(
    db: Driver, facts: list[StoredFact], changes: FactChanges, *, moment: int, writer: GraphWriter | None = None
) -> None:
    """Recompute facts from their own votes only (R26 to R28), batched; a fact or entity left with nothing goes (R3)."""
    fresh_facts = {f.id for f in writer.new_facts} if writer else set()
    fresh_entities = {e.id for e in writer.new_entities} if writer else set()
    votes = _votes(db, [f.id for f in facts], fresh_facts, writer.pending if writer else {})
    ends = _ends(db, facts, writer.entities.values() if writer else ())
    gone, updates, shift, counts = _rescore_all(facts, votes, ends, changes, fresh_facts)
    moved = _moved(shift, ends, fresh_entities, counts)
    if writer is not None:
        writer.insert_new()
    db.many("UPDATE fact SET log_odds = :lo, weight = :w, sources = :n, status = :st WHERE id = :fid", updates)
    db.many("UPDATE entity SET active_facts = :n WHERE id = :eid", moved)
    _count(db, counts, moment)
    if gone:
        left = {i for f in gone for i in f.entity_ids}
        _drop_facts(db, [f.id for f in gone], left, moment)


def _votes(db: Driver, ids: list[int], fresh: set[int], pending: Votes) -> tuple[Votes, Disputes]:
    """Each fact's supports (origin, key, contribution) and disputes, with those teaching will write (R26)."""
    supports: Votes = {i: [] for i in ids}
    disputes: Disputes = {i: [] for i in ids}
    for fid, votes in pending.items():
        supports[fid] += votes
    for chunk in _chunks([i for i in ids if i not in fresh]):
        params: Obj = {}
        listed = in_list("f", chunk, params)
        sql = f'SELECT fact_id, origin, "key", contribution FROM support WHERE fact_id IN ({listed})'
        for fid, origin, key, contrib in db.rows(sql, params):
            supports[fid].append((origin, key, contrib))
        for fid, contrib in db.rows(f"SELECT fact_id, contribution FROM dispute WHERE fact_id IN ({listed})", params):
            disputes[fid].append(contrib)
    return supports, disputes


def _ends(db: Driver, facts: list[StoredFact], entities: Iterable[EntityRow]) -> Ends:
    """The entities the facts name, by id: those given, and the others read."""
    ends = {e.id: e for e in entities}
    missing = {i for f in facts for i in f.entity_ids if i not in ends}
    ends.update((e.id, e) for e in _entities(_by_id(db, missing, "entity")))
    return ends


def _rescore_all(
    facts: list[StoredFact], votes: tuple[Votes, Disputes], ends: Ends, changes: FactChanges, fresh: set[int]
) -> tuple[list[StoredFact], list[Obj], Counter[int], Counter[tuple[str, str]]]:
    """Each fact scored anew, noted in `changes`: facts gone (R3), updates, ends' and map's counts moved (R18)."""
    supports, disputes = votes
    gone: list[StoredFact] = []
    updates: list[Obj] = []
    shift: Counter[int] = Counter()
    counts: Counter[tuple[str, str]] = Counter()
    for fact in facts:
        before = None if fact.status == "new" else (fact.weight, fact.status)
        was_active = fact.status == "active"
        after = None  # no support left: the fact goes (R3)
        if supports[fact.id]:  # scored anew from its own votes (R26 to R28)
            sc = score(supports[fact.id], disputes[fact.id], retracted=fact.retracted)
            fact.log_odds, fact.weight, fact.sources, fact.status = sc.log_odds, sc.weight, sc.sources, sc.status
            after = sc.weight, sc.status
        if after is None:
            gone.append(fact)
        elif fact.id not in fresh:
            updates.append(
                {"fid": fact.id, "lo": fact.log_odds, "w": fact.weight, "n": fact.sources, "st": fact.status}
            )
        now_active = after is not None and fact.status == "active"
        if was_active != now_active:
            _shift(fact, 1 if now_active else -1, shift, counts)
        changes.note(
            fact.graph, fact.owner, triple(fact, lambda i: picked(ends[i], "name kind")), fact.id, before, after
        )
    return gone, updates, shift, counts


def _shift(fact: StoredFact, delta: int, shift: Counter[int], counts: Counter[tuple[str, str]]) -> None:
    """A fact became active (+1) or stopped being (-1): its ends' active facts, and the world map's count (R18)."""
    for eid in fact.entity_ids:
        shift[eid] += delta
    if fact.graph == "world":
        counts[(fact.owner, "")] += delta


def _moved(shift: Counter[int], ends: Ends, fresh: set[int], counts: Counter[tuple[str, str]]) -> list[Obj]:
    """The entities' active facts moved by `shift` (rows to update), and the world map's counts of kinds (R18)."""
    moved = []
    for eid, delta in shift.items():
        if delta:
            e = ends[eid]
            was_on_map = e.active_facts > 0
            e.active_facts += delta
            if eid not in fresh:
                moved.append({"eid": eid, "n": e.active_facts})
            if e.graph == "world" and was_on_map != (e.active_facts > 0):
                counts[(e.owner, e.kind)] += 1 if e.active_facts > 0 else -1
    return moved


def _drop_facts(db: Driver, ids: list[int], ends: set[int], moment: int) -> None:
    """R3: facts left with no support go, and entities left in no fact, into history at this moment (R32)."""
    for chunk in _chunks(ids):
        params: Obj = {"m": moment}
        listed = in_list("f", chunk, params)
        moments.gone(db, "dispute", f"fact_id IN ({listed})", params)
        moments.gone(db, "fact", f"id IN ({listed})", params)
        db.change(f"DELETE FROM dispute WHERE fact_id IN ({listed})", params)
        db.change(f"DELETE FROM fact WHERE id IN ({listed})", params)
    for eid in sorted(ends):  # R3: an entity named by no fact is gone
        if not db.rows("SELECT id FROM fact WHERE subject_id = :e OR object_id = :e LIMIT 1", {"e": eid}):
            moments.gone(db, "entity", "id = :e", {"e": eid, "m": moment})
            db.change("DELETE FROM alias WHERE entity_id = :e", {"e": eid})
            db.change("DELETE FROM entity WHERE id = :e", {"e": eid})


def withdraw(db: Driver, support_ids: list[int], fact_ids: Iterable[int], changes: FactChanges, *, moment: int) -> None:
    """Remove these supports and recompute every fact they touched (R3); history keeps them (R32)."""
    for chunk in _chunks(support_ids):
        params: Obj = {"m": moment}
        listed = in_list("s", chunk, params)
        moments.gone(db, "support", f"id IN ({listed})", params)
        db.change(f"DELETE FROM support WHERE id IN ({listed})", params)
    refresh_facts(db, load_facts(db, fact_ids), changes, moment=moment)


def _count(db: Driver, deltas: dict[tuple[str, str], int], moment: int) -> None:
    """Apply changes to the map's counters (R18): (organization, kind) -> delta; kind "" = facts (R32)."""
    rows = [{"o": org, "k": kind, "d": delta, "m": moment} for (org, kind), delta in sorted(deltas.items()) if delta]
    db.many(
        "INSERT INTO mapcount (org_id, kind, n) VALUES (:o, :k, :d) "
        "ON CONFLICT (org_id, kind) DO UPDATE SET n = mapcount.n + excluded.n",
        rows,
    )
    moments.log_map(db, rows)
