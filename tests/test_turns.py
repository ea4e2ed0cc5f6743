"""The turn rules R1 to R10: only completed turns teach, replacement withdraws, nested work."""

import json

import pytest
from helpers import CEO, HQ, claim, end, open_turn, rec, run, scenario, start, taught_turn, web, world

from memory_core import EventEngine, EventResult, SkippedClaim, Taught, TurnEnded, parse
from memory_core.errors import Refusal
from memory_core.views import cell_said


def test_r1_completed_turn_teaches_world_and_flow():
    state = run([start(), *taught_turn("t1", web("https://www.globex.example/about", HQ))])
    [fact] = world(state)
    assert fact["weight"] == 0.6 and fact["supports"][0]["key"] == "globex.example"
    assert state["runs"]["r1"]["turns"]["t1"]["taught"] == {"world": 1, "user": 0, "flow": 1}


def test_r1_completing_twice_is_refused():
    state = run([start(), *taught_turn("t1", web("https://a.example/", HQ)), end("t1")])
    assert [r["reason"] for r in state["refused"]] == ["turn_not_open"]
    assert len(world(state)[0]["supports"]) == 1


def test_r2_failed_and_cancelled_teach_nothing_but_keep_evidence():
    for status in ("failed", "cancelled"):
        state = run([start(), *taught_turn("t1", web("https://a.example/", HQ), status=status)])
        assert world(state) == [] and state["runs"]["r1"]["flow"]["facts"] == []
        assert state["runs"]["r1"]["turns"]["t1"]["status"] == status
        assert state["runs"]["r1"]["turns"]["t1"]["taught"] == {"world": 0, "user": 0, "flow": 0}


def test_r3_replacing_completed_turn_withdraws_all_graphs():
    user = claim("Dana", "prefers", "Tea", graph="user", skind="person", okind="preference")
    events = [
        start(),
        *taught_turn("t1", web("https://a.example/", HQ, user)),
        open_turn("t2", replaces="t1"),
        end("t2"),
    ]
    state = run(events)
    assert world(state) == [] and state["people"]["dana"]["user"]["facts"] == []
    assert state["runs"]["r1"]["flow"] == {"entities": [], "facts": []}
    assert state["runs"]["r1"]["turns"]["t1"]["status"] == "replaced"
    assert state["runs"]["r1"]["turns"]["t1"]["taught"] == {"world": 0, "user": 0, "flow": 0}


def test_r3_replacement_keeps_other_turns_support_and_map_after_withdrawal():
    events = [
        start(),
        *taught_turn("t1", web("https://a.example/", HQ)),
        *taught_turn("t2", web("https://b.example/", HQ)),
        open_turn("t3", replaces="t1"),
    ]
    state = run(events)
    [fact] = world(state)
    assert fact["weight"] == 0.6 and fact["supports"][0]["turn"] == "t2"
    assert state["runs"]["r1"]["turns"]["t3"]["map"] == {"kinds": {"organization": 1, "place": 1}, "facts": 1}


def test_r3_replacing_failed_or_other_runs_turn_is_refused():
    events = [
        start(),
        *taught_turn("t1", status="failed"),
        open_turn("t2", replaces="t1"),
        start("r2"),
        open_turn("t3", "r2"),
        open_turn("t4", replaces="t3"),
    ]
    state = run(events)
    assert [r["reason"] for r in state["refused"]] == ["not_allowed", "not_allowed"]
    assert "t2" not in state["runs"]["r1"]["turns"]


def test_r3_replaced_turn_cannot_end():
    state = run([start(), open_turn("t1"), open_turn("t2", replaces="t1"), end("t1")])
    assert state["refused"][0]["reason"] == "turn_not_open"


def test_r5_nested_work_learned_once_at_completion():
    events = [
        start(),
        open_turn("t1"),
        {"do": "call", "turn": "t1", "work": "agent:checker"},
        rec("t1", web("https://a.example/", HQ), within="agent:checker"),
        {"do": "return", "turn": "t1", "work": "agent:checker", "status": "completed"},
    ]
    before = run(events)
    assert world(before) == []  # R6: nothing written while the turn is open
    after = run([*events, end("t1")])
    assert len(world(after)[0]["supports"]) == 1


def test_r5_failed_nested_work_contributes_nothing():
    events = [
        start(),
        open_turn("t1"),
        {"do": "call", "turn": "t1", "work": "workflow:sub"},
        rec("t1", web("https://a.example/", HQ), within="workflow:sub"),
        {"do": "return", "turn": "t1", "work": "workflow:sub", "status": "failed"},
        end("t1"),
    ]
    state = run(events)
    assert world(state) == [] and state["runs"]["r1"]["flow"]["facts"] == []


def test_r5_turn_with_open_nested_work_cannot_end():
    events = [
        start(),
        open_turn("t1"),
        {"do": "call", "turn": "t1", "work": "debater:x"},
        end("t1"),
        {"do": "call", "turn": "t1", "work": "debater:x"},
    ]
    state = run(events)
    assert [r["reason"] for r in state["refused"]] == ["nested_open", "nested_open"]
    assert state["runs"]["r1"]["turns"]["t1"]["status"] == "open"


def test_r5_record_within_work_not_open_is_refused():
    state = run([start(), open_turn("t1"), rec("t1", web("https://a.example/", HQ), within="agent:nobody")])
    assert state["refused"][0]["reason"] == "nested_not_open"


def test_r7_every_claim_goes_to_flow_whatever_its_target():
    user = claim("Dana", "prefers", "Tea", graph="user", skind="person", okind="preference")
    flow = claim("Draft", "mentions", "Springfield", graph="flow", skind="document")
    state = run([start(), *taught_turn("t1", web("https://a.example/", HQ, user, flow))])
    assert len(state["runs"]["r1"]["flow"]["facts"]) == 3
    assert state["runs"]["r1"]["turns"]["t1"]["taught"] == {"world": 1, "user": 1, "flow": 3}


def test_r8c_persons_words_not_world_when_learn_from_users_off():
    request = {"text": "Globex is in Springfield", "claims": [HQ]}
    state = run([start(), open_turn("t1", request=request), end("t1")], settings={"LearnFromUsers": False})
    assert world(state) == []
    assert state["runs"]["r1"]["turns"]["t1"]["skipped"] == [{"record": "t1#0", "claim": 0, "rule": "R8c"}]
    assert len(state["runs"]["r1"]["flow"]["facts"]) == 1


def test_r13_persons_words_learned_by_default_with_person_key():
    request = {"text": "Globex is in Springfield", "claims": [HQ]}
    state = run([start(), open_turn("t1", request=request), end("t1")])
    [fact] = world(state)
    assert fact["supports"][0]["key"] == "dana" and fact["supports"][0]["origin"] == "person"


def test_r8a_ephemeral_not_world_when_learn_from_ephemeral_off():
    settings = {"AllowEphemeralRuns": True, "LearnFromEphemeralRuns": False}
    state = run([start(ephemeral=True), *taught_turn("t1", web("https://a.example/", HQ))], settings=settings)
    assert world(state) == []
    assert state["runs"]["r1"]["turns"]["t1"]["skipped"][0]["rule"] == "R8a"


def test_r12_ephemeral_run_teaches_world_by_default():
    state = run(
        [start(ephemeral=True), *taught_turn("t1", web("https://a.example/", HQ))],
        settings={"AllowEphemeralRuns": True},
    )
    assert len(world(state)) == 1 and state["runs"]["r1"]["ephemeral"] is True


def test_r8b_ephemeral_search_learns_nothing_whatever_settings():
    state = run([start(surface="search", ephemeral=True), *taught_turn("t1", web("https://a.example/", HQ))])
    assert world(state) == [] and state["runs"]["r1"]["turns"]["t1"]["skipped"][0]["rule"] == "R8b"


def test_r8d_search_never_learns_what_people_type():
    request = {"text": "Globex is in Springfield", "claims": [HQ]}
    state = run([start(surface="search"), open_turn("t1", request=request), end("t1")])
    assert state["runs"]["r1"]["turns"]["t1"]["skipped"] == [{"record": "t1#0", "claim": 0, "rule": "R8d"}]


def test_r10_first_of_r8b_r8a_r8d_r8c_is_reported():
    request = {"text": "x", "claims": [HQ]}
    settings = {"AllowEphemeralRuns": True, "LearnFromEphemeralRuns": False, "LearnFromUsers": False}
    cases = [
        ({"surface": "search", "ephemeral": True}, "R8b"),
        ({"ephemeral": True}, "R8a"),
        ({"surface": "search"}, "R8d"),
        ({}, "R8c"),
    ]
    for extra, rule in cases:
        state = run([start(**extra), open_turn("t1", request=request), end("t1")], settings=settings)
        assert state["runs"]["r1"]["turns"]["t1"]["skipped"][0]["rule"] == rule, extra


def test_r9_user_claims_go_to_the_runs_person_not_world_kinds_only():
    pref = claim("Lee", "prefers", "Window seats", graph="user", skind="person", okind="preference")
    state = run([start(person="lee"), *taught_turn("t1", web("https://a.example/", pref))])
    assert len(state["people"]["lee"]["user"]["facts"]) == 1 and state["people"]["dana"]["user"]["facts"] == []


def test_r9_ephemeral_run_teaches_no_user_graph_and_learn_from_users_does_not_gate():
    pref = claim("Dana", "prefers", "Tea", graph="user", skind="person", okind="preference")
    request = {"text": "I like tea", "claims": [pref]}
    state = run(
        [
            start(ephemeral=True),
            open_turn("t1", request=request),
            end("t1"),
            start("r2"),
            open_turn("t2", "r2", request=request),
            end("t2"),
        ],
        settings={"AllowEphemeralRuns": True, "LearnFromUsers": False},
    )
    assert state["runs"]["r1"]["turns"]["t1"]["skipped"] == [{"record": "t1#0", "claim": 0, "rule": "R9"}]
    assert state["runs"]["r2"]["turns"]["t2"]["skipped"] == []
    assert len(state["people"]["dana"]["user"]["facts"]) == 1


def test_r10_a_turn_ending_with_skipped_claims_gives_one_skipped_claim_per_claim(svc):
    """R10 through the service, on the backend under test: end_turn returns one SkippedClaim per
    claim kept out, with the rule and what the claim says; the turn's row keeps them without the
    label, as before; the notebook shows each claim's own label (no lists joined by index)."""
    pref = claim("Dana", "prefers", "Tea", graph="user", skind="person", okind="preference")
    draft = claim("Draft", "mentions", "Springfield", graph="flow", skind="document")
    EventEngine(svc).setup(
        parse(json.dumps(scenario([], settings={"AllowEphemeralRuns": True, "LearnFromUsers": False})))
    )
    svc.start_run("r1", org="acme", person="dana", workflow="research", ephemeral=True)
    svc.open_turn(
        "t1", run="r1", request={"text": "Globex is in Springfield. I like tea.", "claims": [HQ, pref, draft]}
    )
    svc.record("t1", record=web("https://a.example/", CEO, pref))
    ended = svc.end_turn("t1", status="completed")
    hq_label, pref_label = "Globex —headquartered_in→ Springfield (world)", "Dana —prefers→ Tea (user)"
    assert ended.skipped == (
        SkippedClaim(record="t1#0", claim=0, rule="R8c", label=hq_label),  # a person's words (R8c)
        SkippedClaim(record="t1#0", claim=1, rule="R9", label=pref_label),  # an ephemeral run (R9)
        SkippedClaim(record="t1#1", claim=1, rule="R9", label=pref_label),
    )
    assert ended.status == "completed" and ended.rule is None and ended.excluded_records == ()
    assert ended.taught == Taught(world=1, user=0, flow=5)  # every claim into Flow (R7), CEO into World
    assert svc.export_state()["runs"]["r1"]["turns"]["t1"]["skipped"] == [
        {"record": "t1#0", "claim": 0, "rule": "R8c"},
        {"record": "t1#0", "claim": 1, "rule": "R9"},
        {"record": "t1#1", "claim": 1, "rule": "R9"},
    ]
    cell = cell_said.describe(EventResult(index=4, do="end_turn", outcome=ended))
    assert [(s["record"], s["claim"], s["rule"], s["claim_text"]) for s in cell["skipped"]] == [
        (s.record, s.claim, s.rule, s.label) for s in ended.skipped
    ]
    assert cell["detail"] == {"taught": {"world": 1, "user": 0, "flow": 5}, "excluded_records": []}
    svc.open_turn("t2", run="r1", request={"text": "again", "claims": [HQ]})
    assert svc.end_turn("t2", status="failed") == TurnEnded(
        status="failed", rule="R2"
    )  # nothing taught, nothing kept out


def test_r6_nothing_written_while_turn_open():
    state = run([start(), open_turn("t1"), rec("t1", web("https://a.example/", HQ))])
    assert world(state) == [] and state["runs"]["r1"]["flow"]["facts"] == []


def test_records_numbered_from_one_after_request():
    state = run(
        [
            start(),
            open_turn("t1"),
            rec("t1", web("https://a.example/", HQ)),
            rec("t1", web("https://b.example/", HQ)),
            end("t1"),
        ]
    )
    assert [s["record"] for s in world(state)[0]["supports"]] == ["t1#1", "t1#2"]


def test_same_record_claiming_a_fact_twice_is_one_support():
    state = run([start(), *taught_turn("t1", web("https://a.example/", HQ, HQ))])
    assert len(world(state)[0]["supports"]) == 1
    assert state["runs"]["r1"]["turns"]["t1"]["taught"]["world"] == 1


def test_a_person_record_names_a_member_of_the_runs_organization_anyone_else_is_no_one(svc):
    """#40, finding 7, through the service on the backend under test: a person record (or a step's)
    whose source is not a member of the run's organization (omar, of globex only; pat, of none) gets
    word for word the answer of an id that names no one, or of an erased account: no answer tells
    another organization's people apart, and nothing is recorded."""
    EventEngine(svc).setup(parse(json.dumps(scenario([]))))
    svc.start_run("r1", org="acme", person="dana", workflow="research")
    svc.open_turn("t1", run="r1", request={"text": "Where is Globex?", "claims": []})
    said = {"origin": "person", "excerpt": "so I heard", "claims": [HQ]}
    assert svc.record("t1", record={**said, "source": "lee"}).record == "t1#1"  # a member of acme
    svc.delete_account("lee")

    def answer(call, turn: str, **kwargs) -> tuple[str, str, str]:
        with pytest.raises(Refusal) as caught:
            call(turn, **kwargs)
        return caught.value.reason, caught.value.rule, caught.value.message

    for who in ("omar", "pat", "nobody", "lee"):
        by_record = answer(svc.record, "t1", record={**said, "source": who})
        by_step = answer(svc.run_step, "t1", step="lookup", record={**said, "source": who})
        assert (
            by_record
            == by_step
            == ("unknown_person", "R30", f"no person has the id {who!r} (or their account was deleted, R30)")
        )
    assert svc.record("t1", record=said).record == "t1#2"  # the run's own person, by default
