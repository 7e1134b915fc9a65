"""The deal team's home page in a real browser (Debian's Chromium through Playwright, as
test_admin_browser.py: it skips without the browser unless CI=true): the demo's deal-team login at 1440
and 1024 px — the panels, a stage's link to the filtered deal list, no sideways scrolling, no CSP
violation — and the superuser's page with the operations section. Screenshots go to
artifacts/screenshots/ (admin-home-<user>-<width>.png); with LEV_DOCS_SCREENSHOTS=1 the 1440 px one also
replaces the README's docs/images/admin-home.png."""

from __future__ import annotations

import os
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from tests.browser.test_admin_browser import (  # noqa: F401  (chromium: a fixture)
    ROOT,
    chromium,
    csp_violations,
    screenshot_dir,
    sign_in,
    watch_csp,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def logins(db) -> dict[str, str]:
    out = StringIO()
    call_command("seed_demo", "--lenders", "60", "--print-credentials", stdout=out)
    text = out.getvalue()
    return {user: text.split(f"username '{user}', password '")[1].split("'")[0] for user in ("admin", "dana")}


@pytest.mark.parametrize("width", [1440, 1024])
def test_a_deal_team_s_home_page_fits_and_links_to_its_work(live_server, logins, chromium, width):  # noqa: F811
    shots = screenshot_dir()
    context = chromium.new_context(viewport={"width": width, "height": 900})
    reports = watch_csp(context)
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, live_server.url, "dana", logins["dana"])
    assert page.title() == "Your deals today | Lev"
    for panel in ("#pipeline", "#my-deals", "#waiting", "#quotes", "#expiring", "#searches"):
        assert page.locator(panel).is_visible(), panel
    assert page.locator("#my-deals tbody tr").count() == 5  # dana runs the demo deals (active: not the dead one)
    assert "Riverside Apartments Refinance" in page.inner_text("#my-deals")
    assert page.locator("#waiting tbody tr").count() >= 1  # the demo deal's lenders that have not answered
    assert "OPERATIONS" not in page.inner_text("#content").upper()
    sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert sideways <= 0, sideways
    for table in page.locator(".lev-home-table").all():
        assert table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth + 1")
    page.screenshot(path=str(shots / f"admin-home-dana-{width}.png"), full_page=True)
    if width == 1440 and os.environ.get("LEV_DOCS_SCREENSHOTS") == "1":  # the README's picture
        page.screenshot(path=str(ROOT / "docs" / "images" / "admin-home.png"))
    assert csp_violations(page, reports) == []

    # A stage's link opens the deal list filtered by that stage.
    link = page.locator("#pipeline tbody tr", has_text="Term sheets").locator("a")
    link.click()
    page.wait_for_url("**/admin/deals/deal/?stage__id__exact=*")
    assert page.locator("#result_list tbody tr").count() == 1
    assert "Riverside Apartments Refinance" in page.inner_text("#result_list")
    context.close()

    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    sign_in(page, live_server.url, "admin", logins["admin"])
    assert "OPERATIONS" in page.inner_text(".lev-home-apps").upper()
    assert "Market History" not in page.inner_text("#content")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.screenshot(path=str(shots / f"admin-home-admin-{width}.png"), full_page=True)
    context.close()


# The home page's pipeline as a reader takes it: each stage's name, deal count, loan total and link.
PIPELINE_ROWS = """() => [...document.querySelectorAll('#pipeline tbody tr')].map(r => ({
    name: r.cells[0].innerText.trim(), count: r.cells[1].innerText.trim(), total: r.cells[2].innerText.trim(),
    url: r.cells[0].querySelector('a').href, open: !r.classList.contains('lev-muted')}))"""
# The deal list as a reader takes it: how many deals it says it holds, and the exact amount of every row
# it shows (the Loan column's <data> values).
LIST_FIGURES = """() => ({
    paginator: document.querySelector('#changelist .paginator').innerText,
    amounts: [...document.querySelectorAll('#result_list tbody td.field-loan data')].map(d => d.value)})"""


def _dollars(text: str) -> Decimal:
    """"$32,500,000" (formatting.money) as a number; a dash is nothing."""
    text = text.strip()
    return Decimal(0) if text in ("", "—", "-") else Decimal(text.replace("$", "").replace(",", ""))


def _list_figures(page, url: str) -> tuple[int, Decimal]:
    """The deal list at `url`, every row shown (the admin's "Show all"): its count and its amounts added up."""
    page.goto(url + ("&" if "?" in url else "?") + "all=")
    figures = page.evaluate(LIST_FIGURES)
    count = int(figures["paginator"].split()[0].replace(",", ""))
    assert len(figures["amounts"]) == count, (url, figures["paginator"], len(figures["amounts"]))
    return count, sum((Decimal(value) for value in figures["amounts"] if value), Decimal(0))


def test_the_home_page_s_totals_are_what_the_deal_list_adds_up_to(live_server, logins, chromium):  # noqa: F811
    """Issue 39's figures that add up, read as a broker reads them: every stage's count and total on the
    home page is what its link's deal list shows, row by row; the header's active figure is the open
    stages' rows added up and the count of the deal list's default (active) view."""
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, live_server.url, "dana", logins["dana"])
    head = page.inner_text("#pipeline .lev-panel-head .lev-muted")  # "5 active deals, $86,350,000"
    active_count, active_total = head.split(" active deal")[0], head.split(", ", 1)[1]
    rows = page.evaluate(PIPELINE_ROWS)
    assert len(rows) >= 5 and any(not row["open"] for row in rows), rows
    open_count, open_total = 0, Decimal(0)
    for row in rows:
        if int(row["count"].replace(",", "")) > 200:  # past the admin's "Show all": the count alone
            page.goto(row["url"])
            said = page.evaluate(LIST_FIGURES)["paginator"]
            assert int(said.split()[0].replace(",", "")) == int(row["count"].replace(",", "")), (row, said)
            continue
        count, total = _list_figures(page, row["url"])
        assert (count, total) == (int(row["count"]), _dollars(row["total"])), row
        if row["open"]:
            open_count, open_total = open_count + count, open_total + total
    assert open_count >= 5, rows  # the demo team's book: dana's five active deals
    assert (open_count, open_total) == (int(active_count), _dollars(active_total)), (head, rows)
    # The deal list's default view is the active deals: the same count and the same amounts.
    assert _list_figures(page, live_server.url + "/admin/deals/deal/") == (open_count, open_total)
    context.close()
