"""Notes are named by what they say and when (issue 39), not "Meeting 7": Note.__str__ is the first
line of the body (shortened past NAME_MAX) and its day, and the deal page's notes, the note's page
and the note list read so."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse

from deals.models import Note
from deals.notes import services as note_services
from deals.notes.models import NAME_MAX
from tests.admin_helpers import admin_client, superuser
from tests.deals.placements.helpers import deal_with_financials

pytestmark = pytest.mark.django_db

DAY = dt.datetime(2026, 12, 7, 1, 21, tzinfo=dt.UTC)


def dated(note: Note) -> Note:
    Note.objects.filter(pk=note.pk).update(created_at=DAY)
    note.refresh_from_db()
    return note


def test_a_note_is_named_by_its_first_line_and_day(account):
    deal = deal_with_financials(account)
    call = dated(note_services.note_create(account=account, author=None, target={"deal": deal}, kind="call",
                                           body="Call with Granite Bank\nThey want the T-12 by month."))
    assert str(call) == "Call with Granite Bank — Dec 7, 2026"
    long = dated(note_services.note_create(account=account, author=None, target={"deal": deal}, kind="email",
                                           body="  Rent roll   and trailing-12 received " + "x" * 80))
    name = str(long)
    assert name.startswith("Rent roll and trailing-12 received x") and name.endswith("… — Dec 7, 2026")
    assert len(name.split(" — ")[0]) == NAME_MAX
    assert str(Note(kind="meeting", body="Site tour")) == "Site tour"  # not saved yet: no day


def test_the_admin_lists_notes_by_their_names(account):
    deal = deal_with_financials(account)
    note = dated(note_services.note_create(account=account, author=None, target={"deal": deal}, kind="meeting",
                                           body="Kickoff with Maria Delgado: refinance the bridge loan"))
    client = admin_client(superuser())
    name = "Kickoff with Maria Delgado: refinance the bridge loan — Dec 7, 2026"
    for path in (reverse("admin:deals_deal_change", args=[deal.pk]), reverse("admin:deals_note_change", args=[note.pk]),
                 reverse("admin:deals_note_history", args=[note.pk])):
        html = client.get(path).content.decode()
        assert name in html, path
        assert f"Meeting {note.pk}<" not in html and f"Meeting {note.pk} " not in html, path
