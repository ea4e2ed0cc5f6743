"""What each use case says besides its fact changes, as kept data: one pydantic model per kind of
event (the scenario's `do`), written by the outcome (usecases/results.py, `Outcome.detail()`) and
read back by the notebook (views/cell_said). One shape, in one place, for both directions (#24).

Unknown keys are ignored when read (a later version may say more); a key whose value is None is
left out when written (reading it back gives None again).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..plain import Obj

__all__ = [
    "DETAILS",
    "AccountDeletedDetail",
    "Kept",
    "MapDetail",
    "Nothing",
    "ReadDetail",
    "RecordDetail",
    "ReturnDetail",
    "RunDeletedDetail",
    "RunEndedDetail",
    "RunStartedDetail",
    "SettingChanged",
    "SettingsDetail",
    "StepDetail",
    "TaughtDetail",
    "TurnEndedDetail",
    "TurnOpenedDetail",
]


class Kept(BaseModel):
    """A kept piece of what a use case said: unknown keys are ignored (a later version may say more)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    def kept(self) -> Obj:
        """As plain JSON data, keys as written (`from`, `to`), None values left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Nothing(Kept):
    """call, dispute, retract: nothing to say besides the fact changes."""


class RunStartedDetail(Kept):
    ephemeral: bool = False
    rule: str | None = None


class MapDetail(Kept):
    """The map a turn carries (R18): active World facts and entities by kind."""

    facts: int
    kinds: dict[str, int] = Field(default_factory=dict)


class TurnOpenedDetail(Kept):
    map: MapDetail | None = None


class RecordDetail(Kept):
    record: str | None = None


class StepDetail(Kept):
    shortcut: Obj | None = None
    record: str | None = None


class ReturnDetail(Kept):
    rule: str | None = None


class TaughtDetail(Kept):
    world: int
    user: int
    flow: int


class TurnEndedDetail(Kept):
    """A completed turn's supports by graph and the records nested work could not teach (R5); a
    failed or cancelled turn's rule (R2). The claims kept out are the cell's own (`skipped`)."""

    taught: TaughtDetail | None = None
    excluded_records: list[str] = Field(default_factory=list)
    rule: str | None = None


class RunEndedDetail(Kept):
    cancelled: list[str] = Field(default_factory=list)
    erased: bool = False
    bytes_gone: bool | None = None


class RunDeletedDetail(Kept):
    run: str
    turns: int
    records: int
    flow_facts: int
    supports_kept: int
    bytes_gone: bool | None = None


class AccountDeletedDetail(Kept):
    person: str
    user_facts: int
    memberships: list[str] = Field(default_factory=list)
    runs_kept: list[str] = Field(default_factory=list)
    erased_key: str
    bytes_gone: bool | None = None


class ReadDetail(Kept):
    result: Any = None
    probes_used: int
    cap: int | None = None


class SettingChanged(Kept):
    setting: str
    old: bool = Field(alias="from")
    new: bool = Field(alias="to")


class SettingsDetail(Kept):
    settings: dict[str, bool] = Field(default_factory=dict)
    changed: list[SettingChanged] = Field(default_factory=list)


#: The detail's model for each kind of event (the scenario's `do`).
DETAILS: dict[str, type[Kept]] = {
    "start_run": RunStartedDetail,
    "open_turn": TurnOpenedDetail,
    "record": RecordDetail,
    "step": StepDetail,
    "call": Nothing,
    "return": ReturnDetail,
    "read": ReadDetail,
    "end_turn": TurnEndedDetail,
    "end_run": RunEndedDetail,
    "delete_run": RunDeletedDetail,
    "delete_account": AccountDeletedDetail,
    "set_settings": SettingsDetail,
    "dispute": Nothing,
    "retract": Nothing,
}
