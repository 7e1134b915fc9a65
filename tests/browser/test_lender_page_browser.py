"""A lender's page as a deal team sees it in a real browser (Debian's Chromium through Playwright) at
1440 and 1024 px: the profile, the team's contacts and history, the market activity, then the edit form
with its programs and contacts folded — and, opened, neither the page nor the form scrolls sideways.
Screenshots go to artifacts/screenshots/admin-lender-page-*.png. Skips without the browser unless CI=true."""

from __future__ import annotations

import pytest

from deals.models import Deal, Placement
from tests.browser.test_admin_browser import (  # noqa: F401  (fixtures)
    DEMO_DEAL,
    chromium,
    csp_violations,
    demo,
    screenshot_dir,
    signed_in_page,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def placed_lender(demo) -> int:  # noqa: F811
    """A lender the demo deal is placed with (read before the browser's thread, which refuses the database)."""
    return Placement.objects.filter(deal=Deal.objects.get(title=DEMO_DEAL)).order_by("pk").first().lender_id


@pytest.mark.parametrize("width", [1440, 1024])
def test_a_lender_page_is_a_profile_that_fits_a_laptop(live_server, demo, placed_lender, chromium, width):  # noqa: F811
    shots = screenshot_dir()
    page, csp_reports = signed_in_page(chromium, live_server.url, demo["password"], width=width)
    page.goto(f"{live_server.url}/admin/lenders/lender/{placed_lender}/change/")
    for panel in ("#lender-profile", "#lender-people", "#lender-history", "#lender-activity"):
        assert page.locator(panel).is_visible(), panel
    assert "placements sent" in page.inner_text("#lender-history").lower()
    assert page.locator("#lender-history tbody tr").count() >= 1
    assert not page.locator("#programs-0 input[name='programs-0-title']").is_visible()  # folded
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") == 0
    page.screenshot(path=str(shots / f"admin-lender-page-{width}.png"))
    for summary in page.locator("fieldset.collapse summary").all():
        summary.click()
    assert page.locator("input[name='programs-0-title']").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") == 0
    assert csp_violations(page, csp_reports) == []
    page.context.close()
