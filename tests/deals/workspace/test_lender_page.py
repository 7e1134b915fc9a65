"""A lender's page as a profile (lenders.admin.lender_profile and the deal team's panels of
deals.workspace.lender_page): who the lender is and its programs summed up, the person's contacts there,
its accounts' history with the lender (never another account's), the market activity in words — in a
bounded number of queries whatever the number of programs and placements; the edit form still below."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from deals.companies.models import Contact
from deals.models import Deal, Placement, TermSheet
from lenders.models import LenderActivity
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, staff_user, superuser
from tests.factories import LenderFactory, LenderProgramFactory, MembershipFactory

pytestmark = pytest.mark.django_db

PERMS = ("view_lender", "view_lenderprogram", "view_contact", "view_placement", "view_deal")


def member(account, username: str, role: str = Membership.Role.MEMBER, *more_perms: str):
    person = staff_user(username, *PERMS, *more_perms)
    MembershipFactory(account=account, user=person, role=role)
    return person


def page(lender, person) -> str:
    response = admin_client(person).get(reverse("admin:lenders_lender_change", args=[lender.pk]))
    assert response.status_code == 200
    return response.content.decode()


def section(html: str, section_id: str) -> str:
    found = re.search(rf'<section class="lev-panel" id="{section_id}"[^>]*>(.*?)</section>', html, re.S)
    assert found, section_id
    return found.group(1)


def history(account, lender, *, n: int, tag: str) -> list[Placement]:
    """`n` deals of `account` placed with `lender`: the first won (with a quote), the second lost, the
    rest sent."""
    now = timezone.now()
    made = []
    for i in range(n):
        deal = Deal.objects.create(account=account, title=f"{tag} deal {i:02d}", loan_amount=Decimal("9000000"),
                                   loan_type="permanent", transaction_type="refinance")
        status = "won" if i == 0 else "lost" if i == 1 else "sent"
        placement = Placement.objects.create(deal=deal, lender=lender, status=status,
                                             sent_at=now - dt.timedelta(days=30 - i),
                                             created_at=now - dt.timedelta(days=30 - i))
        if i == 0:
            TermSheet.objects.create(placement=placement, deal=deal, loan_amount=Decimal("8500000"),
                                     rate_type="fixed", fixed_rate=Decimal("6.1"), winning=True)
        made.append(placement)
    return made


def test_the_profile_says_who_the_lender_is_its_programs_and_activity(account, other_account):
    lender = LenderFactory(name="First Lone Star Bank", city="Dallas", state="TX", website="https://lonestar.example",
                           lender_types=["bank"])
    LenderProgramFactory(lender=lender, title="Bridge", min_loan_amount=Decimal("2000000"),
                         max_loan_amount=Decimal("25000000"), max_ltv=Decimal("75"), min_dscr=Decimal("1.25"),
                         sponsor_states=["TX", "OK", "LA"], asset_types=["multifamily", "industrial"],
                         loan_types=["bridge"], positions=["senior"], recourse_types=["non_recourse"])
    LenderProgramFactory(lender=lender, title="Old program", status="inactive", max_ltv=Decimal("90"))
    LenderActivity.objects.create(account=account, lender=lender, state="TX", quotes_90d=7, closings_90d=2,
                                  avg_response_hours=30, score=0.7)
    LenderActivity.objects.create(account=account, lender=lender, state="OK", quotes_90d=1, closings_90d=0, score=0.1)
    # Another account's activity with the lender never shows (issue 37: "Most active in WY" leaked).
    LenderActivity.objects.create(account=other_account, lender=lender, state="WY", quotes_90d=1, closings_90d=1,
                                  score=0.9)
    html = page(lender, member(account, "dana"))
    profile = section(html, "lender-profile")
    for words in ("Bank", "Dallas, TX", "https://lonestar.example", "$2M\N{EN DASH}$25M", "75%", "1.25x", "LA, OK, TX",
                  "Multifamily, Industrial", "Bridge",
                  "Senior", "Non-recourse", "Old program", "(inactive)"):
        assert words in profile, words
    assert "90%" not in section(html, "lender-profile").split("<table")[0]  # an inactive program's limits
    activity = section(html, "lender-activity")
    assert "8 quotes and 2 closings in the last 90 days, across 2 markets." in activity
    assert "Very active" in activity and "TX (7 quotes, 2 closings)" in activity and "WY" not in activity
    assert html.index('id="lender-activity"') < html.index("Lender details") < html.index('id="lender_form"')


def test_a_nationwide_program_makes_the_lender_nationwide(account):
    lender = LenderFactory()
    LenderProgramFactory(lender=lender, sponsor_states=["TX"])
    LenderProgramFactory(lender=lender, sponsor_states=[])
    assert "Nationwide" in section(page(lender, member(account, "dana")), "lender-profile")


def test_history_and_contacts_are_the_viewer_s_accounts_only(account, other_account):
    lender = LenderFactory(name="First Lone Star Bank")
    LenderProgramFactory(lender=lender)
    mine = history(account, lender, n=3, tag="Acme")
    history(other_account, lender, n=4, tag="Rival")
    Contact.objects.create(account=account, lender=lender, name="Sam Ortiz", title="MD", email="sam@lonestar.example")
    Contact.objects.create(account=other_account, lender=lender, name="Rival Banker")
    viewer = member(account, "vic", Membership.Role.VIEWER)  # a viewer sees the profile too
    for person in (viewer, superuser()):
        if person.is_superuser:
            MembershipFactory(account=account, user=person)
        html = page(lender, person)
        people, past = section(html, "lender-people"), section(html, "lender-history")
        assert "Sam Ortiz" in people and "sam@lonestar.example" in people and "Rival Banker" not in people
        assert "Rival" not in past
        figures = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", past))
        assert figures["Placements sent"] == "3" and figures["Quotes received"] == "1" and figures["Wins"] == "1"
        assert figures["Win rate"].startswith("50%")
        assert "Won 1" in past and "Lost 1" in past and "Sent 1" in past
        assert reverse("admin:deals_deal_change", args=[mine[2].deal_id]) in past
        assert past.index("Acme deal 02") < past.index("Acme deal 00")  # the latest first


def test_someone_in_no_account_sees_no_history(account):
    lender = LenderFactory()
    history(account, lender, n=2, tag="Acme")
    html = page(lender, superuser())
    assert "You are not a member of an account" in section(html, "lender-people")
    assert 'id="lender-history"' not in html and "Acme deal" not in html


def test_no_placements_yet_says_so(account):
    lender = LenderFactory()
    html = page(lender, member(account, "dana"))
    assert "Not placed with this lender yet" in section(html, "lender-history")
    assert "No contact of yours at this lender yet" in section(html, "lender-people")
    assert "No placements of your team with this lender in the last 90 days" in section(html, "lender-activity")


def _queries(lender, person) -> int:
    client = admin_client(person)
    url = reverse("admin:lenders_lender_change", args=[lender.pk])
    client.get(url)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_page_reads_in_the_same_queries_whatever_its_size(account, other_account):
    # with the edit form's inlines (programs, contacts) editable too
    dana = member(account, "dana", Membership.Role.MEMBER, "change_lender", "change_lenderprogram", "change_contact")
    counts = []
    for size in (2, 12):
        lender = LenderFactory()
        for i in range(size):
            LenderProgramFactory(lender=lender)
            states = ["TX", "OK", "LA", "NM", "AZ", "CO", "UT", "NV", "CA", "OR", "WA", "ID"]
            LenderActivity.objects.create(account=account, lender=lender, state=states[i], quotes_90d=i, score=0.1)
        for i in range(3):  # the contacts inline of the edit form reads each row's account choices
            Contact.objects.create(account=account, lender=lender, name=f"Contact {i}")
        history(account, lender, n=size, tag=f"Size {size}")
        history(other_account, lender, n=size, tag=f"Rival {size}")
        counts.append(_queries(lender, dana))
    assert counts[0] == counts[1], counts


def test_a_viewer_reads_the_lender_s_lists_in_words_not_json(account):
    """A staff user who may only view lenders (the demo's viewer) reads the read-only form's lists as
    the checkboxes label them; whoever may change the lender still gets the checkboxes."""
    lender = LenderFactory(name="Harbor Bank", lender_types=["bank", "credit_union"])
    LenderProgramFactory(lender=lender, title="Bridge", asset_types=["multifamily", "office"],
                         loan_types=["bridge"], sponsor_states=["TX", "CA"])
    html = page(lender, member(account, "vic", Membership.Role.VIEWER))
    form = html[html.index('id="lender_form"'):]
    assert "Multifamily, Office" in form and "Bank, Credit Union" in form and "CA, TX" in form
    assert '["multifamily"' not in form and '["bank"' not in form and "&quot;multifamily&quot;" not in form
    assert 'name="lender_types"' not in form and '-asset_types"' not in form

    # Whoever may change the lender (a member, on the account's own lender: the directory's are the
    # superusers', issue 38) gets the checkboxes.
    own = LenderFactory(name="Our Bank", lender_types=["bank", "credit_union"], account=account)
    LenderProgramFactory(lender=own, account=account, title="Bridge", asset_types=["multifamily", "office"],
                         loan_types=["bridge"], sponsor_states=["TX", "CA"])
    eddie = member(account, "eddie", Membership.Role.MEMBER, "change_lender", "change_lenderprogram")
    assert 'name="lender_types"' not in page(lender, eddie)  # the directory's: read in words
    editor = page(own, eddie)
    editor_form = editor[editor.index('id="lender_form"'):]
    assert 'name="lender_types"' in editor_form and '-0-asset_types"' in editor_form
    assert "Multifamily, Office" not in editor_form and "Bank, Credit Union" not in editor_form


def test_the_lender_s_answer_time_is_one_median_with_the_span_it_covers(account):
    """Issue 39: the lender page said "about N hours on average" — an average of per-market medians,
    with no word of what it covered. It is now one figure: the median hours from sending to the
    lender's first answer, over the person's accounts' placements answered in the last 90 days, each
    placement once (a deal in two markets is not counted twice), with the span and the count."""
    from deals.models import DealProperty
    from deals.placements.activity import WINDOW_DAYS, lender_activity_recompute

    dana = member(account, "dana")
    lender = LenderFactory(name="Answer Time Bank")
    now = timezone.now()
    for n, (hours, states) in enumerate([(10, ("TX", "CA")), (40, ("TX",)), (300, ("CA",)), (2, ("TX",))]):
        deal = Deal.objects.create(account=account, title=f"Answered {n}", loan_amount=Decimal("9000000"),
                                   loan_type="permanent", transaction_type="refinance")
        for state in states:
            DealProperty.objects.create(deal=deal, name=f"{state} building", state=state, asset_type="multifamily")
        # The last one was answered before the window: it is not in the figure.
        sent = now - dt.timedelta(days=WINDOW_DAYS + 20 if n == 3 else 20)
        Placement.objects.create(deal=deal, lender=lender, status="reviewing", sent_at=sent,
                                 first_response_at=sent + dt.timedelta(hours=hours))
    lender_activity_recompute(now=now)
    html = page(lender, dana)
    assert "on average" not in html
    history_panel = section(html, "lender-history")
    assert "median 40 hours" in history_panel, history_panel
    assert f"3 answers in the last {WINDOW_DAYS} days" in history_panel, history_panel
    # Said once on the page: the activity panel does not give a second figure.
    assert html.count("median 40 hours") == 1 and "hours" not in section(html, "lender-activity")
