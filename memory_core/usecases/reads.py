"""Use cases of reading memory: a turn's graph reads (R18 to R21) and an organization's map (R18)."""

from __future__ import annotations

from typing import cast

from .. import errors as E
from ..rules.budget import budget_allows, read_offered
from ..rules.visibility import owners
from ..rules.wording import map_paragraph
from ..store import probes, words
from ..store.graph import map_counts
from ..store.turns import open_work
from . import shapes as sh
from .base import Obj, UseCases
from .results import ReadResult


class Reads(UseCases):
    """Use cases of reading memory."""

    def read(
        self, turn_id: str, *, call: str, args: Obj, within: str | None = None, step: str | None = None
    ) -> ReadResult:
        """A graph read by a turn: offered (R4, R19), within budget (R21), of visible graphs (R20).
        It runs on the driver (probes.py): the turn check, one query, the count, one transaction.
        Where the dialect has it (PostgreSQL), a turn-level GraphResolve or GraphExpand is one
        statement (probes.counted_read)."""
        turn_level = within is None and step is None and call in ("GraphResolve", "GraphExpand")
        counted = words.counted_find if args.get("match") == "words" else probes.counted_read
        if turn_level and self.database.one_statement_reads:
            with self.database.driver(one_statement=True) as one:
                done = counted(one, turn_id, call, args)
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
            if within is not None and open_work(db, turn_id, within) is None:
                raise E.NestedNotOpen(within, turn_id)
            if not read_offered(within=within, step=spec):
                raise E.NotOffered(within=within, step=step)
            if not budget_allows(used=turn.probes_used, cap=cap):
                raise self._exhausted(turn_id, cap)
            seen = owners(run_id=run_id, org_id=turn.org_id, person_id=turn.person_id)
            near = None
            if call == "GraphResolve":
                result, near = words.resolve_read(db, seen, args)
            elif call == "GraphExpand":
                result = probes.expand(db, seen, args["entity"], args.get("graph", "world"), args.get("relation"))
            else:
                result = probes.source(db, seen, run_id, turn.org_id, args["fact"], args.get("graph", "world"))
            # The count is one guarded UPDATE, so concurrent probes of one turn never pass the cap.
            if not probes.count_read(db, turn_id, cap):  # a concurrent use case got there first
                raise (self._exhausted(turn_id, cap) if cap is not None else E.TurnNotOpen.ended_meanwhile(turn_id))
            return ReadResult(result=result, probes_used=turn.probes_used + 1, cap=cap, near=near)

    def _near(self, turn_id: str, args: Obj) -> list[Obj]:
        """The `near` of an exact GraphResolve counted in one statement that found nothing (R20, R23)."""
        with self.database.driver(one_statement=True) as one:
            return words.turn_near(one, turn_id, args)

    def org_map(self, org_id: str) -> sh.OrgMap:
        """R18: the map of an organization's World graph now, with the paragraph a turn carries."""
        with self.database.transaction(write=False) as s:
            org = self._org(s, org_id)
            counts = map_counts(s, org_id)
            return cast(sh.OrgMap, {**counts, "paragraph": map_paragraph(org.name, counts["kinds"], counts["facts"])})
