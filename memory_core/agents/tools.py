"""The tools: one `@tool` function each, its parameters its scenario event's fields, applied as the replay does."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations
from pydantic import Field, StrictBool, StrictFloat, TypeAdapter

from .. import errors as E
from ..format import events as ev
from ..format.checks import event as checked
from ..format.documents import Budget
from ..format.replay import apply
from ..format.state import MapOut
from ..plain import Obj
from ..usecases.facade import MemoryService
from . import models as M
from .sessions import OpenSession

if TYPE_CHECKING:
    from .server import MemoryAgents

F = TypeVar("F", bound=Callable[..., Any])

#: A tool that reads memory and changes nothing (readOnlyHint), and one that changes it.
READS = ToolAnnotations(read_only_hint=True, destructive_hint=False)
CHANGES = ToolAnnotations(read_only_hint=False)

#: Values as they were given: models dumped with their aliases and only the fields set, the rest left as they are.
AS_GIVEN: TypeAdapter[Obj] = TypeAdapter(Obj)

#: Every tool the server serves, by name, with its annotations: filled by `@tool`.
TOOLS: dict[str, tuple[Callable[..., Any], ToolAnnotations]] = {}


def tool(annotations: ToolAnnotations, *, name: str | None = None) -> Callable[[F], F]:
    """Register a function as a tool (named like it unless `name` says otherwise)."""

    def register(fn: F) -> F:
        TOOLS[name or fn.__name__] = (fn, annotations)
        return fn

    return register


@dataclass(frozen=True, slots=True)
class Conn:
    """What a lifespan yields the tools: the agents, and its session's key (none over HTTP: a header names it)."""

    agents: MemoryAgents
    key: str | None = None


@dataclass
class ToolCall:
    """One tool call: who speaks (from the token alone), in which session, on which memory."""

    person: str
    org: str
    session: OpenSession
    service: MemoryService

    @classmethod
    def of(cls, ctx: Context) -> ToolCall:
        """The call `ctx` carries: its token's person and organization, and its session."""
        agents = cast(Conn, ctx.request_context.lifespan_context).agents
        return cls(*agents.who(), agents.session_of(ctx), agents.service)

    def apply(self, do: str, *, made: str = "", **fields: Any) -> Any:
        """The event these fields make, checked as a scenario's (R25), on this session's runs and turns, applied."""
        event = checked("", {"do": do, **given(**fields)})
        for key, kind in (("run", "run"), ("turn", "turn"), ("replaces", "turn")):
            ident = event.get(key)
            if key != made and ident is not None and ident not in getattr(self.session, kind + "s"):
                self.started_here(kind, ident)
        return apply(self.service, {**event, "session": self.session.id})

    def started_here(self, kind: str, ident: str) -> None:
        """Pass this session's ended run or turn; another session's of the person is `not_this_session`, else unknown."""
        started = self.service.started_by(**{kind: ident})
        if started is not None and started[1] == self.session.id:
            return
        if started is not None and started[1] is not None and started[0] == self.person:
            raise E.NotThisSession(kind, ident)
        raise E.UnknownRun(ident) if kind == "run" else E.UnknownTurn(ident)


def given(**fields: Any) -> Obj:
    """The fields a caller gave (a null one is left out), models as the JSON they came as."""
    return AS_GIVEN.dump_python({k: v for k, v in fields.items() if v is not None}, exclude_unset=True, by_alias=True)


TurnId = Annotated[ev.Ident, Field(description="A turn this session opened")]
RunId = Annotated[ev.Ident, Field(description="A run this session started")]
ReadStep = Annotated[
    ev.Ident | None, Field(description="The workflow step making the read; none: the turn's own model (R19)")
]
Within = Annotated[ev.Work | None, Field(description="Nested work: its reads are refused, not_offered (R4)")]


@tool(READS)
def workflows(ctx: Context) -> M.WorkflowsOut:
    """The workflows of your organization, whose ids start_run takes: each one's read budget (R21) and
    steps, with what a step answers for a shortcut (R22). No turn, no budget spent."""
    c = ToolCall.of(ctx)
    return M.WorkflowsOut.model_validate({"workflows": [{"budget": {}, **w} for w in c.service.workflows(c.org)]})


@tool(CHANGES)
def start_run(
    ctx: Context,
    workflow: Annotated[ev.Ident, Field(description="The organization's workflow to run")],
    surface: ev.Surface = "workflow",
    ephemeral: Annotated[StrictBool, Field(description="Ask for a run that is not stored (R11, R17)")] = False,
) -> M.RunStartedOut:
    """Start a run of a workflow in your organization. Returns its id and whether it is stored
    ephemeral: the organization's AllowEphemeralRuns decides (R11)."""
    c, run = ToolCall.of(ctx), "run-" + uuid.uuid4().hex[:12]  # the server chooses a run's id, and a turn's
    fields = {"workflow": workflow, "surface": surface, "ephemeral": ephemeral}
    out = c.apply("start_run", made="run", run=run, org=c.org, person=c.person, **fields)
    c.session.runs[run] = out.cap
    return M.RunStartedOut(run=run, ephemeral=out.ephemeral)


@tool(CHANGES)
def open_turn(
    ctx: Context,
    run: RunId,
    request: Annotated[str | ev.Request, Field(description="The person's words that open the turn (record TURN#0)")],
    replaces: Annotated[ev.Ident | None, Field(description="A turn of this run it replaces (R3)")] = None,
) -> M.TurnOpenedOut:
    """Open a turn. Returns its id, the map of the organization's World graph (R18) and the read
    budget (R21). Nothing is written while the turn is open (R6)."""
    c, turn = ToolCall.of(ctx), "turn-" + uuid.uuid4().hex[:12]
    out = c.apply("open_turn", made="turn", run=run, turn=turn, request=request, replaces=replaces)
    c.session.turns[turn] = run
    budget = Budget(MemoryProbes=c.session.runs.get(run))
    return M.TurnOpenedOut(turn=turn, map=MapOut.model_validate(out.map), budget=budget)


@tool(CHANGES)
def record(
    ctx: Context,
    turn: TurnId,
    origin: ev.Origin,
    claims: Annotated[list[ev.Claim], Field(description="Proposed facts, each with its target graph")],  # type: ignore[valid-type]
    source: ev.Text = ev.absent(description="URL, document or tool (required unless origin is person); a person's id"),
    excerpt: str | None = None,
    reliability: Annotated[StrictFloat | None, Field(gt=0.5, lt=1, description="Overrides the origin's (R26)")] = None,
    within: Annotated[ev.Work | None, Field(description="The open nested work it came from (R5)")] = None,
) -> M.RecordOut:
    """Record evidence in an open turn, with the claims it makes. It teaches nothing until the
    turn completes (R1, R6). Returns the record's id (TURN#k)."""
    fields: Obj = {"origin": origin, "claims": claims, "source": source, "excerpt": excerpt, "within": within}
    out = ToolCall.of(ctx).apply("record", turn=turn, reliability=reliability, **fields)
    return M.RecordOut(record=out.record)


@tool(CHANGES)
def step(ctx: Context, turn: TurnId, step: ev.Ident, record: ev.StepRecord | None = None) -> M.StepRunOut:
    """Run a workflow step: skipped when memory already answers its question (a shortcut, R22),
    else its record (if any) is kept."""
    out = ToolCall.of(ctx).apply("step", turn=turn, step=step, record=record)
    return M.StepRunOut.model_validate({"ran": out.shortcut is None, "shortcut": out.shortcut, "record": out.record})


@tool(CHANGES)
def call(ctx: Context, turn: TurnId, work: ev.Work) -> M.WorkOut:
    """Open nested work (a workflow, agent or debater) in the turn: it reads no graph (R4)."""
    ToolCall.of(ctx).apply("call", turn=turn, work=work)
    return M.WorkOut(work=work)


@tool(CHANGES, name="return")
def return_work(ctx: Context, turn: TurnId, work: ev.Work, status: ev.EndStatus) -> M.ReturnOut:
    """End nested work; failed or cancelled work contributes nothing (R5)."""
    ToolCall.of(ctx).apply("return", turn=turn, work=work, status=status)
    return M.ReturnOut(work=work, status=status)


@tool(READS)
def GraphResolve(  # noqa: N802
    ctx: Context,
    turn: TurnId,
    name: ev.Text,
    kind: ev.Ident | None = None,
    step: ReadStep = None,
    within: Within = None,
    match: Annotated[ev.Match, Field(description='"words": each word of name begins a word of a name')] = "exact",
) -> M.ResolveOut:
    """Entities whose name or alias matches, in the graphs the turn sees, each with its graph
    (R20, R23). Names must be whole (case and spacing aside) unless match="words": then names may
    be partial, every word you give beginning a word of the name or an alias, any case or accent,
    exact matches first. An exact resolve that finds nothing carries `near`: up to 5 entities
    whose names match by words. One read of the budget (R21), `near` included."""
    args = given(name=name, kind=kind, match=None if match == "exact" else match)
    out = ToolCall.of(ctx).apply("read", turn=turn, call="GraphResolve", args=args, step=step, within=within)
    return M.ResolveOut.model_validate({"result": out.result, "near": out.near})


@tool(READS)
def GraphExpand(  # noqa: N802
    ctx: Context,
    turn: TurnId,
    entity: ev.EntityEntry,
    graph: ev.Graph = "world",
    relation: ev.Ident | None = None,
    step: ReadStep = None,
    within: Within = None,
) -> M.ExpandOut:
    """The entity's active facts in either direction, with weights (R23, R26). One read (R21)."""
    args = given(entity=entity, graph=graph, relation=relation)
    out = ToolCall.of(ctx).apply("read", turn=turn, call="GraphExpand", args=args, step=step, within=within)
    return M.ExpandOut.model_validate({"result": out.result})


@tool(READS)
def GraphSource(  # noqa: N802
    ctx: Context,
    turn: TurnId,
    fact: ev.FactRef,
    graph: ev.Graph = "world",
    step: ReadStep = None,
    within: Within = None,
) -> M.SourceOutList:
    """The fact's supports, each with its pointer to the evidence and the excerpt (R23, R24).
    One read (R21)."""
    args = given(fact=fact, graph=graph)
    out = ToolCall.of(ctx).apply("read", turn=turn, call="GraphSource", args=args, step=step, within=within)
    return M.SourceOutList.model_validate({"result": out.result})


@tool(CHANGES)
def end_turn(ctx: Context, turn: TurnId, status: ev.EndStatus) -> M.TurnEndedOut:
    """End a turn. Only `completed` teaches (R1), once, all of it; use it only when the work
    succeeded. `failed` and `cancelled` teach nothing (R2)."""
    c = ToolCall.of(ctx)
    out = c.apply("end_turn", turn=turn, status=status)
    c.session.turns.pop(turn, None)
    taught = out.taught if out.taught is not None else {"world": 0, "user": 0, "flow": 0}
    skipped = [s.to_json() for s in out.skipped]
    return M.TurnEndedOut.model_validate({"status": out.status, "taught": taught, "skipped": skipped})


@tool(CHANGES)
def end_run(ctx: Context, run: RunId) -> M.RunEndedOut:
    """End a run: its open turns are cancelled; an ephemeral run is erased (R17)."""
    c = ToolCall.of(ctx)
    out = c.apply("end_run", run=run)
    c.session.runs.pop(run, None)  # the run, and its turns this session still holds
    c.session.turns = {t: r for t, r in c.session.turns.items() if r != run}
    return M.RunEndedOut(cancelled=list(out.cancelled), erased=out.erased)


@tool(CHANGES)
def dispute(ctx: Context, fact: ev.FactRef, graph: ev.Graph = "world") -> M.CorrectedOut:
    """Dispute a World fact of your organization, or your own User fact: one dispute a person,
    weighing against its sources (R26, R28)."""
    return corrected(ToolCall.of(ctx), "dispute", fact=fact, graph=graph)


@tool(CHANGES)
def retract(ctx: Context, fact: ev.FactRef, graph: ev.Graph = "world") -> M.CorrectedOut:
    """Retract a World fact (the owner only) or your own User fact: kept, never served (R28)."""
    return corrected(ToolCall.of(ctx), "retract", fact=fact, graph=graph)


def corrected(c: ToolCall, do: str, *, fact: ev.FactRef, graph: str) -> M.CorrectedOut:
    """A correction by the token's person (R28), and the fact as it stands after it."""
    out = c.apply(do, org=c.org, by=c.person, fact=fact, graph=graph)
    unaliased = {"subject": {"aliases"}, "object": {"aliases"}}  # as the state format writes a fact
    named = out.changes[0].fact if out.changes else fact.model_dump(exclude=unaliased)
    return M.CorrectedOut(fact={**named, "graph": graph}, status=out.status or "", weight=out.weight or 0.0)
