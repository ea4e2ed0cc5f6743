"""Reading and writing `memory-scenario/1`: strict JSON in, a checked Scenario out, and back to JSON."""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import FormatError
from ..plain import Obj
from .checks import Scenario, check
from .documents import SCENARIO_FORMAT

#: JSON nested deeper than this is refused before it is decoded. The format's deepest place
#: (`events[i].request.claims[j].subject.aliases[k]`) is 8 levels down.
MAX_DEPTH = 64


#: The largest number JSON holds as a finite one; a JSON string; what is not a bracket; how a
#: bracket steps the depth; a JSON token of any kind; the colon that makes a string a key.
_LARGEST = int(sys.float_info.max)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_TOKEN = re.compile(
    r'[ \t\r\n]*(?:(?P<text>"[^"\\]*(?:\\.[^"\\]*)*")|(?P<open>[\[{])|(?P<close>[\]}])|(?P<word>-?[A-Za-z]+)'
    r"|(?P<number>-?[0-9][0-9.eE+-]*)|[,:])",
    re.S,
)
_COLON = re.compile(r"[ \t\r\n]*:")


class _Refused(Exception):
    """A hook of the JSON decoder met something the format refuses; its place is found afterwards."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen = dict(pairs)
    if len(seen) != len(pairs):
        raise _Refused
    return seen


def _no_constant(name: str) -> Any:
    raise _Refused


def _integer(literal: str) -> int:
    if len(literal) > 310:  # more digits than any finite number has (and than int() converts)
        raise _Refused
    value = int(literal)
    if abs(value) > _LARGEST:
        raise _Refused
    return value


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused
    return value


def _first_problem(source: str) -> tuple[int, str] | None:
    """(offset, problem) of the first place too deep, NaN/Infinity, a number too large, a key twice; None: bad JSON."""
    keys: list[set[str] | None] = []  # one an open object (its keys so far) or list (None)
    for kind, token, at, end in _tokens(source):
        seen = keys[-1] if keys else None
        try:
            if kind == "text" and seen is not None and _COLON.match(source, end):
                problem = _repeated(json.loads(token), seen)
            else:
                problem = _nesting(kind, token, keys) or _not_a_number(kind, token)
        except json.JSONDecodeError:
            return None  # bad JSON here: the decoder names it
        if problem:
            return at, problem
    return None


def _tokens(source: str) -> Iterator[tuple[str, str, int, int]]:
    """The text's JSON tokens, in order: (kind, token, offset, offset after it)."""
    pos = 0
    while (m := _TOKEN.match(source, pos)) is not None and m.end() > pos:
        pos = m.end()
        if m.lastgroup is not None:
            yield m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup), pos


def _repeated(key: str, seen: set[str]) -> str | None:
    """What the format says of a key already in its object (and the key seen now)."""
    if key in seen:
        return f"the key {key!r} appears twice in one object; a typo never passes silently"
    seen.add(key)
    return None


def _nesting(kind: str, token: str, keys: list[set[str] | None]) -> str | None:
    """A bracket opened (past the depth limit: what the format says) or closed, followed in `keys`."""
    if kind == "open":
        if len(keys) >= MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep; the format needs far fewer"
        keys.append(set() if token == "{" else None)
    elif kind == "close" and keys:
        keys.pop()
    return None


def _not_a_number(kind: str, token: str) -> str | None:
    """What the format says of a word or a number JSON does not hold as a finite number."""
    if kind == "word" and token in ("NaN", "Infinity", "-Infinity"):
        return f"{token} is not a number in JSON; numbers are finite"
    if kind == "number":
        try:
            _float(token) if any(c in token for c in ".eE") else _integer(token)
        except (_Refused, ValueError):
            return "this number is too large (numbers are finite, at most about 1.8e308)"
    return None


def _at(source: str, offset: int, problem: str) -> FormatError:
    line = source.count("\n", 0, offset) + 1
    column = offset - source.rfind("\n", 0, offset)
    return FormatError(f"line {line}, column {column}", problem)


def decode(source: str | bytes) -> Any:
    """A scenario's JSON: UTF-8, at most MAX_DEPTH deep, finite numbers, no key twice; else a FormatError at its place."""
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"byte {exc.start}", "not UTF-8 text") from None
    end = len(source)
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", source))  # outside strings; no Python loop per character
    if max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0) > MAX_DEPTH:
        # Decode only what comes before the first problem, so that Python's own recursion
        # never runs out and a JSON error earlier in the text is still the one reported.
        end = (_first_problem(source) or (end, ""))[0]
    data = _loads(source, end)
    if data is not _REFUSED and end == len(source):
        return data
    found = _first_problem(source)
    if found is None:  # not expected: the scan and the decoder disagree
        raise FormatError("", f"nested too deeply or holding a number the format refuses (at most {MAX_DEPTH} levels)")
    raise _at(source, *found)


#: What `_loads` returns when a hook refused the text (or Python's recursion ran out).
_REFUSED = object()


def _loads(source: str, end: int) -> Any:
    """The JSON of the text up to `end`; bad JSON before `end` (or at the text's end) a FormatError."""
    try:
        return json.loads(
            source[:end],
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constant,
            parse_int=_integer,
            parse_float=_float,
        )
    except json.JSONDecodeError as exc:
        if exc.pos < end or end == len(source):
            raise _at(source, exc.pos, f"not valid JSON: {exc.msg}") from None
    except (_Refused, RecursionError):
        pass
    return _REFUSED


def parse(source: str | bytes) -> Scenario:
    """Parse and check scenario text."""
    return check(decode(source))


def load(path: str) -> Scenario:
    """Read and check a scenario file."""
    with open(path, "rb") as fh:
        return parse(fh.read())


def to_json(scenario: Scenario) -> Obj:
    """The scenario as a `memory-scenario/1` document (what the notebook downloads)."""
    workflows, events = [_workflow_json(w) for w in scenario.workflows], [_event_json(e) for e in scenario.events]
    return {"format": SCENARIO_FORMAT, **vars(scenario), "workflows": workflows, "events": events}  # fields in order


def _workflow_json(w: Obj) -> Obj:
    out: Obj = {"id": w["id"], "org": w["org"]}
    if w["memory_probes"] is not None:
        out["budget"] = {"MemoryProbes": w["memory_probes"]}
    out["steps"] = [_given(s) for s in w["steps"]]
    return out


def _event_json(e: Obj) -> Obj:
    """An event back in file form: record fields flattened, defaults left out where absent."""
    out = {k: v for k, v in e.items() if k not in ("record", "args", "args_given") and v is not None}
    return {**out, **_FILE_FORM.get(e["do"], lambda _: {})(e)}


def _given(fields: Obj, *, but: str = "") -> Obj:
    """The fields given (not null), but one."""
    return {k: v for k, v in fields.items() if v is not None and k != but}


#: What an event writes in its file that its checked form holds otherwise, by its `do`.
_FILE_FORM: dict[str, Callable[[Obj], Obj]] = {
    "read": lambda e: {"args": e["args_given"]},
    "record": lambda e: _given(e["record"]),
    "step": lambda e: {} if e.get("record") is None else {"record": _given(e["record"], but="within")},
    "open_turn": lambda e: {"request": e["request"] if e["request"]["claims"] else e["request"]["text"]},
}
