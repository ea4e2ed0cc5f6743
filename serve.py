"""`make run`'s server: `streamlit run app.py` (arguments go to it), with the libraries every page
imports loaded in a background thread meanwhile. Streamlit imports a page's modules only when the
first browser asks for it; loaded while the server starts and the browser fetches the app, they no
longer add to the first page (issue #16, B8: the first page after `make run`).
"""

from __future__ import annotations

import sys
import threading


def _warm() -> None:
    import jinja2  # noqa: F401  (the drawing's page)
    import pandas  # noqa: F401  (every page's tables)

    import memory_core  # noqa: F401  (SQLAlchemy, sqlmodel, the models, the scenario format)
    from memory_core.store import migrate  # noqa: F401  (Alembic: the engine checks the schema)
    from memory_core.store.database import database_url, warm_driver
    from memory_core.views import viz  # noqa: F401  (networkx: the Graphs page)

    warm_driver(database_url())  # the database's SQLAlchemy dialect and driver


if __name__ == "__main__":
    threading.Thread(target=_warm, name="warm-imports", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", "app.py", *sys.argv[1:]]
    sys.exit(cli.main(prog_name="streamlit"))
