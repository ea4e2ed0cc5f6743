"""A notebook's saved results scrubbed of what its own cells erased (#26, R17, R29, R30); its cells stay."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from ..plain import Obj
from .text import JSON

if TYPE_CHECKING:
    from .notebook import Notebook

#: What a scrubbed piece of text reads.
ERASED = "(erased)"
#: The fields of a support or a record that point into a run, cleared when the run is erased.
POINTER = ("run", "turn", "record", "excerpt")


@dataclass
class Erased:
    """What the notebook's own cells erased, as its results would hold it."""

    runs: set[str] = field(default_factory=set)
    turns: set[str] = field(default_factory=set)
    people: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)  # excerpts, requests, names: whole values
    words: set[str] = field(default_factory=set)  # ids and names, also inside a sentence or a label

    def __bool__(self) -> bool:
        return bool(self.runs or self.people)


def _text(e: Obj) -> str | None:
    """An open_turn's request, a record's or step's excerpt (None for any other event)."""
    if e.get("do") == "open_turn":
        return e["request"] if isinstance(e["request"], str) else (e["request"] or {}).get("text")
    record = e if e.get("do") == "record" else (e.get("record") or {}) if e.get("do") == "step" else {}
    return record.get("excerpt")


def erased(nb: Notebook) -> Erased:
    """What the cells run so far erased: runs deleted or ended ephemeral, their turns, accounts, texts (R11, R29, R30)."""
    events, ran = nb.scenario["events"], enumerate(nb.scenario["events"][: nb.cursor])
    done = [(e, r) for i, e in ran if (r := nb.results.get(str(i), {})).get("status") == "ok"]
    runs = {e["run"] for e, r in done if e["do"] == "delete_run" or e["do"] == "end_run" and r["detail"].get("erased")}
    people = {e["person"] for e, _ in done if e["do"] == "delete_account"}
    turns = {e["turn"] for e in events if e.get("do") == "open_turn" and e.get("run") in runs}
    names = {p.get("name") for p in nb.scenario.get("people", []) if p["id"] in people} - {None, ""}
    texts = {t for e in events if e.get("turn") in turns and (t := _text(e))} | names  # requests, excerpts
    return Erased(runs=runs, turns=turns, people=people, texts=texts, words=runs | turns | people | names)


def _owned(item: Obj, gone: Erased) -> bool:
    """A fact change of an erased Flow or User graph, or a claim only an erased record held."""
    if item.get("owner") in {"flow": gone.runs, "user": gone.people}.get(item.get("graph") or "", set()):
        return True
    record = item.get("record")
    return "claim_text" in item and isinstance(record, str) and record.split("#", 1)[0] in gone.turns


class _Scrubber:
    def __init__(self, gone: Erased) -> None:
        self.gone = gone
        self.count = 0
        words = "|".join(map(re.escape, sorted(gone.words, key=len, reverse=True)))  # never empty: something went
        self.pattern = re.compile(r"(?<![\w-])(" + words + r")(?:#\d+)?(?![\w-])")

    def text(self, value: str) -> str | None:
        if value in self.gone.texts:
            self.count += 1
            return None
        new, n = self.pattern.subn(ERASED, value)
        self.count += n
        return new

    def walk(self, value: JSON) -> JSON:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            kept = [v for v in value if not (isinstance(v, dict) and _owned(v, self.gone))]
            self.count += len(value) - len(kept)
            return [self.walk(v) for v in kept]
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in self.unpointed(value).items()}
        return value

    def unpointed(self, value: Obj) -> Obj:
        """A support or record pointing into an erased run, its pointer cleared as memory keeps it (R29)."""
        if value.get("run") in self.gone.runs and any(k in value for k in POINTER[1:]):
            self.count += 1
            return {**value, **{k: None for k in POINTER if k in value}}
        return value


def scrub(nb: Notebook) -> int:
    """Scrub its results, reads and refusals of what its own cells erased (R29, R30): how many values."""
    if not (gone := erased(nb)):
        return 0
    scrubber = _Scrubber(gone)
    results: Obj = {}
    for key, res in nb.results.items():
        before = scrubber.count
        results[key] = scrubber.walk(res)
        if scrubber.count > before:
            results[key]["scrubbed"] = True
    nb.reads, nb.refused = (cast("list[Obj]", scrubber.walk(cast("JSON", kept))) for kept in (nb.reads, nb.refused))
    nb.results = results
    nb.outside = [scrubber.text(t) or ERASED for t in nb.outside]
    return scrubber.count


def pending(nb: Notebook) -> int:
    """How many saved values `scrub` would take out now, on a copy (the notebook itself unchanged)."""
    return scrub(nb.model_copy())
