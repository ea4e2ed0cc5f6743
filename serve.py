"""`make run`'s server: `streamlit run app.py` with the pages' libraries loaded meanwhile (#16, B8), and a first session
of its own that runs the default page, so that a first browser sent to another page finds it (#25, streamlit#9992)."""

from __future__ import annotations

import ssl
import sys
import threading
import time
from contextlib import suppress


def _warm() -> None:
    import jinja2  # noqa: F401  (the drawing's page)
    import pandas  # noqa: F401  (every page's tables)

    import memory_core  # noqa: F401  (SQLAlchemy, sqlmodel, the models, the scenario format)
    from memory_core.store.database import database_url, warm_driver  # and Alembic: the engine checks the schema
    from memory_core.views import viz  # noqa: F401  (networkx: the Graphs page)

    warm_driver(database_url())  # the database's SQLAlchemy dialect and driver


def _scrub_notebooks(every: float = 1.0) -> None:
    """Notebooks made from runs erased anywhere (an agent, another tab, a script) go within a second while the
    dashboard runs, not at the next page run (R29-R31); the database is opened once such a notebook exists."""
    from memory_core import MemoryService
    from memory_core.store.database import database_url, sqlite_file
    from memory_core.views.notebook_file import notebook_dir, scrub_erased

    url, service = database_url(), None
    if url.startswith("sqlite") and sqlite_file(url) is None:
        return  # in memory: each process's pages hold a memory of their own
    while True:
        with suppress(Exception):  # the database not there yet, or gone a moment: look again
            if service is not None or any(notebook_dir().glob("*.run.json")):
                service = service or MemoryService.at(url)
                scrub_erased(service)
        time.sleep(every)


def _stream_url() -> str:
    """The server's session endpoint, from Streamlit's options as the command line set them."""
    from streamlit import config

    host = str(config.get_option("server.address") or "127.0.0.1")
    host = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(host, f"[{host}]" if ":" in host else host)
    base = str(config.get_option("server.baseUrlPath") or "").strip("/")
    scheme = "wss" if config.get_option("server.sslCertFile") else "ws"  # served over TLS: asked over TLS
    return f"{scheme}://{host}:{config.get_option('server.port')}/{base + '/' if base else ''}_stcore/stream"


def _session(url: str, page: str = "") -> list[str]:
    """One session that asks for `page` ("": the default) until its script finished: the kinds of message it got."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    tls = None
    if url.startswith("wss://"):  # this machine's own server, by its loopback address: its certificate names another
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
    with connect(url, subprotocols=["streamlit"], open_timeout=15, ssl=tls) as ws:  # type: ignore[list-item]
        run = BackMsg()
        run.rerun_script.page_name = page
        ws.send(run.SerializeToString())
        kinds: list[str] = []
        while not kinds or kinds[-1] != "script_finished":
            kinds.append(str(ForwardMsg.FromString(ws.recv(timeout=60)).WhichOneof("type")))
        return kinds


def _first_session(url: str | None = None, within: float = 120) -> bool:
    """One session that runs the default page then closes, tried for `within` seconds: True once it finished."""
    from streamlit.runtime import Runtime

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if url is None and not Runtime.exists():  # options read before Streamlit read the command line's: stale
                raise ConnectionError("not started")  # (and Streamlit, reading them again, warned "please restart")
            _session(url or _stream_url())
            return True
        except Exception:  # noqa: BLE001  (not listening yet, or went away: try again, at worst nothing changes)
            time.sleep(0.2)
    return False


if __name__ == "__main__":
    threading.Thread(target=_warm, name="warm-imports", daemon=True).start()
    from streamlit.web import cli  # before the first session's thread, which imports from it (one import at a time)

    threading.Thread(target=_first_session, name="first-session", daemon=True).start()
    threading.Thread(target=_scrub_notebooks, name="scrub-notebooks", daemon=True).start()

    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    sys.exit(cli.main(prog_name="streamlit"))
