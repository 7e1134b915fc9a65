"""Reads of chasing (docs/outreach.md): the placements emailed to their lender that have not answered,
split by what the lender did with the deal package — "opened, no answer" (an OutreachEvent "opened",
no first response) and "not opened" (emailed, never opened, no first response). Kept to the accounts
given and to their active deals (as the home page's other lists, deals.workspace.selectors)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from deals.outreach.models import OutreachEvent
from deals.pipeline.models import active_deals
from deals.placements.models import Placement
from lev.accounts.models import Account

CHASES = {
    "opened": "Opened, no answer",
    "not_opened": "Not opened",
}
# Still waiting: sent, no first response yet — the placements a follow-up reaches
# (deals.outreach.services.follow_up_targets; one the team marked "no response" is left alone).
WAITING_STATUSES = (Placement.Status.SENT,)


def _event(kind: str) -> Exists:
    return Exists(OutreachEvent.objects.filter(placement=OuterRef("pk"), kind=kind))


def silent_placements(*, accounts: Sequence[Account], which: str) -> QuerySet[Placement]:
    """The placements of `accounts` emailed and unanswered, `which` ("opened" or "not_opened"), the longest
    waiting first."""
    if which not in CHASES:
        raise ValueError(f"unknown chase: {which}")
    queryset = (Placement.objects.filter(active_deals("deal__"), deal__account__in=accounts,
                                         status__in=WAITING_STATUSES, first_response_at=None)
                .filter(_event("emailed")))
    queryset = queryset.filter(_event("opened")) if which == "opened" else queryset.exclude(_event("opened"))
    return queryset.select_related("deal", "lender").order_by("sent_at", "pk")


def chase_counts(*, accounts: Sequence[Account]) -> list[dict]:
    """Per account: {"account": Account, "opened": n, "not_opened": n} (one query for all the accounts)."""
    rows = (Placement.objects.filter(active_deals("deal__"), deal__account__in=accounts,
                                     status__in=WAITING_STATUSES, first_response_at=None)
            .filter(_event("emailed")).annotate(opened=_event("opened"))
            .values("deal__account_id").annotate(opened_count=Count("pk", filter=Q(opened=True)),
                                                 not_opened_count=Count("pk", filter=Q(opened=False))))
    by_account = {row["deal__account_id"]: row for row in rows}
    return [{"account": account,
             "opened": by_account.get(account.pk, {}).get("opened_count", 0),
             "not_opened": by_account.get(account.pk, {}).get("not_opened_count", 0)} for account in accounts]
