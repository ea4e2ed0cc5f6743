"""The events of `memory-scenario/1`, one model a kind by `do`: the schema, the check, the MCP tools' parameters.
Required keys, then optional ones, in the order the check's messages name them; absent but never null: no None."""

from __future__ import annotations

import functools
import operator
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.config import JsonDict

from ..rules.settings import SETTINGS
from ..rules.vocabulary import GRAPHS, READ_CALLS, STEP_KINDS, SURFACES, TURN_END_STATUSES, WORK_PREFIXES, WORLD_KINDS
from ..rules.weights import ORIGINS

#: The largest whole number a count holds: a 4-byte integer column on PostgreSQL, and the
#: same limit on SQLite so that a file runs alike on both (`MemoryProbes`, R21).
MAX_INTEGER = 2**31 - 1


#: The longest id, kind, relation or work name, in characters. These are indexed as given
#: (PostgreSQL's btree holds about 2,700 bytes an index row), and one limit holds on both backends;
#: names, values, excerpts and sources may be of any length (rules.name_key, rules.value_key).
MAX_NAME = 200


def one_of(choices: tuple[str, ...]) -> Any:
    """A Literal of these words, kept in the order the rules list them."""
    return Literal[choices]  # type: ignore[valid-type]


def absent(**kw: Any) -> Any:
    """The default of a key that may be left out but is never null (its type says what it holds)."""
    return Field(default=None, **kw)


if TYPE_CHECKING:  # to the type checker these are texts; to pydantic, the words the rules list
    Graph: TypeAlias = str
    OtherGraph: TypeAlias = str
    Origin: TypeAlias = str
    EndStatus: TypeAlias = str
    WorldKind: TypeAlias = str
    Surface: TypeAlias = str
    ReadCall: TypeAlias = str
    Match: TypeAlias = str
    StepKind: TypeAlias = str
else:
    Graph = one_of(GRAPHS)
    OtherGraph = one_of(tuple(g for g in GRAPHS if g != "world"))
    Origin = one_of(ORIGINS)
    EndStatus = one_of(TURN_END_STATUSES)
    WorldKind = one_of(WORLD_KINDS)
    Surface = one_of(SURFACES)
    ReadCall = one_of(READ_CALLS)
    Match = one_of(("exact", "words"))
    StepKind = one_of(STEP_KINDS)

#: The graph a fact reference names unless it says another.
DEFAULT_GRAPH = "world"

#: A character that is not blank in every engine that checks the published schema: `\S` alone differs between
#: Python's re (blank: also \x1c-\x1f), pydantic's Rust regex (\x85) and a client's ECMA-262 (\ufeff), so
#: the class names the union and all three agree (a name of only \x1f passed the server and failed a client's check).
BLANKS = r"\s\x1c-\x1f\x85\ufeff"
NOT_BLANK = f"[^{BLANKS}]"
#: A text with a character that is not white space.
Text = Annotated[str, Field(pattern=NOT_BLANK)]
#: An id, kind, relation or work name: a text of at most MAX_NAME characters.
Ident = Annotated[str, Field(pattern=NOT_BLANK, max_length=MAX_NAME)]
#: Nested work: workflow:NAME, agent:NAME or debater:NAME.
_WORK = "^(?:" + "|".join(map(re.escape, WORK_PREFIXES)) + f")[{BLANKS}]*{NOT_BLANK}"
Work = Annotated[str, Field(pattern=_WORK, max_length=MAX_NAME)]


class Closed(BaseModel):
    """An object with these keys and no others (an unknown key is an error at its path)."""

    model_config = ConfigDict(extra="forbid", strict=True)


def settings_model(name: str, doc: str | None = None, *, defaults: bool) -> Any:
    """The four settings as a model, each a boolean (R11 to R14): each with its default, or each required."""
    fields = {
        s.name: (bool, Field(s.default if defaults else ..., description=f"{s.rule}: {s.meaning}")) for s in SETTINGS
    }
    return create_model(name, __base__=Closed, __doc__=doc, **fields)  # type: ignore[call-overload]


class EntityEntry(Closed):
    """An entity: its name and kind; aliases optional."""

    name: Text
    kind: Ident
    aliases: list[Text] = Field(default_factory=list)


class WorldEntity(EntityEntry):
    """An entity of a World claim: its kind is one of the five World kinds."""

    kind: WorldKind  # type: ignore[assignment]


class Value(Closed):
    """A literal object of a fact."""

    value: str


class WorldClaim(Closed):
    """A claim about the World graph: its entities have World kinds."""

    graph: Literal["world"]
    subject: WorldEntity
    relation: Ident
    object: WorldEntity | Value


class OtherClaim(Closed):
    """A claim about a User or Flow graph: its entities may have any kind."""

    graph: OtherGraph
    subject: EntityEntry
    relation: Ident
    object: EntityEntry | Value


Claim = Annotated[WorldClaim | OtherClaim, Field(discriminator="graph")]


class FactRef(Closed):
    """A fact named by its subject, relation and object, as a claim names them."""

    subject: EntityEntry
    relation: Ident
    object: EntityEntry | Value


#: A record's `source`, required unless its origin is `person` (R24).
_SOURCE_UNLESS_PERSON: JsonDict = {
    "if": {"properties": {"origin": {"const": "person"}}},
    "else": {"required": ["source"]},
}


class StepRecord(Closed):
    """The record a step keeps when it runs: a record without `within`."""

    model_config = ConfigDict(json_schema_extra=_SOURCE_UNLESS_PERSON)

    origin: Origin
    claims: list[Claim]
    source: Text = absent(description="required unless the origin is person; a web source has a host (R25)")
    excerpt: str | None = None
    reliability: float | None = Field(default=None, gt=0.5, lt=1, description="R26")


class Request(Closed):
    """A request with claims of its own (a person's words, origin person)."""

    text: str
    claims: list[Claim] = Field(default_factory=list)


class ResolveArgs(Closed):
    """The arguments of GraphResolve."""

    name: Text
    kind: Ident = absent()
    match: Match = absent(description='"exact" (the default) or "words": every word begins a word of a name (R23)')


class ExpandArgs(Closed):
    """The arguments of GraphExpand."""

    entity: EntityEntry
    graph: Graph = DEFAULT_GRAPH
    relation: Ident = absent()


class SourceArgs(Closed):
    """The arguments of GraphSource."""

    fact: FactRef
    graph: Graph = DEFAULT_GRAPH


#: The arguments each read call takes (R23), in the order of READ_CALLS.
READ_ARGS: dict[str, type[Closed]] = dict(zip(READ_CALLS, (ResolveArgs, ExpandArgs, SourceArgs), strict=True))


def _args_fit_the_call(schema: JsonDict) -> None:
    """The schema of a read: `args` is the arguments of its `call` (one `if` a call)."""
    refs: list[JsonDict] = schema["properties"]["args"]["anyOf"]  # type: ignore[index, call-overload, assignment]
    schema["allOf"] = [
        {
            "if": {"properties": {"call": {"const": call}}, "required": ["call"]},
            "then": {"properties": {"args": dict(ref)}},
        }
        for call, ref in zip(READ_ARGS, refs, strict=True)
    ]


Note = absent(description="a text the Notebook shows beside the event")


class _InTurn(Closed):
    """An event in a turn: its `do` (each kind's Literal) and its `turn` come first."""

    do: str
    turn: Ident


class StartRun(Closed):
    """Starts a run (R11)."""

    do: Literal["start_run"]
    run: Ident
    org: Ident
    person: Ident
    workflow: Ident | None = None
    surface: Surface = "workflow"
    ephemeral: bool = False
    note: str = Note


class OpenTurn(Closed):
    """Opens a turn and takes its map (R18); `replaces` marks an earlier turn replaced (R3)."""

    do: Literal["open_turn"]
    run: Ident
    turn: Ident
    request: str | Request
    replaces: Ident | None = None
    note: str = Note


class RecordEvent(StepRecord, _InTurn):
    """Records evidence in an open turn (R24 to R26)."""

    do: Literal["record"]
    within: Work | None = None
    note: str = Note


class Step(_InTurn):
    """Runs a step of the run's workflow, skipped when a shortcut answers it (R22)."""

    do: Literal["step"]
    step: Ident
    record: StepRecord | None = None
    note: str = Note


class Call(_InTurn):
    """Opens nested work."""

    do: Literal["call"]
    work: Work
    note: str = Note


class Return(_InTurn):
    """Ends nested work (R5)."""

    do: Literal["return"]
    work: Work
    status: EndStatus
    note: str = Note


class Read(_InTurn):
    """A graph read (R19 to R23); its `args` fit its `call`."""

    model_config = ConfigDict(json_schema_extra=_args_fit_the_call)

    do: Literal["read"]
    call: ReadCall
    args: ResolveArgs | ExpandArgs | SourceArgs
    within: Work | None = None
    step: Ident | None = None
    note: str = Note


class EndTurn(_InTurn):
    """Ends a turn; a completed one teaches (R1, R7 to R10)."""

    do: Literal["end_turn"]
    status: EndStatus
    note: str = Note


class EndRun(Closed):
    """Ends a run and cancels its open turns; an ephemeral run is erased (R17)."""

    do: Literal["end_run"]
    run: Ident
    note: str = Note


class DeleteRun(Closed):
    """The run's person or the owner deletes the run (R29)."""

    do: Literal["delete_run"]
    run: Ident
    by: Ident
    note: str = Note


class DeleteAccount(Closed):
    """Deletes an account (R30)."""

    do: Literal["delete_account"]
    person: Ident
    note: str = Note


class SetSettings(Closed):
    """The owner changes settings (R15); unknown names and values are refusals, not errors of the file."""

    do: Literal["set_settings"]
    org: Ident
    by: Ident
    settings: dict[str, Any] = Field(
        description="setting names to true or false: " + ", ".join(s.name for s in SETTINGS)
    )
    note: str = Note


class DisputeEvent(Closed):
    """Disputes a fact (R28)."""

    do: Literal["dispute"]
    org: Ident
    by: Ident
    fact: FactRef
    graph: Graph = DEFAULT_GRAPH
    note: str = Note


class Retract(DisputeEvent):
    """Retracts a fact; the owner, for World facts (R28)."""

    do: Literal["retract"]  # type: ignore[assignment]


#: Every kind of event, by its `do`, in the order the format lists them (the order of the models above).
EVENT_MODELS: dict[str, type[Closed]] = {
    get_args(m.model_fields["do"].annotation)[0]: m
    for m in list(globals().values())
    if isinstance(m, type) and issubclass(m, Closed) and "do" in m.model_fields and m is not _InTurn
}

#: One event: the model its `do` names.
Event = Annotated[functools.reduce(operator.or_, EVENT_MODELS.values()), Field(discriminator="do")]  # type: ignore[valid-type]


@functools.cache
def keys(model: type[BaseModel]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A model's keys as the file writes them: the required ones, then the optional ones, in declared order."""
    fields = [(f.alias or name, f.is_required()) for name, f in model.model_fields.items()]
    return tuple(k for k, req in fields if req), tuple(k for k, req in fields if not req)
