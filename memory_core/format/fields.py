"""Checks of one field of a scenario document, each naming the path of what it refuses; the keys
of each object are its model's (format/events.py)."""

from __future__ import annotations

import math
import re
from typing import Any

from ..errors import FormatError
from ..plain import Obj
from ..rules.vocabulary import GRAPHS, WORK_PREFIXES, WORLD_KINDS
from ..rules.weights import ORIGINS, web_host
from .events import DEFAULT_GRAPH, MAX_NAME, READ_ARGS, Entity, FactRef, Value, WorldClaim, keys
from .events import MAX_INTEGER as MAX_INTEGER  # the format's limits, named here as they always were


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a text",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def obj(path: str, value: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> Obj:
    """An object with these keys and no others (an unknown key is an error at its path)."""
    if not isinstance(value, dict):
        raise FormatError(path, f"expected an object, found {_type_name(value)}")
    for key in value:
        if key not in required and key not in optional:
            allowed = ", ".join((*required, *optional))
            raise FormatError(_join(path, key), f"unknown key (allowed here: {allowed})")
    for key in required:
        if key not in value:
            raise FormatError(_join(path, key), "missing (required)")
    return value


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def text(path: str, value: Any, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise FormatError(path, f"expected a text, found {_type_name(value)}")
    if not empty and not value.strip():
        raise FormatError(path, "must not be empty")
    return value


def ident(path: str, value: Any) -> str:
    """An id, kind, relation or work name: a text of at most MAX_NAME characters."""
    name = text(path, value)
    if len(name) > MAX_NAME:
        raise FormatError(path, f"at most {MAX_NAME} characters here, found {len(name):,}")
    return name


def boolean(path: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise FormatError(path, f"expected true or false, found {_type_name(value)}")
    return value


def one_of(path: str, value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise FormatError(path, f"expected one of {', '.join(choices)}")
    return value


def items(path: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise FormatError(path, f"expected a list, found {_type_name(value)}")
    return value


def number(path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(path, f"expected a number, found {_type_name(value)}")
    try:
        out = float(value)
    except OverflowError:
        raise FormatError(path, "too large to be a number (the largest is about 1.8e308)") from None
    if not math.isfinite(out):
        raise FormatError(path, f"expected a finite number, found {value}")
    return out


def entity(path: str, value: Any, *, world: bool) -> Obj:
    e = obj(path, value, *keys(Entity))
    text(_join(path, "name"), e["name"])
    kind = ident(_join(path, "kind"), e["kind"])
    if world and kind not in WORLD_KINDS:
        raise FormatError(
            _join(path, "kind"), f"a world entity's kind is one of {', '.join(WORLD_KINDS)}, not {kind!r}"
        )
    for i, alias in enumerate(items(_join(path, "aliases"), e.get("aliases", []))):
        text(_join(_join(path, "aliases"), i), alias)
    return {"name": e["name"], "kind": kind, "aliases": list(e.get("aliases", []))}


def fact_object(path: str, value: Any, *, world: bool) -> Obj:
    if isinstance(value, dict) and "value" in value:
        o = obj(path, value, *keys(Value))
        return {"value": text(_join(path, "value"), o["value"], empty=True)}
    return entity(path, value, world=world)


def claim(path: str, value: Any) -> Obj:
    c = obj(path, value, *keys(WorldClaim))
    graph = one_of(_join(path, "graph"), c["graph"], GRAPHS)
    world = graph == "world"
    return {
        "graph": graph,
        "subject": entity(_join(path, "subject"), c["subject"], world=world),
        "relation": ident(_join(path, "relation"), c["relation"]),
        "object": fact_object(_join(path, "object"), c["object"], world=world),
    }


def claims(path: str, value: Any) -> list[Obj]:
    return [claim(_join(path, i), c) for i, c in enumerate(items(path, value))]


def record_fields(path: str, value: Obj, *, within: bool = True) -> Obj:
    """The fields of a record (R24 to R26), checked where they stand in `value`."""
    origin = one_of(_join(path, "origin"), value["origin"], ORIGINS)
    source = value.get("source")
    if origin != "person" and "source" not in value:
        raise FormatError(_join(path, "source"), f"missing (required for a {origin} record)")
    if source is not None or "source" in value:
        source = text(_join(path, "source"), source)
    if origin == "web" and web_host(source or "") is None:
        raise FormatError(_join(path, "source"), f"a web source needs a host, {source!r} has none (R25)")
    excerpt = value.get("excerpt")
    if excerpt is not None:
        text(_join(path, "excerpt"), excerpt, empty=True)
    reliability = value.get("reliability")
    if reliability is not None:
        r = number(_join(path, "reliability"), reliability)
        if not 0.5 < r < 1:
            raise FormatError(
                _join(path, "reliability"), f"must be strictly between 0.5 and 1, found {reliability} (R26)"
            )
        reliability = r
    nested = value.get("within")
    if nested is not None and within:
        work(_join(path, "within"), nested)
    return {
        "origin": origin,
        "source": source,
        "excerpt": excerpt,
        "reliability": reliability,
        "within": nested,
        "claims": claims(_join(path, "claims"), value["claims"]),
    }


def work(path: str, value: Any) -> str:
    name = ident(path, value)
    if not name.startswith(WORK_PREFIXES) or not name.split(":", 1)[1].strip():
        raise FormatError(path, "expected workflow:NAME, agent:NAME or debater:NAME")
    return name


def fact_ref(path: str, value: Any) -> Obj:
    f = obj(path, value, *keys(FactRef))
    return {
        "subject": entity(_join(path, "subject"), f["subject"], world=False),
        "relation": ident(_join(path, "relation"), f["relation"]),
        "object": fact_object(_join(path, "object"), f["object"], world=False),
    }


def _graph(path: str, value: Obj) -> str:
    return one_of(_join(path, "graph"), value.get("graph", DEFAULT_GRAPH), GRAPHS)


def read_args(path: str, call: str, value: Any) -> Obj:
    """A read's arguments must fit its call (R23); a misfit is an error of the file."""
    a = obj(path, value, *keys(READ_ARGS[call]))
    if call == "GraphResolve":
        out: Obj = {"name": text(_join(path, "name"), a["name"])}
        if "kind" in a:
            out["kind"] = ident(_join(path, "kind"), a["kind"])
        return out
    if call == "GraphExpand":
        out = {"entity": entity(_join(path, "entity"), a["entity"], world=False), "graph": _graph(path, a)}
        if "relation" in a:
            out["relation"] = ident(_join(path, "relation"), a["relation"])
        return out
    return {"fact": fact_ref(_join(path, "fact"), a["fact"]), "graph": _graph(path, a)}


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _escaped(text: str) -> str:
    """A text with its NUL characters and lone surrogates written as JSON escapes, for messages."""
    return _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _unstorable(found: str) -> str:
    if found == "\x00":
        return "a NUL character (\\u0000), which a database cannot store alike on SQLite and PostgreSQL"
    return f"a lone surrogate (\\u{ord(found):04x}), which is not a character and cannot be stored as UTF-8"


def storable(path: str, value: Any) -> None:
    """Every text in `value`, object keys included, can be stored as given on both backends."""
    if isinstance(value, str):
        found = _UNSTORABLE.search(value)
        if found:
            raise FormatError(path, f"this text holds {_unstorable(found.group())}")
    elif isinstance(value, dict):
        for key, item in value.items():
            place = _join(path, _escaped(key) if isinstance(key, str) else key)
            found = _UNSTORABLE.search(key) if isinstance(key, str) else None
            if found:
                raise FormatError(place, f"this key holds {_unstorable(found.group())}")
            storable(place, item)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            storable(_join(path, i), item)
