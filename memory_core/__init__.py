"""Memory Explorer's core: three graphs of facts kept between runs, and the rules that teach them.

The public API: `MemoryService` (the only door to memory), the event `Engine` and `replay`,
the scenario format (`parse`, `load`, `Scenario`), and the errors.
"""

from .db import database_url, make_engine
from .engine import Engine, EventResult, replay
from .errors import FormatError, MemoryCoreError, Refusal
from .scenario import Scenario, load, parse
from .service import MemoryService, Outcome

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
