"""The models as the check: pydantic's first error as the format's path and sentence; then no NUL, no lone surrogate."""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types
from typing import Annotated, Any, TypeVar, Union, cast, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from ..errors import FormatError
from .events import MAX_INTEGER, MAX_NAME, NOT_BLANK, READ_ARGS, keys

__all__ = ["MAX_INTEGER", "MAX_NAME", "format_error", "join", "storable", "type_name", "validate"]

T = TypeVar("T")

#: The validator of a model or type, made once.
_adapter = functools.cache(TypeAdapter)

_TYPE_NAMES = {bool: "a boolean", int: "a number", float: "a number", str: "a text", list: "a list", dict: "an object"}


def type_name(value: Any) -> str:
    """How a message names a JSON value's type."""
    return "null" if value is None else _TYPE_NAMES.get(type(value), type(value).__name__)


def join(path: str, key: str | int) -> str:
    """A path one key or index further: `a.b`, `a[0]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def validate(kind: type[T], value: Any, *, path: str = "") -> T:
    """`value` as the model (or type) `kind`; FormatError names the first problem at its path."""
    try:
        return cast(T, _adapter(cast(Any, kind)).validate_python(value))
    except ValidationError as exc:
        raise format_error(exc, kind=kind, value=value, path=path) from None


def format_error(exc: ValidationError, *, kind: Any, value: Any, path: str = "") -> FormatError:
    """The first of a model's errors, as the format writes it (each object's own keys first)."""
    parts, tp, error = _first(exc, kind=kind, value=value)
    if error["type"] in ("union_tag_not_found", "union_tag_invalid"):
        key, problem = _untagged(tp, error)
        return FormatError(functools.reduce(join, [*parts, key], path), problem)
    return FormatError(functools.reduce(join, parts, path), _message(error, tp, parts))


_OWN = ("extra_forbidden", "missing")

Place = tuple[list[str | int], Any, ErrorDetails]


def _first(exc: ValidationError, *, kind: Any, value: Any) -> Place:
    """The first error, unless an unknown key, then a missing one, of an object holding it (keys before fields)."""
    found = _placed(exc, kind=kind, value=value) or _placed(exc, kind=kind, value=value, every=True)
    first = found[0]
    own = [f for f in found if f[2]["type"] in _OWN and first[0][: len(f[0]) - 1] == f[0][:-1]]
    return min(own, key=lambda f: (len(f[0]), _OWN.index(f[2]["type"]))) if own else first


def _placed(exc: ValidationError, *, kind: Any, value: Any, every: bool = False) -> list[Place]:
    """The errors placed, in pydantic's order (see `_place`)."""
    return [f for f in (_place(kind, value, e, every=every) for e in exc.errors()) if f is not None]


def _place(kind: Any, value: Any, error: ErrorDetails, *, every: bool = False) -> Place | None:
    """(path's parts, type at its end, error); None: another union member than the value is read as (unless `every`)."""
    parts: list[str | int] = []
    tp, parent, here = kind, None, value
    for part in error["loc"]:
        if members := _members(tp):
            chosen = _chosen(members, here, parent)
            if chosen is not None and chosen != part and not every:
                return None
            tp = members[str(part)]
            continue
        tp = _bare(tp)
        parts.append(part)
        parent, here, tp = here, _at(here, part), _inner(tp, part)
    return parts, tp, error


def _inner(tp: Any, part: str | int) -> Any:
    """The type of a model's field, a list's item or an object's value (else `tp` itself)."""
    if inspect.isclass(tp) and issubclass(tp, BaseModel):
        return next((f.annotation for n, f in tp.model_fields.items() if (f.alias or n) == part), tp)
    return get_args(tp)[-1] if get_origin(tp) in (list, dict) else tp


def _at(value: Any, part: str | int) -> Any:
    """What `value` holds at a key or index, or None."""
    if isinstance(value, dict):
        return value.get(part)
    return value[part] if isinstance(value, list) and isinstance(part, int) and part < len(value) else None


def _bare(tp: Any) -> Any:
    """A type without its Annotated metadata and without `| None`."""
    while True:
        if get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
        elif _is_union(tp) and type(None) in get_args(tp) and len(get_args(tp)) == 2:
            tp = next(a for a in get_args(tp) if a is not type(None))
        else:
            return tp


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _members(tp: Any) -> dict[str, Any]:
    """A union's members by their tag in an error's location: the discriminator's value (`graph`), else the name."""
    tag = next((getattr(m, "discriminator", None) for m in getattr(tp, "__metadata__", ())), None)
    tp = _bare(tp)
    if not _is_union(tp):
        return {}
    if isinstance(tag, str):
        return {t: m for m in get_args(tp) for t in get_args(_bare(m.model_fields[tag].annotation))}
    return {getattr(m, "__name__", str(m)): m for m in get_args(tp)}


def _chosen(members: dict[str, Any], value: Any, parent: Any) -> str | None:
    """The member `value` is read as: a Value if it has `value`, its call's args (R23), the model, else a text."""
    names = list(members)
    if "Value" in names:
        return "Value" if isinstance(value, dict) and "value" in value else names[0]
    if set(names) == {m.__name__ for m in READ_ARGS.values()}:
        return _args_of_call(parent)
    if "str" in names:
        return next(n for n in names if n != "str") if isinstance(value, dict) else "str"
    return None


def _args_of_call(read: Any) -> str | None:
    """The args model of a read's call (R23), if it names one."""
    call = read.get("call") if isinstance(read, dict) else None
    return READ_ARGS[call].__name__ if call in READ_ARGS else None


def _untagged(tp: Any, error: ErrorDetails) -> tuple[str, str]:
    """(key, sentence) for a missing or unknown discriminator: an unknown key, a missing one, then its value."""
    members = _members(tp)
    model = next(iter(members.values()))
    value = error["input"] if isinstance(error["input"], dict) else {}
    tag = error.get("ctx", {}).get("discriminator", "").strip("'")
    for key in value:
        if key not in sum(keys(model), ()):
            return key, _key_problem("extra_forbidden", model)
    for key in keys(model)[0]:
        if key not in value:
            return key, "missing (required)"
    return tag, f"expected one of {', '.join(members)}"


def _message(error: ErrorDetails, tp: Any, parts: list[str | int]) -> str:
    """The format's sentence for one pydantic error of a value of type `tp`."""
    kind, value, key = error["type"], error.get("input"), parts[-1] if parts else ""
    if kind in ("extra_forbidden", "missing"):
        return _key_problem(kind, _bare(tp))
    if key == "MemoryProbes":
        return f"expected a whole number from 0 to {MAX_INTEGER:,} (R21)"
    if kind.startswith(("greater", "less", "float")) and type(value) in (int, float):
        return _number(value, key=key) or error["msg"]
    if kind == "literal_error":
        return _literal(_bare(tp), value, key=key)
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, found {type_name(value)}"
    if kind == "string_pattern_mismatch":
        return _pattern(value, error)
    return _text(value, max_length=error.get("ctx", {}).get("max_length"))


def _key_problem(kind: str, model: Any) -> str:
    """What the format says of a key the object `model` does not have (`extra_forbidden`), or of one missing."""
    if kind == "missing":
        return "missing (required)"
    return f"unknown key (allowed here: {', '.join(sum(keys(model), ()))})"


def _number(value: float, *, key: str | int) -> str | None:
    """A number out of its range: not finite, or a reliability (R26) or a weight (R22) out of bounds."""
    if isinstance(value, int) and abs(value) > sys.float_info.max:
        return "too large to be a number (the largest is about 1.8e308)"
    if not abs(value) <= sys.float_info.max:
        return f"expected a finite number, found {value}"
    if key == "reliability":
        return f"must be strictly between 0.5 and 1, found {value} (R26)"
    if key == "min_weight":
        return f"a weight is between 0 and 1, found {float(value)}"
    return None


def _literal(tp: Any, value: Any, *, key: str | int) -> str:
    choices = get_args(tp)
    if key == "kind" and "idea" in choices:  # a World entity's kind (its own sentence once it is a name)
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
            return _text(value, max_length=MAX_NAME)
        return f"a world entity's kind is one of {', '.join(choices)}, not {value!r}"
    if len(choices) == 1:  # a document's format
        return f"expected {choices[0]!r}, found {value!r}"
    return f"expected one of {', '.join(choices)}"


def _text(value: Any, *, max_length: int | None = None) -> str:
    if not isinstance(value, str):
        return f"expected a text, found {type_name(value)}"
    if not value.strip():
        return "must not be empty"
    return f"at most {max_length} characters here, found {len(value):,}"


def _pattern(value: Any, error: ErrorDetails) -> str:
    if not value.strip() or error.get("ctx", {}).get("pattern") == NOT_BLANK:
        return "must not be empty"
    return "expected workflow:NAME, agent:NAME or debater:NAME"


#: What a value of the wrong JSON type was expected to be, by pydantic's error.
_EXPECTED = {"bool_type": "true or false", "list_type": "a list", "float_type": "a number", "int_type": "a number"}
_EXPECTED |= dict.fromkeys(("dict_type", "model_type", "model_attributes_type"), "an object")  # a model is one too


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unstorable(found: str) -> str:
    if found == "\x00":
        return "a NUL character (\\u0000), which a database cannot store alike on SQLite and PostgreSQL"
    return f"a lone surrogate (\\u{ord(found):04x}), which is not a character and cannot be stored as UTF-8"


def storable(path: str, value: Any) -> None:
    """Every text in `value`, object keys included, can be stored as given on both backends."""
    if isinstance(value, str):
        if found := _UNSTORABLE.search(value):
            raise FormatError(path, f"this text holds {_unstorable(found.group())}")
    elif isinstance(value, dict):
        for key, item in value.items():
            escaped = _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", key) if isinstance(key, str) else key
            place = join(path, escaped)  # NUL characters and lone surrogates as JSON escapes, for messages
            found = _UNSTORABLE.search(key) if isinstance(key, str) else None
            if found:
                raise FormatError(place, f"this key holds {_unstorable(found.group())}")
            storable(place, item)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            storable(join(path, i), item)
