"""The demo's pipeline: each demo deal where a deal team would have it, with the history of how it got
there (who moved it, when, and why), dated over the past weeks."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from deals.models import Deal
from deals.pipeline.models import Stage, StageChange

# Demo deal title → its moves after intake: (stage key, days after it was opened, why).
DEMO_PATHS: dict[str, list[tuple[str, int, str]]] = {
    "Riverside Apartments Refinance": [
        ("underwriting", 3, "Rent roll and T-12 received."),
        ("in_market", 9, "Package sent to four lenders."),
        ("term_sheets", 21, "Two quotes in; comparing them with the sponsor."),
    ],
    "Harbor Point Office Value-Add": [
        ("underwriting", 4, "Leasing plan reviewed with the sponsor."),
        ("in_market", 15, "Teaser out to bridge lenders."),
    ],
    "Mesa Self Storage Portfolio": [("underwriting", 2, "Both facilities' operating statements in.")],
    "Lakeview Industrial Build-to-Suit": [
        ("underwriting", 5, "Tenant's lease and budget reviewed."),
        ("in_market", 12, "Construction lenders contacted."),
        ("term_sheets", 26, "Three construction quotes received."),
        ("closing", 34, "Sponsor signed the term sheet; lender's diligence started."),
    ],
    "Cedar Hills Land Assemblage": [
        ("underwriting", 3, "Zoning status checked."),
        ("dead", 10, "Seller took a cash offer; the sponsor dropped the deal."),
    ],
}
OPENED_DAYS_AGO = 40
# The deal in mid-placement is younger: its quotes came in this week (the home page's "Quotes received
# this week"), its package went out two weeks ago (two lenders still silent: "Waiting on a lender").
OPENED_DAYS_AGO_BY_TITLE = {"Riverside Apartments Refinance": 23}


def opened_at(deal: Deal, now: dt.datetime | None = None) -> dt.datetime:
    """When the demo deal was opened: the day its path (stages, placements, notes) counts from."""
    days = OPENED_DAYS_AGO_BY_TITLE.get(deal.title, OPENED_DAYS_AGO)
    return (now or timezone.now()) - dt.timedelta(days=days)


@transaction.atomic
def seed_demo_stages(*, deal: Deal, user=None, now: dt.datetime | None = None) -> int:
    """Put a demo deal on its path with a dated history (nothing for a deal that has one). Returns the
    number of moves recorded."""
    if StageChange.objects.filter(deal=deal).exists():
        return 0
    opened = opened_at(deal, now)
    stages = {s.key: s for s in Stage.objects.filter(account_id=deal.account_id).exclude(key="")}
    current = Stage.objects.get(pk=deal.stage_id)
    changes = [StageChange(deal=deal, to_stage=current, to_name=current.name, by=user, automatic=True,
                           reason="Deal created.", at=opened)]
    for key, days, reason in DEMO_PATHS.get(deal.title, []):
        target = stages[key]
        changes.append(StageChange(deal=deal, from_stage=current, from_name=current.name, to_stage=target,
                                   to_name=target.name, by=user, reason=reason,
                                   at=opened + dt.timedelta(days=days, hours=10)))
        current = target
    StageChange.objects.bulk_create(changes)
    Deal.objects.filter(pk=deal.pk).update(stage=current, created_at=opened)
    return len(changes) - 1
