"""Writes of the pipeline: moving a deal between stages (by hand or automatically, every move
recorded), and an account admin's changes to the stages. Keyword-only, one transaction each.

A move locks the deal's row first (as every deal write does, deals.services._lock_deal), then reads
the deal's stage: two racing moves take turns, the second sees the first's result, so the history is
one chain (each record's `from` is the previous record's `to`) and a repeated move to the stage the
deal is in records nothing. The automatic moves run inside the transaction of what caused them (a
lender search start, a winning quote), which holds the same lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F, Max, Value
from django.db.models.functions import Lower
from django.utils import timezone

from deals.errors import DealArchived
from deals.models import Deal
from deals.pipeline.errors import StageNameTaken, TooManyStages
from deals.pipeline.models import Stage, StageChange
from lev.accounts.models import Account
from lev.errors import DealNotFound, NotFound, ValidationFailed
from lev.limits import STAGES_PER_ACCOUNT_MAX

# A reorder names every stage of the account once (a rule over the list and the account's stages).
STAGE_ORDER_MESSAGE = "Validation failed: stage_ids must list each of the pipeline's stages exactly once"

# The automatic moves: what happened → the role (key) of the stage it moves a deal to.
SEARCH_STARTED = "in_market"
WINNER_CHOSEN = "closing"


@dataclass
class StageMove:
    deal: Deal
    change: StageChange | None  # None: the deal was already there (nothing recorded)


def ensure_default_stages(*, account_id: int) -> None:
    Stage.objects.ensure_defaults(account_id)


def on_account_saved(sender, instance: Account, created: bool, raw: bool = False, **kwargs) -> None:
    """A new account starts with the default stages (connected in DealsConfig.ready())."""
    if created and not raw:
        ensure_default_stages(account_id=instance.pk)


def _record(deal: Deal, to: Stage, *, user, automatic: bool, reason: str) -> StageChange:
    current = Stage.objects.filter(pk=deal.stage_id).first()
    now = timezone.now()
    change = StageChange.objects.create(
        deal=deal, from_stage=current, to_stage=to, from_name=current.name if current else "", to_name=to.name,
        by=user if getattr(user, "pk", None) else None, automatic=automatic, reason=reason, at=now,
    )
    Deal.objects.filter(pk=deal.pk).update(stage=to, updated_at=now)
    deal.stage, deal.updated_at = to, now
    return change


def record_start(*, deal: Deal, user=None, reason: str = "Deal created.") -> StageChange:
    """The first record of a new deal: the stage it starts in (called by deals.services.deal_create)."""
    stage = Stage.objects.get(pk=deal.stage_id)
    return StageChange.objects.create(deal=deal, to_stage=stage, to_name=stage.name, automatic=True, reason=reason,
                                      by=user if getattr(user, "pk", None) else None, at=deal.created_at)


@transaction.atomic
def deal_move_stage(*, deal: Deal, stage: Stage, user=None, reason: str = "") -> StageMove:
    """Move the deal to `stage` (of its account) by hand, any direction. Moving it where it is records
    nothing (safe to repeat). An archived deal stays where it is."""
    try:
        deal.refresh_from_db(from_queryset=Deal.objects.select_for_update())
    except Deal.DoesNotExist:
        raise DealNotFound(deal.pk) from None
    if deal.archived:
        raise DealArchived(deal, "moved")
    if stage.account_id != deal.account_id:
        raise NotFound("Stage", stage.pk)
    if deal.stage_id == stage.pk:
        return StageMove(deal, None)
    return StageMove(deal, _record(deal, stage, user=user, automatic=False, reason=reason))


def deal_advance_stage(*, deal: Deal, key: str, reason: str, user=None) -> StageChange | None:
    """An automatic move, only forward: to the stage whose role is `key`, when the deal is in an open
    stage before it. A deal already there or further on, or closed or dead, stays (and nothing is
    recorded). The caller holds the deal's row lock (its transaction's)."""
    current = Stage.objects.filter(pk=Deal.objects.filter(pk=deal.pk).values("stage_id")[:1]).first()
    Stage.objects.ensure_defaults(deal.account_id)
    target = Stage.objects.filter(account_id=deal.account_id, key=key).first()
    if target is None or current is None:
        return None
    if current.kind != "open" or (current.position, current.pk) >= (target.position, target.pk):
        return None
    deal.stage_id = current.pk
    return _record(deal, target, user=user, automatic=True, reason=reason)


# --- an account admin's changes to the stages -------------------------------------------------------
def _lock_account(account: Account) -> None:
    """Stage changes of one account take turns (positions and names are checked against all stages)."""
    Account.objects.select_for_update().filter(pk=account.pk).first()


def _check_name(account: Account, name: str, *, other_than: int | None = None) -> None:
    # Lowered by the database on both sides, as the unique index uniq_stage_name does: Python's lower()
    # folds letters SQLite's LOWER() leaves alone (Ē), and then a name the check let through broke the index.
    taken = Stage.objects.annotate(lower=Lower("name")).filter(account=account, lower=Lower(Value(name)))
    if other_than is not None:
        taken = taken.exclude(pk=other_than)
    found = taken.first()
    if found is not None:
        raise StageNameTaken(name, found.pk)


def _save_unique(stage: Stage, account: Account, **kwargs) -> None:
    try:
        with transaction.atomic():
            stage.save(**kwargs)
    except IntegrityError:  # only a write that skipped the account lock could get here
        _check_name(account, stage.name, other_than=stage.pk)
        raise


@transaction.atomic
def stage_create(*, account: Account, name: str, kind: str = "open", position: int | None = None) -> Stage:
    """Add a stage: at `position` (1 = first; the stages from there on move down one), else last."""
    _lock_account(account)
    stages = Stage.objects.filter(account=account)
    count = stages.count()
    if count >= STAGES_PER_ACCOUNT_MAX:
        raise TooManyStages(account.pk)
    _check_name(account, name)
    last = stages.aggregate(last=Max("position"))["last"] or 0
    if position is None or position > count:
        position = last + 1
    else:
        ordered = list(stages.order_by("position", "id"))
        position = ordered[position - 1].position
        stages.filter(position__gte=position).update(position=F("position") + 1)
    stage = Stage(account=account, name=name, kind=kind, position=position)
    _save_unique(stage, account)
    return stage


@transaction.atomic
def stage_rename(*, stage: Stage, name: str) -> Stage:
    """Rename a stage; a default stage keeps its role (key), so the automatic moves still find it."""
    account = stage.account
    _lock_account(account)
    stage.refresh_from_db()
    if stage.name != name:
        _check_name(account, name, other_than=stage.pk)
        stage.name = name
        _save_unique(stage, account, update_fields=["name"])
    return stage


@transaction.atomic
def stages_reorder(*, account: Account, stage_ids: list[int]) -> list[Stage]:
    """Put the stages in the order given: every stage of the account, each once."""
    _lock_account(account)
    stages = {s.pk: s for s in Stage.objects.filter(account=account)}
    if len(stage_ids) != len(set(stage_ids)) or set(stage_ids) != set(stages):
        raise ValidationFailed({"stage_ids": [
            f"must list each of the pipeline's {len(stages)} stages exactly once (their ids: "
            + ", ".join(str(pk) for pk in sorted(stages)) + ")"]}, message=STAGE_ORDER_MESSAGE)
    for position, pk in enumerate(stage_ids, start=1):
        stages[pk].position = position
    Stage.objects.bulk_update(list(stages.values()), ["position"])
    return [stages[pk] for pk in stage_ids]
