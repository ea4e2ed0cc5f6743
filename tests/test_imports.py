"""The house's layers, read from the imports: pages -> facade/views -> use cases -> rules and store.

Rules import nothing of the store; the store imports no use case; only the store touches a
database; `memory_core` never imports Streamlit; pages never import SQL libraries.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "memory_core"
SQL = {"sqlmodel", "sqlalchemy", "sqlite3", "psycopg", "alembic"}
MAX_LINES = 450

#: What each subpackage of memory_core may import of memory_core (besides itself and `errors`).
ALLOWED = {
    "rules": set(),
    "store": {"rules"},
    "usecases": {"rules", "store"},
    # the event engine replays a document through the facade, one load at a time, retrying the whole
    "format": {"rules", "usecases", "store.retry", "store.snapshot", "store.transactions"},
    "views": {"rules", "format", "usecases", "store.database", "store.graph"},  # a view's own engine; FactChange
    "agents": {"format", "usecases"},  # the MCP server: an adapter over the facade, arguments checked by the format
}


def modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "migrations" not in p.parts)


def imported(path: Path) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved against its package)."""
    package = list(path.relative_to(ROOT).with_suffix("").parts)
    package = package[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names |= {f"{module}.{a.name}" for a in node.names}
    return names


def layer(name: str) -> str | None:
    """The subpackage of memory_core a module name belongs to (None for the package's own modules)."""
    parts = name.split(".")
    if parts[0] != "memory_core" or len(parts) < 2 or parts[1] not in ALLOWED:
        return None
    return parts[1]


def core_imports(path: Path) -> set[str]:
    return {n for n in imported(path) if n.startswith("memory_core.") and not n.startswith("memory_core.errors")}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(package):
    wrong = []
    for path in modules(CORE / package):
        for name in core_imports(path):
            other = layer(name)
            if other is None:
                if name.count(".") == 1 and name.split(".")[1] not in ("errors",) and name != "memory_core.errors":
                    wrong.append((path.name, name))  # the facade package or a top-level module: above every layer
                continue
            sub = ".".join(name.split(".")[1:3])
            if sub == other:
                continue  # the subpackage itself (`from ..store import snapshot`): its modules are checked
            if other != package and other not in ALLOWED[package] and sub not in ALLOWED[package]:
                wrong.append((path.name, name))
    assert wrong == [], f"{package} imports what lies above it: {wrong}"


def test_rules_import_nothing_of_the_store_and_the_store_no_use_case():
    for path in modules(CORE / "rules"):
        assert not {n for n in core_imports(path) if layer(n) == "store"}, path
    for path in modules(CORE / "store"):
        assert not {n for n in core_imports(path) if layer(n) in ("usecases", "views", "format")}, path


def test_only_the_store_touches_a_database():
    """The CLI, the generator, the use cases, the views and the format reach a database through the store."""
    touching = set()
    for path in modules(CORE):
        rel = path.relative_to(CORE).as_posix()
        if rel.startswith("store/"):
            continue
        if {n.split(".")[0] for n in imported(path)} & SQL:
            touching.add(rel)
    assert touching == set()


def test_pages_touch_no_sql_and_core_imports_no_streamlit():
    for path in [ROOT / "app.py", *(ROOT / "pages").glob("*.py")]:
        tops = {n.split(".")[0] for n in imported(path)}
        assert not tops & SQL, path
        assert not {n for n in imported(path) if layer(n) == "store" and n != "memory_core.store"}, path
    for path in modules(CORE):
        assert "streamlit" not in {n.split(".")[0] for n in imported(path)}, path


def test_no_module_is_over_the_limit_and_the_package_shows_its_layers():
    long = {
        p.relative_to(CORE).as_posix(): n for p in modules(CORE) if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
    assert {p.name for p in CORE.iterdir() if (p / "__init__.py").exists()} == set(ALLOWED)
