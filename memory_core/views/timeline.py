"""Runs at a glance (issue #39.5), as a chart's data: a bar a turn, coloured by its status, placed in the order
the turns opened on its run's row (newest run on top), with a tick a record and a tick a read inside it, in the
order they came. Pure: the facade's `timeline` in, rows out."""

from __future__ import annotations

from ..plain import Obj
from ..usecases.shapes import Timeline, TimelineRead, TimelineTurn

#: The statuses a turn has, and each one's colour (R1 to R3), as the chart's legend names them.
STATUSES = {
    "completed": "#2e7d32",
    "open": "#1e88e5",
    "failed": "#c62828",
    "cancelled": "#9e9e9e",
    "replaced": "#f9a825",
}
GAP = 0.12  # of a turn's place left empty on each side of its bar
SHORT = 60  # a request in a turn's title is cut here, an ellipsis after


def short(text: str | None) -> str:
    """A request on one line, cut at SHORT characters."""
    said = " ".join((text or "").split())
    return said if len(said) <= SHORT else said[: SHORT - 1].rstrip() + "…"


def titled(turn_id: str, request: str | None) -> str:
    """A turn by its request (R24: its record #0), shortened, its id beside it; its id alone without one."""
    said = short(request)
    return f"{said} ({turn_id})" if said else turn_id


def _events(turn: TimelineTurn) -> list[tuple[str, str]]:
    """The turn's records and reads in the order they came: a read came after the records it counted."""
    out: list[tuple[str, str]] = []
    reads = sorted(turn["reads"], key=lambda r: r["records"])  # stable: reads in the order made
    i = 0
    for n in range(turn["records"]):
        while i < len(reads) and reads[i]["records"] <= n:
            out.append(("read", _read(reads[i])))
            i += 1
        out.append(("record", "its request (R24)" if n == 0 else f"record {turn['id']}#{n}"))
    out += [("read", _read(r)) for r in reads[i:]]
    return out


def _read(read: TimelineRead) -> str:
    return f"{read['call']}: " + ("told" if read["outcome"] == "ok" else f"refused, {read['outcome']}")


def rows(t: Timeline, names: dict[str, str]) -> tuple[list[Obj], list[Obj], list[str]]:
    """The bars (one a turn), the ticks (one a record or read) and the runs' rows, newest run first."""
    order = sorted(turn["seq"] for run in t["runs"] for turn in run["turns"])
    place = {seq: i for i, seq in enumerate(order)}  # a turn's place among those shown, in the order they opened
    bars: list[Obj] = []
    ticks: list[Obj] = []
    lanes = []
    for run in t["runs"]:
        lane = f"{run['id']} · {names.get(run['person'] or '', run['person'] or 'erased (R30)')}"
        lanes.append(lane)
        for turn in run["turns"]:
            x = place[turn["seq"]]
            events = _events(turn)
            bars.append(
                {
                    "run": run["id"],
                    "turn": turn["id"],
                    "lane": lane,
                    "title": titled(turn["id"], turn["request"]),
                    "status": turn["status"],
                    "records": turn["records"],
                    "reads": len(turn["reads"]),
                    "x": x + GAP,
                    "x2": x + 1 - GAP,
                }
            )
            width = 1 - 2 * GAP
            for k, (kind, what) in enumerate(events):
                at = x + GAP + width * (k + 0.5) / len(events)
                ticks.append({"run": run["id"], "turn": turn["id"], "lane": lane, "kind": kind, "what": what, "x": at})
    return bars, ticks, lanes


def capped(t: Timeline) -> str:
    """What the chart leaves out, in words ('' when it draws every run and turn)."""
    shown = len(t["runs"])
    turns = sum(len(r["turns"]) for r in t["runs"])
    said = []
    if shown < t["runs_total"]:
        said.append(f"the {shown} newest of {t['runs_total']:,} runs")
    if turns < t["turns_total"]:
        said.append(f"their {turns} newest turns of {t['turns_total']:,}")
    return ("Drawn: " + " and ".join(said) + "; the Runs table lists every run.") if said else ""
