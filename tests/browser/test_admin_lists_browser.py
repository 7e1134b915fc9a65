"""The deal team's lists in a real browser (Debian's Chromium through Playwright, as
tests/browser/test_admin_browser.py drives it) at a desktop's 1440 px and a laptop's 1024 px, with
the app sidebar as a new user has it (open): neither the page nor a list's results table scrolls
sideways, and placements open on the team's own active deals, not the demo's market history.
Screenshots go to artifacts/screenshots/admin-team-list-*.png; with LEV_DOCS_SCREENSHOTS=1 the README's pictures
of two lists too (DOCS_PICTURES, 1440 px). Skips without the browser unless CI=true."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser.test_admin_browser import (  # noqa: F401  (chromium, demo: fixtures)
    chromium,
    demo,
    screenshot_dir,
    signed_in_page,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TEAM_LISTS = ["deals/deal/", "deals/placement/", "deals/termsheet/", "lenders/lender/", "deals/lendersearch/",
              "deals/placement/?deal_status=all", "deals/termsheet/?deal_status=all", "deals/deal/?archived=all",
              "lenders/lenderprogram/", "lenders/lenderactivity/", "lenders/marketrate/", "deals/dealproperty/",
              "deals/note/", "deals/contact/", "deals/company/", "deals/stage/"]

DOCS_PICTURES = {"deals/deal/": "admin-deal-list.png", "deals/placement/": "admin-placements-list.png"}
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"

OVERFLOW = """() => {
  const results = document.querySelector('#changelist .results');
  return {page: document.documentElement.scrollWidth - window.innerWidth,
          results: results ? results.scrollWidth - results.clientWidth : 0};
}"""


@pytest.mark.parametrize("width", [1440, 1024])
def test_the_deal_teams_lists_fit_a_laptop(live_server, demo, chromium, width):  # noqa: F811
    shots = screenshot_dir()
    page, _ = signed_in_page(chromium, live_server.url, demo["password"], width=width, csp=False)
    for path in TEAM_LISTS:
        page.goto(f"{live_server.url}/admin/{path}")
        assert page.locator("#changelist").count() == 1, path
        assert page.evaluate(OVERFLOW) == {"page": 0, "results": 0}, (path, width)
        name = path.strip("/").replace("/", "-").replace("?", "-").replace("=", "-")
        page.screenshot(path=str(shots / f"admin-team-list-{name}-{width}.png"))
        if width == 1440 and path in DOCS_PICTURES and os.environ.get("LEV_DOCS_SCREENSHOTS") == "1":
            page.screenshot(path=str(DOCS_IMAGES / DOCS_PICTURES[path]))
    # The placements open on the team's own deals: none of the market history's (archived) rows.
    page.goto(f"{live_server.url}/admin/deals/placement/")
    assert "Past " not in page.inner_text("#result_list")
    page.goto(f"{live_server.url}/admin/deals/placement/?deal_status=archived")
    assert "Past " in page.inner_text("#result_list")
    page.context.close()
