"""Matching a name by its words (GraphResolve's `match: "words"`, R23): store/words.py finds, `matches` decides."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_WORD = re.compile(r"\w+")

#: The longest word the index keeps, in characters: a longer one is kept by its first WORD_CHARS
#: (PostgreSQL's btree holds about 2,700 bytes an index row); `matches` then decides on the whole.
WORD_CHARS = 100


def folded(text: str) -> str:
    """A text with its accents taken off (NFKD, combining marks dropped) and its case folded."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    """The words of a text as matching compares them, folded, each once, in order."""
    return list(dict.fromkeys(_WORD.findall(folded(text))))


def indexed(text: str) -> set[str]:
    """The words of a name or an alias as the word index keeps them (cut at WORD_CHARS)."""
    return {w[:WORD_CHARS] for w in words(text)}


def matches(name: str, texts: Iterable[str]) -> bool:
    """R23, words: each word of `name` begins a word of `texts` (a name, its aliases); no word matches nothing."""
    asked = words(name)
    have = {w for t in texts for w in words(t)}
    return bool(asked) and all(any(h.startswith(a) for h in have) for a in asked)
