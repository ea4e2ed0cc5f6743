"""Tables drawn so nothing a reader needs is cut (#25): `wrapped` read whole (st.table), `grid` scrolled in place."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st
from streamlit.elements.lib.column_types import ColumnConfig

from memory_core.views import csv_safe
from memory_core.views.rulebook import CITATION
from memory_core.views.text import inert
from pages._words import cite, rule_titles

#: A status column's width in pixels: "retracted" whole, whichever rows the grid measured to size it.
STATUS_WIDTH = 80
#: A fact's numbers as the pages head them; other columns are capitalized (`headed`).
HEADERS = {"log_odds": "Log-odds L", "sources": "Independent sources", "erased": "Erased pointers"}
HEADERS |= {"contribution": "Contribution l", "weight_without": "Weight without it"}


def headed(table: pd.DataFrame, **names: str) -> pd.DataFrame:
    """A table's columns in words: `names`, else the facts' HEADERS, else capitalized."""
    return table.rename(columns=lambda c: names.get(c) or HEADERS.get(c) or c.capitalize())


def three_places(table: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """Number columns written to three decimals, as every weight and l the pages show."""
    return table.assign(**{c: table[c].map(lambda v: f"{v:.3f}") for c in columns})


def download(
    button: Callable[..., object], label: str, data: str | Callable[[], str], *, file_name: str, key: str
) -> None:
    """A download `button` (st's or a container's) for a CSV (cells safe in a spreadsheet) or JSON file."""
    mime, help_ = ("text/csv", csv_safe.HELP) if file_name.endswith(".csv") else ("application/json", None)
    button(label, data, file_name=file_name, mime=mime, key=key, help=help_)


def _text(column: pd.Series) -> bool:
    """Whether a column holds text (object or string dtype: pandas 3 infers `str` for text)."""
    return pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)


def _cell(value: object) -> object:
    if isinstance(value, str):
        return cite(inert(value))
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return value


def wrapped(table: pd.DataFrame, *, height: int | None = None, markdown: tuple[str, ...] = ()) -> None:
    """A table shown whole, cells wrapped: memory's text inert, rules linked, `markdown` columns as written."""
    shown = table.copy()
    for column in shown.columns:
        if column in markdown:
            shown[column] = shown[column].astype(object).map(lambda v: cite(v) if isinstance(v, str) else _cell(v))
        elif _text(shown[column]):
            shown[column] = shown[column].astype(object).map(_cell)
    shown.columns = [cite(inert(c)) for c in shown.columns]
    st.table(shown, hide_index=True, height=height or "content")


def rules_help(rules: list[str], before: str = "") -> str | None:
    """A tooltip saying each rule in its own words (its title in docs/rules.md)."""
    titles = rule_titles()
    said = [f"{r}: {titles[r]}" for r in rules if r in titles]
    if not said:
        return before or None
    return cite((before + "\n\n" if before else "") + "\n\n".join(said))


def _titled(config: dict[str, ColumnConfig], column: str, cells: pd.Series) -> None:
    """A column's header tooltip, unless it has its own: the rules its cells cite (R8c cites R8), in their words."""
    cited = {f"R{m.group(1)}" for v in cells.head(500) if isinstance(v, str) for m in CITATION.finditer(v)}
    said = rules_help(sorted(cited, key=lambda r: int(r[1:]))) if cited and _text(cells) else None
    if said is not None and not config.setdefault(column, st.column_config.Column()).get("help"):
        config[column]["help"] = said


def grid(
    table: pd.DataFrame,
    *,
    first: tuple[str, ...] = (),
    column_config: dict[str, ColumnConfig] | None = None,
    height: int | None = None,
) -> None:
    """st.dataframe, the `first` columns leading, a column citing a rule titled with its words (tooltip)."""
    config = dict(column_config or {})
    for column in table.columns:
        _titled(config, column, table[column])
    order = [c for c in first if c in table.columns] + [c for c in table.columns if c not in first]
    st.dataframe(table, hide_index=True, column_order=order, column_config=config, height=height or "auto")


def fact_grid(table: pd.DataFrame, *, height: int | None = None, more: dict[str, ColumnConfig] | None = None) -> None:
    """Facts in a grid, weight and status first: seen whole at any width, the rest scrolls (#25)."""
    weight = st.column_config.ProgressColumn("Weight", min_value=0, max_value=1, format="%.3f")
    config = {"Weight": weight, "Status": st.column_config.TextColumn(width=STATUS_WIDTH)} | (more or {})
    grid(table, first=("Weight", "Status"), column_config=config, height=height)
