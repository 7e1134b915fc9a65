"""A deal taken to market, in the admin, in a real browser (Debian's Chromium through Playwright, as
test_admin_browser.py), at 1440 and 1024 px (issue 41): the deal page's Documents panel takes a rent roll
dropped in as a file and lists it with the OM, the rent roll's figures page previews and applies them,
the timeline says a lender was emailed and opened its package, and the outbox lists each email sent.
Nothing scrolls sideways, no CSP violation. Screenshots go to artifacts/screenshots/ (outreach-<page>-<width>.png)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from deals.outreach.mail import deliver_due
from deals.outreach.models import PackageLink
from deals.outreach.services import outreach_send, package_opened
from lev.accounts.models import Membership
from tests.browser.test_admin_browser import (  # noqa: F401  (chromium: a fixture)
    chromium,
    csp_violations,
    screenshot_dir,
    sign_in,
    watch_csp,
)
from tests.deals.documents.figures_files import hand_made_rent_roll
from tests.deals.outreach.helpers import document, outreach_deal, placed
from tests.factories import MembershipFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PASSWORD = "outreach-browser-password"


@pytest.fixture
def world(account, settings, tmp_path) -> dict:
    """A deal with its OM, emailed to three lenders (the mail kept by Django's in-memory backend), one of
    whom opened the package: written before the browser starts (Playwright's loop forbids the ORM in this
    thread after)."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user = get_user_model().objects.create_superuser("dana", "dana@example.com", PASSWORD)
    MembershipFactory(account=account, user=user, role=Membership.Role.MEMBER)
    deal = outreach_deal(account)
    om = document(deal)
    placements = placed(deal)
    outreach_send(deal=deal, placements=placements, user=user, documents=[om.pk])
    deliver_due()
    package_opened(package=PackageLink.objects.get(placement=placements[0]))
    rent_roll = tmp_path / "Rent roll.xlsx"
    rent_roll.write_bytes(hand_made_rent_roll()[0])
    return {"deal": deal.pk, "rent_roll": str(rent_roll), "lender": placements[0].lender.name}


@pytest.mark.parametrize("width", [1440, 1024])
def test_a_deal_taken_to_market_in_the_admin(live_server, world, chromium, width):  # noqa: F811
    shots = screenshot_dir()
    context = chromium.new_context(viewport={"width": width, "height": 900})
    reports = watch_csp(context)
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, live_server.url, "dana", PASSWORD)
    deal_url = f"{live_server.url}/admin/deals/deal/{world['deal']}/change/"
    page.goto(deal_url)
    documents = page.inner_text("#documents")
    assert "Offering memorandum" in documents

    # The rent roll, uploaded through the panel's form (the file input inside the drop zone).
    page.set_input_files("#lev-documents-files", world["rent_roll"])
    page.select_option("#lev-documents-kind", "rent_roll")
    page.click("#documents form.lev-documents-upload button[type=submit]")
    page.wait_for_load_state("load")
    assert "Rent roll.xlsx" in page.inner_text("#documents")
    timeline = page.inner_text("#timeline")
    assert f"{world['lender']} opened the package" in timeline, timeline
    page.screenshot(path=str(shots / f"outreach-deal-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0

    # Its figures, previewed and applied from their page.
    page.click("#documents a[href*='/figures/']")
    page.wait_for_url("**/figures/**")
    assert "Occupancy" in page.inner_text("#content")
    page.screenshot(path=str(shots / f"outreach-figures-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.click("text=Apply the ticked figures")
    page.wait_for_load_state("load")
    assert "Applied from Rent roll.xlsx (version 1): " in page.inner_text("body")

    # The outbox: each email, sent.
    page.goto(f"{live_server.url}/admin/deals/outboundemail/")
    rows = page.inner_text("#result_list")
    assert rows.count("Sent") >= 3, rows
    page.screenshot(path=str(shots / f"outreach-outbox-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert csp_violations(page, reports) == []
    context.close()
