"""The use cases' small ORM statements: roles, settings (R16), tokens, corrections (R28), sign-in identities."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, delete, or_
from sqlmodel import Session, col, select

from ..plain import Obj
from ..rules.identity import Identity
from ..rules.settings import SETTING_BY_NAME
from .driver import driver_of
from .facts import load_facts, refresh_facts
from .graph import FactChanges
from .lookups import picked
from .models import ApiToken, Dispute, Fact, IdentityLink, Membership, Organization, Person, SettingsAudit


def role(s: Session, person_id: str, org_id: str) -> str | None:
    """The person's role in the organization, or None for a non-member."""
    m = s.get(Membership, (person_id, org_id))
    return m.role if m else None


def owned_orgs(s: Session, person_id: str) -> list[str]:
    return list(s.exec(select(Membership.org_id).where(Membership.person_id == person_id, Membership.role == "owner")))


def has_disputed(s: Session, fact_id: int, by: str) -> bool:
    return s.exec(select(Dispute).where(Dispute.fact_id == fact_id, Dispute.by == by)).first() is not None


def audit_rows(s: Session, org_id: str) -> list[SettingsAudit]:
    return list(s.exec(select(SettingsAudit).where(SettingsAudit.org_id == org_id).order_by(col(SettingsAudit.id))))


def change_setting(s: Session, org_id: str, name: str, value: bool, *, by: str, at: str, moment: int) -> bool:
    """Set one setting; True (and audited: who, when, from, to) when it changed (R15, R16)."""
    org = s.get_one(Organization, org_id)
    column = SETTING_BY_NAME[name].column
    old = bool(getattr(org, column))
    if old == value:
        return False
    setattr(org, column, value)
    s.add(SettingsAudit(org_id=org_id, by=by, at=at, setting=name, old=old, new=value, moment=moment))
    return True


# --- API tokens: only a hash of each is kept; one live token per person and organization


def add_token(s: Session, token_hash: str, *, person_id: str, org_id: str, at: str) -> None:
    """A new live token for the pair; the pair's earlier ones are revoked."""
    for old in s.exec(select(ApiToken).where(ApiToken.person_id == person_id, ApiToken.org_id == org_id)):
        old.revoked = True
    s.add(ApiToken(token_hash=token_hash, person_id=person_id, org_id=org_id, created_at=at))


def revoke(s: Session, token_hash: str) -> bool:
    """End a token; False when no live token matches."""
    row = s.exec(select(ApiToken).where(ApiToken.token_hash == token_hash)).first()
    if row is None or row.revoked:
        return False
    row.revoked = True
    return True


# --- corrections (R28): a dispute added, a fact retracted, and the fact recomputed in the same transaction


def add_dispute(s: Session, fact_id: int, *, by: str, contribution: float, moment: int) -> FactChanges:
    """A person's dispute of a fact, and the fact recomputed (R26, R28)."""
    s.add(Dispute(fact_id=fact_id, by=by, contribution=contribution, since=moment))
    return _refresh(s, fact_id, moment)


def retract(s: Session, fact_id: int, *, moment: int) -> FactChanges:
    """The fact retracted at `moment`: never served again (R28)."""
    f = s.get_one(Fact, fact_id)
    f.retracted, f.retracted_at = True, moment
    return _refresh(s, fact_id, moment)


def _refresh(s: Session, fact_id: int, moment: int) -> FactChanges:
    changes = FactChanges()
    with driver_of(s) as db:  # writes what is pending first
        refresh_facts(db, load_facts(db, [fact_id]), changes, moment=moment)
    return changes


# --- sign-in identities: who signs in to the dashboard as a person, in one organization


def _shown(link: IdentityLink, name: str) -> Obj:
    """A link as the Settings page and the command line show it."""
    shown = picked(link, "id kind issuer key") | {"identity": Identity(link.kind, link.issuer, link.key).words}
    shown |= {"person": link.person_id, "person_name": name}
    return shown | picked(link, "org=org_id linked_at=created_at")


def _is(identity: Identity, org_id: str | None = None) -> list[Any]:
    """The links of this identity (in this organization), as a WHERE clause."""
    named = vars(identity) | ({} if org_id is None else {"org_id": org_id})
    return [col(getattr(IdentityLink, k)) == v for k, v in named.items()]


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
    q = select(IdentityLink, Person.name).join(Person, col(Person.id) == col(IdentityLink.person_id))
    q = q.where(IdentityLink.org_id == org_id).order_by(col(IdentityLink.person_id), col(IdentityLink.kind).desc())
    return [_shown(link, name) for link, name in s.exec(q.order_by(col(IdentityLink.issuer), col(IdentityLink.key)))]


def links_of(s: Session, identities: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The (kind, person, organization) of the links of these (kind, issuer, key), one or more, to a member."""
    matches = [and_(*_is(Identity(*i))) for i in identities]
    member = (col(Membership.person_id) == IdentityLink.person_id, col(Membership.org_id) == IdentityLink.org_id)
    q = select(IdentityLink.kind, IdentityLink.person_id, IdentityLink.org_id).join(Membership, and_(*member))
    return [(kind, person, org) for kind, person, org in s.exec(q.where(or_(*matches)))]
