"""GET /api/v1/account/: who the caller is, in which account and role, with which credential and scopes,
and what is left of its rate limits — read without using any of them."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone

from lev.accounts import scopes
from lev.accounts.models import Membership
from lev.accounts.services import api_key_create
from tests.conftest import DAY, client_with_key
from tests.factories import DealFactory, MembershipFactory, UserFactory
from tests.oauth.flow import Flow, public_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/account/"
COUNTED = "shared" if django_settings.REDIS_URL else "per_process"


def me(client) -> dict:
    response = client.get(URL)
    assert response.status_code == 200, response.content
    return response.json()


def test_an_api_key_says_who_where_as_what_and_with_which_key(api, user, account):
    user.first_name, user.last_name = "Alice", "Archer"
    user.save()
    body = me(api)
    assert body["user"] == {"username": "alice", "name": "Alice Archer", "email": "alice@example.com"}
    assert body["account"] == {"id": account.pk, "name": "Acme Capital", "slug": "acme"}
    assert body["role"] == "member" and body["can_write"] is True
    credential = body["credential"]
    assert credential["kind"] == "api_key" and credential["name"] == "test"
    assert credential["prefix"].startswith("lev_sk_") and credential["expires_at"] is None
    assert credential["scopes"] == list(scopes.SCOPES)  # every scope, in the table's order
    reads, writes = body["rate_limits"]["reads"], body["rate_limits"]["writes"]
    assert reads["limit"] == 100000 and reads["window_seconds"] == 60 and reads["methods"] == ["GET", "HEAD", "OPTIONS"]
    assert writes["methods"] == ["POST", "PUT", "PATCH", "DELETE"]
    assert body["rate_limits"]["counted"] == COUNTED and body["rate_limits"]["this_request_counted"] is False


def test_a_narrowed_key_shows_its_scopes_its_expiry_and_a_viewer_cannot_write(account):
    viewer = MembershipFactory(account=account, user=UserFactory(username="vic"), role=Membership.Role.VIEWER).user
    expires = timezone.now() + dt.timedelta(days=3)
    _key, raw = api_key_create(user=viewer, account=account, name="reporting", scopes=scopes.READ_ONLY_SCOPES,
                               expires_at=expires)
    body = me(client_with_key(raw))
    assert body["role"] == "viewer" and body["can_write"] is False
    assert body["credential"]["name"] == "reporting"
    assert body["credential"]["scopes"] == ["deals:read", "lenders:read", "placements:read", "account:read"]
    assert dt.datetime.fromisoformat(body["credential"]["expires_at"]) == expires


def test_a_key_of_one_scope_still_reads_who_it_is(user, account):
    _key, raw = api_key_create(user=user, account=account, name="only deals", scopes=frozenset({"deals:read"}))
    body = me(client_with_key(raw))
    assert body["credential"]["scopes"] == ["deals:read", "account:read"]


def test_an_oauth_token_shows_the_app_the_scopes_the_person_allowed_and_its_expiry(user, account):
    flow = Flow(user=user, client_id=public_client(name="Claude Desktop").client_id)
    token = flow.tokens(scope="deals:read lenders:read")["access_token"]
    body = me(client_with_key(token))
    assert body["account"]["id"] == account.pk and body["user"]["username"] == "alice"
    credential = body["credential"]
    assert credential["kind"] == "oauth" and credential["name"] == "Claude Desktop" and credential["prefix"] is None
    assert credential["scopes"] == ["deals:read", "lenders:read", "account:read"]
    expires = dt.datetime.fromisoformat(credential["expires_at"])
    assert timezone.now() < expires <= timezone.now() + dt.timedelta(seconds=django_settings.OAUTH2_PROVIDER[
        "ACCESS_TOKEN_EXPIRE_SECONDS"])


def test_the_consent_page_does_not_offer_what_every_connection_has(user):
    flow = Flow(user=user, client_id=public_client().client_id)
    page = flow.consent_page(scope="deals:read account:read")
    assert [name for name, _text in page.context["scope_choices"]] == ["deals:read"]
    assert b"account:read" in page.content  # said, as what every connection may do
    # An app that asks only for it is allowed just that (no permission to choose, nothing refused).
    token = flow.tokens(scope="account:read")["access_token"]
    assert me(client_with_key(token))["credential"]["scopes"] == ["account:read"]
    assert client_with_key(token).get("/api/v1/deals/").status_code == 403


def test_another_accounts_user_sees_only_their_own(api, other_api, account, other_account):
    mine, theirs = me(api), me(other_api)
    assert mine["account"]["id"] == account.pk and mine["user"]["username"] == "alice"
    assert theirs["account"] == {"id": other_account.pk, "name": "Rival Holdings", "slug": "rival"}
    assert theirs["user"]["username"] == "mallory" and theirs["role"] == "member"


def test_a_session_on_the_site_is_said_to_be_one(user, account):
    browser = Client()
    browser.force_login(user)
    credential = me(browser)["credential"]
    assert credential == {"kind": "session", "name": "", "prefix": None, "scopes": list(scopes.SCOPES),
                          "expires_at": None}


def test_remaining_falls_with_other_calls_and_not_with_this_one(api, other_api, account, settings, frozen_window):
    settings.LEV_RATE_LIMIT_READS = "5/day"
    settings.LEV_RATE_LIMIT_WRITES = "3/day"
    deal = DealFactory(account=account)
    reads = me(api)["rate_limits"]["reads"]
    assert reads["limit"] == 5 and reads["remaining"] == 5 and reads["window_seconds"] == DAY
    assert reads["resets_in_seconds"] == DAY // 2  # the (frozen) clock is half way through the day
    assert dt.datetime.fromisoformat(reads["resets_at"]).timestamp() == frozen_window + DAY // 2
    for _ in range(2):
        assert api.get(f"/api/v1/deals/{deal.pk}/").status_code == 200
    assert api.patch(f"/api/v1/deals/{deal.pk}/", {"title": "x"}, format="json").status_code == 200
    for _ in range(3):  # reading it uses nothing
        limits = me(api)["rate_limits"]
        assert (limits["reads"]["remaining"], limits["writes"]["remaining"]) == (3, 2)
    assert me(other_api)["rate_limits"]["reads"]["remaining"] == 5  # each user has their own
    for _ in range(3):
        api.get("/api/v1/deals/")
    assert api.get("/api/v1/deals/").status_code == 429
    # Spent: still answered, so the caller learns when the window resets.
    reads = me(api)["rate_limits"]["reads"]
    assert reads["remaining"] == 0 and reads["resets_in_seconds"] == DAY // 2


def test_no_credential_is_401_in_the_contract():
    response = Client().get(URL)
    assert response.status_code == 401 and response.json()["code"] == "AUTH_ERROR"


def test_it_is_in_the_openapi_description(client):
    schema = client.get("/api/v1/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/account/"]["get"]
    assert operation["operationId"] == "account_retrieve"
    assert set(operation["responses"]) == {"200", "401", "403", "503"}
    assert sorted(schema["components"]["schemas"]["AccountMe"]["required"]) == [
        "account", "can_write", "credential", "rate_limits", "role", "user"]
    assert {"OAuth2": ["account:read"]} in operation["security"]


def test_reading_the_limits_is_one_redis_round_trip_that_writes_nothing(api, account, frozen_window):
    from django.core.cache import cache

    from tests.redis_round_trips import redis_round_trips

    if not django_settings.REDIS_URL:
        pytest.skip("counting in Redis needs REDIS_URL")
    me(api)  # credentials checked and cached: what is left is reading the counts
    with redis_round_trips() as sent:
        me(api)
    assert len(sent) == 1 and sent[0].startswith(b"*3\r\n$4\r\nMGET")
    assert not list(cache._cache.get_client(write=True).scan_iter(match=cache.make_key("throttle:*")))
