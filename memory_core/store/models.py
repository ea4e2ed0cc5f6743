"""Every table of memory_core. A graph is addressed by (graph, owner): `world` + organization id, `user` + person id,
`flow` + run id. No fact or support row holds a record's excerpt or a request's text (R24)."""

from typing import Any

from sqlalchemy import JSON, Column, Index, String, UniqueConstraint
from sqlmodel import Field, SQLModel


class Numbered(SQLModel):
    """A table's first column: an id the database numbers."""

    id: int | None = Field(default=None, primary_key=True)


class Given(SQLModel):
    """A table's first column: an id its maker gives (an organization's, a run's, a record's `TURN#N`, ...)."""

    id: str = Field(primary_key=True)


class Organization(Given, table=True):
    seq: int = 0
    name: str
    allow_ephemeral_runs: bool = False  # R11
    learn_from_ephemeral_runs: bool = True  # R12
    learn_from_users: bool = True  # R13
    no_memory_shortcuts: bool = False  # R14
    since: int = 0  # R32: the moment it was made (0: before history was kept)


class Person(Given, table=True):
    seq: int = 0
    name: str
    since: int = 0  # R32


class Membership(SQLModel, table=True):
    person_id: str = Field(foreign_key="person.id", primary_key=True)
    org_id: str = Field(foreign_key="organization.id", primary_key=True, index=True)
    role: str  # owner | member


class Workflow(Given, table=True):
    org_id: str = Field(foreign_key="organization.id", index=True)
    memory_probes: int | None = None  # Budget.MemoryProbes, None: no cap (R21)
    steps: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class Run(Given, table=True):
    seq: int = Field(index=True)
    org_id: str = Field(foreign_key="organization.id", index=True)
    person_id: str | None = Field(default=None, foreign_key="person.id", index=True)
    workflow_id: str | None = Field(default=None, foreign_key="workflow.id")
    surface: str = "workflow"
    requested_ephemeral: bool = False
    ephemeral: bool = False
    ended: bool = False
    started_at: int = 0  # R32: the moment it started, and the one it ended
    ended_at: int | None = None
    session_id: str | None = Field(default=None, index=True)  # the MCP session that started it (agentsession)


class Turn(Given, table=True):
    seq: int = Field(index=True)
    run_id: str = Field(foreign_key="run.id", index=True)
    status: str = "open"
    next_record: int = 1
    probes_used: int = 0
    taught_world: int = 0
    taught_user: int = 0
    taught_flow: int = 0
    map: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    skipped: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    steps: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    opened_at: int = 0  # R32: the moment it opened; what changed after is in turnlog
    # Its reads' ids run from first_read to last_read (others' may fall between): a turn's reads are found by that
    # range, so a read writes no index entry (#38, B10). None: no read yet.
    first_read: int | None = None
    last_read: int | None = None


class NestedWork(Numbered, table=True):
    """One call of nested work inside a turn (R4, R5). The same work may be called again."""

    turn_id: str = Field(foreign_key="turn.id", index=True)
    work: str
    status: str = "open"


class Record(Given, table=True):
    """Run evidence: the only copy of an excerpt or a request's text (R24)."""

    run_id: str = Field(foreign_key="run.id", index=True)
    turn_id: str = Field(foreign_key="turn.id", index=True)
    number: int
    origin: str
    source: str | None = None
    excerpt: str | None = None
    reliability: float | None = None
    nested_id: int | None = Field(default=None, foreign_key="nestedwork.id")
    claims: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class TurnRead(Numbered, table=True):
    """A graph read of a turn (the recall trace, #38): arguments, answer or refusal; erased with its run (R29, R30)."""

    turn_id: str  # found through the turn's first_read..last_read, erased with it (reads.erase), no index to write
    moment: int
    records: int
    nested_id: int | None = None
    call: str
    step: str | None = None
    within: str | None = None
    args: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    outcome: str  # ok, or the refusal's reason
    message: str | None = None
    result: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    near: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(JSON, nullable=True))  # R23, #38


class Entity(Numbered, table=True):
    __table_args__ = (
        UniqueConstraint("graph", "owner", "kind", "key", name="uq_entity_identity"),
        Index("ix_entity_graph_key", "graph", "owner", "key"),  # name look-ups whatever the kind
    )
    graph: str
    owner: str
    kind: str
    key: str  # the case-folded, spacing-folded name: the identity with kind
    name: str
    aliases: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    active_facts: int = 0  # facts served that name this entity: the map counts these (R18)
    since: int = 0  # R32: the moment it was made, and each alias's (in the order of `aliases`)
    alias_since: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class Alias(SQLModel, table=True):
    """An alias's identity key, so GraphResolve finds entities by alias through an index (R23)."""

    entity_id: int = Field(foreign_key="entity.id", primary_key=True)
    key: str = Field(primary_key=True, index=True)


class Word(SQLModel, table=True):
    """A folded word of an entity's name or alias, for GraphResolve's `match: "words"` (prefixes by code point)."""

    graph: str = Field(primary_key=True)
    owner: str = Field(primary_key=True)
    word: str = Field(sa_column=Column(String().with_variant(String(collation="C"), "postgresql"), primary_key=True))
    entity_id: int = Field(foreign_key="entity.id", ondelete="CASCADE", primary_key=True, index=True)


class Fact(Numbered, table=True):
    __table_args__ = (UniqueConstraint("graph", "owner", "subject_id", "relation", "object_key", name="uq_fact"),)
    graph: str
    owner: str
    subject_id: int = Field(foreign_key="entity.id")
    relation: str
    object_id: int | None = Field(default=None, foreign_key="entity.id")
    value: str | None = None  # a literal object; exactly one of object_id, value
    object_key: str  # "e:<entity id>", or rules.value_key of the value: NULLs never collide in a unique index
    retracted: bool = False
    status: str = "active"
    log_odds: float = 0.0
    weight: float = 0.5
    sources: int = 0
    since: int = 0  # R32: the moment it was made, and the one it was retracted (R28)
    retracted_at: int | None = None


Index("ix_fact_graph_status", Fact.graph, Fact.owner, Fact.status)  # type: ignore[arg-type]
# A fact's ends, with every column GraphExpand filters on: SQLite's planner, given equal
# matches, would otherwise walk the whole graph's active facts (ix_fact_graph_status) to find
# an entity's few (measured: 48 ms a call at 112k facts, issue #8, B2).
Index("ix_fact_subject", Fact.subject_id, Fact.graph, Fact.owner, Fact.status)  # type: ignore[arg-type]
Index("ix_fact_object", Fact.object_id, Fact.graph, Fact.owner, Fact.status)  # type: ignore[arg-type]


class Support(Numbered, table=True):
    """A record's vote for a fact: key, origin and frozen contribution, and a pointer (R24 to R26)."""

    fact_id: int = Field(foreign_key="fact.id", index=True)
    key: str
    origin: str
    contribution: float
    run_id: str | None = Field(default=None, index=True)
    turn_id: str | None = Field(default=None, index=True)
    record_id: str | None = None
    # R23, evidence elsewhere: a User fact's support keeps the organization of its run when the run is
    # erased (R29), so a read from another organization still hides its key. Null otherwise.
    erased_run_org: str | None = None
    since: int = 0  # R32: the moment it was made


class Dispute(Numbered, table=True):
    __table_args__ = (UniqueConstraint("fact_id", "by", name="uq_dispute_person"),)
    fact_id: int = Field(foreign_key="fact.id", index=True)
    by: str | None = Field(default=None, index=True)  # null once the disputer's account is deleted; the vote stays
    contribution: float
    since: int = 0  # R32


class SettingsAudit(Numbered, table=True):
    org_id: str = Field(index=True)
    by: str | None = None
    at: str
    setting: str
    old: bool
    new: bool
    moment: int = 0  # R32: the moment of the change


class UsedId(SQLModel, table=True):
    """Run and turn ids ever used, erased ones included, for `duplicate_id`: a keyed digest each (bulk.py, R33)."""

    kind: str = Field(primary_key=True)  # run | turn
    id: str = Field(primary_key=True)  # HMAC-SHA256 of kind and id under IdKey.key, in hex


class IdKey(SQLModel, table=True):
    """The database's key for used ids' digests (store/bulk.py): one row, made on first use."""

    id: int = Field(default=1, primary_key=True)
    key: str  # 256 random bits, in hex


class ApiToken(Numbered, table=True):
    """A bearer token of one person in one organization; only its SHA-256 is stored."""

    token_hash: str = Field(unique=True, index=True)
    person_id: str = Field(foreign_key="person.id", index=True)
    org_id: str = Field(foreign_key="organization.id")
    created_at: str
    revoked: bool = False


class IdentityLink(Numbered, table=True):
    """Who signs in to the dashboard as a person in one organization: a provider's subject, or an address it verified (R30)."""

    __table_args__ = (UniqueConstraint("kind", "issuer", "key", "org_id", name="uq_identitylink"),)
    kind: str  # subject | email
    issuer: str  # without a final slash; "" for an email link
    key: str  # the subject as given, or the address case-folded
    person_id: str = Field(foreign_key="person.id", index=True)
    org_id: str = Field(foreign_key="organization.id", index=True)
    created_at: str


class AgentServer(Given, table=True):
    """An MCP server process (agents/), noting `seen_at` while it serves, so a killed one's sessions are told apart."""

    host: str
    pid: int
    transport: str  # stdio | http | memory
    started_at: float  # wall-clock seconds
    seen_at: float
    stopped: bool = False


class AgentSession(Given, table=True):
    """One MCP session: the runs it started name it (`run.session_id`). No person's id is kept (R30)."""

    server_id: str = Field(index=True)
    client: str  # the name and version the client gave, as the Runs page shows it
    transport: str
    opened_at: float
    ended_at: float | None = None
    ended_why: str | None = None  # closed | deleted | idle | stopped | server gone


class MapCount(SQLModel, table=True):
    """The map of a World graph as counters (R18): entities of active facts per kind, and active facts (kind "")."""

    org_id: str = Field(primary_key=True)
    kind: str = Field(primary_key=True)
    n: int = 0


class ScrubDue(Numbered, table=True):
    """A deletion whose erased text may still be in the files (R31), removed by the scrub; it names nothing erased."""

    reason: str  # delete_run | end_run | delete_account


class ErasedAccount(SQLModel, table=True):
    """R30: one row per deleted account, in deletion order: `person:erased:N` replaces the person's id on supports."""

    n: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})


# --- History (R32 to R34): each row's moment (`since`, ...), a moment per use case that changed memory, and the
# "gone" rows a later use case took away without erasing (R3), with the moment they went; erasure deletes them (R33).


class Moment(Numbered, table=True):
    """R32: one use case that changed memory, numbered in the order they committed (the clock) (R33)."""

    at: str  # UTC, ISO 8601
    what: str  # see store/moments.WHAT
    org_id: str | None = Field(default=None, index=True)
    run_id: str | None = Field(default=None, index=True)
    turn_id: str | None = Field(default=None, index=True)
    person_id: str | None = Field(default=None, index=True)
    detail: str | None = None  # the turn's status, the settings changed, ...
    facts: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class TurnLog(SQLModel, table=True):
    """A turn as the state shows it after each moment that changed it after it opened (R33: erased with its run)."""

    turn_id: str = Field(primary_key=True)
    moment: int = Field(primary_key=True)
    status: str
    taught_world: int = 0
    taught_user: int = 0
    taught_flow: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    steps: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))


class MapLog(SQLModel, table=True):
    """R18 through time: an organization's map counter (kind; "" counts active facts) after each moment (R34)."""

    org_id: str = Field(primary_key=True)
    kind: str = Field(primary_key=True)
    moment: int = Field(primary_key=True)
    n: int


class SupportGone(SQLModel, table=True):
    """A support a replacement withdrew (R3), as it was, with the moment it went (`until`) (R33)."""

    gid: int | None = Field(default=None, primary_key=True)
    id: int
    fact_id: int = Field(index=True)
    graph: str
    owner: str
    key: str
    origin: str
    contribution: float
    run_id: str | None = Field(default=None, index=True)
    turn_id: str | None = None
    record_id: str | None = None
    erased_run_org: str | None = None
    since: int
    until: int = Field(index=True)


class GoneBase(SQLModel):
    """The first columns of a fact's or an entity's row kept in history (R32): its key, id, graph and owner (R33)."""

    gid: int | None = Field(default=None, primary_key=True)
    id: int = Field(index=True)
    graph: str
    owner: str


class FactGone(GoneBase, table=True):
    """A fact left with no support by a replacement (R3), as it was, with the moment it went."""

    __table_args__ = (Index("ix_factgone_graph", "graph", "owner", "since"),)
    subject_id: int
    relation: str
    object_id: int | None = None
    value: str | None = None
    retracted: bool = False
    since: int
    retracted_at: int | None = None
    until: int = Field(index=True)


class DisputeGone(SQLModel, table=True):
    """A dispute of a fact that went (R3): it went with it."""

    gid: int | None = Field(default=None, primary_key=True)
    fact_id: int = Field(index=True)
    graph: str
    owner: str
    by: str | None = Field(default=None, index=True)
    contribution: float
    since: int
    until: int


class EntityGone(GoneBase, table=True):
    """An entity left in no fact by a replacement (R3), as it was, with the moment it went."""

    kind: str
    name: str
    aliases: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    alias_since: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    since: int
    until: int
