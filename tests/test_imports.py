"""The house's layers, read from the imports: pages -> facade/views -> use cases -> rules and store.

Rules import nothing of the store; the store imports no use case; only the store touches a
database; `memory_core` never imports Streamlit; pages never import SQL libraries.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import syntax

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
    # the MCP server: an adapter over the facade, arguments checked by the format, weights rounded as R22 rounds them
    "agents": {"format", "usecases", "rules.weights"},
}


def modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "migrations" not in p.parts)


def imported(path: Path) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved against its package)."""
    package = list(path.relative_to(ROOT).with_suffix("").parts)
    package = package[:-1]
    names: set[str] = set()
    for node in ast.walk(syntax.tree(path)):
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


#: The store's internals: the modules where a database is opened, a transaction begun, a statement
#: written or a row defined. Outside memory_core/store/ nobody imports them, but for what follows;
#: of the rest of the store, each layer imports what ALLOWED lets it, pages and adapters nothing.
STORE = "memory_core.store"
INTERNALS = {
    "database",
    "dialect",
    "driver",
    "transactions",
    "repository",
    "models",
    "template",
    "pg_scrub",
    "bulk",
    "standby",
}
#: The use cases take their transactions from the database's handle (the facade makes it, the
#: families get it through their base): they may import it, and only they may reach it.
TRANSACTION = {"transactions", "repository"}
HANDLE = "database"  # the facade's attribute holding the handle (`service.database`)
#: The entry points make, migrate and fill a whole database: the package's API, the command line,
#: the generator and the launcher may import these of the store.
ENTRY_POINTS = {"__init__.py", "__main__.py", "setup_cli.py", "generate.py", "serve.py"}
OPERATIONS = {"database", "dialect", "bulk"}
SQL_TEXT = re.compile(
    r"^\s*(select\s.+\sfrom\s|insert\s+into\s|update\s+\w+\s+set\s|delete\s+from\s|pragma\s+\w+|"
    r"create\s+(unique\s+)?(table|index)\s|alter\s+table\s|drop\s+(table|index)\s|with\s+\w+\s+as\s*\()",
    re.I | re.S,
)
SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)


def outside_the_store() -> list[Path]:
    """Every module of ours but the store's: the package's other layers, pages, the app, the launcher."""
    ours = [p for p in modules(CORE) if not p.relative_to(CORE).as_posix().startswith("store/")]
    return [*ours, *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py", ROOT / "serve.py"]


def may_import(path: Path) -> set[str]:
    """The store's modules a file outside the store may import: what its layer may (ALLOWED), of
    which the internals only the transaction's for a use case; a whole database's operations for
    an entry point; none for a page or an adapter."""
    if path.name in ENTRY_POINTS and path.parent in (ROOT, CORE):
        return OPERATIONS
    parts = path.relative_to(path_root(path)).parts
    below = ALLOWED.get(parts[1], set()) if parts[0] == "memory_core" and len(parts) > 2 else set()
    if "store" in below:
        return {p.stem for p in (CORE / "store").glob("*.py")} - INTERNALS | TRANSACTION
    return {name.split(".")[1] for name in below if name.startswith("store.")}


def forbidden(module: str, allowed: set[str]) -> bool:
    """Whether a module is a database library or a module of the store not allowed here."""
    parts = module.split(".")
    return parts[0] in SQL or module.startswith(STORE + ".") and parts[2] not in allowed


def type_checking_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes under `if TYPE_CHECKING:` (annotations only: they run no statement)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            found |= {id(n) for n in ast.walk(node)}
    return found


def aliases(path: Path, tree: ast.Module) -> dict[str, str]:
    """What each name a file binds by importing stands for (`store` -> `memory_core.store`)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {
                (a.asname or a.name).split(".")[0]: a.name if a.asname else a.name.split(".")[0] for a in node.names
            }
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name: f"{absolute(path, node)}.{a.name}" for a in node.names}
    return names


def absolute(path: Path, node: ast.ImportFrom) -> str:
    """The module an import names, a relative one resolved against the file's package."""
    package = list(path.relative_to(path_root(path)).with_suffix("").parts)[:-1]
    base = package[: len(package) - node.level + 1] if node.level else []
    return ".".join([*base, *([node.module] if node.module else [])])


def path_root(path: Path) -> Path:
    """The folder a file's module names start from: the project's, or the one holding its package."""
    return next((p.parent for p in path.parents if p.name in ("memory_core", "pages")), path.parent)


def reached(node: ast.AST, names: dict[str, str]) -> str | None:
    """The module a node reaches: an `importlib.import_module("...")` or `__import__` of a
    constant, a `getattr` of an imported name, or an attribute path from one (`store.queries`)."""
    if isinstance(node, ast.Call):
        call, args = ast.unparse(node.func), node.args
        constants = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in args]
        if call.split(".")[-1] in ("import_module", "__import__"):
            return constants[0] if constants and constants[0] else "<computed>"
        if call == "getattr" and len(args) > 1 and constants[1] and ast.unparse(args[0]) in names:
            return f"{names[ast.unparse(args[0])]}.{constants[1]}"
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name | ast.Attribute):
        head, _, rest = ast.unparse(node).partition(".")
        return f"{names[head]}.{rest}" if head in names else None
    return None


def database_touches(path: Path, name: str | None = None) -> list[str]:
    """Where a file outside the store reaches a database itself: a database library or a store's
    internal module (imported, reached by attribute or imported by name at run time), the handle
    the use cases take their transactions from, or SQL text (behind a comment too)."""
    tree = syntax.tree(path)
    annotations = type_checking_only(tree)
    names = aliases(path, tree)
    allowed = may_import(path)
    found = []
    for node in ast.walk(tree):
        if id(node) in annotations:
            continue
        where = f"{name or path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules_ = [a.name for a in node.names] if isinstance(node, ast.Import) else [absolute(path, node)]
            if isinstance(node, ast.ImportFrom):
                modules_ += [f"{modules_[0]}.{a.name}" for a in node.names]
            found += [f"{where} imports {m}" for m in modules_ if forbidden(m, allowed)]
        elif (module := reached(node, names)) is not None and (module == "<computed>" or forbidden(module, allowed)):
            found.append(f"{where} reaches {module}")
        elif isinstance(node, ast.Attribute) and node.attr == HANDLE and not TRANSACTION <= allowed:
            found.append(f"{where} reaches the database's handle .{HANDLE}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and sql(node.value):
            found.append(f"{where} holds SQL {node.value[:30]!r}")
    return found


def sql(text: str) -> bool:
    """Whether a string is an SQL statement, its comments aside."""
    return bool(SQL_TEXT.match(SQL_COMMENT.sub("", text)))


def test_only_the_store_touches_a_database():
    """Item 1 of the house: the store is the one door. Outside memory_core/store/ nothing imports a
    database library or the store's internals, reaches the database's handle or holds SQL; the use
    cases call typed store functions with the transaction they were handed."""
    touching = [t for path in outside_the_store() for t in database_touches(path)]
    assert touching == []


#: Ways past the store a page could take, each with what the check says of it.
LEAKS = {
    "a database library": ("from sqlmodel import select\n", "imports sqlmodel"),
    "a store's internal module": (
        "from memory_core.store.driver import driver_of\n",
        "imports memory_core.store.driver",
    ),
    "the store's statements by attribute": (
        "from memory_core import store\n\ndef f():\n    return store.queries\n",
        "reaches memory_core.store.queries",
    ),
    "the handle's transaction": (
        "def page(service):\n    with service.database.transaction() as tx:\n        return tx\n",
        ".database",
    ),
    "the store through importlib": (
        "import importlib\n\nq = importlib.import_module('memory_core.store.queries')\n",
        "reaches memory_core.store.queries",
    ),
    "the store through getattr": (
        "from memory_core import store\n\nq = getattr(store, 'queries')\n",
        "reaches memory_core.store.queries",
    ),
    "a computed import": ("n = 'memory_core.store' + '.queries'\nq = __import__(n)\n", "reaches <computed>"),
    "SQL behind a comment": ("q = '-- the runs\\nSELECT id FROM run WHERE id = :r'\n", "holds SQL"),
    "SQL behind a block comment": ("q = '/* the runs */ DELETE FROM run'\n", "holds SQL"),
}


@pytest.mark.parametrize("leak", sorted(LEAKS))
def test_the_database_check_sees_each_leak(tmp_path, leak):
    """The check above can fail: each way past the store, written in a page, is found for what it is."""
    source, said = LEAKS[leak]
    bad = tmp_path / "pages" / "leak_page.py"
    bad.parent.mkdir()
    bad.write_text(source)
    assert any(said in found for found in database_touches(bad, "leak_page.py")), leak
    bad.write_text(
        "from memory_core import MemoryService\n\ndef page(service: MemoryService):\n    return service.runs()\n"
    )
    assert database_touches(bad, "leak_page.py") == []  # a page that asks the facade passes


def test_only_the_store_opens_a_database():
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


def test_the_use_cases_take_the_transaction_and_nothing_else_of_the_database(tmp_path):
    """A use case may import the handle's module and reach it; the engine's module it may not."""
    family = tmp_path / "memory_core" / "usecases" / "family.py"
    family.parent.mkdir(parents=True)
    family.write_text("from ..store.repository import Repository\n\ndef f(d):\n    return d.database.transaction()\n")
    assert database_touches(family, "family.py") == []
    family.write_text("from ..store.database import make_engine\n")
    assert database_touches(family, "family.py") != []


def test_pages_touch_no_sql_and_core_imports_no_streamlit():
    for path in [ROOT / "app.py", *(ROOT / "pages").glob("*.py")]:
        tops = {n.split(".")[0] for n in imported(path)}
        assert not tops & SQL, path
        assert not {n for n in imported(path) if n.startswith(STORE)}, path
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


def classes_defined_twice(files: list[Path]) -> dict[str, list[str]]:
    """Class names defined in more than one place among `files` (top-level classes)."""
    import ast

    where: dict[str, list[str]] = {}
    for f in files:
        for node in syntax.tree(f).body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(f"{f.parent.name}/{f.name}")
    return {name: places for name, places in where.items() if len(places) > 1}


def test_each_class_name_is_defined_once(tmp_path):
    """#37: one model family per concept: a table keeps the plain name, a format entry is `...Entry`, a read's
    shape `...Public`; a second class of a name already taken is found."""
    product = [ROOT / "app.py", ROOT / "serve.py", *sorted((ROOT / "pages").glob("*.py"))]
    product += [f for f in sorted((ROOT / "memory_core").rglob("*.py")) if "migrations" not in f.parts]
    assert classes_defined_twice(product) == {}
    again = tmp_path / "again.py"
    again.write_text("class Moment:\n    pass\n")
    assert classes_defined_twice([*product, again])["Moment"][-1] == f"{tmp_path.name}/again.py"
