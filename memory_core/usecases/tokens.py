"""Bearer tokens for the preferences API: one per person and organization, only a hash stored."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime

from .. import errors as E
from ..store import agents, queries
from ..store.models import ApiToken, Membership, Organization, Person
from .base import UseCases


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Tokens(UseCases):
    """Issue, check and revoke tokens."""

    def issue_token(self, person: str, *, org: str) -> str:
        """A new token for a member of an organization; it replaces the pair's earlier one."""
        with self._tx() as s:
            if s.get(Organization, org) is None:
                raise E.UnknownOrg(org)
            if s.get(Person, person) is None:
                raise E.UnknownPerson(person, maybe_deleted=False)
            if s.get(Membership, (person, org)) is None:
                raise E.NotMember(person, org, so="; a token speaks for a member")
            for old in queries.tokens_of(s, person, org):
                old.revoked = True
                s.add(old)
            token = "mem_" + secrets.token_urlsafe(32)
            s.add(
                ApiToken(
                    token_hash=token_hash(token),
                    person_id=person,
                    org_id=org,
                    created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                )
            )
            return token

    def token_caller(self, token: str) -> tuple[str, str] | None:
        """The (person, organization) a live token speaks for, or None: one statement (the MCP server
        asks at every call), on the ORM inside a box."""
        if self._sandbox is None:
            with self._store.peek() as db:
                return agents.token_holder(db, token_hash=token_hash(token))
        with self._read() as s:
            row = queries.token(s, token_hash(token))
            if row is None or row.revoked:
                return None
            return row.person_id, row.org_id

    def revoke_token(self, token: str) -> bool:
        """End a token; False when no live token matches."""
        with self._tx() as s:
            row = queries.token(s, token_hash(token))
            if row is None or row.revoked:
                return False
            row.revoked = True
            s.add(row)
            return True
