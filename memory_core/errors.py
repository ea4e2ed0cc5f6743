"""Errors of memory_core: one base, a format error, and one refusal class per reason."""

from __future__ import annotations


class MemoryCoreError(Exception):
    """Base of every error memory_core raises on purpose."""


class FormatError(MemoryCoreError):
    """Input that is not of the format: names the place (JSON path or line:column) and the problem."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}" if path else problem)


class DatabaseNotEmpty(MemoryCoreError):
    """A replay or load was pointed at a database that already holds memory."""


class Refusal(MemoryCoreError):
    """An action the rules do not allow. It changed nothing; `reason` is the format's code."""

    reason = "refused"

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(f"{self.reason}: {message}")


def _refusal(name: str, code: str) -> type[Refusal]:
    return type(name, (Refusal,), {"reason": code, "__doc__": f"Refused with `{code}`."})


NotOffered = _refusal("NotOffered", "not_offered")
BudgetExhausted = _refusal("BudgetExhausted", "budget_exhausted")
NotOwner = _refusal("NotOwner", "not_owner")
NotAllowed = _refusal("NotAllowed", "not_allowed")
NotMember = _refusal("NotMember", "not_member")
InvalidSetting = _refusal("InvalidSetting", "invalid_setting")
UnknownOrg = _refusal("UnknownOrg", "unknown_org")
UnknownPerson = _refusal("UnknownPerson", "unknown_person")
UnknownWorkflow = _refusal("UnknownWorkflow", "unknown_workflow")
UnknownStep = _refusal("UnknownStep", "unknown_step")
UnknownRun = _refusal("UnknownRun", "unknown_run")
UnknownTurn = _refusal("UnknownTurn", "unknown_turn")
UnknownFact = _refusal("UnknownFact", "unknown_fact")
DuplicateId = _refusal("DuplicateId", "duplicate_id")
TurnNotOpen = _refusal("TurnNotOpen", "turn_not_open")
RunEnded = _refusal("RunEnded", "run_ended")
NestedOpen = _refusal("NestedOpen", "nested_open")
NestedNotOpen = _refusal("NestedNotOpen", "nested_not_open")

REASONS: dict[str, type[Refusal]] = {
    cls.reason: cls
    for cls in (
        NotOffered,
        BudgetExhausted,
        NotOwner,
        NotAllowed,
        NotMember,
        InvalidSetting,
        UnknownOrg,
        UnknownPerson,
        UnknownWorkflow,
        UnknownStep,
        UnknownRun,
        UnknownTurn,
        UnknownFact,
        DuplicateId,
        TurnNotOpen,
        RunEnded,
        NestedOpen,
        NestedNotOpen,
    )
}
