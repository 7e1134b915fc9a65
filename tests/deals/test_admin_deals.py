"""The deal team's admin, through the Django test client on the real database: the deal page's
searches and ranked lenders, "Find lenders" (button and list action) through the API's service,
money and ratios as a person reads them, the deal list's columns and filters without N+1, edits
that go through the services (versions), and tenancy for staff who are not superusers."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from deals import services as deal_services
from deals.models import Deal, DealFinancials, DealProperty
from deals.searches import services as lender_services
from deals.searches.models import LenderMatch, LenderSearch
from lev import limits
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, change_form_data, staff_user, superuser
from tests.deals.fixtures import eager_jobs  # noqa: F401  (a fixture: jobs run in-process, as embedded)
from tests.deals.searches.factories import lender_with, make_deal, refresh
from tests.factories import AccountFactory, DealFinancialsFactory, DealPropertyFactory, MembershipFactory
from tests.faults import broker, free_port

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_jobs")]


@pytest.fixture
def ops():
    return superuser()


@pytest.fixture
def client(ops):
    return admin_client(ops)


@pytest.fixture
def directory(db):
    """Twelve lenders whose one program each fits `make_deal` ($10M permanent, TX multifamily)."""
    return [lender_with(f"Lender {n:02d}") for n in range(12)]


def change_url(deal: Deal) -> str:
    return reverse("admin:deals_deal_change", args=[deal.pk])


def find_url(deal: Deal) -> str:
    return reverse("admin:deals_deal_find_lenders", args=[deal.pk])


def press_find_lenders(client, deal, django_capture_on_commit_callbacks):
    """POST the deal page's "Find lenders" form; the queued job runs when the request's
    transaction commits (the test's transaction never does, so its callbacks are run here)."""
    with django_capture_on_commit_callbacks(execute=True):
        return client.post(find_url(deal))


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def searched(deal: Deal, django_capture_on_commit_callbacks) -> LenderSearch:
    with django_capture_on_commit_callbacks(execute=True):
        search, _ = lender_services.lender_search_start(deal=deal)
    return refresh(search)


# --- the deal page ------------------------------------------------------------------------------------
def test_the_deal_page_shows_the_ranked_lenders_of_its_latest_completed_search(
        client, account, directory, django_capture_on_commit_callbacks):
    deal = make_deal(account, loan_amount=Decimal("18500000"))
    DealFinancialsFactory(deal=deal, estimated_value=Decimal("26000000"), in_place_noi=Decimal("1650000"),
                          interest_rate=Decimal("6.25"))
    search = searched(deal, django_capture_on_commit_callbacks)
    assert search.status == "completed" and search.total_matches == 12

    html = client.get(change_url(deal)).content.decode()
    top = list(LenderMatch.objects.filter(search=search).order_by("rank").select_related("lender"))
    assert len(top) == 12
    shown, hidden = top[: limits.ADMIN_TOP_MATCHES], top[limits.ADMIN_TOP_MATCHES:]
    table = html[html.index('class="lev-table lev-ranked"'):]
    for match in shown:
        link = f'href="{reverse("admin:lenders_lender_change", args=[match.lender_id])}"'
        assert link in table, match.lender.name
        assert escape(match.match_insights[0]) in table and escape(match.programs[0]["title"]) in table
        assert f'<td class="lev-num lev-rank">{match.rank}</td>' in table
    for match in hidden:  # the rest is on the search's own page
        assert escape(match.lender.name) not in table
    assert "See all 12 ranked lenders" in html
    # The chart: one bar per top match, its score written beside it.
    start = html.index('<svg role="img"')
    chart = html[start:html.index("</svg>", start)]
    assert chart.count("<rect") == limits.ADMIN_TOP_MATCHES
    assert f'class="lev-chart-value">{top[0].score}</text>' in chart
    # Figures as a person reads them.
    assert "$18,500,000" in html and "71.15%" in html and "$1,650,000" in html
    for label in ("<dt>LTV</dt>", "<dt>DSCR</dt>", "<dt>In-place NOI</dt>"):
        assert label in html
    financials = DealFinancials.objects.get(deal=deal)
    assert f"<dd>{financials.dscr:.2f}x</dd>" in html
    # Its searches, newest first.
    assert f'href="{reverse("admin:deals_lendersearch_change", args=[search.pk])}">#{search.pk}</a>' in html


def test_a_deal_page_without_a_search_says_so_and_shows_what_a_search_needs(client, account):
    deal = make_deal(account, states=(), asset_types=(), loan_amount=None)
    html = client.get(change_url(deal)).content.decode()
    assert "No completed lender search yet" in html and "No lender search yet." in html
    assert "Not ready for a lender search yet: add a loan amount; at least one property." in html


def test_find_lenders_starts_a_search_through_the_service_and_reuses_a_fresh_one(
        client, ops, account, directory, django_capture_on_commit_callbacks):
    deal = make_deal(account)
    response = press_find_lenders(client, deal, django_capture_on_commit_callbacks)
    assert response.status_code == 302 and response["Location"].startswith(change_url(deal))
    search = LenderSearch.objects.get()
    assert (search.deal_id, search.account_id, search.created_by, search.deal_version) == (
        deal.pk, account.pk, ops, deal.version)
    assert search.status == "completed" and search.total_matches == 12
    page = client.get(response["Location"])
    assert f"Search {search.pk} is pending" in page.content.decode()  # the message, then the results
    assert page.content.decode().count('class="lev-num lev-rank"') == limits.ADMIN_TOP_MATCHES

    again = press_find_lenders(client, deal, django_capture_on_commit_callbacks)
    assert LenderSearch.objects.count() == 1  # the deal is unchanged: reused, as the API does
    assert messages_of(again) == [f"The deal is unchanged since search {search.pk} started, so it is reused. "
                                  f"Search {search.pk} is completed: 12 lenders matched."]


@pytest.mark.django_db(transaction=True)
def test_where_jobs_run_in_process_the_button_answers_with_the_finished_search(client, account, directory):
    deal = make_deal(account)
    response = client.post(find_url(deal), follow=True)
    search = LenderSearch.objects.get()
    assert messages_of(response) == [f"Search {search.pk} is completed: 12 lenders matched."]
    assert response.content.decode().count('class="lev-num lev-rank"') == limits.ADMIN_TOP_MATCHES


def test_find_lenders_only_answers_post(client, account):
    deal = make_deal(account)
    assert client.get(find_url(deal)).status_code == 405
    assert not LenderSearch.objects.exists()


def test_a_deal_that_is_not_ready_gets_what_is_missing_and_no_search(client, account,
                                                                       django_capture_on_commit_callbacks):
    deal = make_deal(account, states=(), asset_types=())
    response = press_find_lenders(client, deal, django_capture_on_commit_callbacks)
    assert response.status_code == 302
    assert messages_of(response) == [
        "This deal can't be matched with lenders yet. Add at least one property, then search again."]
    assert not LenderSearch.objects.exists()


def test_an_archived_deal_is_read_only_and_cannot_be_searched(client, account, django_capture_on_commit_callbacks):
    deal = deal_services.deal_archive(deal=make_deal(account))
    page = client.get(change_url(deal))
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert 'id="find-lenders" disabled' in page.content.decode()
    response = press_find_lenders(client, deal, django_capture_on_commit_callbacks)
    assert messages_of(response) == [
        "This deal is archived, so lenders can no longer be searched for it."]
    assert client.post(change_url(deal), {"title": "Renamed"}).status_code == 403
    assert refresh(deal).title != "Renamed" and not LenderSearch.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_the_search_is_kept_and_the_page_says_so(client, account, directory):
    deal = make_deal(account)
    with broker(f"redis://127.0.0.1:{free_port()}/0"):  # nothing listens there
        response = client.post(find_url(deal), follow=True)
    assert response.status_code == 200
    search = LenderSearch.objects.get()
    assert search.status == "pending" and search.queued_at is None
    [message] = list(response.context["messages"])
    assert message.level_tag == "warning"
    assert str(message) == (f"Search {search.pk} is pending: it was saved but its ranking job could not be queued "
                            "(the job queue is unreachable). It is queued automatically when the queue is back.")


def test_the_list_action_finds_lenders_for_each_selected_deal(client, account, directory,
                                                              django_capture_on_commit_callbacks):
    ready = make_deal(account, title="Ready Deal")
    bare = make_deal(account, title="Bare Deal", states=(), asset_types=())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:deals_deal_changelist"),
                               {"action": "find_lenders", "_selected_action": [ready.pk, bare.pk]})
    assert response.status_code == 302
    search = LenderSearch.objects.get()
    assert search.deal_id == ready.pk and refresh(search).status == "completed"
    assert sorted(messages_of(response)) == [
        "Bare Deal: This deal can't be matched with lenders yet. Add at least one property, then search again.",
        f"Ready Deal: Search {search.pk} is pending: ranking lenders for deal {ready.pk}. "
        "Reload this page to see the ranked lenders.",
    ]


def test_the_list_action_is_bounded(client, account):
    deals = [make_deal(account) for _ in range(limits.ADMIN_FIND_LENDERS_MAX_DEALS + 1)]
    response = client.post(reverse("admin:deals_deal_changelist"),
                           {"action": "find_lenders", "_selected_action": [d.pk for d in deals]})
    assert messages_of(response) == [
        f"Select at most {limits.ADMIN_FIND_LENDERS_MAX_DEALS} deals to find lenders for at once."]
    assert not LenderSearch.objects.exists()


# --- the deal list ------------------------------------------------------------------------------------
def list_rows(html: str) -> list[str]:
    start = html.index('<table id="result_list">')
    body = html[start:html.index("</table>", start)]
    return re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>")[1], re.S)


def test_the_deal_list_shows_market_size_money_and_the_latest_search(client, account, directory,
                                                                      django_capture_on_commit_callbacks):
    deal = make_deal(account, title="Two Markets", states=("TX", "OK"), asset_types=("multifamily", "retail"),
                     loan_amount=Decimal("18500000"))
    search = searched(deal, django_capture_on_commit_callbacks)
    make_deal(account, title="No Search Yet", states=(), asset_types=())
    html = client.get(reverse("admin:deals_deal_changelist")).content.decode()
    rows = {("Two Markets" in row): row for row in list_rows(html)}
    row = rows[True]
    # One cell per thing a deal team reads: the property (asset types · states over the units), the loan
    # (amount over type), so the list fits a laptop.
    assert ('<td class="field-property_cell">Multifamily, Retail · OK, TX<div class="lev-sub">200 units</div></td>'
            in row)
    assert '<td class="field-loan"><data value="18500000">$18.5M</data><div class="lev-sub">' in row
    assert "lev-badge--completed" in row
    link = reverse("admin:deals_lendersearch_change", args=[search.pk])
    assert f'<a href="{link}">{search.total_matches} matches</a>' in row
    assert '<td class="field-latest_search">—</td>' in rows[False]


def test_the_deal_list_page_costs_the_same_queries_for_three_deals_or_thirty(client, account, directory,
                                                                            django_capture_on_commit_callbacks):
    def add_deals(count: int) -> None:
        for n in range(count):
            deal = make_deal(account, states=("TX", "OK"), asset_types=("multifamily", "office"))
            if n % 2:
                searched(deal, django_capture_on_commit_callbacks)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("admin:deals_deal_changelist")).status_code == 200
        return len(captured)

    add_deals(3)
    client.get(reverse("admin:deals_deal_changelist"))  # process-wide caches filled before counting
    few = queries()
    add_deals(27)
    assert Deal.objects.count() == 30
    assert queries() == few
    assert few <= 13  # session, user, counts (filtered and active deals), the page, its properties, filters


def test_archived_deals_are_hidden_unless_asked_for(client, account):
    make_deal(account, title="Live Deal")
    deal_services.deal_archive(deal=make_deal(account, title="Gone Deal"))
    url = reverse("admin:deals_deal_changelist")

    def titles(query: str = "") -> set[str]:
        html = client.get(url + query).content.decode()
        return {title for title in ("Live Deal", "Gone Deal") if title in html}

    assert titles() == {"Live Deal"}
    assert titles("?archived=active") == {"Live Deal"}
    assert titles("?archived=archived") == {"Gone Deal"}
    assert titles("?archived=all") == {"Live Deal", "Gone Deal"}
    assert titles("?archived=bogus") == {"Live Deal"}  # anything else reads as the default


def test_the_deal_list_filters_by_property_state_asset_type_and_latest_search(
        client, account, directory, django_capture_on_commit_callbacks):
    texas = make_deal(account, title="Texas Flats")
    make_deal(account, title="Oklahoma Offices", states=("OK", "OK"), asset_types=("office", "office"))
    searched(texas, django_capture_on_commit_callbacks)
    url = reverse("admin:deals_deal_changelist")

    def titles(query: str) -> list[str]:
        response = client.get(url + query)
        assert response.status_code == 200
        return sorted(d.title for d in response.context["cl"].result_list)

    assert titles("?property_state=OK") == ["Oklahoma Offices"]  # listed once, for two OK properties
    assert titles("?asset_type=multifamily") == ["Texas Flats"]
    assert titles("?latest_search=completed") == ["Texas Flats"]
    assert titles("?latest_search=none") == ["Oklahoma Offices"]
    assert titles("?property_state=ZZ&asset_type=castle&latest_search=x") == ["Oklahoma Offices", "Texas Flats"]
    html = client.get(url).content.decode()
    assert "?property_state=OK" in html and "?property_state=CA" not in html  # states the deals have


# --- edits go through the services ----------------------------------------------------------------------
def test_a_property_moved_in_the_admin_is_ranked_by_the_next_search(client, account, directory,
                                                                    django_capture_on_commit_callbacks):
    deal = make_deal(account)
    first = searched(deal, django_capture_on_commit_callbacks)
    data = change_form_data(client.get(change_url(deal)))
    data["properties-0-state"] = "OK"
    response = client.post(change_url(deal), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    deal.refresh_from_db()
    assert deal.version == first.deal_version + 1
    assert list(DealProperty.objects.filter(deal=deal).values_list("state", flat=True)) == ["OK"]
    press_find_lenders(client, deal, django_capture_on_commit_callbacks)
    second = LenderSearch.objects.exclude(pk=first.pk).get()  # not the old search reused
    assert second.criteria["states"] == ["OK"]


def test_money_is_typed_and_shown_as_money(client, account):
    deal = make_deal(account, loan_amount=Decimal("18500000"))
    page = client.get(change_url(deal))
    assert 'value="18,500,000"' in page.content.decode()
    data = change_form_data(page)
    data["loan_amount"] = "$12,250,000"
    assert client.post(change_url(deal), data).status_code == 302
    deal.refresh_from_db()
    assert deal.loan_amount == Decimal("12250000") and deal.version == 2
    for typed, error in (("18.5M", "Enter a number, e.g. 18,500,000 (US dollars)."),
                         ("0", "Ensure this value is greater than or equal to 0.01."),
                         ("Infinity", "Enter a number, e.g. 18,500,000 (US dollars)."),
                         ("1e400", f"Ensure this value is less than or equal to {limits.MONEY_MAX}."),
                         ("0.001", "Ensure this value is greater than or equal to 0.01.")):
        data["loan_amount"] = typed
        response = client.post(change_url(deal), data)
        assert response.status_code == 200, typed
        assert response.context["adminform"].form.errors["loan_amount"][0] == error, typed
    assert refresh(deal).loan_amount == Decimal("12250000")


def test_financials_added_in_the_admin_are_saved_by_the_service_and_read_as_ltv_and_dscr(client, account):
    deal = make_deal(account, loan_amount=Decimal("10000000"))
    data = change_form_data(client.get(change_url(deal)))
    data.update({"financials-TOTAL_FORMS": "1", "financials-0-estimated_value": "16,000,000",
                 "financials-0-in_place_noi": "$1,000,000", "financials-0-interest_rate": "6 %",
                 "financials-0-amortization_years": "30", "financials-0-deal": str(deal.pk)})
    response = client.post(change_url(deal), data)
    assert response.status_code == 302, [f.errors for f in response.context["inline_admin_formsets"][1].formset]
    financials = DealFinancials.objects.get(deal=deal)
    assert (financials.estimated_value, financials.in_place_noi, financials.interest_rate) == (
        Decimal("16000000"), Decimal("1000000"), Decimal("6"))
    assert refresh(deal).version == 2
    html = client.get(change_url(deal)).content.decode()
    assert '<div class="readonly">62.5%</div>' in html  # LTV, in the financials inline
    assert "In-place NOI" in html and "Stabilized NOI" in html


def test_a_property_outside_the_apis_bounds_is_refused(client, account):
    deal = make_deal(account)
    data = change_form_data(client.get(change_url(deal)))
    data.update({"properties-0-units": str(limits.UNITS_MAX + 1), "properties-0-zip": "ABCDE"})
    response = client.post(change_url(deal), data)
    assert response.status_code == 200
    errors = response.context["inline_admin_formsets"][0].formset.forms[0].errors
    assert errors["units"] == [f"Ensure this value is less than or equal to {limits.UNITS_MAX}."]
    assert errors["zip"] == ["Enter a 5-digit ZIP code (or ZIP+4)."]
    assert refresh(deal).version == 1


# --- tenancy: staff who are not superusers see their accounts' deals only ----------------------------------
DEAL_PERMISSIONS = ("view_deal", "change_deal", "view_lendersearch")


def test_staff_see_only_their_accounts_deals_and_another_accounts_deal_is_missing(
        account, directory, django_capture_on_commit_callbacks):
    member = staff_user("member", *DEAL_PERMISSIONS)
    MembershipFactory(account=account, user=member)
    ours = make_deal(account, title="Our Deal")
    theirs = make_deal(AccountFactory(), title="Their Deal")
    client = admin_client(member)
    listed = client.get(reverse("admin:deals_deal_changelist")).context["cl"].result_list
    assert [d.title for d in listed] == ["Our Deal"]
    missing = Deal(pk=theirs.pk + 1000)
    for url in (change_url(theirs), find_url(theirs)):
        other = client.post(url) if url.endswith("find-lenders/") else client.get(url)
        absent = client.post(find_url(missing)) if url.endswith("find-lenders/") else client.get(change_url(missing))
        assert (other.status_code, other["Location"]) == (absent.status_code, absent["Location"]) == (302, "/admin/")
    assert not LenderSearch.objects.exists()
    assert client.get(change_url(ours)).status_code == 200
    press_find_lenders(client, ours, django_capture_on_commit_callbacks)
    assert LenderSearch.objects.get().deal_id == ours.pk
    # Their searches are missing too.
    their_search = searched(theirs, django_capture_on_commit_callbacks)
    response = client.get(reverse("admin:deals_lendersearch_change", args=[their_search.pk]))
    assert (response.status_code, response["Location"]) == (302, "/admin/")
    listed = client.get(reverse("admin:deals_lendersearch_changelist")).context["cl"].result_list
    assert [search.deal_id for search in listed] == [ours.pk]


def test_a_viewer_of_the_account_cannot_start_a_search(account, django_capture_on_commit_callbacks):
    viewer = staff_user("viewer", *DEAL_PERMISSIONS)
    MembershipFactory(account=account, user=viewer, role=Membership.Role.VIEWER)
    deal = make_deal(account)
    response = press_find_lenders(admin_client(viewer), deal, django_capture_on_commit_callbacks)
    assert messages_of(response) == ["Forbidden: viewers of an account cannot change its deals."]
    assert not LenderSearch.objects.exists()


def test_a_property_admin_edit_bumps_its_deals_version(client, account):
    deal = make_deal(account)
    prop = DealPropertyFactory(deal=deal, state="TX")
    url = reverse("admin:deals_dealproperty_change", args=[prop.pk])
    data = change_form_data(client.get(url))
    data["state"] = "LA"
    assert client.post(url, data).status_code == 302
    assert refresh(deal).version == 2 and DealProperty.objects.get(pk=prop.pk).state == "LA"


def test_a_deal_added_in_the_admin_belongs_to_a_chosen_account_and_its_creator(client, ops, account):
    page = client.get(reverse("admin:deals_deal_add"))
    assert "lev-deal-page" not in page.content.decode()  # no panels before the deal exists
    response = client.post(reverse("admin:deals_deal_add"), {
        "account": account.pk, "title": "Added Deal", "loan_amount": "7,500,000", "loan_type": "permanent",
        "transaction_type": "acquisition", "business_plan": "", "estimated_close_date": "", "description": "",
        "properties-TOTAL_FORMS": "1", "properties-INITIAL_FORMS": "0", "properties-0-name": "Added Flats",
        "properties-0-state": "TX", "properties-0-asset_type": "multifamily",
        "financials-TOTAL_FORMS": "0", "financials-INITIAL_FORMS": "0",
    })
    assert response.status_code == 302
    deal = Deal.objects.get(title="Added Deal")
    assert (deal.account, deal.created_by, deal.loan_amount) == (account, ops, Decimal("7500000"))
    assert list(deal.properties.values_list("name", "state")) == [("Added Flats", "TX")]


def test_a_property_removed_in_the_admin_is_removed_through_the_service(client, account):
    deal = make_deal(account, states=("TX", "OK"), asset_types=("multifamily", "office"))
    data = change_form_data(client.get(change_url(deal)))
    data["properties-1-DELETE"] = "on"
    assert client.post(change_url(deal), data).status_code == 302
    assert list(deal.properties.values_list("state", flat=True)) == ["TX"]
    assert refresh(deal).version == 2


def test_a_property_added_on_its_own_admin_page_bumps_its_deals_version(client, account):
    deal = make_deal(account, states=(), asset_types=())
    response = client.post(reverse("admin:deals_dealproperty_add"), {
        "deal": deal.pk, "name": "Lone Property", "state": "AZ", "asset_type": "retail", "address": "", "city": "",
        "zip": "", "units": "", "square_footage": "", "year_built": ""})
    assert response.status_code == 302
    assert refresh(deal).version == 2 and deal.properties.get().name == "Lone Property"


def test_the_deal_page_sets_interest_only_months_and_shows_debt_yield_and_both_dscrs(client, account):
    # Issue 22: a bridge loan with an IO period is shown on its interest-only coverage, the amortizing beside it.
    deal = make_deal(account, loan_type="light_bridge")
    DealFinancialsFactory(deal=deal, estimated_value=Decimal("16000000"), in_place_noi=Decimal("900000"),
                          interest_rate=Decimal("7.25"), amortization_years=25)
    data = change_form_data(client.get(change_url(deal)))
    data["financials-0-interest_only_months"] = "24"
    response = client.post(change_url(deal), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert DealFinancials.objects.get(deal=deal).interest_only_months == 24
    html = client.get(change_url(deal)).content.decode()
    assert "<dt>Debt yield</dt><dd>9%</dd>" in html
    assert "1.24x <span class=\"lev-muted\">(interest-only; 1.04x amortizing)</span>" in html
    data = change_form_data(client.get(change_url(deal)))
    data["financials-0-interest_rate"] = "0.0725"
    page = client.post(change_url(deal), data)
    assert page.status_code == 200 and "did you mean 7.25?" in page.content.decode()
