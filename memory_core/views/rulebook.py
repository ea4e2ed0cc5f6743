"""The rulebook: docs/rules.md read as sections (`## `) and rules (`### <a id="r7"></a>R7 · Title`), each with
its "In decisions.md:" links, for the Rules page (tests/test_docs.py checks the shape)."""

from __future__ import annotations

import re
from dataclasses import dataclass

RULE_HEADING = re.compile(r'^### <a id="(r\d+)"></a>(R\d+) · (.+)$')
#: A rule's or a section's "In decisions.md:" paragraph (to its first blank line), and the line break after it.
POINTER = re.compile(r"^In decisions\.md:.*(?:\n(?![^\S\n]*$).*)*\n?", re.MULTILINE)
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
DECISION_ROW = re.compile(r'^\| <a id="(d-[a-z0-9-]+)"></a>(.*?) \| (.*) \|$')
RULE_NUMBER = re.compile(r"^\s*R?(\d+)([a-d])?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Rule:
    number: str  # "R7"
    title: str
    section: str
    body: str  # Markdown, without its heading and its pointer to decisions.md
    decisions: tuple[tuple[str, str], ...]  # (label, anchor in decisions.md)

    @property
    def anchor(self) -> str:
        return self.number.lower()

    @property
    def text(self) -> str:
        return f"{self.number} {self.title}\n{self.body}"


@dataclass(frozen=True)
class Section:
    title: str
    intro: str  # Markdown before the section's first rule
    decisions: tuple[tuple[str, str], ...]
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class Rulebook:
    preamble: str
    sections: tuple[Section, ...]

    @property
    def rules(self) -> list[Rule]:
        return [r for s in self.sections for r in s.rules]

    def find(self, number: str) -> Rule | None:
        return next((r for r in self.rules if r.number == number), None)


def _split_pointer(lines: list[str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A block's Markdown without its "In decisions.md:" paragraph, and that paragraph's links."""
    text = "\n".join(lines)
    pointer = " ".join(POINTER.findall(text))
    links = [(label, to.split("#", 1)[1]) for label, to in LINK.findall(pointer) if to.startswith("decisions.md#")]
    return POINTER.sub("", text).strip(), tuple(links)


def parse(text: str) -> Rulebook:
    """docs/rules.md as a preamble (the title line left out) and its sections of rules."""
    head, *parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    if stray := next(filter(None, map(RULE_HEADING.match, head.splitlines())), None):
        raise ValueError(f"{stray.group(2)} stands outside any section")
    preamble = "\n".join(line for line in head.splitlines() if not line.startswith("# ")).strip()
    return Rulebook(
        preamble, tuple(_section(t.strip(), b.splitlines()) for t, b in zip(parts[::2], parts[1::2], strict=True))
    )


def _section(title: str, lines: list[str]) -> Section:
    """A section of docs/rules.md, its introduction and each rule split from their pointers."""
    intro: list[str] = []
    rules: list[tuple[str, str, list[str]]] = []
    for line in lines:
        if rule := RULE_HEADING.match(line):
            if rule.group(1) != rule.group(2).lower():
                raise ValueError(f"{rule.group(2)}'s anchor is {rule.group(1)!r}")
            rules.append((rule.group(2), rule.group(3).strip(), []))
        else:
            (rules[-1][2] if rules else intro).append(line)
    parsed = tuple(Rule(number, rule_title, title, *_split_pointer(body)) for number, rule_title, body in rules)
    return Section(title, *_split_pointer(intro), parsed)


def rule_number(query: str) -> str | None:
    """The rule a query names ("R7", "r7", "7"; a part like "R8c" names its rule R8), else None."""
    m = RULE_NUMBER.match(query or "")
    return f"R{int(m.group(1))}" if m else None


def search(book: Rulebook, query: str) -> list[Rule]:
    """The rules a query finds: a number's rule then those citing it; else those holding every word."""
    if number := rule_number(query):  # then those citing it, or a part of it (R8a cites R8)
        cites = re.compile(rf"\b{number}[a-d]?\b")
        found = (r for r in book.rules if r.number == number or cites.search(r.text))
        return sorted(found, key=lambda r: r.number != number)
    words = query.casefold().split()
    return [r for r in book.rules if all(w in r.text.casefold() for w in words)]


def section_matches(section: Section, query: str) -> bool:
    """Whether a section's own text (a definition, a table) holds every word of a query."""
    words = query.casefold().split()
    text = f"{section.title}\n{section.intro}".casefold()
    return bool(words) and rule_number(query) is None and all(w in text for w in words)


def decision_rows(text: str) -> dict[str, tuple[str, str]]:
    """docs/decisions.md's rows by anchor: (what the row is about, the decision)."""
    rows = filter(None, map(DECISION_ROW.match, text.splitlines()))
    return {m.group(1): (m.group(2).strip(), m.group(3).strip()) for m in rows}


def for_page(markdown: str) -> str:
    """Docs' Markdown for a page: links to rules open the Rules page (`?rule=R7`), other docs named by file."""

    def link(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        if target.startswith(("http://", "https://")):
            return m.group(0)
        anchor = target.split("#", 1)[1] if "#" in target else ""
        if target.startswith(("#", "rules.md#")) and re.fullmatch(r"r\d+", anchor):
            return f"[{label}](?rule={anchor.upper()})"
        path = target.split("#", 1)[0] or "rules.md"
        return f"{label} (`docs/{path}`)" if label != path else f"`docs/{path}`"

    return LINK.sub(link, markdown)


#: A rule as pages cite it (R7, R8c), not inside a word, a link's label or target, or code.
CITATION = re.compile(r"(?<![\w\[/=#?.-])R([1-9]\d?)([a-d])?(?![\w\]])")
_CODE_OR_LINK = re.compile(r"(`[^`]*`|\[[^\]]*\]\([^)]*\))")


def link_rules(markdown: str, titles: dict[str, str], page: str = "rules") -> str:
    """Each rule a text cites made a link to the Rules page with its title on hover (code and links left)."""

    def link(m: re.Match[str]) -> str:
        number = f"R{m.group(1)}"
        title = titles.get(number)
        if title is None:
            return m.group(0)
        hover = f"{number}: {title}".replace('"', "'")
        return f'[{m.group(0)}]({page}?rule={number} "{hover}")'

    return "".join(p if i % 2 else CITATION.sub(link, p) for i, p in enumerate(_CODE_OR_LINK.split(markdown)))


def titles(book: Rulebook) -> dict[str, str]:
    """Each rule's title by number, for `link_rules`."""
    return {r.number: r.title for r in book.rules}
