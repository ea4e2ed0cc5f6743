"""`memory-state/1` as typed models: what `replay --json` and `state --db` print; its schema beside the scenario's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic import Field

from .. import errors
from ..rules.vocabulary import TURN_END_STATUSES
from ..usecases.shapes import Taught
from .events import EVENT_MODELS, Closed, Graph, Origin, ReadCall, Surface, Value, absent, one_of, settings_model

#: Every reason a refusal gives (each a class of errors.py).
REASONS = tuple(dict.fromkeys(cls.reason for cls in errors.Refusal.__subclasses__()))

if TYPE_CHECKING:
    TurnStatus: TypeAlias = str
    Outcome: TypeAlias = str
    EventKind: TypeAlias = str
    Reason: TypeAlias = str
else:
    TurnStatus = one_of(("open", *TURN_END_STATUSES, "replaced"))  # open until it ends (R1, R2) or is replaced (R3)
    Outcome, EventKind, Reason = one_of(("ok", *REASONS)), one_of(tuple(EVENT_MODELS)), one_of(REASONS)


class Named(Closed):
    """An entity named by its name and kind."""

    name: str
    kind: str


class EntityOut(Named):
    """An entity of a graph, with its aliases."""

    aliases: list[str]


class SupportOut(Closed):
    """A support of a fact; `run`, `turn` and `record` are null where erased (R29)."""

    key: str
    origin: Origin
    run: str | None
    turn: str | None
    record: str | None
    contribution: float = Field(description="the frozen l of R26")


class DisputeOut(Closed):
    """A dispute of a fact (R28); `by` is null where the account was erased (R30)."""

    by: str | None
    contribution: float


FactStatus = Literal["active", "disputed", "retracted"]


class WeightedFact(Closed):
    """A fact with its status and weight (R26, R28)."""

    subject: Named
    relation: str
    object: Named | Value
    status: FactStatus
    weight: float
    log_odds: float
    sources: int


class FactOut(WeightedFact):
    """A fact of a graph, with its weight and what makes it."""

    sources: int = Field(description="independent sources (R25)")
    supports: list[SupportOut]
    disputes: list[DisputeOut]


class GraphOut(Closed):
    """A graph: every entity in at least one of its facts, and its facts."""

    entities: list[EntityOut]
    facts: list[FactOut]


class MapOut(Closed):
    """Entities of active facts counted by kind, and active facts (R18)."""

    kinds: dict[str, int]
    facts: int


#: An organization's four settings, each true or false (R11 to R14).
SettingsOut = settings_model("SettingsOut", defaults=False)


class OrgState(Closed):
    """An organization: its four settings, its map and its World graph."""

    settings: SettingsOut  # type: ignore[valid-type]
    map: MapOut
    world: GraphOut


class PersonState(Closed):
    """A person: their User graph."""

    user: GraphOut


class SkippedOut(Closed):
    """A world or user claim a rule kept out (R10)."""

    record: str
    claim: int
    rule: str


class ShortcutFact(Closed):
    """The fact that answered a skipped step."""

    subject: Named
    relation: str
    object: Named | Value
    graph: Graph


class Shortcut(Closed):
    """The answer that let a step be skipped (R22)."""

    fact: ShortcutFact
    weight: float


class StepOut(Closed):
    """A step event of a turn: whether it ran, and its shortcut if it did not."""

    step: str
    ran: bool
    shortcut: Shortcut | None


class TurnState(Closed):
    """A turn; `probes_used` is null in a state as of a moment (`--at`)."""

    status: TurnStatus
    map: MapOut
    taught: Taught
    skipped: list[SkippedOut]
    steps: list[StepOut]
    probes_used: int | None = Field(description="R21")


class RunState(Closed):
    """A run; `person` is null when its account was deleted (R30)."""

    org: str
    person: str | None
    surface: Surface
    requested_ephemeral: bool
    ephemeral: bool
    ended: bool
    turns: dict[str, TurnState]
    flow: GraphOut


class ResolveHit(EntityOut):
    """What GraphResolve answers: an entity with its graph."""

    graph: Graph


class NearHit(Named):
    """What an exact GraphResolve that found nothing names near: an entity matching by words, with its graph."""

    graph: Graph


class ExpandFact(WeightedFact):
    """What GraphExpand answers: a fact without its supports."""

    disputes: list[DisputeOut]


class SourceHit(Closed):
    """What GraphSource answers: a support with its excerpt, null where erased (R23)."""

    key: str
    origin: Origin
    contribution: float
    run: str | None
    turn: str | None
    record: str | None
    excerpt: str | None


class ReadLog(Closed):
    """A read, with what it answered then; `result` is null when refused."""

    event: int = Field(ge=0)
    turn: str
    call: ReadCall
    args: dict[str, Any] = Field(description="the read's arguments as written")
    outcome: Outcome
    result: list[ResolveHit] | list[ExpandFact] | list[SourceHit] | None
    near: list[NearHit] = absent(description="an exact GraphResolve that found nothing: names matching by words")


class RefusedLog(Closed):
    """A refused event: its index in `events`, its kind, its reason and a sentence."""

    event: int = Field(ge=0)
    do: EventKind
    reason: Reason
    message: str


class State(Closed):
    """What a replay ends in (`state --db`: `reads` as kept, `refused` the refused reads among them)."""

    format: Literal["memory-state/1"]
    organizations: dict[str, OrgState]
    people: dict[str, PersonState]
    runs: dict[str, RunState]
    reads: list[ReadLog] = absent()
    refused: list[RefusedLog] = absent()
