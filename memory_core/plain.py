"""Plain data, as JSON holds it: the one name every layer uses for an object read from or written to
a scenario, a state, an event or a tool's arguments. Reads the pages and tools consume have their own
declared shapes (usecases/shapes.py); this is for what is JSON by nature."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
