"""Settings R11 to R16, and the audit."""

import pytest
from helpers import HQ, end, open_turn, rec, run, start, taught_turn, web, world

from memory_core import errors as E
from memory_core import parse
from memory_core.format.replay import EventEngine


def setting(by, **values):
    return {"do": "set_settings", "org": "acme", "by": by, "settings": values}


def test_defaults():
    state = run([])
    assert state["organizations"]["acme"]["settings"] == {
        "AllowEphemeralRuns": False,
        "LearnFromEphemeralRuns": True,
        "LearnFromUsers": True,
        "NoMemoryShortcuts": False,
    }


def test_r11_ephemeral_request_stored_permanent_when_not_allowed():
    state = run(
        [start(ephemeral=True), *taught_turn("t1", web("https://a.example/", HQ)), {"do": "end_run", "run": "r1"}]
    )
    r = state["runs"]["r1"]
    assert (r["requested_ephemeral"], r["ephemeral"], r["ended"]) == (True, False, True)


def test_r11_search_runs_may_be_ephemeral_whatever_setting():
    state = run([start(surface="search", ephemeral=True)])
    assert state["runs"]["r1"]["ephemeral"] is True


def test_r15_only_owner_changes_settings_and_member_is_refused():
    state = run(
        [
            setting("lee", LearnFromUsers=False),
            setting("pat", LearnFromUsers=False),
            setting("dana", LearnFromUsers=False),
        ]
    )
    assert [r["reason"] for r in state["refused"]] == ["not_owner", "not_owner"]
    assert state["organizations"]["acme"]["settings"]["LearnFromUsers"] is False


def test_r15_invalid_change_changes_nothing():
    state = run([setting("dana", LearnFromUsers=False, Bogus=True), setting("dana", NoMemoryShortcuts="yes")])
    assert [r["reason"] for r in state["refused"]] == ["invalid_setting", "invalid_setting"]
    assert state["organizations"]["acme"]["settings"]["LearnFromUsers"] is True
    assert "Bogus" in state["refused"][0]["message"] and "R15" in state["refused"][0]["message"]


def test_r16_setting_applies_when_teaching_is_written():
    request = {"text": "Globex is in Springfield", "claims": [HQ]}
    events = [start(), open_turn("t1", request=request), setting("dana", LearnFromUsers=False), end("t1")]
    state = run(events)
    assert world(state) == [] and state["runs"]["r1"]["turns"]["t1"]["skipped"][0]["rule"] == "R8c"


def test_r16_ephemerality_decided_at_start():
    events = [start(ephemeral=True), setting("dana", AllowEphemeralRuns=True), start("r2", ephemeral=True)]
    state = run(events)
    assert state["runs"]["r1"]["ephemeral"] is False and state["runs"]["r2"]["ephemeral"] is True


def test_audit_records_who_from_to(svc):
    engine = EventEngine(svc)
    engine.setup(
        parse(
            '{"format":"memory-scenario/1","organizations":[{"id":"o","name":"O","owner":"a"}],'
            '"people":[{"id":"a","name":"A","memberships":{"o":"owner"}}],"events":[]}'
        )
    )
    svc.set_settings("o", by="a", settings={"LearnFromUsers": False, "NoMemoryShortcuts": False})
    [row] = svc.audit("o")
    assert (row["by"], row["setting"], row["from"], row["to"]) == ("a", "LearnFromUsers", True, False)
    assert row["at"]
    assert svc.get_settings("o", by="a")["LearnFromUsers"] is False
    with pytest.raises(E.InvalidSetting):
        svc.set_settings("o", by="a", settings={"LearnFromUsers": 1})
    assert len(svc.audit("o")) == 1


def test_r15_the_settings_and_their_audit_are_refused_to_anyone_but_the_owner(svc):
    """The facade refuses them (pages only lay the refusal out): a member, an outsider, someone unknown."""
    engine = EventEngine(svc)
    engine.setup(
        parse(
            '{"format":"memory-scenario/1","organizations":[{"id":"o","name":"O","owner":"a"}],'
            '"people":[{"id":"a","name":"A","memberships":{"o":"owner"}},{"id":"m","name":"M","memberships":{"o":"member"}},'
            '{"id":"x","name":"X","memberships":{}}],"events":[]}'
        )
    )
    for read in (svc.get_settings, svc.audit):
        assert read("o", by="a") is not None and read("o") is not None  # the owner; the command line (by None)
        for who in ("m", "x"):
            with pytest.raises(E.NotOwner) as refused:
                read("o", by=who)
            assert (refused.value.reason, refused.value.rule) == ("not_owner", "R15")
        with pytest.raises(E.UnknownPerson):
            read("o", by="nobody")


def test_not_member_cannot_start_run_and_unknowns():
    state = run(
        [
            start(person="pat"),
            start("r2", org="nowhere"),
            start("r3", person="ghost"),
            {**start("r4"), "workflow": "nope"},
        ]
    )
    assert [r["reason"] for r in state["refused"]] == [
        "not_member",
        "unknown_org",
        "unknown_person",
        "unknown_workflow",
    ]
    assert state["runs"] == {}


def test_duplicate_ids_even_after_erasure():
    events = [
        start(),
        open_turn("t1"),
        start(),
        open_turn("t1"),
        {"do": "delete_run", "run": "r1", "by": "dana"},
        start(),
        start("r2"),
        open_turn("t1", "r2"),
    ]
    state = run(events)
    assert [r["reason"] for r in state["refused"]] == ["duplicate_id", "duplicate_id", "duplicate_id", "duplicate_id"]


def test_r17_end_run_cancels_open_turns_and_later_events_refused():
    events = [
        start(),
        open_turn("t1"),
        {"do": "end_run", "run": "r1"},
        rec("t1", web("https://a.example/", HQ)),
        open_turn("t2"),
        end("t1"),
        {"do": "end_run", "run": "r1"},
    ]
    state = run(events)
    assert state["runs"]["r1"]["turns"]["t1"]["status"] == "cancelled"
    assert [r["reason"] for r in state["refused"]] == ["run_ended"] * 4
