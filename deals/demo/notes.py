"""The demo deals' notes: calls with the lenders' people, emails, a sponsor meeting, dated along each
deal's path in the pipeline (deals.demo.pipeline), so a demo deal's timeline reads like a real one."""

from __future__ import annotations

import datetime as dt

from django.db import transaction

from deals.demo.pipeline import opened_at
from deals.models import Company, Deal, Note, Placement
from deals.searches.models import LenderSearch

# Demo deal title → its notes: (days after it was opened, kind, on what, text). "on what" is "deal",
# "sponsor" (the deal's sponsor), or "placement N" (its Nth placement, oldest first; the text may name
# the lender's contact as {contact}).
DEMO_NOTES: dict[str, list[tuple[float, str, str, str]]] = {
    "Riverside Apartments Refinance": [
        (1, "meeting", "sponsor", "Kickoff with Maria Delgado: refinance the bridge loan before it matures in "
                                  "March; wants 10-year fixed, about 65% LTV, non-recourse."),
        (3.2, "email", "deal", "Rent roll and trailing-12 received from the sponsor; occupancy 94%."),
        (10, "call", "placement 1", "Call with {contact}: likes the submarket; asked for the T-12 by month and "
                                    "the unit mix."),
        (12, "email", "placement 2", "{contact} asked for the sponsor's schedule of real estate owned; sent it."),
        (16, "call", "placement 2", "{contact}: credit committee on Thursday, a soft quote likely."),
        (19, "call", "placement 1", "{contact} walked us through the term sheet: 10-year fixed, 30-year "
                                    "amortization, two years interest-only."),
        (22, "meeting", "deal", "Reviewed both quotes with the sponsor: leaning to the fixed-rate term sheet; "
                                "asked the bridge lender to sharpen its spread."),
    ],
    "Harbor Point Office Value-Add": [
        (2, "meeting", "sponsor", "Site tour with Andre Thompson: 38% vacant, a leasing plan for the two top "
                                  "floors; wants a bridge loan with future funding for TI and leasing costs."),
        (16, "call", "deal", "Two debt funds asked for the leasing pipeline before quoting."),
    ],
    "Lakeview Industrial Build-to-Suit": [
        (6, "call", "deal", "Tenant's lease reviewed with counsel: 15-year term, investment-grade guarantor."),
        (33, "meeting", "deal", "Sponsor signed the construction lender's term sheet; diligence list sent."),
    ],
    "Cedar Hills Land Assemblage": [
        (9, "call", "deal", "Sponsor: the seller took a cash offer; we stop work on the deal."),
    ],
}
# When the demo's placements and quotes happened, in days after the deal was opened (the path sends the
# package on day 9 and has two quotes in by day 21).
SENT_DAY = 9.375  # day 9, an hour after the path moves the deal into the market (at 10 hours)
QUOTE_DAYS = (18.5, 20.3)


def _at(opened: dt.datetime, days: float) -> dt.datetime:
    return opened + dt.timedelta(days=days, hours=2)


@transaction.atomic
def date_demo_placements(*, deal: Deal, now: dt.datetime | None = None) -> None:
    """Give the demo deal's placements and quotes (made now by the services) the days they happened on its
    path, in their rows and in their history, so its timeline runs in order."""
    opened = opened_at(deal, now)
    sent = _at(opened, SENT_DAY)
    placements = list(Placement.objects.filter(deal=deal).order_by("id"))
    # The search the placements came from ran just before the path's move into the market, which it caused
    # (issue 39: placements "from rank 1-4" read as sent on day 9 from a search that ran today).
    searched = sent - dt.timedelta(minutes=65)
    LenderSearch.objects.filter(pk__in={p.source_search_id for p in placements if p.source_search_id}).update(
        created_at=searched, queued_at=searched, started_at=searched, heartbeat_at=searched + dt.timedelta(seconds=1),
        finished_at=searched + dt.timedelta(seconds=1))
    for index, placement in enumerate(placements):
        at = sent + dt.timedelta(minutes=index)
        Placement.objects.filter(pk=placement.pk).update(sent_at=at, created_at=at)
        Placement.history.filter(id=placement.pk, history_type="+").update(history_date=at, sent_at=at, created_at=at)
    sheets = list(deal.term_sheets.order_by("id"))
    for sheet, days in zip(sheets, QUOTE_DAYS, strict=False):
        at = _at(opened, days)
        type(sheet).objects.filter(pk=sheet.pk).update(received_at=at, created_at=at)
        type(sheet).history.filter(id=sheet.pk).update(history_date=at, received_at=at, created_at=at)
        Placement.objects.filter(pk=sheet.placement_id).update(first_response_at=at)
        Placement.history.filter(id=sheet.placement_id, history_type="~").update(
            history_date=at, first_response_at=at, sent_at=sent)


@transaction.atomic
def seed_demo_notes(*, deal: Deal, user=None, now: dt.datetime | None = None) -> int:
    """The demo deal's notes, dated along its path (nothing for a deal that has notes). Returns how many."""
    if Note.objects.filter(deal=deal).exists() or Note.objects.filter(placement__deal=deal).exists():
        return 0
    opened = opened_at(deal, now)
    placements = list(Placement.objects.filter(deal=deal).select_related("contact").order_by("id"))
    made = 0
    for days, kind, on, text in DEMO_NOTES.get(deal.title, []):
        target: dict = {"deal": deal}
        if on == "sponsor":
            if deal.sponsor_id is None:
                continue
            target = {"company": Company.objects.get(pk=deal.sponsor_id)}
        elif on.startswith("placement "):
            index = int(on.split()[1]) - 1
            if index >= len(placements):
                continue
            placement = placements[index]
            target = {"placement": placement}
            text = text.format(contact=placement.contact_name or "the lender")
        note = Note.objects.create(account_id=deal.account_id, author=user, kind=kind, body=text, **target)
        at = _at(opened, days)
        Note.objects.filter(pk=note.pk).update(created_at=at, updated_at=at)
        made += 1
    return made
