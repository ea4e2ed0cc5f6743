"""Alembic environment: runs on the connection memory_core hands it (see memory_core.store.database)."""

from alembic import context
from sqlalchemy import create_engine
from sqlmodel import SQLModel

from memory_core.store import models  # noqa: F401  (registers every table)

config = context.config
target_metadata = SQLModel.metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        with create_engine(config.get_main_option("sqlalchemy.url") or "").connect() as conn:
            context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
        return
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
