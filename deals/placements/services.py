"""Writes of placements and term sheets: the rules of the workflow from a ranked lender to a winning
quote. Keyword-only and atomic; callers (REST views, admin actions, the demo) pass validated data.

Every write takes the deal's row lock first (`deals.services._lock_deal`), so the checks and the
writes of one deal's placements take turns: two requests placing the deal with the same lender, or
choosing two winners, cannot both pass their check. The database enforces the same two rules with
partial unique constraints; a violation that gets past the lock anyway (a write that skipped the
services) is a CONFLICT, never a 500.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history, bulk_update_with_history

from deals.companies.errors import ContactNotPlaced
from deals.companies.models import Contact
from deals.companies.services import lender_contact_for
from deals.models import Deal
from deals.pipeline import services as pipeline
from deals.placements.errors import (
    ArchivedDealNotPlaceable,
    ConcurrentPlacement,
    ConcurrentWinner,
    PlacementArchived,
    PlacementNotQuotable,
    QuoteExpired,
    SearchNotCompleted,
    SearchOfAnotherDeal,
    SearchPurged,
    SecondWinner,
    TooManyQuotes,
    TransitionRefused,
    WinnerNotQuoted,
    WinningQuoteNotRemovable,
)
from deals.placements.models import Placement, TermSheet
from deals.placements.workflow import (
    DECIDED_STATUSES,
    MANUAL_TRANSITIONS,
    OPEN_STATUSES,
    QUOTABLE_STATUSES,
    RESPONSE_STATUSES,
)
from deals.searches import signals
from deals.searches.models import LenderMatch, LenderSearch
from deals.services import _lock_deal
from lenders.models import Lender, LenderProgram
from lenders.selectors import visible
from lev.errors import ErrorCode, NotFound, ValidationFailed
from lev.limits import TERM_SHEETS_PER_DEAL_MAX

Status = Placement.Status

# The moves (MANUAL_TRANSITIONS) and the status sets are the table of deals.placements.workflow.

RATE_TERMS_MESSAGE = ("Validation failed: a fixed rate_type takes fixed_rate (and no rate_index or spread_bps); "
                      "a floating rate_type takes rate_index and spread_bps (and no fixed_rate)")
PLACEMENT_FIELDS = ("notes", "contact_name", "contact_email", "decline_reason")




def _check_deal_open(deal: Deal) -> None:
    if deal.archived:
        raise ArchivedDealNotPlaceable(deal)


def _now() -> dt.datetime:
    return timezone.now()


# --- placements -------------------------------------------------------------------------------------
@dataclass
class PlacementBatch:
    """What one create call did, lender by lender: the placements made, and each lender that was
    not placed with the error contract's code and message (and the open placement it already has)."""

    deal: Deal
    created: list[Placement] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)


def _search_for_deal(deal: Deal, search: LenderSearch) -> None:
    if search.deal_id != deal.pk:
        raise SearchOfAnotherDeal(deal, search)
    if search.status != LenderSearch.Status.COMPLETED:
        raise SearchNotCompleted(deal, search, failed=search.status == LenderSearch.Status.FAILED)
    if search.matches_purged_at is not None:
        raise SearchPurged(deal, search)


def _first_program_id(programs: list[dict[str, Any]] | None) -> int | None:
    for program in programs or ():
        if isinstance(program, dict) and isinstance(program.get("id"), int):
            return program["id"]
    return None


@transaction.atomic
def placements_create(*, deal: Deal, user=None, lender_ids: list[int] | None = None,
                      search: LenderSearch | None = None, top_n: int | None = None, send: bool = False,
                      notes: str = "", contact_ids: list[int] | None = None) -> PlacementBatch:
    """Place the deal with lenders: those of `lender_ids`, or the top `top_n` of `search`.

    With both, the lenders given are placed and those the search ranked keep their rank and best
    program. Lenders already holding an open placement on the deal, and ids that name no lender,
    are reported in `failed` (CONFLICT with the open placement's id, NOT_FOUND) while the others
    are placed: one call, many lenders, partial success. With `send` the placements start `sent`
    (their response clock running), else `draft`. `contact_ids`: the account's lender contacts, at most
    one per lender placed; each placement with a contact's lender is sent to that contact.
    """
    _lock_deal(deal)
    _check_deal_open(deal)
    ranks: dict[int, tuple[int, int | None]] = {}  # lender id -> (rank, best program id)
    if search is not None:
        _search_for_deal(deal, search)
        matches = LenderMatch.objects.filter(search=search).order_by("rank")
        matches = matches[: top_n or 0] if lender_ids is None else matches.filter(lender_id__in=lender_ids)
        for lender_id, rank, programs in matches.values_list("lender_id", "rank", "programs"):
            ranks[lender_id] = (rank, _first_program_id(programs))
        if lender_ids is None:
            lender_ids = list(ranks)
    wanted = list(dict.fromkeys(lender_ids or ()))
    batch = PlacementBatch(deal=deal)
    # Another account's own lenders and programs do not exist for this deal (lenders.selectors.visible).
    existing = set(Lender.objects.filter(visible(deal.account_id), pk__in=wanted).values_list("pk", flat=True))
    open_ones = dict(
        Placement.objects.filter(deal=deal, lender_id__in=wanted, status__in=OPEN_STATUSES)
        .values_list("lender_id", "pk")
    )
    contacts = _contacts_by_lender(deal, contact_ids or [], wanted)
    programs = {rank[1] for rank in ranks.values() if rank[1] is not None}
    live_programs = set(LenderProgram.objects.filter(visible(deal.account_id), pk__in=programs)
                        .values_list("pk", "lender_id"))
    now = _now()
    new: list[Placement] = []
    for lender_id in wanted:
        if lender_id not in existing:
            batch.failed.append({"lender_id": lender_id, "code": ErrorCode.NOT_FOUND,
                                 "message": f"Lender not found: {lender_id}"})
            continue
        if lender_id in open_ones:
            batch.failed.append({
                "lender_id": lender_id, "code": ErrorCode.CONFLICT, "placement_id": open_ones[lender_id],
                "message": f"Conflict: lender {lender_id} already has an open placement on this deal "
                           f"(placement {open_ones[lender_id]})",
            })
            continue
        rank, program_id = ranks.get(lender_id, (None, None))
        contact = contacts.get(lender_id)
        new.append(Placement(
            contact=contact, contact_name=contact.name if contact else "",
            contact_email=contact.email if contact else "",
            deal=deal, lender_id=lender_id, status=Status.SENT if send else Status.DRAFT,
            program_id=program_id if (program_id, lender_id) in live_programs else None,
            source_search=search if rank is not None else None, source_rank=rank, notes=notes,
            sent_at=now if send else None, created_by=user if getattr(user, "pk", None) else None,
            created_at=now,
        ))
    try:
        with transaction.atomic():
            # With their history's first rows (who placed them): the deal's timeline reads them.
            batch.created = bulk_create_with_history(new, Placement, default_user=new[0].created_by if new else None,
                                                     default_date=now)
    except IntegrityError:  # only a write that skipped the deal lock could get here
        raise ConcurrentPlacement(deal) from None
    return batch


def _contacts_by_lender(deal: Deal, contact_ids: list[int], lender_ids: list[int]) -> dict[int, Contact]:
    """The deal's account's lender contacts of `contact_ids` by their lender: another account's contact
    is NotFound (like a missing one); a company contact or a contact at a lender not placed is
    ContactNotPlaced; two at one lender are invalid input."""
    wanted = list(dict.fromkeys(contact_ids))
    found = {c.pk: c for c in Contact.objects.filter(account_id=deal.account_id, pk__in=wanted)}
    by_lender: dict[int, Contact] = {}
    for contact_id in wanted:
        contact = found.get(contact_id)
        if contact is None:
            raise NotFound("Contact", contact_id)
        if contact.lender_id is None or contact.lender_id not in lender_ids:
            raise ContactNotPlaced(contact)
        if contact.lender_id in by_lender:
            raise ValidationFailed({"contact_ids": [f"contacts {by_lender[contact.lender_id].pk} and {contact_id} "
                                                    f"are both at lender {contact.lender_id}; name one per lender"]})
        by_lender[contact.lender_id] = contact
    return by_lender


def _apply_status(placement: Placement, status: str, now: dt.datetime) -> list[str]:
    """Set `status` and the timestamps it implies; returns the fields changed."""
    changed = ["status"]
    if status == Status.SENT and placement.sent_at is None:
        placement.sent_at = now
        changed.append("sent_at")
    if status in RESPONSE_STATUSES and placement.first_response_at is None and placement.sent_at is not None:
        placement.first_response_at = now
        changed.append("first_response_at")
    if status in DECIDED_STATUSES:
        placement.decided_at = now
        changed.append("decided_at")
    if status == Status.ARCHIVED:
        placement.archived_at = now
        changed.append("archived_at")
    placement.status = status
    return changed


def _lock_placement(placement: Placement) -> Placement:
    """Lock the deal (see the module docstring), then reload the placement as it is now."""
    _lock_deal(placement.deal)
    try:
        placement.refresh_from_db()
    except Placement.DoesNotExist:
        raise NotFound("Placement", placement.pk) from None
    return placement


@transaction.atomic
def placement_update(*, placement: Placement, data: dict[str, Any]) -> Placement:
    """Change status (along MANUAL_TRANSITIONS), notes, decline reason, contact or program. Asking for the status
    the placement already has changes nothing (safe to repeat). An archived placement is final."""
    _lock_placement(placement)
    changed: list[str] = []
    status = data.get("status")
    if status is not None and status != placement.status:
        if status not in MANUAL_TRANSITIONS[placement.status]:
            raise TransitionRefused(placement, status)
        changed += _apply_status(placement, status, _now())
    edits = {k: (data[k] or "") for k in PLACEMENT_FIELDS if k in data}
    if "program_id" in data:
        program_id = data["program_id"]
        if program_id is not None and not LenderProgram.objects.filter(
                visible(placement.deal.account_id), pk=program_id, lender_id=placement.lender_id).exists():
            raise NotFound("Lender program", program_id)
        edits["program_id"] = program_id
    if "contact_id" in data:
        contact_id = data["contact_id"]
        if contact_id is not None:
            contact = lender_contact_for(account=placement.deal.account, contact_id=contact_id,
                                         lender_id=placement.lender_id)
            # Who it is sent to, as written now (kept if the contact changes later), unless given.
            for name, value in (("contact_name", contact.name), ("contact_email", contact.email)):
                if name not in data:
                    edits[name] = value
        edits["contact_id"] = contact_id
    edits = {k: v for k, v in edits.items() if getattr(placement, k) != v}
    if edits and placement.status == Status.ARCHIVED and "status" not in changed:
        raise PlacementArchived(placement)
    for name, value in edits.items():
        setattr(placement, name, value)
    changed += list(edits)
    if changed:
        placement.save(update_fields=[*changed, "updated_at"])
    if "status" in changed:
        signals.schedule_refresh()  # an outcome the ranking learns from (a decline, no response, …)
    return placement


@transaction.atomic
def placements_mark_sent(*, deal: Deal, placements: list[Placement], user=None, reason: str = "") -> list[Placement]:
    """Move the deal's draft placements among `placements` to `sent` (their response clock starts), as
    PATCH would, in one bulk write with their history (who, when: the deal's timeline reads it); those
    in another status are left as they are. Returns the placements moved. Outreach calls it when it
    queues a teaser (deals.outreach.services)."""
    _lock_deal(deal)
    now = _now()
    wanted = [p.pk for p in placements]
    moved = list(Placement.objects.filter(deal=deal, pk__in=wanted, status=Status.DRAFT))
    for placement in moved:
        _apply_status(placement, Status.SENT, now)
        placement.updated_at = now
    if moved:
        bulk_update_with_history(moved, Placement, ["status", "sent_at", "updated_at"],
                                 default_user=user if getattr(user, "pk", None) else None,
                                 default_change_reason=reason or None, default_date=now)
        signals.schedule_refresh()
    return moved


# --- term sheets ------------------------------------------------------------------------------------
def check_rate_terms(data: dict[str, Any]) -> None:
    """A fixed quote has a fixed rate only; a floating one an index and a spread only."""
    fixed = data.get("rate_type") == "fixed"
    fields: dict[str, list[str]] = {}
    if fixed:
        if data.get("fixed_rate") is None:
            fields["fixed_rate"] = ["is required for a fixed rate_type"]
        for name in ("rate_index", "spread_bps"):
            if data.get(name) not in (None, ""):
                fields[name] = ["must be left out for a fixed rate_type"]
    else:
        for name in ("rate_index", "spread_bps"):
            if data.get(name) in (None, ""):
                fields[name] = ["is required for a floating rate_type"]
        if data.get("fixed_rate") is not None:
            fields["fixed_rate"] = ["must be left out for a floating rate_type"]
    if fields:
        raise ValidationFailed(fields, message=RATE_TERMS_MESSAGE)


TERM_SHEET_FIELDS = (
    "quote_type", "loan_amount", "rate_type", "fixed_rate", "rate_index", "spread_bps", "term_months",
    "amortization_months", "interest_only_months", "max_ltv", "min_dscr", "recourse", "origination_fee_percent",
    "exit_fee_percent", "prepayment", "expires_on", "notes",
)
_TEXT_DEFAULTS = {"rate_index": "", "recourse": "", "prepayment": "", "notes": "", "quote_type": "term_sheet",
                  "interest_only_months": 0}


@transaction.atomic
def term_sheet_add(*, placement: Placement, data: dict[str, Any], user=None) -> TermSheet:
    """Record a lender's quote on a sent, reviewing or quoted placement; the placement becomes
    `quoted` (and its first response is timed if it was not yet)."""
    check_rate_terms(data)
    _lock_placement(placement)
    deal = placement.deal
    _check_deal_open(deal)
    if placement.status not in QUOTABLE_STATUSES:
        raise PlacementNotQuotable(placement)
    if TermSheet.objects.filter(deal=deal, deleted_at=None).count() >= TERM_SHEETS_PER_DEAL_MAX:
        raise TooManyQuotes(deal)
    now = _now()
    received_at = _quoted_at(placement, data.get("quoted_on"), now)
    values = {name: data.get(name) for name in TERM_SHEET_FIELDS}
    for name, default in _TEXT_DEFAULTS.items():
        if values[name] is None:
            values[name] = default
    term_sheet = TermSheet.objects.create(
        placement=placement, deal=deal, created_by=user if getattr(user, "pk", None) else None,
        received_at=received_at, created_at=now, **values,
    )
    if placement.status != Status.QUOTED:
        changed = _apply_status(placement, Status.QUOTED, now)
        placement.save(update_fields=[*changed, "updated_at"])
    signals.schedule_refresh()
    return term_sheet


# A quote's day (quoted_on) is a rule over today and the placement's sending, which no schema states.
QUOTED_AFTER_TODAY = "quoted_on is after today"
QUOTED_BEFORE_SENT = "quoted_on is before the placement was sent"


def _quoted_at(placement: Placement, quoted_on: dt.date | None, now: dt.datetime) -> dt.datetime:
    """When a quote was received: now, or noon (local) of the earlier day the lender quoted on. Not in
    the future, nor before the placement was sent."""
    today = timezone.localdate(now)
    if quoted_on is None or quoted_on == today:
        return now
    if quoted_on > today:
        raise ValidationFailed({"quoted_on": [f"is after today ({today.isoformat()})"]},
                               message=f"Validation failed: {QUOTED_AFTER_TODAY} ({today.isoformat()})")
    sent_on = timezone.localdate(placement.sent_at) if placement.sent_at else None
    if sent_on is not None and quoted_on < sent_on:
        raise ValidationFailed(
            {"quoted_on": [f"is before the placement was sent ({sent_on.isoformat()})"]},
            message=f"Validation failed: {QUOTED_BEFORE_SENT} ({sent_on.isoformat()})")
    return timezone.make_aware(dt.datetime.combine(quoted_on, dt.time(12)))


def _lock_term_sheet(term_sheet: TermSheet) -> TermSheet:
    _lock_deal(term_sheet.deal)
    fresh = TermSheet.objects.select_related("placement__lender", "deal").filter(
        pk=term_sheet.pk, deleted_at=None).first()
    if fresh is None:
        raise NotFound("Term sheet", term_sheet.pk)
    return fresh


@transaction.atomic
def term_sheet_remove(*, term_sheet: TermSheet) -> None:
    """Soft-delete a quote (e.g. recorded by mistake). The winning quote stays. A quoted placement
    left with no quote goes back to reviewing."""
    term_sheet = _lock_term_sheet(term_sheet)
    if term_sheet.winning:
        raise WinningQuoteNotRemovable(term_sheet)
    # save(), not update(): the term sheet's history records the removal and who removed it.
    term_sheet.deleted_at = _now()
    term_sheet.save(update_fields=["deleted_at", "updated_at"])
    placement = term_sheet.placement
    if (placement.status == Status.QUOTED
            and not TermSheet.objects.filter(placement=placement, deleted_at=None).exists()):
        placement.status = Status.REVIEWING
        placement._change_reason = "its last quote was removed"  # the workflow's move (the timeline: by Lev)
        placement.save(update_fields=["status", "updated_at"])
    signals.schedule_refresh()


@dataclass
class WinnerChoice:
    term_sheet: TermSheet
    lost_placement_ids: list[int]
    changed: bool


@transaction.atomic
def term_sheet_select_winner(*, term_sheet: TermSheet, today: dt.date | None = None, user=None) -> WinnerChoice:
    """Choose the deal's winning quote: its placement becomes `won` and every other open placement
    of the deal `lost`, and the deal moves forward to the "closing" stage, in this one transaction.
    Choosing the current winner again changes nothing (safe to repeat); a deal has at most one winner."""
    term_sheet = _lock_term_sheet(term_sheet)
    deal = term_sheet.deal
    placement = term_sheet.placement
    if term_sheet.winning:
        return WinnerChoice(term_sheet, [], changed=False)
    _check_deal_open(deal)
    current = TermSheet.objects.filter(deal=deal, winning=True).select_related("placement__lender").first()
    if current is not None:
        raise SecondWinner(deal, current)
    if placement.status != Status.QUOTED:
        raise WinnerNotQuoted(term_sheet, placement)
    today = today or timezone.localdate()
    if term_sheet.expires_on is not None and term_sheet.expires_on < today:
        raise QuoteExpired(term_sheet)
    now = _now()
    others = list(Placement.objects.filter(deal=deal, status__in=OPEN_STATUSES).exclude(pk=placement.pk))
    lost = [other.pk for other in others]
    for other in others:
        other.status, other.decided_at, other.updated_at = Status.LOST, now, now
    try:
        with transaction.atomic():
            # Saved with their history (who chose, and when): the deal's timeline reads the winner and
            # the placements lost from it.
            term_sheet.winning = True
            term_sheet._history_date = now  # the same moment as the placements it decides
            term_sheet.save(update_fields=["winning", "updated_at"])
            bulk_update_with_history(others, Placement, ["status", "decided_at", "updated_at"],
                                     default_user=user if getattr(user, "pk", None) else None,
                                     default_change_reason="another quote won", default_date=now)
            changed = _apply_status(placement, Status.WON, now)
            placement.save(update_fields=[*changed, "updated_at"])
    except IntegrityError:  # only a write that skipped the deal lock could get here
        term_sheet.winning = False
        raise ConcurrentWinner(deal) from None
    # The deal goes to closing: forward only, under the deal's lock, in this transaction.
    pipeline.deal_advance_stage(
        deal=deal, key=pipeline.WINNER_CHOSEN, user=user,
        reason=f"Term sheet {term_sheet.pk} from {placement.lender.name} chosen as the winning quote.")
    signals.schedule_refresh()
    return WinnerChoice(term_sheet, lost, changed=True)
