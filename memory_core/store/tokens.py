"""API tokens in the store: only a hash of each is kept; one live token per person and organization."""

from __future__ import annotations

from sqlmodel import Session, select

from .models import ApiToken, Membership, Organization, Person


def holder_exists(s: Session, person_id: str, org_id: str) -> tuple[bool, bool, bool]:
    """Whether the organization, the person, and the membership exist."""
    return (
        s.get(Organization, org_id) is not None,
        s.get(Person, person_id) is not None,
        s.get(Membership, (person_id, org_id)) is not None,
    )


def add_token(s: Session, token_hash: str, *, person_id: str, org_id: str, at: str) -> None:
    """A new live token for the pair; the pair's earlier ones are revoked."""
    for old in s.exec(select(ApiToken).where(ApiToken.person_id == person_id, ApiToken.org_id == org_id)):
        old.revoked = True
        s.add(old)
    s.add(ApiToken(token_hash=token_hash, person_id=person_id, org_id=org_id, created_at=at))


def revoke(s: Session, token_hash: str) -> bool:
    """End a token; False when no live token matches."""
    row = s.exec(select(ApiToken).where(ApiToken.token_hash == token_hash)).first()
    if row is None or row.revoked:
        return False
    row.revoked = True
    s.add(row)
    return True
