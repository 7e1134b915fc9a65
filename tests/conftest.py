"""Shared fixtures. Tests run on PostgreSQL when DATABASE_URL points there (CI does), else SQLite;
Redis-backed behaviour is tested against real Redis when REDIS_URL is set."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from deals import services
from mcp_tools import resilience
from tests.factories import AccountFactory, MembershipFactory, UserFactory


@pytest.fixture(autouse=True)
def _isolated_state(settings):
    """Generous rate limits (throttle tests lower them), an empty cache and a closed breaker."""
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    settings.LEV_RATE_LIMIT_WRITES = "100000/min"
    settings.LEV_RETRY_BACKOFF_BASE_MS = 1  # keep retry tests quick; the policy is unit-tested
    cache.clear()
    resilience.reset_breaker()
    yield
    resilience.reset_breaker()


@pytest.fixture
def account(db):
    return AccountFactory(name="Acme Capital", slug="acme")


@pytest.fixture
def user(account):
    member = MembershipFactory(account=account, user=UserFactory(username="alice"))
    return member.user


@pytest.fixture
def api_key(user, account):
    """The raw API key of `user` in `account`."""
    _key, raw = services.api_key_create(user=user, account=account, name="test")
    return raw


def client_with_key(raw_key: str) -> APIClient:
    """A REST client sending `Authorization: Bearer <raw_key>`."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client


@pytest.fixture
def api(api_key):
    return client_with_key(api_key)


@pytest.fixture
def other_account(db):
    return AccountFactory(name="Rival Holdings", slug="rival")


@pytest.fixture
def other_api(other_account):
    member = MembershipFactory(account=other_account, user=UserFactory(username="mallory"))
    _key, raw = services.api_key_create(user=member.user, account=other_account, name="test")
    return client_with_key(raw)
