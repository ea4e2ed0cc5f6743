"""docs/scaling.md's plan for sharding by organization (Citus) holds to the schema (store/models.py).

The doc classifies every table as distributed (by which column, existing or to add), reference or
local, and lists the keys that must change, which are exactly those Citus would refuse today: on
a distributed table, a primary key or unique key without its distribution column, and a foreign
key to another distributed table that does not carry both tables' distribution columns; on any
table, a foreign key Citus does not allow between its kinds of table (a reference table pointing
at a distributed or local one, a local table at a distributed one, a distributed one at a local
one). A table added to the schema, or a key, fails here until the doc says what becomes of it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import ForeignKeyConstraint, PrimaryKeyConstraint, Table, UniqueConstraint
from sqlmodel import SQLModel

from memory_core.store import models  # noqa: F401  (registers every table)

pytestmark = pytest.mark.backend_free  # the doc and the models: no database

DOC = Path(__file__).resolve().parent.parent / "docs" / "scaling.md"
HEADER = "| table | in Citus | distributed by | keys that must change |"
KINDS = {"distributed", "reference", "local"}


def plan() -> dict[str, tuple[str, str | None, bool, set[str]]]:
    """The doc's table: each table's kind, distribution column, whether that column is to be added,
    and the keys it says must change."""
    text = DOC.read_text(encoding="utf-8")
    assert HEADER in text, "docs/scaling.md has lost its table of tables"
    rows = text.split(HEADER, 1)[1].split("\n\n", 1)[0].strip().splitlines()[1:]
    out: dict[str, tuple[str, str | None, bool, set[str]]] = {}
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert len(cells) == 4, row
        table = cells[0].strip("`")
        assert table not in out, f"{table} is listed twice"
        by = re.match(r"`(\w+)`( \(to add\))?$", cells[2]) if cells[2] else None
        assert cells[1] in KINDS and (by is not None) == (cells[1] == "distributed"), row
        keys = set(re.findall(r"`((?:primary key|unique|foreign key) [^`]+)`", cells[3]))
        out[table] = (cells[1], by.group(1) if by else None, bool(by and by.group(2)), keys)
    return out


def _cols(columns) -> str:
    return ", ".join(c.name for c in columns)


def keys_that_must_change(table: Table, kinds: dict[str, tuple[str, str | None]]) -> set[str]:
    """What Citus would refuse of this table's keys, given every table's kind and column."""
    kind, by = kinds[table.name]
    found: set[str] = set()
    uniques = [(c.columns, "primary key") for c in table.constraints if isinstance(c, PrimaryKeyConstraint)]
    uniques += [(c.columns, "unique") for c in table.constraints if isinstance(c, UniqueConstraint)]
    uniques += [(i.columns, "unique") for i in table.indexes if i.unique]
    if kind == "distributed":
        found |= {f"{what} ({_cols(cols)})" for cols, what in uniques if by not in {c.name for c in cols}}
    for fk in (c for c in table.constraints if isinstance(c, ForeignKeyConstraint)):
        other = fk.referred_table.name
        other_kind, other_by = kinds[other]
        local = set(fk.column_keys)
        referred = {e.column.name for e in fk.elements}
        allowed = {
            ("distributed", "distributed"): by in local and other_by in referred,
            ("distributed", "reference"): True,
            ("reference", "reference"): True,
            ("local", "reference"): True,
            ("local", "local"): True,
        }.get((kind, other_kind), False)
        if not allowed:
            found.add(f"foreign key ({', '.join(fk.column_keys)}) → {other}")
    return found


def test_every_table_of_the_schema_is_placed_once():
    assert sorted(plan()) == sorted(t.name for t in SQLModel.metadata.sorted_tables)


def test_a_distribution_column_is_there_unless_the_doc_says_it_is_to_be_added():
    tables = SQLModel.metadata.tables
    for name, (kind, by, to_add, _) in plan().items():
        if kind == "distributed":
            assert (by in tables[name].columns) != to_add, (name, by, "to add" if to_add else "there")


def test_the_keys_that_must_change_are_exactly_those_citus_would_refuse():
    doc = plan()
    kinds = {name: (kind, by) for name, (kind, by, _, _) in doc.items()}
    for table in SQLModel.metadata.sorted_tables:
        assert doc[table.name][3] == keys_that_must_change(table, kinds), table.name


def test_the_user_graph_follows_the_person_and_the_rest_the_organization():
    """R20: a person's User graph is read in every organization they belong to, so its rows live
    with the person (the graph tables' `home`: the person for User rows, the organization for
    World and Flow rows); everything a run or turn writes lives with its organization."""
    doc = plan()
    graph_tables = ("entity", "alias", "fact", "support", "dispute", "supportgone", "factgone", "disputegone")
    assert all(doc[t][:2] == ("distributed", "home") for t in (*graph_tables, "entitygone"))
    org_tables = ("workflow", "run", "turn", "nestedwork", "record", "membership", "mapcount", "maplog", "turnlog")
    assert all(doc[t][:2] == ("distributed", "org_id") for t in org_tables)
    assert doc["organization"][:2] == ("distributed", "id") and doc["person"][0] == "reference"
    text = DOC.read_text(encoding="utf-8")
    assert "the person for User rows" in text and "R20" in text


def test_the_check_sees_what_citus_refuses():
    """The check above can fail: a unique key without the organization, and a reference table's
    key to a distributed one, are found."""
    from sqlalchemy import Column, ForeignKey, Integer, MetaData, String

    meta = MetaData()
    Table("org", meta, Column("id", String, primary_key=True))
    thing = Table(
        "thing",
        meta,
        Column("id", Integer, primary_key=True),
        Column("org_id", String, ForeignKey("org.id")),
        Column("name", String, unique=True),
    )
    ref = Table("ref", meta, Column("id", Integer, primary_key=True), Column("org_id", String, ForeignKey("org.id")))
    kinds = {"org": ("distributed", "id"), "thing": ("distributed", "org_id"), "ref": ("reference", None)}
    assert keys_that_must_change(thing, kinds) == {"primary key (id)", "unique (name)"}
    assert keys_that_must_change(ref, kinds) == {"foreign key (org_id) → org"}
