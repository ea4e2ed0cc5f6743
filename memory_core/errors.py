"""Errors of memory_core: one base, a format error, and one refusal class per reason that builds its own sentence."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Self


class MemoryCoreError(Exception):
    """Base of every error memory_core raises on purpose."""


class FormatError(MemoryCoreError):
    """Input that is not of the format: names the place (JSON path or line:column) and the problem."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}" if path else problem)


class DatabaseNotEmpty(MemoryCoreError):
    """A replay, load or generate was pointed at a database that already holds memory."""

    def __init__(self, where: str, command: str = "replay") -> None:
        super().__init__(f"{where} already holds memory; {command} into an empty database")


class Unreachable(MemoryCoreError):
    """A database server that cannot be reached (docs/scaling.md); `message` says what was not done."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class PrimaryUnreachable(Unreachable):
    """A change the primary cannot be reached for; `cut`: lost while it ran, so whether it committed is unknown."""

    def __init__(self, where: str, why: str, *, cut: bool = False, standby: str | None = None) -> None:
        done = (
            "the connection was lost while the change ran: look before doing it again" if cut else "nothing was written"
        )
        still = f"; reads still come from the standby {standby}" if standby else ""
        name = "the primary database" if standby else "the database"
        super().__init__(f"{name} {where} cannot be reached ({why}): {done}{still}")


class NoServerReachable(Unreachable):
    """A read found neither the primary nor its standby."""

    def __init__(self, primary: str, standby: str, why: str) -> None:
        super().__init__(f"neither the primary database {primary} nor its standby {standby} can be reached ({why})")


#: The first rule a sentence cites, as in "(R21)" or "(R4, R19)".
_CITED = re.compile(r"\((R\d+[a-z]?)\b")


class Refusal(MemoryCoreError):
    """An action the rules refuse, changing nothing: its class's `reason` and `rule` (unless its sentence cites one)."""

    reason = "refused"
    default_rule: str | None = "R20"

    def __init_subclass__(cls, *, reason: str, rule: str | None = "R20", **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls.reason, cls.default_rule = reason, rule

    def __init__(self, message: str) -> None:
        self.message = message
        cited = _CITED.search(message)
        self.rule = cited.group(1) if cited else self.default_rule
        super().__init__(f"{self.reason}: {message}")

    @classmethod
    def saying(cls, message: str) -> Self:
        """The refusal with a sentence its named constructor built (not its class's own)."""
        refusal = cls.__new__(cls)
        Refusal.__init__(refusal, message)
        return refusal

    def __reduce__(self) -> tuple[Any, ...]:  # a refusal crosses processes with its sentence
        return (type(self).saying, (self.message,))


class NotOffered(Refusal, reason="not_offered"):
    def __init__(self, *, within: str | None = None, step: str | None = None) -> None:
        who = f"nested work {within!r}" if within else f"step {step!r} (not a model step admitting calls)"
        super().__init__(f"graph reads are not offered to {who} (R4, R19)")
        self.rule = "R4" if within else "R19"


class BudgetExhausted(Refusal, reason="budget_exhausted", rule="R21"):
    def __init__(self, turn_id: str, cap: int | None) -> None:
        super().__init__(f"turn {turn_id!r} has used all {cap} of its MemoryProbes (R21)")


class NotOwner(Refusal, reason="not_owner", rule="R15"):
    """What only the owner does (R15, R28)."""

    def __init__(self, org_id: str, *, does: str) -> None:
        super().__init__(f"only the owner of {org_id!r} {does}")


class NotAllowed(Refusal, reason="not_allowed", rule="R28"):
    """Each way is a named constructor."""

    @classmethod
    def replacing_across_runs(cls, turn_id: str, *, its_run: str, run: str) -> Self:
        return cls.saying(f"turn {turn_id!r} belongs to run {its_run!r}, not {run!r} (R3)")

    @classmethod
    def replacing(cls, turn_id: str, status: str) -> Self:
        return cls.saying(f"turn {turn_id!r} is {status}; only an open or completed turn can be replaced (R3)")

    @classmethod
    def deleting_run(cls, run_id: str, org_id: str) -> Self:
        return cls.saying(f"only the run's person or the owner of {org_id!r} may delete run {run_id!r} (R29)")

    @classmethod
    def deleting_owner(cls, person_id: str, owned: Iterable[str]) -> Self:
        return cls.saying(f"{person_id!r} owns {', '.join(owned)}; an owner's account cannot be deleted (R30)")

    @classmethod
    def correcting_flow(cls) -> Self:
        return cls.saying("Flow facts are not corrected (R28)")

    @classmethod
    def disputing_again(cls, by: str) -> Self:
        return cls.saying(f"{by!r} has already disputed this fact; one dispute per person (R28)")

    @classmethod
    def identity_taken(cls, identity: str, *, org_id: str, person_id: str) -> Self:
        return cls.saying(
            f"in {org_id!r}, {identity} signs in as {person_id!r} already; one identity is one person there, "
            "who alone sees their User graph (R20): unlink it first"
        )


class NotMember(Refusal, reason="not_member"):
    """`so` says what membership was needed for."""

    def __init__(self, person_id: str, org_id: str, *, so: str) -> None:
        super().__init__(f"{person_id!r} is not a member of {org_id!r}{so}")

    @classmethod
    def unlinked(cls, identity: str) -> Self:
        """A signed-in identity that speaks for no member of any organization here."""
        return cls.saying(
            f"no person of this memory is linked to {identity}, so you act as no one here and see nothing of "
            "its memory (R20); the owner of your organization links you"
        )


class InvalidSetting(Refusal, reason="invalid_setting", rule="R15"):
    """The problem rules.settings.settings_problem found (R15)."""


class UnknownOrg(Refusal, reason="unknown_org"):
    def __init__(self, org_id: str) -> None:
        super().__init__(f"no organization has the id {org_id!r}")


class UnknownPerson(Refusal, reason="unknown_person", rule="R30"):
    """R30: a deleted account names no one."""

    def __init__(self, person_id: str, *, maybe_deleted: bool = True) -> None:
        hint = " (or their account was deleted, R30)" if maybe_deleted else ""
        super().__init__(f"no person has the id {person_id!r}{hint}")

    @classmethod
    def gone_from_run(cls, run_id: str) -> Self:
        return cls.saying(f"the person of run {run_id!r} deleted their account; no turn can open (R30)")

    @classmethod
    def signed_out(cls, person_id: str) -> Self:
        """A session signed in as a person whose account was deleted since."""
        return cls.saying(f"the account {person_id!r} you were signed in as was deleted (R30): you are signed out")

    @classmethod
    def no_source(cls, run_id: str) -> Self:
        return cls.saying(f"run {run_id!r} has no person any more to default the source to (R30)")


class UnknownWorkflow(Refusal, reason="unknown_workflow", rule=None):
    def __init__(self, org_id: str, workflow_id: str, *, known: Iterable[str] = ()) -> None:
        has = ", ".join(map(repr, known)) or "none"
        super().__init__(f"organization {org_id!r} has no workflow {workflow_id!r}; its workflows: {has}")


class UnknownStep(Refusal, reason="unknown_step", rule=None):
    def __init__(self, step: str, workflow_id: str | None) -> None:
        where = f"workflow {workflow_id!r}" if workflow_id else "no workflow (the run was started without one)"
        super().__init__(f"step {step!r} is not in the run's {where}")


class UnknownRun(Refusal, reason="unknown_run", rule=None):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run has the id {run_id!r} (or it was deleted, R29)")


class UnknownTurn(Refusal, reason="unknown_turn", rule=None):
    def __init__(self, turn_id: str) -> None:
        super().__init__(f"no turn has the id {turn_id!r} (or its run was deleted, R29)")


class NotThisSession(Refusal, reason="not_this_session", rule=None):
    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(f"{kind} {ident!r} was started by another session of yours; each session ends its own runs")


class UnknownFact(Refusal, reason="unknown_fact", rule="R28"):
    def __init__(self, fact_id: int) -> None:
        super().__init__(f"no fact has the id {fact_id}")

    @classmethod
    def in_graph(cls, graph: str, *, org_id: str, by: str) -> Self:
        where = f"the world graph of {org_id!r}" if graph == "world" else f"{by!r}'s user graph"
        return cls.saying(f"{where} has no such fact")


class DuplicateId(Refusal, reason="duplicate_id", rule="R29"):
    """Ids are never used twice, erased ones included (R29)."""

    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(f"the {kind} id {ident!r} is already used in this memory, perhaps by an erased {kind}")

    @classmethod
    def exists(cls, kind: str, ident: str) -> Self:
        return cls.saying(f"{kind} {ident!r} already exists")

    @classmethod
    def differs(cls, kind: str, ident: str, *, there: dict[str, Any], given: dict[str, Any]) -> Self:
        """An entry memory holds with another definition (a setup): the keys the file's differs in."""
        keys = ", ".join(k for k in given if there.get(k) != given[k])
        return cls.saying(f"{kind} {ident!r} already exists with another definition: the file's differs in {keys}")


#: Why a turn that is not open takes no more events, by its status (R1 to R3).
_NOT_OPEN = {"completed": "a turn ends and teaches once (R1)", "replaced": "a replaced turn teaches nothing (R3)"}


class TurnNotOpen(Refusal, reason="turn_not_open", rule="R1"):
    def __init__(self, turn_id: str, status: str) -> None:
        why = _NOT_OPEN.get(status, "an ended turn takes no more events (R2)")
        super().__init__(f"turn {turn_id!r} is {status}, not open: {why}")

    @classmethod
    def ended_meanwhile(cls, turn_id: str) -> Self:
        return cls.saying(f"turn {turn_id!r} ended (R2)")


class EndedRun(Refusal, reason="run_ended", rule="R17"):
    """R17; `then` says what an ended run no longer does."""

    def __init__(self, run_id: str, *, then: str = "nothing more happens in it (R17)") -> None:
        super().__init__(f"run {run_id!r} has ended; {then}")

    @classmethod
    def already(cls, run_id: str) -> Self:
        return cls.saying(f"run {run_id!r} has already ended (R17)")


class NestedOpen(Refusal, reason="nested_open", rule="R5"):
    def __init__(self, work: str, turn_id: str) -> None:
        super().__init__(f"{work!r} is already open in turn {turn_id!r}; return it first (R5)")

    @classmethod
    def still_held(cls, turn_id: str) -> Self:
        return cls.saying(f"turn {turn_id!r} still holds open nested work; return it first (R5)")


class NestedNotOpen(Refusal, reason="nested_not_open", rule="R5"):
    def __init__(self, work: str, turn_id: str) -> None:
        super().__init__(f"{work!r} is not open in turn {turn_id!r} (R5)")


class UnknownMoment(MemoryCoreError):
    """A moment of history (R32) that names nothing: what was given and what is there."""

    def __init__(self, given: str, problem: str) -> None:
        super().__init__(f"no moment {given!r}: {problem}")
