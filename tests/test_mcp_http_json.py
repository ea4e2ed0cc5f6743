"""A turn over Streamable HTTP through the SDK's client (#38, B10): each call is answered as one JSON body, so the
client's calls share one connection. Answered as an event stream, the SDK's client closed each call's stream at its
answer, before the stream's last chunk, and every call opened a new connection."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
from backend import ABOVE_THE_STORE
from helpers import HQ, web
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@ABOVE_THE_STORE
def test_http_a_turn_s_calls_are_json_answers_on_one_connection(agent_http):
    base, svc, _ = agent_http
    token = svc.issue_token("dana", org="acme")
    answers: list[tuple[str, Any]] = []  # each answer's content type and the connection it came on

    async def seen(response: httpx2.Response) -> None:
        if response.request.method == "POST" and response.status_code == 200:
            answers.append((response.headers["content-type"], response.extensions["network_stream"]))

    async def main() -> dict[str, Any]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, event_hooks={"response": [seen]})
        async with Client(streamable_http_client(base, http_client=http)) as c:

            async def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
                return (await c.call_tool(tool, args)).structured_content or {}

            run = (await call("start_run", {"workflow": "research"}))["run"]
            turn = (await call("open_turn", {"run": run, "request": "Where is Globex?"}))["turn"]
            for host in ("a.example", "b.example", "c.example"):
                await call("record", {"turn": turn, **web(f"https://{host}/", HQ)})
            return await call("end_turn", {"turn": turn, "status": "completed"})

    assert anyio.run(main)["taught"]["world"] == 3  # three supports of one fact
    assert len(answers) >= 7  # initialize, then six calls (a listing of the tools may come between)
    assert {kind for kind, _ in answers} == {"application/json"}
    # the first connection, initialize's, then holds the client's stream of the server's messages (a GET)
    assert len({id(stream) for _, stream in answers[1:]}) == 1, "each call opened a connection of its own"
