"""Alembic environment: runs on the connection memory_core hands it (see memory_core.store.database)."""

from contextlib import nullcontext

from alembic import context
from sqlalchemy import create_engine
from sqlmodel import SQLModel

from memory_core.store import models  # noqa: F401  (registers every table)

config = context.config
target_metadata = SQLModel.metadata


def run() -> None:
    """The migrations on the connection handed in (database.upgrade), else on one to `sqlalchemy.url` (the alembic CLI)."""
    given = config.attributes.get("connection")
    opened = (
        nullcontext(given)
        if given is not None
        else create_engine(config.get_main_option("sqlalchemy.url") or "").connect()
    )
    with opened as connection:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


run()
