"""Lenders' replies and chasing in a real browser (Debian's Chromium through Playwright, as
test_admin_browser.py), at 1440 and 1024 px: the home page's chasing line and its list with "Send a
follow-up", a reply to assign and its Assign page — nothing scrolls sideways, no CSP violation.
Screenshots go to artifacts/screenshots/ (replies-<page>-<width>.png)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from deals.outreach.inbound import inbound_receive
from deals.outreach.models import OutreachEvent
from lev.accounts.models import Membership
from tests.browser.test_admin_browser import (  # noqa: F401  (chromium: a fixture)
    chromium,
    csp_violations,
    screenshot_dir,
    sign_in,
    watch_csp,
)
from tests.deals.outreach.reply_helpers import PDF_BYTES, emailed, private_storage_at, reply
from tests.factories import LenderFactory, MembershipFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PASSWORD = "replies-browser-password"


@pytest.fixture
def world(account, tmp_path, monkeypatch) -> int:
    """A member's account with two lenders emailed (one opened the package) and a colleague's reply to
    assign (written before the browser starts: Playwright's loop forbids the ORM in this thread after)."""
    private_storage_at(monkeypatch, tmp_path)
    user = get_user_model().objects.create_superuser("dana", "dana@example.com", PASSWORD)
    MembershipFactory(account=account, user=user, role=Membership.Role.MEMBER)
    first = emailed(account, lender=LenderFactory(name="Granite Bank"))
    emailed(account, contact_email="sam@harbor.test", lender=LenderFactory(name="Harbor Credit"),
            deal=first.placement.deal)
    OutreachEvent.objects.create(account=account, deal=first.placement.deal, placement=first.placement,
                                 kind="opened", email=first)
    return inbound_receive(raw=reply(first, sender="Tom Colleague <tom@granitebank.com>",
                                     attachments=(("Term sheet.pdf", PDF_BYTES, "application/pdf"),))
                           .as_bytes()).inbound.pk


@pytest.mark.parametrize("width", [1440, 1024])
def test_replies_and_chasing_pages_fit(live_server, world, chromium, width):  # noqa: F811
    inbound_pk = world
    shots = screenshot_dir()
    context = chromium.new_context(viewport={"width": width, "height": 900})
    reports = watch_csp(context)
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, live_server.url, "dana", PASSWORD)
    line = page.inner_text("#waiting .lev-chasing")
    assert "1 opened, no answer" in line and "1 not opened" in line
    page.click("#waiting a.lev-chase-opened")
    page.wait_for_url("**/chase/opened/**")
    assert "Granite Bank" in page.inner_text("#chase-list")
    assert page.locator("#chase-follow-up button.lev-follow-up").count() == 1
    pages = [("chase", page.url),
             ("assign", f"{live_server.url}/admin/deals/inboundemail/{inbound_pk}/assign/"),
             ("reply", f"{live_server.url}/admin/deals/inboundemail/{inbound_pk}/change/")]
    for name, url in pages:
        page.goto(url)
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0, name
        page.screenshot(path=str(shots / f"replies-{name}-{width}.png"), full_page=True)
    page.goto(pages[1][1])
    page.click("#assign-form input[type=submit]")
    page.wait_for_url("**/admin/deals/placement/**")
    assert "The reply is on Granite Bank" in page.inner_text("#content-start, body")
    assert csp_violations(page, reports) == []
    context.close()
