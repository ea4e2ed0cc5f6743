"""Identity links in the store: who signs in to the dashboard as a person, in one organization."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, or_
from sqlmodel import Session, col, select

from ..plain import Obj
from ..rules.identity import Identity
from .lookups import picked
from .models import IdentityLink, Membership, Person


def _shown(link: IdentityLink, name: str) -> Obj:
    """A link as the Settings page and the command line show it."""
    return {
        **picked(link, "id kind issuer key"),
        "identity": Identity(link.kind, link.issuer, link.key).words,
        **picked(link, "person=person_id"),
        "person_name": name,
        **picked(link, "org=org_id linked_at=created_at"),
    }


def _is(identity: Identity, org_id: str) -> list[Any]:
    """The link of this identity in this organization, as a WHERE clause."""
    return [col(getattr(IdentityLink, k)) == v for k, v in {**vars(identity), "org_id": org_id}.items()]


def linked(s: Session, identity: Identity, org_id: str) -> str | None:
    """The person an identity is linked to in an organization, or None."""
    return s.exec(select(IdentityLink.person_id).where(*_is(identity, org_id))).first()


def add_link(s: Session, identity: Identity, *, person_id: str, org_id: str, at: str) -> None:
    """Link an identity to a person in an organization."""
    s.add(IdentityLink(**vars(identity), person_id=person_id, org_id=org_id, created_at=at))


def remove_link(s: Session, identity: Identity, org_id: str) -> bool:
    """Remove an identity's link in an organization; False when there was none."""
    return bool(s.exec(delete(IdentityLink).where(*_is(identity, org_id))).rowcount)  # type: ignore[call-overload]


def links_in(s: Session, org_id: str) -> list[Obj]:
    """An organization's links, by person then identity."""
    rows = s.exec(
        select(IdentityLink, Person.name)
        .join(Person, col(Person.id) == col(IdentityLink.person_id))
        .where(IdentityLink.org_id == org_id)
        .order_by(
            col(IdentityLink.person_id), col(IdentityLink.kind).desc(), col(IdentityLink.issuer), col(IdentityLink.key)
        )
    ).all()
    return [_shown(link, name) for link, name in rows]


def links_of(s: Session, identities: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The (kind, person, organization) these (kind, issuer, key) are linked to, where the person is a member."""
    if not identities:
        return []
    matches = [
        (col(IdentityLink.kind) == kind) & (col(IdentityLink.issuer) == issuer) & (col(IdentityLink.key) == key)
        for kind, issuer, key in identities
    ]
    rows = s.exec(
        select(IdentityLink.kind, IdentityLink.person_id, IdentityLink.org_id)
        .join(
            Membership,
            (col(Membership.person_id) == col(IdentityLink.person_id))
            & (col(Membership.org_id) == col(IdentityLink.org_id)),
        )
        .where(or_(*matches))
    ).all()
    return [(kind, person, org) for kind, person, org in rows]


def erase_links(s: Session, person_id: str) -> None:
    """R30: a deleted account's links go with it."""
    s.exec(delete(IdentityLink).where(col(IdentityLink.person_id) == person_id))  # type: ignore[call-overload]
