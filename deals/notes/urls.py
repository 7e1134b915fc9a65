from django.urls import path

from deals.notes import api

urlpatterns = [
    path("notes/", api.NoteListCreateApi.as_view(), name="note-list"),
    path("notes/<int:note_id>/", api.NoteDetailApi.as_view(), name="note-detail"),
    path("deals/<int:deal_id>/timeline/", api.DealTimelineApi.as_view(), name="deal-timeline"),
]
