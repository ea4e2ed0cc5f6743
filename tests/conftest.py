import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from agent_servers import agent_db, agent_http  # noqa: E402, F401  (fixtures of the MCP tests)
from backend import BACKEND, fresh_service  # noqa: E402
from chromium import browser, demo_app, moments, page, warm  # noqa: E402, F401  (fixtures of the Chromium tests)

from memory_core import MemoryService  # noqa: E402


def pytest_report_header(config):
    return f"memory backend: {BACKEND}"


@pytest.fixture(autouse=True)
def _no_local_secrets(monkeypatch):
    """Tests never read a developer's .streamlit/secrets.toml: its [auth] would sign every page in with
    their identity provider. A test that wants one sets AppTest.secrets (tests/test_signin_identity.py)."""
    from streamlit.runtime.secrets import secrets_singleton

    monkeypatch.setattr(secrets_singleton, "_secrets", {})


@pytest.fixture
def svc() -> MemoryService:
    return fresh_service()
