from __future__ import annotations

from typing import Any

from rest_framework import serializers

from deals.notes.models import Note
from deals.notes.selectors import NoteFilters
from lev import limits
from lev.enums import NOTE_KINDS, TIMELINE_KINDS
from lev.serializers import (
    EnumField,
    PageQuerySerializer,
    StrictSerializer,
    cursor_field,
    int_field,
    page_field,
    page_size_field,
    text_field,
)

TARGET_IDS = ("deal_id", "placement_id", "company_id", "contact_id")


def id_field(help_text: str) -> serializers.IntegerField:
    return int_field(min_value=1, max_value=limits.MAX_ID, allow_null=False, help_text=help_text)


def body_field(*, required: bool) -> serializers.CharField:
    return text_field(max_length=limits.NOTE_BODY_MAX, required=required, allow_blank=False,
                      help_text="What was said or agreed.")


KIND_HELP = "note, call, email or meeting."


# --- input --------------------------------------------------------------------------------------------
class NoteInputSerializer(StrictSerializer):
    """A new note: its kind, its body, and exactly one of the four target ids."""

    deal_id = id_field("On this deal (one target id of four).")
    placement_id = id_field("On this placement: the deal's timeline shows it with the lender's name.")
    company_id = id_field("On this company.")
    contact_id = id_field("On this contact (a company's person or a lender contact).")
    kind = EnumField(NOTE_KINDS, required=False, help_text=f"{KIND_HELP} Default note.")
    body = body_field(required=True)


class NoteUpdateSerializer(StrictSerializer):
    """The kind or the body of a note; its target and author stay."""

    kind = EnumField(NOTE_KINDS, required=False, help_text=KIND_HELP)
    body = body_field(required=False)


class NoteListQuerySerializer(StrictSerializer):
    deal_id = id_field("The deal's notes and those on its placements.")
    placement_id = id_field("Notes on this placement.")
    company_id = id_field("Notes on this company.")
    contact_id = id_field("Notes on this contact.")
    kind = EnumField(NOTE_KINDS, required=False)
    cursor = cursor_field()
    page = page_field(help_text="Deprecated: follow `next` (a cursor) instead.")
    page_size = page_size_field()

    def to_filters(self) -> NoteFilters:
        data = {k: v for k, v in self.validated_data.items() if k not in ("cursor", "page", "page_size")}
        return NoteFilters(**data)


TimelineQuerySerializer = PageQuerySerializer


# --- output -------------------------------------------------------------------------------------------
class NoteSerializer(serializers.ModelSerializer):
    """A note on a deal, a placement, a company or a contact: who wrote it, when, and what it says."""

    author = serializers.SerializerMethodField()

    class Meta:
        model = Note
        fields = ("id", "kind", "body", "deal_id", "placement_id", "company_id", "contact_id", "author_id", "author",
                  "created_at", "updated_at")

    def get_author(self, note: Note) -> str | None:
        """The author's username (null once the user is removed)."""
        return note.author.get_username() if note.author_id else None


class TimelineRefsSerializer(serializers.Serializer):
    """The ids an entry refers to; only those that apply are present."""

    stage_change_id = serializers.IntegerField(required=False)
    stage_id = serializers.IntegerField(required=False)
    search_id = serializers.IntegerField(required=False)
    placement_id = serializers.IntegerField(required=False)
    lender_id = serializers.IntegerField(required=False)
    term_sheet_id = serializers.IntegerField(required=False)
    note_id = serializers.IntegerField(required=False)
    document_id = serializers.IntegerField(required=False)
    email_id = serializers.IntegerField(required=False)


class TimelineEntrySerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = EnumField(TIMELINE_KINDS, help_text="stage_changed, search_started, search_finished, placement_sent, "
                                               "placement_status, quote_received, quote_removed, winner_chosen, note, "
                                               "lender_emailed, email_refused, package_opened, "
                                               "document_downloaded, lender_replied.")
    actor = serializers.CharField(allow_null=True, help_text='Who did it (a username; the lender\'s name for what '
                                                             'a lender did with its package or reply), "Lev" for '
                                                             "what Lev did by itself, null for a removed user.")
    actor_id = serializers.IntegerField(allow_null=True, help_text="The user's id; null for Lev.")
    text = serializers.CharField(help_text="One line saying what happened.")
    refs = TimelineRefsSerializer()

    def to_representation(self, entry: Any) -> dict[str, Any]:
        return {"at": serializers.DateTimeField().to_representation(entry.at), "kind": entry.kind,
                "actor": entry.actor, "actor_id": entry.actor_id, "text": entry.text, "refs": dict(entry.refs)}
