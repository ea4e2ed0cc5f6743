"""Runs at a glance (#39.5) as a Vega-Lite chart (`chart`), pure: no Altair (0.3 s of imports)."""

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
LANE = 30  # pixels a run's row
KINDS = {"record": "#212121", "read": "#7b1fa2"}  # the ticks' colours
SHORT = 60  # a request in a turn's title is cut here, an ellipsis after


def titled(turn_id: str, request: str | None) -> str:
    """A turn by its request (R24: its record #0) on one line, cut at SHORT characters, its id beside it."""
    said = " ".join((request or "").split())
    said = said if len(said) <= SHORT else said[: SHORT - 1].rstrip() + "…"
    return f"{said} ({turn_id})" if said else turn_id


def _events(turn: TimelineTurn) -> list[tuple[str, str]]:
    """The turn's records and reads in the order they came: a read came after the records it counted."""
    reads = sorted(turn["reads"], key=lambda r: r["records"])  # stable: reads in the order made
    out: list[tuple[str, str]] = []
    for n in range(turn["records"]):
        out += [("read", _read(r)) for r in reads if r["records"] == n]
        out.append(("record", "its request (R24)" if n == 0 else f"record {turn['id']}#{n}"))
    return out + [("read", _read(r)) for r in reads if r["records"] >= turn["records"]]


def _read(read: TimelineRead) -> str:
    return f"{read['call']}: " + ("told" if read["outcome"] == "ok" else f"refused, {read['outcome']}")


def rows(t: Timeline, names: dict[str, str]) -> tuple[list[Obj], list[Obj], list[str]]:
    """The bars (one a turn), the ticks (one a record or read) and the runs' rows, newest run first."""
    order = sorted(turn["seq"] for run in t["runs"] for turn in run["turns"])
    place = {seq: i for i, seq in enumerate(order)}  # a turn's place among those shown, in the order they opened
    bars: list[Obj] = []
    ticks: list[Obj] = []
    lanes = [f"{run['id']} · {names.get(run['person'] or '', run['person'] or 'erased (R30)')}" for run in t["runs"]]
    for run, lane in zip(t["runs"], lanes, strict=True):
        for turn in run["turns"]:
            x, events = place[turn["seq"]], _events(turn)
            bars.append(
                {"run": run["id"], "turn": turn["id"], "lane": lane, "title": titled(turn["id"], turn["request"])}
                | {"status": turn["status"], "records": turn["records"], "reads": len(turn["reads"])}
                | {"x": x + GAP, "x2": x + 1 - GAP}
            )
            for k, (kind, what) in enumerate(events):  # its run and row: its bar's
                at = x + GAP + (1 - 2 * GAP) * (k + 0.5) / len(events)
                ticks.append({"turn": turn["id"], "kind": kind, "what": what, "x": at})
    return bars, ticks, lanes


def capped(t: Timeline) -> str:
    """What the chart leaves out, in words ('' when it draws every run and turn)."""
    shown, turns = len(t["runs"]), sum(len(r["turns"]) for r in t["runs"])
    said = [f"the {shown} newest of {t['runs_total']:,} runs"] if shown < t["runs_total"] else []
    said += [f"their {turns} newest turns of {t['turns_total']:,}"] if turns < t["turns_total"] else []
    return ("Drawn: " + " and ".join(said) + "; the Runs table lists every run.") if said else ""


def _layer(name: str, values: list[Obj], mark: Obj, encoding: Obj) -> Obj:
    """A layer of the chart, a click on one of its marks selecting that mark's run and turn (`name`)."""
    select = {"name": name, "select": {"type": "point", "fields": ["run", "turn"], "on": "click"}}
    layer = {"name": name, "data": {"values": values}, "mark": mark | {"cursor": "pointer"}}
    return layer | {"params": [select], "encoding": encoding}


def _tip(field: str, title: str) -> Obj:
    return {"field": field, "type": "nominal", "title": title}


def chart(t: Timeline, names: dict[str, str]) -> Obj:
    """The Vega-Lite spec of the timeline: one layer of bars (`turns`), one of records' ticks, one of reads' marks."""
    bars, ticks, lanes = rows(t, names)
    x: Obj = {"field": "x", "type": "quantitative", "title": "Turns, in the order they opened", "axis": None}
    x["scale"] = {"domain": [0, len(bars)], "nice": False, "zero": True}  # every bar whole, the last at the right
    y = {"field": "lane", "type": "nominal", "sort": lanes, "title": None, "axis": {"labelLimit": 260}}
    legend = {"orient": "top"}
    status: Obj = {"field": "status", "type": "nominal", "title": "Turn status", "legend": legend}
    status["scale"] = {"domain": list(STATUSES), "range": list(STATUSES.values())}
    tips = [_tip("title", "Turn"), _tip("status", "Status"), _tip("records", "Records"), _tip("reads", "Reads")]
    along = {"x": x, "x2": {"field": "x2"}, "y": y, "color": status, "tooltip": tips}
    layers = [_layer("turns", bars, {"type": "bar", "height": {"band": 0.7}}, along)]
    marks = {
        "record": {"type": "tick", "thickness": 1, "size": LANE * 0.4},
        "read": {"type": "point", "shape": "triangle-down", "filled": True, "size": 50, "yOffset": -LANE * 0.42},
    }
    # a tick is sent as its turn, place and words (hundreds a redraw): its run and row looked up from its bar
    where = [{k: bar[k] for k in ("turn", "run", "lane")} for bar in bars]
    lookup = {"lookup": "turn", "from": {"data": {"values": where}, "key": "turn", "fields": ["run", "lane"]}}
    for kind, mark in marks.items():  # one legend names both kinds (each layer's colours are its own)
        kinds: Obj = {"datum": kind, "type": "nominal", "title": "Inside a turn"}
        kinds |= {"scale": {"domain": list(KINDS), "range": list(KINDS.values())}}
        kinds["legend"] = legend | {"symbolType": "triangle-down"} if kind == "read" else None
        if shown := [tick for tick in ticks if tick["kind"] == kind]:
            encoding = {"x": x, "y": y, "color": kinds, "tooltip": [_tip("what", "What")]}
            layers.append(_layer(kind, shown, mark, encoding) | {"transform": [lookup]})
    return {
        "layer": layers,
        "resolve": {"scale": {"color": "independent"}},
        "height": LANE * len(lanes),  # the rows alone: the legends and axis are laid out around them (fit-x)
        "autosize": {"type": "fit-x", "contains": "padding"},
        "usermeta": {"embedOptions": {"renderer": "svg"}},  # its marks in the page: one a turn (tests count them)
    }
