"""New SQLite memories made by copy of a template migrated once per process (68 ms a file, 17 ms in memory; 2 ms a copy)."""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import Engine
from sqlalchemy.pool import StaticPool

_LOCK = threading.Lock()
_MADE = {"file": 0, "memory": 0}  # memories made this process, before any template
_FILE: list[Path | None] = []  # the migrated template file once made (None: it could not be)
_MEMORY: list[sqlite3.Connection] = []  # the in-memory template, once made
_INHERITED: list[sqlite3.Connection] = []  # a parent's, after a fork: never used, never closed here


def _forget_after_fork() -> None:
    """A forked child makes templates of its own; its parent's SQLite connection is never used nor closed here."""
    global _LOCK
    _LOCK = threading.Lock()
    _INHERITED.extend(_MEMORY)
    _MEMORY.clear()
    _FILE.clear()
    _MADE.update(file=0, memory=0)


os.register_at_fork(after_in_child=_forget_after_fork)


def _second(kind: str) -> bool:
    """Whether a template is worth making: this process makes its second memory of this kind."""
    with _LOCK:
        _MADE[kind] += 1
        return _MADE[kind] > 1


def _clear_dead(lefts: Iterable[Path], pid_of: Callable[[str], str]) -> None:
    """Remove what processes now gone left (a copy killed mid-way, a template): their pid is in the name."""
    for left in lefts:
        try:
            os.kill(int(pid_of(left.name)), 0)
        except ProcessLookupError:
            if left.is_dir():
                shutil.rmtree(left, ignore_errors=True)
            else:
                left.unlink(missing_ok=True)
        except (OSError, ValueError):  # another user's, or not a number: not ours to judge
            pass


def _template(migrate: Callable[[Path], None]) -> Path | None:
    """This process's migrated template file, made at the first call; None when it cannot be made."""
    with _LOCK:
        if not _FILE:
            try:
                _clear_dead(Path(tempfile.gettempdir()).glob("memory-template-*"), lambda name: name.split("-")[2])
                folder = Path(tempfile.mkdtemp(prefix=f"memory-template-{os.getpid()}-"))
                atexit.register(shutil.rmtree, folder, True)
                migrate(folder / "template.db")
                _FILE.append(folder / "template.db")
            except Exception:  # noqa: BLE001  (a template is a speed-up: without one, nothing is lost)
                _FILE.append(None)
        return _FILE[0]


def new_file(path: Path, migrate: Callable[[Path], None]) -> bool:
    """Make the new SQLite file `path` as a copy of this process's template (made once by `migrate`); True when made."""
    template = _template(migrate) if _second("file") else None  # none for a process's first file
    if template is None:
        return False
    copy = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.new")
    try:
        _clear_dead(path.parent.glob(f".{path.name}.*.new*"), lambda name: name[len(path.name) + 2 :].split(".")[0])
        shutil.copyfile(template, copy)
        with closing(sqlite3.connect(copy)) as conn:
            conn.execute("UPDATE idkey SET key = ? WHERE id = 1", (secrets.token_hex(32),))
            conn.commit()
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        os.link(copy, path)  # only where the name is free: never over another process's file
        return True
    except (OSError, sqlite3.Error):  # taken meanwhile, a folder not writable, no links: the usual way
        return False
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            copy.with_name(copy.name + suffix).unlink(missing_ok=True)


def new_memory(engine: Engine, create: Callable[[Engine], None]) -> None:
    """Give the in-memory database of `engine` its tables: the first by `create`, later ones copied from a template."""
    if not _second("memory"):
        create(engine)
        return
    with _LOCK:
        if not _MEMORY:
            template = sqlite3.connect(":memory:", check_same_thread=False)
            made = create_engine("sqlite://", creator=lambda: template, poolclass=StaticPool)
            create(made)
            _MEMORY.append(template)
        with closing(engine.raw_connection()) as raw:
            _MEMORY[0].backup(raw.driver_connection)  # type: ignore[arg-type]
