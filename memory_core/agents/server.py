"""Memory served to agents over MCP: thirteen tools, each one use case of the facade.

The adapter translates and decides nothing: a call's arguments are checked by the scenario format's
checks (checks.py), the session's ownership of the run or turn it names is checked (sessions.py),
and the facade's use case does the rest, refusing with the reason and rule it always gives.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from .. import errors as E
from ..errors import FormatError
from ..usecases.facade import MemoryService
from . import models as M
from .checks import Caller, event_of
from .sessions import Sessions
from .tools import HANDLERS, TOOLS, Call

log = logging.getLogger("memory_core.agents")

INSTRUCTIONS = """\
Memory Explorer: the organization's memory, a graph of facts kept between runs, each pointing to its evidence.
How a turn goes:
1. start_run(workflow) once for a piece of work; open_turn(run, request) for each request. The turn's map
   says what the organization's World graph holds (R18); its budget caps your graph reads (R21).
2. Read before you work, within the budget: GraphResolve(turn, name) finds entities, GraphExpand(turn,
   entity) their facts with weights, GraphSource(turn, fact) the evidence behind a fact. Reads see the
   organization's World graph, your User graph and this run's Flow graph, nothing else (R20).
3. Record what you find as evidence: record(turn, origin, source, excerpt, claims), each claim a proposed
   fact with its target graph. Work inside a called workflow, agent or debater goes between call and
   return; it reads no graph (R4) and is learned from once, when the turn completes (R5).
4. end_turn(turn, "completed") only when the work succeeded: only a completed turn teaches (R1). End it
   "failed" or "cancelled" otherwise: its records stay as evidence and teach nothing (R2).
5. end_run(run) when done. A session that ends (the client closed, or idle) ends its open runs and their
   open turns teach nothing (R17).
A refused call changes nothing and says its reason and rule ({reason, rule, message}).
"""


@dataclass(frozen=True, slots=True)
class Conn:
    """What the lifespan of one connection (stdio, in-memory) yields: the key of its session."""

    key: str


class Unauthorized(Exception):
    """The token no longer speaks for anyone (revoked, or the account erased)."""


def refused(reason: str, rule: str | None, message: str) -> CallToolResult:
    """A tool error whose structured content is {reason, rule, message}."""
    body = M.Refused(reason=reason, rule=rule, message=message)
    text = f"{reason} ({rule}): {message}" if rule else f"{reason}: {message}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body.model_dump(), is_error=True
    )


class MemoryTool(Tool):
    """A tool whose arguments the scenario format checks, and whose body is one use case."""

    handler: Callable[[Call], Any] = Field(exclude=True)
    agents: Any = Field(exclude=True)

    async def run(self, arguments: dict[str, Any], context: Context[Any, Any], convert_result: bool = False) -> Any:
        return await anyio.to_thread.run_sync(self._run, arguments, context, convert_result)

    def _run(self, arguments: dict[str, Any], context: Context, convert_result: bool) -> Any:
        try:
            call = self.agents.call(self.name, arguments, context)
            out = self.handler(call)
        except FormatError as exc:
            return refused("invalid", None, str(exc))
        except E.Refusal as refusal:
            return refused(refusal.reason, refusal.rule, refusal.message)
        except Unauthorized as exc:
            return refused("unauthorized", None, str(exc))
        except Exception as exc:  # a lost database, a disk full: said in a sentence, the trace in the log
            log.exception("tool %s failed", self.name)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return refused("unavailable", None, f"memory could not do this ({first}); nothing was changed")
        return self.fn_metadata.convert_result(out) if convert_result else out


class MemoryAgents:
    """The MCP server over one memory: its tools, its sessions, and who each call speaks for."""

    def __init__(
        self,
        service: MemoryService,
        *,
        transport: str,
        token: str | None = None,
        on_unauthorized: Callable[[str], None] | None = None,
    ) -> None:
        self.service = service
        self.token = token  # stdio and in-memory: the one token the connection speaks with
        self.sessions = Sessions(service, transport=transport)
        self.on_unauthorized = on_unauthorized
        self.transport = transport

    def who(self) -> tuple[str, str]:
        """(person, organization) of this call's token, checked at every call (a revoked token or an
        erased account stops the next call)."""
        if self.token is None:
            access = get_access_token()  # HTTP: verified by the SDK's bearer middleware this request
            if access is None or not access.claims:
                raise Unauthorized("no token: send `Authorization: Bearer TOKEN`")
            return access.client_id, str(access.claims["org"])
        caller = self.service.token_caller(self.token)
        if caller is None:
            message = "MEMORY_TOKEN is unknown or revoked, or its account was erased (R30); issue a new token"
            if self.on_unauthorized is not None:
                self.on_unauthorized(message)
            raise Unauthorized(message)
        return caller

    def call(self, tool: str, arguments: dict[str, Any], context: Context) -> Call:
        """Who calls, in which session, with which checked event."""
        person, org = self.who()
        session = self.sessions.get(self.session_key(context), client=client_name(context))
        prefix = {"start_run": "run-", "open_turn": "turn-"}.get(tool)
        made = prefix + uuid.uuid4().hex[:12] if prefix else ""
        caller = Caller(
            person=person, org=org, run=made if tool == "start_run" else "", turn=made if tool == "open_turn" else ""
        )
        return Call(event_of(tool, TOOLS[tool], arguments, caller), caller, session, self.service)

    def session_key(self, context: Context) -> str:
        """The transport's handle of this call's session."""
        rc = context.request_context
        if isinstance(rc.lifespan_context, Conn):
            return rc.lifespan_context.key
        request = rc.request
        key = request.headers.get("mcp-session-id") if request is not None else None
        if not key:
            raise Unauthorized("this server keeps a session for each client: open one with MCP's initialize handshake")
        return key

    @asynccontextmanager
    async def connection(self, _: MCPServer) -> AsyncIterator[Conn | None]:
        """The lifespan of one connection (stdio, in-memory): its session ends when it closes. Over
        HTTP the lifespan is the server's own: sessions end one by one (serve.http_app: the SDK discards them), all at stop."""
        if self.transport == "http":
            try:
                yield None
            finally:
                await anyio.to_thread.run_sync(lambda: self.sessions.stop(why="the server stopped"))
            return
        conn = Conn(uuid.uuid4().hex)
        try:
            yield conn
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(lambda: self.sessions.end(conn.key, why="the client closed"))

    def build(self, **kwargs: Any) -> MCPServer:
        """The MCPServer with the thirteen tools."""
        tools: list[Tool] = [self._tool(fn, read_only=name.startswith("Graph")) for name, fn in TOOLS.items()]
        return MCPServer(
            "memory-explorer",
            title="Memory Explorer",
            instructions=INSTRUCTIONS,
            version="0.1.0",
            tools=tools,
            lifespan=self.connection,
            **kwargs,
        )

    def _tool(self, fn: Callable[..., Any], *, read_only: bool) -> MemoryTool:
        annotations = (
            ToolAnnotations(read_only_hint=True, destructive_hint=False)
            if read_only
            else ToolAnnotations(read_only_hint=False)
        )
        base = Tool.from_function(fn, name=fn.__name__.removeprefix("tool_"), annotations=annotations)
        tool = MemoryTool(**{k: getattr(base, k) for k in Tool.model_fields}, handler=HANDLERS[base.name], agents=self)
        tool.parameters["additionalProperties"] = False
        tool.fn_metadata.output_schema = _or_refused(tool.fn_metadata.output_schema or {})
        return tool


def _or_refused(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's output schema admitting what an error result carries too ({reason, rule, message}):
    clients that check an error's structured content against the output schema find it described."""
    result = dict(schema)
    defs = result.pop("$defs", {})
    refused = M.Refused.model_json_schema()
    out: dict[str, Any] = {"type": "object", "anyOf": [result, refused]}
    if defs:
        out["$defs"] = defs
    return out


def client_name(context: Context) -> str:
    """The client's name and version as it gave them at connection."""
    params = context.request_context.session.client_params
    info = params.client_info if params is not None else None
    return f"{info.name} {info.version}".strip() if info is not None else "an MCP client"
