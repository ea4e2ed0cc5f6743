"""The docs state the product's rules and formats in the repository, and stay true to it.

docs/rules.md holds the rules R1 to R34, each under an anchor (docs/rules.md#r7); every rule the
code or the dashboard cites is there; no doc points outside the repository; every link between
the docs lands; and the example in docs/formats.md replays to the state printed beside it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory_core import MemoryService, make_engine, parse, replay
from memory_core.views import rulebook

pytestmark = pytest.mark.backend_free  # no test database: the same on every backend

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RULES = DOCS / "rules.md"
CITED = re.compile(r"\bR\d+[a-d]?\b")  # a rule as code and pages cite it: R7, R8c


def test_rules_have_exactly_the_anchors_r1_to_r34_in_order():
    text = RULES.read_text(encoding="utf-8")
    expected = [f"r{n}" for n in range(1, 35)]
    assert re.findall(r'<a id="([^"]+)"></a>', text) == expected
    headings = re.findall(r"^### .*$", text, flags=re.M)
    assert [rulebook.RULE_HEADING.match(h).group(2) for h in headings] == [a.upper() for a in expected]
    assert [r.number for r in rulebook.parse(text).rules] == [a.upper() for a in expected]


def test_rules_are_grouped_as_documented():
    sections = rulebook.parse(RULES.read_text(encoding="utf-8")).sections
    groups = {s.title: [r.number for r in s.rules] for s in sections}
    assert groups["Settings"] == ["R11", "R12", "R13", "R14", "R15", "R16"]
    assert groups["History"] == ["R32", "R33", "R34"]
    history = next(s for s in sections if s.title == "History")
    assert "planned" not in history.intro.casefold() and "d-history" in history.intro  # built: where to see it
    assert "Overview" in history.intro and "--at" in history.intro


def _doc_files() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted(p for p in DOCS.rglob("*") if p.is_file()),
        *sorted((ROOT / "pages").rglob("*.py")),
    ]


def test_no_doc_points_outside_the_repository():
    for path in _doc_files():
        data = path.read_bytes()
        for outside in (b"../shared", b"shared/spec"):
            assert outside not in data, f"{path.relative_to(ROOT)} mentions {outside.decode()}"


def test_every_rule_cited_in_code_and_pages_is_in_the_rules():
    text = RULES.read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="r(\d+)"></a>', text))
    stated = set(CITED.findall(text))
    for path in [*sorted((ROOT / "memory_core").rglob("*.py")), *sorted((ROOT / "pages").rglob("*.py"))]:
        for cited in set(CITED.findall(path.read_text(encoding="utf-8"))):
            number = re.match(r"R(\d+)", cited)
            assert number and number.group(1) in anchors, f"{path.relative_to(ROOT)} cites {cited}, not in rules.md"
            assert cited in stated, f"{path.relative_to(ROOT)} cites {cited}, which rules.md never names"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    ids = set(re.findall(r'<a (?:id|name)="([^"]+)"></a>', text))
    return ids | {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def test_links_between_docs_land():
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        for label, target in re.findall(r"\[([^\]]*)\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("?"):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            assert dest.is_file(), f"{path.name}: [{label}]({target}) names no file"
            if anchor:
                assert anchor in _anchors(dest), f"{path.name}: [{label}]({target}) names no anchor there"


def test_every_rule_with_choices_links_rows_that_exist():
    book = rulebook.parse(RULES.read_text(encoding="utf-8"))
    rows = rulebook.decision_rows((DOCS / "decisions.md").read_text(encoding="utf-8"))
    linked = {a for r in book.rules for _, a in r.decisions} | {a for s in book.sections for _, a in s.decisions}
    assert linked <= set(rows)
    for anchor, (about, _) in rows.items():
        for cited in CITED.findall(about):  # a row about a rule is linked from that rule
            rule = book.find(cited)
            assert rule is not None and anchor in {a for _, a in rule.decisions}, f"{cited} does not link {anchor}"


def test_formats_example_replays_to_the_state_shown():
    blocks = re.findall(r"```json\n(.*?)```", (DOCS / "formats.md").read_text(encoding="utf-8"), flags=re.S)
    scenario, state = blocks[0], json.loads(blocks[1])
    engine, stopped = replay(parse(scenario), MemoryService(make_engine("sqlite://")))
    assert stopped is None
    assert engine.state() == state


def test_formats_name_every_event_and_refusal_the_code_knows():
    from memory_core.format.events import EVENT_MODELS
    from memory_core.format.fields import MAX_INTEGER, MAX_NAME
    from memory_core.format.scenario import MAX_DEPTH

    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    for do in EVENT_MODELS:
        assert f"| `{do}` |" in text, do
    for limit in (f"{MAX_DEPTH} levels", f"{MAX_INTEGER:,}", f"{MAX_NAME} characters"):
        assert limit in text, limit
    reasons = set(re.findall(r"`((?:not|unknown|nested|budget|invalid|duplicate|turn|run)_[a-z_]+)`", text))
    table = RULES.read_text(encoding="utf-8").split("## Refusals, by reason", 1)[1]
    assert reasons and all(f"`{r}`" in table for r in reasons)
