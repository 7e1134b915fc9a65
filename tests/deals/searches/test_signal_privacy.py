"""Privacy by construction (issue 37), through every door that shows a figure: MCP, REST and the admin.
Two accounts: nothing of one reaches the other. Three: a pooled figure appears for others, as a rate
across "3+ teams", never one team's counts, and one team's flood of made-up quotes weighs a third at most."""

from __future__ import annotations

import pytest
from django.urls import reverse

from deals.searches import services
from deals.searches.models import LenderSearch
from deals.searches.ranking import evidence as ev
from lenders.models import LenderActivity
from lev.accounts.models import Membership
from lev.accounts.services import api_key_create
from tests.admin_helpers import admin_client, staff_user
from tests.conftest import client_with_key
from tests.deals.searches.factories import lender_with, make_deal
from tests.deals.searches.test_learned_ranking import history
from tests.factories import AccountFactory, MembershipFactory, UserFactory
from tests.mcp_helpers import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def searched(django_capture_on_commit_callbacks, settings):
    settings.LEV_SEARCH_REUSE_SECONDS = 0

    def run(account) -> LenderSearch:
        with django_capture_on_commit_callbacks(execute=True):
            search, _ = services.lender_search_start(deal=make_deal(account))
        search.refresh_from_db()
        return search

    return run


def doors(live_server, account, search: LenderSearch) -> dict[str, list[dict]]:
    """The search's ranked lenders as REST and MCP give them to `account`."""
    member = MembershipFactory(account=account, user=UserFactory()).user
    _key, raw = api_key_create(user=member, account=account, name="privacy test")
    rest = client_with_key(raw).get(f"/api/v1/lender-searches/{search.pk}/").json()["results"]
    mcp = McpCaller(live_server.url, raw).ok("get_lender_search_results", {"search_id": search.pk})["results"]
    return {"rest": rest, "mcp": mcp}


def activity_rows(account) -> str:
    """The admin's lender activity list as a deal team member of `account` sees it."""
    person = staff_user(f"staff-{account.slug}", "view_lenderactivity", "view_lender")
    MembershipFactory(account=account, user=person, role=Membership.Role.MEMBER)
    response = admin_client(person).get(reverse("admin:lenders_lenderactivity_changelist"))
    assert response.status_code == 200
    return response.content.decode()


def test_with_two_accounts_nothing_of_one_reaches_the_other(live_server, searched):
    mine = AccountFactory(name="Acme", slug="acme")
    rival = AccountFactory(name="Rival", slug="rival")
    target = lender_with("Target Bank", sponsor_states=[]).lender
    lender_with("Other Bank")
    before = doors(live_server, mine, searched(mine))
    history(rival, target, "q" * 20, state="WY")  # the rival's deal flow, and made-up quotes
    from deals.placements.activity import lender_activity_recompute

    lender_activity_recompute()
    ev.refresh_lender_signals()
    after = doors(live_server, mine, searched(mine))
    for door in ("rest", "mcp"):
        assert [(m["lender_id"], m["score"]) for m in after[door]] == [
            (m["lender_id"], m["score"]) for m in before[door]], door
        for match in after[door]:
            assert match["score_parts"]["evidence"] == "none"
            assert not any("Quoted" in line or "teams" in line or "WY" in line for line in match["match_insights"])
    assert LenderActivity.objects.filter(account=rival, state="WY").exists()
    assert "Target Bank" not in activity_rows(mine)  # the rival's row is not listed to Acme's team
    assert "Target Bank" in activity_rows(rival)  # the rival's own team sees it


def test_with_three_accounts_a_pooled_rate_shows_and_no_one_dominates(live_server, searched):
    mine = AccountFactory(name="Acme", slug="acme")
    teams = [AccountFactory(name=f"Team {n}", slug=f"team-{n}") for n in range(3)]
    target = lender_with("Target Bank").lender
    lender_with("Other Bank")
    history(teams[0], target, "q" * 30)  # one team's flood of quotes...
    history(teams[1], target, "dd")
    history(teams[2], target, "nn")
    ev.refresh_lender_signals()
    found = doors(live_server, mine, searched(mine))
    for door in ("rest", "mcp"):
        by_lender = {m["lender_id"]: m for m in found[door]}
        lines = [line for line in by_lender[target.pk]["match_insights"] if "teams" in line]
        # ...weighs a third of the pooled rate at most, and no team's counts are shown.
        assert lines == ["Across 3+ teams: quotes about 33% of multifamily deals"], door
        assert not any("of" in line and "Quoted" in line for line in by_lender[target.pk]["match_insights"])
    assert "Target Bank" not in activity_rows(mine)  # the admin lists the account's own rows only
