"""Notes: what the deal team wrote down, or a call, email or meeting it had, about exactly one deal,
placement, company or contact of its account.

Imported by `deals.models`, so a model of the `deals` app. The target is one of four nullable foreign
keys, exactly one set (a database constraint); the target is of the note's own account (kept so by
`deals.notes.services`, which looks it up in the account). A note goes with its target.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.formats import date_format

from lev import limits
from lev.enums import NOTE_KINDS, choices

TARGETS = ("deal", "placement", "company", "contact")
NAME_MAX = 60  # characters of a note's first line in its name (str)


def _only(target: str) -> Q:
    return Q(**{f"{name}__isnull": name != target for name in TARGETS})


class Note(models.Model):
    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    kind = models.CharField(max_length=8, choices=choices(NOTE_KINDS), default="note")
    body = models.TextField(max_length=limits.NOTE_BODY_MAX)
    deal = models.ForeignKey("deals.Deal", null=True, blank=True, on_delete=models.CASCADE, related_name="notes")
    placement = models.ForeignKey("deals.Placement", null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="notes_on")
    company = models.ForeignKey("deals.Company", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="notes_on")
    contact = models.ForeignKey("deals.Contact", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="notes_on")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=NOTE_KINDS), name="note_kind_valid"),
            models.CheckConstraint(
                condition=_only("deal") | _only("placement") | _only("company") | _only("contact"),
                name="note_one_target"),
        ]
        indexes = [
            # The list pages by (created_at, id) newest first, within the account or one target.
            models.Index(fields=["account", "created_at", "id"], name="note_account_created"),
            models.Index(fields=["deal", "created_at"], name="note_deal_created"),
            models.Index(fields=["placement", "created_at"], name="note_placement_created"),
        ]

    def __str__(self) -> str:
        """The note named by what it says and when: its first line (shortened) and its day, e.g. "Call with
        Granite Bank: credit committee on Thursday — Dec 7, 2026" (a list, a page's title, the history)."""
        line = " ".join(self.body.strip().splitlines()[0].split()) if self.body.strip() else ""
        if len(line) > NAME_MAX:
            line = line[: NAME_MAX - 1].rstrip() + "…"
        line = line or self.get_kind_display()
        if self.created_at is None:
            return line
        return f"{line} — {date_format(timezone.localtime(self.created_at), 'DATE_FORMAT')}"

    @property
    def target(self) -> tuple[str, int]:
        """(what, id) of the one thing the note is on."""
        for name in TARGETS:
            value = getattr(self, f"{name}_id")
            if value is not None:
                return name, value
        raise ValueError("a note without a target")
