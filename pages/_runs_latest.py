"""Runs as people look for them (#38.8): a turn titled by its request, and the organization's latest
turns, each a link that opens its run on the Runs page with that turn open (`?run=R&turn=T`)."""

from __future__ import annotations

from urllib.parse import quote

from memory_core import MemoryService
from memory_core.rules.turns import teaches
from memory_core.rules.wording import claim_label
from memory_core.usecases.shapes import RunDetail, TurnDetail
from memory_core.views.timeline import titled as by_request
from pages._ui import Context, inert, read
from pages._words import markdown, plural

LATEST = 5  # the organization's most recent turns, shown as they go
STATUS = {
    "open": "open",
    "completed": "completed",
    "failed": "failed: teaches nothing (R2)",
    "cancelled": "cancelled: teaches nothing (R2)",
    "replaced": "replaced: what it taught was withdrawn (R3)",
}


def titled(turn: TurnDetail) -> str:
    """A turn by its request (the person's record, `TURN#0`, R24), shortened, its id beside it."""
    return by_request(turn["id"], next((r["excerpt"] for r in turn["records"] if r["number"] == 0), None))


def turn_link(run: str, turn: str) -> str:
    """A turn on the Runs page, as a link's target: its run chosen, the turn open."""
    return f"runs?run={quote(run, safe='')}&turn={quote(turn, safe='')}"


def _turn_said(turn: TurnDetail, cap: int | None) -> str:
    """A turn as it goes: status, records, reads (R21), what it taught (R1), what its latest record claims."""
    used = turn["probes_used"]
    reads = f"{used} of {cap} MemoryProbes used" if cap is not None else f"{used} reads, no cap"
    said = f"{STATUS.get(turn['status'], turn['status'])}, {plural(len(turn['records']), 'record')}, {reads} (R21)"
    if teaches(turn["status"]):
        taught = turn["taught"]
        said += f"; taught {plural(taught['world'], 'World support')}, {plural(taught['flow'], 'Flow support')} (R1)"
    if turn["records"] and turn["records"][-1]["claims"]:
        claims = "; ".join(claim_label(c) for c in turn["records"][-1]["claims"][:3])
        said += f"; latest record claims {inert(claims)}"
    return said


def _turn_line(run: RunDetail, turn_id: str, client: str | None) -> list[str]:
    """A turn of the latest, as a line of the list linked to it (none when the run no longer holds it)."""
    via = f" (via MCP: {client})" if client is not None else ""
    return [
        f"- [{inert(titled(t))}]({turn_link(run['id'], t['id'])}) in {inert(run['id'])}{inert(via)}: "
        f"{_turn_said(t, run['cap'])}."
        for t in run["turns"]
        if t["id"] == turn_id
    ]


def latest_turns(ctx: Context, org: str) -> None:
    """The organization's most recent turns, each as it goes (the page is live) and linked to its turn."""
    runs = read(ctx, MemoryService.runs, org)
    recent = [(r, t) for r in runs for t in r["turns"]][-LATEST:]
    if not recent:
        return
    clients = read(ctx, MemoryService.run_clients, [r["id"] for r, _ in recent])
    details = {r["id"]: read(ctx, MemoryService.run_detail, org, r["id"]) for r, _ in recent}
    lines = []
    for r, t in reversed(recent):
        lines += _turn_line(details[r["id"]], t["id"], clients.get(r["id"]))
    markdown("**Latest turns**, as they go:\n" + "\n".join(lines))
