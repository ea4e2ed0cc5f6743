"""Provenance and weight, R24 to R28."""

import math

import pytest
from backend import fresh_service
from helpers import HQ, HQ_REF, end, open_turn, rec, run, start, taught_turn, web, world
from sqlalchemy import select
from sqlmodel import SQLModel

from memory_core.rules import weights as W


def test_r26_worked_examples():
    one = W.score([("web", "a.example", W.contribution(0.6))], [], retracted=False)
    two = W.score([("web", h, W.contribution(0.6)) for h in ("a", "b")], [], retracted=False)
    three = W.score([("web", h, W.contribution(0.6)) for h in ("a", "b", "c")], [], retracted=False)
    same_host = W.score([("web", "a", W.contribution(0.6))] * 2, [], retracted=False)
    assert (round(one.weight, 3), round(two.weight, 3), round(three.weight, 3)) == (0.6, 0.692, 0.771)
    assert same_host.weight == one.weight and same_host.sources == 1


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://www.Globex.example:8443/about", "globex.example"),
        ("http://news.globex.example/x?y=1", "news.globex.example"),
        ("globex.example/about", "globex.example"),
        ("https://WWW.a.example", "a.example"),
        ("https://bücher.example/x", "xn--bcher-kva.example"),
        ("https://xn--bcher-kva.example/y", "xn--bcher-kva.example"),
        ("https://www.BÜCHER.example:8443/", "xn--bcher-kva.example"),
        ("bücher。example/z", "xn--bcher-kva.example"),
        ("https://straße.example/", "xn--strae-oqa.example"),
        ("https://☃.net/", "xn--n3h.net"),
        ("https://example.com./a", "example.com"),
        ("https://www.example.com.:8080/", "example.com"),
        ("http://[fe80::1%25eth0]/", "fe80::1%eth0"),
        ("http://[FE80::1%25ETH0]:8080/x", "fe80::1%eth0"),
        ("http://[::1]/", "::1"),
    ],
)
def test_r25_web_key_is_host_without_port_or_www(url, host):
    assert W.independence_key("web", url, run_id="r1") == host


@pytest.mark.parametrize(
    "url",
    ["https://example.com../", "https://./", "http://[fe80::1%25]/", "https://bü cher.example/", "https://-ü.example/"],
)
def test_r25_what_is_still_no_host(url):
    assert W.web_host(url) is None


def test_r25_an_idn_and_its_punycode_are_one_source():
    events = [
        start(),
        *taught_turn("t1", web("https://bücher.example/1", HQ)),
        start("r2"),
        *taught_turn("t2", web("https://www.xn--bcher-kva.example./2", HQ), run_id="r2"),
    ]
    [fact] = world(run(events))
    assert fact["sources"] == 1 and len(fact["supports"]) == 2 and fact["weight"] == 0.6
    assert {s["key"] for s in fact["supports"]} == {"xn--bcher-kva.example"}


def test_r25_keys_by_origin():
    assert W.independence_key("document", "doc:1", run_id="r1") == "doc:1"
    assert W.independence_key("tool", "crm", run_id="r1") == "crm"
    assert W.independence_key("person", "lee", run_id="r1") == "lee"
    assert W.independence_key("model", None, run_id="r9") == "model:r9"
    with pytest.raises(ValueError, match="R25"):
        W.independence_key("web", "https:///nohost", run_id="r1")


def test_r25_same_host_across_runs_is_one_source():
    events = [
        start(),
        *taught_turn("t1", web("https://www.a.example/1", HQ)),
        start("r2"),
        *taught_turn("t2", web("http://a.example:81/2", HQ), run_id="r2"),
    ]
    [fact] = world(run(events))
    assert fact["sources"] == 1 and len(fact["supports"]) == 2 and fact["weight"] == 0.6


def test_r26_source_contributes_its_largest_l():
    events = [
        start(),
        *taught_turn("t1", web("https://a.example/1", HQ, reliability=0.7)),
        *taught_turn("t2", web("https://a.example/2", HQ)),
    ]
    [fact] = world(run(events))
    assert math.isclose(fact["log_odds"], math.log(0.7 / 0.3)) and fact["sources"] == 1


def test_r26_record_reliability_frozen_on_support():
    events = [start(), *taught_turn("t1", {"origin": "tool", "source": "crm", "reliability": 0.99, "claims": [HQ]})]
    [fact] = world(run(events))
    assert math.isclose(fact["supports"][0]["contribution"], math.log(99))


def test_r24_no_fact_or_support_holds_an_excerpt():
    """R24 in the database itself: the excerpt is in its record's row, in no fact, support or entity row."""
    svc = fresh_service()
    run([start(), *taught_turn("t1", web("https://a.example/", HQ, excerpt="SECRET EXCERPT"))], service=svc)
    with svc.engine.connect() as conn:
        rows = {
            t: str(conn.execute(select(SQLModel.metadata.tables[t])).all())
            for t in ("record", "fact", "support", "entity")
        }
    assert "SECRET EXCERPT" in rows["record"]  # control: the text was stored, where R24 keeps it
    assert not [t for t in ("fact", "support", "entity") if "SECRET EXCERPT" in rows[t]]


def test_r28_dispute_subtracts_person_l_and_marks_disputed():
    events = [
        start(),
        *taught_turn("t1", web("https://a.example/", HQ)),
        {"do": "dispute", "org": "acme", "by": "lee", "fact": HQ_REF},
    ]
    [fact] = world(run(events))
    assert fact["status"] == "disputed" and fact["weight"] < 0.5
    assert fact["disputes"] == [{"by": "lee", "contribution": W.contribution(0.85)}]
    assert math.isclose(fact["log_odds"], W.contribution(0.6) - W.contribution(0.85))


def test_r28_second_dispute_by_same_person_refused():
    d = {"do": "dispute", "org": "acme", "by": "lee", "fact": HQ_REF}
    state = run([start(), *taught_turn("t1", web("https://a.example/", HQ)), d, d])
    assert [r["reason"] for r in state["refused"]] == ["not_allowed"]
    assert len(world(state)[0]["disputes"]) == 1


def test_r28_non_member_dispute_refused_and_unknown_fact():
    state = run(
        [
            start(),
            *taught_turn("t1", web("https://a.example/", HQ)),
            {"do": "dispute", "org": "acme", "by": "omar", "fact": HQ_REF},
            {"do": "dispute", "org": "acme", "by": "lee", "fact": {**HQ_REF, "relation": "nope"}},
        ]
    )
    assert [r["reason"] for r in state["refused"]] == ["not_member", "unknown_fact"]


def test_r28_retract_owner_only_and_sticky():
    events = [
        start(),
        *taught_turn("t1", web("https://a.example/", HQ)),
        {"do": "retract", "org": "acme", "by": "lee", "fact": HQ_REF},
        {"do": "retract", "org": "acme", "by": "dana", "fact": HQ_REF},
        *taught_turn("t2", web("https://b.example/", HQ), {"origin": "tool", "source": "crm", "claims": [HQ]}),
    ]
    state = run(events)
    assert [r["reason"] for r in state["refused"]] == ["not_owner"]
    [fact] = world(state)
    assert fact["status"] == "retracted" and len(fact["supports"]) == 3 and fact["weight"] > 0.9
    assert state["organizations"]["acme"]["map"] == {"kinds": {}, "facts": 0}


def test_r28_flow_facts_are_not_corrected():
    state = run(
        [
            start(),
            *taught_turn("t1", web("https://a.example/", HQ)),
            {"do": "dispute", "org": "acme", "by": "dana", "fact": HQ_REF, "graph": "flow"},
        ]
    )
    assert state["refused"][0]["reason"] == "not_allowed"


def test_r28_person_disputes_own_user_fact():
    pref = {
        "graph": "user",
        "subject": {"name": "Dana", "kind": "person"},
        "relation": "prefers",
        "object": {"value": "tea"},
    }
    ref = {k: pref[k] for k in ("subject", "relation", "object")}
    state = run(
        [
            start(),
            *taught_turn("t1", web("https://a.example/", pref)),
            {"do": "dispute", "org": "acme", "by": "dana", "fact": ref, "graph": "user"},
            {"do": "dispute", "org": "acme", "by": "lee", "fact": ref, "graph": "user"},
        ]
    )
    assert state["people"]["dana"]["user"]["facts"][0]["status"] == "disputed"
    assert state["refused"][0]["reason"] == "unknown_fact"  # Lee's own user graph has no such fact


def test_breakdown_leave_one_out():
    rows = W.breakdown(
        [
            ("web", "a", W.contribution(0.6), False),
            ("web", "a", W.contribution(0.6), True),
            ("tool", "crm", W.contribution(0.9), False),
        ],
        [],
    )
    by_key = {r.key: r for r in rows}
    assert by_key["a"].supports == 2 and by_key["a"].erased == 1
    assert math.isclose(by_key["a"].weight_without, 0.9) and math.isclose(by_key["crm"].weight_without, 0.6)
    assert math.isclose(by_key["crm"].reliability, 0.9)


def test_extra_source_raises_repeat_leaves():
    base = [start(), *taught_turn("t1", web("https://a.example/", HQ))]
    w0 = world(run(base))[0]["weight"]
    repeat = world(run([*base, *taught_turn("t2", web("https://a.example/2", HQ))]))[0]["weight"]
    new = world(run([*base, *taught_turn("t2", web("https://b.example/", HQ))]))[0]["weight"]
    assert repeat == w0 < new


def test_entity_identity_case_spacing_and_first_spelling():
    c1 = {
        "graph": "world",
        "subject": {"name": "  Globex   Corp ", "kind": "organization", "aliases": ["GX"]},
        "relation": "r",
        "object": {"value": "1"},
    }
    c2 = {
        "graph": "world",
        "subject": {"name": "GLOBEX corp", "kind": "organization", "aliases": ["gx", "Big G"]},
        "relation": "r",
        "object": {"value": "1"},
    }
    state = run(
        [
            start(),
            open_turn("t1"),
            rec("t1", web("https://a.example/", c1)),
            rec("t1", web("https://b.example/", c2)),
            end("t1"),
        ]
    )
    [e] = state["organizations"]["acme"]["world"]["entities"]
    assert e == {"name": "Globex   Corp", "kind": "organization", "aliases": ["GX", "Big G"]}
    assert world(state)[0]["sources"] == 2


def test_literal_objects_are_facts():
    c = {
        "graph": "world",
        "subject": {"name": "Globex", "kind": "organization"},
        "relation": "founded",
        "object": {"value": "1989"},
    }
    state = run([start(), *taught_turn("t1", web("https://a.example/", c))])
    assert world(state)[0]["object"] == {"value": "1989"}
    assert state["organizations"]["acme"]["map"] == {"kinds": {"organization": 1}, "facts": 1}


def test_order_of_completion_does_not_change_weights():
    a = [
        open_turn("t1"),
        rec("t1", web("https://a.example/", HQ)),
        open_turn("t2"),
        rec("t2", {"origin": "tool", "source": "crm", "reliability": 0.77, "claims": [HQ]}),
    ]
    w1 = world(run([start(), *a, end("t1"), end("t2")]))[0]
    w2 = world(run([start(), *a, end("t2"), end("t1")]))[0]
    assert w1["weight"] == w2["weight"] and w1["log_odds"] == w2["log_odds"]
