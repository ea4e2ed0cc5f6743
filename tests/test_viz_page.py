"""The Graphs page says how its focus was found (#39), as the focus read tells it (`by`): by name (nothing to
say), by words, or, with no name or none matching, the most connected entity."""

from __future__ import annotations

from test_dashboard import _dispose_engines, app, demo_db, ok, page, plain  # noqa: F401  (fixtures)


def said(at) -> list[str]:
    return [plain(c.value) for c in at.caption if "Opened on" in c.value or "matches" in c.value]


def test_the_page_says_how_the_focus_was_found(app):  # noqa: F811  (the fixture imported)
    at = page(app, "graphs")
    assert said(at) == ["Opened on **Acme Robotics**, the most connected entity here. Search above for another entity."]
    for asked, words in (
        ("ROBOT", "Opened on **Acme Robotics**, found by the words “ROBOT”. "),
        (
            "no such thing at all",
            "No entity here matches “no such thing at all”: opened on **Acme Robotics**, the most connected entity here. ",
        ),
        ("Nordic Circuits", None),
    ):
        at.session_state["g_focus"] = asked
        at.run()
        ok(at)
        assert said(at) == ([words.strip()] if words else []), asked
