"""Use cases of reading memory: a turn's graph reads (R18 to R21) and an organization's map (R18)."""

from __future__ import annotations

from typing import Any, cast

from .. import errors as E
from ..plain import Obj
from ..rules.budget import budget_allows, read_offered
from ..rules.visibility import owners
from ..rules.wording import map_paragraph
from ..store import probes, words
from ..store import reads as kept
from ..store.dashboard import fact_at
from ..store.graph import map_counts
from ..store.past import last_moment
from ..store.repository import Repository
from ..store.turns import open_work
from . import shapes as sh
from .results import ReadResult


def _named(f: Obj) -> tuple[object, ...]:
    """What names a fact, as a read writes it: its subject, relation and object."""
    return (*[(e.get("name"), e.get("kind"), e.get("value")) for e in (f["subject"], f["object"])], f["relation"])


class Reads(Repository):
    """Use cases of reading memory."""

    def read(
        self,
        turn_id: str,
        *,
        call: str,
        args: Obj,
        within: str | None = None,
        step: str | None = None,
        given: Obj | None = None,
    ) -> ReadResult:
        """A turn's graph read: offered (R4, R19), in budget (R21), of visible graphs (R20); kept even refused (#38)."""
        try:
            return self._graph_read(turn_id, call=call, args=args, within=within, step=step, given=given)
        except E.Refusal as refusal:  # its transaction undone; the refusal is kept in its own
            if isinstance(refusal, E.UnknownTurn):
                raise
            with self.database.driver() as db:
                said, nested = (refusal.reason, refusal.message), open_work(db, turn_id, within) if within else None
                kept.keep(db, turn_id, (step, within, nested), call=call, args=given or args, refusal=said)
            raise

    def _graph_read(
        self, turn_id: str, *, call: str, args: Obj, within: str | None, step: str | None, given: Obj | None
    ) -> ReadResult:
        # a words resolve takes the general path, where its trace is kept in its transaction
        turn_level = within is None and step is None and call in ("GraphResolve", "GraphExpand")
        turn_level = turn_level and args.get("match") != "words"
        if turn_level and self.database.one_statement_reads:
            with self.database.driver(one_statement=True) as one:
                done = probes.counted_read(one, turn_id, call, args, kept=given or args)  # its trace kept in it
            if done is not None:
                used, cap, result = done
                near = (self._near(turn_id, args) or None) if call == "GraphResolve" and not result else None
                return ReadResult(result=result, probes_used=used, cap=cap, near=near)
        with self.database.driver() as db:
            turn = probes.turn_to_read(db, turn_id)
            if turn is None:
                raise E.UnknownTurn(turn_id)
            run_id, wf_id, cap = turn.run_id, turn.workflow_id, turn.memory_probes  # cap None: none (R21)
            spec = self._step_of(wf_id, turn.steps or [], step) if step is not None else None
            self._refuse_unless_open(turn_id, turn.status, run_id, bool(turn.ended))
            nested = open_work(db, turn_id, within) if within is not None else None
            if within is not None and nested is None:
                raise E.NestedNotOpen(within, turn_id)
            if not read_offered(within=within, step=spec):
                raise E.NotOffered(within=within, step=step)
            if not budget_allows(used=turn.probes_used, cap=cap):
                raise E.BudgetExhausted(turn_id, cap)
            seen = owners(run_id=run_id, org_id=turn.org_id, person_id=turn.person_id)
            near = None
            told: list[Obj] | list[tuple[Any, ...]]  # what its trace keeps (reads.keep)
            if call == "GraphResolve":
                result, near = words.resolve_read(db, seen, args)
                told = result
            elif call == "GraphExpand":  # its query's rows kept as they are
                graph = args.get("graph", "world")
                told = rows = probes.expand_rows(db, seen, args["entity"], graph, args.get("relation"))
                result = probes.expanded(rows)
            else:
                told = result = probes.source(db, seen, run_id, turn.org_id, args["fact"], args.get("graph", "world"))
            # The count is one guarded UPDATE, so concurrent probes of one turn never pass the cap.
            if not probes.count_read(db, turn_id, cap):  # a concurrent use case got there first
                raise (E.BudgetExhausted(turn_id, cap) if cap is not None else E.TurnNotOpen.ended_meanwhile(turn_id))
            asked, at = given or args, (step, within, nested)
            kept.keep(
                db, turn_id, at, call=call, args=asked, result=told, near=near, records=turn.next_record, counted=True
            )
            return ReadResult(result=result, probes_used=turn.probes_used + 1, cap=cap, near=near)

    def _near(self, turn_id: str, args: Obj) -> list[Obj]:
        """The `near` of an exact GraphResolve in one statement that found nothing (R20, R23), kept with its read."""
        with self.database.driver(one_statement=True) as one:
            near = words.turn_near(one, turn_id, args)
            if near:
                kept.add_near(one, turn_id, near)
            return near

    def turn_reads(self, turn_id: str) -> list[sh.KeptRead]:
        """The reads a turn made, in order, with what each was told or why it was refused (the recall trace)."""
        return cast("list[sh.KeptRead]", self._read(kept.kept, turn=turn_id))

    def fact_readers(self, org_id: str, fact_id: int) -> list[sh.FactReader]:
        """The turns of an organization that read a fact (told by GraphExpand, asked of GraphSource), in order."""
        with self.database.transaction(write=False) as s:
            fact = fact_at(s, fact_id, last_moment(s))
            found = kept.naming(s, org=org_id, name=fact["subject"]["name"]) if fact else []
        wanted, out = _named(fact) if fact else None, []
        for r in found:
            told = r["result"] if r["call"] == "GraphExpand" else [r["args"]["fact"]]  # GraphSource's: no weight
            said = {"run": r["run"], "turn": r["turn"], "call": r["call"]}
            out += [{**said, "weight": f.get("weight")} for f in told if _named(f) == wanted]
        return cast("list[sh.FactReader]", out)

    def reads_then(self, org_id: str, moment: int, *, last: int = 5) -> tuple[int, list[sh.KeptRead]]:
        """The reads the organization's turns made by `moment` (R32, `state --at`): how many, the `last` newest first."""
        with self.database.transaction(write=False) as s:
            before = moment + 1 if moment >= last_moment(s) else moment
            return cast("tuple[int, list[sh.KeptRead]]", kept.made_before(s, org=org_id, moment=before, last=last))

    def org_map(self, org_id: str) -> sh.OrgMap:
        """R18: the map of an organization's World graph now, with the paragraph a turn carries."""
        with self.database.transaction(write=False) as s:
            org = self._org(s, org_id)
            counts = map_counts(s, org_id)
            return cast(sh.OrgMap, {**counts, "paragraph": map_paragraph(org.name, counts["kinds"], counts["facts"])})
