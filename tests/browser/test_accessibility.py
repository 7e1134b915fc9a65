"""Accessibility in a real browser (issue 23): axe-core (tests/browser/axe.py, pinned, from npm) run in
Debian's Chromium through Playwright on every page the deal team's walk visits, at a desktop's 1440 px
and a laptop's 1024 px, as the demo's deal-team user (dana) and as the admin: the home page, the deal
list and a deal's page, the winner's confirmation, placements, a placement's page and its "Record a
quote" form, term sheets, the lender list and a lender's page, a lender search, companies, market
rates, "Import history" and its job pages (a preview, a refusal with its names to match, a running import)
— and, signed out, /accounts/login/, the admin's sign-in and the OAuth consent page. No serious
or critical violation anywhere; a failure lists each one (rule, impact, element, page). Skips without the
browser or axe unless CI=true, where either fails.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from deals.history.models import HistoryImport
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
    imports = history_imports(deal.account, lender)
    pages = ["/admin/", "/admin/deals/deal/", f"/admin/deals/deal/{deal.pk}/change/",
             f"/admin/deals/deal/{deal.pk}/choose-winner/{quote.pk}/", f"/admin/deals/deal/{deal.pk}/timeline/",
             "/admin/deals/placement/",
             f"/admin/deals/placement/{waiting.pk}/change/", f"/admin/deals/placement/{waiting.pk}/record-quote/",
             "/admin/deals/termsheet/", "/admin/lenders/lender/", f"/admin/lenders/lender/{lender.pk}/change/",
             f"/admin/deals/lendersearch/{search.pk}/change/", "/admin/deals/company/", "/admin/lenders/marketrate/",
             "/admin/deals/deal/import-history/",
             *(f"/admin/deals/deal/import-history/{job.pk}/" for job in imports)]
    return {"passwords": passwords, "pages": pages}


def history_imports(account, lender) -> list[HistoryImport]:
    """"Import history"'s job pages in each state a deal team meets: a preview ready to apply (its plan), one
    refused for its rows and its lender names (the names' choices), one still running (its progress)."""
    done = HistoryImport.objects.create(
        account=account, file_name="crm-export.csv", dry_run=True, status=HistoryImport.Status.DONE, rows_read=5,
        deals_created=2, placements_created=5, term_sheets_created=3, file="0/kept.csv",
        summary={"rows": 5, "deals": 2, "properties": 2, "placements": 5, "term_sheets": 3, "won": 1,
                 "deals_existing": 1, "rows_skipped": 2, "encoding": "UTF-8", "new_lenders": ["Peachtree Lenders"]},
        plan=[f'line {n}: deal CRM-{n} "Deal {n}" (new) -> {lender.name} (lender {lender.pk}): quoted' for n in
              range(2, 7)])
    refused = HistoryImport.objects.create(
        account=account, file_name="crm-export.xlsx", dry_run=True, status=HistoryImport.Status.REFUSED, rows_read=9,
        rows_refused=2, file="0/kept.xlsx",
        message="2 rows to correct and 1 lender name to match; nothing was written.",
        problems=[{"line": 3, "column": "outcome", "message": 'unknown outcome "maybe later"'},
                  {"line": 5, "column": "sent_on", "message": "a date in the future"}],
        summary={"unresolved": [{"name": "Chase", "first_line": 4, "rows": 2,
                                 "candidates": [{"id": lender.pk, "name": lender.name}]}]})
    names = HistoryImport.objects.create(
        account=account, file_name="names.csv", dry_run=True, status=HistoryImport.Status.REFUSED, rows_read=9,
        file="0/names.csv", summary={"unresolved": [{"name": "Chase", "first_line": 4, "rows": 2,
                                                     "candidates": [{"id": lender.pk, "name": lender.name}]},
                                                    {"name": "Peachtree Lenders", "first_line": 7, "rows": 1,
                                                     "candidates": []}]})
    running = HistoryImport.objects.create(account=account, file_name="big.csv", status=HistoryImport.Status.RUNNING,
                                           rows_read=1200)
    return [done, refused, names, running]


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
