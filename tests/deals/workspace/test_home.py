"""The admin's home page for a deal team (deals/workspace) and the app list's sections (lev.admin_site):
each panel with its links and money in words, kept to the person's accounts (never another account's,
never the demo's market history), the operations tables apart and hidden from deal-team staff, a
bounded number of queries whatever the number of deals, and "Lev" instead of "Django administration"."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from deals.models import Deal, Placement, Stage, TermSheet
from deals.searches.models import LenderSearch
from lev import limits
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, staff_user, superuser
from tests.factories import LenderFactory, MembershipFactory

pytestmark = pytest.mark.django_db

TEAM_PERMS = ("view_deal", "change_deal", "view_placement", "view_termsheet", "view_lendersearch", "view_lender",
              "view_stage")
HOME = "/admin/"


def member(account, username: str, role: str = Membership.Role.MEMBER, *perms: str):
    person = staff_user(username, *(perms or TEAM_PERMS))
    MembershipFactory(account=account, user=person, role=role)
    return person


def work(account, owner, *, n: int = 1, tag: str = "") -> dict:
    """`n` deals of `account` owned by `owner`, each with a placement waiting on its lender, a quote
    received two days ago that expires in three days, and a lender search running."""
    now = timezone.now()
    made = {}
    for i in range(n):
        deal = Deal.objects.create(account=account, title=f"{tag}Deal {i:03d}", loan_amount=Decimal("18500000"),
                                   loan_type="permanent", transaction_type="refinance", created_by=owner)
        lender = LenderFactory(name=f"{tag}Lender {i:03d}")
        waiting = Placement.objects.create(deal=deal, lender=lender, status="sent",
                                           sent_at=now - dt.timedelta(days=limits.HOME_WAITING_DAYS + 3))
        quoted = Placement.objects.create(deal=deal, lender=LenderFactory(name=f"{tag}Quoting {i:03d}"),
                                          status="quoted", sent_at=now - dt.timedelta(days=9),
                                          first_response_at=now - dt.timedelta(days=2))
        quote = TermSheet.objects.create(placement=quoted, deal=deal, loan_amount=Decimal("17250000"),
                                         rate_type="fixed", fixed_rate=Decimal("6.25"),
                                         received_at=now - dt.timedelta(days=2),
                                         expires_on=timezone.localdate(now) + dt.timedelta(days=3))
        search = LenderSearch.objects.create(account=account, deal=deal, deal_version=deal.version,
                                             status=LenderSearch.Status.RUNNING, progress=40, started_at=now)
        made = {"deal": deal, "waiting": waiting, "quote": quote, "search": search, "lender": lender}
    return made


def panel(html: str, panel_id: str) -> str:
    found = re.search(rf'<section class="lev-panel" id="{panel_id}">(.*?)</section>', html, re.S)
    assert found, panel_id
    return found.group(1)


def test_the_home_page_shows_the_team_s_day_in_its_words_with_links(account, other_account):
    dana = member(account, "dana")
    mine = work(account, dana)
    theirs = work(other_account, None, tag="Rival ")
    Deal.objects.create(account=account, title="Old archived deal", loan_amount=Decimal("5000000"), archived=True)
    response = admin_client(dana).get(HOME)
    assert response.status_code == 200
    html = response.content.decode()
    deal, placement, quote, search = mine["deal"], mine["waiting"], mine["quote"], mine["search"]
    deal_url = reverse("admin:deals_deal_change", args=[deal.pk])

    pipeline = panel(html, "pipeline")
    intake = Stage.objects.get(account=account, key="intake")
    assert f'href="/admin/deals/deal/?stage__id__exact={intake.pk}">{intake.name}</a>' in pipeline
    assert "$18,500,000" in pipeline and "1 active deal," in pipeline
    # Every stage links to the deal list filtered by it, and the filter answers.
    for stage_id in re.findall(r"stage__id__exact=(\d+)", pipeline):
        assert Stage.objects.get(pk=stage_id).account_id == account.pk
    assert admin_client(dana).get(f"/admin/deals/deal/?stage__id__exact={intake.pk}").status_code == 200

    owned = panel(html, "my-deals")
    assert f'<a href="{deal_url}">{deal.title}</a>' in owned and "$18,500,000" in owned and "Intake" in owned

    waiting = panel(html, "waiting")
    assert reverse("admin:deals_placement_change", args=[placement.pk]) in waiting
    assert mine["lender"].name in waiting and deal_url in waiting
    assert f"({limits.HOME_WAITING_DAYS + 3} days)" in waiting
    assert placement.sent_at.strftime("%b") in waiting  # a date in words (Oct 25, 2026), not an ISO stamp

    for panel_id in ("quotes", "expiring"):
        text = panel(html, panel_id)
        assert reverse("admin:deals_termsheet_change", args=[quote.pk]) in text, panel_id
        assert "$17,250,000" in text and quote.placement.lender.name in text and "Term Sheet" in text
    assert "in 3 days" in panel(html, "expiring")

    searches = panel(html, "searches")
    assert reverse("admin:deals_lendersearch_change", args=[search.pk]) in searches
    assert "Running, 40% done" in searches and deal.title in searches

    # Another account's work and an archived deal are nowhere; no record reads as an id.
    assert "Rival" not in html and theirs["deal"].title not in html and "Old archived deal" not in html
    assert not re.search(r"(Placement|Term sheet|Search) \d+", html)
    assert "Django administration" not in html and "<title>Your deals today | Lev</title>" in html


def test_a_viewer_sees_the_page_and_a_person_without_accounts_is_told_why(account):
    viewer = member(account, "vic", Membership.Role.VIEWER)
    work(account, viewer)
    html = admin_client(viewer).get(HOME).content.decode()
    assert 'id="pipeline"' in html and "Deal 000" in panel(html, "my-deals")
    loner = staff_user("lou", *TEAM_PERMS)
    html = admin_client(loner).get(HOME).content.decode()
    assert "You are not a member of any account" in html and 'id="pipeline"' not in html


def test_a_superuser_s_home_page_shows_its_own_accounts_and_says_where_every_account_is(account, other_account):
    ops = superuser("ops")
    MembershipFactory(account=account, user=ops, role=Membership.Role.OWNER)
    work(other_account, None, tag="Rival ")
    html = admin_client(ops).get(HOME).content.decode()
    assert "Acme Capital — the accounts you are a member of" in html and "Rival" not in html
    assert 'href="/admin/deals/deal/">all deals</a>' in html


def section_names(client) -> list[str]:
    return [app["name"] for app in client.get(HOME).context["app_list"]]


def models_of(client, section: str) -> list[str]:
    apps = {app["name"]: app for app in client.get(HOME).context["app_list"]}
    return [m["object_name"] for m in apps[section]["models"]] if section in apps else []


def test_the_app_list_puts_the_team_first_and_operations_apart_for_superusers_only(account):
    ops = admin_client(superuser("ops"))
    names = section_names(ops)
    assert names == ["Deals", "Companies & contacts", "Pipeline stages", "Placements & term sheets", "Outreach",
                     "Lenders", "Market rates", "Notes", "Operations"]
    assert {"ApiKey", "Account", "User", "Group", "AccessLog", "Application", "IdempotencyRecord",
            "OAuthAuthorization"} <= set(models_of(ops, "Operations"))
    # The sidebar of every other page is the same list.
    sidebar = ops.get(reverse("admin:deals_deal_changelist")).context["available_apps"]
    assert [app["name"] for app in sidebar][-1] == "Operations"

    perms = (*TEAM_PERMS, "view_apikey", "view_account", "view_user", "view_idempotencyrecord")
    staff = admin_client(member(account, "dana", Membership.Role.MEMBER, *perms))
    html = staff.get(HOME).content.decode()
    assert "Operations" not in section_names(staff) and "Your account" not in section_names(staff)
    for hidden in ("Idempotency records", "API keys", "Access logs", "Groups"):
        assert hidden not in html, hidden
    # Hidden is not forbidden: a page its permissions open still answers.
    assert staff.get(reverse("admin:accounts_apikey_changelist")).status_code == 200

    owner = admin_client(member(account, "olga", Membership.Role.OWNER, *perms))
    assert section_names(owner)[-1] == "Your account"
    assert models_of(owner, "Your account") == ["Account", "User", "ApiKey"]
    assert owner.get(reverse("admin:accounts_apikey_changelist")).status_code == 200
    # An app's own page still lists it as Django does.
    assert owner.get("/admin/accounts/").status_code == 200


def test_the_login_page_says_lev(client):
    html = client.get("/admin/login/").content.decode()
    assert "<title>Log in | Lev</title>" in html and "Django administration" not in html


def home_queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(HOME).status_code == 200
    return len(captured)


def test_the_home_page_reads_a_bounded_number_of_queries_whatever_the_number_of_deals(account):
    dana = member(account, "dana")
    client = admin_client(dana)
    work(account, dana, n=2, tag="A ")
    small = home_queries(client)
    work(account, dana, n=limits.HOME_PANEL_ROWS + 7, tag="B ")
    large = home_queries(client)
    assert large <= small + 5  # the lists' totals are counted once they fill a page, nothing per row
    html = client.get(HOME).content.decode()
    assert f"{limits.HOME_PANEL_ROWS + 9 - limits.HOME_PANEL_ROWS} more" in html
    work(account, dana, n=30, tag="C ")
    assert home_queries(client) == large
    print(f"home page queries: {small} with 2 deals, {large} with 17 and with 47")


def test_seed_demo_gives_a_deal_team_login_whose_home_page_leaves_out_the_market_history(client):
    out = StringIO()
    call_command("seed_demo", "--lenders", "40", "--print-credentials", stdout=out)
    text = out.getvalue()
    assert "Admin login:  username 'admin'" in text and "operations" in text
    assert "Deal team:    username 'dana'" in text and "daily workspace" in text
    admin_password = text.split("password '")[1].split("'")[0]
    dana_password = text.split("username 'dana', password '")[1].split("'")[0]
    assert admin_password != dana_password
    from django.http import HttpRequest

    assert client.login(request=HttpRequest(), username="dana", password=dana_password)
    html = client.get(HOME).content.decode()
    assert "Riverside Apartments Refinance" in panel(html, "my-deals")
    # A fresh demo fills the day's panels: two lenders still silent since the package went out, both
    # quotes in this week, and one of them lapsing within two weeks.
    waiting, quotes, expiring = panel(html, "waiting"), panel(html, "quotes"), panel(html, "expiring")
    assert waiting.count("<tr>") == 1 + 2 and "Riverside Apartments Refinance" in waiting, waiting
    assert quotes.count("<tr>") == 1 + 2 and "Riverside Apartments Refinance" in quotes, quotes
    assert expiring.count("<tr>") == 1 + 1 and "(in 10 days)" in expiring, expiring
    assert "Market History" not in html and "Past " not in html
    assert "Operations" not in html
    dana = client.get(HOME).context["user"]
    assert dana.is_staff and not dana.is_superuser
    assert client.get(reverse("admin:deals_deal_changelist")).status_code == 200
    client.logout()
    assert client.login(request=HttpRequest(), username="admin", password=admin_password)
    html = client.get(HOME).content.decode()
    assert "Market History" not in html and "Past " not in html and "Operations" in html
