"""The preferences API (R15): GET and PATCH /organization/preferences for the owner, over the Settings page's use cases;
sync routes, a strict body made from rules.SETTINGS, every refusal a sentence in `detail` (docs/scaling.md: a standby)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from functools import cache
from typing import Any, cast

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, StrictBool, create_model
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import errors as E
from .errors import FormatError
from .format.scenario import decode
from .rules.settings import SETTINGS, settings_problem
from .usecases.facade import MemoryService

EXAMPLE = '{"workflow": {"LearnFromUsers": false}}'
ISSUE = "python -m memory_core token issue PERSON --org ORG"
#: What a 401 asks for (RFC 6750).
BEARER = {"WWW-Authenticate": "Bearer"}


class ProblemBody(BaseModel):
    """Every answer other than 200: a sentence that says what to do."""

    detail: str


# The body model, generated from the settings table: one optional strict boolean per setting.
Workflow: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "Workflow",
    __config__=ConfigDict(extra="forbid", strict=True),
    __doc__="Any subset of the organization's settings, each true or false (R11 to R14).",
    **{s.name: (StrictBool, Field(default=None, description=f"{s.meaning} ({s.rule})")) for s in SETTINGS},
)


class Preferences(BaseModel):
    """The PATCH body: exactly one key, `workflow`, holding the settings to change."""

    model_config = ConfigDict(extra="forbid", strict=True)
    workflow: Workflow  # type: ignore[valid-type]


class Settings(BaseModel):
    """The four settings, each true or false."""

    workflow: dict[str, bool]


def parse_body(raw: bytes) -> Any:
    """Strict JSON, read as a scenario file is; else its FormatError, failing the body model after the token's check."""
    try:
        return decode(raw)
    except FormatError as exc:
        return exc


class StrictJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_body(await self.body())
        return self._json


class StrictJsonRoute(APIRoute):
    """A route whose JSON body is read by parse_body instead of a plain json.loads."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJsonRequest(request.scope, request.receive))

        return strict


def body_problem(body: Any) -> str:
    """The sentence a 422 says about a body that failed the model (the sentences the API has always used)."""
    if isinstance(body, bytes):
        body = parse_body(body) if body else None
    if isinstance(body, FormatError):
        return f"The body is not JSON ({body}); send {EXAMPLE}."
    if not isinstance(body, dict) or set(body) != {"workflow"}:
        return "The body must be an object with exactly one key, `workflow`, holding the settings to change."
    workflow = body["workflow"]
    if not isinstance(workflow, dict):
        return f"`workflow` must be an object of settings, such as {EXAMPLE[13:-1]}."
    if problem := settings_problem(workflow):
        return f"workflow: {problem}"
    return f"Send the body as `Content-Type: application/json`, such as {EXAMPLE}."


def create_app(service: MemoryService | None = None) -> FastAPI:
    """The API over `service` (by default, the configured database, opened on first use)."""

    @cache
    def svc() -> MemoryService:
        return service if service is not None else MemoryService()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        svc()  # open the database at start: a scrub a killed process left is finished now (R31)
        yield

    app = FastAPI(
        lifespan=lifespan,
        title="Memory Explorer: organization preferences",
        description="The four organization settings, read and changed by the owner alone (R15).",
        strict_content_type=False,  # a JSON body without a Content-Type is read as JSON, as it always was
    )
    app.router.route_class = StrictJsonRoute

    bearer = HTTPBearer(auto_error=False, description="A token from `python -m memory_core token issue`")

    def owner(creds: HTTPAuthorizationCredentials | None = Depends(bearer)) -> tuple[str, str, dict[str, bool]]:
        """The token's person, who must own the token's organization (401, then 403), and its settings as read."""
        if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
            raise HTTPException(401, f"Send `Authorization: Bearer TOKEN` ({ISSUE}).", headers=BEARER)
        caller = svc().token_caller(creds.credentials)
        if caller is None:
            raise HTTPException(401, "This token is unknown or revoked; issue a new one.", headers=BEARER)
        person, org = caller
        try:
            return person, org, svc().get_settings(org, by=person)  # the owner's read: R15's check, GET's answer
        except E.Refusal as refusal:
            raise HTTPException(403, refusal.message) from None

    @app.exception_handler(E.Unreachable)
    async def unreachable(_: Request, exc: E.Unreachable) -> JSONResponse:
        """A database server that cannot be reached: 503, its sentence, and when to try again."""
        return JSONResponse({"detail": exc.message}, status_code=503, headers={"Retry-After": "5"})

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": body_problem(exc.body)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """Starlette's answers (404, 405), a 405's `Allow` listing every method of the path."""
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            routes = [r for r in app.routes if isinstance(r, APIRoute) and r.path_regex.match(request.url.path)]
            headers["Allow"] = ", ".join(sorted({m for r in routes for m in r.methods or ()}))
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=headers)

    refusals: dict[int | str, dict[str, Any]] = {
        401: {"model": ProblemBody, "description": "No token, or an unknown or revoked one"},
        403: {"model": ProblemBody, "description": "The token's person is not the organization's owner (R15)"},
        503: {"model": ProblemBody, "description": "The database cannot be reached (a change: the primary)"},
    }

    @app.get("/organization/preferences", responses=refusals, response_model=Settings)
    def read(who: tuple[str, str, dict[str, bool]] = Depends(owner)) -> dict[str, dict[str, bool]]:
        """The token's organization's settings (R11 to R14); the owner only (R15)."""
        return {"workflow": who[2]}

    @app.patch(
        "/organization/preferences",
        responses={**refusals, 422: {"model": ProblemBody, "description": "The body is refused as a whole"}},
        response_model=Settings,
    )
    def change(body: Preferences, who: tuple[str, str, dict[str, bool]] = Depends(owner)) -> dict[str, dict[str, bool]]:
        """Change any subset of the settings under `workflow`; checked as a whole, audited (R15)."""
        person, org, _ = who
        changes: dict[str, bool] = cast(BaseModel, body.workflow).model_dump(exclude_unset=True)
        try:
            out = svc().set_settings(org, by=person, settings=changes)
        except E.Refusal as refusal:
            raise HTTPException(422 if refusal.reason == "invalid_setting" else 403, refusal.message) from None
        return {"workflow": out.settings}

    return app


app = create_app()
