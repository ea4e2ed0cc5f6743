"""Sign-in identities (issue #26): a member linked to an identity of the organization's identity
provider, by the owner or the command line; whom a signed-in identity acts as; refusals that name
their rule; bad input that says where and what and changes nothing; an erased account's links gone
(R30). On the backend under test (SQLite by default, PostgreSQL with MEMORY_TEST_DATABASE_URL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from backend import SERVER, fresh_url
from helpers import Ran, memory_cli
from sqlmodel import SQLModel, select

from memory_core import FormatError, MemoryService, Refusal, make_engine, parse, replay
from memory_core.rules.identity import identity_problem, signed_in_identities, speaks_for

ROOT = Path(__file__).resolve().parent.parent
ISS = "https://login.acme.example"
PEOPLE = {
    "format": "memory-scenario/1",
    "organizations": [
        {"id": "acme", "name": "Acme", "owner": "dana"},
        {"id": "globex", "name": "Globex", "owner": "ivan"},
    ],
    "people": [
        {"id": "dana", "name": "Dana", "memberships": {"acme": "owner"}},
        {"id": "lee", "name": "Lee", "memberships": {"acme": "member"}},
        {"id": "zed", "name": "Zed", "memberships": {"acme": "member", "globex": "member"}},
        {"id": "ivan", "name": "Ivan", "memberships": {"globex": "owner"}},
    ],
    "workflows": [],
    "events": [],
}


def lee(**more: object) -> dict[str, object]:
    return {"iss": ISS, "sub": "lee-1", "email": "lee@acme.example", "email_verified": True, **more}


@pytest.fixture
def people(svc: MemoryService) -> MemoryService:
    replay(parse(json.dumps(PEOPLE)), svc)
    return svc


def refused(call, reason: str, rule: str) -> Refusal:
    with pytest.raises(Refusal) as caught:
        call()
    assert (caught.value.reason, caught.value.rule) == (reason, rule), caught.value
    return caught.value


# --- the pure rules ------------------------------------------------------------------------------


@pytest.mark.backend_free
@pytest.mark.parametrize(
    ("given", "where", "what"),
    [
        ({}, "identity", "give an issuer and a subject, or an email address"),
        ({"email": "a@b.example", "subject": "x"}, "email", "not both"),
        ({"subject": "x"}, "issuer", "is missing"),
        ({"issuer": ISS}, "subject", "is missing"),
        ({"issuer": "login.acme.example", "subject": "x"}, "issuer", "is not an http(s) URL"),
        ({"issuer": ISS + "?x=1", "subject": "x"}, "issuer", "has a query or a fragment"),
        ({"issuer": "https://a.example/" + "x" * 300, "subject": "x"}, "issuer", "at most 200"),
        ({"issuer": ISS, "subject": ""}, "subject", "is empty"),
        ({"issuer": ISS, "subject": " x"}, "subject", "starts or ends with a space"),
        ({"issuer": ISS, "subject": "é"}, "subject", "not printable ASCII"),
        ({"issuer": ISS, "subject": "a\x00b"}, "subject", "not printable ASCII"),
        ({"issuer": ISS, "subject": "x" * 256}, "subject", "at most 255"),
        ({"email": "lee"}, "email", "is not an email address"),
        ({"email": "lee@"}, "email", "is not an email address"),
        ({"email": "l ee@acme.example"}, "email", "spacing"),
        ({"email": "lee@acme.example\ud800"}, "email", "control character"),
        ({"email": "   "}, "email", "is empty"),
    ],
)
def test_a_bad_identity_says_where_and_what(given, where, what):
    args = {k: given.get(k) for k in ("issuer", "subject", "email")}
    problem = identity_problem(**args)
    assert problem is not None and problem[0] == where and what in problem[1], problem


@pytest.mark.backend_free
def test_an_id_token_proves_its_subject_and_only_a_verified_email():
    assert [i.kind for i in signed_in_identities(lee())] == ["subject", "email"]
    assert [i.kind for i in signed_in_identities(lee(email_verified=False))] == ["subject"]
    assert [i.kind for i in signed_in_identities(lee(email_verified="true"))] == ["subject"]  # a string is not true
    assert signed_in_identities({"email": "x@y.example"}) == []
    assert signed_in_identities(lee(iss=ISS + "/"))[0].issuer == ISS  # the issuer without its final slash
    assert signed_in_identities(lee(email="LEE@Acme.Example"))[1].key == "lee@acme.example"


@pytest.mark.backend_free
def test_a_subject_link_goes_before_an_email_link_in_one_organization():
    links = [("email", "zed", "acme"), ("subject", "lee", "acme"), ("email", "zed", "globex")]
    assert speaks_for(links) == {"acme": "lee", "globex": "zed"}


# --- the use cases --------------------------------------------------------------------------------


def test_a_linked_identity_acts_as_its_member_there_only(people):
    assert people.link_identity("lee", org="acme", issuer=ISS + "/", subject="lee-1", by="dana") is True
    assert people.identity_callers(lee()) == {"acme": "lee"}
    assert people.identity_callers(lee(iss="https://elsewhere.example")) == {}  # a subject is unique at its issuer
    assert people.identity_callers(lee(sub="lee-2", email_verified=False)) == {}
    links = people.identity_links("acme", by="dana")
    assert [(x["person"], x["kind"], x["issuer"], x["key"]) for x in links] == [("lee", "subject", ISS, "lee-1")]
    assert people.identity_links("globex", by="ivan") == []


def test_a_verified_email_links_and_an_unverified_one_does_not(people):
    people.link_identity("zed", org="acme", email="Zed@Acme.example")
    people.link_identity("zed", org="globex", email="zed@acme.example", by="ivan")
    zed = {"iss": ISS, "sub": "zed-9", "email": "ZED@acme.example"}
    assert people.identity_callers({**zed, "email_verified": True}) == {"acme": "zed", "globex": "zed"}
    assert people.identity_callers(zed) == {}
    assert people.identity_callers({**zed, "email_verified": False}) == {}


def test_linking_again_changes_nothing_and_another_person_is_refused_by_r20(people):
    assert people.link_identity("lee", org="acme", email="lee@acme.example") is True
    assert people.link_identity("lee", org="acme", email="LEE@acme.example ") is False
    taken = refused(lambda: people.link_identity("dana", org="acme", email="lee@acme.example"), "not_allowed", "R20")
    assert "signs in as 'lee' already" in taken.message
    assert people.identity_callers(lee(sub="other")) == {"acme": "lee"}
    # the same identity may speak for someone else in another organization: each owner says who is who there
    assert people.link_identity("zed", org="globex", email="lee@acme.example", by="ivan") is True
    assert people.identity_callers(lee(sub="other")) == {"acme": "lee", "globex": "zed"}


def test_only_the_owner_links_and_sees_the_links(people):
    """R15 (a decision): who signs in as whom is the owner's to say, as the settings are."""
    refused(lambda: people.link_identity("lee", org="acme", email="lee@acme.example", by="lee"), "not_owner", "R15")
    refused(lambda: people.link_identity("lee", org="acme", email="lee@acme.example", by="ivan"), "not_owner", "R15")
    refused(lambda: people.identity_links("acme", by="lee"), "not_owner", "R15")
    refused(lambda: people.unlink_identity(org="acme", email="lee@acme.example", by="zed"), "not_owner", "R15")
    assert people.identity_links("acme") == []


def test_refusals_follow_the_rules_order_and_change_nothing(people):
    """The ids named exist, then the owner, then membership (R20), as rules.md orders refusals."""
    refused(lambda: people.link_identity("lee", org="nowhere", email="a@b.example", by="dana"), "unknown_org", "R20")
    refused(lambda: people.link_identity("nobody", org="acme", email="a@b.example", by="lee"), "unknown_person", "R30")
    refused(lambda: people.link_identity("lee", org="acme", email="a@b.example", by="nobody"), "unknown_person", "R30")
    refused(lambda: people.link_identity("ivan", org="acme", email="a@b.example", by="lee"), "not_owner", "R15")
    refused(lambda: people.link_identity("ivan", org="acme", email="a@b.example", by="dana"), "not_member", "R20")
    assert people.identity_links("acme") == []


def test_bad_input_is_a_format_error_at_its_field_and_changes_nothing(people):
    before = _all_text(people)  # every row (memory's version would also move with another database's commit)
    with pytest.raises(FormatError) as caught:
        people.link_identity("lee", org="acme", issuer="login.acme.example", subject="x", by="dana")
    assert caught.value.path == "issuer" and "is not an http(s) URL" in caught.value.problem
    with pytest.raises(FormatError) as caught:  # checked before anything is looked up
        people.link_identity("nobody", org="nowhere", email="nope")
    assert str(caught.value) == "email: 'nope' is not an email address (name@domain)"
    assert people.identity_links("acme") == [] and _all_text(people) == before


def test_unlinking_ends_the_sign_in_at_once(people):
    people.link_identity("lee", org="acme", issuer=ISS, subject="lee-1")
    assert people.unlink_identity(org="acme", issuer=ISS, subject="lee-1", by="dana") is True
    assert people.unlink_identity(org="acme", issuer=ISS, subject="lee-1") is False
    assert people.identity_callers(lee()) == {}


def _all_text(svc: MemoryService) -> str:
    with svc.engine.connect() as conn:
        return "".join(str(row) for t in SQLModel.metadata.sorted_tables for row in conn.execute(select(t)))


def test_r30_an_erased_account_signs_in_as_no_one_and_its_identity_is_kept_nowhere(people):
    people.link_identity("zed", org="acme", issuer=ISS, subject="zed-subject-42")
    people.link_identity("zed", org="globex", email="zed.mail@acme.example", by="ivan")
    claims = {"iss": ISS, "sub": "zed-subject-42", "email": "zed.mail@acme.example", "email_verified": True}
    assert people.identity_callers(claims) == {"acme": "zed", "globex": "zed"}
    people.delete_account("zed")
    assert people.identity_callers(claims) == {}
    text = _all_text(people)
    assert "zed-subject-42" not in text and "zed.mail" not in text
    refused(lambda: people.link_identity("zed", org="acme", email="zed.mail@acme.example"), "unknown_person", "R30")


# --- the command line -----------------------------------------------------------------------------


def cli(url: str, *args: str) -> Ran:
    return memory_cli("identity", *args, "--db", url)


@pytest.fixture
def url(tmp_path) -> str:
    where = fresh_url("memory_identity") if SERVER else f"sqlite:///{tmp_path / 'memory.db'}"
    replay(parse(json.dumps(PEOPLE)), MemoryService(make_engine(where)))
    return where


def test_cli_links_lists_and_unlinks(url):
    p = cli(url, "link", "lee", "--org", "acme", "--issuer", ISS, "--subject", "lee-1")
    assert p.returncode == 0 and p.stdout == f"linked: lee signs in to acme with subject lee-1 of {ISS}\n", p.stderr
    p = cli(url, "link", "lee", "--org", "acme", "--issuer", ISS + "/", "--subject", "lee-1")
    assert p.returncode == 0 and p.stdout.startswith("already linked") and "nothing changed" in p.stdout
    assert cli(url, "link", "lee", "--org", "acme", "--email", "lee@acme.example").returncode == 0
    listed = json.loads(cli(url, "list", "--org", "acme", "--json").stdout)
    assert [(x["person"], x["identity"]) for x in listed] == [
        ("lee", f"subject lee-1 of {ISS}"),
        ("lee", "the verified email lee@acme.example"),
    ]
    assert "lee (Lee): the verified email lee@acme.example" in cli(url, "list", "--org", "acme").stdout
    svc = MemoryService(make_engine(url))
    assert svc.identity_callers(lee(sub="x")) == {"acme": "lee"}
    p = cli(url, "unlink", "--org", "acme", "--email", "LEE@acme.example")
    assert p.returncode == 0 and "no longer signs in to acme" in p.stdout
    p = cli(url, "unlink", "--org", "acme", "--email", "lee@acme.example")
    assert p.returncode == 1 and "is linked to no one in acme; nothing was unlinked" in p.stderr


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["link", "lee", "--org", "acme", "--email", "lee"], 2, "--email: 'lee' is not an email address"),
        (["link", "lee", "--org", "acme", "--subject", "x"], 2, "--issuer: is missing"),
        (["link", "lee", "--org", "acme", "--issuer", "ftp://x", "--subject", "x"], 2, "--issuer: 'ftp://x' is not"),
        (["link", "lee", "--org", "acme"], 2, "--issuer with --subject, or --email: missing"),
        (["link", "--org", "acme", "--email", "a@b.example"], 2, "identity link needs the person"),
        (["unlink", "lee", "--org", "acme", "--email", "a@b.example"], 2, "takes no person"),
        (["link", "ivan", "--org", "acme", "--email", "a@b.example"], 1, "refused, not_member (R20)"),
        (["link", "nobody", "--org", "acme", "--email", "a@b.example"], 1, "refused, unknown_person (R30)"),
        (["link", "lee", "--org", "nowhere", "--email", "a@b.example"], 1, "refused, unknown_org (R20)"),
        (["list", "--org", "nowhere"], 1, "refused, unknown_org (R20)"),
    ],
)
def test_cli_bad_input_and_refusals_say_where_and_what_and_change_nothing(url, args, code, said):
    before = _all_text(MemoryService(make_engine(url)))
    p = cli(url, *args)
    assert p.returncode == code and said in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert p.stdout == "" and _all_text(MemoryService(make_engine(url))) == before
    if code == 1 and "refused" in said:
        assert p.stderr.rstrip().endswith("nothing was changed")
