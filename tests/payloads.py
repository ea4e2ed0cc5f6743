"""A memory whose every text would be Markdown and HTML pointing at another host (#26, point 3)."""

from __future__ import annotations

from typing import Any

EVIL = "evil.example"
P = f'![i](http://{EVIL}/px.png)[Sign in again](http://{EVIL}/login)<img src="http://{EVIL}/h.png">'


def _e(name: str, kind: str = "organization") -> dict[str, str]:
    return {"name": name, "kind": kind}


def payload_scenario() -> dict[str, Any]:
    org, dana, lee = f"acme![o](http://{EVIL}/o.png)", f"dana![p](http://{EVIL}/p.png)", f"lee[l](http://{EVIL}/l)"
    run, run2 = f"r1[run](http://{EVIL}/r)", f"r2{P}"
    turn, turn2, turn3 = f"t1![t](http://{EVIL}/t.png)", f"t2[t2](http://{EVIL}/t2)", f"t3{P}"
    wf = f"wf[w](http://{EVIL}/w)"
    claims = [
        {
            "graph": "world",
            "subject": _e(f"Globex {P}"),
            "relation": f"hq[r](http://{EVIL}/rel)",
            "object": _e(f"Town {P}", "place"),
        },
        {"graph": "world", "subject": _e(f"Globex {P}"), "relation": "ceo", "object": _e(f"Ann {P}", "person")},
        {"graph": "user", "subject": _e(f"Dana {P}", "person"), "relation": "prefers", "object": {"value": f"EUR {P}"}},
        {"graph": "flow", "subject": _e(f"Step {P}", "idea"), "relation": "notes", "object": {"value": P}},
    ]
    return {
        "format": "memory-scenario/1",
        "title": f"Story {P}",
        "description": f"About {P}",
        "organizations": [{"id": org, "name": f"Acme {P}", "owner": dana}],
        "people": [
            {"id": dana, "name": f"Dana {P}", "memberships": {org: "owner"}},
            {"id": lee, "name": f"Lee {P}", "memberships": {org: "member"}},
        ],
        "workflows": [{"id": wf, "org": org, "steps": [{"id": f"plan{P}", "kind": "model", "admits_calls": True}]}],
        "events": [
            {"do": "start_run", "run": run, "org": org, "person": dana, "workflow": wf},
            {"do": "open_turn", "run": run, "turn": turn, "request": f"Find {P}"},
            {
                "do": "record",
                "turn": turn,
                "origin": "web",
                "source": f"https://{EVIL}/src",
                "excerpt": f"Says {P}",
                "claims": claims,
            },
            {"do": "end_turn", "turn": turn, "status": "completed"},
            {"do": "open_turn", "run": run, "turn": turn2, "request": f"More {P}"},
            {
                "do": "record",
                "turn": turn2,
                "origin": "document",
                "source": f"doc:{P}",
                "excerpt": P,
                "claims": claims[1:2],
            },
            {"do": "end_turn", "turn": turn2, "status": "failed"},
            {
                "do": "dispute",
                "org": org,
                "by": lee,
                "fact": {k: claims[1][k] for k in ("subject", "relation", "object")},
            },
            {"do": "start_run", "run": run2, "org": org, "person": dana, "workflow": wf},
            {"do": "open_turn", "run": run2, "turn": turn3, "request": P},
        ],
    }
