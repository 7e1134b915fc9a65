"""Notes and the timeline in the admin: a note added on the deal, company and contact pages is the
signed-in user's, in the record's account, and existing ones are shown read-only; the deal page's
timeline panel (newest first) in a constant number of queries; the placement and term sheet history
pages (django-simple-history) for the account's own rows only, and never a revert."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from deals.models import Company, Contact, Note, Placement, TermSheet
from deals.placements import services as placement_services
from tests.admin_helpers import admin_client, change_form_data, staff_user
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote
from tests.factories import AccountFactory, MembershipFactory

pytestmark = pytest.mark.django_db

EVERY = ("view_deal", "change_deal", "view_company", "add_company", "change_company", "view_contact", "change_contact",
         "view_note", "add_note", "view_placement", "change_placement", "view_termsheet", "change_termsheet")


@pytest.fixture
def acme():
    return AccountFactory(slug="acme", name="Acme")


@pytest.fixture
def staffer(acme):
    user = staff_user("staffer", *EVERY)
    MembershipFactory(account=acme, user=user)
    return user


def add_note_on(client, url: str, body: str, kind: str = "call"):
    page = client.get(url)
    assert page.status_code == 200
    data = change_form_data(page)
    notes = next(i.formset for i in page.context["inline_admin_formsets"] if i.formset.model is Note)
    prefix = notes.prefix
    total = int(data[f"{prefix}-TOTAL_FORMS"])
    data.update({f"{prefix}-TOTAL_FORMS": str(total + 1), f"{prefix}-{total}-kind": kind,
                 f"{prefix}-{total}-body": body})
    response = client.post(url, data)
    assert response.status_code == 302, response.context and [
        i.formset.errors for i in response.context["inline_admin_formsets"]]
    return client.get(url)


def test_notes_are_added_on_the_deal_company_and_contact_pages_and_shown_read_only(acme, staffer):
    client = admin_client(staffer)
    deal = deal_with_financials(acme)
    company = Company.objects.create(account=acme, kind="sponsor", name="Harbor")
    contact = Contact.objects.create(account=acme, company=company, name="Dana")
    for target, url in (("deal", reverse("admin:deals_deal_change", args=[deal.pk])),
                        ("company", reverse("admin:deals_company_change", args=[company.pk])),
                        ("contact", reverse("admin:deals_contact_change", args=[contact.pk]))):
        page = add_note_on(client, url, f"Spoke about the {target}.")
        note = Note.objects.get(body=f"Spoke about the {target}.")
        assert (note.account, note.author, note.kind, getattr(note, f"{target}_id") is not None) == (
            acme, staffer, "call", True)
        notes = next(i.formset for i in page.context["inline_admin_formsets"] if i.formset.model is Note)
        assert [f.instance.pk for f in notes.forms] == [note.pk]
        assert f"Spoke about the {target}." in page.content.decode()
        # Shown, not edited: the existing note is a read-only row.
        assert f'name="{notes.prefix}-0-body"' not in page.content.decode()
    add_page = client.get(reverse("admin:deals_company_add"))
    assert not any(i.formset.model is Note for i in add_page.context["inline_admin_formsets"])


def test_the_deal_page_shows_its_timeline_newest_first_in_constant_queries(acme, staffer):
    client = admin_client(staffer)
    deal = deal_with_financials(acme)
    url = reverse("admin:deals_deal_change", args=[deal.pk])

    def flow(count: int) -> None:
        for lender in lenders(count):
            placement = place(deal, lender)
            sheet = quote(placement)
            Note.objects.create(account=acme, placement=placement, author=staffer, kind="call",
                                body=f"Called {lender.name}")
            Note.objects.create(account=acme, deal=deal, author=staffer, body="Sponsor update")
        return sheet

    flow(1)
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    sheet = flow(6)
    placement_services.term_sheet_select_winner(term_sheet=sheet, user=staffer)
    with CaptureQueriesContext(connection) as many:
        page = client.get(url)
    assert len(many) <= len(few) + 2, (len(few), len(many))  # no query per placement, quote or note
    timeline = page.context["lev_deal"]["timeline"]
    assert [e.at for e in timeline] == sorted((e.at for e in timeline), reverse=True)
    assert timeline[0].kind in ("stage_changed", "winner_chosen", "placement_status")
    # The page shows the latest entries (issue 39: a page that fits); the whole timeline is a link away.
    assert "winner_chosen" in {e.kind for e in timeline}
    html = page.content.decode()
    assert 'id="timeline"' in html and "Winner chosen" in html
    whole = client.get(reverse("admin:deals_deal_timeline", args=[deal.pk]))
    assert reverse("admin:deals_deal_timeline", args=[deal.pk]) in html and whole.status_code == 200
    assert {"placement_sent", "quote_received", "winner_chosen", "note"} <= {e.kind for e in whole.context["timeline"]}
    assert "Called " in whole.content.decode()


def test_placement_and_term_sheet_history_pages_are_the_accounts_own_and_read_only(acme, staffer):
    client = admin_client(staffer)
    mine = deal_with_financials(acme)
    placement = place(mine, lenders(1)[0])
    placement_services.placement_update(placement=placement, data={"status": "reviewing"})
    sheet = quote(placement)
    rival = AccountFactory(slug="rival", name="Rival")
    theirs = place(deal_with_financials(rival, title="Rival tower"), lenders(1)[0])
    their_sheet = quote(theirs)

    page = client.get(reverse("admin:deals_placement_history", args=[placement.pk]))
    assert page.status_code == 200 and "reviewing" in page.content.decode()
    assert client.get(reverse("admin:deals_termsheet_history", args=[sheet.pk])).status_code == 200
    record = Placement.history.filter(id=placement.pk).earliest("history_date")
    version = client.get(reverse("admin:deals_placement_simple_history", args=[placement.pk, record.history_id]))
    assert version.status_code == 200
    # A historical version is never saved back (it would skip the workflow's services).
    posted = client.post(reverse("admin:deals_placement_simple_history", args=[placement.pk, record.history_id]),
                         {"status": "sent"})
    assert posted.status_code == 405
    placement.refresh_from_db()
    assert placement.status == "quoted"

    # Another account's rows: the admin's "doesn't exist" answer, as on their change pages.
    their_record = Placement.history.filter(id=theirs.pk).latest("history_date")
    their_sheet_record = TermSheet.history.filter(id=their_sheet.pk).latest("history_date")
    for url in (reverse("admin:deals_placement_history", args=[theirs.pk]),
                reverse("admin:deals_termsheet_history", args=[their_sheet.pk]),
                reverse("admin:deals_placement_simple_history", args=[theirs.pk, their_record.history_id]),
                reverse("admin:deals_termsheet_simple_history", args=[their_sheet.pk,
                                                                       their_sheet_record.history_id])):
        answer = client.get(url)
        assert answer.status_code == 302 and answer["Location"] == reverse("admin:index"), url
        assert "Rival" not in client.get(answer["Location"]).content.decode()
