"""Use cases of erasure: delete a run (R29) or an account (R30), and the scrub that follows (R31)."""

from __future__ import annotations

from typing import cast

from .. import errors as E
from ..rules.permissions import may_delete_account, may_delete_run
from ..store import moments, queries
from ..store.erasure import erase_account, erase_run
from ..store.repository import Repository
from . import shapes as sh
from .results import AccountDeleted, RunDeleted


class Erasure(Repository):
    """Use cases of erasure."""

    def erasure_status(self) -> sh.ErasureStatus:
        """R31: whether every deletion's text is out of the database files yet."""
        return self.finish_erasure(0.0)  # waits for nothing

    def finish_erasure(self, timeout: float | None = None) -> sh.ErasureStatus:
        """Wait for the background scrub of deletions (R31), then say where it stands."""
        return cast(sh.ErasureStatus, self.database.finish_erasure(timeout))

    def delete_run(self, run_id: str, *, by: str) -> RunDeleted:
        """R29: the run's person or the owner erases a run; its World and User weights stay."""
        with self.database.transaction() as s:
            run = self._run(s, run_id)
            self._person(s, by)
            if not may_delete_run(by=by, runs_person=run.person_id, role=queries.role(s, by, run.org_id)):
                raise E.NotAllowed.deleting_run(run_id, run.org_id)
            if run.ended:  # R17 as written: any event on an ended run, deletion included
                raise E.EndedRun(run_id, then="R17 refuses any later event on it, deletion included")
            n = moments.take_moment(s)
            summary = erase_run(s, run)
            moments.mark(s, n, "run_deleted", org=run.org_id, person=by)  # R33: not the erased run's id
        return RunDeleted.model_validate({**summary, "bytes_gone": self.database.scrub_after()})

    def delete_account(self, person_id: str) -> AccountDeleted:
        """R30: delete a person's User graph and memberships; their runs stay without them."""
        with self.database.transaction() as s:
            person = self._person(s, person_id)
            owned = queries.owned_orgs(s, person_id)
            if not may_delete_account(owned):
                raise E.NotAllowed.deleting_owner(person_id, owned)
            n = moments.take_moment(s)
            summary = erase_account(s, person)
            moments.mark(s, n, "account_deleted")
        return AccountDeleted.model_validate({**summary, "bytes_gone": self.database.scrub_after()})
