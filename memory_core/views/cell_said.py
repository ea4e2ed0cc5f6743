"""What a notebook cell did (#24, #37): its result kept as a `CellResult` (detail: its use case's result) and said."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, ValidationError, field_serializer

from ..format.replay import BY_EVENT, EventResult
from ..plain import Obj
from ..rules.wording import RULE_TEXT, fact_label
from ..store.graph import FactChange
from ..usecases import results
from ..usecases.results import Outcome, Result
from .text import inert, plural, probes_used, refused

Tone = Literal["success", "info", "caption", "warning", "error", "markdown"]


class ClaimKeptOut(Result):
    """A claim kept out, and why (R10): one per claim, with what it says."""

    rule: str
    claim: int
    record: str
    why: str = ""
    claim_text: str = ""


class Change(Result):
    """A fact's change, in the words of a table row."""

    graph: str
    owner: str
    fact: str
    change: str
    weight_before: float | None = None
    weight_after: float | None = None
    status_before: str | None = None
    status_after: str | None = None


class CellResult(Result):
    """One cell's result as kept: applied with its changes and result, or refused and why (#26)."""

    index: int
    do: str
    status: Literal["ok", "refused"]
    reason: str | None = None
    message: str | None = None
    changes: list[Change] = Field(default_factory=list)
    skipped: list[ClaimKeptOut] = Field(default_factory=list)
    detail: Outcome | None = None
    scrubbed: bool = False

    @field_serializer("detail")
    def _kept(self, detail: Outcome | None) -> Obj:
        return detail.to_json() if detail is not None else {}


def change(c: FactChange) -> Change:
    """A fact's change as a row of a cell's table."""
    (wb, sb), (wa, sa) = c.before or (None, None), c.after or (None, None)
    row: Obj = {"weight_before": wb, "weight_after": wa, "status_before": sb, "status_after": sa}
    return Change(graph=c.graph, owner=c.owner, fact=fact_label(c.fact), change=c.kind, **row)


def describe(result: EventResult) -> Obj:
    """A cell's result as kept: refused, or its changes, claims kept out (R10) and the use case's result."""
    out = None if result.refused else result.outcome
    kept_out = out.skipped if isinstance(out, results.TurnEnded) else ()
    head: Obj = {"index": result.index, "do": result.do, "reason": result.reason, "message": result.message}
    changes = [change(c) for c in out.changes] if out else []
    skipped = [ClaimKeptOut(**s.stored(), why=RULE_TEXT.get(s.rule, ""), claim_text=s.label) for s in kept_out]
    cell = CellResult(
        **head, status="refused" if result.refused else "ok", changes=changes, skipped=skipped, detail=out
    )
    return cell.model_dump(mode="json", by_alias=True, exclude={"scrubbed"})


def read(res: Obj) -> CellResult:
    """A kept result read back, its detail read as its kind's result: ValueError says what is wrong."""
    try:
        cell = CellResult.model_validate({**res, "detail": None})
        if cell.do not in BY_EVENT:
            raise ValueError(f"`do` is {json.dumps(cell.do)[:40]}, not a kind of event")
        if cell.status == "ok":
            return cell.model_copy(update={"detail": BY_EVENT[cell.do].model_validate(res.get("detail") or {})})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the result"
        raise ValueError(f"`{where}`: {first['msg']}") from None
    return cell


# --- what the page shows ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Said:
    """A sentence in a tone (Streamlit's success, info, caption, warning, error or plain Markdown)."""

    tone: Tone
    text: str


@dataclass(frozen=True, slots=True)
class ChangeTable:
    """The fact changes, as a table (compact: only the fact and where it ended)."""

    rows: list[Change]


@dataclass(frozen=True, slots=True)
class ReadAnswer:
    """A read's answer, as a table's rows (views/cells.answer_rows)."""

    result: object


Piece = Said | ChangeTable | ReadAnswer
#: A record's id as the page shows it (a link to it on Runs when the notebook knows its run).
RecordLink = Callable[[str], str]
#: What an erasure did to the text's bytes (R31): out of the files, leaving them later, or not known.
GONE = {
    True: " Its text is out of the database's files (R31).",
    False: " Its text leaves the database's files once nothing older still reads them (R31).",
    None: "",
}
SCRUBBED = "Scrubbed of what a later cell erased: it reads `(erased)` where that was (R29, R30)."
#: What a correction that changed the fact did, said above its table (R28).
CORRECTED = {
    "dispute": "Disputed (R28): the person's reliability is taken off the fact's log-odds, so its weight "
    "falls; under 0.5 it is disputed, kept but not served.",
    "retract": "Retracted (R28): the fact is kept with its history but never served again.",
}


def _rule(rule: str | None) -> list[Piece]:
    return [Said("info", f"{rule}: {RULE_TEXT.get(rule, '')}")] if rule else []


def _of_a_turn(d: Outcome, link: RecordLink) -> list[Piece] | None:
    """What a run's or a turn's result says (R1-R11, R17, R18, R22); None for another kind."""
    match d:
        case results.RunStarted():
            started = f"Run started{', stored as ephemeral (R11)' if d.ephemeral else ''}."
            return _rule(d.rule) + [Said("caption", started)]
        case results.TurnOpened():
            kinds = ", ".join(f"{n} {inert(k)}" for k, n in d.map["kinds"].items()) or "no entity yet"
            facts = plural(d.map["facts"], "active fact")
            said = f"The turn starts with the map of its organization's World graph (R18): {facts}; entities: {kinds}."
            return [Said("info", said)]
        case results.StepRun() if d.shortcut:
            weight, graph = d.shortcut.get("weight"), d.shortcut.get("fact", {}).get("graph", "World")
            at = f" with weight {weight:.3f}" if isinstance(weight, int | float) else ""
            return [Said("info", f"Skipped by a shortcut (R22): memory already answers{at} ({inert(graph)} graph).")]
        case results.RecordKept() | results.StepRun() if d.record:
            kept = f"Kept record {link(d.record)} as evidence: nothing is written to memory yet, while the turn is open"
            return [Said("info", f"{kept} (R6).")]
        case results.StepRun():
            return [Said("caption", "The step ran and kept no record: nothing to write (R6).")]
        case results.WorkCalled():
            return [Said("caption", "Nested work opened: it reads and writes no graph (R4).")]
        case results.WorkReturned():
            returned = "Nested work returned: its records are learned once, when the turn completes (R5)."
            return _rule(d.rule) or [Said("caption", returned)]
        case results.TurnEnded():
            return _turn_ended(d)
        case results.RunEnded():
            cancelled = f"; cancelled its open turns {', '.join(map(inert, d.cancelled))} (R17)" if d.cancelled else ""
            erased = "; ephemeral, so erased with what it held (R11)." if d.erased else "."
            return [Said("caption", f"Run ended{cancelled}{erased}{GONE[d.bytes_gone] if d.erased else ''}")]
    return None


def _turn_ended(d: results.TurnEnded) -> list[Piece]:
    t, records = d.taught, ", ".join(map(inert, d.excluded_records))
    taught = f"Taught {t['world']} World, {t['user']} User and {t['flow']} Flow supports (R1, R7 to R9)." if t else ""
    nested = f"Records {records} came from nested work that failed or was cancelled: they teach nothing (R5)."
    return ([Said("success", taught)] if t else []) + _rule(d.rule) + ([Said("info", nested)] if records else [])


def _of_the_rest(d: Outcome) -> list[Piece]:
    """What an erasure's, a read's or a settings change's result says (R15, R20-R23, R29-R31)."""
    match d:
        case results.RunDeleted():
            went = f"{plural(d.turns, 'turn')}, {plural(d.records, 'record')} and {plural(d.flow_facts, 'Flow fact')}"
            n = d.supports_kept
            stay = f"{plural(n, 'support')} it gave {'stays' if n == 1 else 'stay'} in weights"
            said = f"Erased run {inert(d.run)} (R29): {went}; {stay} without pointing to it.{GONE[d.bytes_gone]}"
        case results.AccountDeleted():
            orgs = ", ".join(inert(m) for m in d.memberships) or "none"
            went = f"{plural(d.user_facts, 'User fact')}, {plural(len(d.memberships), 'membership')} ({orgs})"
            stay = f"{plural(len(d.runs_kept), 'run')} it started {'stays' if len(d.runs_kept) == 1 else 'stay'}"
            said = f"Erased the account (R30): {went}; {stay}, now by {inert(d.erased_key)}.{GONE[d.bytes_gone]}"
        case results.ReadResult() if d.result:
            said = f"Read answered ({probes_used(d.probes_used, d.cap)}, R21):"
            return [Said("caption", said), ReadAnswer(d.result)]
        case results.ReadResult():
            said = f"Read answered nothing ({probes_used(d.probes_used, d.cap)}, R21): nothing there, or nothing this "
            said += "turn may see (R20, R23)."
        case results.SettingsChanged() if d.changed:
            changed = (f"{c.setting} {'on' if c.old else 'off'} → {'on' if c.new else 'off'}" for c in d.changed)
            said = "Settings changed (R15): " + ", ".join(changed)
        case results.SettingsChanged():
            said = "Settings as they were: nothing changed (R15)."
        case _:
            return []
    return [Said("caption", said)]


def said(
    cell: CellResult, *, link: RecordLink = lambda r: f"**{inert(r)}**", evidence: list[str] | None = None
) -> list[Piece]:
    """What a cell did, piece by piece; `evidence` is what a failed turn keeps (R2), when known."""
    if cell.status == "refused" or cell.detail is None:
        return [Said("error", refused(cell.reason, cell.message))]
    out: list[Piece] = [Said("caption", SCRUBBED)] if cell.scrubbed else []
    out += _of_a_turn(cell.detail, link) or _of_the_rest(cell.detail)
    out += _beside(cell, link, evidence) + ([ChangeTable(cell.changes)] if cell.changes else [])
    for s in cell.skipped:
        kept_out = f"Kept out by {s.rule}: claim {s.claim + 1} of record {inert(s.record)}, “{inert(s.claim_text)}”."
        out.append(Said("warning", f"{kept_out} {s.why}"))
    return out


def _beside(cell: CellResult, link: RecordLink, evidence: list[str] | None) -> list[Piece]:
    """What a kind says of its changes (R3, R28), or a failed turn's evidence (R2)."""
    if cell.do == "open_turn" and cell.changes:
        return [Said("caption", "It replaces a turn: what that turn taught is withdrawn (R3).")]
    if cell.do in CORRECTED:
        return [Said("caption", CORRECTED[cell.do] if cell.changes else "Accepted; no weight or status changed.")]
    if not isinstance(cell.detail, results.TurnEnded) or cell.detail.rule != "R2" or evidence is None:
        return []
    if not evidence:
        return [Said("markdown", "This turn kept no record (R2): there is no evidence to keep.")]
    return [Said("markdown", f"Records kept as evidence (R2), each open on Runs: {', '.join(map(link, evidence))}.")]
