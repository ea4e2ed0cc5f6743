"""SQLite and PostgreSQL differ in one object each (memory_core/store/dialect.py): no other module
of memory_core asks which backend it runs on, and what the dialects render is what the rest wrote."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import syntax

from memory_core import make_engine
from memory_core.store import probes
from memory_core.store.dialect import PostgreSQL, SQLite, dialect_of, for_update

pytestmark = pytest.mark.backend_free  # no test database: the same on every backend

CORE = Path(__file__).resolve().parent.parent / "memory_core"
#: The one module where backends differ. The migrations are alembic's history, left as written.
DIALECT = CORE / "store" / "dialect.py"
#: SQLite's new databases made by copy (a file, or one in memory), which only make_engine's SQLite
#: branch calls: it is SQLite's by what it does, and asks nothing.
SQLITE_TEMPLATE = CORE / "store" / "template.py"
#: URL-scheme parsing (which scheme names which backend) may name backends: database.py's.
URL_PARSING = {
    ("store/database.py", "sqlite_file"),
    ("store/database.py", "_parse"),
    ("store/database.py", "make_engine"),
}
BACKENDS = {"sqlite", "postgresql", "psycopg"}


def _branches(rel: str, source: str) -> list[str]:
    """Where a module asks which backend it runs on: `dialect.name`/`dialect.driver` of an engine, a
    `.postgres`/`.postgresql`/`.sqlite` flag, a comparison with a backend's name, or a driver's
    own types (importing sqlite3 or psycopg, a module name starting with one)."""
    tree = syntax.tree(source)
    found = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        where = f"{rel}:{getattr(node, 'lineno', 0)} ({function})"
        if (rel, function) not in URL_PARSING:
            if isinstance(node, ast.Attribute):
                if node.attr in ("name", "driver") and isinstance(node.value, ast.Attribute):
                    if node.value.attr == "dialect":
                        found.append(f"{where}: .dialect.{node.attr}")
                if node.attr in ("postgres", "postgresql", "sqlite", "pg"):
                    found.append(f"{where}: .{node.attr}")
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                found.extend(f"{where}: imports {n}" for n in names if n.split(".")[0] in ("sqlite3", "psycopg"))
            if isinstance(node, ast.Compare):
                for side in (node.left, *node.comparators):
                    if isinstance(side, ast.Constant) and str(side.value).lower() in BACKENDS:
                        found.append(f"{where}: compared with {side.value!r}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "startswith" and node.args and isinstance(node.args[0], ast.Constant):
                    if str(node.args[0].value).split(":")[0].lower() in BACKENDS and "url" not in ast.unparse(node):
                        found.append(f"{where}: startswith({node.args[0].value!r})")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "")
    return found


def test_no_backend_branch_outside_the_dialects():
    sources = [p for p in CORE.rglob("*.py") if "migrations" not in p.parts and p not in (DIALECT, SQLITE_TEMPLATE)]
    assert len(sources) > 40
    found = [b for p in sources for b in _branches(p.relative_to(CORE).as_posix(), p.read_text())]
    assert found == [], "backend branches outside store/dialect.py:\n" + "\n".join(found)


def test_the_scan_finds_a_backend_branch():
    """The scan above is not blind: each form of asking the backend is found."""
    found = _branches(
        "store/sample.py",
        "import sqlite3\n"
        "def f(engine, db, conn, orig):\n"
        "    a = engine.dialect.name == 'postgresql'\n"
        "    b = db.postgres\n"
        "    c = isinstance(conn, sqlite3.Connection)\n"
        "    d = type(orig).__module__.startswith('psycopg')\n"
        "    e = s.get_bind().dialect.driver\n",
    )
    assert len(found) == 6, found  # sqlite3.Connection through its import; `== "postgresql"` with `.dialect.name`


def test_one_dialect_per_engine_shared_by_its_writer():
    engine = make_engine("sqlite://")
    dialect = dialect_of(engine)
    assert isinstance(dialect, SQLite) and dialect.in_memory and not dialect.keeps_connections
    assert dialect_of(dialect.writer(engine)) is dialect


def test_a_locked_statement_is_rendered_by_its_dialect():
    sql = for_update("SELECT t.status FROM turn t WHERE t.id = :t", of="t")
    assert SQLite(in_memory=True).for_driver(sql) == sql  # BEGIN IMMEDIATE holds the write lock already
    assert PostgreSQL().for_driver(sql) == "SELECT t.status FROM turn t WHERE t.id = %(t)s FOR NO KEY UPDATE OF t"
    assert "FOR NO KEY UPDATE OF t" in PostgreSQL().for_driver(probes.TURN)
    assert "FOR" not in PostgreSQL().for_driver(f"UPDATE turn SET {probes.read_range(PostgreSQL)} WHERE id = :t")


@pytest.mark.parametrize("obj", [[], {"a": "Zürich"}, [{"k": 1.5, "x": None, "y": ["é", "\u2603"]}]])
def test_json_parameters_store_the_text_json_dumps_gives(obj):
    """R24's evidence and a turn's map are stored as they always were: json.dumps's default text."""
    assert SQLite(in_memory=True).json(obj) == json.dumps(obj)
    from psycopg.adapt import Transformer

    dumper = Transformer().get_dumper(PostgreSQL().json(obj), "t")
    assert bytes(dumper.dump(PostgreSQL().json(obj))) == json.dumps(obj).encode()


def test_psycopg_s_pipeline_termination_noise_is_dropped_and_its_other_warnings_stay(caplog):
    """#26, point 13: a conflict inside psycopg's pipeline is raised (and retried); the extra
    "error ignored terminating <Pipeline>" line it logs is dropped, nothing else is."""
    import logging

    import memory_core.store.database  # noqa: F401  (installs the filter)

    class Pipeline:
        pass

    log = logging.getLogger("psycopg")
    with caplog.at_level(logging.WARNING, logger="psycopg"):
        log.warning("error ignored terminating %r: %s", Pipeline(), "pipeline aborted")
        log.warning("error ignored terminating %r: %s", object(), "a copy")
        log.warning("another warning")
    assert [r.getMessage()[:25] for r in caplog.records] == ["error ignored terminating", "another warning"]
