"""Property-based tests over random event sequences (hypothesis)."""

import json
import math

from backend import counted_map, examples, fresh_service
from helpers import CEO, HQ, LIKES, PREFERS, end, open_turn, run, scenario, start, world
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlmodel import Session

from memory_core import parse, replay
from memory_core.store.graph import map_counts

CLAIMS = [HQ, CEO, LIKES, PREFERS]
RELIABILITY = {"web": 0.6, "tool": 0.9, "document": 0.75}

record_st = st.tuples(
    st.sampled_from(["web", "tool", "document"]),
    st.sampled_from("abc"),
    st.lists(st.integers(0, len(CLAIMS) - 1), min_size=1, max_size=3),
)
turn_st = st.tuples(
    st.integers(0, 1),
    st.lists(record_st, max_size=3),
    st.sampled_from(["completed", "completed", "failed", "cancelled", "open"]),
    st.booleans(),
)


def source(origin, name):
    return f"https://{name}.example/page" if origin == "web" else f"{origin}:{name}"


def build(turns):
    """Events for random turns; a turn flagged `replace` replaces the run's last completed turn."""
    events = [start("r0"), start("r1", person="lee")]
    last_completed = {}
    live = {}
    for i, (r, records, status, replace) in enumerate(turns):
        tid, extra = f"t{i}", {}
        if replace and r in last_completed:
            extra["replaces"] = last_completed.pop(r)
            live.pop(extra["replaces"])
        events.append(open_turn(tid, f"r{r}", **extra))
        for origin, name, claims in records:
            events.append(
                {
                    "do": "record",
                    "turn": tid,
                    "origin": origin,
                    "source": source(origin, name),
                    "claims": [CLAIMS[c] for c in claims],
                }
            )
        if status != "open":
            events.append(end(tid, status))
        if status == "completed":
            last_completed[r] = tid
            live[tid] = records
    return events, live


def oracle(live):
    """World weights computed directly from R25 and R26 over the live turns alone."""
    votes = {}
    for records in live.values():
        for origin, name, claims in records:
            key = name if origin != "web" else f"{name}.example"
            for c in {c for c in claims if CLAIMS[c]["graph"] == "world"}:
                contrib = math.log(RELIABILITY[origin] / (1 - RELIABILITY[origin]))
                votes.setdefault(c, {})[(origin, key)] = contrib
    return {CLAIMS[c]["relation"]: (1 / (1 + math.exp(-math.fsum(v.values()))), len(v)) for c, v in votes.items()}


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(turn_st, max_size=6))
def test_world_equals_what_live_completed_turns_teach(turns):
    events, live = build(turns)
    svc = fresh_service()
    state = run(events, service=svc)
    with svc.engine.connect() as conn, Session(bind=conn) as s:
        assert map_counts(s, "acme") == counted_map(s, "acme") == state["organizations"]["acme"]["map"]
    got = {f["relation"]: (f["weight"], f["sources"]) for f in world(state)}
    want = oracle(live)
    assert got.keys() == want.keys()
    for k in want:
        assert math.isclose(got[k][0], want[k][0], rel_tol=1e-12) and got[k][1] == want[k][1]


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(turn_st, max_size=6))
def test_failed_and_cancelled_turns_change_no_graph(turns):
    turns = [(r, recs, status, replace and status in ("completed", "open")) for r, recs, status, replace in turns]
    events, _ = build(turns)
    kept = build([t for t in turns if t[2] not in ("failed", "cancelled")])[0]
    a, b = run(events), run(kept)
    for s in (a, b):
        for r in s["runs"].values():
            r.pop("turns")
            for f in r["flow"]["facts"]:
                f.pop("supports")
        for g in [*(o["world"] for o in s["organizations"].values()), *(p["user"] for p in s["people"].values())]:
            for f in g["facts"]:
                f.pop("supports")
    assert a["organizations"] == b["organizations"] and a["people"] == b["people"]
    assert a["runs"] == b["runs"]


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(turn_st, min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_weights_do_not_depend_on_completion_order(turns, rnd):
    turns = [(r, recs, "completed", False) for r, recs, _, _ in turns]
    events, _ = build(turns)
    opens = [e for e in events if e["do"] != "end_turn"]
    ends = [e for e in events if e["do"] == "end_turn"]
    shuffled = list(ends)
    rnd.shuffle(shuffled)
    a, b = world(run([*opens, *ends])), world(run([*opens, *shuffled]))
    assert [(f["weight"], f["log_odds"], f["sources"]) for f in a] == [
        (f["weight"], f["log_odds"], f["sources"]) for f in b
    ]


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.floats(0.51, 0.99), min_size=1, max_size=5), st.floats(0.51, 0.99))
def test_new_source_raises_weight_and_repeat_leaves_it(reliabilities, extra):
    def weight_with(records):
        events = [start("r0"), open_turn("t0", "r0")]
        for _i, (name, r) in enumerate(records):
            events.append(
                {"do": "record", "turn": "t0", "origin": "tool", "source": name, "reliability": r, "claims": [HQ]}
            )
        events.append(end("t0"))
        return world(run(events))[0]["weight"]

    base = [(f"s{i}", r) for i, r in enumerate(reliabilities)]
    w = weight_with(base)
    assert weight_with([*base, ("new", extra)]) > w
    weakest = min(base, key=lambda x: x[1])
    assert weight_with([*base, (weakest[0], weakest[1])]) == w


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(turn_st, max_size=6), st.sets(st.sampled_from(["r0", "r1"])))
def test_deleting_runs_changes_no_world_weight_and_leaves_no_pointer(turns, doomed):
    events, _ = build(turns)
    before = run(events)
    after = run([*events, *({"do": "delete_run", "run": r, "by": "dana"} for r in sorted(doomed))])
    assert [(f["weight"], f["sources"]) for f in world(after)] == [(f["weight"], f["sources"]) for f in world(before)]
    text = json.dumps({k: after[k] for k in ("organizations", "people", "runs")})
    for r in doomed:
        assert f'"{r}"' not in text and r not in after["runs"]


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(turn_st, max_size=5))
def test_ending_ephemeral_run_equals_deleting_it(turns):
    events, _ = build(turns)
    events[0] = start("r0", ephemeral=True)
    on = {"AllowEphemeralRuns": True}
    ended = run([*events, {"do": "end_run", "run": "r0"}], settings=on)
    deleted = run([*events, {"do": "delete_run", "run": "r0", "by": "dana"}], settings=on)
    for s in (ended, deleted):
        s.pop("refused")
    assert ended == deleted


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(turn_st, min_size=1, max_size=4), st.sampled_from(["draft", "lookup"]))
def test_refused_read_changes_nothing_and_uses_no_budget(turns, step):
    events, _ = build(turns)
    events.append(open_turn("probe", "r0"))
    svc = fresh_service()
    engine, _ = replay(parse(json.dumps(scenario(events))), svc)
    before = svc.export_state()
    result = engine.apply(
        999,
        {
            "do": "read",
            "turn": "probe",
            "call": "GraphResolve",
            "args": {"name": "Globex"},
            "args_given": {"name": "Globex"},
            "step": step,
        },
    )
    assert result.reason == "not_offered"
    assert svc.export_state() == before
