"""The admin login form is rate limited (django-axes): after AXES_FAILURE_LIMIT failures of one
username from one IP address, that pair is refused — even with the right password — for the
cool-off, while API-key requests never count as login attempts."""

from __future__ import annotations

import datetime as dt

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from tests.conftest import client_with_key

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
LOGIN_URL = "/admin/login/?next=/admin/"


@pytest.fixture
def admin_user():
    return get_user_model().objects.create_superuser("boss", "boss@example.com", PASSWORD)


def post_login(client: Client, username: str, password: str, ip: str = "203.0.113.7"):
    # The real admin form: GET for the CSRF cookie, then POST it with the token.
    client.get(LOGIN_URL, REMOTE_ADDR=ip)
    token = client.cookies["csrftoken"].value
    return client.post(LOGIN_URL, {"username": username, "password": password, "csrfmiddlewaretoken": token,
                                   "next": "/admin/"}, REMOTE_ADDR=ip)


def logged_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def test_right_password_logs_in(admin_user):
    assert logged_in(post_login(Client(enforce_csrf_checks=True), "boss", PASSWORD))


def test_after_the_failure_limit_even_the_right_password_is_refused(admin_user):
    client = Client(enforce_csrf_checks=True)
    limit = settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        response = post_login(client, "boss", "wrong")
        assert response.status_code == 200  # the form again, with its error
    assert post_login(client, "boss", "wrong").status_code == 429  # the limit-th failure locks
    refused = post_login(client, "boss", PASSWORD)
    assert refused.status_code == 429 and not logged_in(refused)
    assert "_auth_user_id" not in client.session


def test_a_hundred_wrong_passwords_are_not_all_tried(admin_user):
    client = Client(enforce_csrf_checks=True)
    statuses = [post_login(client, "boss", f"guess-{n}").status_code for n in range(100)]
    limit = settings.AXES_FAILURE_LIMIT
    assert statuses[: limit - 1] == [200] * (limit - 1)
    assert set(statuses[limit - 1:]) == {429}
    assert not logged_in(post_login(client, "boss", PASSWORD))


def test_the_lockout_is_per_username_and_ip_and_ends_after_the_cool_off(admin_user):
    client = Client(enforce_csrf_checks=True)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        post_login(client, "boss", "wrong")
    assert post_login(client, "boss", PASSWORD).status_code == 429
    # Another address is not locked out by this one's failures.
    assert logged_in(post_login(Client(enforce_csrf_checks=True), "boss", PASSWORD, ip="198.51.100.9"))
    # The cool-off has passed (moved the recorded attempts back instead of waiting for it).
    AccessAttempt.objects.update(attempt_time=dt.datetime.now(dt.UTC) - settings.AXES_COOLOFF_TIME
                                 - dt.timedelta(seconds=1))
    assert logged_in(post_login(client, "boss", PASSWORD))


def test_api_keys_are_not_counted_or_locked_out(admin_user, api_key, user):
    # Lock the key's user out of the admin form, then use the API key from the same address.
    for _ in range(settings.AXES_FAILURE_LIMIT):
        post_login(Client(enforce_csrf_checks=True), user.username, "wrong", ip="127.0.0.1")
    assert AccessAttempt.objects.filter(username=user.username).exists()
    api = client_with_key(api_key)
    for _ in range(settings.AXES_FAILURE_LIMIT + 2):
        assert api.get("/api/v1/deals/", REMOTE_ADDR="127.0.0.1").status_code == 200
    bad = client_with_key("lev_sk_not-a-real-key")
    for _ in range(settings.AXES_FAILURE_LIMIT + 2):
        assert bad.get("/api/v1/deals/", REMOTE_ADDR="127.0.0.1").status_code == 401
    assert api.get("/api/v1/deals/", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert not AccessAttempt.objects.exclude(username=user.username).exists()


OAUTH_LOGIN_URL = "/accounts/login/"


def post_oauth_login(client: Client, username: str, password: str, ip: str):
    client.get(OAUTH_LOGIN_URL, REMOTE_ADDR=ip)
    token = client.cookies["csrftoken"].value
    return client.post(OAUTH_LOGIN_URL, {"username": username, "password": password,
                                         "csrfmiddlewaretoken": token}, REMOTE_ADDR=ip)


@pytest.mark.parametrize("sign_in", [post_login, post_oauth_login], ids=["admin", "oauth"])
def test_many_usernames_from_one_address_are_locked_out(admin_user, sign_in):
    # Issue 19 item 8: password spraying (a different username each time) was never throttled.
    client = Client(enforce_csrf_checks=True)
    limit = settings.LEV_LOGIN_FAILURE_LIMIT_PER_IP
    assert limit > settings.AXES_FAILURE_LIMIT
    statuses = [sign_in(client, f"sprayed-{n}", "Winter2026!", ip="203.0.113.50").status_code
                for n in range(limit + 5)]
    assert 429 not in statuses[: limit - 1]  # no single username ever reached its own limit
    assert set(statuses[limit:]) == {429}
    # The address is refused even the right password of a username it never tried...
    assert sign_in(client, "boss", PASSWORD, ip="203.0.113.50").status_code == 429
    # ...while another address signs in as usual.
    assert sign_in(Client(enforce_csrf_checks=True), "boss", PASSWORD, ip="198.51.100.9").status_code == 302


def test_a_valid_sign_in_does_not_clear_the_address_count(admin_user):
    # Otherwise an attacker holding one account would sign in with it between sprays.
    client = Client(enforce_csrf_checks=True)
    limit = settings.LEV_LOGIN_FAILURE_LIMIT_PER_IP
    for n in range(limit - 1):
        post_login(client, f"sprayed-{n}", "guess", ip="203.0.113.51")
    assert logged_in(post_login(Client(enforce_csrf_checks=True), "boss", PASSWORD, ip="203.0.113.51"))
    assert post_login(client, "sprayed-last", "guess", ip="203.0.113.51").status_code == 429


def test_an_office_behind_one_address_survives_one_persons_typos(admin_user):
    client = Client(enforce_csrf_checks=True)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        post_login(client, "typist", "wrong", ip="203.0.113.52")
    assert post_login(client, "typist", "wrong", ip="203.0.113.52").status_code == 429
    assert logged_in(post_login(Client(enforce_csrf_checks=True), "boss", PASSWORD, ip="203.0.113.52"))


def test_behind_a_named_proxy_each_client_is_counted_for_its_own_address(admin_user, settings):
    # Behind a reverse proxy every connection comes from the proxy: without LEV_TRUSTED_PROXIES the
    # per-address limit would lock everyone out together.
    settings.LEV_TRUSTED_PROXIES = ["10.0.0.0/8"]
    proxy = "10.0.0.2"

    def through_proxy(client, username, password, forwarded):
        client.get(LOGIN_URL, REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=forwarded)
        return client.post(LOGIN_URL, {"username": username, "password": password,
                                       "csrfmiddlewaretoken": client.cookies["csrftoken"].value, "next": "/admin/"},
                           REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=forwarded)

    sprayer = Client(enforce_csrf_checks=True)
    for n in range(settings.LEV_LOGIN_FAILURE_LIMIT_PER_IP):
        # The client's own (forged) first entry is not believed: the proxy appended the real one.
        through_proxy(sprayer, f"sprayed-{n}", "guess", f"192.0.2.{n % 200}, 203.0.113.60")
    assert through_proxy(sprayer, "boss", PASSWORD, "203.0.113.60").status_code == 429
    assert logged_in(through_proxy(Client(enforce_csrf_checks=True), "boss", PASSWORD, "198.51.100.7"))


def test_a_forwarded_header_from_an_unnamed_peer_is_ignored(admin_user, settings):
    settings.LEV_TRUSTED_PROXIES = ["10.0.0.0/8"]
    client = Client(enforce_csrf_checks=True)
    for n in range(settings.LEV_LOGIN_FAILURE_LIMIT_PER_IP):
        client.get(LOGIN_URL, REMOTE_ADDR="203.0.113.61")
        client.post(LOGIN_URL, {"username": f"sprayed-{n}", "password": "guess", "next": "/admin/",
                                "csrfmiddlewaretoken": client.cookies["csrftoken"].value},
                    REMOTE_ADDR="203.0.113.61", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
    assert post_login(client, "boss", PASSWORD, ip="203.0.113.61").status_code == 429
