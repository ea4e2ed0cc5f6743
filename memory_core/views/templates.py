"""pyvis's page templates, compiled once a process, with the libraries they inline put in after
rendering (viz.to_html): the drawing's HTML without a pyvis Network object."""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARK = re.compile(r"<!--inline (lib/[\w./-]+)-->")


def mark(name: str) -> str:
    return f"<!--inline {name}-->"


@functools.lru_cache(maxsize=1)
def pyvis_templates() -> str:
    """The folder of pyvis's templates and the libraries they inline."""
    spec = importlib.util.find_spec("pyvis")
    assert spec is not None and spec.submodule_search_locations, "pyvis is not installed"
    return str(Path(next(iter(spec.submodule_search_locations))) / "templates")


@functools.lru_cache(maxsize=2)
def templates(folder: str) -> Any:
    """pyvis's templates, compiled once a process, escaping every value they print. pyvis makes a new
    environment for every network, so its page was parsed anew for every drawing; and the libraries
    it inlines (vis-network: 700 kB) stand in the page as a mark, put in after rendering, so the
    template engine never reads them as templates (that took most of a first drawing's HTML, B8)."""
    from jinja2 import Environment, FileSystemLoader

    class Inline(FileSystemLoader):
        def get_source(self, environment: Any, template: str) -> tuple[str, str, Callable[[], bool]]:
            if template.startswith("lib/"):
                return mark(template), template, lambda: True
            return super().get_source(environment, template)

    return Environment(loader=Inline(folder), autoescape=True)


@functools.lru_cache(maxsize=8)
def library(folder: str, name: str) -> str:
    """A library pyvis inlines, as its template would include it."""
    return (Path(folder) / name).read_text(encoding="utf-8")
