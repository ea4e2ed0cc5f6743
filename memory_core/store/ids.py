"""Ids taken for good (`duplicate_id`), kept as keyed digests (issue #26, R29, R33)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from contextlib import closing

from sqlalchemy.engine import Engine
from sqlmodel import Session

from .driver import Driver, driver_of

KEY = "SELECT key FROM idkey WHERE id = 1"
MAKE_KEY = "INSERT INTO idkey (id, key) VALUES (1, :k) ON CONFLICT (id) DO NOTHING"
USED = "SELECT 1 FROM usedid WHERE kind = :k AND id = :i"
USE = "INSERT INTO usedid (kind, id) VALUES (:k, :i)"


def digest(key: str, kind: str, ident: str) -> str:
    """What `usedid` keeps of an id: HMAC-SHA256 of kind and id under the database's key, in hex."""
    return hmac.new(bytes.fromhex(key), f"{kind}\x00{ident}".encode(), hashlib.sha256).hexdigest()


def key_of(db: Driver) -> str:
    """The database's key, made (a random 256 bits) the first time one is asked for."""
    hit = db.rows(KEY, {})
    if not hit:
        db.change(MAKE_KEY, {"k": secrets.token_hex(32)})  # a concurrent first use: one key wins
        hit = db.rows(KEY, {})
    return str(hit[0][0])


def claim(tx: Session | Driver, kind: str, ident: str) -> bool:
    """Take an id for good: False when it was ever used for this kind of thing, erased ones included."""
    with driver_of(tx) as db:
        kept = digest(key_of(db), kind, ident)
        if db.rows(USED, {"k": kind, "i": kept}):
            return False
        db.change(USE, {"k": kind, "i": kept})
        return True


def key_for(engine: Engine) -> str:
    """The database's key, in a transaction of its own (for writers that bypass the use cases: the generator)."""
    from .dialect import dialect_of

    with engine.begin() as conn, closing(Driver(conn.connection.dbapi_connection, dialect_of(engine))) as db:
        return key_of(db)
