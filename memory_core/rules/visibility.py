"""Who sees what (R20) and where evidence stays (R23's decision "evidence elsewhere"): pure
decisions the store's queries, the generator, the views and the pages all ask, written once here.

R20: a turn sees the World graph of its run's organization, the User graph of its run's person and
the Flow graph of its own run, and nothing else. R23 (evidence elsewhere): a User fact follows its
person into every organization, but a support taught in another organization's run is shown with
its origin and contribution only; its key, pointer and excerpt stay where they were taught.
"""

from __future__ import annotations

from collections.abc import Iterable

#: The graphs, in the order reads list them.
GRAPHS = ("world", "user", "flow")


def owners(*, run_id: str, org_id: str, person_id: str | None) -> dict[str, str | None]:
    """R20: the owner of each graph a turn of this run sees (None: that graph is not there, as for a
    run whose person was erased)."""
    return {"world": org_id, "user": person_id, "flow": run_id}


def visible(*, run_id: str, org_id: str, person_id: str | None) -> list[tuple[str, str]]:
    """R20: the (graph, owner) pairs a turn of this run sees, in GRAPHS order."""
    seen = owners(run_id=run_id, org_id=org_id, person_id=person_id)
    return [(g, o) for g in GRAPHS if (o := seen[g]) is not None]


def reads_through(person: str | None, *, runs_person: str | None) -> bool:
    """R19, R20: a person reads memory only through a turn of their own run. A turn sees its run's
    person's User graph (R20), so reading through another person's turn would show that person's
    private graph and spend their budget (R21). Decision (issue #26): the dashboard's Memory reads
    offers a person their own open turns only; tools read through their own session's turns."""
    return person is not None and person == runs_person


def sees(graph: str, owner: str, *, run_id: str, org_id: str, person_id: str | None) -> bool:
    """R20: whether a turn of this run sees the graph `graph` owned by `owner`."""
    return owners(run_id=run_id, org_id=org_id, person_id=person_id).get(graph) == owner


def in_organization(graph: str, owner: str, *, org_id: str, runs: Iterable[str]) -> bool:
    """Whether a graph belongs to an organization's view of memory: its World graph, or the Flow
    graph of one of its `runs` (what the Overview and Graphs compare through time)."""
    return (graph == "world" and owner == org_id) or (graph == "flow" and owner in set(runs))


def evidence_elsewhere(support_org: str | None, *, reader_org: str | None) -> bool:
    """R23 (evidence elsewhere): a support taught in a run of `support_org` (the run's organization,
    kept after the run's erasure) is withheld from a reader in `reader_org`: True when both are
    known and differ. A reader of no organization (None) sees every support."""
    return reader_org is not None and support_org is not None and support_org != reader_org
