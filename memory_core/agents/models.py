"""The MCP tools' typed contract: one input model and one output model a tool, whose JSON schemas the
SDK publishes. Inputs are the scenario events' fields less what the token gives (the person and the
organization) and the ids the server chooses; they are checked by the scenario format's own checks
(agents/checks.py), which these models describe. Outputs are the state format's shapes (R18, R21-R23)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Graph = Literal["world", "user", "flow"]
Origin = Literal["web", "document", "tool", "person", "model"]
EndStatus = Literal["completed", "failed", "cancelled"]
Name = Field(min_length=1, max_length=200)


class Closed(BaseModel):
    """A model that takes no key beyond its own (an unknown key is an error at its path)."""

    model_config = ConfigDict(extra="forbid")


class Entity(Closed):
    """An entity: its name and kind (a World entity: person, place, organization, event or idea); aliases optional."""

    name: str = Field(min_length=1)
    kind: str = Name
    aliases: list[str] = Field(default_factory=list)


class Value(Closed):
    """A literal object of a fact."""

    value: str


class Claim(Closed):
    """A proposed fact with its target graph."""

    graph: Graph
    subject: Entity
    relation: str = Name
    object: Entity | Value


class FactRef(Closed):
    """A fact named by its subject, relation and object, as in a claim."""

    subject: Entity
    relation: str = Name
    object: Entity | Value


class Request(Closed):
    """A request with claims of its own (a person's words, origin person)."""

    text: str
    claims: list[Claim] = Field(default_factory=list)


class StepRecord(Closed):
    """The record a step that runs keeps."""

    origin: Origin
    source: str | None = None
    excerpt: str | None = None
    reliability: float | None = Field(default=None, gt=0.5, lt=1)
    claims: list[Claim]


# --- results ------------------------------------------------------------------------------------


class MapOut(BaseModel):
    """The map of the World graph as the turn opened (R18): entities of active facts by kind, active facts."""

    kinds: dict[str, int]
    facts: int


class Budget(BaseModel):
    """The turn's read budget (R21): MemoryProbes, null for no cap."""

    MemoryProbes: int | None


class RunStartedOut(BaseModel):
    """The run's id, and whether it is stored ephemeral (R11)."""

    run: str
    ephemeral: bool


class TurnOpenedOut(BaseModel):
    """The turn's id, the map it carries (R18) and its budget (R21)."""

    turn: str
    map: MapOut
    budget: Budget


class RecordOut(BaseModel):
    """The record's id, TURN#k."""

    record: str


class FactInGraph(BaseModel):
    """A fact with the graph it is in."""

    subject: dict[str, str]
    relation: str
    object: dict[str, str]
    graph: Graph


class Shortcut(BaseModel):
    """The answer that let a step be skipped (R22)."""

    fact: FactInGraph
    weight: float


class StepOut(BaseModel):
    """Whether the step ran, the shortcut that skipped it (R22), and the record it kept (null when skipped)."""

    ran: bool
    shortcut: Shortcut | None
    record: str | None


class WorkOut(BaseModel):
    """The nested work opened (R4, R5)."""

    work: str


class ReturnOut(BaseModel):
    """The nested work ended, and how (R5)."""

    work: str
    status: EndStatus


class ResolvedEntity(BaseModel):
    """An entity a name resolves to, with its graph (R23)."""

    name: str
    kind: str
    aliases: list[str]
    graph: Graph


class DisputeOut(BaseModel):
    """A dispute of a fact (R28); `by` null where the account was erased (R30)."""

    by: str | None
    contribution: float


class ExpandedFact(BaseModel):
    """An active fact of the entity, with its weight (R23, R26)."""

    subject: dict[str, str]
    relation: str
    object: dict[str, str]
    status: str
    weight: float
    log_odds: float
    sources: int
    disputes: list[DisputeOut]


class SourceOut(BaseModel):
    """A support of the fact and its pointer to the evidence, null where erased or elsewhere (R23, R29)."""

    key: str | None
    origin: str
    contribution: float
    run: str | None
    turn: str | None
    record: str | None
    excerpt: str | None


class ResolveOut(BaseModel):
    """GraphResolve's answer: entities of the visible graphs (R20, R23); empty when nothing matches."""

    result: list[ResolvedEntity]


class ExpandOut(BaseModel):
    """GraphExpand's answer: the entity's active facts in either direction (R23)."""

    result: list[ExpandedFact]


class SourceOutList(BaseModel):
    """GraphSource's answer: the fact's supports (R23)."""

    result: list[SourceOut]


class Taught(BaseModel):
    """Supports the completed turn added, graph by graph (R7-R9); zeros for any other ending."""

    world: int
    user: int
    flow: int


class Skipped(BaseModel):
    """A world or user claim a rule kept out, with that rule (R10)."""

    record: str
    claim: int
    rule: str


class TurnEndedOut(BaseModel):
    """How the turn ended, what it taught, and what was kept out and why (R1, R2, R10)."""

    status: EndStatus
    taught: Taught
    skipped: list[Skipped]


class RunEndedOut(BaseModel):
    """The turns ending the run cancelled (R17), and whether it was erased (an ephemeral run)."""

    cancelled: list[str]
    erased: bool


class CorrectedOut(BaseModel):
    """The corrected fact, its status and its weight after the correction (R26, R28)."""

    fact: dict[str, Any]
    status: str
    weight: float


class Refused(BaseModel):
    """A call the rules refused (nothing changed) or arguments that do not fit: `reason` is the scenario
    format's refusal reason (`invalid` for bad arguments), `rule` the rule that refused."""

    reason: str
    rule: str | None
    message: str
