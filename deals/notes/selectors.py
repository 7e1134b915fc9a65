"""Reads of notes, always scoped to one account: another account's note, or a note on another
account's deal, placement, company or contact, is NotFound exactly like a missing one."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F, Q, QuerySet

from deals.notes.models import Note
from lev.accounts.models import Account
from lev.errors import NotFound
from lev.limits import MAX_ID
from lev.pagination import Keyset, list_scope

# Newest first, by when each was written; the id breaks ties (index note_account_created).
NOTE_KEYSET = Keyset(F("created_at"), Note._meta.get_field("created_at"), descending=True)


@dataclass(frozen=True)
class NoteFilters:
    deal_id: int | None = None
    placement_id: int | None = None
    company_id: int | None = None
    contact_id: int | None = None
    kind: str | None = None


def note_list_scope(*, account: Account, filters: NoteFilters) -> str:
    """Which list a note-list cursor belongs to: the account and every filter."""
    return list_scope("notes", account=account.pk, **vars(filters))


def note_list(*, account: Account, filters: NoteFilters) -> QuerySet[Note]:
    """The account's notes, newest first. `deal_id` takes the deal's own notes and those on its
    placements (as its timeline shows them); the other targets their own notes."""
    qs = Note.objects.filter(account=account).select_related("author")
    if filters.deal_id is not None:
        qs = qs.filter(Q(deal_id=filters.deal_id) | Q(placement__deal_id=filters.deal_id))
    for name in ("placement_id", "company_id", "contact_id"):
        if getattr(filters, name) is not None:
            qs = qs.filter(**{name: getattr(filters, name)})
    if filters.kind:
        qs = qs.filter(kind=filters.kind)
    return qs


def note_get(*, account: Account, note_id: int) -> Note:
    if not 0 < note_id <= MAX_ID:
        raise NotFound("Note", note_id)
    found = list(Note.objects.filter(account=account, pk=note_id).select_related("author").order_by()[:1])
    if not found:
        raise NotFound("Note", note_id)
    return found[0]
