"""The use cases' ORM statements, each named for what it asks; the rows come back as model objects."""

from __future__ import annotations

from sqlalchemy import func
from sqlmodel import Session, col, select

from .models import ApiToken, Dispute, Membership, NestedWork, Run, SettingsAudit, Turn


def role(s: Session, person_id: str, org_id: str) -> str | None:
    """The person's role in the organization, or None for a non-member."""
    m = s.get(Membership, (person_id, org_id))
    return m.role if m else None


def count(s: Session, model: type) -> int:
    return int(s.exec(select(func.count()).select_from(model)).one())


def next_run_seq(s: Session) -> int:
    return int(s.exec(select(func.coalesce(func.max(Run.seq), -1))).one()) + 1  # an index look-up


def open_turns(s: Session, run_id: str) -> list[Turn]:
    return list(s.exec(select(Turn).where(Turn.run_id == run_id, Turn.status == "open")))


def open_works(s: Session, turn_id: str) -> list[NestedWork]:
    return list(s.exec(select(NestedWork).where(NestedWork.turn_id == turn_id, NestedWork.status == "open")))


def owned_orgs(s: Session, person_id: str) -> list[str]:
    return list(
        s.exec(select(Membership.org_id).where(Membership.person_id == person_id, Membership.role == "owner")).all()
    )


def has_disputed(s: Session, fact_id: int, by: str) -> bool:
    return s.exec(select(Dispute).where(Dispute.fact_id == fact_id, Dispute.by == by)).first() is not None


def audit_rows(s: Session, org_id: str) -> list[SettingsAudit]:
    return list(s.exec(select(SettingsAudit).where(SettingsAudit.org_id == org_id).order_by(col(SettingsAudit.id))))


def tokens_of(s: Session, person_id: str, org_id: str) -> list[ApiToken]:
    return list(s.exec(select(ApiToken).where(ApiToken.person_id == person_id, ApiToken.org_id == org_id)))


def token(s: Session, token_hash: str) -> ApiToken | None:
    return s.exec(select(ApiToken).where(ApiToken.token_hash == token_hash)).first()
