"""Memory's text made safe for the pages' Markdown, counts said with their word (#25); light: every page imports it."""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable
from typing import TypeAlias

from ..rules.wording import plural

#: A JSON value, as a notebook keeps a cell's result and a read's answer.
JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:])")


#: A word joiner (U+2060, invisible, not a word character) before the colon, dot or at sign keeps GitHub's
#: autolinks from finding `http://`, `www.` and `name@host` once Markdown's escapes are read.
_AUTOLINK = re.compile(r"(?i)(?<=https)(?=\\:)|(?<=http)(?=\\:)|(?<=www)(?=\\\.)|(?=@)")
JOINER = "\u2060"


def inert(text: object) -> str:
    """Text made inert for Markdown with HTML (#26): punctuation backslashed, HTML escaped, autolinks broken."""
    return _AUTOLINK.sub(JOINER, html.escape(_MARKDOWN.sub(r"\\\1", str(text)), quote=False))


def probes_used(used: int, cap: int | None) -> str:
    """A turn's reads against its workflow's budget (R21): `2 of 5 probes used`."""
    if cap is None:
        return f"{plural(used, 'probe')} used (the workflow sets no cap)"
    return f"{used} of {plural(cap, 'probe')} used"


def refused(reason: str | None, message: str | None) -> str:
    """A refusal as every page says it: the sentence, then the reason as a code span (#25)."""
    code = (reason or "").replace("`", "'")  # a code span shows its text as it is
    return f"Refused: {inert(message or '')} (`{code}`)"


#: The order statuses are said in.
STATUSES = ("active", "disputed", "retracted")


def by_status(statuses: Iterable[str]) -> str:
    """`172 active, 4 disputed and 1 retracted` (a status none holds is left out)."""
    n = Counter(statuses)
    parts = [f"{n[s]:,} {s}" for s in (*STATUSES, *sorted(set(n) - set(STATUSES))) if n[s]]
    return " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts) or "none"


def world_table(statuses: list[str], total: int | None, on_map: int) -> str:
    """What a table of World facts lists beside the map's count of active facts (R18): every status."""
    listed = len(statuses)
    if total is not None and total > listed:
        head = f"The {listed:,} heaviest of {plural(total, 'World fact')}, of every status"
    elif total is None and listed:
        head = f"The {listed:,} heaviest World facts, of every status"
    else:
        head = f"{plural(listed, 'World fact')}, of every status: {by_status(statuses)}"
    return (
        f"{head}. The map above counts only the {plural(on_map, 'active fact')} (R18); disputed and retracted "
        "facts are not on it (R28)."
    )
