"""An organization's settings in the store (R15, R16): changed in place, each change audited."""

from __future__ import annotations

from sqlmodel import Session

from ..rules.settings import SETTING_BY_NAME
from .models import Organization, SettingsAudit


def change_setting(s: Session, org_id: str, name: str, value: bool, *, by: str, at: str, moment: int) -> bool:
    """Set one setting; True (and audited: who, when, from, to) when it changed."""
    org = s.get(Organization, org_id)
    assert org is not None
    column = SETTING_BY_NAME[name].column
    old = bool(getattr(org, column))
    if old == value:
        return False
    setattr(org, column, value)
    s.add(org)
    s.add(SettingsAudit(org_id=org_id, by=by, at=at, setting=name, old=old, new=value, moment=moment))
    return True
