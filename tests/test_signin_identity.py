"""Signed in with the organization's identity provider (issue #26), under AppTest: the `[auth]`
secrets set, st.user as Streamlit fills it from an ID token. The whole flow against a real OpenID
provider, in Chromium, is tests/test_browser_signin.py."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from test_dashboard import ROOT, _dispose_engines, app, demo_db, live, ok, page, plain, texts  # noqa: F401

pytestmark = pytest.mark.usefixtures("app")  # the demo in a private database (tests/test_dashboard.py)
ISS = "https://login.acme.example"
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "not-a-secret-only-a-test",
    "client_id": "memory-explorer",
    "client_secret": "s3cret",
    "server_metadata_url": f"{ISS}/.well-known/openid-configuration",
}


def claims(sub: str, email: str | None = None, *, verified: bool = True) -> dict[str, object]:
    said: dict[str, object] = {"is_logged_in": True, "iss": ISS, "sub": sub, "name": sub.title()}
    if email:
        said |= {"email": email, "email_verified": verified}
    return said


def session(user: dict[str, object] | None = None, *, auth: dict[str, object] | None = None) -> AppTest:
    """A new browser session on the app with an identity provider configured, signed in as `user`."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.secrets["auth"] = dict(AUTH if auth is None else auth)
    at.user = user or {"is_logged_in": False}
    return at.run()


def titles(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def test_signed_out_sees_only_the_sign_in_button():
    at = session()
    ok(at)
    assert titles(at) == ["Sign in"] and [b.label for b in at.button] == ["Sign in"]
    assert "Acme Robotics" not in texts(at) and not at.sidebar.selectbox
    assert not at.text_input  # no token is taken when an identity provider signs people in


def test_named_providers_each_have_a_button():
    shared = {k: AUTH[k] for k in ("redirect_uri", "cookie_secret")}
    own = {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")}
    at = session(auth={**shared, "okta": own, "entra": own})
    assert [b.label for b in at.button] == ["Sign in with entra", "Sign in with okta"]


@pytest.mark.parametrize(
    ("drop", "said"),
    [
        ("client_id", "[auth]: `client_id` is missing"),
        ("cookie_secret", "[auth]: `cookie_secret` is missing"),
    ],
)
def test_an_incomplete_auth_section_says_where_and_what(drop, said):
    at = session(auth={k: v for k, v in AUTH.items() if k != drop})
    assert titles(at) == ["Sign in"] and not at.button
    assert any(said in e.value and ".streamlit/secrets.toml" in e.value for e in at.error)


def test_an_unlinked_identity_sees_only_a_page_that_says_so():
    at = session(claims("stranger-1", "stranger@elsewhere.example"))
    assert titles(at) == ["Not linked"] and not at.sidebar.selectbox
    [refused] = [e.value for e in at.error]
    assert "no person of this memory is linked to" in refused and "(`not_member`)" in refused
    assert "rules?rule=R20" in refused  # the rule that refused, linked
    assert "stranger-1" in plain(texts(at)) and "stranger@elsewhere.example" in plain(texts(at))
    assert any("identity link PERSON --org ORG" in c.value and "--subject stranger-1" in c.value for c in at.code)
    assert "Acme Robotics" not in texts(at)
    at.button(key="sign_out_identity").click().run()
    assert at.user == {"is_logged_in": False}  # st.logout (the browser is sent to the provider's sign-out)
    assert titles(at.run()) == ["Sign in"]


def test_an_unverified_email_does_not_sign_in():
    live().link_identity("lee", org="acme", email="lee@acme.example")
    at = session(claims("lee-unverified", "lee@acme.example", verified=False))
    assert titles(at) == ["Not linked"]
    assert "(not verified)" in plain(texts(at))


def test_a_linked_member_acts_as_themself_only():
    live().link_identity("lee", org="acme", issuer=ISS, subject="lee-1")
    at = session(claims("lee-1"))
    ok(at)
    assert titles(at) == ["Acme Robotics"]
    assert not any(s.key in ("person", "org") for s in at.sidebar.selectbox)  # no "Act as", no other organization
    assert any(
        "Signed in as **Lee Okafor** (member) in **Acme Robotics**" in m.value and "identity provider" in m.value
        for m in at.sidebar.markdown
    )
    at.session_state["person"] = "dana"  # a stale demo choice changes nothing
    at = page(at, "settings")
    assert not at.toggle and "only the owner of Acme Robotics reads and changes" in texts(at)
    at = page(at, "erasure")
    assert "you act as lee (a member)" in texts(at)
    at.button(key="sign_out").click().run()
    assert at.user == {"is_logged_in": False} and titles(at.run()) == ["Sign in"]


def test_an_identity_linked_in_two_organizations_picks_among_them_only():
    svc = live()
    svc.link_identity("ines", org="acme", email="ines@example.com")
    svc.link_identity("ines", org="globex", email="ines@example.com")
    at = session(claims("ines-1", "ines@example.com"))
    ok(at)
    pick = at.sidebar.selectbox(key="signed_org")
    assert pick.options == ["Acme Robotics (acme)", "Globex Analytics (globex)"]
    pick.set_value("globex").run()
    ok(at)
    assert titles(at) == ["Globex Analytics"]


def test_the_owner_links_a_member_on_settings_and_bad_input_changes_nothing():
    live().link_identity("dana", org="acme", issuer=ISS, subject="dana-1")
    owner = page(session(claims("dana-1")), "settings")
    assert owner.text_input(key="id_issuer").value == ISS  # the configured provider's issuer, from its discovery URL
    owner.selectbox(key="id_person").set_value("lee")
    owner.radio(key="id_how").set_value("email").run()
    owner.text_input(key="id_email").input("lee at acme").run()
    owner.button(key="id_link").click().run()
    assert any("Not linked: Verified email" in e.value and "Nothing was changed" in e.value for e in owner.error)
    assert [x["person"] for x in live().identity_links("acme")] == ["dana"]
    owner.text_input(key="id_email").input("Lee@Acme.example").run()
    owner.button(key="id_link").click().run()
    ok(owner)
    assert any("Linked: Lee Okafor signs in here" in s.value for s in owner.success)
    assert live().identity_callers(claims("whoever", "lee@acme.example")) == {"acme": "lee"}
    lee = session(claims("whoever", "lee@acme.example"))
    assert titles(lee) == ["Acme Robotics"]
    owner.selectbox(key="id_unlink_pick").set_value(
        next(x["id"] for x in live().identity_links("acme") if x["person"] == "lee")
    )
    owner.button(key="id_unlink").click().run()
    ok(owner)
    lee.run()
    assert titles(lee) == ["Not linked"]  # signed out at its next run


def test_a_member_cannot_see_or_make_links():
    live().link_identity("lee", org="acme", email="lee@acme.example")
    at = page(session(claims("lee-1", "lee@acme.example")), "settings")
    assert not [b for b in at.button if b.key == "id_link"] and "Sign-in" not in [h.value for h in at.subheader]


def test_an_erased_account_is_signed_out_at_its_next_run():
    svc = live()
    svc.link_identity("lee", org="acme", issuer=ISS, subject="lee-1")
    at = session(claims("lee-1"))
    assert titles(at) == ["Acme Robotics"]
    svc.delete_account("lee")
    at.run()
    assert titles(at) == ["Not linked"]
    [said] = [e.value for e in at.error]
    assert "the account 'lee' you were signed in as was deleted" in said and "rules?rule=R30" in said
    assert "(`unknown_person`)" in said
    assert "Acme Robotics" not in texts(at) and not at.sidebar.selectbox
    again = session(claims("lee-1"))  # a new session of the same identity: refused too
    assert titles(again) == ["Not linked"]


def test_what_the_identity_provider_says_is_shown_as_text():
    """Claims come from outside (#26, point 3): a name, subject or address that is Markdown links nothing."""
    evil = "![t](http://203.0.113.9/t.png)[Sign in again](http://203.0.113.9/)"
    at = session({**claims(evil, "x@203.0.113.9"), "name": evil})
    shown = "\n".join(m.value for m in [*at.markdown, *at.error])
    assert "](http" not in shown and "<img" not in shown
    assert "Sign in again" in plain(shown)
