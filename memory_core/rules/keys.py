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


def sha256_hex(text: str) -> str:
    """A text's SHA-256, in hex: a long key's (below), an API token's (the only form in which one is kept)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1 << 16)
def name_key(name: str) -> str:
    """A name case-folded, trimmed, spacing one space; past KEY_BYTES: 64 characters, two spaces and its SHA-256."""
    key = _SPACING.sub(" ", name.strip()).casefold()
    if len(key.encode("utf-8")) <= KEY_BYTES:
        return key
    return f"{key[:64]}  sha256:{sha256_hex(key)}"


def value_key(value: str) -> str:
    """A literal object's key: `v:` and the value as given, or past KEY_BYTES `h:` and its SHA-256."""
    if len(value.encode("utf-8")) <= KEY_BYTES:
        return "v:" + value
    return "h:" + sha256_hex(value)


def entity_key(entity_id: int) -> str:
    """The object key of a fact whose object is an entity: `e:` and its id (never a value_key)."""
    return f"e:{entity_id}"
