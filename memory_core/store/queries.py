"""The use cases' ORM statements, each named for what it asks; the rows come back as model objects."""

from __future__ import annotations

from sqlmodel import Session, col, select

from .models import Dispute, Membership, SettingsAudit


def role(s: Session, person_id: str, org_id: str) -> str | None:
    """The person's role in the organization, or None for a non-member."""
    m = s.get(Membership, (person_id, org_id))
    return m.role if m else None


def owned_orgs(s: Session, person_id: str) -> list[str]:
    return list(
        s.exec(select(Membership.org_id).where(Membership.person_id == person_id, Membership.role == "owner")).all()
    )


def has_disputed(s: Session, fact_id: int, by: str) -> bool:
    return s.exec(select(Dispute).where(Dispute.fact_id == fact_id, Dispute.by == by)).first() is not None


def audit_rows(s: Session, org_id: str) -> list[SettingsAudit]:
    return list(s.exec(select(SettingsAudit).where(SettingsAudit.org_id == org_id).order_by(col(SettingsAudit.id))))
