"""Permissions (R15, R28 to R30): who may do what, from their role ("owner", "member" or None)."""

from __future__ import annotations


def is_member(role: str | None) -> bool:
    """R28 (and starting a run): only members act in an organization."""
    return role is not None


def may_manage_settings(role: str | None) -> bool:
    """R15: only the owner reads and changes the settings, their audit and (docs/decisions.md) who signs in as whom."""
    return role == "owner"


def may_correct(graph: str) -> bool:
    """R28: World and User facts are corrected, Flow facts never."""
    return graph != "flow"


def may_retract(role: str | None, graph: str) -> bool:
    """R28: the owner retracts World facts; a person retracts their own User facts."""
    return graph != "world" or role == "owner"


def may_delete_run(*, by: str, runs_person: str | None, role: str | None) -> bool:
    """R29: the run's person or the organization's owner deletes a run."""
    return by == runs_person or role == "owner"


def may_delete_account(owned: list[str]) -> bool:
    """R30: an owner's account cannot be deleted."""
    return not owned
