"""Reads of the pipeline, scoped to one account: its stages in order (with the deals in each and their
loan total), one stage, and a deal's stage history."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, Q, QuerySet, Sum

from deals.pipeline.models import Stage, StageChange
from lev.accounts.models import Account
from lev.errors import NotFound
from lev.limits import MAX_ID

ACTIVE = Q(deals__archived=False)


@dataclass(frozen=True)
class Pipeline:
    stages: list[Stage]  # each with deal_count and loan_total
    deal_count: int
    loan_total: Decimal


def stage_list(*, account: Account) -> QuerySet[Stage]:
    """The account's stages, first to last."""
    return Stage.objects.filter(account=account).order_by("position", "id")


def pipeline_get(*, account: Account) -> Pipeline:
    """The account's stages in order, each with its active (not archived) deals counted and their loan
    amounts added up (a deal without an amount counts, and adds nothing); one query."""
    stages = list(stage_list(account=account).annotate(
        deal_count=Count("deals", filter=ACTIVE), loan_total=Sum("deals__loan_amount", filter=ACTIVE)))
    for stage in stages:
        stage.loan_total = stage.loan_total or Decimal("0")
    return Pipeline(stages, sum(s.deal_count for s in stages), sum((s.loan_total for s in stages), Decimal("0")))


def stage_get(*, account: Account, stage_id: int) -> Stage:
    """The account's stage, or NOT_FOUND — the same answer for another account's stage."""
    found = Stage.objects.filter(account=account, pk=stage_id).first() if 0 < stage_id <= MAX_ID else None
    if found is None:
        raise NotFound("Stage", stage_id)
    return found


def stage_find(*, account: Account, text: str) -> Stage:
    """The account's stage by its id, its key (in_market) or its name, in any case; NOT_FOUND (naming
    the stages, for a key or name) when there is none — another account's stage included."""
    wanted = text.strip()
    if wanted.isdigit():
        return stage_get(account=account, stage_id=int(wanted))
    stages = list(stage_list(account=account))
    for stage in stages:
        if stage.key and stage.key == wanted.lower().replace(" ", "_"):
            return stage
    for stage in stages:
        if stage.name.casefold() == wanted.casefold():
            return stage
    # NOT_FOUND as for a stage id that names none, saying which stages there are.
    raise NotFound("Stage", f"{wanted!r} (the stages: {', '.join(s.name for s in stages)})")


def stage_history(*, deal) -> QuerySet[StageChange]:
    """A deal's stage changes, oldest first (its first record says where it started)."""
    return StageChange.objects.filter(deal=deal).select_related("by").order_by("at", "id")
