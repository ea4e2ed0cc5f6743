"""What each use case returns: a frozen model, which a notebook cell keeps (`to_json()`) and reads back (BY_EVENT)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

from ..plain import Obj
from ..store.graph import FactChange
from ..store.turns import SkippedClaim
from .shapes import Map, Taught


class Result(BaseModel):
    """A use case's answer or a part of one: frozen; unknown keys ignored when read back."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    def to_json(self) -> Obj:
        """As the notebook keeps it: plain JSON, keys as written (`from`, `to`), None values left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Outcome(Result):
    """What one use case did: its fact changes graph by graph (a tuple or list, never changed after)."""

    changes: SkipValidation[Sequence[FactChange]] = Field(default=(), exclude=True)


class RunStarted(Outcome):
    """start_run: stored ephemeral or not (`rule` R11 when refused), its cap of probes (R21)."""

    ephemeral: bool
    rule: str | None = None
    cap: int | None = Field(default=None, exclude=True)


class TurnOpened(Outcome):
    """open_turn: the map the turn carries (R18); `changes` are what a replaced turn withdrew (R3)."""

    map: Map


class RecordKept(Outcome):
    """record: the id the record was kept under (`turn#n`)."""

    record: str


class StepRun(Outcome):
    """run_step: the shortcut that answered it (R22; None: it ran), the record it kept."""

    shortcut: Obj | None = None
    record: str | None = None


class WorkCalled(Outcome):
    """call: nested work opened; it reads and writes no graph (R4)."""


class WorkReturned(Outcome):
    """return_work: `rule` is R5 when the work failed or was cancelled (it will contribute nothing)."""

    rule: str | None = None


class TurnEnded(Outcome):
    """end_turn: what a completed turn taught, kept out (R10) and excluded (R5); else `rule` R2."""

    status: str = Field(default="", exclude=True)
    taught: Taught | None = None
    skipped: SkipValidation[tuple[SkippedClaim, ...]] = Field(default=(), exclude=True)
    excluded_records: tuple[str, ...] = ()
    rule: str | None = None


class RunEnded(Outcome):
    """end_run: the turns it cancelled (R17), whether it was erased (R11) and its bytes gone (R31)."""

    cancelled: tuple[str, ...]
    erased: bool
    bytes_gone: bool | None = None


class RunDeleted(Outcome):
    """delete_run (R29): what went and the supports kept without a pointer; bytes gone (R31)."""

    run: str
    turns: int
    records: int
    flow_facts: int
    supports_kept: int
    bytes_gone: bool | None = None


class AccountDeleted(Outcome):
    """delete_account (R30): what went, the runs kept, the person's new key; bytes gone (R31)."""

    person: str
    user_facts: int
    memberships: tuple[str, ...]
    runs_kept: tuple[str, ...]
    erased_key: str
    bytes_gone: bool | None = None


class ReadResult(Outcome):
    """read: the answer, the probes the turn has used with this one, and its cap (R21; None: none)."""

    result: SkipValidation[list[Obj]]
    probes_used: int
    cap: int | None = None
    near: SkipValidation[list[Obj]] | None = None  # an exact GraphResolve that found nothing (R23)


class SettingChange(Result):
    """One setting an owner changed (R15), as the audit keeps it (`from`, `to` when kept)."""

    setting: str
    old: bool = Field(validation_alias="from", serialization_alias="from")
    new: bool = Field(validation_alias="to", serialization_alias="to")


class SettingsChanged(Outcome):
    """set_settings (R15): the four settings now, and those that changed (in the order given)."""

    settings: dict[str, bool]
    changed: tuple[SettingChange, ...] = ()


class Corrected(Outcome):
    """dispute or retract (R28): changes weighed by R26; the fact's weight and status (not kept)."""

    weight: float | None = Field(default=None, exclude=True)
    status: str | None = Field(default=None, exclude=True)


#: The results a caller may name (the package re-exports them): every model above, and a skipped claim.
__all__ = sorted(
    [n for n, c in list(globals().items()) if isinstance(c, type) and issubclass(c, Result)]
    + ["SkippedClaim", "Taught"]
)
