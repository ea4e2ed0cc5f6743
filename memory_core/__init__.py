"""Memory Explorer's core: the facade `MemoryService`, its results, the event engine, the scenario format, the errors."""

from .errors import FormatError, MemoryCoreError, Refusal
from .format.checks import Scenario
from .format.replay import EventEngine, EventResult, replay
from .format.scenario import load, parse
from .store.database import database_url, make_engine
from .usecases import results
from .usecases.facade import MemoryService
from .usecases.results import *  # noqa: F403  (the use cases' results, as results.__all__ names them)

__all__ = [
    "EventEngine",
    "EventResult",
    "FormatError",
    "MemoryCoreError",
    "MemoryService",
    "Refusal",
    "Scenario",
    "database_url",
    "load",
    "make_engine",
    "parse",
    "replay",
]
__all__ += results.__all__
