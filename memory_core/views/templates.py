"""pyvis's page templates, compiled once a process, their libraries put in after rendering (viz.to_html)."""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Environment

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
def templates(folder: str) -> Environment:
    """pyvis's templates compiled once, escaping every value; inlined libraries left as marks (B8)."""
    from jinja2 import Environment, FileSystemLoader

    class Inline(FileSystemLoader):
        def get_source(self, environment: Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
            if template.startswith("lib/"):
                return mark(template), template, lambda: True
            return super().get_source(environment, template)

    env = Environment(loader=Inline(folder), autoescape=True)
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}  # smaller
    return env


#: The part of a file pyvis inlines that the drawing uses (B8: the page is sent on every drawing): of vis-network's
#: 220 kB stylesheet its tooltip; none of pyvis's bindings (highlight and menus are off).
USED = {
    "lib/bindings/utils.js": "",
    "lib/vis-9.1.2/vis-network.css": (
        "div.vis-tooltip{background-color:#f5f4ed;border:1px solid #808074;border-radius:3px;"
        "box-shadow:3px 3px 10px rgba(0,0,0,.2);color:#000;font-family:verdana;font-size:14px;padding:5px;"
        "pointer-events:none;position:absolute;visibility:hidden;white-space:nowrap;z-index:5}"
    ),
}


@functools.lru_cache(maxsize=8)
def library(folder: str, name: str) -> str:
    """A library pyvis inlines, as its template would include it, or the part of it the drawing uses."""
    if name in USED:
        return USED[name]
    return (Path(folder) / name).read_text(encoding="utf-8")
