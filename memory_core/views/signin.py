"""Sign-in for people: `[auth]` of .streamlit/secrets.toml checked, its providers, identities said (docs/signin.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast
from urllib.parse import urlsplit

from ..rules.identity import EMAIL, signed_in_identities

#: What Streamlit's st.login needs: shared by every provider, and each provider's own.
SHARED = ("redirect_uri", "cookie_secret")
OWN = ("client_id", "client_secret", "server_metadata_url")
DISCOVERY = "/.well-known/openid-configuration"
SECRETS = ".streamlit/secrets.toml"


def providers(section: Mapping[str, object]) -> list[str | None]:
    """The providers `[auth]` configures: None for `[auth]` itself (st.login()), each `[auth.NAME]`'s name."""
    named = [k for k, v in section.items() if isinstance(v, Mapping)]
    own = [None] if any(k in section for k in OWN) or not named else []
    return [*own, *sorted(named)]


def auth_problems(section: Mapping[str, object]) -> list[str]:
    """What keeps `[auth]` from signing anyone in, each as where and what; [] when nothing does."""
    problems = [f"{SECRETS} [auth]: `{k}` is missing" for k in SHARED if not section.get(k)]
    redirect = str(section.get("redirect_uri") or "")
    if redirect and not (urlsplit(redirect).scheme in {"http", "https"} and redirect.endswith("/oauth2callback")):
        problems.append(
            f"{SECRETS} [auth]: `redirect_uri` is {redirect!r}; it is the dashboard's own address ending in "
            "/oauth2callback, e.g. https://memory.example.com/oauth2callback"
        )
    for name in providers(section):
        problems += _provider_problems(section if name is None else cast("Mapping[str, object]", section[name]), name)
    return problems


def _provider_problems(table: Mapping[str, object], name: str | None) -> list[str]:
    """What one provider's table lacks: its own keys, and a discovery URL that is http(s)."""
    where = "[auth]" if name is None else f"[auth.{name}]"
    problems = [f"{SECRETS} {where}: `{k}` is missing" for k in OWN if not table.get(k)]
    url = str(table.get("server_metadata_url") or "")
    if url and not (urlsplit(url).scheme in {"http", "https"} and urlsplit(url).netloc):
        problems.append(f"{SECRETS} {where}: `server_metadata_url` {url!r} is not an http(s) URL")
    return problems


def issuer_of(section: Mapping[str, object], name: str | None = None) -> str:
    """The issuer a provider's discovery URL names (before /.well-known/openid-configuration), else ""."""
    table = section if name is None else section.get(name, {})
    url = str(table.get("server_metadata_url") or "") if isinstance(table, Mapping) else ""
    return url[: -len(DISCOVERY)] if url.endswith(DISCOVERY) else ""


def claims_of(user: Mapping[str, object]) -> dict[str, object]:
    """The claims of st.user that say who signed in (the ID token's), nothing else."""
    return {k: user[k] for k in ("iss", "sub", "email", "email_verified", "name") if k in user}


def identity_words(claims: Mapping[str, object]) -> str:
    """A signed-in identity in words: its subject and issuer, and its address if verified."""
    if not (found := signed_in_identities(dict(claims))):
        return "an identity whose ID token names no issuer and subject"
    return " or ".join(i.words for i in found)


def shown_as(claims: Mapping[str, object]) -> str:
    """How the sidebar names the identity signed in: its verified address, else its subject."""
    found = signed_in_identities(dict(claims))
    return next((i.key for i in found if i.kind == EMAIL), None) or str(claims.get("sub") or "")
