"""Revocation bounds of the per-process credential cache (lev.accounts.credential_cache, LEV_AUTH_CACHE_SECONDS).

A key, token or membership found valid is reused by this process for a few seconds instead of being
read again. Each test first makes a request that caches the credential (and checks that the next
one reads no credential row at all), then changes it, and checks the bound: refused at the next request
when the change is made in this process (services, the admin, the connected-apps page, /oauth/revoke/,
a queryset update), refused once LEV_AUTH_CACHE_SECONDS have passed when it is made elsewhere (another
process: here raw SQL, which no signal sees, and on PostgreSQL a real second process)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from lev.accounts import credential_cache as cache_module
from lev.accounts.credential_cache import CredentialCache, credential_cache
from lev.accounts.models import ApiKey, Membership
from lev.accounts.services import api_key_create, api_key_revoke
from lev.oauth.models import OAuthAuthorization
from tests.conftest import client_with_key
from tests.factories import DealFactory
from tests.oauth.flow import Flow, public_client

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]
CREDENTIAL_TABLES = ("deals_apikey", "deals_membership", "oauth2_provider_accesstoken", "oauth_oauthauthorization")


@pytest.fixture
def clock(monkeypatch):
    """The cache's clock, moved by the test (no wall-clock waits)."""
    now = [1000.0]
    monkeypatch.setattr(cache_module, "monotonic", lambda: now[0])
    return now


def credential_reads(call) -> int:
    with CaptureQueriesContext(connection) as queries:
        call()
    return sum(1 for q in queries.captured_queries if any(t in q["sql"] for t in CREDENTIAL_TABLES))


def read(api, deal) -> int:
    return api.get(f"/api/v1/deals/{deal.id}/").status_code


@pytest.fixture
def cached(api, account):
    """A deal, and the API key of `api` checked once and now served from the cache."""
    deal = DealFactory(account=account)
    assert read(api, deal) == 200
    assert credential_reads(lambda: read(api, deal)) == 0  # key and membership came from the cache
    return deal


# --- changes made in this process apply to the next request -------------------------------------------
def test_revoked_key_is_refused_at_once_in_this_process(api, cached):
    api_key_revoke(key=ApiKey.objects.get())
    response = api.get(f"/api/v1/deals/{cached.id}/")
    assert response.status_code == 401 and "revoked" in response.json()["message"]


def test_key_revoked_in_the_admin_is_refused_at_once(api, cached, admin_client):
    key = ApiKey.objects.get()
    answer = admin_client.post("/admin/accounts/apikey/", {"action": "revoke", "_selected_action": [key.pk]})
    assert answer.status_code == 302
    assert read(api, cached) == 401


def test_key_revoked_by_a_queryset_update_is_refused_at_once(api, cached):
    ApiKey.objects.filter(name="test").update(revoked_at=timezone.now())  # what deals.demo.key does
    assert read(api, cached) == 401


def test_key_whose_scopes_shrink_loses_them_at_once(api, cached):
    key = ApiKey.objects.get()
    key.scopes = "lenders:read"
    key.save(update_fields=["scopes"])
    assert read(api, cached) == 403


def test_deactivated_user_and_removed_membership_are_refused_at_once(api, cached, user, account):
    Membership.objects.filter(user=user, account=account).delete()
    assert read(api, cached) == 403
    Membership.objects.create(user=user, account=account)
    assert read(api, cached) == 200
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert read(api, cached) == 401


def test_viewer_role_applies_to_the_next_write_at_once(api, cached, user, account):
    assert api.patch(f"/api/v1/deals/{cached.id}/", {"title": "a"}, format="json").status_code == 200
    membership = Membership.objects.get(user=user, account=account)
    membership.role = Membership.Role.VIEWER
    membership.save(update_fields=["role"])  # what the admin's membership inline does
    assert api.patch(f"/api/v1/deals/{cached.id}/", {"title": "b"}, format="json").status_code == 403


def test_expiry_is_checked_on_every_request_even_from_the_cache(api, cached, monkeypatch):
    key = ApiKey.objects.get()
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() + dt.timedelta(minutes=5))
    assert read(api, cached) == 200
    assert credential_reads(lambda: read(api, cached)) == 0  # cached again, with its expiry
    later = timezone.now() + dt.timedelta(minutes=6)
    monkeypatch.setattr("lev.accounts.auth.timezone.now", lambda: later)
    response = api.get(f"/api/v1/deals/{cached.id}/")
    assert response.status_code == 401 and response.json()["message"].startswith("Unauthorized: your session")


# --- changes made elsewhere apply within LEV_AUTH_CACHE_SECONDS ----------------------------------------
def test_key_revoked_in_another_process_is_refused_within_the_cache_lifetime(api, account, clock, settings):
    deal = DealFactory(account=account)
    assert read(api, deal) == 200
    with connection.cursor() as cursor:  # no signal: as another process's change looks to this one
        cursor.execute("UPDATE deals_apikey SET revoked_at = %s", [timezone.now()])
    clock[0] += settings.LEV_AUTH_CACHE_SECONDS - 0.5
    assert read(api, deal) == 200  # still this process's verdict of moments ago
    clock[0] += 0.5
    assert read(api, deal) == 401


@pytest.mark.django_db(transaction=True)
def test_key_revoked_by_a_real_second_process(api, account, clock, settings):
    if connection.vendor != "postgresql":
        pytest.skip("a second process needs a database it can open (the SQLite test database is in memory)")
    deal = DealFactory(account=account)
    assert read(api, deal) == 200
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    script = ("import django; django.setup(); from lev.accounts.models import ApiKey; "
              "from lev.accounts import services; [services.api_key_revoke(key=k) for k in ApiKey.objects.all()]")
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, timeout=60,
                   env={**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "lev.settings"})
    assert ApiKey.objects.get().revoked_at is not None
    assert read(api, deal) == 200  # cached here, within the lifetime
    clock[0] += settings.LEV_AUTH_CACHE_SECONDS
    assert read(api, deal) == 401


def test_without_the_cache_every_request_checks_the_key(api, account, settings):
    settings.LEV_AUTH_CACHE_SECONDS = 0
    deal = DealFactory(account=account)
    assert read(api, deal) == 200
    assert credential_reads(lambda: read(api, deal)) == 2  # the key and the membership
    with connection.cursor() as cursor:
        cursor.execute("UPDATE deals_apikey SET revoked_at = %s", [timezone.now()])
    assert read(api, deal) == 401


def test_refusals_are_never_cached(account, user):
    _key, raw = api_key_create(user=user, account=account, name="later")
    api = client_with_key(raw + "x")
    deal = DealFactory(account=account)
    for _ in range(2):
        assert credential_reads(lambda: read(api, deal)) == 1 and read(api, deal) == 401


def test_a_check_that_overlaps_a_revocation_is_not_kept(settings):
    cache = CredentialCache()
    generation = cache.generation()  # a check starts ...
    cache.clear()  # ... a revocation lands while it reads the database ...
    cache.put("key", "verdict", generation)  # ... and its (stale) verdict is dropped
    assert cache.get("key") is None
    cache.put("key", "verdict", cache.generation())
    assert cache.get("key") == "verdict"


# --- OAuth access tokens -------------------------------------------------------------------------------
@pytest.fixture
def token(user, account, client):
    """An access token checked once and now served from the cache."""
    tokens = Flow(user=user, client_id=public_client().client_id).tokens()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {tokens['access_token']}"}
    assert client.get("/api/v1/deals/", **auth).status_code == 200
    assert credential_reads(lambda: client.get("/api/v1/deals/", **auth)) == 0
    return tokens | {"auth": auth}


def test_disconnected_app_is_refused_at_once(token, client, user):
    from lev.oauth import services as oauth_services

    oauth_services.authorization_revoke(authorization=OAuthAuthorization.objects.get(user=user))
    assert client.get("/api/v1/deals/", **token["auth"]).status_code == 401


def test_token_revoked_at_the_revocation_endpoint_is_refused_at_once(token, client):
    answer = client.post("/oauth/revoke/", {"token": token["access_token"], "client_id": public_client_id(token)})
    assert answer.status_code == 200
    assert client.get("/api/v1/deals/", **token["auth"]).status_code == 401


def test_token_of_a_grant_revoked_elsewhere_is_refused_within_the_cache_lifetime(clock, token, client, settings):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE oauth_oauthauthorization SET revoked_at = %s", [timezone.now()])
    assert client.get("/api/v1/deals/", **token["auth"]).status_code == 200
    clock[0] += settings.LEV_AUTH_CACHE_SECONDS
    assert client.get("/api/v1/deals/", **token["auth"]).status_code == 401


def test_token_expiry_is_checked_on_every_request_even_from_the_cache(token, client, monkeypatch):
    later = timezone.now() + dt.timedelta(days=1)
    monkeypatch.setattr("lev.oauth.authentication.timezone.now", lambda: later)
    response = client.get("/api/v1/deals/", **token["auth"])
    assert response.status_code == 401 and response.json()["message"].startswith("Unauthorized: your session")


def public_client_id(token: dict) -> str:
    from oauth2_provider.models import get_access_token_model

    return get_access_token_model().objects.get().application.client_id


def test_user_model_changes_empty_the_cache(user):
    credential_cache.put("probe", 1, credential_cache.generation())
    get_user_model().objects.get(pk=user.pk).save()
    assert credential_cache.get("probe") is None
