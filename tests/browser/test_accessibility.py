"""Accessibility in a real browser (issue 23): axe-core (tests/browser/axe.py, pinned, from npm) run in
Debian's Chromium through Playwright on every page the deal team's walk visits, at a desktop's 1440 px
and a laptop's 1024 px, as the demo's deal-team user (dana) and as the admin: the home page, the deal
list and a deal's page, the winner's confirmation, placements, a placement's page and its "Record a
quote" form, term sheets, the lender list and a lender's page, a lender search, companies, market
rates — and, signed out, /accounts/login/, the admin's sign-in and the OAuth consent page. No serious
or critical violation anywhere; a failure lists each one (rule, impact, element, page). Skips without the
browser or axe unless CI=true, where either fails.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from deals.models import Deal, LenderSearch, Placement, TermSheet
from lenders.models import Lender
from tests.browser.axe import AXE_CONTEXT, axe_script, describe, run_axe
from tests.browser.test_admin_browser import DEMO_DEAL, chromium, oauth_client, sign_in  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

USERS = ("dana", "admin")


@pytest.fixture
def walk(db) -> dict[str, object]:
    """The demo (seed_demo) and the pages its deal team works in: passwords and the admin paths."""
    out = StringIO()
    call_command("seed_demo", "--lenders", "60", "--print-credentials", stdout=out)
    text = out.getvalue()
    passwords = {user: text.split(f"username '{user}', password '")[1].split("'")[0] for user in USERS}
    deal = Deal.objects.get(title=DEMO_DEAL)
    search = LenderSearch.objects.filter(deal=deal).order_by("pk").first()
    quote = TermSheet.objects.filter(deal=deal).order_by("pk").first()
    lender = Lender.objects.order_by("pk").first()
    waiting = Placement.objects.filter(deal=deal, status="sent").order_by("pk").first()
    assert search and quote and lender and waiting, "seed_demo's deal has a search, quotes and a sent placement"
    pages = ["/admin/", "/admin/deals/deal/", f"/admin/deals/deal/{deal.pk}/change/",
             f"/admin/deals/deal/{deal.pk}/choose-winner/{quote.pk}/", f"/admin/deals/deal/{deal.pk}/timeline/",
             "/admin/deals/placement/",
             f"/admin/deals/placement/{waiting.pk}/change/", f"/admin/deals/placement/{waiting.pk}/record-quote/",
             "/admin/deals/termsheet/", "/admin/lenders/lender/", f"/admin/lenders/lender/{lender.pk}/change/",
             f"/admin/deals/lendersearch/{search.pk}/change/", "/admin/deals/company/", "/admin/lenders/marketrate/"]
    return {"passwords": passwords, "pages": pages}


@pytest.fixture
def axe():
    return axe_script()


def check(page, name: str, script, found: list[str]) -> None:
    found.extend(describe(f"{name} ({page.viewport_size['width']} px)", run_axe(page, script)))


@pytest.mark.parametrize("width", [1440, 1024])
def test_every_page_of_the_walk_has_no_serious_accessibility_violation(live_server, walk, oauth_client, axe,  # noqa: F811
                                                                        chromium, width):  # noqa: F811
    from tests.oauth.flow import MCP_RESOURCE, REDIRECT_URI, pkce_pair

    base, found, visited = live_server.url, [], []

    # Signed out: the sign-in pages and, signed in through them, the OAuth consent page.
    _verifier, challenge = pkce_pair()
    query = {"response_type": "code", "client_id": oauth_client.client_id, "redirect_uri": REDIRECT_URI,
             "code_challenge": challenge, "code_challenge_method": "S256", "state": "s1",
             "scope": "deals:read lenders:read", "resource": MCP_RESOURCE.replace("http://testserver", base)}
    context = chromium.new_context(**AXE_CONTEXT, viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{base}/accounts/login/")
    check(page, "/accounts/login/", axe, found)
    page.goto(f"{base}/admin/login/")
    check(page, "/admin/login/", axe, found)
    page.goto(f"{base}/oauth/authorize/?" + "&".join(f"{k}={v.replace(' ', '+')}" for k, v in query.items()))
    page.wait_for_url("**/accounts/login/**")
    check(page, "/accounts/login/?next=/oauth/authorize/…", axe, found)
    page.fill("#id_username", "dana")
    page.fill("#id_password", walk["passwords"]["dana"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_selector("#authorizationForm")
    check(page, "the OAuth consent page", axe, found)
    visited += ["/accounts/login/", "/admin/login/", "consent"]
    context.close()

    # Signed in to the admin: the deal team's and the admin's pages.
    for user in USERS:
        context = chromium.new_context(**AXE_CONTEXT, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        sign_in(page, base, user, walk["passwords"][user])
        for path in walk["pages"]:
            response = page.goto(f"{base}{path}")
            assert response and response.status == 200, (user, path, response and response.status)
            check(page, f"{path} as {user}", axe, found)
            visited.append(path)
        context.close()

    assert len(visited) == 3 + len(USERS) * len(walk["pages"])
    assert found == [], "axe-core's serious/critical violations:\n" + "\n".join(found)
