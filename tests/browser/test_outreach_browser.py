"""A deal taken to market in the admin, one walk in a real browser (Debian's Chromium through Playwright, as
test_team_day_browser.py), at 1440 and 1024 px — issue 41's acceptance, the way a deal team does it, on
the demo's book:

the offering memorandum and the rent roll dropped into the deal's Documents panel; the rent roll's figures
previewed and applied; "Find lenders" and the three best ranked placed; "Email lenders…" names them and
their addresses, shares the OM, and sends — the mail crosses a real SMTP server (aiosmtpd); the first
lender opens its package from the link in its email (a second browser, signed in as no one) and downloads
the OM; the second replies by email with a term-sheet PDF, posted signed to the inbound endpoint as a mail
relay would; back on the deal page the timeline says so, the reply is the placement's first response and
the term sheet is one of the deal's documents.

At every page: nothing scrolls sideways, no CSP violation. Screenshots: screenshot_dir()/outreach-<step>-<width>.png."""

from __future__ import annotations

import re
import time
from io import StringIO
from urllib.parse import urlsplit

import httpx
import pytest
from django.core.management import call_command

from deals.companies.models import Contact
from deals.models import Deal
from lenders.models import Lender
from tests.browser.test_admin_browser import (  # noqa: F401  (chromium, search_jobs: fixtures)
    UNSEARCHED_DEAL,
    chromium,
    csp_violations,
    screenshot_dir,
    search_jobs,
    sign_in,
    wait_for_ranked,
    watch_csp,
)
from tests.deals.documents.figures_files import hand_made_rent_roll
from tests.deals.fixtures import eager_jobs  # noqa: F401  (a fixture: in-process jobs on the embedded run)
from tests.deals.outreach.reply_helpers import PDF_BYTES, SECRET, private_storage_at, reply, signed_headers
from tests.deals.outreach.smtp import smtp  # noqa: F401  (a fixture: the real SMTP server)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
LINK = re.compile(r"https?://[^\s]+/p/[A-Za-z0-9_-]+/")
OM_BYTES = b"%PDF-1.7\n% Harbor Point offering memorandum\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"


@pytest.fixture
def world(db, settings, tmp_path, monkeypatch) -> dict:
    """The demo's book, and an address at each directory lender for the deal team's account (the contacts
    the team keeps): written before the browser starts (Playwright's loop forbids the ORM in this thread
    after)."""
    private_storage_at(monkeypatch, tmp_path / "documents")
    settings.LEV_INBOUND_EMAIL_SECRET = SECRET
    out = StringIO()
    call_command("seed_demo", "--lenders", "60", "--print-credentials", stdout=out)
    password = out.getvalue().split("username 'dana', password '")[1].split("'")[0]
    deal = Deal.objects.get(title=UNSEARCHED_DEAL)
    kept = set(Contact.objects.filter(account_id=deal.account_id, lender__isnull=False).exclude(email="")
               .values_list("lender_id", flat=True))
    Contact.objects.bulk_create([
        Contact(account_id=deal.account_id, lender=lender, name=f"Pat Quinn of {lender.name}",
                email=f"pat.quinn@lender-{lender.pk}.test")
        for lender in Lender.objects.filter(account__isnull=True).exclude(pk__in=kept)])
    om = tmp_path / "Harbor Point OM.pdf"
    om.write_bytes(OM_BYTES)
    rent_roll = tmp_path / "Rent roll Nov 2026.xlsx"
    rent_roll.write_bytes(hand_made_rent_roll()[0])
    return {"password": password, "deal": deal.pk, "om": str(om), "rent_roll": str(rent_roll)}


def _received(smtp, count: int) -> list:  # noqa: F811
    deadline = time.monotonic() + 30
    while len(smtp.messages) < count:
        assert time.monotonic() < deadline, f"{len(smtp.messages)} of {count} emails reached the SMTP server"
        time.sleep(0.2)
    return smtp.messages


@pytest.mark.parametrize("width", [1440, 1024])
def test_a_deal_taken_to_market_in_the_admin(live_server, world, search_jobs, smtp, chromium, width):  # noqa: F811
    shots, base = screenshot_dir(), live_server.url
    context = chromium.new_context(viewport={"width": width, "height": 900})
    reports = watch_csp(context)
    page = context.new_page()
    page.set_default_timeout(30_000)
    steps: list[str] = []

    def looks_right(step: str, on=None) -> None:
        on = on or page
        sideways = on.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert sideways <= 0, (step, width, sideways)
        assert csp_violations(on, reports) == [], step
        on.screenshot(path=str(shots / f"outreach-{step}-{width}.png"), full_page=True)
        steps.append(step)

    sign_in(page, base, "dana", world["password"])
    deal_url = f"{base}/admin/deals/deal/{world['deal']}/change/"
    page.goto(deal_url)

    # The OM and the rent roll, through the Documents panel's form (the file input inside the drop zone).
    for path, kind in ((world["om"], "offering_memorandum"), (world["rent_roll"], "rent_roll")):
        page.set_input_files("#lev-documents-files", path)
        page.select_option("#lev-documents-kind", kind)
        page.click("#documents form.lev-documents-upload button[type=submit]")
        page.wait_for_load_state("load")
    documents = page.inner_text("#documents")
    assert "Harbor Point OM.pdf" in documents and "Rent roll Nov 2026.xlsx" in documents, documents
    looks_right("documents")

    # The rent roll's figures, previewed and applied from their page.
    page.click("#documents a[href*='/figures/']")
    page.wait_for_url("**/figures/**")
    assert "Occupancy" in page.inner_text("#figures-table")
    looks_right("figures")
    page.click("#apply-figures")
    page.wait_for_load_state("load")
    assert "Applied from Rent roll Nov 2026.xlsx (version 1): " in page.inner_text(".messagelist")

    # "Find lenders", and the three best ranked placed.
    page.goto(deal_url)
    page.click("#find-lenders")
    page.wait_for_load_state()
    wait_for_ranked(page, search_jobs)
    rows = page.locator("#ranked-lenders table.lev-ranked tbody tr")
    names = [rows.nth(i).locator(".lev-lender-name").inner_text() for i in range(3)]
    for i in range(3):
        rows.nth(i).locator("input[name=lender_ids]").check()
    page.get_by_role("button", name="Place with selected lenders").first.click()
    page.wait_for_url("**#placements")
    assert "Placed with 3 lenders" in page.inner_text(".messagelist")

    # "Email lenders…": the three, each with its address, the OM shared, the email as it reads; Send.
    page.click("#email-lenders-link")
    page.wait_for_url("**/email-lenders/")
    recipients = page.inner_text("#recipients-table")
    assert all(name in recipients for name in names), recipients
    assert page.locator("#recipients-table input[name=placement_ids]:checked").count() == 3
    assert page.locator("#shared-documents input[name=document_ids]:checked").count() == 1
    assert "Harbor Point OM.pdf" in page.inner_text("#shared-documents")
    assert "(the lender's own link to the deal package)" in page.inner_text("#email-preview")
    looks_right("email-lenders")
    page.click("#send-emails")
    page.wait_for_url("**#placements")
    message = page.inner_text(".messagelist")
    assert "Emailing 3 lenders" in message and all(name in message for name in names), message

    # The mail crossed the SMTP server: one email each, with a package link of its own.
    mail = {m.rcpt_tos[0]: m for m in _received(smtp, 3)}
    assert len(mail) == 3
    by_lender = {name: next(m for m in mail.values() if name in m.text) for name in names}
    links = {name: LINK.search(m.text).group(0) for name, m in by_lender.items()}
    assert len(set(links.values())) == 3

    # The first lender opens its package (signed in as no one) and downloads the OM.
    lender_context = chromium.new_context(viewport={"width": width, "height": 900})
    lender_reports = watch_csp(lender_context)
    lender_page = lender_context.new_page()
    lender_page.goto(base + urlsplit(links[names[0]]).path)
    assert UNSEARCHED_DEAL in lender_page.inner_text("h1")
    looks_right("package", lender_page)
    with lender_page.expect_download() as download:
        lender_page.get_by_role("link", name="Harbor Point OM.pdf").click()
    assert download.value.suggested_filename == "Harbor Point OM.pdf"
    with open(download.value.path(), "rb") as got:
        assert got.read() == OM_BYTES
    assert csp_violations(lender_page, lender_reports) == []
    lender_context.close()

    # The second replies by email with its term sheet: the relay posts the raw message, signed.
    second = by_lender[names[1]]
    answer = reply(None, sender=f"Pat Quinn <{second.rcpt_tos[0]}>", to=second["Reply-To"],
                   text="Thanks for the package. Our term sheet is attached: 6.1% fixed, 10 years.",
                   attachments=(("Term sheet.pdf", PDF_BYTES, "application/pdf"),))
    answer.replace_header("Subject", f"Re: {second['Subject']}")
    raw = answer.as_bytes()
    posted = httpx.post(f"{base}/api/v1/inbound-email/", content=raw, timeout=30, headers={
        "Content-Type": "message/rfc822",
        **{name.removeprefix("HTTP_").replace("_", "-"): value for name, value in signed_headers(raw).items()}})
    assert posted.status_code in (200, 201), posted.text

    # Back on the deal page: the timeline, the first response and the term sheet among the documents.
    page.goto(deal_url)
    timeline = page.inner_text("#timeline")
    assert f"{names[0]} opened the package" in timeline, timeline
    assert f"{names[0]} downloaded the offering memorandum" in timeline.lower() or \
        f"{names[0]} downloaded" in timeline, timeline
    assert f"{names[1]} replied" in timeline, timeline
    placements = page.locator("#placements table.lev-placements tbody tr", has_text=names[1])
    assert placements.count() == 1 and "—" not in placements.locator("td").nth(6).inner_text()
    assert "Term sheet.pdf" in page.inner_text("#documents")
    looks_right("deal-after")

    # The outbox: the three emails, sent.
    page.goto(f"{base}/admin/deals/outboundemail/")
    assert page.inner_text("#result_list").count("Sent") >= 3
    looks_right("outbox")
    context.close()
    assert steps == ["documents", "figures", "email-lenders", "package", "deal-after", "outbox"]
