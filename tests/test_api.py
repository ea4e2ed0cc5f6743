"""The preferences API (R15): tokens, owner only, whole-change validation, no 500 on any input."""

from __future__ import annotations

import inspect
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from backend import ABOVE_THE_STORE, SERVER, fresh_service, fresh_url
from fastapi.testclient import TestClient
from helpers import scenario
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.api import create_app

ROOT = Path(__file__).resolve().parent.parent
URL = "/organization/preferences"
DEFAULTS = {
    "AllowEphemeralRuns": False,
    "LearnFromEphemeralRuns": True,
    "LearnFromUsers": True,
    "NoMemoryShortcuts": False,
}


@pytest.fixture
def svc():
    s = fresh_service()
    replay(parse(json.dumps(scenario([]))), s)
    return s


@pytest.fixture
def client(svc):
    return TestClient(create_app(svc))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_owner_reads_and_patches_with_audit(svc, client):
    token = svc.issue_token("dana", org="acme")
    assert client.get(URL, headers=bearer(token)).json() == {"workflow": DEFAULTS}
    r = client.patch(URL, headers=bearer(token), json={"workflow": {"LearnFromUsers": False}})
    assert r.status_code == 200 and r.json() == {"workflow": {**DEFAULTS, "LearnFromUsers": False}}
    assert [(a["by"], a["setting"], a["from"], a["to"]) for a in svc.audit("acme")] == [
        ("dana", "LearnFromUsers", True, False)
    ]


def test_no_token_or_bad_token_is_401(svc, client):
    assert client.get(URL).status_code == 401
    assert client.get(URL, headers=bearer("mem_nope")).status_code == 401
    r = client.patch(URL, headers={"Authorization": "Basic abc"}, json={"workflow": {}})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"


def test_member_is_403_for_get_and_patch(svc, client):
    token = svc.issue_token("lee", org="acme")
    assert client.get(URL, headers=bearer(token)).status_code == 403
    r = client.patch(URL, headers=bearer(token), json={"workflow": {"LearnFromUsers": False}})
    assert r.status_code == 403 and "R15" in r.json()["detail"]
    assert svc.get_settings("acme") == DEFAULTS and svc.audit("acme") == []


def test_token_speaks_for_its_own_organization(svc, client):
    token = svc.issue_token("lee", org="globex")  # lee is a member of globex, not its owner
    assert client.get(URL, headers=bearer(token)).status_code == 403
    omar = svc.issue_token("omar", org="globex")
    client.patch(URL, headers=bearer(omar), json={"workflow": {"NoMemoryShortcuts": True}})
    assert svc.get_settings("acme")["NoMemoryShortcuts"] is False


@pytest.mark.parametrize(
    "body",
    [
        {"workflow": {"LearnFromUsers": False, "Bogus": True}},
        {"workflow": {"LearnFromUsers": "no"}},
        {"workflow": {"LearnFromUsers": 0}},
        {"workflow": []},
        {"settings": {"LearnFromUsers": False}},
        {"workflow": {}, "extra": 1},
        [],
        "text",
    ],
)
def test_bad_bodies_are_422_and_change_nothing(svc, client, body):
    token = svc.issue_token("dana", org="acme")
    r = client.patch(URL, headers=bearer(token), json=body)
    assert r.status_code == 422 and r.json()["detail"]
    assert svc.get_settings("acme") == DEFAULTS and svc.audit("acme") == []


def test_unknown_setting_is_named(svc, client):
    token = svc.issue_token("dana", org="acme")
    r = client.patch(URL, headers=bearer(token), content=b'{"workflow": {"Bogus": true}}')
    assert "Bogus" in r.json()["detail"]
    assert client.patch(URL, headers=bearer(token), content=b"{not json").status_code == 422


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'{"workflow": {"LearnFromUsers": ' + b"[" * 5000 + b"]" * 5000 + b"}}", "nested more than 64 levels"),
        (b'{"workflow": {"LearnFromUsers": NaN}}', "line 1, column 33: NaN is not a number in JSON"),
        (b'{"workflow": {"LearnFromUsers": -Infinity}}', "line 1, column 33: -Infinity is not a number in JSON"),
        (b'{"workflow": {"LearnFromUsers": 1' + b"0" * 5000 + b"}}", "this number is too large"),
        (b'{"workflow": {"LearnFromUsers": "\xff"}}', "byte 33: not UTF-8 text"),
        (b'{"workflow": {"LearnFromUsers": fals}}', "line 1, column 33: not valid JSON"),
    ],
)
def test_bodies_that_are_not_json_are_422_never_500(svc, client, content, says):
    """Deep nesting, NaN/Infinity, a 5,000-digit number, bad UTF-8: a 422 sentence, nothing changed."""
    token = svc.issue_token("dana", org="acme")
    r = client.patch(URL, headers={**bearer(token), "Content-Type": "application/json"}, content=content)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("The body is not JSON (") and says in r.json()["detail"]
    assert svc.get_settings("acme") == DEFAULTS and svc.audit("acme") == []


def test_422_sentences_are_kept(svc, client):
    token = svc.issue_token("dana", org="acme")

    def detail(body: object) -> str:
        return str(client.patch(URL, headers=bearer(token), json=body).json()["detail"])

    assert detail([]) == (
        "The body must be an object with exactly one key, `workflow`, holding the settings to change."
    )
    assert detail({"workflow": []}) == '`workflow` must be an object of settings, such as {"LearnFromUsers": false}.'
    assert detail({"workflow": {"LearnFromUsers": 0}}) == "workflow: LearnFromUsers must be true or false, not 0 (R15)"
    assert detail({"workflow": {"LearnFromUsers": None}}).startswith("workflow: LearnFromUsers must be true or false")
    assert detail({"workflow": {"Bogus": True}}).startswith("workflow: unknown setting 'Bogus' (the settings are ")
    assert client.patch(URL, headers=bearer(token), content=b"").json()["detail"].startswith("The body must be")
    assert svc.get_settings("acme") == DEFAULTS and svc.audit("acme") == []


def test_json_without_content_type_is_still_read(svc, client):
    token = svc.issue_token("dana", org="acme")
    r = client.patch(URL, headers=bearer(token), content=b'{"workflow": {"NoMemoryShortcuts": true}}')
    assert r.status_code == 200 and r.json()["workflow"]["NoMemoryShortcuts"] is True


def test_no_token_is_401_before_the_body_is_judged(client):
    r = client.patch(URL, headers={"Content-Type": "application/json"}, content=b"[" * 5000)
    assert r.status_code == 401


def test_routes_are_sync_and_the_body_schema_comes_from_the_settings_table(client):
    """Blocking database calls run in the thread pool (sync routes); the schema is the model's."""
    from fastapi.routing import APIRoute

    from memory_core.rules.settings import SETTINGS

    routes = [r for r in client.app.routes if isinstance(r, APIRoute)]
    assert {m for r in routes for m in r.methods} == {"GET", "PATCH"}
    assert not any(inspect.iscoroutinefunction(r.endpoint) for r in routes)
    spec = client.get("/openapi.json").json()
    body = spec["paths"][URL]["patch"]["requestBody"]["content"]["application/json"]["schema"]
    comps = spec["components"]["schemas"]
    prefs = comps[body["$ref"].rsplit("/", 1)[-1]]
    assert prefs["required"] == ["workflow"] and prefs["additionalProperties"] is False
    workflow = comps[prefs["properties"]["workflow"]["$ref"].rsplit("/", 1)[-1]]
    assert workflow["additionalProperties"] is False
    assert {name: p["type"] for name, p in workflow["properties"].items()} == {s.name: "boolean" for s in SETTINGS}


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "OPTIONS"])
def test_405_lists_every_method_of_the_path(client, method):
    r = client.request(method, URL)
    assert r.status_code == 405 and r.headers["allow"] == "GET, PATCH"


def test_revoked_and_replaced_tokens_stop_working(svc, client):
    first = svc.issue_token("dana", org="acme")
    second = svc.issue_token("dana", org="acme")
    assert client.get(URL, headers=bearer(first)).status_code == 401
    assert svc.revoke_token(second) is True and svc.revoke_token(second) is False
    assert client.get(URL, headers=bearer(second)).status_code == 401


def test_only_a_hash_is_stored(svc):
    token = svc.issue_token("dana", org="acme")
    with svc.engine.connect() as conn:
        dump = str(conn.exec_driver_sql("SELECT * FROM apitoken").fetchall())
    assert token not in dump and token[4:] not in dump


def test_token_command_issues_and_revokes(tmp_path):
    url = fresh_url("memory_tokens") if SERVER else f"sqlite:///{tmp_path / 'api.db'}"
    replay(parse(json.dumps(scenario([]))), MemoryService(make_engine(url)))

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "memory_core", "token", *args, "--db", url], capture_output=True, text=True, cwd=ROOT
        )

    issued = cli("issue", "dana", "--org", "acme")
    token = issued.stdout.strip()
    assert issued.returncode == 0 and token.startswith("mem_")
    assert cli("issue", "pat", "--org", "acme").returncode == 1  # not a member
    assert cli("revoke", token).stdout.strip() == "revoked"
    assert cli("revoke", token).returncode == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def uvicorn_over(url: str) -> Iterator[str]:
    """A real uvicorn serving the API on a free loopback port over `url`; yields its base URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "memory_core.api:app", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "MEMORY_DATABASE_URL": url},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/openapi.json", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_against_a_real_uvicorn_on_loopback(tmp_path):
    url = fresh_url("memory_uvicorn") if SERVER else f"sqlite:///{tmp_path / 'api.db'}"
    svc = MemoryService(make_engine(url))
    replay(parse(json.dumps(scenario([]))), svc)
    token = svc.issue_token("dana", org="acme")
    with uvicorn_over(url) as base, httpx.Client(base_url=base, timeout=10) as http:
        assert http.get(URL).status_code == 401
        r = http.patch(URL, headers=bearer(token), json={"workflow": {"AllowEphemeralRuns": True}})
        assert r.status_code == 200 and r.json()["workflow"]["AllowEphemeralRuns"] is True
        assert http.get(URL, headers=bearer(token)).json()["workflow"]["AllowEphemeralRuns"] is True
    assert svc.audit("acme")[-1]["setting"] == "AllowEphemeralRuns"


SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"


@ABOVE_THE_STORE  # the API's contract; what a refused request leaves is held on both backends below
@pytest.mark.skipif(
    not SCHEMATHESIS.exists() and os.environ.get("CI") != "true", reason="schemathesis is not installed (make venv)"
)
def test_schemathesis_finds_nothing_for_owner_or_member(tmp_path):
    """A fuzzer nobody here wrote checks the API from its own OpenAPI schema, with every check it has:
    as the owner (200 and 422) and as a member (403). Bounded to a few dozen cases per operation."""
    url = fresh_url("memory_fuzz") if SERVER else f"sqlite:///{tmp_path / 'fuzz.db'}"
    svc = MemoryService(make_engine(url))
    replay(parse(json.dumps(scenario([]))), svc)
    tokens = {"owner": svc.issue_token("dana", org="acme"), "member": svc.issue_token("lee", org="acme")}
    with uvicorn_over(url) as base:
        for who, token in tokens.items():
            run = subprocess.run(
                [
                    str(SCHEMATHESIS),
                    "run",
                    f"{base}/openapi.json",
                    "-H",
                    f"Authorization: Bearer {token}",
                    "--checks",
                    "all",
                    "--max-examples",
                    "25",
                    "--seed",
                    "13",
                    "--workers",
                    "1",
                    "--generation-database",
                    "none",
                    "--no-color",
                ],
                cwd=tmp_path,  # its reports and caches stay out of the project
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert run.returncode == 0, f"schemathesis as the {who}:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=8,
)
setting_names = st.sampled_from([*DEFAULTS, "Bogus", "learnfromusers", ""])
bodies = st.one_of(
    json_values,
    st.fixed_dictionaries({"workflow": st.dictionaries(setting_names, json_values | st.booleans(), max_size=4)}),
    st.fixed_dictionaries({"workflow": json_values}),
)
headers = st.sampled_from(["owner", "member", "none", "garbage", "basic", "empty"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["GET", "PATCH"]),
    who=headers,
    body=bodies,
    raw=st.binary(max_size=20),
    use_raw=st.booleans(),
)
def test_no_500_and_refused_requests_change_nothing(svc, client, method, who, body, raw, use_raw):
    """Generated from the OpenAPI schema's shapes: any header, any body."""
    assert "/organization/preferences" in client.get("/openapi.json").json()["paths"]
    tokens = {"owner": svc.issue_token("dana", org="acme"), "member": svc.issue_token("lee", org="acme")}
    header = {
        "owner": bearer(tokens["owner"]),
        "member": bearer(tokens["member"]),
        "none": {},
        "garbage": bearer("mem_garbage"),
        "basic": {"Authorization": "Basic x"},
        "empty": {"Authorization": "Bearer "},
    }[who]
    before, audit = svc.get_settings("acme"), svc.audit("acme")
    content = raw if use_raw else json.dumps(body).encode()
    r = client.request(method, URL, headers={**header, "Content-Type": "application/json"}, content=content)
    assert r.status_code in (200, 401, 403, 422), r.text
    if r.status_code != 200 or method == "GET":
        assert svc.get_settings("acme") == before and svc.audit("acme") == audit
    else:
        assert r.json()["workflow"] == svc.get_settings("acme")
