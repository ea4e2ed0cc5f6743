"""#26, sign-in with the organization's identity provider, end to end in Chromium: the app served by
`streamlit run` with an `[auth]` section, against a real OpenID provider on loopback
(oidc-provider-mock: discovery, authorization code, signed ID tokens, end session). Stories: sign
in, act only as that person, sign out, an unlinked identity refused, an erased account signed out.

No request of the app leaves loopback; the provider's own pages ask a stylesheet of another host,
which is refused (and allowed to be asked, since the provider is not the app)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from chromium import ARGS, CHROMIUM, IDLE, marks, painted, shot
from served import ROOT, free_port, running, served

from memory_core import MemoryService, make_engine

pytestmark = marks(postgres_pass=True)  # 40 s: the PostgreSQL pass is the shorter
if importlib.util.find_spec("oidc_provider_mock") is None:  # the test extra installs it (it runs in its own process)
    if os.environ.get("CI") == "true":
        raise RuntimeError("the sign-in tests cannot run in CI: oidc-provider-mock is not installed")
    pytestmark.append(pytest.mark.skip(reason="oidc-provider-mock is not installed (the test extra)"))

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
USERS = {  # the provider's people: subject -> claims of their ID token
    "dana-1": {"name": "Dana", "email": "dana@acme.example", "email_verified": True},
    "lee-1": {"name": "Lee", "email": "lee@acme.example", "email_verified": True},
    "sam-1": {"name": "Sam", "email": "sam@acme.example", "email_verified": True},
}


@contextmanager
def provider(tmp: Path) -> Iterator[str]:
    """oidc-provider-mock on a free loopback port, its users predefined; its issuer URL."""
    port = free_port()
    users = [a for sub, c in USERS.items() for a in ("--user-claims", json.dumps({"sub": sub, **c}))]
    issuer = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        with urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration", timeout=2) as r:
            assert json.load(r)["issuer"] == issuer
        return True

    command = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port), *users]
    with running(command, tmp / "provider.log", answers, what="the provider", env={**os.environ, "NO_COLOR": "1"}):
        yield issuer


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The provider, and the demo served with `[auth]` pointing at it; Dana (the owner) and Lee
    linked by subject, Sam by verified email. Yields (app URL, issuer, the app's memory)."""
    tmp = tmp_path_factory.mktemp("signin-browser")
    with provider(tmp) as issuer:
        port = free_port()
        (tmp / "secrets.toml").write_text(
            "[auth]\n"
            f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
            f'cookie_secret = "{secrets.token_hex(32)}"\n'
            'client_id = "memory-explorer"\n'
            f'client_secret = "{secrets.token_hex(16)}"\n'
            f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n'
        )
        demo = ROOT / "sample_data" / "demo.json"
        with served(tmp, demo, port=port, options=("--secrets.files", str(tmp / "secrets.toml"))) as (url, env):
            svc = MemoryService(make_engine(env["MEMORY_DATABASE_URL"]))
            svc.link_identity("dana", org="acme", issuer=issuer, subject="dana-1")
            svc.link_identity("lee", org="acme", issuer=issuer, subject="lee-1")
            svc.link_identity("sam", org="acme", email="Sam@acme.example")
            yield url, issuer, svc
            svc.engine.dispose()


@pytest.fixture(scope="module")
def tabs():
    """One browser context for the module's tests: its caches keep the app's scripts from the first
    test on; each test's tab is a session of its own, and the cookies are cleared after it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b.new_context(viewport={"width": 1400, "height": 1000})
        b.close()


@pytest.fixture
def pg(tabs, site):
    """A fresh tab with no cookie of an earlier test. Nothing leaves loopback (ARGS send every other
    host to a proxy that is not there); no request of the app's own pages even tries."""
    url = site[0]
    outside: list[tuple[str, str]] = []

    def guard(request) -> None:
        if urlsplit(request.url).hostname not in LOOPBACK and not request.url.startswith(("data:", "blob:")):
            outside.append((request.frame.url, request.url))

    tabs.on("request", guard)
    page = tabs.new_page()
    yield page
    for opened in tabs.pages:
        opened.close()
    tabs.remove_listener("request", guard)
    tabs.clear_cookies()
    assert [u for frame, u in outside if frame.startswith(url)] == [], outside


def idle(pg) -> None:
    pg.wait_for_selector(IDLE, timeout=60_000)
    painted(pg)


def sign_in(pg, app: str, issuer: str, *, sub: str, link: str = "") -> None:
    """Through the provider's own pages: the app's Sign in (at the address `link` opens), the
    provider's form, back to the app."""
    pg.goto(f"{app}/{link}")
    pg.get_by_role("button", name="Sign in", exact=True).click()
    pg.wait_for_url(f"{issuer}/oauth2/authorize**", timeout=60_000)
    if sub in USERS:
        pg.get_by_role("button", name=sub, exact=True).click()
    else:
        pg.get_by_placeholder("sub").fill(sub)
        pg.get_by_role("button", name="Authorize").click()
    pg.wait_for_url(f"{app}/**", timeout=60_000)
    idle(pg)


def sidebar(pg):
    return pg.locator("[data-testid='stSidebar']")


def test_sign_in_act_only_as_that_person_and_sign_out(pg, site):
    app, issuer, _ = site
    pg.goto(app)
    pg.get_by_role("heading", name="Sign in").wait_for(timeout=60_000)
    idle(pg)
    shot(pg, "signin-provider")
    assert pg.get_by_text("Acme Robotics").count() == 0 and pg.locator("input[type='password']").count() == 0
    sign_in(pg, app, issuer, sub="lee-1")
    box = sidebar(pg)
    box.get_by_text("Signed in as").wait_for(timeout=60_000)
    assert "Lee Okafor (member) in Acme Robotics" in box.inner_text()
    shot(pg, "signin-signed-in")
    assert box.get_by_text("Act as").count() == 0 and box.get_by_text("Organization").count() == 0
    # a link that names another person or organization changes nothing: Lee, in Acme, a member
    pg.goto(f"{app}/settings?as=dana&org=globex")
    pg.get_by_role("heading", name="Settings").wait_for(timeout=60_000)
    idle(pg)
    assert "only the owner of Acme Robotics reads and changes" in pg.inner_text("body")
    assert "Lee Okafor (member) in Acme Robotics" in sidebar(pg).inner_text()
    # sign out: the provider's end of session, then back to the app, signed out
    sidebar(pg).get_by_role("button", name="Sign out").click()
    pg.wait_for_url(f"{issuer}/oauth2/end_session**", timeout=60_000)
    pg.get_by_role("button", name="End session").click()
    pg.wait_for_url(f"{app}/**", timeout=60_000)
    pg.get_by_role("heading", name="Sign in").wait_for(timeout=60_000)
    pg.goto(f"{app}/settings")  # the identity cookie is gone: no page of memory
    pg.get_by_role("heading", name="Sign in").wait_for(timeout=60_000)
    assert pg.get_by_text("Acme Robotics").count() == 0


def test_the_owner_signs_in_as_the_owner(pg, site):
    app, issuer, _ = site
    # a link opened signed out opens its page once signed in, past the provider's round trip to `/`
    sign_in(pg, app, issuer, sub="dana-1", link="settings")
    pg.get_by_role("heading", name="Sign-in").wait_for(timeout=60_000)
    idle(pg)
    assert urlsplit(pg.url).path == "/settings"
    assert "Dana Whitfield (owner) in Acme Robotics" in sidebar(pg).inner_text()
    # the organization's links, the owner's to see and change
    shot(pg, "signin-owner-settings", at=pg.get_by_role("button", name="Unlink", exact=True))
    body = pg.inner_text("body")
    assert "Linked identity" in body and "This dashboard signs in with the provider set in" in body
    assert pg.get_by_role("button", name="Link", exact=True).count() == 1
    assert pg.get_by_role("button", name="Unlink", exact=True).count() == 1


def test_an_unlinked_identity_is_refused(pg, site):
    app, issuer, _ = site
    sign_in(pg, app, issuer, sub="stranger-7")
    pg.get_by_role("heading", name="Not linked").wait_for(timeout=60_000)
    shot(pg, "signin-not-linked")
    body = pg.inner_text("body")
    assert "no person of this memory is linked to" in body and "not_member" in body and "stranger-7" in body
    assert pg.get_by_role("link", name="R20").count() >= 1  # the rule that refused, a link to it
    assert pg.get_by_text("Acme Robotics").count() == 0 and sidebar(pg).count() == 0
    pg.goto(f"{app}/runs")  # no page of memory by its address either, and no "page not found"
    pg.get_by_role("heading", name="Not linked").wait_for(timeout=60_000)
    assert pg.get_by_role("heading", name="Runs").count() == 0 and pg.get_by_text("Acme Robotics").count() == 0
    assert pg.get_by_text("Page not found").count() == 0
    pg.get_by_role("button", name="Sign out").click()
    pg.wait_for_url(f"{issuer}/oauth2/end_session**", timeout=60_000)


def test_an_erased_account_is_signed_out(pg, site):
    """Sam signs in (a verified email), then Sam's account is deleted elsewhere: the live Overview
    reruns, and Sam acts as no one, told why (R30); a new sign-in of the same identity is refused."""
    app, issuer, svc = site
    sign_in(pg, app, issuer, sub="sam-1")
    sidebar(pg).get_by_text("Signed in as").wait_for(timeout=60_000)
    assert "Sam" in sidebar(pg).inner_text()
    start = time.monotonic()
    svc.delete_account("sam")
    pg.get_by_role("heading", name="Not linked").wait_for(timeout=60_000)
    seen = time.monotonic() - start
    shot(pg, "signin-erased")
    body = pg.inner_text("body")
    assert "the account 'sam' you were signed in as was deleted" in body and "unknown_person" in body
    assert pg.get_by_role("link", name="R30").count() >= 1
    assert sidebar(pg).count() == 0 and pg.get_by_text("Acme Robotics").count() == 0
    print(f"signed out {seen:.2f} s after the deletion committed")
    pg.goto(app)  # the same browser, its identity cookie still there: refused
    pg.get_by_role("heading", name="Not linked").wait_for(timeout=60_000)


def test_a_link_opened_signed_out_opens_its_page_after_the_token_sign_in(tabs, tmp_path, monkeypatch):
    """Signed-in mode with a token (no identity provider): a link opened signed out shows the sign-in
    at its own address (no "page not found"), and the sign-in opens the page it names, with its
    choices; a reload signs the tab out (the token is the session's) and keeps the address."""
    monkeypatch.setenv("MEMORY_SIGN_IN", "1")
    with served(tmp_path, ROOT / "sample_data" / "demo.json") as (app, env):
        svc = MemoryService(make_engine(env["MEMORY_DATABASE_URL"]))
        token = svc.issue_token("lee", org="acme")
        svc.engine.dispose()
        pg = tabs.new_page()
        try:
            pg.goto(f"{app}/fact-weights?graph=user")
            pg.get_by_role("heading", name="Sign in").wait_for(timeout=60_000)
            idle(pg)
            assert pg.get_by_text("Page not found").count() == 0 and pg.get_by_text("Acme Robotics").count() == 0
            for _ in range(2):  # signed in, then once more after a reload
                pg.get_by_placeholder("mem_…").fill(token)
                pg.get_by_role("button", name="Sign in").click()
                pg.get_by_role("heading", name="Fact weights").wait_for(timeout=60_000)
                idle(pg)
                assert urlsplit(pg.url).path == "/fact-weights"
                assert pg.get_by_role("radio", name=re.compile("User")).is_checked(), pg.url
                assert "Lee Okafor (member) in Acme Robotics" in sidebar(pg).inner_text()
                pg.reload()
                pg.get_by_role("heading", name="Sign in").wait_for(timeout=60_000)
                idle(pg)
        finally:
            pg.close()
