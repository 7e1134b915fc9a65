"""The deal package's public pages: a token guessed, malformed, expired, revoked; a document not shared in
this package (another placement's, another account's, removed); the rate limit. Every refusal says
nothing of any deal; the page and downloads are never cached, indexed or referred."""

from __future__ import annotations

import datetime as dt
import logging
import re
import secrets

import pytest
from django.test import Client
from django.utils import timezone

from deals.outreach import services
from deals.outreach.models import OutreachEvent, PackageLink
from tests.deals.outreach.helpers import document, outreach_deal, placed

pytestmark = pytest.mark.django_db

LINK = re.compile(r"http://127\.0\.0\.1:8000(/p/[A-Za-z0-9_-]+/)")


@pytest.fixture(autouse=True)
def outbox(settings, tmp_path):
    """Mail to the embedded default's outbox (no server); documents in a folder of the test."""
    settings.EMAIL_BACKEND = "lev.mail.OutboxOnlyBackend"
    settings.LEV_DOCUMENTS_DIR = str(tmp_path)
    logging.getLogger("mail.log").setLevel(logging.WARNING)


def sent(account, user, capture, *, title="Harbor Point Apartments", names=("Granite Bank", "Harbor Life"),
         shared=True):
    """A deal sent to `names`; each lender's package URL, and the OM shared in them."""
    deal = outreach_deal(account, title=title)
    om = document(deal)
    placements = placed(deal, names=names)
    with capture(execute=True):
        result = services.outreach_send(deal=deal, placements=placements, user=user,
                                        documents=[om.pk] if shared else [])
    urls = [LINK.search(e.body).group(1) for e in sorted(result.queued, key=lambda e: e.placement_id)]
    return deal, om, placements, urls


def assert_plain(response, status: int, *words: str) -> None:
    assert response.status_code == status
    html = response.content.decode()
    for word in words:
        assert word in html
    for secret in ("Harbor Point", "Granite", "Harbor Life", "$", "Offering"):
        assert secret not in html, secret
    assert response["Cache-Control"] == "no-store" and response["Referrer-Policy"] == "no-referrer"


def test_a_guessed_or_malformed_token_is_a_plain_404(account, user, django_capture_on_commit_callbacks):
    sent(account, user, django_capture_on_commit_callbacks)
    browser = Client()
    for token in (secrets.token_urlsafe(32), "short", "a" * 200, "%00", "../../admin"):
        assert_plain(browser.get(f"/p/{token}/"), 404, "Nothing here")
    assert_plain(browser.get(f"/p/{secrets.token_urlsafe(32)}/documents/1/"), 404)
    assert not OutreachEvent.objects.filter(kind="opened").exists()


def test_an_expired_or_withdrawn_link_is_a_410_that_says_so(account, user, api, django_capture_on_commit_callbacks):
    _deal, om, placements, urls = sent(account, user, django_capture_on_commit_callbacks)
    browser = Client()
    PackageLink.objects.filter(placement=placements[0]).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert_plain(browser.get(urls[0]), 410, "This link has expired")
    assert_plain(browser.get(f"{urls[0]}documents/{om.pk}/"), 410, "This link has expired")

    package = PackageLink.objects.get(placement=placements[1])
    assert browser.get(urls[1]).status_code == 200
    revoked = api.post(f"/api/v1/packages/{package.pk}/revoke/")
    assert revoked.status_code == 200 and revoked.json()["revoked"] is True
    assert api.post(f"/api/v1/packages/{package.pk}/revoke/").status_code == 200  # safe to repeat
    assert_plain(browser.get(urls[1]), 410, "This link was withdrawn")
    assert_plain(browser.get(f"{urls[1]}documents/{om.pk}/"), 410, "This link was withdrawn")
    assert not OutreachEvent.objects.filter(kind="downloaded").exists()


def test_a_document_not_shared_in_this_package_is_not_found(account, other_account, user,
                                                            django_capture_on_commit_callbacks):
    deal, om, _placements, urls = sent(account, user, django_capture_on_commit_callbacks)
    browser = Client()
    rent_roll = document(deal, name="Rent roll", kind="rent_roll", file_name="rr.csv")  # the deal's, not shared
    other_deal = outreach_deal(account, title="Elsewhere")
    elsewhere = document(other_deal)
    theirs = document(outreach_deal(other_account, title="Rival deal"))
    for doc in (rent_roll, elsewhere, theirs):
        assert_plain(browser.get(f"{urls[0]}documents/{doc.pk}/"), 404)
    # Another lender of the same deal, sent a package sharing nothing: the OM shared with the others is not
    # in its package.
    summit = placed(deal, names=("Summit Credit Union",))
    with django_capture_on_commit_callbacks(execute=True):
        bare = services.outreach_send(deal=deal, placements=summit, user=user)
    bare_url = LINK.search(bare.queued[0].body).group(1)
    assert browser.get(bare_url).status_code == 200
    assert_plain(browser.get(f"{bare_url}documents/{om.pk}/"), 404)
    # A document removed from the deal since it was sent is withdrawn from the package too.
    assert browser.get(f"{urls[0]}documents/{om.pk}/").status_code == 200
    om.deleted_at = timezone.now()
    om.save(update_fields=["deleted_at"])
    assert_plain(browser.get(f"{urls[0]}documents/{om.pk}/"), 404)
    assert OutreachEvent.objects.filter(kind="downloaded").count() == 1


def test_the_package_is_rate_limited_per_address(account, user, settings, django_capture_on_commit_callbacks,
                                                 frozen_window):
    settings.LEV_PACKAGE_RATE_LIMIT = "3/min"
    _deal, _om, _placements, urls = sent(account, user, django_capture_on_commit_callbacks)
    browser = Client(REMOTE_ADDR="203.0.113.9")
    assert [browser.get(urls[0]).status_code for _ in range(3)] == [200, 200, 200]
    refused = browser.get(urls[0])
    assert_plain(refused, 429, "Too many requests")
    assert int(refused["Retry-After"]) >= 1
    assert browser.get(f"/p/{secrets.token_urlsafe(32)}/").status_code == 429  # guessing costs the same
    assert Client(REMOTE_ADDR="203.0.113.10").get(urls[0]).status_code == 200  # another address


def test_an_active_document_is_sent_as_plain_bytes(account, user, django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    page = document(deal, name="Site plan", kind="other", file_name="plan.html",
                    content=b"<script>alert(document.cookie)</script>")
    page.current.content_type = "text/html"
    page.current.save(update_fields=["content_type"])
    placements = placed(deal, names=("Granite Bank",))
    with django_capture_on_commit_callbacks(execute=True):
        result = services.outreach_send(deal=deal, placements=placements, user=user, documents=[page.pk])
    url = LINK.search(result.queued[0].body).group(1)
    got = Client().get(f"{url}documents/{page.pk}/")
    assert got.status_code == 200 and got["Content-Type"] == "application/octet-stream"
    assert got["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert got["Content-Disposition"].startswith("attachment")
