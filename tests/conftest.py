import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from agent_servers import agent_db, agent_http  # noqa: E402, F401  (fixtures of the MCP tests)
from backend import BACKEND, fresh_service  # noqa: E402
from chromium import browser, demo_app, moments, page, shared_context, warm  # noqa: E402, F401  (fixtures of the Chromium tests)

from memory_core import MemoryService  # noqa: E402

#: The slowest modules (their time on two cores, `--durations`), started first so that no worker is
#: left alone with one of them at the end (`.ci/test-both`: a module goes whole to one worker).
SLOWEST_FIRST = (
    "test_browser.py",
    "test_browser_polish.py",
    "test_dashboard.py",
    "test_history.py",
    "test_browser_graphs.py",
    "test_browser_generated.py",
    "test_properties.py",
    "test_mcp_transports.py",
    "test_cli.py",
    "test_identities.py",
    "test_browser_inert.py",
    "test_browser_signin.py",
    "test_erasure.py",
)


def _apptest_once_per_process() -> None:
    """What a served app does once at start, AppTest does anew for every test (streamlit's
    testing/v1/app_test.py): it scans every installed package's metadata for components, and compiles
    the app's scripts on every run, magic included. Neither answer changes while the tests run (no
    package is installed, no page edited), so this process keeps the first: a fifth of the
    dashboard tests' CPU. What a page does is the same; it is only read and compiled once."""
    from streamlit.components.v2 import manifest_scanner
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test

    scanned = functools.cache(manifest_scanner.scan_component_manifests)
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(scanned())
    compiled = ScriptCache()
    app_test.ScriptCache = lambda: compiled  # type: ignore[assignment,misc]


_apptest_once_per_process()


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest as collected


def pytest_report_header(config):
    return f"memory backend: {BACKEND}"


#: The test process's own main module. AppTest runs a page as `__main__` and leaves it there; a process
#: spawned after it (tests/test_races.py) would run that page again as it starts, and die.
_MAIN = sys.modules["__main__"]


@pytest.fixture(autouse=True)
def _main_module_kept():
    yield
    sys.modules["__main__"] = _MAIN


@pytest.fixture(autouse=True)
def _no_local_secrets(monkeypatch):
    """Tests never read a developer's .streamlit/secrets.toml: its [auth] would sign every page in with
    their identity provider. A test that wants one sets AppTest.secrets (tests/test_signin_identity.py)."""
    from streamlit.runtime.secrets import secrets_singleton

    monkeypatch.setattr(secrets_singleton, "_secrets", {})


@pytest.fixture
def svc() -> MemoryService:
    return fresh_service()
