"""The scenario format: a bad file is an error naming its place, and nothing runs."""

import copy
import json

import pytest
from helpers import HQ, scenario, start, taught_turn, web

from memory_core import FormatError, parse
from memory_core.scenario import to_json

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
