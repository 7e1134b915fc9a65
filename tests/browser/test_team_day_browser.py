"""A deal team's day in a real browser (issue 23's acceptance walk): Debian's Chromium through Playwright, as
the demo's deal-team user (dana), at 1440 and 1024 px. From the home page to a deal with no search yet,
"Find lenders" (a real Celery worker on the PostgreSQL + Redis run, in-process on the embedded one), two
ranked lenders placed from the ranks, one of them sent and its quote recorded, the quote in the deal's
comparison, chosen as the winner through the confirmation page, and the deal in Closing.

At every page: no sideways scrolling (the document and each table), ranked rows at most RANKED_ROW_MAX_PX
tall, no CSP violation, and axe-core reports no serious or critical violation (axe runs in a second
signed-in context made with AXE_CONTEXT, which lets its script in: it loads the same URL there, so the
walking context keeps the CSP enforced). Screenshots: screenshot_dir()/team-day-<step>-<width>-<db>.png;
with LEV_DOCS_SCREENSHOTS=1 the README's pictures of the walk too (DOCS_PICTURES, 1440 px).

The quote is recorded as a deal team records one: "Record a quote" on the placement's page, the form
filled in from the lender's term sheet (a refusal first: a fixed quote with no rate), then saved."""

from __future__ import annotations

import datetime as dt
import os
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from deals.models import Deal
from tests.browser.axe import AXE_CONTEXT, axe_script, describe, run_axe
from tests.browser.test_admin_browser import (  # noqa: F401  (chromium, search_jobs: fixtures)
    RANKED_ROW_MAX_PX,
    ROW_HEIGHTS,
    UNSEARCHED_DEAL,
    chromium,
    csp_violations,
    screenshot_dir,
    search_jobs,
    sign_in,
    wait_for_ranked,
    watch_csp,
)
from tests.deals.fixtures import eager_jobs  # noqa: F401  (a fixture: in-process jobs on the embedded run)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# The README's admin tour: step -> its picture (docs/images/), the page as it first shows at 1440 px.
DOCS_PICTURES = {"record-quote": "admin-record-quote.png", "confirm-winner": "admin-choose-winner.png"}
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"

TABLES_OVERFLOWING = """() => Array.from(document.querySelectorAll('table'))
    .filter(t => t.getBoundingClientRect().width > 0 && t.scrollWidth > t.parentElement.clientWidth + 1)
    .map(t => (t.id || t.className || 'table') + ' ' + t.scrollWidth + '>' + t.parentElement.clientWidth)"""


@pytest.fixture
def day(db) -> dict[str, object]:
    out = StringIO()
    call_command("seed_demo", "--lenders", "60", "--print-credentials", stdout=out)
    password = out.getvalue().split("username 'dana', password '")[1].split("'")[0]
    return {"password": password, "deal_id": Deal.objects.get(title=UNSEARCHED_DEAL).pk}


@pytest.mark.parametrize("width", [1440, 1024])
def test_a_deal_team_s_day_from_home_page_to_closing(live_server, day, search_jobs, chromium, width):  # noqa: F811
    script = axe_script()
    shots, base, db = screenshot_dir(), live_server.url, connection.vendor
    context = chromium.new_context(viewport={"width": width, "height": 900})
    reports = watch_csp(context)
    page = context.new_page()
    page.set_default_timeout(30_000)
    axe_context = chromium.new_context(**AXE_CONTEXT, viewport={"width": width, "height": 900})
    axe_page = axe_context.new_page()
    axe_page.set_default_timeout(30_000)
    sign_in(axe_page, base, "dana", day["password"])
    found: list[str] = []
    steps: list[str] = []

    def looks_right(step: str) -> None:
        """The page as it stands: fits, compact ranked rows, no CSP violation, axe clean; a screenshot."""
        where = f"{step} ({width} px, {page.url})"
        sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert sideways <= 0, (where, sideways)
        assert page.evaluate(TABLES_OVERFLOWING) == [], where
        heights = page.evaluate(ROW_HEIGHTS)
        assert not heights or max(heights) <= RANKED_ROW_MAX_PX, (where, heights)
        assert csp_violations(page, reports) == [], where
        page.screenshot(path=str(shots / f"team-day-{step}-{width}-{db}.png"), full_page=True)
        if width == 1440 and step in DOCS_PICTURES and os.environ.get("LEV_DOCS_SCREENSHOTS") == "1":
            page.screenshot(path=str(DOCS_IMAGES / DOCS_PICTURES[step]))
        axe_page.goto(page.url)
        found.extend(describe(where, run_axe(axe_page, script)))
        steps.append(step)

    # The home page, and from its list of the team's deals the one with no search yet.
    sign_in(page, base, "dana", day["password"])
    looks_right("home")
    page.locator("#my-deals").get_by_role("link", name=UNSEARCHED_DEAL).click()
    page.wait_for_url(f"**/admin/deals/deal/{day['deal_id']}/change/**")
    assert page.locator("#ranked-lenders .lev-empty").is_visible()  # no search yet
    looks_right("deal-unsearched")

    # "Find lenders": ranked (by the worker on PostgreSQL: reload until it has answered).
    page.click("#find-lenders")
    page.wait_for_load_state()
    wait_for_ranked(page, search_jobs)
    rows = page.locator("#ranked-lenders table.lev-ranked tbody tr")
    assert rows.count() >= 2 and rows.first.locator(".lev-rank").inner_text() == "1"
    assert page.locator("#ranked-lenders .lev-badge").count() == 0  # nobody placed yet
    looks_right("ranked")

    # Tick the two best ranked lenders and place the deal with them: the ranks show them placed.
    names = [rows.nth(i).locator(".lev-lender-name").inner_text() for i in (0, 1)]
    for i in (0, 1):
        rows.nth(i).locator("input[name=lender_ids]").check()
    page.get_by_role("button", name="Place with selected lenders").first.click()
    page.wait_for_url("**#placements")
    message = page.inner_text(".messagelist")
    assert "Placed with 2 lenders" in message and all(name in message for name in names), message
    assert page.locator("#ranked-lenders .lev-badge").count() >= 2
    for i in (0, 1):
        assert rows.nth(i).locator(".lev-badge").count() == 1, rows.nth(i).inner_text()
    placements = page.locator("#placements table.lev-placements tbody tr")
    assert placements.count() == 2 and "Draft" in placements.first.inner_text()
    looks_right("placed")

    # The first lender's placement is sent (the placement list's action), and its quote comes back.
    page.goto(f"{base}/admin/deals/placement/?q={names[0].replace(' ', '+')}")
    row = page.locator("#result_list tbody tr", has_text=UNSEARCHED_DEAL)
    assert row.count() == 1, page.inner_text("#result_list")
    row.locator("input.action-select").check()
    page.select_option("select[name=action]", "mark_sent")
    page.locator("button[name=index]").click()
    page.wait_for_load_state()
    assert "Sent" in page.locator("#result_list tbody tr", has_text=UNSEARCHED_DEAL).inner_text()
    looks_right("placement-sent")
    page.locator("#result_list tbody tr", has_text=UNSEARCHED_DEAL).locator(
        "a[href*='/admin/deals/placement/']").first.click()
    page.wait_for_url("**/admin/deals/placement/*/change/")
    page.get_by_role("link", name="Record a quote").click()
    page.wait_for_url("**/record-quote/")
    assert page.locator("#id_quoted_on").input_value() == timezone.localdate().isoformat()
    looks_right("record-quote")

    # Copied from the lender's email: first without its rate (refused beside the field, nothing saved),
    # then whole.
    page.fill("#id_loan_amount", "$21,500,000")
    page.check("#id_rate_type_0")  # fixed
    page.fill("#id_term_months", "60")
    page.select_option("#id_recourse", "non_recourse")
    page.get_by_role("button", name="Record the quote").click()
    page.wait_for_load_state()
    assert "The quote was not recorded" in page.inner_text("#content")
    assert "required for a fixed rate" in page.inner_text(".field-fixed_rate .errorlist")
    assert page.locator("#id_loan_amount").input_value() == "$21,500,000"  # what was typed is kept
    sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert sideways <= 0, ("quote refused", width, sideways)
    page.fill("#id_fixed_rate", "6.250")
    page.fill("#id_amortization_months", "360")
    page.fill("#id_origination_fee_percent", "0.75")
    expires = timezone.localdate() + dt.timedelta(days=30)
    page.fill("#id_expires_on", expires.isoformat())
    page.fill("#id_notes", "Rate lock at 30 days.")
    page.get_by_role("button", name="Record the quote").click()
    page.wait_for_url("**/admin/deals/placement/*/change/")
    message = page.inner_text(".messagelist")
    assert f"Recorded {names[0]}'s term sheet: $21,500,000 at 6.25% fixed" in message, message
    assert "Quoted" in page.inner_text(".field-status")
    looks_right("quote-recorded")

    # The deal's comparison shows the quote; choose it as the winner through the confirmation page.
    page.goto(f"{base}/admin/deals/deal/{day['deal_id']}/change/")
    quotes = page.locator("#term-sheets table.lev-comparison tbody tr")
    assert quotes.count() == 1 and names[0] in quotes.first.inner_text() and "$21,500,000" in quotes.first.inner_text()
    looks_right("quoted")
    quotes.first.get_by_role("link", name="Choose as winner…").click()
    page.wait_for_url("**/choose-winner/*/")
    assert "cannot be undone" in page.inner_text("#content")
    looks_right("confirm-winner")
    page.click("#confirm-winner")
    page.wait_for_url("**#term-sheets")
    message = page.inner_text(".messagelist")
    assert f"{names[0]}'s quote is the winner" in message and "moved to closing" in message, message
    assert page.locator("#term-sheets .lev-winner").count() == 1
    stage = page.locator("#id_stage option:checked").inner_text()  # the deal form's stage
    assert stage == "Closing", stage
    looks_right("closing")

    if search_jobs is not None:  # ranked by the worker process, not by this one
        assert "run_lender_search" in search_jobs.tail()
    axe_context.close()
    context.close()
    assert steps == ["home", "deal-unsearched", "ranked", "placed", "placement-sent", "record-quote",
                     "quote-recorded", "quoted", "confirm-winner", "closing"]
    assert reports == []
    assert found == [], "axe-core's serious/critical violations:\n" + "\n".join(found)
