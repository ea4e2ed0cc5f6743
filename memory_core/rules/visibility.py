"""Who sees what: a turn, its organization's World, its person's User, its run's Flow graph (R20); evidence (R23)."""

from __future__ import annotations

from collections.abc import Iterable

from .vocabulary import GRAPHS


def owners(*, run_id: str, org_id: str, person_id: str | None) -> dict[str, str | None]:
    """R20: the owner of each graph a turn of this run sees (None: not there, as a run's erased person's)."""
    return {"world": org_id, "user": person_id, "flow": run_id}


def visible(*, run_id: str, org_id: str, person_id: str | None) -> list[tuple[str, str]]:
    """R20: the (graph, owner) pairs a turn of this run sees, in GRAPHS order."""
    seen = owners(run_id=run_id, org_id=org_id, person_id=person_id)
    return [(g, o) for g in GRAPHS if (o := seen[g]) is not None]


def reads_through(person: str | None, *, runs_person: str | None) -> bool:
    """R19, R20: a person reads only through a turn of their own run, spending its budget (R21; issue #26)."""
    return person is not None and person == runs_person


def sees(graph: str, owner: str, *, run_id: str, org_id: str, person_id: str | None) -> bool:
    """R20: whether a turn of this run sees the graph `graph` owned by `owner`."""
    return owners(run_id=run_id, org_id=org_id, person_id=person_id).get(graph) == owner


def in_organization(graph: str, owner: str, *, org_id: str, runs: Iterable[str]) -> bool:
    """Whether a graph is in an organization's view: its World graph, or the Flow graph of one of its `runs`."""
    return (graph == "world" and owner == org_id) or (graph == "flow" and owner in set(runs))


def evidence_elsewhere(support_org: str | None, *, reader_org: str | None) -> bool:
    """R23 (evidence elsewhere): a support taught in `support_org` is withheld from a reader of another (None: all)."""
    return reader_org is not None and support_org is not None and support_org != reader_org
