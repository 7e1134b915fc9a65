"""The deal team's home page in a real browser (Debian's Chromium through Playwright, as
test_admin_browser.py: it skips without the browser unless CI=true): the demo's deal-team login at 1440
and 1024 px — the panels, a stage's link to the filtered deal list, no sideways scrolling, no CSP
violation — and the superuser's page with the operations section. Screenshots go to
artifacts/screenshots/ (admin-home-<user>-<width>.png); with LEV_DOCS_SCREENSHOTS=1 the 1440 px one also
replaces the README's docs/images/admin-home.png."""

from __future__ import annotations

import os
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
