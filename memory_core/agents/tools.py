"""The thirteen tools: a typed signature each (the SDK publishes its schema; the arguments are
checked by the scenario format, checks.py) and a body that is one use case of the facade."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from .. import errors as E
from ..plain import Obj
from ..usecases.facade import MemoryService
from . import models as M
from .checks import Caller
from .sessions import AgentSession

Id = Annotated[str, Field(min_length=1, max_length=200)]
TurnId = Annotated[str, Field(min_length=1, max_length=200, description="A turn this session opened")]
Work = Annotated[
    str, Field(pattern=r"^(workflow|agent|debater):", description="workflow:NAME, agent:NAME or debater:NAME")
]
Step = Annotated[str | None, Field(description="The workflow step making the read; none: the turn's own model (R19)")]
Within = Annotated[str | None, Field(description="Nested work: its reads are refused, not_offered (R4)")]


@dataclass
class Call:
    """One tool call: the checked event, who speaks (from the token), and the session."""

    event: Obj
    caller: Caller
    session: AgentSession
    service: MemoryService

    def own_run(self, run: str) -> str:
        """A run this session started, or unknown_run: another session's runs are not its to name."""
        if run not in self.session.runs:
            raise E.UnknownRun(run)
        return run

    def own_turn(self, turn: str) -> str:
        """A turn this session opened, or unknown_turn."""
        if turn not in self.session.turns:
            raise E.UnknownTurn(turn)
        return turn


# --- the signatures the SDK publishes (their bodies are HANDLERS) --------------------------------


def tool_start_run(
    workflow: Annotated[str, Field(min_length=1, max_length=200, description="The organization's workflow to run")],
    surface: Literal["workflow", "search"] = "workflow",
    ephemeral: Annotated[bool, Field(description="Ask for a run that is not stored (R11, R17)")] = False,
) -> M.RunStartedOut:
    """Start a run of a workflow in your organization. Returns its id and whether it is stored
    ephemeral: the organization's AllowEphemeralRuns decides (R11)."""
    raise NotImplementedError


def tool_open_turn(
    run: Annotated[str, Field(description="A run this session started")],
    request: Annotated[str | M.Request, Field(description="The person's words that open the turn (record TURN#0)")],
    replaces: Annotated[str | None, Field(description="A turn of this run it replaces (R3)")] = None,
) -> M.TurnOpenedOut:
    """Open a turn. Returns its id, the map of the organization's World graph (R18) and the read
    budget (R21). Nothing is written while the turn is open (R6)."""
    raise NotImplementedError


def tool_record(
    turn: TurnId,
    origin: M.Origin,
    claims: Annotated[list[M.Claim], Field(description="Proposed facts, each with its target graph")],
    source: Annotated[str | None, Field(description="URL, document or tool; a person's id for origin person")] = None,
    excerpt: str | None = None,
    reliability: Annotated[float | None, Field(gt=0.5, lt=1, description="Overrides the origin's (R26)")] = None,
    within: Annotated[str | None, Field(description="The open nested work it came from (R5)")] = None,
) -> M.RecordOut:
    """Record evidence in an open turn, with the claims it makes. It teaches nothing until the
    turn completes (R1, R6). Returns the record's id (TURN#k)."""
    raise NotImplementedError


def tool_step(turn: TurnId, step: Id, record: M.StepRecord | None = None) -> M.StepOut:
    """Run a workflow step: skipped when memory already answers its question (a shortcut, R22),
    else its record (if any) is kept."""
    raise NotImplementedError


def tool_call(turn: TurnId, work: Work) -> M.WorkOut:
    """Open nested work (a workflow, agent or debater) in the turn: it reads no graph (R4)."""
    raise NotImplementedError


def tool_return(turn: TurnId, work: Work, status: M.EndStatus) -> M.ReturnOut:
    """End nested work; failed or cancelled work contributes nothing (R5)."""
    raise NotImplementedError


def tool_GraphResolve(
    turn: TurnId, name: str, kind: str | None = None, step: Step = None, within: Within = None
) -> M.ResolveOut:  # noqa: N802
    """Entities whose name or alias matches, in the graphs the turn sees, each with its graph
    (R20, R23). One read of the budget (R21)."""
    raise NotImplementedError


def tool_GraphExpand(  # noqa: N802
    turn: TurnId,
    entity: M.Entity,
    graph: M.Graph = "world",
    relation: str | None = None,
    step: Step = None,
    within: Within = None,
) -> M.ExpandOut:
    """The entity's active facts in either direction, with weights (R23, R26). One read (R21)."""
    raise NotImplementedError


def tool_GraphSource(  # noqa: N802
    turn: TurnId, fact: M.FactRef, graph: M.Graph = "world", step: Step = None, within: Within = None
) -> M.SourceOutList:
    """The fact's supports, each with its pointer to the evidence and the excerpt (R23, R24).
    One read (R21)."""
    raise NotImplementedError


def tool_end_turn(turn: TurnId, status: M.EndStatus) -> M.TurnEndedOut:
    """End a turn. Only `completed` teaches (R1), once, all of it; use it only when the work
    succeeded. `failed` and `cancelled` teach nothing (R2)."""
    raise NotImplementedError


def tool_end_run(run: Annotated[str, Field(description="A run this session started")]) -> M.RunEndedOut:
    """End a run: its open turns are cancelled; an ephemeral run is erased (R17)."""
    raise NotImplementedError


def tool_dispute(fact: M.FactRef, graph: M.Graph = "world") -> M.CorrectedOut:
    """Dispute a World fact of your organization, or your own User fact: one dispute a person,
    weighing against its sources (R26, R28)."""
    raise NotImplementedError


def tool_retract(fact: M.FactRef, graph: M.Graph = "world") -> M.CorrectedOut:
    """Retract a World fact (the owner only) or your own User fact: kept, never served (R28)."""
    raise NotImplementedError


TOOLS: dict[str, Callable[..., Any]] = {
    f.__name__.removeprefix("tool_"): f
    for f in (
        tool_start_run,
        tool_open_turn,
        tool_record,
        tool_step,
        tool_call,
        tool_return,
        tool_GraphResolve,
        tool_GraphExpand,
        tool_GraphSource,
        tool_end_turn,
        tool_end_run,
        tool_dispute,
        tool_retract,
    )
}


# --- the bodies: one use case each --------------------------------------------------------------


def start_run(c: Call) -> M.RunStartedOut:
    e, run = c.event, c.caller.run
    out = c.service.start_run(
        run,
        org=c.caller.org,
        person=c.caller.person,
        workflow=e["workflow"],
        surface=e["surface"],
        ephemeral=e["ephemeral"],
        session=c.session.id,
    )
    c.session.runs |= {run}
    c.session.caps[run] = out.cap
    return M.RunStartedOut(run=run, ephemeral=out.ephemeral)


def open_turn(c: Call) -> M.TurnOpenedOut:
    e, turn = c.event, c.caller.turn
    run = c.own_run(e["run"])
    replaces = c.own_turn(e["replaces"]) if e["replaces"] is not None else None
    out = c.service.open_turn(turn, run=run, request=e["request"], replaces=replaces)
    c.session.turns |= {turn}
    c.session.turn_run[turn] = run
    budget = M.Budget(MemoryProbes=c.session.caps.get(run))
    return M.TurnOpenedOut(turn=turn, map=M.MapOut.model_validate(out.map.model_dump()), budget=budget)


def record(c: Call) -> M.RecordOut:
    out = c.service.record(c.own_turn(c.event["turn"]), record=c.event["record"])
    return M.RecordOut(record=out.record)


def step(c: Call) -> M.StepOut:
    e = c.event
    out = c.service.run_step(c.own_turn(e["turn"]), step=e["step"], record=e["record"])
    shortcut = M.Shortcut.model_validate(out.shortcut) if out.shortcut is not None else None
    return M.StepOut(ran=out.shortcut is None, shortcut=shortcut, record=out.record)


def call(c: Call) -> M.WorkOut:
    c.service.call(c.own_turn(c.event["turn"]), work=c.event["work"])
    return M.WorkOut(work=c.event["work"])


def return_work(c: Call) -> M.ReturnOut:
    e = c.event
    c.service.return_work(c.own_turn(e["turn"]), work=e["work"], status=e["status"])
    return M.ReturnOut(work=e["work"], status=e["status"])


def read(c: Call) -> Any:
    e = c.event
    out = c.service.read(c.own_turn(e["turn"]), call=e["call"], args=e["args"], within=e["within"], step=e["step"])
    models: dict[str, type[BaseModel]] = {
        "GraphResolve": M.ResolveOut,
        "GraphExpand": M.ExpandOut,
        "GraphSource": M.SourceOutList,
    }
    model = models[e["call"]]
    return model.model_validate({"result": out.result})


def end_turn(c: Call) -> M.TurnEndedOut:
    e = c.event
    out = c.service.end_turn(c.own_turn(e["turn"]), status=e["status"])
    taught = out.taught.to_json() if out.taught is not None else {"world": 0, "user": 0, "flow": 0}
    skipped = [s.to_json() for s in out.skipped]
    return M.TurnEndedOut.model_validate({"status": out.status, "taught": taught, "skipped": skipped})


def end_run(c: Call) -> M.RunEndedOut:
    out = c.service.end_run(c.own_run(c.event["run"]))
    return M.RunEndedOut(cancelled=list(out.cancelled), erased=out.erased)


def correct(c: Call) -> M.CorrectedOut:
    e = c.event
    how = c.service.dispute if e["do"] == "dispute" else c.service.retract
    out = how(org=c.caller.org, by=c.caller.person, fact=e["fact"], graph=e["graph"])
    fact = out.changes[0].fact if out.changes else _fact_json(e["fact"])
    return M.CorrectedOut(fact={**fact, "graph": e["graph"]}, status=out.status or "", weight=out.weight or 0.0)


def _fact_json(fact: Obj) -> Obj:
    """A checked fact reference as the state format writes it (no aliases)."""

    def end(x: Obj) -> Obj:
        return {"value": x["value"]} if "value" in x else {"name": x["name"], "kind": x["kind"]}

    return {"subject": end(fact["subject"]), "relation": fact["relation"], "object": end(fact["object"])}


HANDLERS: dict[str, Callable[[Call], Any]] = {
    "start_run": start_run,
    "open_turn": open_turn,
    "record": record,
    "step": step,
    "call": call,
    "return": return_work,
    "GraphResolve": read,
    "GraphExpand": read,
    "GraphSource": read,
    "end_turn": end_turn,
    "end_run": end_run,
    "dispute": correct,
    "retract": correct,
}
