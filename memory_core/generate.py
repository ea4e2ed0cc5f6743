"""A believable organization of about N supports, seeded, written in bulk by the service's rules (R7, R18, R25-R28)."""

from __future__ import annotations

import math
import random
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .plain import Obj
from .rules.keys import entity_key
from .rules.vocabulary import WORLD_KINDS
from .rules.weights import DISPUTE_CONTRIBUTION, contribution, independence_key, reliability_of, score
from .store.bulk import Sink, after_bulk_load, digest, key_for, update_by_id
from .store.database import Engine

PARTS = {
    "person": (
        ["Ada", "Ben", "Chloe", "Dev", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Luis"],
        ["Berg", "Okafor", "Rivera", "Nair", "Moreau", "Weber", "Lindgren", "Costa", "Tanaka", "Ortega"],
    ),
    "place": (
        ["North", "South", "East", "West", "Upper", "Lower", "New", "Old", "Port", "Lake"],
        ["Harbor", "Ridge", "Falls", "Haven", "Field", "Crossing", "Point", "Valley", "Bay", "Hill"],
    ),
    "organization": (
        ["Nordic", "Helix", "Brightgear", "Lidaro", "Ferro", "Stellar", "Quanta", "Apex", "Blue", "Iron"],
        ["Circuits", "Motors", "Sensors", "Metals", "Freight", "Automation", "Labs", "Systems"],
    ),
    "event": (
        ["Spring", "Autumn", "Annual", "Global", "Regional", "Winter"],
        ["Expo", "Summit", "Audit", "Launch", "Review", "Conference", "Recall"],
    ),
    "idea": (
        ["Lean", "Near-shoring", "Modular", "Predictive", "Circular", "Open"],
        ["strategy", "maintenance", "design", "sourcing", "pricing", "warehousing"],
    ),
}


RELATIONS = {
    "person": [("works_at", "organization"), ("lives_in", "place"), ("speaks_at", "event"), ("champions", "idea")],
    "organization": [
        ("supplies", "organization"),
        ("headquartered_in", "place"),
        ("exhibits_at", "event"),
        ("adopts", "idea"),
        ("ceo", "person"),
    ],
    "place": [("near", "place"), ("hosts", "event")],
    "event": [("held_in", "place"), ("about", "idea")],
    "idea": [("related_to", "idea"), ("proposed_by", "person")],
}


ORIGIN_MIX = [("web", 0.45), ("document", 0.2), ("tool", 0.15), ("person", 0.1), ("model", 0.1)]


@dataclass
class FactAcc:
    """A fact written, with what its final score needs: its best contribution by source (R26), its disputes (R28)."""

    id: int
    subject: int  # its entities' ids, whose active facts are counted
    obj: int
    best: dict[tuple[str, str], float] = field(default_factory=dict)
    disputes: list[float] = field(default_factory=list)


def _skewed(rnd: random.Random, n: int) -> int:
    """An index in [0, n) with a heavy head: a few entities have most facts."""
    return min(n - 1, int(n * (rnd.paretovariate(1.2) - 1) / 20) % n)


def generate(
    engine: Engine,
    *,
    supports: int,
    seed: int = 1,
    org: str = "bench",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Write an organization whose graphs hold about `supports` supports; returns the counts."""
    rnd = random.Random(seed)
    sink = Sink(engine)
    people = [f"p{i}" for i in range(12)]
    _organization(sink, org, people=people)
    entities = _world_entities(rnd, max(40, max(50, supports // 6) // 3))
    hosts = [f"news{i}.example" for i in range(max(20, supports // 400))]
    by_kind = {k: [i for i, e in enumerate(entities) if e[0] == k] for k in WORLD_KINDS}
    book = Written(
        sink, entities, {"entity": len(entities) + 1, "fact": 1}, rnd, org, people, hosts, key_for(engine), by_kind
    )
    for i, (kind, name) in enumerate(entities):  # a flush writes every table in foreign-key order (store/bulk.py)
        sink.put("entity", _entity(i + 1, "world", owner=org, kind=kind, name=name))
    flow_count = 0
    while book.written < supports:
        book.run(progress=lambda: progress(min(book.written, supports), supports) if progress else None)
        flow_count += len(book.flow_facts)
        _score_facts(engine, sink, list(book.flow_facts.values()))  # a run's Flow graph is complete: free it
        book.flow_facts.clear()
        book.flow_entities.clear()
    sink.write()
    _disputes_and_map(engine, book)
    after_bulk_load(engine)
    counts = {"supports": book.written, "world_facts": len(book.facts), "flow_facts": flow_count}
    return counts | {"runs": book.runs, "turns": book.turns, "entities": book.next_id["entity"] - 1}


def _organization(sink: Sink, org: str, *, people: list[str]) -> None:
    """The organization, its people and their memberships (the first is its owner), written with the next flush."""
    sink.put("organization", {"id": org, "seq": 0, "name": "Bench Robotics"})  # its settings: the models' defaults
    for i, p in enumerate(people):
        sink.put("person", {"id": p, "seq": i, "name": f"Person {i}"})
        sink.put("membership", {"person_id": p, "org_id": org, "role": "owner" if i == 0 else "member"})


def _world_entities(rnd: random.Random, n: int) -> list[tuple[str, str]]:
    """`n` World entities (kind, name), the kinds in turn, each name made once."""
    entities: list[tuple[str, str]] = []
    seen_names: set[tuple[str, str]] = set()
    while len(entities) < n:
        kind = WORLD_KINDS[len(entities) % len(WORLD_KINDS)]
        first, second = PARTS[kind]
        name = f"{rnd.choice(first)} {rnd.choice(second)}"
        if (kind, name) in seen_names:
            name = f"{name} {len(entities)}"
        seen_names.add((kind, name))
        entities.append((kind, name))
    return entities


def _entity(ident: int, graph: str, *, owner: str, kind: str, name: str) -> Obj:
    """An entity row, no fact of it active yet."""
    row = {"id": ident, "graph": graph, "owner": owner, "kind": kind, "key": name.casefold(), "name": name}
    return row | {"aliases": [], "alias_since": []}


def _disputes_and_map(engine: Engine, book: Written) -> None:
    """Disputes on about one World fact in two hundred, then every fact's weight and the map (R18, R32)."""
    sink, facts, rnd = book.sink, book.facts, book.rnd
    for acc in list(facts.values())[:: max(1, len(facts) // max(1, len(facts) // 100))]:
        if rnd.random() < 0.5:
            acc.disputes.append(DISPUTE_CONTRIBUTION)
            sink.put(
                "dispute", {"fact_id": acc.id, "by": rnd.choice(book.people[1:]), "contribution": DISPUTE_CONTRIBUTION}
            )
    active_count = _score_facts(engine, sink, list(facts.values()))  # World facts: World entities, the first ids
    kinds = Counter(book.entities[eid - 1][0] for eid in active_count)
    for kind, n in [*kinds.items(), ("", active_count.total() // 2)]:  # an active fact counts its two entities
        sink.put("mapcount", {"org_id": book.org, "kind": kind, "n": n})
        sink.put("maplog", {"org_id": book.org, "kind": kind, "moment": 0, "n": n})  # R32: made before moment 1
    sink.write()


def _score_facts(engine: Engine, sink: Sink, accs: list[FactAcc]) -> Counter[int]:
    """Write the final weight of these facts (R26, R28) and their entities' counts; returns active facts per entity id."""
    sink.write()
    scores: list[dict[str, Any]] = []
    active: Counter[int] = Counter()
    for acc in accs:
        sc = score([(o, k, c) for (o, k), c in acc.best.items()], acc.disputes, retracted=False)
        scores.append({"fid": acc.id, **asdict(sc)})  # its log_odds, weight, sources and status
        if sc.status == "active":
            active.update((acc.subject, acc.obj))
    update_by_id(engine, "fact", "fid", scores)
    update_by_id(engine, "entity", "eid", [{"eid": k, "active_facts": v} for k, v in active.items()])
    return active


@dataclass
class Written:
    """What is written so far and what writes next (a run's Flow facts and entities are cleared run by run)."""

    sink: Sink
    entities: list[tuple[str, str]]
    next_id: dict[str, int]
    rnd: random.Random
    org: str
    people: list[str]
    hosts: list[str]
    id_key: str  # used ids are kept as digests under the database's key (store/bulk.py)
    by_kind: dict[str, list[int]]  # World entities' indexes by kind
    facts: dict[tuple[int, str, int], FactAcc] = field(default_factory=dict)  # by (subject id, relation, object id)
    flow_facts: dict[tuple[int, str, int], FactAcc] = field(default_factory=dict)
    flow_entities: dict[tuple[str, int], int] = field(default_factory=dict)
    written: int = 0
    runs: int = 0
    turns: int = 0

    def run(self, *, progress: Callable[[], None]) -> None:
        """A run of five turns by the next person, ended; `progress` told after each turn."""
        run_id, person = f"run{self.runs}", self.people[self.runs % len(self.people)]
        self.sink.put("run", {"id": run_id, "seq": self.runs, "org_id": self.org, "person_id": person, "ended": True})
        self.sink.put("usedid", {"kind": "run", "id": digest(self.id_key, "run", run_id)})
        self.runs += 1
        for _ in range(5):
            self.turn(run_id)
            progress()

    def turn(self, run_id: str) -> None:
        """A turn of ten records, one in twenty failed (R2: its evidence stays, nothing is taught)."""
        turn_id = f"t{self.turns}"
        failed = self.rnd.random() < 0.05
        row = {"id": turn_id, "seq": self.turns, "run_id": run_id, "status": "failed" if failed else "completed"}
        self.sink.put("turn", row | {"next_record": 11, "map": {"kinds": {}, "facts": 0}, "skipped": [], "steps": []})
        self.sink.put("usedid", {"kind": "turn", "id": digest(self.id_key, "turn", turn_id)})
        self.turns += 1
        for r in range(1, 11):
            self.record(run_id, turn_id, number=r, failed=failed)

    def record(self, run_id: str, turn_id: str, *, number: int, failed: bool) -> None:
        """A record of one to three claims from a random source, and what it teaches (R25)."""
        rnd = self.rnd
        origin = rnd.choices([o for o, _ in ORIGIN_MIX], [w for _, w in ORIGIN_MIX])[0]
        source = {  # every entry draws, whatever the origin: a seed's memory depends on it
            "web": f"https://{rnd.choice(self.hosts)}/a{rnd.randrange(50)}",
            "document": f"doc:{rnd.randrange(200)}",
            "tool": f"tool:{rnd.randrange(8)}",
            "person": rnd.choice(self.people),
            "model": "model",
        }[origin]
        rel = round(rnd.uniform(0.55, 0.95), 2) if rnd.random() < 0.1 else None
        claims = [self.claim() for _ in range(rnd.choice((1, 1, 2, 3)))]
        rec_id = f"{turn_id}#{number}"
        row = {"id": rec_id, "run_id": run_id, "turn_id": turn_id, "number": number, "origin": origin, "source": source}
        said = {"excerpt": f"{source} says {len(claims)} things.", "reliability": rel}
        self.sink.put("record", row | said | {"claims": []})
        if not failed:  # R2: the evidence stays, nothing is taught
            key, weight = independence_key(origin, source, run_id=run_id), reliability_of(origin, rel)
            support = {"key": key, "origin": origin, "contribution": contribution(weight), "run_id": run_id}
            self.teach(dict.fromkeys(claims), support | {"turn_id": turn_id, "record_id": rec_id})  # R25

    def claim(self) -> tuple[int, str, int]:
        """A claim between World entities, its subjects skewed (a few entities have most facts)."""
        rnd = self.rnd
        if rnd.random() < 0.1:
            subj = rnd.choice(self.by_kind[rnd.choice(WORLD_KINDS)][:1] or [0])
        else:
            subj = _skewed(rnd, len(self.entities))
        relation, okind = rnd.choice(RELATIONS[self.entities[subj][0]])
        objects = self.by_kind[okind]
        return subj, relation, objects[_skewed(rnd, len(objects))]

    def teach(self, claims: Iterable[tuple[int, str, int]], support: Obj) -> None:
        """Each claim's support of its World fact and its Flow fact (R7)."""
        for claim in claims:
            for graph, owner in (("world", self.org), ("flow", support["run_id"])):
                acc = self.fact(graph, owner=owner, claim=claim)
                src = (support["origin"], support["key"])
                acc.best[src] = max(acc.best.get(src, -math.inf), support["contribution"])
                self.written += 1  # the supports' count, and the last one's id
                self.sink.put("support", {"id": self.written, "fact_id": acc.id, **support})

    def fact(self, graph: str, *, owner: str, claim: tuple[int, str, int]) -> FactAcc:
        """The fact a claim of World entity indexes names in `graph`, written the first time it is named."""
        subj, relation, obj = claim
        if graph == "world":
            triple, kept = (subj + 1, relation, obj + 1), self.facts
        else:  # a run's own Flow graph: its copies of the entities (the dict is emptied run by run)
            triple, kept = (self.flow_entity(owner, subj), relation, self.flow_entity(owner, obj)), self.flow_facts
        if triple not in kept:  # a fact row now (its supports follow it), its weight set once all are known
            kept[triple] = FactAcc(self.next_id["fact"], triple[0], triple[2])
            self.next_id["fact"] += 1
            row = {"id": kept[triple].id, "graph": graph, "owner": owner, "subject_id": triple[0], "relation": relation}
            self.sink.put("fact", row | {"object_id": triple[2], "object_key": entity_key(triple[2])})
        return kept[triple]

    def flow_entity(self, run: str, e: int) -> int:
        """The id of a World entity's copy in a run's Flow graph (R7), written the first time it is named."""
        if (run, e) not in self.flow_entities:
            self.flow_entities[(run, e)] = self.next_id["entity"]
            kind, name = self.entities[e]
            self.sink.put("entity", _entity(self.next_id["entity"], "flow", owner=run, kind=kind, name=name))
            self.next_id["entity"] += 1
        return self.flow_entities[(run, e)]


_shown = {"percent": -1}


def progress_bar(done: int, total: int) -> None:
    """A one-line progress bar on standard error, redrawn at each whole percent."""
    percent = 100 * done // max(total, 1)
    if percent != _shown["percent"]:
        _shown["percent"] = percent
        bar = "#" * (40 * percent // 100)
        end = "\n" if percent >= 100 else ""
        sys.stderr.write(f"\rgenerating [{bar:.<40}] {percent:3d}% of {total} supports{end}")
        sys.stderr.flush()
