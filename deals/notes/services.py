"""Writes of notes. Keyword-only, atomic; callers pass validated data. The target is named by one id
and looked up in the caller's account: another account's deal, placement, company or contact is
NotFound, exactly like a missing one."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from deals import selectors as deal_selectors
from deals.companies import selectors as company_selectors
from deals.notes.models import TARGETS, Note
from deals.placements import selectors as placement_selectors
from lev.accounts.models import Account
from lev.errors import NotFound, ValidationFailed
from lev.limits import MAX_ID
from lev.records import save_changes

ONE_TARGET = "a note is on exactly one of deal_id, placement_id, company_id or contact_id"


def note_target(*, account: Account, data: dict[str, Any]) -> dict[str, Any]:
    """{"deal": the account's deal} (or placement, company, contact) for the one `<target>_id` of `data`."""
    given = [name for name in TARGETS if data.get(f"{name}_id") is not None]
    if len(given) != 1:
        raise ValidationFailed({"non_field_errors": [ONE_TARGET]}, message=f"Validation failed: {ONE_TARGET}")
    name = given[0]
    target_id = data[f"{name}_id"]
    if name == "deal":
        target = deal_selectors.deal_get(account=account, deal_id=target_id)
    elif name == "placement":
        if not 0 < target_id <= MAX_ID:
            raise NotFound("Placement", target_id)
        target = placement_selectors.placement_get(account=account, placement_id=target_id)
    elif name == "company":
        target = company_selectors.company_get(account=account, company_id=target_id)
    else:
        target = company_selectors.contact_get(account=account, contact_id=target_id)
    return {name: target}


@transaction.atomic
def note_create(*, account: Account, author, target: dict[str, Any], kind: str, body: str) -> Note:
    """A note by `author` (a user, or None) on the account's `target` (from `note_target`)."""
    for name, value in target.items():
        owner = value.deal.account_id if name == "placement" else value.account_id
        if owner != account.pk:
            raise ValueError("the target is another account's")  # callers look it up in the account
    return Note.objects.create(account=account, author=author if getattr(author, "pk", None) else None,
                               kind=kind, body=body, **target)


@transaction.atomic
def note_update(*, note: Note, data: dict[str, Any]) -> Note:
    """Change a note's kind or body; its target and author stay."""
    return save_changes(note, {k: data[k] for k in ("kind", "body") if k in data})


@transaction.atomic
def note_delete(*, note: Note) -> None:
    note.delete()
