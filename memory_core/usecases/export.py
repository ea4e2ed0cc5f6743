"""The scenario export (issue #23): what memory recorded, written back as `memory-scenario/1`.

The document holds the organizations (with their settings as they were made), the people with
their memberships, the workflows with their steps and budget, then every event in the order its
moment was taken (R32), with the stored ids: runs started and ended, turns opened (with the request
and the turn they replace) and ended, steps, settings changes, disputes and retractions. Records
are not moments: each is put inside its turn, in record-number order, right after the record
numbered before it (the request opens the turn); a record a step kept is that `step` event's own
(the store keeps which, `turn.steps[i].record`), nested work is called right before its first
record and returned right after its last (if it recorded nothing, right before the next call of the
same work, else last in its turn). Replaying it gives the state the database holds, reads
aside: reads are not stored, so none is written and each turn's `probes_used` replays as 0.

What cannot be written back is left out and named (`omitted`): runs erased (R17, R29: their
records are gone, their supports stay without them), accounts deleted (R30: nothing of the person
is kept) with their runs, disputes and records, and settings changes by them. A replay of such an
export lacks what those gave the weights.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .. import errors as E
from ..plain import Obj
from ..store import past
from ..store.recorded import Recorded, recorded
from .base import UseCases

FORMAT = "memory-scenario/1"
ERASED_KEY = "person:erased:"  # R30: what a deleted account's id became in records and supports


class Export(UseCases):
    """The scenario export: one read use case."""

    def export_scenario(
        self, org: str | None = None, run: str | None = None, *, where: str | None = None
    ) -> tuple[Obj, list[str]]:
        """What memory recorded as a `memory-scenario/1` document, and one sentence for each thing it
        could not write back. `org` limits it to one organization (its members), `run` to one run
        (with its organization, its people and its workflow); `where` names the memory in the title."""
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
        where = where or self.database.shown()
        return write_back(rows, org=org, run=run, where=where, clock=clock)


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


class _Writer:
    """Builds the events of one export from its rows, and what it leaves out."""

    def __init__(self, rec: Recorded) -> None:
        self.rec = rec
        self.omitted: list[str] = []
        self.events: list[Obj] = []
        self.runs = {r["id"]: r for r in rec.runs}
        self.kept_runs = {r["id"] for r in rec.runs if r["person"] is not None}
        self.turns = {t["id"]: t for t in rec.turns if t["run"] in self.kept_runs}
        ended = {m["turn"] for m in rec.moments if m["what"] == "turn_ended"}
        self.by_end_run = {t for t, v in self.turns.items() if v["status"] == "cancelled" and t not in ended}
        self.works: dict[str, list[Obj]] = {}  # each turn's nested work, in call order
        for w in rec.work.values():
            self.works.setdefault(w["turn"], []).append(w)
        self.again = {  # nested work called again later in its turn (so returned before)
            w["id"]
            for ws in self.works.values()
            for i, w in enumerate(ws)
            if any(v["work"] == w["work"] for v in ws[i + 1 :])
        }
        self.changes: dict[int, list[Obj]] = {}  # settings changes by moment
        for c in rec.changes:
            self.changes.setdefault(c["moment"], []).append(c)
        self.segments: dict[str, dict[int, list[Obj]]] = {}  # turn -> step index (-1: its opening) -> events
        self.step_seen: dict[str, int] = {}
        self.sources: set[str] = set()  # people named as a record's source

    def at(self, n: int, event: Obj) -> Obj:
        return {**event, "note": f"exported from moment {n}"}

    # --- a turn: its opening, its records, steps and nested work, placed by record number ----------

    def plan_turn(self, n: int, turn_id: str, replaces: str | None) -> list[Obj]:
        """The turn's events, by segment: its opening (with the records right after it), each step
        (a record it kept inside it, the records numbered after it right after); returns the opening's."""
        t, run = self.turns[turn_id], self.runs[self.turns[turn_id]["run"]]
        records = self.rec.records.get(turn_id, [])
        request = next((r for r in records if r["number"] == 0), None) or {"excerpt": "", "claims": []}
        claims = without_nulls(request["claims"])
        opened: Obj = {
            "do": "open_turn",
            "run": t["run"],
            "turn": turn_id,
            "request": {"text": request["excerpt"] or "", "claims": claims} if claims else request["excerpt"] or "",
        }
        if replaces:
            opened["replaces"] = replaces
        segments: dict[int, list[Obj]] = {-1: [self.at(n, opened)]}
        kept_by = {}
        for i, step in enumerate(t["steps"]):
            segments[i] = [{"do": "step", "turn": turn_id, "step": step["step"]}]
            if step.get("record"):
                kept_by[step["record"]] = i
        works = self.works.get(turn_id, [])
        first: dict[int, int] = {}  # nested work -> the numbers of its first and last records
        last: dict[int, int] = {}
        for r in records:
            if r["nested"] is not None:
                first.setdefault(r["nested"], r["number"])
                last[r["nested"]] = r["number"]
        before, tail = self._recordless(works, first)
        current = -1
        for r in records:
            if r["number"] == 0:
                continue
            if r["id"] in kept_by:
                current = kept_by[r["id"]]
                if _erased(r):
                    self._record_left_out(r, turn_id, "the step is written without it, and ")
                else:
                    segments[current][0]["record"] = self._record(r, run["person"])
                continue
            w = self.rec.work.get(r["nested"]) if r["nested"] is not None else None
            if w is not None and first[w["id"]] == r["number"]:
                segments[current] += before.get(w["id"], [])
                segments[current].append({"do": "call", "turn": turn_id, "work": w["work"]})
            if _erased(r):
                self._record_left_out(r, turn_id, "")
            else:
                event = {"do": "record", "turn": turn_id, **self._record(r, run["person"])}
                if w is not None:
                    event["within"] = w["work"]
                segments[current].append(event)
            if w is not None and last[w["id"]] == r["number"] and self._returned(w):
                segments[current].append(self._return(w))
        segments[max(segments)] += tail
        self.segments[turn_id] = segments
        self.step_seen[turn_id] = 0
        return segments[-1]

    def _recordless(self, works: list[Obj], first: dict[int, int]) -> tuple[dict[int, list[Obj]], list[Obj]]:
        """Where nested work that recorded nothing is called (and returned): right before the next call
        of the same work that recorded something (a work is returned before it is called again), else
        last in its turn. Returns those calls by the recorded call they precede, and the last ones."""
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
        """Whether nested work was returned by an event: all but the last call of a work were (it is
        called again only once returned); the last, unless end_run cancelled it with its turn."""
        cancelled_with_turn = w["status"] == "cancelled" and w["turn"] in self.by_end_run
        return w["status"] != "open" and (w["id"] in self.again or not cancelled_with_turn)

    @staticmethod
    def _return(w: Obj) -> Obj:
        return {"do": "return", "turn": w["turn"], "work": w["work"], "status": w["status"]}

    def _record(self, r: Obj, person: str) -> Obj:
        out: Obj = {"origin": r["origin"]}
        if r["source"] is not None:
            out["source"] = r["source"]
            if r["origin"] == "person" and r["source"] != person:
                self.sources |= {r["source"]}
        for key in ("excerpt", "reliability"):
            if r[key] is not None:
                out[key] = r[key]
        out["claims"] = without_nulls(r["claims"])
        return out

    def _record_left_out(self, r: Obj, turn_id: str, then: str) -> None:
        self.omitted.append(
            f"record {r['id']}: its source is an account deleted since ({r['source']}, R30), which names no one "
            f"to record it for; {then}the records after it in {turn_id} are numbered one less"
        )

    def step(self, n: int, turn_id: str) -> list[Obj]:
        i = self.step_seen[turn_id]
        self.step_seen[turn_id] = i + 1
        events = self.segments[turn_id].get(i, [])
        return [self.at(n, events[0]), *events[1:]] if events else []

    # --- the moments, in order ----------------------------------------------------------------

    def moment(self, m: Obj) -> list[Obj]:
        n, what, run = m["n"], m["what"], m["run"]
        if what == "run_started" and run in self.kept_runs:
            r = self.runs[run]
            start: Obj = {"do": "start_run", "run": run, "org": r["org"], "person": r["person"]}
            if r["workflow"]:
                start["workflow"] = r["workflow"]
            start |= {"surface": r["surface"], "ephemeral": r["requested_ephemeral"]}
            return [self.at(n, start)]
        if what == "run_started" and run in self.runs:
            self.omitted.append(
                f"run {run}: its person deleted their account (R30), and a run cannot be started without its "
                "person, so its turns, records and Flow graph are left out"
            )
        if what == "turn_opened" and m["turn"] in self.turns:
            return self.plan_turn(n, m["turn"], m["detail"])
        if what == "step" and m["turn"] in self.turns:
            return self.step(n, m["turn"])
        if what == "turn_ended" and m["turn"] in self.turns:
            return [self.at(n, {"do": "end_turn", "turn": m["turn"], "status": m["detail"]})]
        if what == "run_ended" and m["detail"] == "erased":
            self.omitted.append(
                f"an ephemeral run, erased when it ended at moment {n} (R17): its records and Flow graph "
                "are gone; what it taught the World graph stays in the database without it"
            )
        elif what == "run_ended" and run in self.kept_runs:
            return [self.at(n, {"do": "end_run", "run": run})]
        if what == "run_deleted":
            self.omitted.append(
                f"a run deleted at moment {n} (R29): its records and Flow graph are erased; its supports of "
                "World and User facts stay in the database without their run, and are not in the export"
            )
        if what == "account_deleted":
            self.omitted.append(
                f"an account deleted at moment {n} (R30): nothing of the person is kept; their supports "
                "(keyed person:erased:N) and disputes stay in the database, and are not in the export"
            )
        if what == "settings":
            return self._settings(m)
        if what in ("dispute", "retract"):
            return self._correction(m)
        return []

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
    """Everyone; or an organization's members; or a run's person and the organization's owner; with
    the people records name as their source. Memberships are those of the organizations exported."""
    orgs = {o["id"] for o in rec.orgs}
    wanted = set(writer.sources)
    if run is not None:
        wanted |= {r["person"] for r in rec.runs if r["person"]} | {o["owner"] for o in rec.orgs}
    elif org is not None:
        wanted |= {p["id"] for p in rec.people if org in p["memberships"]}
    else:
        wanted |= {p["id"] for p in rec.people}
    return [
        {"id": p["id"], "name": p["name"], "memberships": {o: r for o, r in p["memberships"].items() if o in orgs}}
        for p in rec.people
        if p["id"] in wanted
    ]


def write_back(rec: Recorded, *, org: str | None, run: str | None, where: str, clock: int) -> tuple[Obj, list[str]]:
    """The document and what it leaves out (see the module's docstring)."""
    writer = _Writer(rec)
    for m in rec.moments:
        writer.events += writer.moment(m)
    workflows = rec.workflows
    if run is not None:
        used = {r["workflow"] for r in rec.runs}
        workflows = [w for w in workflows if w["id"] in used]
    scope = f"run {run}" if run else f"organization {org}" if org else "everything"
    when = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    said = [
        f"What {where} recorded ({scope}), up to moment {clock}, as events in the order their moments were "
        "taken, with the stored ids; records inside their turns. Reads are not stored, so none is here: each "
        "turn's probes_used replays as 0."
    ]
    if run is not None:
        said.append(
            "Only this run is here: its turns see only what it taught, not the rest of the organization's memory, "
            "so maps (R18), shortcuts (R22) and weights may differ from the database's."
        )
    if writer.omitted:
        said.append("Left out, since it cannot be written back: " + "; ".join(writer.omitted) + ".")
    doc = {
        "format": FORMAT,
        "title": f"Export of {where} at {when}" + (f": {scope}" if org or run else ""),
        "description": " ".join(said),
        "organizations": [without_nulls(o) for o in rec.orgs],
        "people": _people(rec, writer, org=org, run=run),
        "workflows": [without_nulls(w) for w in workflows],
        "events": writer.events,
    }
    return doc, writer.omitted
