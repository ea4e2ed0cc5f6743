"""Bearer tokens for the preferences API: one per person and organization, only a hash stored."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from .. import errors as E
from ..rules.keys import sha256_hex as token_hash
from ..rules.permissions import is_member
from ..store import agents, queries
from ..store.repository import Repository


class Tokens(Repository):
    """Issue, check and revoke tokens."""

    def issue_token(self, person: str, *, org: str) -> str:
        """A new token for a member of an organization; it replaces the pair's earlier one."""
        with self.database.transaction() as s:
            self._org(s, org)
            self._person(s, person, maybe_deleted=False)
            if not is_member(queries.role(s, person, org)):
                raise E.NotMember(person, org, so="; a token speaks for a member")
            token = "mem_" + secrets.token_urlsafe(32)
            at = datetime.now(UTC).isoformat(timespec="seconds")
            queries.add_token(s, token_hash(token), person_id=person, org_id=org, at=at)
            return token

    def token_caller(self, token: str) -> tuple[str, str] | None:
        """The (person, organization) a live token speaks for, or None (a standby's first, store/standby.py)."""
        with self.database.driver(write=False) as db:
            found = agents.token_holder(db, token_hash=token_hash(token))
        if found is None and self.database.standby is not None:
            with self.database.driver(write=False, fresh=True) as db:
                found = agents.token_holder(db, token_hash=token_hash(token))
        return found

    def revoke_token(self, token: str) -> bool:
        """End a token; False when no live token matches."""
        with self.database.transaction() as s:
            return queries.revoke(s, token_hash(token))
