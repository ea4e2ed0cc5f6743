"""CSV that a spreadsheet opens as data, never as formulas (issue #40).

Excel and LibreOffice take a cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return
as a formula, and an agent writes the names, values, sources and excerpts a CSV holds. Such a cell
is written after a single quote, as OWASP advises against CSV injection. A true number stays as it
is, negative ones included (a log-odds of -1.329 is data, and a spreadsheet must still add it up);
text is neutralised whatever it looks like (`-2+3`, and `-40` too: memory's values are text). The
JSON downloads are exact and never come here."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: What a spreadsheet reads as the start of a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

#: The download buttons' help: what a reader of the CSV finds changed, and where the exact text is.
HELP = (
    "A cell of text that begins with =, +, -, @, a tab or a carriage return starts with ' in the CSV, "
    "so a spreadsheet shows it as text and runs no formula; numbers stay numbers, negative ones too. "
    "The JSON is exact."
)


def cell(value: object) -> object:
    """A cell as the CSV writes it: text a spreadsheet would take for a formula with `'` before it;
    anything else (a number, negative or not, an empty cell) as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(table: pd.DataFrame) -> str:
    """The table as CSV without its index, its header and every cell through `cell`."""
    return table.map(cell).rename(columns=cell).to_csv(index=False)
