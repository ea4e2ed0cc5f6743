"""The scenario export (#23): what memory recorded, as `memory-scenario/1` that replays to its state and reads;
events in their moments' order (R32); what cannot be written back (R17, R29, R30) is left out, named (formats.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from .. import errors as E
from ..plain import Obj
from ..store import past
from ..store.dashboard import Recorded, recorded
from ..store.reads import kept
from ..store.repository import Repository
from .read_events import place_reads, state_reads

FORMAT = "memory-scenario/1"
ERASED_KEY = "person:erased:"  # R30: what a deleted account's id became in records and supports


class Export(Repository):
    """The scenario export: one read use case."""

    def export_scenario(
        self, org: str | None = None, run: str | None = None, *, where: str | None = None
    ) -> tuple[Obj, list[str]]:
        """The document and a sentence for each thing left out; of one `org` or one `run`; `where` names the memory."""
        with self.database.transaction(write=False) as s:
            if org is not None:
                self._org(s, org)
            if run is not None:
                r = self._run(s, run)
                if org is not None and r.org_id != org:
                    raise E.UnknownRun(run)
                org = r.org_id
            rows = recorded(s, org=org, run=run)
            clock = past.last_moment(s)
            reads = kept(s, runs=[r["id"] for r in rows.runs])
        where = where or self.database.shown()
        return write_back(rows, org=org, run=run, where=where, clock=clock, reads=reads)

    def read_trace(self, at: int | None = None) -> Obj:
        """The reads kept (before moment `at` + 1, R32) as `state` shows them, numbered as `export` writes them."""
        with self.database.transaction(write=False) as s:
            reads = kept(s)
            _, index = events_of(recorded(s), reads)
        return state_reads([r for r in reads if at is None or r["moment"] < at], index)


def without_nulls(obj: Any) -> Any:
    """A stored value as a scenario writes it: keys whose value is null left out."""
    if isinstance(obj, dict):
        return {k: without_nulls(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [without_nulls(v) for v in obj]
    return obj


def _erased(r: Obj) -> bool:
    """A person's record whose person deleted their account since (its source is their erased key)."""
    return r["origin"] == "person" and str(r["source"] or "").startswith(ERASED_KEY)


def _grouped(rows: Iterable[Obj], key: str) -> dict[Any, list[Obj]]:
    """Rows by the value of one key, each group in the rows' order."""
    groups: dict[Any, list[Obj]] = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups


def _cancelled_by_end_run(turns: dict[str, Obj], moments: list[Obj]) -> set[str]:
    """Turns cancelled with no turn_ended moment of their own: end_run cancelled them."""
    ended = {m["turn"] for m in moments if m["what"] == "turn_ended"}
    return {t for t, v in turns.items() if v["status"] == "cancelled" and t not in ended}


def _called_again(works: dict[str, list[Obj]]) -> set[int]:
    """Nested work called again later in its turn (so returned before)."""
    return {
        w["id"] for ws in works.values() for i, w in enumerate(ws) if any(v["work"] == w["work"] for v in ws[i + 1 :])
    }


def _bounds(records: list[Obj]) -> tuple[dict[int, int], dict[int, int]]:
    """Each nested work's first and last record numbers."""
    nested = [r for r in records if r["nested"] is not None]
    return {r["nested"]: r["number"] for r in reversed(nested)}, {r["nested"]: r["number"] for r in nested}


def _opening(turn_id: str, records: list[Obj], *, run: str, replaces: str | None) -> Obj:
    """The `open_turn` event: the request is the turn's record number 0."""
    request = next((r for r in records if r["number"] == 0), None) or {"excerpt": "", "claims": []}
    claims = without_nulls(request["claims"])
    text = request["excerpt"] or ""
    asked = {"text": text, "claims": claims} if claims else text  # a request that claims nothing is its text
    opened = {"do": "open_turn", "run": run, "turn": turn_id, "request": asked}
    return opened | ({"replaces": replaces} if replaces else {})


#: What an export says it left out, by the moment that made it impossible to write back.
LEFT_OUT = {
    "run_started": "run {run}: its person deleted their account (R30), and a run cannot be started without its "
    "person, so its turns, records and Flow graph are left out",
    "run_erased": "an ephemeral run, erased when it ended at moment {n} (R17): its records and Flow graph "
    "are gone; what it taught the World graph stays in the database without it",
    "run_deleted": "a run deleted at moment {n} (R29): its records and Flow graph are erased; its supports of "
    "World and User facts stay in the database without their run, and are not in the export",
    "account_deleted": "an account deleted at moment {n} (R30): nothing of the person is kept; their supports "
    "(keyed person:erased:N) and disputes stay in the database, and are not in the export",
}


class _Writer:
    """Builds the events of one export from its rows, and what it leaves out."""

    def __init__(self, rec: Recorded) -> None:
        self.rec = rec
        self.omitted: list[str] = []
        self.events: list[Obj] = []
        self.runs = {r["id"]: r for r in rec.runs}
        self.kept_runs = {r["id"] for r in rec.runs if r["person"] is not None}
        self.turns = {t["id"]: t for t in rec.turns if t["run"] in self.kept_runs}
        self.by_end_run = _cancelled_by_end_run(self.turns, rec.moments)
        self.works = _grouped(rec.work.values(), "turn")  # each turn's nested work, in call order
        self.again = _called_again(self.works)
        self.changes = _grouped(rec.changes, "moment")  # settings changes by moment
        self.steps: dict[str, Iterator[list[Obj]]] = {}  # each turn's steps' events, those not yet written
        self.sources: set[str] = set()  # people named as a record's source

    def at(self, n: int, event: Obj) -> Obj:
        return {**event, "note": f"exported from moment {n}"}

    # --- a turn: its opening, its records, steps and nested work, placed by record number ----------

    def plan_turn(self, n: int, turn_id: str, replaces: str | None) -> list[Obj]:
        """The turn's events by segment (its opening, then each step), records placed by number; returns the opening's."""
        t = self.turns[turn_id]
        records = self.rec.records.get(turn_id, [])
        segments: dict[int, list[Obj]] = {-1: [self.at(n, _opening(turn_id, records, run=t["run"], replaces=replaces))]}
        segments |= {i: [{"do": "step", "turn": turn_id, "step": step["step"]}] for i, step in enumerate(t["steps"])}
        kept_by = {step["record"]: i for i, step in enumerate(t["steps"]) if step.get("record")}
        first, last = _bounds(records)
        before, tail = self._recordless(self.works.get(turn_id, []), first)
        person = self.runs[t["run"]]["person"]
        current = -1
        for r in (r for r in records if r["number"] != 0):  # the request opened the turn
            if r["id"] in kept_by:
                current = kept_by[r["id"]]
                self._kept(r, segments[current][0], turn_id=turn_id, person=person)
            else:
                self._place(r, segments[current], turn_id=turn_id, person=person, bounds=(first, last), before=before)
        segments[max(segments)] += tail
        self.steps[turn_id] = iter(list(segments.values())[1:])
        return segments[-1]

    def _kept(self, r: Obj, step: Obj, *, turn_id: str, person: str) -> None:
        """A record a step kept: inside its `step` event, or left out if its source was erased."""
        if _erased(r):
            self._record_left_out(r, turn_id, "the step is written without it, and ")
        else:
            step["record"] = self._record(r, person)

    def _place(
        self, r: Obj, segment: list[Obj], *, turn_id: str, person: str, bounds: tuple[dict, dict], before: dict
    ) -> None:
        """A record in its segment, its nested work called before its first record and returned after its last."""
        first, last = bounds
        w = self.rec.work.get(r["nested"]) if r["nested"] is not None else None
        if w is not None and first[w["id"]] == r["number"]:
            segment += [*before.get(w["id"], []), {"do": "call", "turn": turn_id, "work": w["work"]}]
        if _erased(r):
            self._record_left_out(r, turn_id, "")
        else:
            within = {"within": w["work"]} if w is not None else {}
            segment.append({"do": "record", "turn": turn_id, **self._record(r, person), **within})
        if w is not None and last[w["id"]] == r["number"] and self._returned(w):
            segment.append(self._return(w))

    def _recordless(self, works: list[Obj], first: dict[int, int]) -> tuple[dict[int, list[Obj]], list[Obj]]:
        """Nested work that recorded nothing, by the recorded call of that work it precedes; and those last in a turn."""
        before: dict[int, list[Obj]] = {}
        tail: list[Obj] = []
        for w in works:
            if w["id"] in first:
                continue
            nxt = next((v for v in works if v["work"] == w["work"] and v["id"] > w["id"] and v["id"] in first), None)
            made = [{"do": "call", "turn": w["turn"], "work": w["work"]}]
            if self._returned(w):
                made.append(self._return(w))
            if nxt is None:
                tail += made
            else:
                before.setdefault(nxt["id"], []).extend(made)
        return before, tail

    def _returned(self, w: Obj) -> bool:
        """Whether nested work was returned by an event: not when end_run cancelled its last call with its turn."""
        cancelled_with_turn = w["status"] == "cancelled" and w["turn"] in self.by_end_run
        return w["status"] != "open" and (w["id"] in self.again or not cancelled_with_turn)

    @staticmethod
    def _return(w: Obj) -> Obj:
        return {"do": "return", "turn": w["turn"], "work": w["work"], "status": w["status"]}

    def _record(self, r: Obj, person: str) -> Obj:
        """A record's fields as an event writes them; a person named as its source is exported too."""
        if r["origin"] == "person" and r["source"] not in (None, person):
            self.sources.add(r["source"])
        given = {k: r[k] for k in ("origin", "source", "excerpt", "reliability") if r[k] is not None}
        return given | {"claims": without_nulls(r["claims"])}

    def _record_left_out(self, r: Obj, turn_id: str, then: str) -> None:
        self.omitted.append(
            f"record {r['id']}: its source is an account deleted since ({r['source']}, R30), which names no one "
            f"to record it for; {then}the records after it in {turn_id} are numbered one less"
        )

    def step(self, n: int, turn_id: str) -> list[Obj]:
        events = next(self.steps[turn_id], [])  # a turn's step moments come in its steps' order
        return [self.at(n, events[0]), *events[1:]] if events else []

    # --- the moments, in order ----------------------------------------------------------------

    def moment(self, m: Obj) -> list[Obj]:
        """The events of one moment (R32), or none, with what it left out said."""
        if self._left_out(m):
            return []
        if m["turn"] in self.turns and m["what"] in ("turn_opened", "step", "turn_ended"):
            return self._turn_moment(m)
        if m["what"] in ("dispute", "retract"):
            return self._correction(m)
        return self._run_moment(m)

    def _left_out(self, m: Obj) -> bool:
        """Whether a moment cannot be written back (said in `omitted`, but a run never kept at all)."""
        what = "run_erased" if m["what"] == "run_ended" and m["detail"] == "erased" else m["what"]
        if what not in LEFT_OUT or what == "run_started" and m["run"] in self.kept_runs:
            return False
        if what != "run_started" or m["run"] in self.runs:
            self.omitted.append(LEFT_OUT[what].format(run=m["run"], n=m["n"]))
        return True

    def _turn_moment(self, m: Obj) -> list[Obj]:
        n, what, turn = m["n"], m["what"], m["turn"]
        if what == "turn_opened":
            return self.plan_turn(n, turn, m["detail"])
        if what == "step":
            return self.step(n, turn)
        return [self.at(n, {"do": "end_turn", "turn": turn, "status": m["detail"]})]

    def _run_moment(self, m: Obj) -> list[Obj]:
        n, what, run = m["n"], m["what"], m["run"]
        if what == "run_started":
            r = self.runs[run]
            start: Obj = {"do": "start_run", "run": run, "org": r["org"], "person": r["person"]}
            start |= {"workflow": r["workflow"]} if r["workflow"] else {}
            return [self.at(n, start | {"surface": r["surface"], "ephemeral": r["requested_ephemeral"]})]
        if what == "run_ended" and run in self.kept_runs:
            return [self.at(n, {"do": "end_run", "run": run})]
        return self._settings(m) if what == "settings" else []

    def _settings(self, m: Obj) -> list[Obj]:
        changes = self.changes.get(m["n"], [])
        if not changes:
            return []
        if changes[0]["by"] is None:
            self.omitted.append(f"the settings change at moment {m['n']}: made by an account deleted since (R30)")
            return []
        settings = {c["setting"]: c["new"] for c in changes}
        return [self.at(m["n"], {"do": "set_settings", "org": m["org"], "by": changes[0]["by"], "settings": settings})]

    def _correction(self, m: Obj) -> list[Obj]:
        n, what = m["n"], m["what"]
        fact = self.rec.facts.get(n)
        if m["person"] is None:
            self.omitted.append(f"the {what} at moment {n}: made by an account deleted since (R30)")
            return []
        if fact is None:
            self.omitted.append(f"the {what} at moment {n}: the fact it named cannot be found")
            return []
        event = {"do": what, "org": m["org"], "by": m["person"], "fact": fact, "graph": m["detail"] or "world"}
        return [self.at(n, event)]


def _people(rec: Recorded, writer: _Writer, *, org: str | None, run: str | None) -> list[Obj]:
    """The people exported and those records name as their source, with the exported organizations' memberships."""
    orgs = {o["id"] for o in rec.orgs}
    wanted = _wanted(rec, org=org, run=run) | writer.sources  # once, not for each person
    return [
        {"id": p["id"], "name": p["name"], "memberships": {o: r for o, r in p["memberships"].items() if o in orgs}}
        for p in rec.people
        if p["id"] in wanted
    ]


def _wanted(rec: Recorded, *, org: str | None, run: str | None) -> set[str]:
    """The people an export names besides the records' sources."""
    if run is not None:
        return {r["person"] for r in rec.runs if r["person"]} | {o["owner"] for o in rec.orgs}
    return {p["id"] for p in rec.people if org is None or org in p["memberships"]}


def _description(where: str, omitted: list[str], *, scope: str, clock: int, one_run: bool) -> str:
    """What the export holds and leaves out, in sentences."""
    said = [
        f"What {where} recorded ({scope}), up to moment {clock}, as events in the order their moments were "
        "taken, with the stored ids; records inside their turns, reads where they were made."
    ]
    if one_run:
        said.append(
            "Only this run is here: its turns see only what it taught, not the rest of the organization's memory, "
            "so maps (R18), shortcuts (R22) and weights may differ from the database's."
        )
    if omitted:
        said.append("Left out, since it cannot be written back: " + "; ".join(omitted) + ".")
    return " ".join(said)


def events_of(rec: Recorded, reads: list[Obj]) -> tuple[_Writer, dict[int, int]]:
    """The writer with every event, the kept reads placed among them (read_events.py), each read's index by id."""
    writer, starts = _Writer(rec), dict[int, int]()
    for m in rec.moments:
        made = writer.moment(m)
        starts |= {m["n"]: len(writer.events)} if made else {}
        writer.events += made
    return writer, place_reads(writer.events, reads, starts=starts, work=rec.work)


def write_back(
    rec: Recorded, *, org: str | None, run: str | None, where: str, clock: int, reads: list[Obj]
) -> tuple[Obj, list[str]]:
    """The document and what it leaves out (see the module's docstring)."""
    writer, _ = events_of(rec, reads)
    used = {r["workflow"] for r in rec.runs}
    scope = f"run {run}" if run else f"organization {org}" if org else "everything"
    when = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    doc = {
        "format": FORMAT,
        "title": f"Export of {where} at {when}" + (f": {scope}" if org or run else ""),
        "description": _description(where, writer.omitted, scope=scope, clock=clock, one_run=run is not None),
        "organizations": [without_nulls(o) for o in rec.orgs],
        "people": _people(rec, writer, org=org, run=run),
        "workflows": [without_nulls(w) for w in rec.workflows if run is None or w["id"] in used],
        "events": writer.events,
    }
    return doc, writer.omitted
