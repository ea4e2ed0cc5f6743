"""Words the pages share: plurals, on/off, rules cited and linked to the Rules page, refusals said."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from memory_core import MemoryCoreError, Refusal
from memory_core.views import rulebook, text
from memory_core.views.text import inert

DOCS = Path(__file__).resolve().parent.parent / "docs"
SAMPLES = DOCS.parent / "sample_data"


plural = text.plural  # one way to count in words, shared with the views
probes_used = text.probes_used


def on_off(value: bool) -> str:
    return "on" if value else "off"


def yes_no(value: bool) -> str:
    return "yes" if value else "no"


@st.cache_data(show_spinner=False)
def _rule_titles(mtime: float) -> dict[str, str]:
    return rulebook.titles(rulebook.parse((DOCS / "rules.md").read_text(encoding="utf-8")))


def rule_titles() -> dict[str, str]:
    """Each rule's title by number ("R7"), as docs/rules.md says it now."""
    return _rule_titles((DOCS / "rules.md").stat().st_mtime)


def cite(markdown: str) -> str:
    """A page's Markdown with every rule it cites linked to the Rules page, its title on hover."""
    return rulebook.link_rules(markdown, rule_titles())


def markdown(text: str) -> None:
    """Markdown whose rules cited are linked to the Rules page."""
    st.markdown(cite(text))


def caption(text: str) -> None:
    """A caption whose rules cited are linked to the Rules page."""
    st.caption(cite(text))


def refused(reason: str | None, message: str | None) -> str:
    """A refusal as every page says it (views/text.refused), the rule it cites linked."""
    return cite(text.refused(reason, message))


def refusal(exc: MemoryCoreError) -> str:
    """A refusal as a page says it: the sentence, the rule linked, the reason code."""
    return refused(exc.reason, exc.message) if isinstance(exc, Refusal) else f"Not done: {inert(exc)}"
