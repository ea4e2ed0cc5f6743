"""Sentences the rules say: the map paragraph (R18), possessives, each rule's one-line text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 support`, `2 supports`: a count with its word, never `support(s)`."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def _count(n: int, kind: str) -> str:
    return plural(n, kind, "people" if kind == "person" else None)  # every other kind takes an s


def fact_label(f: Mapping[str, Any]) -> str:
    """A fact or claim as people read it: `subject —relation→ object` (an entity's name or the value)."""
    o = f["object"]
    return f"{f['subject']['name']} —{f['relation']}→ {o.get('name', o.get('value'))}"


def claim_label(claim: Mapping[str, Any]) -> str:
    """A claim with the graph it targets: `subject —relation→ object (world)`."""
    return f"{fact_label(claim)} ({claim['graph']})"


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def map_paragraph(org_name: str, kinds: Mapping[str, int], facts: int) -> str:
    """The sentence a root turn's instructions carry about the organization's World graph (R18)."""
    owner = possessive(org_name)
    parts = [_count(kinds[k], k) for k in sorted(kinds)]
    if not parts and not facts:
        return f"{owner} world graph is empty: it holds no entities and no facts yet."
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{owner} world graph holds {listed}, and {_count(facts, 'fact')}."


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
