"""Python sources as syntax trees, for the tests that read the code (imports, types, backends)."""

from __future__ import annotations

import ast
from pathlib import Path


def tree(source: str | Path) -> ast.Module:
    """`ast.parse` of a text or a file, tried again on SystemError: CPython 3.11 keeps one recursion
    counter for every thread's AST conversion (gh-106905), so a parse while another thread parses
    (a Streamlit script's magic, a server left by an earlier test in the same worker) can fail with
    "AST constructor recursion depth mismatch". The text is the same; a second parse is sound."""
    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    for _ in range(4):
        try:
            return ast.parse(text)
        except SystemError:
            continue
    return ast.parse(text)
