"""The notebook's "add a cell" form, read from the event models (format/events.py): each field's widget, need, help."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo

from ..format.events import EVENT_MODELS

#: Keys the form never asks: the kind itself, and the note (the page asks it under every form).
NOT_ASKED = ("do", "note")
#: A record's keys, asked together as one compound (`record` on a step, the event itself for `record`).
RECORD_KEYS = ("origin", "claims", "source", "excerpt", "reliability")
#: Keys whose choices are the memory's own ids: organizations, or people.
CHOSEN_FROM = {"org": "orgs", "person": "people", "by": "people"}
#: Keys drawn as a compound of their own.
COMPOUND = {"record": "record", "fact": "fact", "settings": "settings", "args": "json", "request": "text"}

Widget = Literal["text", "choice", "toggle", "record", "fact", "settings", "json"]


@dataclass(frozen=True)
class FormField:
    """One thing the form asks."""

    name: str
    widget: Widget
    required: bool
    choices: tuple[str, ...] = ()  # a choice's words; empty for a choice among `among`
    among: str = ""  # "orgs" or "people": the page's own lists
    default: str | bool | None = None
    help: str = ""

    @property
    def simple(self) -> bool:
        """Drawn in a row with the others (a compound takes the width)."""
        return self.widget in ("text", "choice", "toggle")


def kinds() -> list[str]:
    """Every kind of event, in the order the format lists them."""
    return list(EVENT_MODELS)


def _words(annotation: object) -> tuple[str, ...]:
    """The words a Literal annotation allows (inside an Optional or an Annotated too), or ()."""
    if get_origin(annotation) is Literal:
        return tuple(str(a) for a in get_args(annotation))
    if get_origin(annotation) in (Union, types.UnionType, typing.Annotated):
        return next((words for arg in get_args(annotation) if (words := _words(arg))), ())
    return ()


def fields(kind: str) -> list[FormField]:
    """What the form asks for an event of `kind` (a KeyError for a kind the format has not)."""
    out = [_field(name, info) for name, info in EVENT_MODELS[kind].model_fields.items() if name not in NOT_ASKED]
    if kind != "record":
        return out
    first = next(i for i, f in enumerate(out) if f.name in RECORD_KEYS)  # the event is itself a record: one compound
    return [*out[:first], FormField("record", "record", True), *(f for f in out[first:] if f.name not in RECORD_KEYS)]


def _field(name: str, info: FieldInfo) -> FormField:
    """What the form asks for one field of an event's model."""
    required, help_ = info.is_required(), info.description or ""
    if name in COMPOUND:
        return FormField(name, COMPOUND[name], required, help=help_)  # type: ignore[arg-type]
    if name in CHOSEN_FROM:
        return FormField(name, "choice", required, among=CHOSEN_FROM[name], help=help_)
    if words := _words(info.annotation):
        default = info.default if isinstance(info.default, str) else None
        return FormField(name, "choice", required, choices=words, default=default, help=help_)
    if info.annotation is bool:
        return FormField(name, "toggle", required, default=bool(info.default), help=help_)
    return FormField(name, "text", required, help=help_)
