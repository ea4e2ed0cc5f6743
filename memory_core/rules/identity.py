"""Whom a sign-in identity (an issuer and subject, or a verified email) speaks for: a link in one organization (R15)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

SUBJECT = "subject"
EMAIL = "email"
MAX_ISSUER = 200  # an indexed text (docs/decisions.md, long texts)
MAX_SUBJECT = 255  # OpenID Connect Core 1.0, section 2: at most 255 ASCII characters
MAX_EMAIL = 254  # RFC 5321's longest path


@dataclass(frozen=True)
class Identity:
    """An identity as compared: `kind` SUBJECT (issuer, subject) or EMAIL ("", the address)."""

    kind: str
    issuer: str
    key: str

    @property
    def words(self) -> str:
        """The identity in words, as a person reads it."""
        if self.kind == EMAIL:
            return f"the verified email {self.key}"
        return f"subject {self.key} of {self.issuer}"


def issuer_key(issuer: str) -> str:
    """An issuer compared as its URL without a final slash (`https://id.example/` is `https://id.example`)."""
    return issuer.strip().rstrip("/")


def email_key(email: str) -> str:
    """An email address compared case-folded, without spacing at its ends."""
    return email.strip().casefold()


def _unprintable(text: str) -> bool:
    return any(unicodedata.category(c) in {"Cc", "Cs", "Cf", "Zl", "Zp"} for c in text)


def _issuer_problem(issuer: str) -> str | None:
    if not issuer.strip():
        return "is empty; give the identity provider's issuer URL (its discovery document's `issuer`)"
    if len(issuer) > MAX_ISSUER:
        return f"is {len(issuer)} characters long; an issuer holds at most {MAX_ISSUER}"
    if _unprintable(issuer) or " " in issuer.strip():
        return "holds spacing or a control character; an issuer is a URL"
    parts = urlsplit(issuer.strip())
    if parts.scheme not in {"https", "http"} or not parts.netloc:
        return f"{issuer.strip()!r} is not an http(s) URL; an issuer is one, like https://login.example.com"
    if parts.query or parts.fragment:
        return "has a query or a fragment; an issuer has neither (OpenID Connect Discovery 1.0)"
    return None


def _subject_problem(subject: str) -> str | None:
    if not subject:
        return "is empty; give the subject (`sub`) the identity provider gives this person"
    if len(subject) > MAX_SUBJECT:
        return f"is {len(subject)} characters long; a subject holds at most {MAX_SUBJECT} (OpenID Connect Core 1.0)"
    if not all(" " <= c <= "~" for c in subject):
        return "holds a character that is not printable ASCII; a subject is ASCII (OpenID Connect Core 1.0)"
    if subject != subject.strip():
        return "starts or ends with a space; a subject is compared exactly, so give it without"
    return None


def _email_problem(email: str) -> str | None:
    address = email.strip()
    if not address:
        return "is empty; give the address the identity provider verified"
    if len(address) > MAX_EMAIL:
        return f"is {len(address)} characters long; an address holds at most {MAX_EMAIL}"
    if _unprintable(address) or any(c.isspace() for c in address):
        return "holds spacing or a control character"
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain or domain.startswith(".") or domain.endswith("."):
        return f"{address!r} is not an email address (name@domain)"
    return None


def identity_problem(issuer: str | None, subject: str | None, email: str | None) -> tuple[str, str] | None:
    """(field, problem) of an identity as given (`issuer` and `subject`, or `email`), or None."""
    given = {k for k, v in (("issuer", issuer), ("subject", subject), ("email", email)) if v is not None}
    if email is not None and given & {"issuer", "subject"}:
        return "email", "give an issuer and a subject, or an email address, not both"
    if not given:
        return "identity", "missing: give an issuer and a subject, or an email address"
    if email is not None:
        problem = _email_problem(email)
        return ("email", problem) if problem else None
    if issuer is None:
        return "issuer", "is missing; a subject is unique only at its issuer, so give both"
    if subject is None:
        return "subject", "is missing; give the subject (`sub`) with its issuer"
    for field, problem in (("issuer", _issuer_problem(issuer)), ("subject", _subject_problem(subject))):
        if problem:
            return field, problem
    return None


def identity_of(issuer: str | None, subject: str | None, email: str | None) -> Identity:
    """The identity given, as compared (identity_problem found nothing wrong with it)."""
    if email is not None:
        return Identity(EMAIL, "", email_key(email))
    assert issuer is not None and subject is not None
    return Identity(SUBJECT, issuer_key(issuer), subject)


def signed_in_identities(claims: dict[str, object]) -> list[Identity]:
    """The identities an ID token's claims prove: its issuer and subject, then its email if `email_verified`."""
    found: list[Identity] = []
    iss, sub = claims.get("iss"), claims.get("sub")
    if isinstance(iss, str) and isinstance(sub, str) and iss and sub:
        found.append(Identity(SUBJECT, issuer_key(iss), sub))
    email = claims.get("email")
    if isinstance(email, str) and email.strip() and claims.get("email_verified") is True:
        found.append(Identity(EMAIL, "", email_key(email)))
    return found


def speaks_for(links: list[tuple[str, str, str]]) -> dict[str, str]:
    """Organization -> person a signed-in identity acts as, from its links (kind, person, org): a subject's first."""
    best_last = sorted(reversed(links), key=lambda link: link[0] == SUBJECT)  # so the first subject's is written last
    return dict(sorted({org: person for _, person, org in best_last}.items()))
