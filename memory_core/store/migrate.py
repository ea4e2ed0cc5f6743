"""Schema migrations with Alembic: `python -m memory_core db upgrade` creates or upgrades a database."""

from __future__ import annotations

import threading
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from .dialect import dialect_of

SCRIPTS = Path(__file__).resolve().parent / "migrations"


def config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(SCRIPTS))
    return cfg


#: Alembic runs migrations through process-wide proxies (`alembic.context`, `alembic.op`): two
#: threads migrating at once, even two databases, would run one's DDL on the other's connection.
_ONE_IN_THIS_PROCESS = threading.Lock()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` (the newest), in one transaction, one migrator at a time (Dialect.migrating)."""
    cfg = config()
    with _ONE_IN_THIS_PROCESS, dialect_of(engine).migrating(engine) as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def current(engine: Engine) -> str | None:
    """The revision the database is at, or None for a database never migrated."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head() -> str | None:
    return ScriptDirectory.from_config(config()).get_current_head()
