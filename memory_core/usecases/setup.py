"""Setting up an organization without a replay: a file's entries added to what memory holds (agent-tools.md; R32)."""

from __future__ import annotations

from .. import errors as E
from ..plain import Obj
from ..rules.settings import DEFAULT_SETTINGS
from ..store import moments
from ..store import turns as store
from ..store.dashboard import setup_of
from ..store.repository import Repository
from .results import Result


class SetupAdded(Result):
    """The ids a setup added, by kind; an entry that was there with the same definition is not among them."""

    organizations: list[str]
    people: list[str]
    workflows: list[str]

    @property
    def nothing(self) -> bool:
        return not (self.organizations or self.people or self.workflows)


def _definitions(organizations: list[Obj], people: list[Obj], workflows: list[Obj]) -> dict[tuple[str, str], Obj]:
    """Each entry's definition by (kind, id), alike for a file's and memory's: settings defaulted, MemoryProbes."""
    out: dict[tuple[str, str], Obj] = {}
    for o in organizations:
        settings = DEFAULT_SETTINGS | (o.get("settings") or {})
        out["organization", o["id"]] = {"name": o["name"], "owner": o["owner"], "settings": settings}
    for p in people:
        out["person", p["id"]] = {"name": p["name"], "memberships": dict(p["memberships"])}
    for w in workflows:
        probes = w["memory_probes"] if "memory_probes" in w else (w.get("budget") or {}).get("MemoryProbes")
        out["workflow", w["id"]] = {"org": w["org"], "MemoryProbes": probes, "steps": list(w["steps"])}
    return out


class Setup(Repository):
    """Setting up organizations, people and workflows beside what memory holds."""

    def setup(self, *, organizations: list[Obj], people: list[Obj], workflows: list[Obj]) -> SetupAdded:
        """Add in one moment (R32) the entries memory lacks; one held otherwise: duplicate_id, nothing added."""
        wanted = _definitions(organizations, people, workflows)
        with self.database.transaction() as s:
            held = setup_of(s)
            there = _definitions(held.orgs, held.people, held.workflows)
            for (kind, ident), definition in wanted.items():
                if (kind, ident) in there and there[kind, ident] != definition:
                    raise E.DuplicateId.differs(kind, ident, there=there[kind, ident], given=definition)
            orgs, folks, flows = (
                [e for e in entries if (kind, e["id"]) not in there]
                for kind, entries in (("organization", organizations), ("person", people), ("workflow", workflows))
            )
            added = SetupAdded(
                organizations=[o["id"] for o in orgs],
                people=[p["id"] for p in folks],
                workflows=[w["id"] for w in flows],
            )
            if not added.nothing:
                n = moments.take_moment(s)
                store.add_setup(s, organizations=orgs, people=folks, workflows=flows, moment=n)
                about = (
                    {o["id"] for o in orgs} | {w["org"] for w in flows} | {o for p in folks for o in p["memberships"]}
                )
                moments.mark(s, n, "setup", org=about.pop() if len(about) == 1 else None)  # one's history, or all's
            return added
