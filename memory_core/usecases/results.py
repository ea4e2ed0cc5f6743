"""What each use case returns: one frozen result per use case, every field named.

Every result is an `Outcome`: its `changes` are the fact changes graph by graph (empty for most
use cases), and its own fields say what it has to say. `detail()` says it as its kind's model
(usecases/details), which the dashboard's notebook keeps for a cell (`to_json()`, views/cells.py) and
reads back with the same model (views/cell_said); the API and the replay read fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..plain import Obj
from ..store.graph import FactChange
from ..store.teaching import SkippedClaim
from . import details as d

__all__ = [
    "AccountDeleted",
    "Corrected",
    "Outcome",
    "ReadResult",
    "RecordKept",
    "RunDeleted",
    "RunEnded",
    "RunStarted",
    "SettingChange",
    "SettingsChanged",
    "SkippedClaim",
    "StepRun",
    "Taught",
    "TurnEnded",
    "TurnOpened",
    "WorkCalled",
    "WorkReturned",
]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one use case did: fact changes graph by graph (a tuple or list, never changed after)."""

    changes: Sequence[FactChange] = field(default=(), kw_only=True)

    def detail(self) -> d.Kept:
        """What the use case has to say besides its fact changes, as its kind's model (usecases/details)."""
        return d.Nothing()

    def to_json(self) -> Obj:
        """The detail as plain data, as the notebook keeps it (None values left out)."""
        return self.detail().kept()


# --- runs and turns (usecases/turns.py) --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunStarted(Outcome):
    """start_run: whether the run is stored ephemeral; `rule` is R11 when a request for an
    ephemeral run was not honoured; `cap` is its workflow's MemoryProbes (R21; None: no cap)."""

    ephemeral: bool
    rule: str | None = None
    cap: int | None = None

    def detail(self) -> d.RunStartedDetail:
        return d.RunStartedDetail(ephemeral=self.ephemeral, rule=self.rule or None)


@dataclass(frozen=True, slots=True)
class TurnOpened(Outcome):
    """open_turn: the map the turn carries (R18); `changes` are what a replaced turn withdrew (R3)."""

    map: Obj

    def detail(self) -> d.TurnOpenedDetail:
        return d.TurnOpenedDetail(map=d.MapDetail.model_validate(self.map))


@dataclass(frozen=True, slots=True)
class RecordKept(Outcome):
    """record: the id the record was kept under (`turn#n`)."""

    record: str

    def detail(self) -> d.RecordDetail:
        return d.RecordDetail(record=self.record)


@dataclass(frozen=True, slots=True)
class StepRun(Outcome):
    """run_step: the shortcut that answered the step (R22), or None when it ran; `record` is the
    id of the record it kept, if it ran with one."""

    shortcut: Obj | None
    record: str | None = None

    def detail(self) -> d.StepDetail:
        return d.StepDetail(shortcut=self.shortcut, record=self.record)


@dataclass(frozen=True, slots=True)
class WorkCalled(Outcome):
    """call: nested work opened; it reads and writes no graph (R4)."""


@dataclass(frozen=True, slots=True)
class WorkReturned(Outcome):
    """return_work: `rule` is R5 when the work failed or was cancelled (it will contribute nothing)."""

    rule: str | None = None

    def detail(self) -> d.ReturnDetail:
        return d.ReturnDetail(rule=self.rule or None)


@dataclass(frozen=True, slots=True)
class Taught:
    """The supports a completed turn wrote, graph by graph (R1, R7 to R9)."""

    world: int
    user: int
    flow: int

    @property
    def total(self) -> int:
        return self.world + self.user + self.flow

    def detail(self) -> d.TaughtDetail:
        return d.TaughtDetail(world=self.world, user=self.user, flow=self.flow)

    def to_json(self) -> Obj:
        return self.detail().kept()


@dataclass(frozen=True, slots=True)
class TurnEnded(Outcome):
    """end_turn: a completed turn says what it taught (`taught`), each claim kept out and why
    (`skipped`, R10), and the records of failed or cancelled nested work (R5); a failed or
    cancelled turn teaches nothing (`taught` None, `rule` R2)."""

    status: str
    taught: Taught | None = None
    skipped: tuple[SkippedClaim, ...] = ()
    excluded_records: tuple[str, ...] = ()
    rule: str | None = None

    def detail(self) -> d.TurnEndedDetail:
        """The claims kept out are not in it: the notebook keeps them beside it, each with what it says."""
        if self.taught is None:
            return d.TurnEndedDetail(rule=self.rule or None)
        return d.TurnEndedDetail(taught=self.taught.detail(), excluded_records=list(self.excluded_records))


@dataclass(frozen=True, slots=True)
class RunEnded(Outcome):
    """end_run: the turns it cancelled (R17); an ephemeral run is erased with it, and `bytes_gone`
    says whether its text is out of the files yet (R31; None when nothing was erased, or inside a
    box, which scrubs once it commits)."""

    cancelled: tuple[str, ...]
    erased: bool
    bytes_gone: bool | None = None

    def detail(self) -> d.RunEndedDetail:
        return d.RunEndedDetail.model_validate(self, from_attributes=True)


# --- erasure (usecases/erasure.py) -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunDeleted(Outcome):
    """delete_run (R29): what went (turns, records, Flow facts) and what stayed (supports kept
    without their pointer); `bytes_gone` as in RunEnded (R31)."""

    run: str
    turns: int
    records: int
    flow_facts: int
    supports_kept: int
    bytes_gone: bool | None = None

    @classmethod
    def of(cls, summary: Obj, bytes_gone: bool | None) -> RunDeleted:
        """From store.erasure's summary of an erased run."""
        return cls(
            run=summary["run"],
            turns=summary["turns"],
            records=summary["records"],
            flow_facts=summary["flow_facts"],
            supports_kept=summary["supports_kept"],
            bytes_gone=bytes_gone,
        )

    def detail(self) -> d.RunDeletedDetail:
        return d.RunDeletedDetail.model_validate(self, from_attributes=True)


@dataclass(frozen=True, slots=True)
class AccountDeleted(Outcome):
    """delete_account (R30): the User facts and memberships that went, the runs that stay, and
    the key that now stands for the person everywhere (`person:erased:N`); `bytes_gone` (R31)."""

    person: str
    user_facts: int
    memberships: tuple[str, ...]
    runs_kept: tuple[str, ...]
    erased_key: str
    bytes_gone: bool | None = None

    @classmethod
    def of(cls, summary: Obj, bytes_gone: bool | None) -> AccountDeleted:
        """From store.erasure's summary of an erased account."""
        return cls(
            person=summary["person"],
            user_facts=summary["user_facts"],
            memberships=tuple(summary["memberships"]),
            runs_kept=tuple(summary["runs_kept"]),
            erased_key=summary["erased_key"],
            bytes_gone=bytes_gone,
        )

    def detail(self) -> d.AccountDeletedDetail:
        return d.AccountDeletedDetail.model_validate(self, from_attributes=True)


# --- reads, settings, corrections --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReadResult(Outcome):
    """read: the answer, the probes the turn has used with this one, and its cap (R21; None: none)."""

    result: list[Obj]
    probes_used: int
    cap: int | None

    def detail(self) -> d.ReadDetail:
        return d.ReadDetail.model_validate(self, from_attributes=True)


@dataclass(frozen=True, slots=True)
class SettingChange:
    """One setting an owner changed (R15), as the audit keeps it."""

    setting: str
    old: bool
    new: bool

    def detail(self) -> d.SettingChanged:
        return d.SettingChanged.model_validate({"setting": self.setting, "from": self.old, "to": self.new})


@dataclass(frozen=True, slots=True)
class SettingsChanged(Outcome):
    """set_settings (R15): the four settings now, and those that changed (in the order given)."""

    settings: dict[str, bool]
    changed: tuple[SettingChange, ...]

    def detail(self) -> d.SettingsDetail:
        return d.SettingsDetail(settings=dict(self.settings), changed=[c.detail() for c in self.changed])


@dataclass(frozen=True, slots=True)
class Corrected(Outcome):
    """dispute or retract (R28): the fact changes, their weights as R26 gives them; `weight` and
    `status` are the corrected fact's after it (also when a retraction changed nothing)."""

    weight: float | None = None
    status: str | None = None
