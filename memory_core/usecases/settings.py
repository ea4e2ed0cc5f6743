"""Use cases of settings (R11 to R16): the owner reads and changes them; every change is audited."""

from __future__ import annotations

from datetime import UTC, datetime

from .. import errors as E
from ..rules.permissions import may_manage_settings
from ..rules.settings import SETTING_BY_NAME, settings_problem
from ..store import moments, organizations, queries
from ..store.snapshot import settings_of
from . import shapes as sh
from .base import Obj, UseCases
from .results import SettingChange, SettingsChanged


class OrgSettings(UseCases):
    """Use cases of settings (R11 to R16)."""

    def get_settings(self, org_id: str, *, by: str) -> dict[str, bool]:
        """R15: the owner reads the four settings."""
        with self.database.transaction(write=False) as s:
            org = self._org(s, org_id)
            self._person(s, by)
            if not may_manage_settings(queries.role(s, by, org_id)):
                raise E.NotOwner(org_id, does="reads its settings (R15)")
            return settings_of(org)

    def set_settings(self, org_id: str, *, by: str, settings: Obj) -> SettingsChanged:
        """R15: the owner changes settings; the change is checked as a whole and audited."""
        with self.database.transaction() as s:
            org = self._org(s, org_id)
            self._person(s, by)
            if not may_manage_settings(queries.role(s, by, org_id)):
                raise E.NotOwner(org_id, does="changes its settings (R15)")
            problem = settings_problem(settings)
            if problem:
                raise E.InvalidSetting(problem)
            at = datetime.now(UTC).isoformat(timespec="seconds")
            changed: list[SettingChange] = []
            n = moments.take_moment(s)
            for name, value in settings.items():
                old = bool(getattr(org, SETTING_BY_NAME[name].column))
                if organizations.change_setting(s, org_id, name, value, by=by, at=at, moment=n):
                    changed.append(SettingChange(name, old, value))
            if changed:  # R32: a change of settings is a moment; asking for what already holds is not
                detail = ", ".join(f"{c.setting} {'on' if c.new else 'off'}" for c in changed)
                moments.mark(s, n, "settings", org=org_id, person=by, detail=detail)
            return SettingsChanged(settings=settings_of(self._org(s, org_id)), changed=tuple(changed))

    def audit(self, org_id: str) -> list[sh.AuditRow]:
        """Every settings change of an organization: who, when, from, to (R15)."""
        with self.database.transaction(write=False) as s:
            rows = queries.audit_rows(s, org_id)
            return [{"by": a.by, "at": a.at, "setting": a.setting, "from": a.old, "to": a.new} for a in rows]
