"""Worker processes for the concurrency tests.

Run as a script, it completes its turns, all workers starting at one moment (test_backends.py).
Imported, CONTENTION lists one action per use case of MemoryService: `contend` runs them in
spawned processes, phase by phase, every worker starting each phase at the same moment
(test_races.py)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

from memory_core import MemoryService, make_engine
from memory_core.errors import Refusal
from memory_core.format.checks import event as check_event
from memory_core.format.replay import apply
from memory_core.rules.settings import SETTINGS as RULE_SETTINGS

Obj = dict[str, Any]
WORKERS, CALLS = 4, 6  # processes, and calls each makes of each use case
SETTINGS = [s.name for s in RULE_SETTINGS]  # four: one per worker
FACTS = [
    {
        "graph": "world",
        "subject": {"name": "Globex", "kind": "organization"},
        "relation": f"rel{k}",
        "object": {"value": "v"},
    }
    for k in range(CALLS)
]


def own_fact(w: int, k: int) -> Obj:
    """A World fact only turn t{w}_{k} teaches (the owner retracts it)."""
    return {
        "graph": "world",
        "subject": {"name": "Globex", "kind": "organization"},
        "relation": "tag",
        "object": {"value": f"{w}-{k}"},
    }


def web_record(w: int, k: int) -> Obj:
    """The record turn t{w}_{k} makes: the shared facts from a host of its own, and its own fact."""
    return {
        "do": "record",
        "turn": f"t{w}_{k}",
        "origin": "web",
        "source": f"https://w{w}-{k}.example/",
        "excerpt": "same facts",
        "claims": [*FACTS, own_fact(w, k)],
    }


def setup_doc() -> Obj:
    """The memory the contention starts from: acme with an owner, four members who work, people to
    delete, a shared open turn s0, a busy turn per worker, and runs to delete or end."""
    members = [f"m{w}" for w in range(WORKERS)]
    leaving = [f"x{w}_{k}" for w in range(WORKERS) for k in range(CALLS)]
    events: list[Obj] = [
        {"do": "start_run", "run": "rs", "org": "acme", "person": "dana", "workflow": "open"},
        {"do": "open_turn", "run": "rs", "turn": "s0", "request": "shared"},
    ]
    for w in range(WORKERS):
        events.append({"do": "start_run", "run": f"b{w}", "org": "acme", "person": f"m{w}", "workflow": "open"})
        events.append({"do": "open_turn", "run": f"b{w}", "turn": f"bt{w}", "request": "busy"})
        for k in range(CALLS):
            for kind in ("d", "e"):
                events.append({"do": "start_run", "run": f"{kind}{w}_{k}", "org": "acme", "person": f"m{w}"})
    return {
        "format": "memory-scenario/1",
        "organizations": [{"id": "acme", "name": "Acme", "owner": "dana"}],
        "people": [
            {"id": "dana", "name": "Dana", "memberships": {"acme": "owner"}},
            *({"id": p, "name": p.upper(), "memberships": {"acme": "member"}} for p in members + leaving),
        ],
        "workflows": [{"id": "open", "org": "acme", "steps": [{"id": "lookup", "kind": "tool"}]}],
        "events": events,
    }


def _do(svc: MemoryService, raw: Obj) -> Any:
    """Run one event as the replay does: checked as the file check does, then its use case."""
    return apply(svc, check_event("event", raw))


def _busy(svc: MemoryService, w: int, k: int) -> None:
    """A write by the same worker between reads, so reads run while others write."""
    _do(
        svc,
        {"do": "record", "turn": f"bt{w}", "origin": "tool", "source": f"busy-{w}", "excerpt": f"{k}", "claims": []},
    )


def _reading(read: Callable[[MemoryService, int, int], Any]) -> Callable[[MemoryService, int, int, Obj], Any]:
    def act(svc: MemoryService, w: int, k: int, memo: Obj) -> Any:
        value = read(svc, w, k)
        _busy(svc, w, k)
        return value

    return act


def _issue(svc: MemoryService, w: int, k: int, memo: Obj) -> bool:
    memo.setdefault("tokens", []).append(svc.issue_token("dana", org="acme"))
    return True


def _fact_id(svc: MemoryService, k: int) -> int:
    return next(r["id"] for r in svc.facts_table("acme") if r["relation"] == f"rel{k}")


#: One action per public use case of MemoryService, in the order the phases run; each takes the
#: service, the worker, the call and the worker's memo, and returns what the test checks.
CONTENTION: dict[str, Callable[[MemoryService, int, int, Obj], Any]] = {
    "load_setup": lambda svc, w, k, memo: svc.load_setup(
        organizations=[{"id": f"o{w}_{k}", "name": f"O{w}{k}"}],
        people=[{"id": f"n{w}_{k}", "name": f"N{w}{k}", "memberships": {f"o{w}_{k}": "owner"}}],
        workflows=[],
    ),
    "setup": lambda svc, w, k, memo: (
        not svc.setup(  # every worker the same entries: one adds them (True)
            organizations=[{"id": f"s{k}", "name": f"S{k}", "owner": f"so{k}"}],
            people=[{"id": f"so{k}", "name": f"SO{k}", "memberships": {f"s{k}": "owner"}}],
            workflows=[{"id": f"sw{k}", "org": f"s{k}", "memory_probes": 1, "steps": []}],
        ).nothing
    ),
    "start_run": lambda svc, w, k, memo: _do(
        svc, {"do": "start_run", "run": f"r{w}_{k}", "org": "acme", "person": f"m{w}", "workflow": "open"}
    ),
    "open_turn": lambda svc, w, k, memo: _do(
        svc, {"do": "open_turn", "run": f"r{w}_{k}", "turn": f"t{w}_{k}", "request": "q"}
    ),
    "record": lambda svc, w, k, memo: [
        _do(
            svc,
            {
                "do": "record",
                "turn": "s0",
                "origin": "tool",
                "source": f"tool-{w}",
                "excerpt": f"s0 {w} {k}",
                "claims": [],
            },
        ),
        _do(svc, web_record(w, k)),
        _do(svc, {"do": "record", "turn": f"t{w}_{k}", "origin": "tool", "source": "registry", "claims": FACTS}),
    ],
    "call": lambda svc, w, k, memo: _do(svc, {"do": "call", "turn": "s0", "work": f"agent:w{w}_{k}"}),
    "return_work": lambda svc, w, k, memo: _do(
        svc, {"do": "return", "turn": "s0", "work": f"agent:w{w}_{k}", "status": "completed"}
    ),
    "run_step": lambda svc, w, k, memo: _do(
        svc,
        {
            "do": "step",
            "turn": "s0",
            "step": "lookup",
            "record": {"origin": "tool", "source": f"step-{w}", "claims": []},
        },
    ),
    "read": lambda svc, w, k, memo: _do(
        svc, {"do": "read", "turn": "s0", "call": "GraphResolve", "args": {"name": "Globex"}}
    ),
    "end_turn": lambda svc, w, k, memo: _do(svc, {"do": "end_turn", "turn": f"t{w}_{k}", "status": "completed"}),
    "dispute": lambda svc, w, k, memo: _do(
        svc,
        {"do": "dispute", "org": "acme", "by": f"m{w}", "fact": {k2: v for k2, v in FACTS[k].items() if k2 != "graph"}},
    ),
    "retract": lambda svc, w, k, memo: _do(
        svc,
        {
            "do": "retract",
            "org": "acme",
            "by": "dana",
            "fact": {k2: v for k2, v in own_fact(w, k).items() if k2 != "graph"},
        },
    ),
    "set_settings": lambda svc, w, k, memo: _do(
        svc, {"do": "set_settings", "org": "acme", "by": "dana", "settings": {SETTINGS[w]: k % 2 == 0}}
    ),
    # The MCP server's sessions (agents/): servers and sessions noted, ended, swept, while others work.
    "agent_server_started": lambda svc, w, k, memo: svc.agent_server_started(
        f"srv{w}_{k}", host="elsewhere", pid=1, transport="http", now=0.0
    ),
    "agent_server_alive": lambda svc, w, k, memo: svc.agent_server_alive(f"srv{w}_{k}", now=1.0),
    "agent_session_opened": lambda svc, w, k, memo: svc.agent_session_opened(
        f"ses{w}_{k}", server=f"srv{w}_{k}", client="racer 1", transport="http", now=1.0
    ),
    "agent_session_ended": lambda svc, w, k, memo: (
        svc.agent_session_ended(f"ses{w}_{k}", why="closed", now=2.0) and None
    ),
    "end_gone_sessions": lambda svc, w, k, memo: (
        svc.end_gone_sessions(host="elsewhere", alive=lambda server, pid: True, now=4.0, stale=1e9) == []
    ),
    "run_clients": _reading(lambda svc, w, k: svc.run_clients([f"r{w}_{k}"]) == {}),
    "issue_token": _issue,
    "token_caller": lambda svc, w, k, memo: _reading(lambda s, w2, k2: s.token_caller(memo["tokens"][k2]) is not None)(
        svc, w, k, memo
    ),
    "revoke_token": lambda svc, w, k, memo: svc.revoke_token(memo["tokens"][k]),
    # Sign-in links: every worker links the same identity at once (one links it, the others find it
    # linked), reads whom it speaks for while others write, then every worker unlinks it (one does).
    "link_identity": lambda svc, w, k, memo: svc.link_identity(
        "dana", org="acme", email=f"team-{k}@acme.example", by="dana"
    ),
    "identity_links": _reading(lambda svc, w, k: len(svc.identity_links("acme", by="dana")) == CALLS),
    "identity_callers": _reading(
        lambda svc, w, k: (
            svc.identity_callers({"email": f"Team-{k}@acme.example", "email_verified": True}) == {"acme": "dana"}
        )
    ),
    "unlink_identity": lambda svc, w, k, memo: svc.unlink_identity(org="acme", email=f"team-{k}@acme.example"),
    "end_run": lambda svc, w, k, memo: _do(svc, {"do": "end_run", "run": f"e{w}_{k}"}),
    "delete_run": lambda svc, w, k, memo: _do(svc, {"do": "delete_run", "run": f"d{w}_{k}", "by": f"m{w}"}),
    "delete_account": lambda svc, w, k, memo: _do(svc, {"do": "delete_account", "person": f"x{w}_{k}"}),
    "get_settings": _reading(lambda svc, w, k: svc.get_settings("acme", by="dana")),
    "org_map": _reading(lambda svc, w, k: svc.org_map("acme")),
    "export_state": _reading(lambda svc, w, k: bool(svc.export_state())),
    "holds_memory": _reading(lambda svc, w, k: svc.holds_memory()),
    "export_scenario": _reading(lambda svc, w, k: bool(svc.export_scenario(run=f"r{w}_{k}")[0]["events"])),
    "audit": _reading(lambda svc, w, k: bool(svc.audit("acme"))),
    "organizations": _reading(lambda svc, w, k: bool(svc.organizations())),
    "members": _reading(lambda svc, w, k: bool(svc.members("acme"))),
    "runs": _reading(lambda svc, w, k: bool(svc.runs("acme"))),
    "run_ids": _reading(lambda svc, w, k: bool(svc.run_ids("acme"))),
    "people": _reading(lambda svc, w, k: bool(svc.people())),
    "workflows": _reading(lambda svc, w, k: isinstance(svc.workflows("acme"), list)),
    "run_detail": _reading(lambda svc, w, k: bool(svc.run_detail("acme", f"r{w}_{k}"))),
    "graph": _reading(lambda svc, w, k: bool(svc.graph("world", "acme"))),
    "communities": _reading(lambda svc, w, k: bool(svc.communities("world", "acme")["links"])),
    "focus": _reading(lambda svc, w, k: svc.focus("world", "acme", None, depth=1)["focus"] is not None),
    "find_entities": _reading(lambda svc, w, k: isinstance(svc.find_entities({"world": "acme"}, "acme"), list)),
    "timeline": _reading(lambda svc, w, k: bool(svc.timeline("acme")["runs"])),
    "shown": _reading(lambda svc, w, k: bool(svc.shown())),
    "facts_table": _reading(lambda svc, w, k: bool(svc.facts_table("acme"))),
    "fact_breakdown": _reading(lambda svc, w, k: bool(svc.fact_breakdown(_fact_id(svc, k)))),
    "turn_view": _reading(lambda svc, w, k: bool(svc.turn_view(f"t{w}_{k}"))),
    "run_erasure_preview": _reading(lambda svc, w, k: bool(svc.run_erasure_preview(f"r{w}_{k}"))),
    "account_erasure_preview": _reading(lambda svc, w, k: bool(svc.account_erasure_preview(f"m{w}"))),
    "counts": _reading(lambda svc, w, k: bool(svc.counts())),
    "turn_reads": _reading(lambda svc, w, k: isinstance(svc.turn_reads(f"t{w}_{k}"), list)),
    "reads_then": _reading(lambda svc, w, k: svc.reads_then("acme", 10**9)[0] >= 0),
    "fact_readers": _reading(lambda svc, w, k: isinstance(svc.fact_readers("acme", _fact_id(svc, k)), list)),
    "read_trace": _reading(lambda svc, w, k: "reads" in svc.read_trace(None)),
    "started_by": _reading(lambda svc, w, k: svc.started_by(run=f"never{w}_{k}") is None),
    "version": _reading(lambda svc, w, k: svc.version() is not None),
    "read_servers": _reading(lambda svc, w, k: svc.read_servers()["standby"] is None),
    "erasure_status": _reading(lambda svc, w, k: "pending" in svc.erasure_status()),
    "finish_erasure": _reading(lambda svc, w, k: "bytes_gone" in svc.finish_erasure(timeout=30)),
    # History (R32): reads of the past while the other workers change the present.
    "clock": _reading(lambda svc, w, k: svc.clock() > 0),
    "moments": _reading(lambda svc, w, k: bool(svc.moments())),
    "moment_numbers": _reading(lambda svc, w, k: bool(svc.moment_numbers(org="acme"))),
    "resolve_moment": _reading(lambda svc, w, k: svc.resolve_moment("1") == 1),
    "state_at": _reading(lambda svc, w, k: bool(svc.state_at(svc.clock()))),
    "graph_at": _reading(lambda svc, w, k: "facts" in svc.graph_at("world", "acme", svc.clock())),
    "map_at": _reading(lambda svc, w, k: "facts" in svc.map_at("acme", svc.clock())),
    "facts_between": _reading(lambda svc, w, k: len(svc.facts_between(0, svc.clock())) == 2),
    "fact_history": _reading(lambda svc, w, k: "supports" in svc.fact_history(_fact_id(svc, k))),
}


def contend(url: str, w: int, barrier: Any, out: Any) -> None:
    """One worker: every phase of CONTENTION at the moment all workers reach it; each call's
    outcome ("ok" and its value, a refusal's reason, or the error) goes to `out`."""
    svc = MemoryService(make_engine(url, create=False))
    memo: Obj = {}
    for name, act in CONTENTION.items():
        barrier.wait(timeout=300)
        outcomes = []
        for k in range(CALLS):
            try:
                value = act(svc, w, k, memo)
                outcomes.append(["ok", value if isinstance(value, bool) else None])
            except Refusal as refusal:
                outcomes.append([refusal.reason, None])
            except Exception as exc:  # noqa: BLE001  (reported to the test, which fails on it)
                outcomes.append([f"{type(exc).__name__}: {str(exc)[:300]}", None])
        out.put((w, name, outcomes))
    out.put((w, "retries", svc.retries))


if __name__ == "__main__":
    url, start_at, turns = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    svc = MemoryService(make_engine(url, create=False))
    while time.time() < start_at:
        time.sleep(0.001)
    for turn in turns:
        svc.end_turn(turn, status="completed")
    print(json.dumps({"retries": svc.retries}))
