"""What the MCP tools answer: one model a tool (its output schema), of format/state.py's parts (R18, R21-R23)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..format.documents import Answers, Budget
from ..format.events import EndStatus
from ..format.state import ExpandFact, MapOut, NearHit, ResolveHit, Shortcut, SkippedOut, SourceHit
from ..usecases.results import Taught


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


class StepRunOut(BaseModel):
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


class ResolveOut(BaseModel):
    """GraphResolve's answer: entities of the visible graphs (R20, R23); empty when nothing matches,
    and then (an exact resolve) `near`: what matches by words."""

    result: list[ResolveHit]
    near: list[NearHit] | None = Field(default=None, exclude_if=lambda v: v is None)


class ExpandOut(BaseModel):
    """GraphExpand's answer: the entity's active facts in either direction (R23)."""

    result: list[ExpandFact]


class SourceOutList(BaseModel):
    """GraphSource's answer: the fact's supports (R23)."""

    result: list[SourceHit]


class TurnEndedOut(BaseModel):
    """How the turn ended, what it taught, and what was kept out and why (R1, R2, R10)."""

    status: EndStatus
    taught: Taught
    skipped: list[SkippedOut]


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


class WorkflowStepOut(BaseModel):
    """A workflow's step: its kind, whether it admits calls (R19), what it answers for a shortcut (R22)."""

    id: str
    kind: str
    admits_calls: bool
    answers: Answers | None


class WorkflowOut(BaseModel):
    """A workflow as the scenario file defines it: its read budget (R21; MemoryProbes null: no cap) and steps."""

    id: str
    budget: Budget
    steps: list[WorkflowStepOut]


class WorkflowsOut(BaseModel):
    """The workflows of the token's organization, whose ids start_run takes."""

    workflows: list[WorkflowOut]
