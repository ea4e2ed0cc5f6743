"""Permissions as pure rules (R15, R28 to R30): the decisions the use cases apply."""

from __future__ import annotations

import pytest

from memory_core.rules.permissions import (
    is_member,
    may_correct,
    may_delete_account,
    may_delete_run,
    may_manage_settings,
    may_retract,
)

pytestmark = pytest.mark.backend_free  # no test database: the same on every backend


def test_r15_only_the_owner_manages_settings():
    assert may_manage_settings("owner")
    assert not may_manage_settings("member") and not may_manage_settings(None)


def test_r28_members_correct_world_and_user_facts_never_flow_and_only_the_owner_retracts_world():
    assert is_member("member") and is_member("owner") and not is_member(None)
    assert may_correct("world") and may_correct("user") and not may_correct("flow")
    assert may_retract("owner", "world") and not may_retract("member", "world")
    assert may_retract("member", "user") and may_retract(None, "user")


def test_r29_the_runs_person_or_the_owner_deletes_a_run():
    assert may_delete_run(by="lee", runs_person="lee", role="member")
    assert may_delete_run(by="dana", runs_person="lee", role="owner")
    assert not may_delete_run(by="kim", runs_person="lee", role="member")
    assert not may_delete_run(by="kim", runs_person=None, role=None)


def test_r30_an_owners_account_is_not_deleted():
    assert may_delete_account([]) and not may_delete_account(["acme"])
