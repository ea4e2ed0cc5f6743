"""Pure decisions of the memory rules. Inputs in, a decision out with the rule that decided it.

No clock, no session, no mutation: the service applies these decisions and the dashboard
explains them with the same rule numbers.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .weights import at_least

WORLD_KINDS = ("person", "place", "organization", "event", "idea")
GRAPHS = ("world", "user", "flow")
TURN_END_STATUSES = ("completed", "failed", "cancelled")
WORK_STATUSES = TURN_END_STATUSES
SURFACES = ("workflow", "search")
STEP_KINDS = ("model", "tool", "person")
WORK_PREFIXES = ("workflow:", "agent:", "debater:")
READ_CALLS = ("GraphResolve", "GraphExpand", "GraphSource")
DEFAULT_MIN_WEIGHT = 0.9  # R22


@dataclass(frozen=True)
class Setting:
    name: str
    column: str
    default: bool
    rule: str
    meaning: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "AllowEphemeralRuns",
        "allow_ephemeral_runs",
        False,
        "R11",
        "Whether a run may be ephemeral at all. Off, a run asked for as ephemeral is stored as permanent.",
    ),
    Setting(
        "LearnFromEphemeralRuns",
        "learn_from_ephemeral_runs",
        True,
        "R12",
        "Whether an ephemeral run teaches the World graph. Permanent runs always do.",
    ),
    Setting(
        "LearnFromUsers",
        "learn_from_users",
        True,
        "R13",
        "Whether a person's own words (the request that opened a turn, their answers) may become world knowledge.",
    ),
    Setting(
        "NoMemoryShortcuts",
        "no_memory_shortcuts",
        False,
        "R14",
        "Whether every turn runs all its steps, even where memory already holds a strong enough answer.",
    ),
)
SETTING_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
DEFAULT_SETTINGS: dict[str, bool] = {s.name: s.default for s in SETTINGS}


# --- entity identity -------------------------------------------------------------------

_SPACING = re.compile(r"\s+")


def display_name(name: str) -> str:
    """The spelling an entity is shown with: trimmed (rules.md, Entity identity)."""
    return name.strip()


# A key is indexed (entity identity, aliases, a fact's literal object), and PostgreSQL's btree
# holds at most about 2,700 bytes an index row: a longer text is indexed by its digest, on both
# backends alike, so a pasted page of text is stored as given and found again (issue #13).
KEY_BYTES = 512


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1 << 16)
def name_key(name: str) -> str:
    """Identity of a name: case-folded, trimmed, inner spacing made one space (pure, so cached:
    a turn's teaching asks for the same names many times). A key longer than KEY_BYTES is its
    first 64 characters, two spaces and its SHA-256: a folded name never holds two spaces in a
    row, so no short name's key can equal a long one's."""
    key = _SPACING.sub(" ", name.strip()).casefold()
    if len(key.encode("utf-8")) <= KEY_BYTES:
        return key
    return f"{key[:64]}  sha256:{_digest(key)}"


def value_key(value: str) -> str:
    """The indexed key of a literal object: `v:` and the value as given, or `h:` and its SHA-256
    when it is longer than KEY_BYTES (values are compared exactly, not folded)."""
    if len(value.encode("utf-8")) <= KEY_BYTES:
        return "v:" + value
    return "h:" + _digest(value)


# --- settings (R15) ----------------------------------------------------------------------


def settings_problem(changes: Mapping[str, object]) -> str | None:
    """Why a settings change is invalid as a whole (R15), or None when every key and value is good."""
    for name, value in changes.items():
        if name not in SETTING_BY_NAME:
            known = ", ".join(SETTING_BY_NAME)
            return f"unknown setting {name!r} (the settings are {known}) (R15)"
        if not isinstance(value, bool):
            return f"{name} must be true or false, not {value!r} (R15)"
    return None


# --- runs (R11, R17) ---------------------------------------------------------------------


def stored_ephemeral(*, requested: bool, surface: str, allow_ephemeral_runs: bool) -> bool:
    """R11: off, a run asked for as ephemeral is stored as permanent; Search runs may always be."""
    return requested and (allow_ephemeral_runs or surface == "search")


# --- turn state machine (R1, R3) ---------------------------------------------------------

_TRANSITIONS = {
    "open": {"completed", "failed", "cancelled", "replaced"},
    "completed": {"replaced"},
}


def may_transition(current: str, new: str) -> bool:
    """The turn state machine: open to an end, open or completed to replaced, nothing else."""
    return new in _TRANSITIONS.get(current, set())


# --- what a completed turn writes (R5, R7 to R10) -----------------------------------------


@dataclass(frozen=True)
class RunFacts:
    """What R8 and R9 ask of a run and its organization when a turn's teaching is written (R16)."""

    surface: str
    ephemeral: bool
    person_erased: bool
    learn_from_ephemeral_runs: bool
    learn_from_users: bool


def record_teaches(nested_status: str | None) -> bool:
    """R5: a record of nested work that failed or was cancelled contributes nothing."""
    return nested_status is None or nested_status == "completed"


def world_skip_rule(run: RunFacts, *, persons_words: bool) -> str | None:
    """R8, reported as R10 says: the first of R8b, R8a, R8d, R8c that applies, or None."""
    search = run.surface == "search"
    if run.ephemeral and search:
        return "R8b"
    if run.ephemeral and not run.learn_from_ephemeral_runs:
        return "R8a"
    if persons_words and search:
        return "R8d"
    if persons_words and not run.learn_from_users:
        return "R8c"
    return None


def user_skip_rule(run: RunFacts, *, persons_words: bool) -> str | None:
    """R9 (and R30): why a user claim is kept out of the person's User graph, or None."""
    if run.person_erased:
        return "R30"
    if run.ephemeral or (persons_words and run.surface == "search"):
        return "R9"
    return None


def skip_rule(graph: str, run: RunFacts, *, origin: str) -> str | None:
    """Which rule keeps a claim targeted at `graph` out of it; Flow keeps everything (R7)."""
    persons_words = origin == "person"
    if graph == "world":
        return world_skip_rule(run, persons_words=persons_words)
    if graph == "user":
        return user_skip_rule(run, persons_words=persons_words)
    return None


# --- reads (R4, R19, R21) ----------------------------------------------------------------


def read_offered(*, within: str | None, step: Mapping[str, object] | None) -> bool:
    """R4, R19: reads go to the turn's own model and to model steps admitting calls, never nested work."""
    if within is not None:
        return False
    if step is None:
        return True
    return step.get("kind") == "model" and bool(step.get("admits_calls", False))


def budget_allows(*, used: int, cap: int | None) -> bool:
    """R21: each call counts one; no budget, no cap."""
    return cap is None or used < cap


def shortcut_allowed(*, no_memory_shortcuts: bool, weight: float, min_weight: float, status: str) -> bool:
    """R22: an active answer at or above the step's minimum weight, shortcuts not switched off (R14)."""
    return not no_memory_shortcuts and status == "active" and at_least(weight, min_weight)


# --- the map (R18) -----------------------------------------------------------------------

_KIND_PLURALS = {
    "person": "people",
    "place": "places",
    "organization": "organizations",
    "event": "events",
    "idea": "ideas",
}


def _count(n: int, kind: str) -> str:
    return f"{n} {kind if n == 1 else _KIND_PLURALS.get(kind, kind + 's')}"


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def map_paragraph(org_name: str, kinds: Mapping[str, int], facts: int) -> str:
    """The sentence a root turn's instructions carry about the organization's World graph (R18)."""
    owner = possessive(org_name)
    parts = [_count(kinds[k], k) for k in sorted(kinds)]
    if not parts and not facts:
        return f"{owner} world graph is empty: it holds no entities and no facts yet."
    fact_text = f"{facts} fact" if facts == 1 else f"{facts} facts"
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{owner} world graph holds {listed}, and {fact_text}."


#: One sentence per rule a claim or an action can be stopped by, for explanations.
RULE_TEXT: dict[str, str] = {
    "R2": "A failed or cancelled turn teaches nothing to any graph; its records stay as evidence.",
    "R3": "A replaced turn teaches nothing; what it taught was withdrawn.",
    "R5": "Nested work that failed or was cancelled contributes nothing.",
    "R8a": "The run is ephemeral and LearnFromEphemeralRuns is off, so it teaches no World knowledge.",
    "R8b": "An ephemeral Search run teaches no World knowledge, whatever the settings.",
    "R8c": "A person's own words, and LearnFromUsers is off, so they do not become World knowledge.",
    "R8d": "A person's own words in a Search run never become World knowledge.",
    "R9": "Kept out of the User graph: the run is ephemeral, or a person's own words in a Search run.",
    "R11": "AllowEphemeralRuns is off, so the run asked for as ephemeral is stored as permanent.",
    "R30": "The run's person deleted their account, so nothing goes to a User graph.",
}
