"""Shared fixtures. Tests run on PostgreSQL when DATABASE_URL points there (CI does), else SQLite;
Redis-backed behaviour is tested against real Redis when REDIS_URL is set."""

from __future__ import annotations

import os
import time
import uuid
from types import SimpleNamespace

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.db import connection, connections
from rest_framework.test import APIClient

from lev.accounts.credential_cache import credential_cache
from lev.accounts.services import api_key_create
from lev.throttling import reset_leases
from mcp_tools import resilience
from tests.factories import AccountFactory, MembershipFactory, UserFactory
from tests.faults import TcpProxy

# One namespace per test run in a Redis database that other runs (other worktrees, CI, a developer's
# `make run`) may share: cache keys and the breaker's keys carry this run's id, and the tests delete
# only keys under it (never FLUSHDB, which `cache.clear()` is with RedisCache). Set in the environment
# too, so the processes the tests start (breaker probe, Celery worker) share this run's namespace.
# pytest-django has already loaded the settings by now, so this process's values are set directly;
# nothing has built a cache connection yet, and the breaker reads its name when it is first built.
RUN_PREFIX = os.environ.setdefault("LEV_TEST_RUN_PREFIX", f"levtest-{uuid.uuid4().hex[:12]}")
os.environ["CACHE_KEY_PREFIX"] = RUN_PREFIX
os.environ["LEV_BREAKER_NAME"] = f"{RUN_PREFIX}-breaker"
django_settings.CACHES["default"]["KEY_PREFIX"] = RUN_PREFIX
django_settings.LEV_BREAKER_NAME = os.environ["LEV_BREAKER_NAME"]
# Passwords hash fast in the suite (Django's advice for tests): a sign-in with the production hasher
# (PBKDF2, a million iterations) cost half a second of CPU, and the lockout and browser tests sign in
# hundreds of times. The production hashers stay listed after it, so a hash they made still checks;
# the servers the deploy tests start as processes keep the production settings.
django_settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher",
                                    *django_settings.PASSWORD_HASHERS]


@pytest.fixture(autouse=True, scope="session")
def _documents_folder(tmp_path_factory):
    """A deal's documents (and kept replies) that any test writes land in this run's own folder, never the
    checkout's private/documents; a test may still point STORAGES elsewhere (tests/deals/documents)."""
    from django.test.utils import override_settings

    folder = tmp_path_factory.mktemp("documents")
    override = override_settings(STORAGES={**django_settings.STORAGES, "deal_documents": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(folder), "file_permissions_mode": 0o600, "directory_permissions_mode": 0o700}}})
    override.enable()
    yield folder
    override.disable()


@pytest.fixture(autouse=True, scope="session")
def _demo_key_file(tmp_path_factory):
    """`seed_demo --print-credentials` keeps the demo key in a file: this run's own, never the
    checkout's `.demo-api-key` that a developer's `make run` uses."""
    django_settings.LEV_DEMO_KEY_FILE = str(tmp_path_factory.mktemp("demo-key") / "demo-api-key")


def clear_run_cache() -> None:
    """Empty this run's part of the cache: SCAN for its prefix and delete what matches."""
    client = getattr(cache, "_cache", None)
    if client is None or not hasattr(client, "get_client"):  # LocMemCache: private to this process
        cache.clear()
        return
    redis = client.get_client(write=True)
    batch: list[bytes] = []
    for key in redis.scan_iter(match=f"{RUN_PREFIX}:*", count=500):
        batch.append(key)
        if len(batch) >= 500:
            redis.delete(*batch)
            batch.clear()
    if batch:
        redis.delete(*batch)


@pytest.fixture(autouse=True)
def _isolated_state(settings):
    """Generous rate limits (throttle tests lower them), an empty cache and a closed breaker."""
    settings.LEV_RATE_LIMIT_READS = "100000/min"
    settings.LEV_RATE_LIMIT_WRITES = "100000/min"
    settings.LEV_RETRY_BACKOFF_BASE_MS = 1  # keep retry tests quick; the policy is unit-tested
    clear_run_cache()
    reset_leases()  # this process's leased tokens were taken from counts clear_run_cache deleted
    credential_cache.clear()  # primary keys repeat between tests on SQLite: no entry outlives its test
    resilience.reset_breaker()
    yield
    resilience.reset_breaker()


DAY = 86400


@pytest.fixture
def frozen_window(monkeypatch) -> float:
    """The rate limiter's clock stopped in the middle of a day window, so a throttle test can never
    straddle the start of a new window, whenever it runs and however slowly."""
    now = (time.time() // DAY) * DAY + DAY / 2
    monkeypatch.setattr("lev.throttling.time", SimpleNamespace(time=lambda: now, monotonic=time.monotonic))
    return now


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
    _key, raw = api_key_create(user=user, account=account, name="test")
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
    _key, raw = api_key_create(user=member.user, account=other_account, name="test")
    return client_with_key(raw)


@pytest.fixture
def db_proxy(transactional_db):
    """Every new database connection of this process goes through a TCP proxy the test can cut."""
    if connection.vendor != "postgresql":
        pytest.skip("the proxy sits in front of PostgreSQL")
    db = connections.databases["default"]
    host, port = db["HOST"], db["PORT"]
    proxy = TcpProxy(host or "127.0.0.1", int(port or 5432)).start()
    connections.close_all()
    db["HOST"], db["PORT"] = "127.0.0.1", str(proxy.port)
    try:
        yield proxy
    finally:
        connections.close_all()
        db["HOST"], db["PORT"] = host, port
        proxy.close()
