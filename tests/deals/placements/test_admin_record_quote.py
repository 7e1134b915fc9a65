"""Issue 23: "Record a quote" on a placement's admin page — a lender's term sheet copied from its email,
validated as the REST endpoint validates it and saved by the service every door uses (its rules, the
placement's move to quoted, the history and the deal's timeline). Refusals are shown on the form in
words (never a 500); another account's placement is a 404; a person who may not add term sheets, or a
viewer of the account, sees no button and gets a 403; the POST needs its CSRF token."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from deals.models import Placement, TermSheet
from deals.notes.timeline import deal_timeline
from lev.accounts.models import Membership
from lev.formatting import day
from lev.limits import TERM_SHEETS_PER_DEAL_MAX
from tests.admin_helpers import admin_client
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.factories import AccountFactory, MembershipFactory

pytestmark = pytest.mark.django_db
FIXED = {"quote_type": "term_sheet", "loan_amount": "$18,500,000", "rate_type": "fixed", "fixed_rate": "6.125",
         "term_months": "120", "amortization_months": "360", "interest_only_months": "24", "recourse": "non_recourse",
         "origination_fee_percent": "0.75", "max_ltv": "70", "min_dscr": "1.25", "prepayment": "yield maintenance",
         "notes": "Rate lock at 30 days."}


def team_member(account, username: str = "dana", role: str = Membership.Role.MEMBER, *,
                permissions: tuple[str, ...] = ("view", "add", "change")):
    """A staff member of `account` (not a superuser) with the deals app's permissions named."""
    user = get_user_model().objects.create_user(username, f"{username}@example.com", "unused", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(
        content_type__app_label="deals", codename__regex=rf"^({'|'.join(permissions)})_"))
    MembershipFactory(account=account, user=user, role=role)
    return user


@pytest.fixture
def sent(account) -> Placement:
    deal = deal_with_financials(account, title="Harbor Refi")
    return place(deal, lenders(1)[0])


def record_url(placement: Placement) -> str:
    return reverse("admin:deals_placement_record_quote", args=[placement.pk])


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def errors_of(response) -> dict[str, list[str]]:
    return {name or "__all__": list(errors) for name, errors in response.context["form"].errors.items()}


def test_the_placement_page_offers_the_form_and_recording_a_quote_goes_through_the_service(account, sent):
    dana = team_member(account)
    client = admin_client(dana)
    page = client.get(reverse("admin:deals_placement_change", args=[sent.pk])).content.decode()
    assert f'href="{record_url(sent)}"' in page and "Record a quote" in page

    form = client.get(record_url(sent))
    html = form.content.decode()
    assert form.status_code == 200 and "Record a quote from " + sent.lender.name in html
    # Today's date filled in; the indexes by their names, never their codes.
    assert f'value="{timezone.localdate().isoformat()}"' in html
    assert "1-month Term SOFR" in html and "10-year Treasury" in html and ">term_sofr_1m<" not in html
    assert "Non-recourse" in html and 'type="radio"' in html

    expires = timezone.localdate() + dt.timedelta(days=30)
    response = client.post(record_url(sent), {**FIXED, "expires_on": expires.isoformat(),
                                              "quoted_on": timezone.localdate().isoformat()})
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:deals_placement_change", args=[sent.pk])
    term_sheet = TermSheet.objects.get(placement=sent)
    assert (term_sheet.loan_amount, term_sheet.fixed_rate, term_sheet.term_months, term_sheet.amortization_months,
            term_sheet.interest_only_months, term_sheet.recourse, term_sheet.expires_on) == (
        Decimal("18500000"), Decimal("6.125"), 120, 360, 24, "non_recourse", expires)
    assert term_sheet.created_by == dana and term_sheet.rate_index == "" and term_sheet.spread_bps is None
    sent.refresh_from_db()
    assert sent.status == "quoted" and sent.first_response_at is not None
    assert messages_of(response) == [f"Recorded {sent.lender.name}'s term sheet: $18,500,000 at 6.125% fixed, "
                                     f"expires {day(expires)}. The placement is quoted."]
    # The placement's page lists it in words (the narrow inline: no times, no empty "deleted at").
    page = client.get(response["Location"]).content.decode()
    inline = page[page.index('id="term_sheets-group"'):]
    assert "$18,500,000" in inline and "6.125%" in inline and "10 yr" in inline and "Non-recourse" in inline
    assert day(expires) in inline and "a.m." not in inline and "p.m." not in inline
    # Its history says who recorded it, and the deal's timeline has it.
    assert term_sheet.history.get(history_type="+").history_user == dana
    received = [e for e in deal_timeline(deal=sent.deal) if e.kind == "quote_received"]
    assert len(received) == 1 and received[0].actor == "dana"


def test_a_floating_quote_from_the_deal_page_goes_back_to_it(account, sent):
    client = admin_client(team_member(account))
    earlier = timezone.localdate() - dt.timedelta(days=1)
    Placement.objects.filter(pk=sent.pk).update(sent_at=timezone.now() - dt.timedelta(days=5))
    response = client.post(record_url(sent) + "?from=deal", {
        "quote_type": "soft_quote", "loan_amount": "18.5M", "rate_type": "floating", "rate_index": "term_sofr_1m",
        "spread_bps": "275", "term_months": "36", "quoted_on": earlier.isoformat()})
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:deals_deal_change", args=[sent.deal_id]) + "#term-sheets"
    term_sheet = TermSheet.objects.get(placement=sent)
    assert (term_sheet.quote_type, term_sheet.loan_amount, term_sheet.rate_index, term_sheet.spread_bps) == (
        "soft_quote", Decimal("18500000"), "term_sofr_1m", 275)
    assert timezone.localdate(term_sheet.received_at) == earlier
    assert "1-month Term SOFR + 2.75% floating" in messages_of(response)[0]


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"loan_amount": ""}, "loan_amount", "Enter this: it is required."),
    ({"rate_type": ""}, "rate_type", "Choose fixed or floating."),
    ({"fixed_rate": ""}, "fixed_rate", "This is required for a fixed rate."),
    ({"rate_index": "sofr"}, "rate_index", "Must be left out for a fixed rate."),
    ({"rate_type": "floating", "fixed_rate": "", "spread_bps": "250"}, "rate_index",
     "This is required for a floating rate."),
    ({"rate_type": "floating", "rate_index": "sofr"}, "fixed_rate", "Must be left out for a floating rate."),
    ({"fixed_rate": "0.0625"}, "fixed_rate", None),  # a fraction: the percent it likely means
    ({"term_months": "601"}, "term_months", "Must be at most 600."),
    ({"term_months": "0"}, "term_months", "Must be at least 1."),
    ({"interest_only_months": "-3"}, "interest_only_months", "Must be at least 0."),
    ({"origination_fee_percent": "-1"}, "origination_fee_percent", "Must be 0 or more."),
    ({"max_ltv": "250"}, "max_ltv", "Must be at most 100."),
    ({"loan_amount": "1" * 40}, "loan_amount", None),
    ({"loan_amount": "9" * 13}, "loan_amount", "Must be at most 999999999999.99."),
    ({"loan_amount": "lots"}, "loan_amount", "Must be a number of US dollars, e.g. 18500000."),
    ({"spread_bps": "1e400", "rate_type": "floating", "fixed_rate": "", "rate_index": "sofr"}, "spread_bps",
     "Must be a whole number."),
    ({"term_months": "ten years"}, "term_months", "Must be a whole number."),
    ({"fixed_rate": "6,1,2"}, "fixed_rate", "Must be a number."),
    ({"fixed_rate": "9" * 5000}, "fixed_rate", "This is too long."),
    ({"expires_on": "next month"}, "expires_on", "Must be a date in YYYY-MM-DD format."),
    ({"quote_type": "handshake"}, "quote_type", None),
    ({"recourse": "some"}, "recourse", None),
    ({"notes": "x" * 2001}, "notes", "Must be at most 2000 characters."),
    ({"notes": "bell\x07"}, "notes", None),
])
def test_each_refusal_is_shown_on_the_form_in_words(account, sent, changes, field, message):
    client = admin_client(team_member(account))
    response = client.post(record_url(sent), {**FIXED, **changes})
    assert response.status_code == 200 and not TermSheet.objects.exists()
    errors = errors_of(response)
    assert field in errors, errors
    if message is not None:
        assert message in errors[field]
    html = response.content.decode()
    assert "The quote was not recorded" in html and "Traceback" not in html
    assert not any("_" in text for texts in errors.values() for text in texts), errors  # no field names
    sent.refresh_from_db()
    assert sent.status == "sent"


def test_the_days_of_a_quote_follow_the_apis_rules(account, sent):
    client = admin_client(team_member(account))
    today = timezone.localdate()
    tomorrow = today + dt.timedelta(days=1)
    response = client.post(record_url(sent), {**FIXED, "quoted_on": tomorrow.isoformat()})
    assert errors_of(response) == {"quoted_on": [f"This is after today ({day(today)})."]}
    Placement.objects.filter(pk=sent.pk).update(sent_at=timezone.now() - dt.timedelta(days=3))
    sent_on = timezone.localdate(timezone.now() - dt.timedelta(days=3))
    before = sent_on - dt.timedelta(days=2)
    response = client.post(record_url(sent), {**FIXED, "quoted_on": before.isoformat()})
    assert errors_of(response) == {"quoted_on": [f"This is before the placement was sent ({day(sent_on)})."]}
    assert not TermSheet.objects.exists()


def test_a_placement_that_takes_no_quote_says_why(account):
    client = admin_client(team_member(account))
    deal = deal_with_financials(account)
    draft = place(deal, lenders(1)[0], status="draft")
    html = client.get(record_url(draft)).content.decode()
    assert "Mark it sent first." in html and 'id="record-quote-form"' not in html
    page = client.get(reverse("admin:deals_placement_change", args=[draft.pk])).content.decode()
    assert record_url(draft) not in page
    # Posted anyway (a page left open while the placement moved on): the service's words, on the form.
    response = client.post(record_url(draft), FIXED)
    assert response.status_code == 200 and not TermSheet.objects.exists()
    assert any("Mark it sent first." in e for e in errors_of(response)["__all__"])


def test_an_archived_deal_takes_no_quote(account, sent):
    client = admin_client(team_member(account))
    type(sent.deal).objects.filter(pk=sent.deal_id).update(archived=True)
    response = client.post(record_url(sent), FIXED)
    assert response.status_code == 200 and not TermSheet.objects.exists()
    assert "archived" in " ".join(errors_of(response)["__all__"])


def test_the_deals_quote_limit_is_refused_in_words(account, sent):
    client = admin_client(team_member(account))
    first = quote(sent)
    # The deal's live quotes up to the limit (copies of the first, written at once).
    copies = [TermSheet(**{f.attname: getattr(first, f.attname) for f in TermSheet._meta.concrete_fields
                           if f.name != "id"}) for _ in range(TERM_SHEETS_PER_DEAL_MAX - 1)]
    TermSheet.objects.bulk_create(copies)
    response = client.post(record_url(sent), FIXED)
    assert response.status_code == 200 and TermSheet.objects.count() == TERM_SHEETS_PER_DEAL_MAX
    assert "Remove quotes that no longer matter" in " ".join(errors_of(response)["__all__"])


def test_another_accounts_placement_is_not_found(account, sent):
    other = AccountFactory()
    stranger = team_member(other, "sam")
    client = admin_client(stranger)
    assert client.get(record_url(sent)).status_code == 404
    assert client.post(record_url(sent), FIXED).status_code == 404
    assert not TermSheet.objects.exists()
    # A placement id that does not exist answers the same.
    missing = reverse("admin:deals_placement_record_quote", args=[sent.pk + 1000])
    assert admin_client(team_member(account)).get(missing).status_code == 404


@pytest.mark.parametrize("who", ["viewer", "no add permission"])
def test_a_person_who_may_not_add_quotes_sees_no_button_and_is_refused(account, sent, who):
    if who == "viewer":
        person = team_member(account, "vic", Membership.Role.VIEWER)
    else:
        person = team_member(account, "vic", permissions=("view", "change"))
    client = admin_client(person)
    page = client.get(reverse("admin:deals_placement_change", args=[sent.pk]))
    assert page.status_code == 200 and record_url(sent) not in page.content.decode()
    assert client.get(record_url(sent)).status_code == 403
    assert client.post(record_url(sent), FIXED).status_code == 403
    assert not TermSheet.objects.exists()


def test_the_post_needs_its_csrf_token(account, sent):
    client = Client(enforce_csrf_checks=True)
    client.force_login(team_member(account))
    assert client.post(record_url(sent), FIXED).status_code == 403
    assert not TermSheet.objects.exists()
    token = client.get(record_url(sent)).context["csrf_token"]
    response = client.post(record_url(sent), {**FIXED, "csrfmiddlewaretoken": str(token)})
    assert response.status_code == 302 and TermSheet.objects.count() == 1


def test_other_methods_are_not_allowed(account, sent):
    client = admin_client(team_member(account))
    assert client.put(record_url(sent)).status_code == 405
    assert client.delete(record_url(sent)).status_code == 405
