"""The words of the rules: graphs, world kinds, turn end statuses, surfaces, step kinds, read calls."""

from __future__ import annotations

WORLD_KINDS = ("person", "place", "organization", "event", "idea")
GRAPHS = ("world", "user", "flow")
TURN_END_STATUSES = ("completed", "failed", "cancelled")
SURFACES = ("workflow", "search")
STEP_KINDS = ("model", "tool", "person")
WORK_PREFIXES = ("workflow:", "agent:", "debater:")
READ_CALLS = ("GraphResolve", "GraphExpand", "GraphSource")
