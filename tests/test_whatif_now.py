"""Issue #38, point 9: the Settings page's what-if starts from memory as it is (its export), so the
count it says "now" is the Overview's and a replaced turn stays replaced (R3, R18)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_core import MemoryService, load, parse, replay
from memory_core.views import whatif

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


@pytest.mark.parametrize(("sample", "org"), [("demo.json", "acme"), ("replacement_withdraws.json", "fjord")])
def test_the_what_ifs_now_is_the_overviews_count_and_a_replaced_turn_stays_replaced(svc, sample, org):
    replay(load(str(SAMPLES / sample)), svc)
    owner = next(o["owner"] for o in svc.organizations() if o["id"] == org)
    doc, _ = whatif.history_of(svc, org, by=owner)
    compared = whatif.compare(doc, org, svc.get_settings(org, by=owner), always=True)
    now = [r for r in compared["rows"] if r["graph"] == "world" and r["status as written"] == "active"]
    assert len(now) == svc.org_map(org)["facts"]
    state = replay(parse(json.dumps(doc)), MemoryService.at("sqlite://"))[0].state()
    replaced = {t for r in state["runs"].values() for t, v in r["turns"].items() if v["status"] == "replaced"}
    held = {t["id"] for r in svc.runs(org) for t in svc.run_detail(org, r["id"])["turns"] if t["status"] == "replaced"}
    assert replaced == held and held


def test_the_what_if_changes_only_the_settings_flipped_and_holds_them_from_the_start(svc):
    """Unflipped, the what-if is memory as it is, settings changes and all; a flipped setting holds from
    the start, its recorded changes left out, the others changed where they were (R16)."""
    replay(load(str(SAMPLES / "learn_from_users.json")), svc)
    org = svc.organizations()[0]["id"]
    owner = svc.organizations()[0]["owner"]
    doc, _ = whatif.history_of(svc, org, by=owner)
    now = svc.get_settings(org, by=owner)
    changed = {k for e in doc["events"] if e["do"] == "set_settings" for k in e["settings"]}
    assert changed, "the sample changes its settings"
    same = whatif.compare(doc, org, now, always=True)
    assert not [r for r in same["rows"] if r["difference"]] and same["behaviour"]["base"] == same["behaviour"]["alt"]
    flip = sorted(changed)[0]
    alt = whatif._with_settings(doc, org, now | {flip: not now[flip]}, always=True)
    assert not any(flip in e["settings"] for e in alt["events"] if e["do"] == "set_settings")
    assert next(o for o in alt["organizations"] if o["id"] == org)["settings"][flip] is not now[flip]
