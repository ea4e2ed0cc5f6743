"""Runs at a glance (#39.5) as a Vega-Lite chart (`chart`), pure: no Altair (0.3 s of imports)."""

from __future__ import annotations

import json

from ..plain import Obj
from ..rules.wording import plural
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
#: Each kind in the legend as drawn (#39): a record an upright tick (a path in Vega's [-1, 1] box), a read a triangle.
SYMBOLS = {"record": "M-0.2,-1.3H0.2V1.3H-0.2Z", "read": "triangle-down"}
#: Words read at a glance (#39): 13 px in the page's own text colour (Streamlit's theme greys them), light or dark.
TEXT = "currentColor"
#: A turn pointed at (its bar, ticks or reads) is outlined and said under the rows (#39: a tooltip's box hid the bars
#: beside it); the chart's own, not a selection Streamlit hears (its `selection_mode`).
HOVER = {"name": "hover", "select": {"type": "point", "fields": ["turn"], "on": "pointerover", "clear": "pointerout"}}
SAID = {"type": "text", "align": "left", "baseline": "top", "fontSize": 13, "color": TEXT, "limit": {"expr": "width"}}
SAID |= {"x": 0, "y": {"expr": "height + 6"}, "aria": False}  # on a line of its own under the rows (its bar says it)
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
            title, status = titled(turn["id"], turn["request"]), turn["status"]
            said = f"{title} · {status} · {plural(turn['records'], 'record')}, {plural(len(turn['reads']), 'read')}"
            bars.append(
                {"run": run["id"], "turn": turn["id"], "lane": lane, "title": title, "status": status, "said": said}
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


def chart(t: Timeline, names: dict[str, str]) -> Obj:
    """The Vega-Lite spec of the timeline: one layer of bars (`turns`), one of records' ticks, one of reads' marks,
    one of the words of the turn pointed at (`HOVER`)."""
    bars, ticks, lanes = rows(t, names)
    x: Obj = {"field": "x", "type": "quantitative", "title": "Turns, in the order they opened", "axis": None}
    x["scale"] = {"domain": [0, len(bars)], "nice": False, "zero": True}  # every bar whole, the last at the right
    y = {"field": "lane", "type": "nominal", "sort": lanes, "title": None, "axis": {"labelLimit": 260}}
    legend = {"orient": "top"}
    status: Obj = {"field": "status", "type": "nominal", "title": "Turn status", "legend": legend}
    status["scale"] = {"domain": list(STATUSES), "range": list(STATUSES.values())}
    pointed = {"param": "hover", "empty": False}
    along = {"x": x, "x2": {"field": "x2"}, "y": y, "color": status, "description": {"field": "said"}}
    along["stroke"] = {"condition": pointed | {"value": TEXT}, "value": None}
    layers = [_layer("turns", bars, {"type": "bar", "height": {"band": 0.7}, "strokeWidth": 2, "tooltip": None}, along)]
    layers[0]["params"].append(HOVER)
    marks = {
        "record": {"type": "tick", "thickness": 1, "size": LANE * 0.4},
        "read": {"type": "point", "shape": "triangle-down", "filled": True, "size": 50, "yOffset": -LANE * 0.42},
    }
    # a tick is sent as its turn, place and words (hundreds a redraw): its run and row looked up from its bar
    where = [{k: bar[k] for k in ("turn", "run", "lane")} for bar in bars]
    lookup = {"lookup": "turn", "from": {"data": {"values": where}, "key": "turn", "fields": ["run", "lane"]}}
    symbols = {"symbols": {"shape": {"value": {"expr": f"{json.dumps(SYMBOLS)}[datum.value]"}}}}
    for kind, mark in marks.items():  # one legend names both kinds, each as drawn (each layer's colours its own)
        kinds: Obj = {"datum": kind, "type": "nominal", "title": "Inside a turn"}
        kinds |= {"scale": {"domain": list(KINDS), "range": list(KINDS.values())}}
        kinds["legend"] = legend | {"encoding": symbols} if kind == "read" else None
        if shown := [tick for tick in ticks if tick["kind"] == kind]:
            encoding = {"x": x, "y": y, "color": kinds, "tooltip": {"field": "what", "type": "nominal"}}
            layers.append(_layer(kind, shown, mark, encoding) | {"transform": [lookup]})
    said = {"condition": pointed | {"field": "said"}, "value": ""}
    layers.append({"name": "said", "data": {"values": bars}, "mark": SAID, "encoding": {"text": said}})
    labels = {"labelFontSize": 13, "labelColor": TEXT}
    return {
        "layer": layers,
        "resolve": {"scale": {"color": "independent"}},
        "height": LANE * len(lanes),  # the rows alone: the legends and axis are laid out around them (fit-x)
        "autosize": {"type": "fit-x", "contains": "padding"},
        "config": {"axis": labels, "legend": labels | {"titleColor": TEXT, "titleFontSize": 13}},
        "usermeta": {"embedOptions": {"renderer": "svg"}},  # its marks in the page: one a turn (tests count them)
    }
