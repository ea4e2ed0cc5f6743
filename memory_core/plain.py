"""`Obj`: a JSON object (a scenario, a state, an event, a tool's arguments); reads have shapes (usecases/shapes.py)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
