"""Reads of the pipeline, scoped to one account: its stages in order (with the deals in each and their
loan total), one stage, and a deal's stage history."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from deals.pipeline.models import Stage, StageChange
from deals.placements.models import TermSheet
from lev.accounts.models import Account
from lev.errors import NotFound
from lev.limits import MAX_ID

# A stage's column counts its deals that are not archived (a Closed or Dead column shows the deals in
# it); the pipeline's totals add up the open stages' columns only: its ACTIVE deals (active_deals).
IN_STAGE = Q(deals__archived=False)


def deal_amount(prefix: str = "") -> Coalesce:
    """What a deal adds to a loan total: its winning quote's loan amount once it has a winner (the
    loan as it will close), else the loan amount asked; nothing for a deal with neither. `prefix`
    is the path to the deal ("deals__" from a stage)."""
    winner = TermSheet.objects.filter(deal=OuterRef(f"{prefix}pk"), winning=True, deleted_at=None).values(
        "loan_amount")[:1]
    return Coalesce(Subquery(winner), f"{prefix}loan_amount")


@dataclass(frozen=True)
class Pipeline:
    stages: list[Stage]  # each with deal_count and loan_total of its deals that are not archived
    deal_count: int  # the active deals: the open stages' deals
    loan_total: Decimal  # their amounts (deal_amount) added up


def stage_list(*, account: Account) -> QuerySet[Stage]:
    """The account's stages, first to last."""
    return Stage.objects.filter(account=account).order_by("position", "id")


def pipeline_get(*, account: Account) -> Pipeline:
    """The account's stages in order, each with its deals that are not archived counted and their
    amounts added up (deal_amount: the winner's loan amount once chosen, else the ask; a deal without
    either counts and adds nothing), and the totals of the ACTIVE deals — the open stages' columns,
    never a closed or dead stage's; one query."""
    stages = list(stage_list(account=account).annotate(
        deal_count=Count("deals", filter=IN_STAGE), loan_total=Sum(deal_amount("deals__"), filter=IN_STAGE)))
    for stage in stages:
        stage.loan_total = stage.loan_total or Decimal("0")
    open_stages = [s for s in stages if s.kind == "open"]
    return Pipeline(stages, sum(s.deal_count for s in open_stages),
                    sum((s.loan_total for s in open_stages), Decimal("0")))


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
