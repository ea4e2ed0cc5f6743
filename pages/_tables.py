"""Tables the pages share, drawn so nothing a reader needs is cut (#25):

- `wrapped`: a table of few rows whose text is read (a cause, an excerpt, a claim, why a weight
  moved): every cell wraps and is shown whole (st.table), its text from memory inert, and every
  rule it cites a link to the Rules page, its title on hover.
- `grid`: a table of many rows (st.dataframe, scrolled and sorted in place): its key columns come
  first, so they are seen at any width, and a column whose cells cite rules says those rules in
  their own words in its header's tooltip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from memory_core.views.rulebook import CITATION
from memory_core.views.text import inert
from pages._words import cite, rule_titles

#: A status column's width in pixels: "retracted" whole, whichever rows the grid measured to size it.
STATUS_WIDTH = 80


def _text(column: pd.Series) -> bool:
    """Whether a column holds text (object or string dtype: pandas 3 infers `str` for text)."""
    return pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)


#: Where a long word may break: after these, and every LONG characters of a word without them.
_BREAK = re.compile(r"([/:\-_.#@,;=&?+|\\])(?=\S)")
LONG = 16
ZWSP = "\u200b"  # a zero-width space: a place to break a line, invisible, not copied as a space by the eye


def breakable(text: str) -> str:
    """A text whose words longer than LONG may break inside (after their punctuation, or every
    LONG characters), so a table of ids and addresses wraps within its frame; short words stay
    whole (#25)."""

    def word(w: str) -> str:
        if len(w) <= LONG:
            return w
        marked = _BREAK.sub(r"\1" + ZWSP, w)
        return ZWSP.join(
            part if len(part) <= LONG else ZWSP.join(part[i : i + LONG] for i in range(0, len(part), LONG))
            for part in marked.split(ZWSP)
        )

    return " ".join(word(w) for w in text.split(" "))


def _cell(value: object) -> object:
    if isinstance(value, str):
        return cite(inert(breakable(value)))
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return value


def wrapped(table: pd.DataFrame, *, height: int | None = None, markdown: tuple[str, ...] = ()) -> None:
    """A table whose every cell wraps and is shown whole, as text (st.table renders Markdown: text
    from memory is made inert; the rules cited are linked). The `markdown` columns the page wrote
    as Markdown itself (a link to another page, its text made inert): shown as they are, rules
    linked. `height` scrolls a long one in place, its header kept."""
    shown = table.copy()
    for column in shown.columns:
        if column in markdown:
            shown[column] = shown[column].astype(object).map(lambda v: cite(v) if isinstance(v, str) else _cell(v))
        elif _text(shown[column]):
            shown[column] = shown[column].astype(object).map(_cell)
    shown.columns = [cite(inert(c)) for c in shown.columns]
    st.table(shown, hide_index=True, height=height or "content")


def rules_in(values: Iterable[object]) -> list[str]:
    """The rules some cells cite (R8c cites R8), in order of number, each once."""
    found = {f"R{m.group(1)}" for v in values if isinstance(v, str) for m in CITATION.finditer(v)}
    return sorted(found, key=lambda r: int(r[1:]))


def rules_help(rules: list[str], before: str = "") -> str | None:
    """A tooltip saying each rule in its own words (its title in docs/rules.md)."""
    titles = rule_titles()
    said = [f"{r}: {titles[r]}" for r in rules if r in titles]
    if not said:
        return before or None
    return cite((before + "\n\n" if before else "") + "\n\n".join(said))


def _rules_said(cells: pd.Series) -> str | None:
    """A column's header tooltip: the rules its text cells cite, in their own words (None: it cites none)."""
    rules = rules_in(cells.head(500)) if _text(cells) else None
    return rules_help(rules) if rules else None


def _titled(config: dict[str, Any], column: str, said: str | None) -> None:
    """A column's config given the rules' words as its tooltip, unless it has one of its own."""
    given = config.get(column)
    if said is None:
        return
    if given is None:
        config[column] = st.column_config.Column(help=said)
    elif isinstance(given, dict) and not given.get("help"):
        given["help"] = said


def grid(
    table: pd.DataFrame,
    *,
    first: tuple[str, ...] = (),
    column_config: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """st.dataframe with the `first` columns leading (seen whole at any width) and each column
    whose cells cite a rule titled with that rule's own words (its header's tooltip)."""
    config: dict[str, Any] = dict(column_config or {})
    for column in table.columns:
        _titled(config, column, _rules_said(table[column]))
    order = [c for c in first if c in table.columns] + [c for c in table.columns if c not in first]
    kwargs.setdefault("hide_index", True)
    kwargs.setdefault("width", "stretch")
    return st.dataframe(table, column_order=order, column_config=config, **kwargs)
