"""One date format in the admin (issue 39): a moment reads "Dec 7, 2026 01:21" and a day "Dec 7, 2026"
everywhere — the deal page, its timeline, a note's and a placement's page (Django's read-only fields),
the lists and the home page — never also Django's English "Dec. 7, 2026, 1:21 a.m." nor an ISO
"2026-12-07 01:21" (settings.FORMAT_MODULE_PATH: lev/formats/en/formats.py; templates name the formats)."""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse
from django.utils import formats

from deals.models import Note, Placement
from deals.notes import services as note_services
from tests.admin_helpers import admin_client, superuser
from tests.deals.placements.helpers import deal_with_financials, lenders, place, quote

pytestmark = pytest.mark.django_db

MOMENT = dt.datetime(2026, 12, 7, 1, 21, tzinfo=dt.UTC)
# Django's English formats ("N j, Y, P": Dec. 7, 2026, 1:21 a.m., midnight, noon) and ISO moments.
OTHER_FORMATS = re.compile(r"\b(?:Jan|Feb|Aug|Sept|Oct|Nov|Dec)\. \d|\b(?:March|April|June|July) \d{1,2}, \d{4}"
                           r"|\d{1,2}(?::\d{2})? [ap]\.m\.|\d{4}, (?:midnight|noon)|\d{4}-\d{2}-\d{2} \d{2}:\d{2}")


class _Text(HTMLParser):
    """The text a reader sees: the page's text nodes, without scripts and styles."""

    def __init__(self):
        super().__init__()
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def shown_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def test_the_formats_are_the_products():
    assert formats.date_format(MOMENT, "DATETIME_FORMAT") == "Dec 7, 2026 01:21"
    assert formats.date_format(MOMENT.date(), "DATE_FORMAT") == "Dec 7, 2026"
    assert formats.localize(MOMENT) == "Dec 7, 2026 01:21"


def test_every_page_shows_dates_in_the_one_format(account):
    client = admin_client(superuser())
    deal = deal_with_financials(account, title="Riverside")
    placement = place(deal, lenders(1)[0])
    sheet = quote(placement)
    note = note_services.note_create(account=account, author=None, target={"deal": deal}, kind="call",
                                     body="Call with Granite Bank")
    Note.objects.filter(pk=note.pk).update(created_at=MOMENT, updated_at=MOMENT)
    Placement.objects.filter(pk=placement.pk).update(sent_at=MOMENT, first_response_at=MOMENT)
    pages = [reverse("admin:index"), reverse("admin:deals_deal_change", args=[deal.pk]),
             reverse("admin:deals_deal_timeline", args=[deal.pk]), reverse("admin:deals_note_change", args=[note.pk]),
             reverse("admin:deals_placement_change", args=[placement.pk]),
             reverse("admin:deals_termsheet_change", args=[sheet.pk]), reverse("admin:deals_placement_changelist"),
             reverse("admin:deals_note_changelist"), reverse("admin:deals_deal_history", args=[deal.pk])]
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        text = shown_text(response.content.decode())
        assert OTHER_FORMATS.findall(text) == [], path
    # The note's page shows its moments in the one format.
    text = shown_text(client.get(reverse("admin:deals_note_change", args=[note.pk])).content.decode())
    assert "Dec 7, 2026 01:21" in text
    text = shown_text(client.get(reverse("admin:deals_deal_change", args=[deal.pk])).content.decode())
    assert "Dec 7, 2026" in text  # the placement's sent day
