import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from agent_servers import agent_db, agent_http  # noqa: E402, F401  (fixtures of the MCP tests)
from backend import BACKEND, fresh_service  # noqa: E402

from memory_core import MemoryService  # noqa: E402


def pytest_report_header(config):
    return f"memory backend: {BACKEND}"


@pytest.fixture
def svc() -> MemoryService:
    return fresh_service()
