"""Reads typed to the page (#37): a page reads the facade's answers through `pages._ui.read`, typed as
the use case declares them, so a wrong key, a wrong argument or a wrong use case fails mypy on the
page, as it would on the facade. A small page file is generated and checked by the project's mypy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import syntax

ROOT = Path(__file__).resolve().parent.parent
PAGE = """
from memory_core import MemoryService
from pages._ui import Context, read, read_or_refusal


def shown(ctx: Context) -> str:
    return {line}
"""


def mypy(tmp_path: Path, line: str) -> str:
    page = tmp_path / "a_page.py"
    page.write_text(PAGE.format(line=line))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", str(page)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout


pytestmark = pytest.mark.backend_free


def test_a_page_that_reads_what_the_use_case_answers_passes_mypy(tmp_path):
    assert "Success" in mypy(tmp_path, 'read(ctx, MemoryService.runs, "acme")[0]["surface"]')


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('read(ctx, MemoryService.runs, "acme")[0]["surfce"]', '"surfce" is not a valid TypedDict key'),
        ('read(ctx, MemoryService.run_detail, "acme", "r1")["turns"][0]["stauts"]', '"stauts" is not a valid'),
        ('read(ctx, MemoryService.runs, 7)[0]["surface"]', 'incompatible type "int"'),
        ('read(ctx, MemoryService.runs, "acme", limit=3)[0]["surface"]', 'Unexpected keyword argument "limit"'),
        ('str(read_or_refusal(ctx, MemoryService.get_settings, "acme", by="dana")["NoMemoryShortcuts"])', "index"),
    ],
)
def test_a_wrong_key_or_argument_on_a_page_fails_mypy(tmp_path, line, error):
    assert error in mypy(tmp_path, line)


def any_in_signatures(files: list[Path]) -> list[str]:
    """Each function of `files` whose parameters or return are annotated with `Any`."""
    import ast

    found = []
    for f in files:
        for node in ast.walk(syntax.tree(f)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                notes = [a.annotation for a in args if a.annotation] + ([node.returns] if node.returns else [])
                if any("Any" in ast.unparse(n) for n in notes):
                    found.append(f"{f.parent.name}/{f.name}:{node.lineno} {node.name}")
    return found


def test_no_any_in_the_signatures_of_views_and_pages(tmp_path):
    """#37: views and pages speak in the use cases' shapes (or `JSON`, `Mapping[str, object]`), never `Any`;
    a function written with `Any` is found."""
    files = sorted((ROOT / "memory_core" / "views").glob("*.py")) + sorted((ROOT / "pages").glob("*.py"))
    assert any_in_signatures(files) == []
    bad = tmp_path / "bad.py"
    bad.write_text("from typing import Any\n\n\ndef f(x: dict[str, Any]) -> None:\n    pass\n")
    assert any_in_signatures([bad]) == [f"{tmp_path.name}/bad.py:4 f"]
