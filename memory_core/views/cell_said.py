"""What a notebook cell did, typed and said (#24, #37): a kept result read back as a `CellResult` whose `detail`
is its use case's result model (format/replay.BY_EVENT), and `said()`, the pieces the Notebook page lays out."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, ValidationError, field_serializer

from ..format.replay import BY_EVENT
from ..plain import Obj
from ..rules.wording import RULE_TEXT
from ..usecases.results import (
    AccountDeleted,
    Outcome,
    ReadResult,
    RecordKept,
    Result,
    RunDeleted,
    RunEnded,
    RunStarted,
    SettingsChanged,
    StepRun,
    TurnEnded,
    TurnOpened,
    WorkReturned,
)
from .text import inert, plural, probes_used, refused

Tone = Literal["success", "info", "caption", "warning", "error", "markdown"]


class ClaimKeptOut(Result):
    """A claim kept out, and why (R10): one per claim, with what it says (views/cells.skipped_json)."""

    rule: str
    claim: int
    record: str
    why: str = ""
    claim_text: str = ""


class Change(Result):
    """A fact's change, in the words of a table row (views/cells.change)."""

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


def _bold(record: str) -> str:
    return f"**{inert(record)}**"


#: What an erasure did to the text's bytes (R31): out of the files, leaving them later, or not known.
GONE = {
    True: " Its text is out of the database's files (R31).",
    False: " Its text leaves the database's files once nothing older still reads them (R31).",
    None: "",
}


def _caption(text: str) -> list[Piece]:
    return [Said("caption", text)]


def _info(text: str) -> list[Piece]:
    return [Said("info", text)]


def _rule(rule: str | None) -> list[Piece]:
    return [Said("info", f"{rule}: {RULE_TEXT.get(rule, '')}")] if rule else []


def _start_run(d: RunStarted, _link: RecordLink) -> list[Piece]:
    return _rule(d.rule) + _caption(f"Run started{', stored as ephemeral (R11)' if d.ephemeral else ''}.")


def _open_turn(d: TurnOpened, _link: RecordLink) -> list[Piece]:
    kinds = ", ".join(f"{n} {inert(k)}" for k, n in d.map["kinds"].items()) or "no entity yet"
    facts = plural(d.map["facts"], "active fact")
    return _info(f"The turn starts with the map of its organization's World graph (R18): {facts}; entities: {kinds}.")


def _record(d: RecordKept | StepRun, link: RecordLink) -> list[Piece]:
    if not d.record:
        return []
    return _info(
        f"Kept record {link(d.record)} as evidence: nothing is written to memory yet, while the turn is open (R6)."
    )


def _step(d: StepRun, link: RecordLink) -> list[Piece]:
    if d.shortcut:
        weight, graph = d.shortcut.get("weight"), d.shortcut.get("fact", {}).get("graph", "World")
        at = f" with weight {weight:.3f}" if isinstance(weight, int | float) else ""
        return _info(f"Skipped by a shortcut (R22): memory already answers{at} ({inert(graph)} graph).")
    return _record(d, link) or _caption("The step ran and kept no record: nothing to write (R6).")


def _return(d: WorkReturned, _link: RecordLink) -> list[Piece]:
    returned = "Nested work returned: its records are learned once, when the turn completes (R5)."
    return _rule(d.rule) or _caption(returned)


def _end_turn(d: TurnEnded, _link: RecordLink) -> list[Piece]:
    t, records = d.taught, ", ".join(inert(r) for r in d.excluded_records)
    taught = f"Taught {t['world']} World, {t['user']} User and {t['flow']} Flow supports (R1, R7 to R9)." if t else ""
    nested = f"Records {records} came from nested work that failed or was cancelled: they teach nothing (R5)."
    return ([Said("success", taught)] if t else []) + _rule(d.rule) + (_info(nested) if records else [])


def _end_run(d: RunEnded, _link: RecordLink) -> list[Piece]:
    cancelled = f"; cancelled its open turns {', '.join(inert(c) for c in d.cancelled)} (R17)" if d.cancelled else ""
    erased = "; ephemeral, so erased with what it held (R11)." if d.erased else "."
    return _caption(f"Run ended{cancelled}{erased}{GONE[d.bytes_gone] if d.erased else ''}")


def _delete_run(d: RunDeleted, _link: RecordLink) -> list[Piece]:
    went = f"{plural(d.turns, 'turn')}, {plural(d.records, 'record')} and {plural(d.flow_facts, 'Flow fact')}"
    stay = f"{plural(d.supports_kept, 'support')} it gave {'stays' if d.supports_kept == 1 else 'stay'} in weights"
    return _caption(f"Erased run {inert(d.run)} (R29): {went}; {stay} without pointing to it.{GONE[d.bytes_gone]}")


def _delete_account(d: AccountDeleted, _link: RecordLink) -> list[Piece]:
    orgs = ", ".join(inert(m) for m in d.memberships) or "none"
    went = f"{plural(d.user_facts, 'User fact')}, {plural(len(d.memberships), 'membership')} ({orgs})"
    stay = f"{plural(len(d.runs_kept), 'run')} it started {'stays' if len(d.runs_kept) == 1 else 'stay'}"
    return _caption(f"Erased the account (R30): {went}; {stay}, now by {inert(d.erased_key)}.{GONE[d.bytes_gone]}")


def _read(d: ReadResult, _link: RecordLink) -> list[Piece]:
    used = f"{probes_used(d.probes_used, d.cap)}, R21"
    if d.result:
        return [*_caption(f"Read answered ({used}):"), ReadAnswer(d.result)]
    return _caption(f"Read answered nothing ({used}): nothing there, or nothing this turn may see (R20, R23).")


def _set_settings(d: SettingsChanged, _link: RecordLink) -> list[Piece]:
    if not d.changed:
        return _caption("Settings as they were: nothing changed (R15).")
    return _caption(
        "Settings changed (R15): " + ", ".join(f"{c.setting} {_on_off(c.old)} → {_on_off(c.new)}" for c in d.changed)
    )


SCRUBBED = "Scrubbed of what a later cell erased: it reads `(erased)` where that was (R29, R30)."
#: What a correction that changed the fact did, said above its table (R28).
CORRECTED = {
    "dispute": "Disputed (R28): the person's reliability is taken off the fact's log-odds, so its weight "
    "falls; under 0.5 it is disputed, kept but not served.",
    "retract": "Retracted (R28): the fact is kept with its history but never served again.",
}


def _on_off(value: bool) -> str:
    return "on" if value else "off"


_SAY: dict[str, Callable[[Any, RecordLink], list[Piece]]] = {
    "start_run": _start_run,
    "open_turn": _open_turn,
    "record": _record,
    "step": _step,
    "call": lambda _d, _link: _caption("Nested work opened: it reads and writes no graph (R4)."),
    "return": _return,
    "read": _read,
    "end_turn": _end_turn,
    "end_run": _end_run,
    "delete_run": _delete_run,
    "delete_account": _delete_account,
    "set_settings": _set_settings,
    "dispute": lambda _d, _link: [],  # said beside its table (CORRECTED)
    "retract": lambda _d, _link: [],
}


def said(cell: CellResult, *, link: RecordLink = _bold, evidence: list[str] | None = None) -> list[Piece]:
    """What a cell did, piece by piece; `evidence` is what a failed turn keeps (R2), when known."""
    if cell.status == "refused":
        return [Said("error", refused(cell.reason, cell.message))]
    out: list[Piece] = [Said("caption", SCRUBBED)] if cell.scrubbed else []
    out += _SAY[cell.do](cell.detail, link) + _beside(cell, link, evidence)
    out += [ChangeTable(cell.changes)] if cell.changes else []
    return out + [
        Said(
            "warning",
            f"Kept out by {s.rule}: claim {s.claim + 1} of record {inert(s.record)}, “{inert(s.claim_text)}”. {s.why}",
        )
        for s in cell.skipped
    ]


def _beside(cell: CellResult, link: RecordLink, evidence: list[str] | None) -> list[Piece]:
    """What a kind says of its changes (R3, R28), or a failed turn's evidence (R2)."""
    if cell.do == "open_turn" and cell.changes:
        return [Said("caption", "It replaces a turn: what that turn taught is withdrawn (R3).")]
    if cell.do in CORRECTED:
        return [Said("caption", CORRECTED[cell.do] if cell.changes else "Accepted; no weight or status changed.")]
    if not isinstance(cell.detail, TurnEnded) or cell.detail.rule != "R2" or evidence is None:
        return []
    if not evidence:
        return [Said("markdown", "This turn kept no record (R2): there is no evidence to keep.")]
    return [Said("markdown", f"Records kept as evidence (R2), each open on Runs: {', '.join(map(link, evidence))}.")]
