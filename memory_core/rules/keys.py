"""Entity identity: the shown spelling and the indexed keys of names and literal values."""

from __future__ import annotations

import functools
import hashlib
import re

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


def entity_key(entity_id: int) -> str:
    """The object key of a fact whose object is an entity: `e:` and the entity's id (a value's is
    value_key's, so the two never collide in the unique index)."""
    return f"e:{entity_id}"
