"""The recall trace (#38): a turn's graph reads kept in their transaction, read back as now (R24, R29, R30)."""

from __future__ import annotations

import json
from typing import Any, cast

from sqlalchemy import delete
from sqlmodel import Session, col, select

from ..plain import Obj
from .dialect import in_list
from .driver import Driver, driver_of, json_value
from .models import Turn, TurnRead
from .probes import expanded, read_range, resolved

#: A kept read's INSERT, bound by position; the columns a plain read leaves null are named only when one is not (B10:
#: each bound column costs). Its id is its turn's last read's; its moment is read in it, its turn's record count too
#: unless the read has it.
_KEEP = """INSERT INTO turnread (id, turn_id, records, moment, call, args, outcome, result{}) VALUES ((SELECT last_read
 FROM turn WHERE id = ?), ?, coalesce(?, (SELECT next_record FROM turn WHERE id = ?)), (SELECT coalesce(max(id), 0)
 FROM moment), ?, ?, ?, ?{})"""
_PLAIN, _ALL = _KEEP.format("", ""), _KEEP.format(", message, step, within, nested_id, near", ", ?" * 5)
_NONE = (None,) * 5


def keep(
    db: Driver,
    turn_id: str,
    at: tuple[str | None, str | None, int | None],
    *,
    call: str,
    args: Obj,
    result: list[Obj] | list[tuple[Any, ...]] | None = None,
    near: list[Obj] | None = None,
    refusal: tuple[str, str] | None = None,
    records: int | None = None,
    counted: bool = False,
) -> None:
    """Keep a read made `at` (step, nested work, its id): its answer (GraphExpand's: its rows) or refusal (R24), under
    the id the turn's last read took: its count's (`counted`: probes.count_read), or one taken here (none: no turn)."""
    if not counted and not db.change(f"UPDATE turn SET {read_range(db.dialect)} WHERE id = :t", {"t": turn_id}):
        return
    if call == "GraphSource" and result is not None:  # the excerpt stays in its record only (R24)
        result = [{k: v for k, v in hit.items() if k != "excerpt"} for hit in cast("list[Obj]", result)]
    reason, message = refusal or ("ok", None)
    js = db.dialect.trace_json
    told, more = None if result is None else js(result), (message, *at, None if near is None else js(near))
    row = (turn_id, turn_id, records, turn_id, call, js(args), reason, told)
    sql, values = (_PLAIN, row) if more == _NONE else (_ALL, row + more)  # _PLAIN: a turn-level read, the hot path
    db.cur.execute(db.dialect.positional(sql), values)


def add_near(db: Driver, turn_id: str, near: list[Obj]) -> None:
    """The `near` of a turn's newest read, which one statement answered and kept before `near` was read (R23)."""
    sql = "UPDATE turnread SET near = :n WHERE id = (SELECT last_read FROM turn WHERE id = :t)"
    db.change(sql, {"n": db.json(near), "t": turn_id})


_COLS = "r.id, r.turn_id, t.run_id, r.moment, r.records, r.nested_id, r.call, r.step, r.within, r.args, r.outcome, "
_COLS += "r.message, r.result, r.near"
#: A turn's reads: those of its range that are its own (models.Turn), found with no index on turnread.
_OF_TURN = "turn t JOIN turnread r ON r.id BETWEEN t.first_read AND t.last_read AND r.turn_id = t.id"
_KEPT = f"SELECT {_COLS} FROM {_OF_TURN}"


def kept(s: Session | Driver, *, runs: list[str] | None = None, turn: str | None = None) -> list[Obj]:
    """The reads kept, in the order they were made: all, or those of some runs, or of one turn."""
    sql, params = _KEPT, dict[str, Any]()
    if runs is not None:
        sql += f" WHERE t.run_id IN ({in_list('r', runs, params) or 'NULL'})"
    elif turn is not None:
        sql, params = sql + " WHERE r.turn_id = :t", {"t": turn}
    with driver_of(s) as db:
        out = [_row(row) for row in db.rows(sql + " ORDER BY r.id", params)]
        _as_now(db, out)
    return out


def naming(s: Session, *, org: str, name: str) -> list[Obj]:
    """An organization's answered GraphExpand and GraphSource reads whose text may name `name`, in order."""
    written = (json.dumps(name, ensure_ascii=e)[1:-1] for e in (True, False))  # escaped as json.dumps or as UTF-8
    like = ("%" + t.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%" for t in (*written, name))
    params: Obj = {"o": org, **dict(zip("abc", like, strict=True))}  # found anywhere ('!' escapes)
    sql = _KEPT + " JOIN run ru ON ru.id = t.run_id WHERE ru.org_id = :o AND r.outcome = 'ok' "
    sql += "AND r.call IN ('GraphExpand', 'GraphSource') AND ("
    sql += " OR ".join(f"CAST(r.{c} AS TEXT) LIKE :{p} ESCAPE '!'" for c in ("result", "args") for p in "abc") + ")"
    with driver_of(s) as db:
        return [_row(row) for row in db.rows(sql + " ORDER BY r.id", params)]


def made_before(s: Session, *, org: str, moment: int, last: int) -> tuple[int, list[Obj]]:
    """How many reads an organization's runs made before `moment` (R32), and the `last` of them, newest first."""
    where = " JOIN run ru ON ru.id = t.run_id WHERE ru.org_id = :o AND r.moment < :m"
    params: Obj = {"o": org, "m": moment}
    with driver_of(s) as db:
        n = db.rows(f"SELECT count(*) FROM {_OF_TURN}" + where, params)[0][0]
        rows = [_row(row) for row in db.rows(f"{_KEPT}{where} ORDER BY r.id DESC LIMIT {int(last)}", params)]
    return int(n), rows


_NAMES = ("id", "turn", "run", "moment", "records", "nested", "call", "step", "within", "args", "outcome", "message")


def _row(row: tuple[Any, ...]) -> Obj:
    """A kept read as the trace lists it (JSON decoded)."""
    out = dict(zip(_NAMES, row[:-2], strict=True))
    result, near = (None if v is None else json_value(v) for v in row[-2:])
    if result and isinstance(result[0], list):  # the query's rows, as PostgreSQL's one statement kept them
        result = (resolved if out["call"] == "GraphResolve" else expanded)(tuple(r) for r in result)
    return out | {"args": json_value(out["args"]), "result": result, "near": near}


def _as_now(db: Driver, reads: list[Obj]) -> None:
    """Excerpts read through their records, erased pointers null (R24, R29); erased authors null (R30)."""
    wanted = {h["record"] for r in reads if r["call"] == "GraphSource" for h in r["result"] or [] if h["record"]}
    excerpts = dict(_among(db, "SELECT id, excerpt FROM record WHERE id IN ({})", wanted))
    voters = {d["by"] for r in reads if r["call"] == "GraphExpand" for h in r["result"] or [] for d in h["disputes"]}
    people = {p for (p,) in _among(db, "SELECT id FROM person WHERE id IN ({})", voters - {None})}
    for r in reads:
        for hit in r["result"] or []:
            if r["call"] == "GraphSource":
                if hit["record"] is not None and hit["record"] not in excerpts:  # its record erased (R29)
                    hit.update(run=None, turn=None, record=None)
                hit["excerpt"] = excerpts.get(hit["record"]) if hit["record"] else None
            elif r["call"] == "GraphExpand":
                for d in hit["disputes"]:
                    d["by"] = d["by"] if d["by"] in people else None


def _among(db: Driver, sql: str, values: set[Any]) -> list[tuple[Any, ...]]:
    """Rows of `sql` whose IN list holds `values` (none without values)."""
    params: Obj = {}
    return db.rows(sql.format(in_list("v", values, params)), params) if values else []


def erase(s: Session, turns: Any) -> None:
    """The reads of these turns (a select of their ids) go with them (R29, R30), found by their ranges (models.Turn)."""
    s.exec(delete(TurnRead).where(col(TurnRead.id).in_(of_turns(turns))))  # type: ignore[call-overload]


def of_turns(turns: Any) -> Any:
    """The ids of these turns' reads (`turns`: a select of turn ids, or a list), each turn's range read (models.Turn)."""
    in_range = col(TurnRead.id).between(Turn.first_read, Turn.last_read) & (col(TurnRead.turn_id) == Turn.id)
    return select(TurnRead.id).join(Turn, in_range).where(col(Turn.id).in_(turns))
