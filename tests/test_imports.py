"""The house's layers, read from the imports: pages -> facade/views -> use cases -> rules and store.

Rules import nothing of the store; the store imports no use case; only the store touches a
database; `memory_core` never imports Streamlit; pages never import SQL libraries.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.backend_free  # no test database: the same on every backend

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "memory_core"
SQL = {"sqlmodel", "sqlalchemy", "sqlite3", "psycopg", "alembic"}
MAX_LINES = 450

#: What each subpackage of memory_core may import of memory_core (besides itself, `errors` and `plain`).
BENEATH_ALL = ("memory_core.errors", "memory_core.plain")
ALLOWED = {
    "rules": set(),
    "store": {"rules"},
    "usecases": {"rules", "store"},
    # the event engine replays a document through the facade, one load at a time, retrying the whole
    "format": {"rules", "usecases", "store.retry"},
    "views": {"rules", "format", "usecases", "store.graph"},  # FactChange, a fact's change as the store reports it
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
    return {n for n in imported(path) if n.startswith("memory_core.") and not n.startswith(BENEATH_ALL)}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(package):
    wrong = []
    for path in modules(CORE / package):
        for name in core_imports(path):
            other = layer(name)
            if other is None:
                if name.count(".") == 1:
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


#: What only the store may do: open a session or a driver, run or write statements, hold SQL text.
DB_CALLS = {"rows", "change", "many", "add", "add_all", "exec", "execute", "executemany", "scalar", "scalars"}
DB_NAMES = {"Session", "driver_of", "Driver", "Connection"}
SQL_TEXT = re.compile(
    r"^\s*(select\s.+\sfrom\s|insert\s+into\s|update\s+\w+\s+set\s|delete\s+from\s|pragma\s+\w+|"
    r"create\s+(unique\s+)?(table|index)\s|alter\s+table\s|drop\s+(table|index)\s|with\s+\w+\s+as\s*\()",
    re.I | re.S,
)


def outside_the_store() -> list[Path]:
    """Every module of ours but the store's: the package's other layers, pages, the app, the launcher."""
    ours = [p for p in modules(CORE) if not p.relative_to(CORE).as_posix().startswith("store/")]
    return [*ours, *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py", ROOT / "serve.py"]


def type_checking_only(tree: ast.Module) -> set[int]:
    """Ids of the import nodes under `if TYPE_CHECKING:` (annotations only: they run no statement)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            found |= {id(n) for n in ast.walk(node)}
    return found


def database_touches(path: Path, name: str | None = None) -> list[str]:
    """Where a file touches a database itself: a session, a driver, a statement, a row model, SQL text."""
    tree = ast.parse(path.read_text())
    annotations = type_checking_only(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{name or path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DB_CALLS:
            found.append(f"{where} calls .{node.func.attr}(")
        elif isinstance(node, ast.Name) and node.id in DB_NAMES and not isinstance(node.ctx, ast.Store):
            found.append(f"{where} uses {node.id}")
        elif isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in annotations:
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            names = [a.name for a in node.names]
            tops = {n.split(".")[0] for n in (names if isinstance(node, ast.Import) else [module.lstrip(".")])}
            if (
                tops & SQL
                or module.endswith(("store.models", "store.driver", ".models", ".driver"))
                and "store" in (module + str(path))
            ):
                found.append(f"{where} imports {module or names}")
            if set(names) & DB_NAMES:
                found.append(f"{where} imports {sorted(set(names) & DB_NAMES)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_TEXT.match(node.value):
            found.append(f"{where} holds SQL {node.value[:30]!r}")
    return found


def test_only_the_store_touches_a_database():
    """Item 1 of the house: the store is the one door. Outside memory_core/store/ nothing opens a
    session or a driver, runs or writes a statement, imports a row model, or holds SQL, with no
    allow-list; the use cases call typed store functions with the transaction they were handed."""
    touching = [t for path in outside_the_store() for t in database_touches(path)]
    assert touching == []


def test_the_database_check_sees_what_it_forbids(tmp_path):
    """The check above can fail: each thing it forbids, written in a file, is found."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from sqlmodel import Session\nfrom memory_core.store.driver import driver_of\n"
        "def f(s, db):\n    s.add(1)\n    db.rows('x', {})\n    db.change('x', {})\n    s.exec(2)\n"
        "    q = 'SELECT id FROM run WHERE id = :r'\n"
    )
    found = database_touches(bad, "bad.py")
    kinds = " ".join(found)
    for expected in ("sqlmodel", "Session", "driver_of", ".add(", ".rows(", ".change(", ".exec(", "SQL"):
        assert expected in kinds, (expected, found)


def test_only_the_house_opens_a_database():
    """The layers above the store get their database through store/transactions.py: none of
    them makes an engine or a transaction itself, so no use case holds an engine."""
    opening = ("memory_core.store.database",)
    found = [
        (path.relative_to(CORE).as_posix(), name)
        for package in ("usecases", "views", "format", "agents")
        for path in modules(CORE / package)
        for name in core_imports(path)
        if name.startswith(opening)
    ]
    assert found == []
    uses = [
        path.name for path in modules(CORE / "usecases") if ".engine" in path.read_text().replace("database.engine", "")
    ]
    assert uses == [], "a use case reaches the engine itself"
    # and no family of use cases names a transaction's or the database's type: it uses what
    # store/repository.py hands it (the facade alone, which makes the Database, names it)
    named = re.compile(r"\b(Tx|Db|Database|Engine|Session)\b|store\.(transactions|database)")
    families = [p for p in modules(CORE / "usecases") if p.name != "facade.py"]
    naming = [
        f"{p.name}:{i}" for p in families for i, line in enumerate(p.read_text().splitlines(), 1) if named.search(line)
    ]
    assert naming == []


def test_pages_touch_no_sql_and_core_imports_no_streamlit():
    for path in [ROOT / "app.py", *(ROOT / "pages").glob("*.py")]:
        tops = {n.split(".")[0] for n in imported(path)}
        assert not tops & SQL, path
        assert not {n for n in imported(path) if layer(n) == "store" and n != "memory_core.store"}, path
    for path in modules(CORE):
        assert "streamlit" not in {n.split(".")[0] for n in imported(path)}, path


PAGE_LINES = 300


def test_pages_only_lay_out_in_at_most_300_lines_and_their_helpers_450():
    """A page script (pages/*.py) is layout: at most PAGE_LINES lines; a page helper (pages/_*.py)
    at most MAX_LINES, as every module."""
    long = {}
    for path in sorted((ROOT / "pages").glob("*.py")):
        n = len(path.read_text().splitlines())
        if n > (MAX_LINES if path.name.startswith("_") else PAGE_LINES):
            long[path.name] = n
    assert long == {}


def test_no_module_is_over_the_limit_and_the_package_shows_its_layers():
    long = {
        p.relative_to(CORE).as_posix(): n for p in modules(CORE) if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
    assert {p.name for p in CORE.iterdir() if (p / "__init__.py").exists()} == set(ALLOWED)
