"""Rules: docs/rules.md (and docs/decisions.md's rows it links) as it stands, searchable; `?rule=R7` shows R7 first."""

from __future__ import annotations

import streamlit as st

from memory_core.views import rulebook
from memory_core.views.rulebook import Rule
from memory_core.views.text import inert
from pages._words import DOCS, plural

book = rulebook.parse((DOCS / "rules.md").read_text(encoding="utf-8"))
decisions = rulebook.decision_rows((DOCS / "decisions.md").read_text(encoding="utf-8"))


def links_to_decisions(links: tuple[tuple[str, str], ...]) -> None:
    if not links:
        return
    with st.expander("How this implementation decides (docs/decisions.md)"):
        for label, anchor in links:
            about, decision = decisions.get(anchor, ("", "(this row is missing from docs/decisions.md)"))
            st.markdown(f"**{label}** ({rulebook.for_page(about)}): {rulebook.for_page(decision)}")


def show(rule: Rule, *, anchor: bool = True) -> None:
    st.subheader(f"{rule.number} · {rule.title}", anchor=rule.anchor if anchor else False)
    st.markdown(rulebook.for_page(rule.body))
    links_to_decisions(rule.decisions)


st.title("Rules")
st.caption(
    "The rules R1 to R34 that memory follows, from docs/rules.md as it stands. Code, messages and "
    "the other pages cite them by number; link one here with ?rule=R7."
)

asked = st.query_params.get("rule", "")
query = st.text_input(
    "Search the rules", key="rules_query", placeholder="a word (ephemeral, not_owner) or a number (R8, 22)"
)

if asked:
    number = rulebook.rule_number(asked)
    linked = book.find(number) if number else None
    if linked is None:
        st.warning(f"There is no rule “{inert(asked)}”: the rules are R1 to R34.")
    else:
        with st.container(border=True):
            st.caption(f"The rule you followed a link to ({asked}), in its section {linked.section}:")
            show(linked, anchor=False)

if query.strip():
    found = rulebook.search(book, query)
    sections = [s for s in book.sections if rulebook.section_matches(s, query)]
    st.caption(f"{plural(len(found), 'rule')} found for {query.strip()!r}.")
    for rule in found:
        show(rule)
    for section in sections:
        st.header(section.title)
        st.markdown(rulebook.for_page(section.intro))
    if not found and not sections:
        st.info("No rule holds all these words. Try fewer words, or a rule's number.")
else:
    st.markdown(rulebook.for_page(book.preamble))
    for section in book.sections:
        st.header(section.title)
        if section.intro:
            st.markdown(rulebook.for_page(section.intro))
        links_to_decisions(section.decisions)
        for rule in section.rules:
            show(rule)
