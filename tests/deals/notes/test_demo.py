"""seed_demo gives the demo deals notes (calls with the lenders' people, emails, sponsor meetings) and
dates the demo deal's placements and quotes along its path, so its timeline reads like a real deal's;
a second run adds none."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from deals.models import Deal, Note
from deals.notes.timeline import deal_timeline

pytestmark = pytest.mark.django_db


def test_the_demo_deal_timeline_reads_in_the_order_it_happened():
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    deal = Deal.objects.get(account__slug="demo-capital", title="Riverside Apartments Refinance")
    entries = deal_timeline(deal=deal)
    kinds = [e.kind for e in entries]
    assert [e.at for e in entries] == sorted(e.at for e in entries)
    # The package went out after the deal moved into the market, the quotes came in after, and the
    # deal moved to term sheets once they had.
    in_market = next(i for i, e in enumerate(entries) if e.kind == "stage_changed" and "In market" in e.text
                     and e.text.startswith("Moved from Underwriting"))
    sent = [i for i, k in enumerate(kinds) if k == "placement_sent"]
    quotes = [i for i, k in enumerate(kinds) if k == "quote_received"]
    to_term_sheets = next(i for i, e in enumerate(entries) if e.text.startswith("Moved from In market"))
    assert len(sent) == 4 and len(quotes) == 2
    assert in_market < min(sent) and max(sent) < min(quotes) and max(quotes) < to_term_sheets
    calls = [e for e in entries if e.kind == "note" and e.text.startswith("Call (")]
    assert calls and all("{contact}" not in e.text for e in calls)
    assert any(e.actor == "dana" for e in entries if e.kind == "placement_sent")  # the deal team works it
    # The sponsor meeting is on the sponsor's page (the company), the calls on the placements.
    assert Note.objects.filter(company__name="Bluebonnet Residential Partners", kind="meeting").exists()
    assert Note.objects.filter(account__slug="demo-capital", deal__isnull=False).count() >= 5
    count = Note.objects.count()
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    assert Note.objects.count() == count


def test_every_demo_date_comes_after_what_caused_it():
    # Issue 39: the demo deal's placements "from rank 1-4" were sent on day 9 from a search that ran today.
    from deals.models import Placement, TermSheet
    from deals.pipeline.models import StageChange

    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    placements = list(Placement.objects.filter(deal__account__slug="demo-capital", deal__archived=False,
                                               source_search__isnull=False).select_related("source_search"))
    assert placements
    for placement in placements:
        search = placement.source_search
        assert search.created_at <= search.started_at <= search.finished_at <= placement.sent_at
        market = StageChange.objects.filter(deal=placement.deal, to_name="In market").order_by("at").first()
        assert search.finished_at <= market.at <= placement.sent_at
    for sheet in TermSheet.objects.filter(placement__in=placements).select_related("placement"):
        assert sheet.placement.sent_at <= sheet.received_at
