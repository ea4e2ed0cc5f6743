"""Text from memory, made safe for the pages' Markdown. Light on purpose: every page imports it (the
drawing's module, viz, imports networkx)."""

from __future__ import annotations

import html
import re

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:])")


def inert(text: object) -> str:
    """Text from memory made inert for Markdown that allows HTML: Markdown's punctuation backslashed
    (no link, image, emphasis, LaTeX or colour directive), then HTML's characters escaped."""
    return html.escape(_MARKDOWN.sub(r"\\\1", str(text)), quote=False)
