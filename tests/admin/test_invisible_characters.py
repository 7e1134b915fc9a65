"""Invisible format characters are neutralised in every text the admin shows (issue 39): a bidirectional
control (U+202E, U+2066 to U+2069, …) or another invisible format character (U+200B to U+200F, …) typed into a
note, a deal's title and description or a term sheet's text is not in any page that shows them — the
deal page (summary, quotes, timeline, notes), the note's, the term sheet's and the deal's timeline pages,
the lists — nor in the admin's autocomplete; the text around it is shown (lev.invisible, lev.admin_site)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from deals.models import Note
from deals.notes import services as note_services
from lev.invisible import INVISIBLE_FORMAT_CONTROLS, LINE_SEPARATORS, without_invisible, without_invisible_utf8
from tests.admin_helpers import admin_client, superuser
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote

pytestmark = pytest.mark.django_db

# Each character the issue names and the other invisible format controls of lev.invisible.
NAMED = ["\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b", "\u200c", "\u200d", "\u200e", "\u200f",
         "\u202a", "\u202b", "\u202c", "\u202d"]
CHARS = sorted(set(NAMED) | INVISIBLE_FORMAT_CONTROLS)


def test_the_list_covers_what_the_issue_names():
    assert set(NAMED) <= INVISIBLE_FORMAT_CONTROLS
    assert without_invisible("Evil\u202egpj.exe\u2028next") == "Evilgpj.exe next"
    assert without_invisible_utf8("a\u2066b".encode()) == b"ab"
    text = b"nothing to take out"
    assert without_invisible_utf8(text) is text


@pytest.mark.parametrize("char", CHARS, ids=[f"U+{ord(c):04X}" for c in CHARS])
def test_no_admin_page_shows_an_invisible_control_typed_into_a_note_a_deal_or_a_term_sheet(account, char):
    client = admin_client(superuser())
    deal = deal_with_financials(account, title=f"Evil{char}gpj.exe Tower", description=f"Ask{char}zyx rate")
    placement = place(deal, lenders(1)[0])
    sheet = quote(placement, notes=f"Spread{char}fo nruter at signing")
    note = note_services.note_create(account=account, author=None, target={"deal": deal}, kind="call",
                                     body=f"Call with{char} Granite Bank")
    placement_note = Note.objects.create(account=account, kind="email", placement=placement,
                                         body=f"Sent{char} the rent roll")
    pages = {
        "deal": reverse("admin:deals_deal_change", args=[deal.pk]),
        "deals": reverse("admin:deals_deal_changelist"),
        "timeline": reverse("admin:deals_deal_timeline", args=[deal.pk]),
        "note": reverse("admin:deals_note_change", args=[note.pk]),
        "notes": reverse("admin:deals_note_changelist"),
        "placement note": reverse("admin:deals_note_change", args=[placement_note.pk]),
        "term sheet": reverse("admin:deals_termsheet_change", args=[sheet.pk]),
        "term sheets": reverse("admin:deals_termsheet_changelist") + "?deal_status=all",
        "placement": reverse("admin:deals_placement_change", args=[placement.pk]),
    }
    shown = {}
    for name, path in pages.items():
        response = client.get(path)
        assert response.status_code == 200, (name, response.status_code)
        html = response.content.decode()
        assert char not in html, f"{name} shows U+{ord(char):04X}"
        shown[name] = html
    if char in LINE_SEPARATORS:
        return
    # The text around it is there, joined as a reader sees it.
    assert "Evilgpj.exe Tower" in shown["deal"] and "Askzyx rate" in shown["deal"]
    assert "Call with Granite Bank" in shown["deal"] and "Call with Granite Bank" in shown["note"]
    assert "Spreadfo nruter at signing" in shown["term sheet"] and "Spreadfo nruter" in shown["deal"]
    assert "Evilgpj.exe Tower" in shown["deals"] and "Sent the rent roll" in shown["placement note"]
    # And in the autocomplete of a field pointing at deals (the deal property's).
    answer = client.get(reverse("admin:autocomplete"), {"app_label": "deals", "model_name": "dealproperty",
                                                        "field_name": "deal", "term": "Evil"})
    assert answer.status_code == 200
    assert [row["text"] for row in answer.json()["results"]] == ["Evilgpj.exe Tower"]
