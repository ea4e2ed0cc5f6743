"""Memory Explorer's core: three graphs of facts kept between runs, and the rules that teach them.

The public API: `MemoryService` (the only door to memory), the event `Engine` and `replay`,
the scenario format (`parse`, `load`, `Scenario`), and the errors.
"""

from .errors import FormatError, MemoryCoreError, Refusal
from .format.checks import Scenario
from .format.replay import Engine, EventResult, replay
from .format.scenario import load, parse
from .store.database import database_url, make_engine
from .usecases.base import Outcome
from .usecases.facade import MemoryService

__all__ = [
    "Engine",
    "EventResult",
    "FormatError",
    "MemoryCoreError",
    "MemoryService",
    "Outcome",
    "Refusal",
    "Scenario",
    "database_url",
    "load",
    "make_engine",
    "parse",
    "replay",
]
