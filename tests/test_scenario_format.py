"""The scenario format: a bad file is an error naming its place, and nothing runs."""

import copy
import json

import pytest
from helpers import HQ, scenario, start, taught_turn, web

from memory_core import FormatError, parse
from memory_core.format.scenario import to_json

GOOD = scenario([start(), *taught_turn("t1", web("https://a.example/", HQ))])


def broken(mutate):
    doc = copy.deepcopy(GOOD)
    mutate(doc)
    return json.dumps(doc)


def error_of(text):
    with pytest.raises(FormatError) as info:
        parse(text)
    return str(info.value)


def test_bad_json_names_line_and_column():
    assert error_of('{\n  "format": "memory-scenario/1",\n  "events": [,]\n}').startswith("line 3, column 14")


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.update(format="memory-scenario/2"), "format: expected 'memory-scenario/1'"),
        (lambda d: d.pop("events"), "events: missing (required)"),
        (lambda d: d.update(extra=1), "extra: unknown key"),
        (lambda d: d["events"].append({"do": "explode"}), "events[4].do: unknown event 'explode'"),
        (
            lambda d: d["events"][3].update(status="done"),
            "events[3].status: expected one of completed, failed, cancelled",
        ),
        (lambda d: d["events"][3].pop("status"), "events[3].status: missing (required)"),
        (lambda d: d["events"][2].update(reliability=1), "events[2].reliability: must be strictly between 0.5 and 1"),
        (lambda d: d["events"][2].update(reliability=0.5), "events[2].reliability"),
        (
            lambda d: d["events"][2]["claims"][0].update(relation="  "),
            "events[2].claims[0].relation: must not be empty",
        ),
        (
            lambda d: d["events"][2]["claims"][0]["object"].update(kind="preference"),
            "events[2].claims[0].object.kind: a world entity's kind is one of",
        ),
        (lambda d: d["events"][2].update(source="https:///x"), "events[2].source: a web source needs a host"),
        (lambda d: d["events"][2].update(colour="red"), "events[2].colour: unknown key"),
        (lambda d: d["events"][0].update(surface="app"), "events[0].surface: expected one of workflow, search"),
        (
            lambda d: d["workflows"][0].update(settings={"LearnFromUsers": False}),
            "workflows[0].settings: a workflow cannot declare",
        ),
        (lambda d: d["workflows"][0].update(LearnFromUsers=False), "R15"),
        (lambda d: d["workflows"][0].update(org="nowhere"), "workflows[0].org: no organization has the id 'nowhere'"),
        (lambda d: d["workflows"][0]["budget"].update(MemoryProbes=-1), "workflows[0].budget.MemoryProbes"),
        (lambda d: d["organizations"][0].update(owner="lee"), "organizations[0].owner"),
        (
            lambda d: d["organizations"][0].update(settings={"LearnFromUsers": "no"}),
            "organizations[0].settings.LearnFromUsers: LearnFromUsers must be true or false",
        ),
        (lambda d: d["people"][0]["memberships"].update(nowhere="member"), "people[0].memberships.nowhere"),
        (
            lambda d: d["events"].append({"do": "read", "turn": "t1", "call": "GraphExpand", "args": {"name": "x"}}),
            "events[4].args.name: unknown key",
        ),
        (lambda d: d["events"].append({"do": "call", "turn": "t1", "work": "robot:x"}), "events[4].work: expected"),
    ],
)
def test_malformed_input_names_place_and_problem(mutate, expected):
    assert expected in error_of(broken(mutate))


def test_setting_in_a_workflow_is_named_at_its_key():
    doc = copy.deepcopy(GOOD)
    doc["workflows"][0]["budget"]["NoMemoryShortcuts"] = True
    assert error_of(json.dumps(doc)).startswith("workflows[0].budget.NoMemoryShortcuts: ")


def test_duplicate_keys_and_bad_utf8_are_errors():
    assert "appears twice" in error_of('{"format": "memory-scenario/1", "events": [], "events": []}')
    with pytest.raises(FormatError, match="byte 42"):
        parse(b'{"format": "memory-scenario/1", "title": "\xff", "events": []}')


@pytest.mark.parametrize("source", ["not a url", "urn:isbn:123", "mailto:x@y.example", "https:///x"])
def test_r25_web_source_without_host_is_an_error(source):
    assert "needs a host" in error_of(broken(lambda d: d["events"][2].update(source=source)))


@pytest.mark.parametrize(
    "source", ["https://bücher.example/x", "https://example.com./a", "http://[fe80::1%25eth0]/", "https://☃.net/"]
)
def test_r25_valid_web_hosts_are_accepted(source):
    assert parse(broken(lambda d: d["events"][2].update(source=source))).events[2]["record"]["source"] == source


def test_round_trip_through_to_json():
    sc = parse(json.dumps(GOOD))
    assert parse(json.dumps(to_json(sc))) == sc


def test_set_settings_contents_are_checked_at_run_time_not_as_format():
    parse(
        broken(
            lambda d: d["events"].append({"do": "set_settings", "org": "acme", "by": "dana", "settings": {"Nope": 1}})
        )
    )


# --- what no database could hold alike, and JSON the format refuses (issue #13) --------------

GOOD_TEXT = json.dumps(GOOD, indent=2)


def with_text(place, value):
    """GOOD as text with `value` (JSON text) written at a place; the place's line is returned too."""
    marker = '"__here__"'
    doc = copy.deepcopy(GOOD)
    place(doc, "__here__")
    text = json.dumps(doc, indent=2)
    offset = text.index(marker)
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return text.replace(marker, value), f"line {line}, column {column}: "


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d, t: d["events"][1].update(request=t), "events[1].request"),
        (lambda d, t: d["events"][2].update(excerpt=t), "events[2].excerpt"),
        (lambda d, t: d["events"][2]["claims"][0]["subject"].update(name=t), "events[2].claims[0].subject.name"),
        (lambda d, t: d["organizations"][0].update(name=t), "organizations[0].name"),
        (lambda d, t: d["events"][2]["claims"][0]["object"].update(value=t), "events[2].claims[0].object.value"),
        (lambda d, t: d.update(title=t), "title"),
        (lambda d, t: d["events"][0].update(note=t), "events[0].note"),
    ],
)
@pytest.mark.parametrize(
    ("bad", "what"), [("\u0000", "a NUL character (\\u0000)"), ("\ud800", "a lone surrogate (\\ud800)")]
)
def test_nul_and_lone_surrogate_in_any_text_are_errors_at_its_path(mutate, path, bad, what):
    doc = copy.deepcopy(GOOD)
    if "object.value" in path:
        doc["events"][2]["claims"][0]["object"] = {"value": "x"}
    mutate(doc, f"a{bad}b")
    text = json.dumps(doc)  # written as the escape \u0000 or \ud800, as a file holds them
    assert error_of(text).startswith(f"{path}: this text holds {what}")


@pytest.mark.parametrize("bad", ["\u0000", "\udfff"])
def test_nul_and_lone_surrogate_in_a_key_are_errors_at_the_key(bad):
    doc = copy.deepcopy(GOOD)
    doc["organizations"][0]["settings"] = {f"Learn{bad}": True}
    shown = f"\\u{ord(bad):04x}"
    assert error_of(json.dumps(doc)).startswith(f"organizations[0].settings.Learn{shown}: this key holds")
    set_settings = {"do": "set_settings", "org": "acme", "by": "dana", "settings": {f"X{bad}": True}}
    doc = copy.deepcopy(GOOD)
    doc["events"].append(set_settings)
    assert error_of(json.dumps(doc)).startswith(f"events[4].settings.X{shown}: this key holds")


def test_a_text_may_hold_any_character_a_database_stores():
    doc = copy.deepcopy(GOOD)
    doc["events"][2]["excerpt"] = "tab\t, emoji \U0001f600, \u2028, \\u0000 written out, \ufffd"
    assert parse(json.dumps(doc)).events[2]["record"]["excerpt"] == doc["events"][2]["excerpt"]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize(
    "place",
    [
        lambda d, t: d["events"][2].update(reliability=t),
        lambda d, t: d["events"].append({"do": "set_settings", "org": "acme", "by": "dana", "settings": {"X": t}}),
        lambda d, t: d["workflows"][0]["budget"].update(MemoryProbes=t),
    ],
)
def test_nan_and_infinity_are_not_json(token, place):
    text, where = with_text(place, token)
    assert error_of(text) == f"{where}{token} is not a number in JSON; numbers are finite"


@pytest.mark.parametrize(
    "literal", ["1" + "0" * 400, "9" * 5000, "-" + "9" * 5000, "1e400", "-1e400", "1.5e309", "2" + "0" * 308]
)
@pytest.mark.parametrize(
    "place",
    [
        lambda d, t: d["events"][2].update(reliability=t),
        lambda d, t: d["workflows"][0]["steps"][3].update(min_weight=t),
        lambda d, t: d["workflows"][0]["budget"].update(MemoryProbes=t),
        lambda d, t: d.update(title=t),
    ],
)
def test_a_number_too_large_to_be_finite_is_an_error_at_its_line_and_column(literal, place):
    text, where = with_text(place, literal)
    assert error_of(text) == f"{where}this number is too large (numbers are finite, at most about 1.8e308)"


def test_numbers_within_range_still_check_by_their_field():
    text, _ = with_text(lambda d, t: d["events"][2].update(reliability=t), "1" + "0" * 300)
    assert error_of(text).startswith("events[2].reliability: must be strictly between 0.5 and 1")
    text, _ = with_text(lambda d, t: d["workflows"][0]["steps"][3].update(min_weight=t), "1e308")
    assert error_of(text).startswith("workflows[0].steps[3].min_weight: a weight is between 0 and 1")


@pytest.mark.parametrize(("probes", "ok"), [(2**31 - 1, True), (2**31, False), (2**63, False), (10**300, False)])
def test_memory_probes_fit_a_four_byte_column(probes, ok):
    doc = copy.deepcopy(GOOD)
    doc["workflows"][0]["budget"]["MemoryProbes"] = probes
    if ok:
        assert parse(json.dumps(doc)).workflows[0]["memory_probes"] == probes
    else:
        assert error_of(json.dumps(doc)) == (
            "workflows[0].budget.MemoryProbes: expected a whole number from 0 to 2,147,483,647 (R21)"
        )


def test_check_of_a_document_refuses_non_finite_and_huge_numbers_at_their_path():
    from memory_core.format.checks import check

    for value in (float("nan"), float("inf"), 10**400):
        doc = copy.deepcopy(GOOD)
        doc["events"][2]["reliability"] = value
        with pytest.raises(FormatError, match=r"^events\[2\]\.reliability: (expected a finite|too large)"):
            check(doc)


@pytest.mark.parametrize("depth", [990, 5_000, 200_000])
def test_deep_nesting_is_refused_at_the_line_and_column_where_the_limit_is_passed(depth):
    from memory_core.format.scenario import MAX_DEPTH

    text, where = with_text(lambda d, t: d["events"][0].update(note=t), "[" * depth + "]" * depth)
    line, column = where.removeprefix("line ").removesuffix(": ").split(", column ")
    # the note's value sits 3 levels down (file, events, event): level MAX_DEPTH + 1 opens at
    # bracket number MAX_DEPTH - 2 of the run.
    expected = f"line {line}, column {int(column) + MAX_DEPTH - 3}: nested more than {MAX_DEPTH} levels deep"
    assert error_of(text).startswith(expected)
    assert error_of(text.replace("]" * depth, "")).startswith(expected)  # unclosed too


def test_nesting_up_to_the_limit_is_read():
    from memory_core.format.scenario import MAX_DEPTH

    inner = MAX_DEPTH - 3
    args = {"X": json.loads("[" * (inner - 1) + "]" * (inner - 1))}  # set_settings values are run-time refusals
    doc = copy.deepcopy(GOOD)
    doc["events"].append({"do": "set_settings", "org": "acme", "by": "dana", "settings": args})
    parse(json.dumps(doc))
    args["X"] = [args["X"]]
    assert "nested more than" in error_of(json.dumps(doc))


def test_a_json_error_before_deep_nesting_is_the_one_reported():
    text = '{"format": "memory-scenario/1",\n "events": [,], "title": ' + "[" * 10_000
    assert error_of(text) == "line 2, column 13: not valid JSON: Expecting value"


def test_brackets_inside_texts_do_not_count_as_nesting():
    doc = copy.deepcopy(GOOD)
    doc["description"] = "[{" * 5000 + ' \\" ' + "]" * 3
    assert parse(json.dumps(doc)).description == doc["description"]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"format": "memory-scenario/1",\n  "events": [],\n  "events": []}', "line 3, column 3"),
        (
            '{"format": "memory-scenario/1", "events": [\n  {"do": "end_run", "run": "a",\n   "run": "b"}]}',
            "line 3, column 4",
        ),
        ('{"format": "memory-scenario/1", "events": [], "title": "x", "ti\\u0074le": "y"}', "line 1, column 61"),
    ],
)
def test_a_repeated_key_names_its_line_and_column(text, where):
    assert error_of(text).startswith(f"{where}: the key ")
    assert "appears twice in one object" in error_of(text)


def test_same_key_in_different_objects_is_fine():
    doc = copy.deepcopy(GOOD)
    doc["title"] = "a"
    parse(json.dumps(doc))


# --- the dashboard's notebook reads a file as replay does --------------------------------------


BAD_TEXTS = [
    ('{"format": "memory-scenario/1", "events": [], "events": []}', "line 1, column 47: the key 'events' appears"),
    ('{"format": "memory-scenario/1", "events": [], "title": NaN}', "line 1, column 56: NaN is not a number"),
    ('{"format": "memory-scenario/1", "events": [], "title": ' + "[" * 2000 + "]" * 2000 + "}", "line 1, column 119"),
    ('{"format": "memory-scenario/1", "events": [], "title": ' + "9" * 5000 + "}", "line 1, column 56: this number"),
    ('{"format": "memory-scenario/1", "events": [], "title": "\\u0000"}', "title: this text holds a NUL"),
]


@pytest.mark.parametrize(("text", "expected"), BAD_TEXTS)
def test_notebook_upload_refuses_what_replay_refuses_with_the_same_message(text, expected, tmp_path, monkeypatch):
    from memory_core.views import notebook

    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path / "nb"))
    assert error_of(text).startswith(expected)
    for given in (text, text.encode("utf-8")):
        with pytest.raises(FormatError) as info:
            notebook.load_text(given)
        assert str(info.value) == error_of(text)
    assert not (tmp_path / "nb").exists()  # refused before any scratch memory was made


def test_notebook_upload_of_a_good_file(tmp_path, monkeypatch):
    from memory_core.views import notebook

    monkeypatch.setenv("MEMORY_NOTEBOOK_DIR", str(tmp_path / "nb"))
    nb = notebook.load_text(GOOD_TEXT.encode("utf-8"))
    assert nb.scenario == to_json(parse(GOOD_TEXT))


def test_memory_probes_at_the_limit_are_stored_and_counted_on_the_backend():
    """The largest MemoryProbes the check lets through fits the column on SQLite and PostgreSQL."""
    from backend import fresh_service

    from memory_core import replay

    doc = copy.deepcopy(GOOD)
    doc["workflows"][0]["budget"]["MemoryProbes"] = 2**31 - 1
    doc["events"] = [
        start(workflow="research"),
        {"do": "open_turn", "run": "r1", "turn": "t1", "request": "Where is Globex?"},
        {"do": "read", "turn": "t1", "call": "GraphResolve", "args": {"name": "Globex"}},
    ]
    engine, _ = replay(parse(json.dumps(doc)), fresh_service())
    state = engine.state()
    assert not state["refused"]
    assert state["runs"]["r1"]["turns"]["t1"]["probes_used"] == 1


def test_a_bad_escape_before_deep_nesting_is_the_json_error_reported():
    text = '{"format": "memory-scenario/1", "a\\q": ' + "[" * 3000
    assert error_of(text) == "line 1, column 35: not valid JSON: Invalid \\escape"
