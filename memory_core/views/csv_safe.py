"""CSV a spreadsheet opens as data, never as formulas (#40, OWASP's CSV injection): what HELP tells its reader."""

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
    """A cell as the CSV writes it: text a spreadsheet would take for a formula after a `'`, anything else as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(table: pd.DataFrame) -> str:
    """The table as CSV without its index, its header and every cell through `cell`."""
    return table.map(cell).rename(columns=cell).to_csv(index=False)
