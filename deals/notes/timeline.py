"""A deal's timeline: what happened to it, oldest first, from the records each room keeps.

| kind | read from |
|---|---|
| stage_changed | deals.pipeline StageChange (who, from, to, automatic or not, why) |
| search_started, search_finished | deals.searches LenderSearch (created_at; finished_at and its status) |
| placement_sent, placement_status | the placements' history (django-simple-history): each status change |
| quote_received, quote_removed, winner_chosen | the term sheets' history: created, deleted_at set, winning set |
| note | the notes on the deal and on its placements |
| lender_emailed, email_refused | deals.outreach OutreachEvent (emailed, refused): the outbox's deliveries |
| package_opened, document_downloaded, lender_replied | deals.outreach OutreachEvent (opened, downloaded, replied) |

A placement's move to `quoted` or `won` is not a placement_status entry: quote_received and
winner_chosen say it. A placement or term sheet written before its history was kept (no history rows)
is read from its own timestamps (sent_at, decided_at, received_at, deleted_at), so older deals read
the same way, only without who. The actor is the user who did it, or "Lev" for what Lev did by itself
(an automatic stage move, a search finishing, the placements lost when another quote won).

Eight queries whatever the deal's size; the entries of one deal are bounded by its placements and
quotes, so the list is built whole and paged by number (lev.pagination.StandardPagination).

The deal page shows only the latest entries: deal_timeline_latest reads the rows of what happened
since a moment (the n-th newest thing that happened to the deal, one query), builds their entries
the same way, and keeps the newest n; when those rows say fewer than n things (a placement's or a
quote's edits, which are no entry), it reads the whole timeline instead. Nine queries (seventeen when
it falls back); the entries are the same as the whole timeline's newest n (tests/deals/notes).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from django.db.models import DateTimeField, F, Q
from django.utils import timezone

from deals.notes.models import Note
from deals.outreach.models import OutreachEvent
from deals.pipeline.models import StageChange
from deals.placements.models import Placement, TermSheet
from deals.placements.workflow import STATES
from deals.searches.models import LenderSearch
from lev.enums import RATE_INDEX_NAMES
from lev.formatting import money, percent

LEV = "Lev"
NOTE_TEXT_SHOWN = 200
FINISHED = {LenderSearch.Status.COMPLETED, LenderSearch.Status.PARTIAL, LenderSearch.Status.FAILED}
# Said by quote_received and winner_chosen, or the state a placement is made in.
STATUSES_NOT_SHOWN = {"draft", "sent", "quoted", "won"}


@dataclass(frozen=True)
class Entry:
    at: dt.datetime
    kind: str
    actor: str | None
    actor_id: int | None
    text: str
    refs: dict[str, int] = field(default_factory=dict)
    order: tuple[int, int] = (0, 0)  # ties of `at`: the source, then its row

    @property
    def label(self) -> str:
        """Stage changed, Quote received, … (the admin's words for the kind)."""
        return self.kind.replace("_", " ").capitalize()


def clip_line(text: str, limit: int) -> str:
    """The first line of `text`, at most `limit` characters (… when cut)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _who(user, *, automatic: bool = False) -> tuple[str | None, int | None]:
    if automatic or user is None:
        return LEV, None
    return user.get_username(), user.pk


def _stage_changes(deal, since=None) -> list[Entry]:
    entries = []
    changes = StageChange.objects.filter(deal=deal)
    if since is not None:
        changes = changes.filter(at__gte=since)
    for change in changes.select_related("by").order_by("at", "id"):
        actor, actor_id = _who(change.by, automatic=change.automatic)
        if change.from_stage_id is None:
            text = f"Started in {change.to_name}"
        else:
            text = f"Moved from {change.from_name} to {change.to_name}" + (" automatically" if change.automatic else "")
        if change.reason:
            text += f": {change.reason}"
        refs = {"stage_change_id": change.pk, "stage_id": change.to_stage_id}
        entries.append(Entry(change.at, "stage_changed", actor, actor_id, clip_line(text, NOTE_TEXT_SHOWN), refs,
                             (1, change.pk)))
    return entries


def _searches(deal, since=None) -> list[Entry]:
    entries = []
    searches = LenderSearch.objects.filter(deal=deal)
    if since is not None:
        searches = searches.filter(Q(created_at__gte=since) | Q(finished_at__gte=since))
    for search in searches.select_related("created_by").order_by("created_at", "id"):
        actor, actor_id = _who(search.created_by)
        refs = {"search_id": search.pk}
        entries.append(Entry(search.created_at, "search_started", actor, actor_id,
                             f"Lender search {search.pk} started", refs, (2, search.pk)))
        if search.status in FINISHED and search.finished_at is not None:
            if search.status == LenderSearch.Status.FAILED:
                why = f": {search.error_message}" if search.error_message else ""
                text = f"Lender search {search.pk} failed{why}"
            else:
                text = (f"Lender search {search.pk} finished: {search.total_matches} lenders matched"
                        + (" (partial)" if search.status == LenderSearch.Status.PARTIAL else ""))
            entries.append(Entry(search.finished_at, "search_finished", LEV, None, clip_line(text, NOTE_TEXT_SHOWN),
                                 refs, (3, search.pk)))
    return entries


def _placements(deal, since=None) -> list[Entry]:
    rows = Placement.objects.filter(deal=deal)
    records = Placement.history.filter(deal_id=deal.pk)
    if since is not None:  # the placements with a record, or a timestamp of their own, since then: all their records
        touched = records.filter(Q(history_date__gte=since) | Q(sent_at__gte=since)).values("id")
        rows = rows.filter(Q(pk__in=touched) | Q(sent_at__gte=since) | Q(decided_at__gte=since))
        records = records.filter(id__in=rows.values("pk"))
    placements = {p.pk: p for p in rows.select_related("lender")}
    history: dict[int, list[Any]] = {}
    for record in (records.select_related("history_user")
                   .order_by("history_date", "history_id")):
        history.setdefault(record.id, []).append(record)
    entries = []
    for pk, placement in placements.items():
        lender = placement.lender.name
        refs = {"placement_id": pk, "lender_id": placement.lender_id}
        records = history.get(pk)
        if not records:  # written before its history was kept: its own timestamps
            if placement.sent_at:
                entries.append(Entry(placement.sent_at, "placement_sent", *_who(placement.created_by),
                                     f"Sent to {lender}", refs, (4, pk)))
            if placement.decided_at and placement.status not in STATUSES_NOT_SHOWN:
                entries.append(Entry(placement.decided_at, "placement_status", LEV, None,
                                     f"{lender}: {STATES[placement.status].label.lower()}", refs, (8, pk)))
            continue
        before = None
        if records[0].history_type != "+" and placement.sent_at:
            # Its history began after it was sent (a placement older than the history): sent, by its row.
            entries.append(Entry(placement.sent_at, "placement_sent", *_who(placement.created_by),
                                 f"Sent to {lender}", refs, (4, pk)))
            before = "sent"
        for record in records:
            if record.status != before and record.status == "sent":
                at = record.sent_at or record.history_date
                entries.append(Entry(at, "placement_sent", *_who(record.history_user), f"Sent to {lender}",
                                     refs, (4, record.history_id)))
            elif record.status != before and record.status not in STATUSES_NOT_SHOWN and before is not None:
                # A move the workflow made itself (lost when another quote won, back to reviewing when
                # the last quote went) carries its reason: Lev did it.
                reason = record.history_change_reason or ""
                text = f"{lender}: {STATES[before].label.lower()} → {STATES[record.status].label.lower()}"
                entries.append(Entry(record.history_date, "placement_status",
                                     *_who(record.history_user, automatic=bool(reason)),
                                     clip_line(text + (f" ({reason})" if reason else ""), NOTE_TEXT_SHOWN),
                                     refs, (8, record.history_id)))
            before = record.status
    return entries


def _quote_words(sheet) -> str:
    rate = (f"{percent(sheet.fixed_rate)} fixed" if sheet.rate_type == "fixed"
            else f"{RATE_INDEX_NAMES.get(sheet.rate_index, sheet.rate_index)} + {sheet.spread_bps} bps")
    return f"{money(sheet.loan_amount)} at {rate}"


def _term_sheets(deal, since=None) -> list[Entry]:
    rows = TermSheet.objects.filter(deal=deal)
    records = TermSheet.history.filter(deal_id=deal.pk)
    if since is not None:  # the quotes with a record, or a timestamp of their own, since then: all their records
        touched = records.filter(Q(history_date__gte=since) | Q(received_at__gte=since)
                                 | Q(deleted_at__gte=since)).values("id")
        rows = rows.filter(Q(pk__in=touched) | Q(received_at__gte=since) | Q(deleted_at__gte=since)
                           | Q(updated_at__gte=since) | Q(placement__decided_at__gte=since))
        records = records.filter(id__in=rows.values("pk"))
    sheets = {s.pk: s for s in rows.select_related("placement__lender", "created_by")}
    history: dict[int, list[Any]] = {}
    for record in (records.select_related("history_user")
                   .order_by("history_date", "history_id")):
        history.setdefault(record.id, []).append(record)
    entries = []
    for pk, sheet in sheets.items():
        lender = sheet.placement.lender.name
        refs = {"term_sheet_id": pk, "placement_id": sheet.placement_id, "lender_id": sheet.placement.lender_id}
        received = f"Quote from {lender}: {_quote_words(sheet)}"
        records = history.get(pk)
        if not records:
            entries.append(Entry(sheet.received_at, "quote_received", *_who(sheet.created_by), received, refs, (5, pk)))
            if sheet.winning:
                entries.append(Entry(sheet.placement.decided_at or sheet.updated_at, "winner_chosen", LEV, None,
                                     f"Winner chosen: {lender}'s quote", refs, (7, pk)))
            if sheet.deleted_at:
                entries.append(Entry(sheet.deleted_at, "quote_removed", LEV, None, f"Quote from {lender} removed",
                                     refs, (6, pk)))
            continue
        before = None
        if records[0].history_type != "+":
            # Its history began later (a quote older than the history): received, by its row.
            entries.append(Entry(sheet.received_at, "quote_received", *_who(sheet.created_by), received, refs,
                                 (5, pk)))
            before = SimpleNamespace(winning=False, deleted_at=None)  # as a quote is received
        for record in records:
            # The quote's first record without a user (written outside a request: the demo, a job) is
            # its creator's, as the term sheet says.
            who = _who(record.history_user or (sheet.created_by if before is None else None))
            if before is None:
                entries.append(Entry(record.received_at, "quote_received", *who, received, refs,
                                     (5, record.history_id)))
            if record.winning and not (before and before.winning):
                entries.append(Entry(record.history_date, "winner_chosen", *who, f"Winner chosen: {lender}'s quote "
                                     f"({_quote_words(sheet)})", refs, (7, record.history_id)))
            if record.deleted_at and not (before and before.deleted_at):
                entries.append(Entry(record.deleted_at, "quote_removed", *who, f"Quote from {lender} removed",
                                     refs, (6, record.history_id)))
            before = record
    return entries


def _notes(deal, since=None) -> list[Entry]:
    notes = Note.objects.filter(Q(deal=deal) | Q(placement__deal=deal), account_id=deal.account_id)
    if since is not None:
        notes = notes.filter(created_at__gte=since)
    notes = (notes.select_related("author", "placement__lender").order_by("created_at", "id"))
    entries = []
    for note in notes:
        about = f" ({note.placement.lender.name})" if note.placement_id else ""
        text = f"{note.get_kind_display()}{about}: {note.body}"
        refs = {"note_id": note.pk}
        if note.placement_id:
            refs.update(placement_id=note.placement_id, lender_id=note.placement.lender_id)
        actor = (note.author.get_username(), note.author_id) if note.author_id else (None, None)
        entries.append(Entry(note.created_at, "note", *actor, clip_line(text, NOTE_TEXT_SHOWN), refs,
                             (9, note.pk)))
    return entries


# What a lender's document is called in a line of the timeline ("downloaded the OM (OM.pdf)").
DOCUMENT_WORDS = {"offering_memorandum": "the OM", "rent_roll": "the rent roll", "t12": "the T-12",
                  "term_sheet": "the term sheet", "appraisal": "the appraisal"}
OUTREACH_KINDS = {"emailed": "lender_emailed", "refused": "email_refused", "opened": "package_opened",
                  "downloaded": "document_downloaded", "replied": "lender_replied"}


def _outreach_text(event) -> str:
    lender = event.placement.lender.name
    if event.kind == "emailed":
        what = "a follow-up" if event.email_id and event.email.kind == "follow_up" else "the teaser"
        to = f" ({event.email.to_address})" if event.email_id else ""
        return f"Emailed {lender} {what}{to}"
    if event.kind == "refused":
        why = f": {event.email.last_error}" if event.email_id and event.email.last_error else ""
        return f"Email to {lender} not delivered{why}"
    if event.kind == "opened":
        return f"{lender} opened the package"
    if event.kind == "downloaded":
        document = event.document
        if document is None:
            return f"{lender} downloaded a document (since removed)"
        words = DOCUMENT_WORDS.get(document.kind, f"“{document.name}”")
        file_name = document.current.file_name if document.current_id else document.name
        return f"{lender} downloaded {words} ({file_name})"
    return f"{lender} replied"


def _outreach(deal, since=None) -> list[Entry]:
    events = OutreachEvent.objects.filter(deal=deal, account_id=deal.account_id)
    if since is not None:
        events = events.filter(at__gte=since)
    entries = []
    for event in (events.select_related("placement__lender", "document__current", "email__send__created_by")
                  .order_by("at", "id")):
        refs = {"placement_id": event.placement_id, "lender_id": event.placement.lender_id}
        if event.document_id:
            refs["document_id"] = event.document_id
        if event.email_id:
            refs["email_id"] = event.email_id
        if event.kind == "emailed" and event.email_id and event.email.send_id:
            actor = _who(event.email.send.created_by)  # who sent it; Lev for a send no user made
        elif event.kind in ("opened", "downloaded", "replied"):
            actor = (event.placement.lender.name, None)  # the lender did it
        else:
            actor = (LEV, None)
        entries.append(Entry(event.at, OUTREACH_KINDS[event.kind], *actor,
                             clip_line(_outreach_text(event), NOTE_TEXT_SHOWN), refs, (10, event.pk)))
    return entries


def _entries(deal, since=None) -> list[Entry]:
    entries = [*_stage_changes(deal, since), *_searches(deal, since), *_placements(deal, since),
               *_term_sheets(deal, since), *_notes(deal, since), *_outreach(deal, since)]
    if since is not None:  # a placement or quote touched since then also says what happened to it before
        entries = [e for e in entries if e.at >= since]
    entries.sort(key=lambda e: (e.at, e.order))
    return entries


def deal_timeline(*, deal) -> list[Entry]:
    """Every entry of the deal's timeline, oldest first (ties: in the order things happen in one call)."""
    return _entries(deal)


def _since(deal, n: int) -> dt.datetime | None:
    """The moment of the n-th newest thing that happened to the deal, or None when fewer than n did:
    one query over the times the entries are dated by (a placement's records in a status no entry
    says, or made in a status other than sent, are left out, and a quote's records other than its
    first, its winning and its removal), so that the entries since then are, but for edits, n."""
    def moments(queryset, column):
        return (queryset.order_by().exclude(**{f"{column}__isnull": True})
                .annotate(moment=F(column)).values_list("moment", flat=True))

    searches = LenderSearch.objects.filter(deal=deal)
    placements = Placement.history.filter(deal_id=deal.pk)
    sheets = TermSheet.history.filter(deal_id=deal.pk)
    notes = Note.objects.filter(Q(deal=deal) | Q(placement__deal=deal), account_id=deal.account_id)
    shown = placements.exclude(status__in=STATUSES_NOT_SHOWN - {"sent"})
    moved = shown.exclude(status="sent").exclude(history_type="+")
    parts = [moments(StageChange.objects.filter(deal=deal), "at"), moments(searches, "created_at"),
             moments(searches, "finished_at"), moments(moved, "history_date"),
             moments(shown.filter(status="sent"), "sent_at"),
             moments(Placement.objects.filter(deal=deal).exclude(pk__in=placements.values("id")), "decided_at"),
             moments(sheets.filter(history_type="+"), "received_at"),
             moments(sheets.filter(winning=True), "history_date"), moments(sheets, "deleted_at"),
             moments(notes, "created_at"),
             moments(OutreachEvent.objects.filter(deal=deal, account_id=deal.account_id), "at")]
    union = parts[0].union(*parts[1:], all=True).order_by("-moment")
    found = list(union[n - 1: n])
    if not found:
        return None
    moment = found[0]
    if not isinstance(moment, dt.datetime):  # SQLite gives a compound query's column back as text (UTC)
        moment = DateTimeField().to_python(moment)
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, dt.UTC)
    return moment


def deal_timeline_latest(*, deal, n: int) -> list[Entry]:
    """The deal's n newest entries, newest first: deal_timeline(deal=deal)[::-1][:n], read from
    what happened since the n-th newest thing that happened to it (module docstring)."""
    since = _since(deal, n)
    entries = _entries(deal, since) if since is not None else None
    if entries is None or len(entries) < n:  # edits that are no entry: the whole timeline
        entries = _entries(deal)
    return entries[::-1][:n]
