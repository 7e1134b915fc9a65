"""REST views of notes and of a deal's timeline: validate → call a service or selector → serialize.
Tenancy as for deals: another account's note, or a target (deal, placement, company, contact) of
another account, is a 404 exactly like a missing one. Notes are part of the account's deal records:
read with deals:read, written with deals:write (as companies are)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from deals.api import DealScopedView
from deals.notes import selectors, services
from deals.notes.models import Note
from deals.notes.serializers import (
    TARGET_IDS,
    NoteInputSerializer,
    NoteListQuerySerializer,
    NoteSerializer,
    NoteUpdateSerializer,
    TimelineEntrySerializer,
    TimelineQuerySerializer,
)
from deals.notes.timeline import deal_timeline
from lev.accounts.api import validated
from lev.accounts.scopes import DEALS_READ, DEALS_WRITE
from lev.idempotency.services import idempotent
from lev.openapi import IDEMPOTENCY_KEY, READ_ERRORS, WRITE_ERRORS
from lev.pagination import KeysetPagination, StandardPagination, keyset_paginated, paginated


class NoteScopedView(DealScopedView):
    def note(self, request: Request, note_id: int) -> Note:
        return selectors.note_get(account=self.account(request), note_id=note_id)


class NoteListCreateApi(NoteScopedView):
    required_scopes = {"GET": DEALS_READ, "POST": DEALS_WRITE}

    @extend_schema(operation_id="notes_list", parameters=[NoteListQuerySerializer],
                   responses={200: keyset_paginated(NoteSerializer, "PaginatedNoteList"), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        """The account's notes, newest first; filter by the deal (its notes and those on its
        placements), a placement, a company or a contact, and by kind. A filter naming a deal,
        placement, company or contact that is not the account's is a 404. Follow `next` (a cursor)."""
        query = NoteListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        account, filters = self.account(request), query.to_filters()
        for name in TARGET_IDS:  # each target filter names one of the account's records, or 404
            if getattr(filters, name) is not None:
                services.note_target(account=account, data={name: getattr(filters, name)})
        paginator = KeysetPagination(
            keyset=selectors.NOTE_KEYSET, scope=selectors.note_list_scope(account=account, filters=filters),
            page_size=query.validated_data.get("page_size"), cursor=query.validated_data.get("cursor"),
            page=query.validated_data.get("page"),
        )
        page = paginator.paginate_queryset(selectors.note_list(account=account, filters=filters), request)
        return paginator.get_paginated_response(NoteSerializer(page, many=True).data)

    @extend_schema(request=NoteInputSerializer, parameters=[IDEMPOTENCY_KEY],
                   responses={201: NoteSerializer, **WRITE_ERRORS})
    def post(self, request: Request) -> Response:
        """Write a note, or log a call, email or meeting, on exactly one of the account's deals,
        placements, companies or contacts. The author is the caller."""
        def create() -> Response:
            data = validated(NoteInputSerializer, request.data)
            account = self.account(request)
            target = services.note_target(account=account, data=data)
            note = services.note_create(account=account, author=request.user, target=target,
                                        kind=data.get("kind") or "note", body=data["body"])
            return Response(NoteSerializer(note).data, status=status.HTTP_201_CREATED)

        return idempotent(request, create)


class NoteDetailApi(NoteScopedView):
    required_scopes = {"GET": DEALS_READ, "PATCH": DEALS_WRITE, "DELETE": DEALS_WRITE}

    @extend_schema(responses={200: NoteSerializer, **READ_ERRORS})
    def get(self, request: Request, note_id: int) -> Response:
        return Response(NoteSerializer(self.note(request, note_id)).data)

    @extend_schema(request=NoteUpdateSerializer, responses={200: NoteSerializer, **WRITE_ERRORS})
    def patch(self, request: Request, note_id: int) -> Response:
        """Change a note's kind or body (its target and author stay)."""
        note = self.note(request, note_id)
        data = validated(NoteUpdateSerializer, request.data, partial=True)
        return Response(NoteSerializer(services.note_update(note=note, data=data)).data)

    @extend_schema(request=None, responses={204: None, **WRITE_ERRORS})
    def delete(self, request: Request, note_id: int) -> Response:
        """Delete a note (it cannot be undone)."""
        services.note_delete(note=self.note(request, note_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DealTimelineApi(DealScopedView):
    required_scopes = {"GET": DEALS_READ}

    @extend_schema(operation_id="deals_timeline_list", parameters=[TimelineQuerySerializer],
                   responses={200: paginated(TimelineEntrySerializer, "PaginatedTimelineList"), **READ_ERRORS})
    def get(self, request: Request, deal_id: int) -> Response:
        """What happened to the deal, oldest first: stage changes, lender searches started and
        finished, placements sent and their status changes, quotes received and removed, the winner
        chosen, and notes (the deal's and its placements'). Each entry: when, its kind, who did it
        ("Lev" for what Lev did by itself), one line of text and the ids it refers to."""
        validated(TimelineQuerySerializer, request.query_params.dict())
        entries = deal_timeline(deal=self.deal(request, deal_id))
        paginator = StandardPagination()
        page = paginator.paginate_queryset(entries, request, view=self)
        return paginator.get_paginated_response(TimelineEntrySerializer(page, many=True).data)
