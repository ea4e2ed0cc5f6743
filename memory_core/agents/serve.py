"""Serving the MCP server: one agent over stdio (MEMORY_TOKEN), many over Streamable HTTP at `/mcp` (a bearer token each)."""

from __future__ import annotations

import logging
import os
import resource
import signal
import sys
import threading
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.auth.settings import AuthSettings
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import JSONResponse

from ..usecases.facade import MemoryService
from .server import MemoryAgents
from .sessions import log

SESSIONS_ONLY = (
    "this server keeps a session for each client (it owns the runs it starts): connect with the initialize handshake"
)
#: A connection that has not sent its first request's headers in this many seconds is closed.
HEADERS_TIMEOUT = 10.0


def _log_to_stderr() -> None:
    """Every log to standard error through a plain handler, set before the SDK's `rich` one (#40 finding 3)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("memory-mcp: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    logging.basicConfig(level=logging.WARNING, format="memory-mcp: %(name)s: %(message)s", stream=sys.stderr)


def serve_stdio(service: MemoryService, token: str | None, *, database_errors: tuple[type[Exception], ...] = ()) -> int:
    """Serve one agent over stdio as `token`'s holder; 2 when it speaks for no one, 1 when the database fails at close."""
    _log_to_stderr()
    problem = None if token else "set MEMORY_TOKEN to a token (python -m memory_core token issue PERSON --org ORG)"
    if token and service.token_caller(token) is None:
        problem = "MEMORY_TOKEN is unknown or revoked, or its account was erased; issue a new one"
    if problem:
        print(f"memory-mcp: {problem}", file=sys.stderr)
        return 2
    status = {"code": 0}

    def unauthorized(message: str) -> None:  # the call is answered, then the server stops (its runs end)
        if status["code"] == 2:
            return
        status["code"] = 2
        print(f"memory-mcp: {message}", file=sys.stderr)

        def stop_now() -> None:
            # the SDK's reader of stdin blocks until the client closes it: end the runs, then leave at once
            agents.sessions.stop(why="its token was revoked, or its account erased")
            sys.stderr.flush()
            os._exit(2)

        threading.Timer(0.2, stop_now).start()

    agents = MemoryAgents(service, transport="stdio", token=token, on_unauthorized=unauthorized)
    agents.sessions.start()
    server = agents.build(log_level="WARNING")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(status["code"]))
    stopping = True
    try:
        server.run("stdio")
    except (KeyboardInterrupt, SystemExit):
        pass
    except BaseExceptionGroup as group:  # the SDK's task group, in which ending the session failed
        failed = group.split(database_errors)[0]
        if failed is None:
            raise
        stopping, status["code"] = False, 1  # its pid gone, the next server's sweep ends its runs (R17)
        first: BaseException = failed
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        print(
            f"memory-mcp: the database failed as the session ended ({str(first).splitlines()[0]}); "
            "its open runs are left to the next server's sweep (R17)",
            file=sys.stderr,
        )
    finally:
        if stopping:
            agents.sessions.stop(why="the server stopped")
    return status["code"]


def guarded_http(most: int) -> type[Any]:
    """uvicorn's HTTP/1.1 closing a connection past `most`, and one whose request is not whole after two looks (#40)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11(H11Protocol):
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > most:
                transport.close()
            else:
                self.loop.call_later(HEADERS_TIMEOUT, self.request_due, None)

        def request_due(self, waited: object) -> None:
            if self.transport.is_closing():
                return
            cycle = self.cycle
            coming = cycle is None or (cycle.more_body and not cycle.response_started)
            coming = coming or (cycle.response_complete and bool(self.conn.trailing_data[0]))  # a next request's part
            if coming and (cycle is None or cycle is waited):
                self.transport.close()
            else:
                self.loop.call_later(HEADERS_TIMEOUT, self.request_due, cycle if coming else None)

    return GuardedH11


def serve_http(service: MemoryService, *, host: str, port: int, idle_timeout: float, per_token: int) -> int:
    """Serve agents over Streamable HTTP until SIGTERM or Ctrl-C; each session's runs end with it (R17), idle or not."""
    import uvicorn

    _log_to_stderr()
    agents = MemoryAgents(service, transport="http")
    server = agents.build(
        token_verifier=agents,
        # Our tokens are the API's, not OAuth ones: the verifier checks them itself, and no protected-resource
        # metadata names an authorization server, as none exists (a 401 says `Bearer`, #38.5).
        auth=AuthSettings(issuer_url=f"http://{host}:{port}", resource_server_url=None, validate_token_resource=False),  # type: ignore[arg-type]
        log_level="WARNING",
    )
    # answers as JSON: the SDK's client closed each call's event stream before its last chunk, a connection a call (#38)
    app = server.streamable_http_app(session_idle_timeout=idle_timeout, host=host, json_response=True)
    _own_sessions(server.session_manager, agents, idle_timeout=idle_timeout, per_token=per_token)
    agents.sessions.start()
    log.info("serving MCP at http://%s:%d/mcp (sessions idle for %g s end)", host, port, idle_timeout)
    # half the descriptors for connections, a quarter accepted at once: the rest for the database and files
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    files = 65536 if soft == resource.RLIM_INFINITY else soft
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level="warning",
            timeout_graceful_shutdown=5,
            http=guarded_http(files // 2),
            backlog=min(2048, files // 4),
        )
    finally:
        agents.sessions.stop(why="the server stopped")
    return 0


class TooManySessions(Exception):
    """A token holds as many open HTTP sessions as one token may."""


def _own_sessions(
    manager: StreamableHTTPSessionManager, agents: MemoryAgents, *, idle_timeout: float, per_token: int
) -> None:
    """The SDK's sessions as ours: their runs end with them (R17), a token's past `per_token` 429, no session -32022."""
    discard, admit, inner = manager._discard_session, manager._admit_session, manager.asgi_app

    # _discard_session: the one place the SDK ends a session, however it ended
    async def discarded(session_id: str, transport: Any) -> None:
        why = "deleted by the client" if transport.is_terminated else f"idle past {idle_timeout:g} s, or lost"
        await discard(session_id, transport)
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(lambda: agents.sessions.end(session_id, why=why))

    def admit_within(requestor: AuthorizationContext | None) -> Any:
        if requestor is not None and sum(owner == requestor for owner in manager._session_owners.values()) >= per_token:
            raise TooManySessions(
                f"this token already has {per_token} open sessions, the most one token may have "
                "(--max-sessions-per-token): end one (DELETE /mcp) or let it idle out"
            )
        return admit(requestor)

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        version = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"mcp-protocol-version"), None)
        if scope.get("type") == "http" and version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            data = {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version}
            error, status = {"code": UNSUPPORTED_PROTOCOL_VERSION, "message": SESSIONS_ONLY, "data": data}, 400
        else:
            try:
                await inner(scope, receive, send)
                return
            except TooManySessions as exc:
                error, status = {"code": -32600, "message": str(exc)}, 429
        await JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=status)(scope, receive, send)

    manager._discard_session = discarded  # type: ignore[method-assign]
    manager._admit_session = admit_within  # type: ignore[method-assign]
    manager.asgi_app = asgi  # type: ignore[assignment]
