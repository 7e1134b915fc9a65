"""API keys are issued only for accounts the user belongs to."""

from __future__ import annotations

import pytest

from lev.accounts.models import ApiKey
from lev.accounts.services import api_key_create
from lev.errors import BusinessRuleViolation
from tests.factories import AccountFactory, MembershipFactory, UserFactory


def test_a_key_for_an_account_the_user_is_not_a_member_of_is_refused(db):
    mine = AccountFactory(slug="mine")
    theirs = AccountFactory(slug="theirs")
    user = MembershipFactory(account=mine, user=UserFactory(username="outsider")).user
    with pytest.raises(BusinessRuleViolation) as refused:
        api_key_create(user=user, account=theirs, name="sneaky")
    assert refused.value.customer_message == "API keys can only be issued for an account the user belongs to."
    assert not ApiKey.objects.exists()
    # Their own account is fine.
    key, raw = api_key_create(user=user, account=mine, name="mine")
    assert key.account == mine and raw.startswith("lev_sk_")
