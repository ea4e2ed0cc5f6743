"""Memory Explorer's core: three graphs of facts kept between runs, and the rules that teach them.

The public API: `MemoryService` (the only door to memory) and the results its use cases return
(usecases/results.py), the `EventEngine` and `replay`, the scenario format (`parse`, `load`,
`Scenario`), and the errors.
"""

from .errors import FormatError, MemoryCoreError, Refusal
from .format.checks import Scenario
from .format.replay import EventEngine, EventResult, replay
from .format.scenario import load, parse
from .store.database import database_url, make_engine
from .usecases.facade import MemoryService
from .usecases.results import (
    AccountDeleted,
    Corrected,
    Outcome,
    ReadResult,
    RecordKept,
    RunDeleted,
    RunEnded,
    RunStarted,
    SettingChange,
    SettingsChanged,
    SkippedClaim,
    StepRun,
    Taught,
    TurnEnded,
    TurnOpened,
    WorkCalled,
    WorkReturned,
)

__all__ = [
    "AccountDeleted",
    "Corrected",
    "EventEngine",
    "EventResult",
    "FormatError",
    "MemoryCoreError",
    "MemoryService",
    "Outcome",
    "ReadResult",
    "RecordKept",
    "Refusal",
    "RunDeleted",
    "RunEnded",
    "RunStarted",
    "Scenario",
    "SettingChange",
    "SettingsChanged",
    "SkippedClaim",
    "StepRun",
    "Taught",
    "TurnEnded",
    "TurnOpened",
    "WorkCalled",
    "WorkReturned",
    "database_url",
    "load",
    "make_engine",
    "parse",
    "replay",
]
