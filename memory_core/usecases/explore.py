"""Read-only use cases for the dashboard: lists, tables, breakdowns and previews."""

from __future__ import annotations

from typing import cast

from ..plain import Obj
from ..rules.shortcuts import DEFAULT_MIN_WEIGHT
from ..rules.vocabulary import GRAPHS
from ..store import dashboard
from ..store.drawing import entity_links, find_read, focus_read
from ..store.erasure import account_preview, run_preview
from ..store.past import export, graph_at
from ..store.repository import Repository
from ..store.snapshot import holds_memory
from . import shapes as sh


class Explore(Repository):
    """Read-only use cases for the dashboard."""

    def holds_memory(self) -> bool:
        """Whether the database holds an organization, person or run (a replay goes only into none)."""
        with self.database.transaction(write=False, fresh=True) as s:  # a load follows: as the primary has it
            return holds_memory(s)

    def export_state(self) -> Obj:
        """The whole memory as `memory-state/1` (without a replay's reads and refusals)."""
        return self._read(export)

    def organizations(self) -> list[sh.OrganizationPublic]:
        """Every organization: id, name, owner."""
        return cast("list[sh.OrganizationPublic]", self._read(dashboard.organizations))

    def people(self) -> list[sh.PersonPublic]:
        """Every person: id, name, and their role in each organization they belong to."""
        return cast("list[sh.PersonPublic]", self._read(dashboard.people))

    def members(self, org_id: str) -> list[sh.Member]:
        """The organization's people with their role (owner first)."""
        return cast("list[sh.Member]", self._read(dashboard.members, org_id))

    def workflows(self, org_id: str) -> list[Obj]:
        """The organization's workflows: budget and steps, as a scenario writes them."""
        return self._read(dashboard.workflows, org_id)

    def run_ids(self, org_id: str) -> list[str]:
        """The ids of the organization's stored runs, in the order they started (their turns unread)."""
        return self._read(dashboard.run_ids, org_id)

    def runs(self, org_id: str) -> list[sh.RunRow]:
        """The organization's stored runs with their turns' statuses, in the order they started."""
        return cast("list[sh.RunRow]", self._read(dashboard.runs, org_id))

    def timeline(self, org_id: str, *, runs: int = 20, turns: int = 120) -> sh.Timeline:
        """Runs at a glance (#39.5): the `runs` newest runs, their `turns` newest turns with records and reads."""
        return cast("sh.Timeline", self._read(dashboard.timeline, org_id, runs=runs, turns=turns))

    def run_detail(self, org_id: str, run_id: str) -> sh.RunDetail:
        """One run with its turns and every record, failed and cancelled turns' included (R2)."""
        return cast("sh.RunDetail", self._read(dashboard.run_detail, org_id, run_id))

    def graph(self, graph: str, owner: str, *, limit: int | None = None, ids: bool = False) -> sh.GraphJson:
        """One graph as in the state format; with `limit`, its heaviest facts only (and `total`); with `ids`, fact ids."""
        return cast("sh.GraphJson", self._read(graph_at, graph, owner, limit=limit, ids=ids))

    def facts_table(
        self,
        org_id: str,
        *,
        person: str | None = None,
        limit: int | None = None,
        graphs: tuple[str, ...] = GRAPHS,
        fact: int | None = None,
    ) -> list[sh.FactPublic]:
        """Rows for the Fact weights table of the graphs asked for; or (`fact`) that one fact's row, if there."""
        rows = self._read(dashboard.facts_table, org_id, person=person, limit=limit, graphs=graphs, fact=fact)
        return cast("list[sh.FactPublic]", rows)

    def fact_breakdown(
        self, fact_id: int, *, min_weight: float = DEFAULT_MIN_WEIGHT, org: str | None = None
    ) -> sh.Breakdown:
        """A weight explained: each source, the weight without it, and the margin to a shortcut (R22, R25, R26)."""
        return cast("sh.Breakdown", self._read(dashboard.fact_breakdown, fact_id, min_weight=min_weight, org=org))

    def turn_view(self, turn_id: str) -> sh.TurnView:
        """What a turn's instructions carry (R18) and its reads so far against its budget (R21)."""
        with self.database.transaction(write=False) as s:
            turn, run = self._turn(s, turn_id)
            return cast("sh.TurnView", dashboard.turn_view(s, turn, run))

    def run_erasure_preview(self, run_id: str) -> sh.RunErasurePreview:
        """What deleting a run erases and keeps (R29)."""
        with self.database.transaction(write=False) as s:
            return cast("sh.RunErasurePreview", run_preview(s, self._run(s, run_id)))

    def account_erasure_preview(self, person_id: str) -> sh.AccountErasurePreview:
        """What deleting an account erases and keeps (R30)."""
        with self.database.transaction(write=False) as s:
            return cast("sh.AccountErasurePreview", account_preview(s, self._person(s, person_id)))

    def version(self) -> str | None:
        """A token that changes whenever any write commits, for a page's cache; None where nothing may be kept."""
        return self.database.version()

    def shown(self) -> str:
        """A token of what live pages show, moved by a moment, record, read or session, not by a heartbeat (#39)."""
        with self.database.driver(write=False) as db:
            return dashboard.shown(db)

    def read_servers(self) -> sh.ReadServers:
        """Where reads come from (store/standby.py): the standby, which server was down, how many reads each served."""
        return cast("sh.ReadServers", self.database.reads())

    def counts(self) -> sh.Counts:
        """How much the database holds: for the sidebar and progress."""
        return cast("sh.Counts", self._read(dashboard.counts))

    def communities(self, graph: str, owner: str) -> sh.EntityLinks:
        """A graph's entities linked to others, with their degree, and the facts between each pair (issue #39)."""
        with self.database.driver(write=False) as db:
            return cast("sh.EntityLinks", entity_links(db, graph, owner))

    def focus(self, graph: str, owner: str, name: str | None, *, depth: int) -> sh.FocusPublic:
        """An entity named (or the graph's most connected) and its facts to `depth` and one ring more (#39)."""
        return cast("sh.FocusPublic", self._read(focus_read, graph, owner, name, depth=depth))

    def find_entities(self, graphs: dict[str, str], text: str) -> list[sh.FoundEntity]:
        """Entities of these graphs (graph -> owner) whose names match `text` by words, as GraphResolve finds them."""
        return cast("list[sh.FoundEntity]", self._read(find_read, graphs, text))
