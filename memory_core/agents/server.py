"""Memory served to agents over MCP: the tools of tools.py, each one use case; failures as the format writes them."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pydantic_core
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ValidationError

from .. import errors as E
from ..errors import FormatError
from ..format.events import EVENT_MODELS, keys
from ..format.fields import format_error, storable
from ..rules.weights import WEIGHT_DECIMALS
from ..usecases.facade import MemoryService
from ..usecases.tokens import token_hash
from . import models as M
from .sessions import OpenSession, Sessions, log
from .tools import TOOLS, Conn

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


class Unauthorized(Exception):
    """The token no longer speaks for anyone (revoked, or the account erased)."""


def refused(reason: str, rule: str | None, message: str) -> CallToolResult:
    """A tool error whose structured content is {reason, rule, message}."""
    body = M.Refused(reason=reason, rule=rule, message=message)
    text = f"{reason} ({rule}): {message}" if rule else f"{reason}: {message}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body.model_dump(), is_error=True
    )


class MemoryServer(MCPServer):
    """The SDK's server, whose failed calls answer as the format refuses ({reason, rule, message})."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        try:
            given = arguments if tool is None else arguments_of(tool, arguments)
            return await super().call_tool(name, given, context)
        except ToolError as exc:
            if tool is None:
                raise
            return answer(name, exc.__cause__, tool=tool, arguments=arguments)
        except FormatError as exc:
            return refused("invalid", None, str(exc))


def arguments_of(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as its scenario event takes them: storable texts, its own keys, required ones not null."""
    storable("", arguments)
    required, optional = keys(tool.fn_metadata.arg_model)
    if (extra := next((k for k in arguments if k not in required + optional), None)) is not None:
        raise FormatError(extra, f"unknown key (allowed here: {', '.join((*required, *optional))})")
    if (null := next((k for k in required if k in arguments and arguments[k] is None), None)) is not None:
        raise FormatError(null, "must not be null (required)")
    return {k: v for k, v in arguments.items() if v is not None}


def answer(name: str, error: BaseException | None, *, tool: Tool, arguments: dict[str, Any]) -> CallToolResult:
    """A failed call as a refusal: `invalid` at the argument's path, a rule's with its rule, else `unavailable`."""
    if isinstance(error, ValidationError):
        error = format_error(error, kind=tool.fn_metadata.arg_model, value=arguments)
    if isinstance(error, FormatError):
        return refused("invalid", None, str(error))
    if isinstance(error, E.Refusal):
        return refused(error.reason, error.rule, error.message)
    if isinstance(error, Unauthorized):
        return refused("unauthorized", None, str(error))
    log.error("tool %s failed", name, exc_info=error)
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return refused("unavailable", None, f"memory could not do this ({first}); nothing was changed")


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
        self.token_id = token_id(token) if token is not None else None
        self.sessions = Sessions(service, transport=transport)
        self.on_unauthorized = on_unauthorized

    async def verify_token(self, token: str) -> AccessToken | None:
        """An HTTP request's token: its person and organization under the token's id; a revoked one ends its sessions (R17)."""
        caller = await anyio.to_thread.run_sync(self.service.token_caller, token)
        if caller is None:
            why = "its token was revoked, or its account erased"
            await anyio.to_thread.run_sync(lambda: self.sessions.end_token(token_id(token), why=why))
            return None
        person, org = caller
        return AccessToken(token=token, client_id=token_id(token), subject=person, scopes=[], claims={"org": org})

    def who(self) -> tuple[str, str]:
        """(person, organization) of this call's token, checked at every call (R30)."""
        if self.token is None:
            access = get_access_token()  # HTTP: verified by the SDK's bearer middleware this request
            if access is None or not access.claims or access.subject is None:
                raise Unauthorized("no token: send `Authorization: Bearer TOKEN`")
            return access.subject, str(access.claims["org"])
        caller = self.service.token_caller(self.token)
        if caller is None:
            message = "MEMORY_TOKEN is unknown or revoked, or its account was erased (R30); issue a new token"
            if self.on_unauthorized is not None:
                self.on_unauthorized(message)
            raise Unauthorized(message)
        return caller

    def session_of(self, context: Context) -> OpenSession:
        """This call's session, by the transport's handle of it (a header over HTTP), and the token that opens it."""
        rc, access = context.request_context, get_access_token()
        key = cast(Conn, rc.lifespan_context).key or (rc.request.headers.get("mcp-session-id") if rc.request else None)
        if not key:
            raise Unauthorized("this server keeps a session for each client: open one with MCP's initialize handshake")
        token = self.token_id or (access.client_id if access else None)
        info = rc.session.client_params.client_info if rc.session.client_params is not None else None
        client = f"{info.name} {info.version}".strip() if info is not None else "an MCP client"  # as it gave them
        return self.sessions.get(key, client=client, token=token)

    @asynccontextmanager
    async def connection(self, _: MCPServer) -> AsyncIterator[Conn]:
        """A connection's lifespan: its session ends when it closes (R17); over HTTP the server's (serve.serve_http)."""
        key = None if self.sessions.transport == "http" else uuid.uuid4().hex
        try:
            yield Conn(self, key)
        finally:
            with anyio.CancelScope(shield=True):
                if key is None:
                    await anyio.to_thread.run_sync(lambda: self.sessions.stop(why="the server stopped"))
                else:
                    await anyio.to_thread.run_sync(lambda: self.sessions.end(key, why="the client closed"))

    def build(self, **kwargs: Any) -> MCPServer:
        """The server with every tool of tools.TOOLS, read-only as its annotations say."""
        return MemoryServer(
            "memory-explorer",
            title="Memory Explorer",
            instructions=INSTRUCTIONS,
            version="0.1.0",
            tools=[_tool(name, fn, annotations) for name, (fn, annotations) in TOOLS.items()],
            lifespan=self.connection,
            **kwargs,
        )


def token_id(token: str) -> str:
    """A token's id: who opened a session, said without the token itself (logs may show it): its stored hash's head."""
    return "tok-" + token_hash(token)[:24]


class AsGiven(FuncMetadata):
    """Arguments as the JSON gave them (a text never decoded again); answers rounded as R22 compares them."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def convert_result(self, result: Any) -> Any:
        if not isinstance(result, BaseModel):
            return super().convert_result(result)
        # the SDK's own answer, without validating again what the tool's model validated (#38, B10)
        out = rounded(result.model_dump(mode="json", by_alias=True))
        text = pydantic_core.to_json(out, fallback=str, indent=2).decode()
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=out)


def rounded(value: Any) -> Any:
    """A JSON value with every number that is not whole rounded to WEIGHT_DECIMALS places."""
    if isinstance(value, float):
        return round(value, WEIGHT_DECIMALS)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return [rounded(v) for v in value] if isinstance(value, list) else value


def _tool(name: str, fn: Callable[..., Any], annotations: Any) -> Tool:
    """A tool as the SDK makes it, no argument beyond its own, its event's conditions (#38.3), errors in its output."""
    tool = Tool.from_function(fn, name=name, annotations=annotations)
    tool.parameters["additionalProperties"] = False
    event = EVENT_MODELS[name].model_json_schema() if name in EVENT_MODELS else {}
    tool.parameters.update({k: v for k, v in event.items() if k in ("if", "then", "else")})  # `source` by origin
    out = dict(tool.fn_metadata.output_schema or {})
    defs = {"$defs": d} if (d := out.pop("$defs", None)) else {}  # an error result's {reason, rule, message} too
    schema = {"type": "object", "anyOf": [out, M.Refused.model_json_schema()]} | defs
    tool.fn_metadata = AsGiven(**{**dict(tool.fn_metadata), "output_schema": schema})  # the SDK's, as our subclass
    return tool
