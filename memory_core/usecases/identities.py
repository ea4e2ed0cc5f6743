"""Sign-in identities: who signs in to the dashboard as whom, linked by the owner (R15) or the command line (`by` None)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TypedDict, Unpack, cast

from .. import errors as E
from ..rules.identity import Identity, identity_of, identity_problem, signed_in_identities, speaks_for
from ..store import queries
from ..store.repository import Repository
from . import shapes as sh


class IdentityGiven(TypedDict, total=False):
    """An identity as a person gives it: an issuer and subject, or a verified email."""

    issuer: str | None
    subject: str | None
    email: str | None


def _identity(given: IdentityGiven) -> Identity:
    """The identity given, or a FormatError that says which field is wrong and how (nothing changed)."""
    issuer, subject, email = given.get("issuer"), given.get("subject"), given.get("email")
    problem = identity_problem(issuer, subject, email)
    if problem:
        raise E.FormatError(*problem)
    return identity_of(issuer, subject, email)


class Identities(Repository):
    """Link, unlink and list sign-in identities; find whom a signed-in identity speaks for."""

    def link_identity(self, person: str, *, org: str, by: str | None = None, **given: Unpack[IdentityGiven]) -> bool:
        """Link a member to an identity (False: it was); the owner links (R15), one person per identity (R20)."""
        identity = _identity(given)
        with self.database.transaction() as s:
            self._owner_or_cli(s, org, by, "links people to the identities they sign in with (R15)", person=person)
            if queries.role(s, person, org) is None:
                raise E.NotMember(person, org, so="; a sign-in speaks for a member of the organization (R20)")
            now = queries.linked(s, identity, org)
            if now == person:
                return False
            if now is not None:
                raise E.NotAllowed.identity_taken(identity.words, org_id=org, person_id=now)
            at = datetime.now(UTC).isoformat(timespec="seconds")
            queries.add_link(s, identity, person_id=person, org_id=org, at=at)
            return True

    def unlink_identity(self, *, org: str, by: str | None = None, **given: Unpack[IdentityGiven]) -> bool:
        """Remove an identity's link in an organization (signed out at the next click); False when there was none."""
        identity = _identity(given)
        with self.database.transaction() as s:
            self._owner_or_cli(s, org, by, "unlinks people from the identities they sign in with (R15)")
            return queries.remove_link(s, identity, org)

    def identity_links(self, org: str, *, by: str | None = None) -> list[sh.IdentityLinkPublic]:
        """An organization's sign-in links, for its owner (R15) or the command line."""
        with self.database.transaction(write=False) as s:
            self._owner_or_cli(s, org, by, "sees who signs in with which identity (R15)")
            return cast(list[sh.IdentityLinkPublic], queries.links_in(s, org))

    def identity_callers(self, claims: dict[str, object]) -> dict[str, str]:
        """Whom a signed-in identity acts as (organization -> person), from its ID token's claims (R30: none erased)."""
        proven = [(i.kind, i.issuer, i.key) for i in signed_in_identities(claims)]
        if not proven:
            return {}
        return speaks_for(self._read(queries.links_of, proven))
