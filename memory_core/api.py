"""The preferences API (R15): GET and PATCH /organization/preferences, for the organization's owner.

`make api` serves it with uvicorn on 127.0.0.1:8000 over MEMORY_DATABASE_URL. It calls the same
service method as the dashboard's Settings page, so both write the same audit.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from . import errors as E
from .rules import SETTINGS, settings_problem
from .service import MemoryService

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {s.name: {"type": "boolean", "description": f"{s.meaning} ({s.rule})"} for s in SETTINGS},
    "additionalProperties": False,
}
PREFERENCES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["workflow"],
    "additionalProperties": False,
    "properties": {"workflow": SETTINGS_SCHEMA},
}


class Problem(Exception):
    """An answer other than 200: status and a sentence that says what to do."""

    def __init__(self, status: int, detail: str) -> None:
        self.status, self.detail = status, detail


def create_app(service: MemoryService | None = None) -> FastAPI:
    """The API over `service` (by default, the configured database, opened on first use)."""
    app = FastAPI(
        title="Memory Explorer: organization preferences",
        description="The four organization settings, read and changed by the owner alone (R15).",
    )
    holder: dict[str, MemoryService] = {}
    if service is not None:
        holder["svc"] = service

    def svc() -> MemoryService:
        if "svc" not in holder:
            holder["svc"] = MemoryService()
        return holder["svc"]

    bearer = HTTPBearer(auto_error=False, description="A token from `python -m memory_core token issue`")

    def owner(creds: HTTPAuthorizationCredentials | None = Depends(bearer)) -> tuple[str, str]:
        """The token's person, who must own the token's organization (401, then 403)."""
        if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
            raise Problem(
                401, "Send `Authorization: Bearer TOKEN` (python -m memory_core token issue PERSON --org ORG)."
            )
        caller = svc().token_caller(creds.credentials)
        if caller is None:
            raise Problem(401, "This token is unknown or revoked; issue a new one.")
        person, org = caller
        try:
            svc().get_settings(org, by=person)
        except E.Refusal as refusal:
            raise Problem(403, f"{refusal.message}") from None
        return person, org

    @app.exception_handler(Problem)
    async def problem(_: Request, exc: Problem) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=headers)

    @app.get(
        "/organization/preferences",
        responses={401: {}, 403: {}},
        response_description="The four settings under `workflow`",
    )
    def read(who: tuple[str, str] = Depends(owner)) -> dict[str, dict[str, bool]]:
        """The token's organization's settings (R11 to R14); the owner only (R15)."""
        person, org = who
        return {"workflow": svc().get_settings(org, by=person)}

    @app.patch(
        "/organization/preferences",
        responses={401: {}, 403: {}, 422: {}},
        openapi_extra={
            "requestBody": {"required": True, "content": {"application/json": {"schema": PREFERENCES_SCHEMA}}}
        },
    )
    async def change(request: Request, who: tuple[str, str] = Depends(owner)) -> dict[str, dict[str, bool]]:
        """Change any subset of the settings under `workflow`; checked as a whole, audited (R15)."""
        person, org = who
        changes = _settings_in(await request.body())
        try:
            out = svc().set_settings(org, by=person, settings=changes)
        except E.Refusal as refusal:
            raise Problem(422 if refusal.reason == "invalid_setting" else 403, refusal.message) from None
        return {"workflow": out.detail["settings"]}

    return app


def _settings_in(body: bytes) -> dict[str, bool]:
    """The settings a PATCH body asks for, or a 422 that names the problem."""
    try:
        doc = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError) as exc:
        raise Problem(422, f'The body is not JSON ({exc}); send {{"workflow": {{"LearnFromUsers": false}}}}.') from None
    if not isinstance(doc, dict) or set(doc) != {"workflow"}:
        raise Problem(
            422, "The body must be an object with exactly one key, `workflow`, holding the settings to change."
        )
    workflow = doc["workflow"]
    if not isinstance(workflow, dict):
        raise Problem(422, '`workflow` must be an object of settings, such as {"LearnFromUsers": false}.')
    problem = settings_problem(workflow)
    if problem:
        raise Problem(422, f"workflow: {problem}")
    return workflow


app = create_app()
