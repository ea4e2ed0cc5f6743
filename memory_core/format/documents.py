"""`memory-scenario/1` as typed models (its events: events.py) and the JSON Schemas `schema` prints (docs/schema/)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from ..rules.shortcuts import DEFAULT_MIN_WEIGHT
from .events import MAX_INTEGER, Closed, EntityEntry, Event, Ident, StepKind, Text, absent, settings_model
from .state import State

SCENARIO_FORMAT = "memory-scenario/1"
STATE_FORMAT = "memory-state/1"

#: The name each schema gives itself (`$id`); docs/schema publishes it as NAME.schema.json.
SCHEMA_ID = "urn:memory-explorer:schema:"


#: An organization's settings in a scenario: any of the four, each true or false (R11 to R14).
SettingsEntry = settings_model(
    "SettingsEntry",
    "Any of the four settings with a boolean; the others keep their defaults (R11 to R14).",
    defaults=True,
)


class OrganizationEntry(Closed):
    """An organization; `owner` is the person whose memberships name it `owner`."""

    id: Ident
    name: Text
    owner: Text
    settings: SettingsEntry = absent()  # type: ignore[valid-type]


class PersonEntry(Closed):
    """A person, and the organizations they belong to (each organization has exactly one owner)."""

    id: Ident
    name: Text
    memberships: dict[str, Literal["owner", "member"]] = absent(description="organization id to owner or member")


class Budget(Closed):
    """A workflow's budget: without MemoryProbes, its turns have no cap on graph reads (R21)."""

    MemoryProbes: int | None = Field(default=None, ge=0, le=MAX_INTEGER, description="R21")


class Answers(Closed):
    """What a step answers, for shortcuts (R22)."""

    subject: EntityEntry
    relation: Ident


class WorkflowStep(Closed):
    """A step of a workflow; only model steps admit calls (R19)."""

    model_config = ConfigDict(
        json_schema_extra={
            "if": {"properties": {"admits_calls": {"const": True}}, "required": ["admits_calls"]},
            "then": {"properties": {"kind": {"const": "model"}}},
        }
    )

    id: Ident
    kind: StepKind
    admits_calls: bool = False
    answers: Answers | None = None
    min_weight: float = Field(default=DEFAULT_MIN_WEIGHT, ge=0, le=1, description="R22")


class WorkflowEntry(Closed):
    """A workflow of an organization; it may not declare an organization setting (R15)."""

    id: Ident
    org: Ident
    budget: Budget | None = None
    steps: list[WorkflowStep] = absent()


class ScenarioDocument(Closed):
    """A notebook of events, run in order against an empty memory."""

    format: Literal["memory-scenario/1"]
    events: list[Event]  # type: ignore[valid-type]
    title: str = absent()
    description: str = absent()
    organizations: list[OrganizationEntry] = absent()
    people: list[PersonEntry] = absent()
    workflows: list[WorkflowEntry] = absent()
    schema_: Text = absent(alias="$schema", description="the JSON Schema an editor checks the file with")


class _Generator(GenerateJsonSchema):
    """Without a title on every field, and no `default: null` where null is no value."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        out = super().default_schema(schema)
        if out.get("default", 0) is None and not any(s.get("type") == "null" for s in out.get("anyOf", ())):
            out = {k: v for k, v in out.items() if k != "default"}
        return out


#: Each document's model, by the name the command takes.
DOCUMENTS: dict[str, tuple[type[BaseModel], str]] = {
    "scenario": (ScenarioDocument, SCENARIO_FORMAT),
    "state": (State, STATE_FORMAT),
}


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a document: `scenario` or `state`."""
    model, fmt = DOCUMENTS[name]
    out = TypeAdapter(model).json_schema(schema_generator=_Generator)
    return {"$schema": _Generator.schema_dialect, **out, "$id": f"{SCHEMA_ID}{name}", "title": fmt}


def schema_text(name: str) -> str:
    """The schema as the command prints it and docs/schema publishes it: sorted keys, indent 2."""
    return json.dumps(json_schema(name), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
