"""Use cases of settings (R11 to R16): the owner reads and changes them; every change is audited."""

from __future__ import annotations

from datetime import UTC, datetime

from .. import errors as E
from ..plain import Obj
from ..rules.settings import settings_problem
from ..store import moments, queries
from ..store.repository import Repository
from ..store.snapshot import settings_of
from . import shapes as sh
from .results import SettingChange, SettingsChanged


class OrgSettings(Repository):
    """Use cases of settings (R11 to R16)."""

    def get_settings(self, org_id: str, *, by: str | None = None) -> dict[str, bool]:
        """R15: the owner reads the four settings (or the command line, `by` None)."""
        with self.database.transaction(write=False) as s:
            self._owner_or_cli(s, org_id, by, "reads its settings (R15)")
            return settings_of(self._org(s, org_id))

    def set_settings(self, org_id: str, *, by: str, settings: Obj) -> SettingsChanged:
        """R15: the owner changes settings; the change is checked as a whole and audited."""
        with self.database.transaction() as s:
            self._owner_or_cli(s, org_id, by, "changes its settings (R15)")
            problem = settings_problem(settings)
            if problem:
                raise E.InvalidSetting(problem)
            at = datetime.now(UTC).isoformat(timespec="seconds")
            changed: list[SettingChange] = []
            n = moments.take_moment(s)
            for name, value in settings.items():  # each a boolean (R15): one that changed was the other
                if queries.change_setting(s, org_id, name, value, by=by, at=at, moment=n):
                    changed.append(SettingChange(setting=name, old=not value, new=value))
            if changed:  # R32: a change of settings is a moment; asking for what already holds is not
                detail = ", ".join(f"{c.setting} {'on' if c.new else 'off'}" for c in changed)
                moments.mark(s, n, "settings", org=org_id, person=by, detail=detail)
            return SettingsChanged(settings=settings_of(self._org(s, org_id)), changed=tuple(changed))

    def audit(self, org_id: str, *, by: str | None = None) -> list[sh.AuditRow]:
        """R15: every settings change of an organization (who, when, from, to), for its owner (or the CLI)."""
        with self.database.transaction(write=False) as s:
            self._owner_or_cli(s, org_id, by, "reads its settings' audit (R15)")
            rows = queries.audit_rows(s, org_id)
            return [{"by": a.by, "at": a.at, "setting": a.setting, "from": a.old, "to": a.new} for a in rows]
