"""What the facade's reads return: TypedDicts mypy checks where read, held to every sample by tests/test_shapes.py."""

from __future__ import annotations

from typing import NotRequired

from pydantic import ConfigDict
from typing_extensions import TypedDict

from ..plain import Obj


class OrganizationPublic(TypedDict):
    id: str
    name: str
    owner: str | None


class Member(TypedDict):
    id: str
    name: str
    role: str


class PersonPublic(TypedDict):
    id: str
    name: str
    roles: dict[str, str]


class IdentityLinkPublic(TypedDict):
    """A person's sign-in identity in one organization (usecases/identities.py)."""

    id: int
    kind: str  # subject | email
    issuer: str  # "" for an email link
    key: str  # the subject, or the address case-folded
    identity: str  # in words
    person: str
    person_name: str
    org: str
    linked_at: str


class TurnStatus(TypedDict):
    id: str
    status: str


class RunBase(TypedDict):
    id: str
    person: str | None
    workflow: str | None
    surface: str
    ephemeral: bool
    requested_ephemeral: bool
    ended: bool


class RunRow(RunBase):
    """A run as the Runs page and the time control list it."""

    turns: list[TurnStatus]
    statuses: dict[str, int]


class Map(TypedDict):
    """R18: the map a turn takes: active facts, and entities of each kind."""

    facts: int
    kinds: dict[str, int]


class Taught(TypedDict):
    """The supports a completed turn added to each graph."""

    world: int
    user: int
    flow: int


class RecordPublic(TypedDict):
    id: str
    number: int
    origin: str
    source: str | None
    excerpt: str | None
    reliability: float | None
    nested: str | None  # the nested work it was made within (`agent:web_scout`)
    call: int | None  # which call of that work (0 first)
    claims: list[Obj]


class TurnBase(TypedDict):
    status: str
    map: Map
    probes_used: int
    steps: list[Obj]
    work: list[Obj]


class TurnDetail(TurnBase):
    id: str
    seq: int
    taught: Taught
    skipped: list[Obj]
    records: list[RecordPublic]


class RunDetail(RunBase):
    """One run with its turns and every record (R2: failed and cancelled turns' included)."""

    cap: int | None
    turns: list[TurnDetail]


class TurnView(TurnBase):
    """What a turn's instructions carry (R18) and its reads against its budget (R21)."""

    turn: str
    run: str
    org: str
    person: str | None
    paragraph: str
    cap: int | None


class FactWeighed(TypedDict):
    """What every read of a fact says of it: its id, relation, status, weight and independent sources (R25 to R28)."""

    id: int
    relation: str
    status: str
    weight: float
    sources: int


class FactPublic(FactWeighed):
    """A row of the Fact weights table."""

    graph: str
    owner: str
    subject: str
    subject_kind: str
    object: str
    object_kind: str | None
    log_odds: float
    supports: int
    disputes: int
    erased: int


class SourceRow(TypedDict):
    """One independent source of a fact (R25), its supports folded in (R26)."""

    origin: str
    key: str | None
    contribution: float
    reliability: float | None
    supports: int
    erased: int
    weight_without: float


class SupportBase(TypedDict):
    key: str | None
    origin: str
    contribution: float
    run: str | None
    turn: str | None
    record: str | None
    elsewhere: bool  # taught in another organization's run than the reader's: withheld (R23)


class SupportRow(SupportBase):
    """One support of a fact's breakdown."""

    source: str | None
    excerpt: str | None


class DisputeRow(TypedDict):
    by: str
    name: str | None  # the person's name; None once their account is erased (R30)
    contribution: float
    weight_without: float


class Breakdown(TypedDict):
    """A weight explained (R22, R25, R26): its sources, supports, disputes and the arithmetic."""

    fact: FactPublic
    sources: list[SourceRow]
    supports: list[SupportRow]
    disputes: list[DisputeRow]
    arithmetic: str
    min_weight: float
    margin: float | None
    margin_why: str


class MomentPublic(TypedDict):
    """R32: one moment of memory's history."""

    n: int
    at: str
    what: str
    org: str | None
    run: str | None
    turn: str | None
    person: str | None
    detail: str | None
    facts: list[int]


class SupportThen(SupportBase):
    id: int
    since: int
    until: int | None


class DisputeThen(TypedDict):
    by: str
    contribution: float
    since: int


class FactHistory(TypedDict):
    """A fact's supports and disputes through time, and the moments that changed it (R32)."""

    supports: list[SupportThen]
    disputes: list[DisputeThen]
    retracted_at: int | None
    moments: dict[int, MomentPublic]


class RunErasurePreview(TypedDict):
    run: str
    turns: int
    records: int
    flow_facts: int
    supports_kept: int


class AccountErasurePreview(TypedDict):
    person: str
    user_facts: int
    memberships: list[str]
    runs_kept: list[str]


class ErasureStatus(TypedDict):
    """R31: whether every deletion's text is out of the files yet (and the standby's: None, cannot be asked)."""

    bytes_gone: bool
    pending: int
    scrubbing: bool
    last_error: str | None
    standby_bytes_gone: NotRequired[bool | None]


class ReadServers(TypedDict):
    """Where reads come from (docs/scaling.md)."""

    standby: str | None
    primary_down: bool
    standby_down: bool
    served: dict[str, int]


class OrgMap(Map):
    paragraph: str


#: A settings change as audited (R15): who, when, which setting, from and to ("from" is a keyword,
#: so this one is written in the functional form).
AuditRow = TypedDict("AuditRow", {"by": str | None, "at": str, "setting": str, "from": bool, "to": bool})


class Counts(TypedDict):
    organization: int
    person: int
    run: int
    entity: int
    fact: int
    support: int


class DrawnEntity(TypedDict):
    name: str
    kind: str


class DrawnFact(FactWeighed):
    subject: DrawnEntity
    object: Obj
    supports: int
    disputes: int


class GraphJson(TypedDict):
    """A graph as the state format writes it; `total` with a limit, `id` on facts when asked."""

    entities: list[Obj]
    facts: list[Obj]
    total: NotRequired[int]


class FactThenPublic(FactWeighed):
    """A fact as it stood at a moment, as a diff compares it (views/history.diff): the state's with graph, owner, id."""

    graph: str
    owner: str
    subject: Obj
    object: Obj
    log_odds: float
    supports: list[Obj]
    disputes: list[Obj]


class TimelineRead(TypedDict):
    records: int  # the turn's records when it read: it came after them
    call: str
    outcome: str  # ok, or the refusal's reason


class TimelineTurn(TurnStatus):
    seq: int
    records: int
    request: str | None  # the person's request (its record #0)
    reads: list[TimelineRead]


class TimelineRun(TypedDict):
    id: str
    person: str | None
    ended: bool
    turns: list[TimelineTurn]


class Timeline(TypedDict):
    """Runs at a glance (#39.5): the newest runs, newest first, their newest turns, and how many there are."""

    runs: list[TimelineRun]
    runs_total: int
    turns_total: int  # of the runs shown


class KeptRead(TimelineRead):
    """A read of a turn as the recall trace keeps it (#38): who asked what, and what it was told or why it was refused."""

    id: int
    turn: str
    run: str
    moment: int
    nested: int | None
    step: str | None
    within: str | None
    args: Obj
    message: str | None
    result: list[Obj] | None
    near: list[Obj] | None


class FactReader(TypedDict):
    """A turn that read a fact (told it by GraphExpand, or asked GraphSource for it); being read never supports it."""

    run: str
    turn: str
    call: str
    weight: float | None


class LinkedEntity(TypedDict):
    """An entity of a graph's communities: its degree is the facts linking it to other entities."""

    id: int
    name: str
    degree: int


class EntityLinks(TypedDict):
    """A graph's linked entities and the facts between each pair (a, b, facts), a < b (views/communities.py)."""

    entities: list[LinkedEntity]
    links: list[tuple[int, int, int]]


class FocusEntity(DrawnEntity):
    """The entity a drawing is centred on (#39)."""

    id: int
    facts: int


class FocusPublic(TypedDict):
    """A focus and its neighbourhood's facts, as a drawing reads them (#39)."""

    focus: FocusEntity | None
    by: str  # how the focus was found: name, words, most connected, run (#39)
    facts: list[DrawnFact]


class FoundEntity(DrawnEntity):
    """An entity the Graphs page's search finds by words (#39)."""

    graph: str
    facts: int


# every shape forbids keys it does not name, set on each: a TypedDict inherits no class attribute
for _shape in [v for v in list(globals().values()) if isinstance(v, type) and issubclass(v, dict) and v is not dict]:
    _shape.__pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[attr-defined]
