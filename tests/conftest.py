import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from memory_core import MemoryService, make_engine  # noqa: E402


@pytest.fixture
def svc() -> MemoryService:
    return MemoryService(make_engine("sqlite://"))
