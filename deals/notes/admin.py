"""Notes in the admin: the account's notes (account-scoped), and inlines that add and show notes on
the deal page, the company page and the contact page. A note added there is by the signed-in user,
in the account of the page's record; existing notes are shown, not edited (PATCH /notes/{id}/ edits).
The deal page's timeline panel is deals.admin.deal_page's (it reads deals.notes.timeline)."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.forms.models import BaseInlineFormSet

from deals.companies.admin import CompanyAdmin, ContactAdmin
from deals.notes.models import Note
from lev import formatting, limits
from lev.accounts.admin_bases import ADMIN_CSS, AccountScopedAdmin, TenancyInlineMixin
from lev.admin_lists import change_url, two_lines


class NoteForm(forms.ModelForm):
    body = forms.CharField(max_length=limits.NOTE_BODY_MAX, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}))

    class Meta:
        model = Note
        fields = ["kind", "body"]


class NoteFormSet(BaseInlineFormSet):
    """Saves a new note as written by the signed-in user, in the account of the page's record."""

    request = None  # set per request by NoteInline.get_formset

    def save_new(self, form, commit=True):
        note = form.save(commit=False)
        setattr(note, self.fk.name, self.instance)
        note.account_id = self.instance.account_id
        note.author = self.request.user if self.request is not None else None
        if commit:
            note.save()
        return note


class NoteInline(TenancyInlineMixin, admin.TabularInline):
    """The record's notes, newest first: add one, read the others."""

    model = Note
    form = NoteForm
    formset = NoteFormSet
    fields = ["kind", "body", "author", "created_at"]
    readonly_fields = ["author", "created_at"]
    extra = 0
    can_delete = False
    verbose_name = "note"
    verbose_name_plural = "notes, calls, emails and meetings"
    change_page_only = True  # a record being added has no notes yet (TenancyAdmin.get_inlines)

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)  # a class made for this request
        formset.request = request
        return formset

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("author").order_by("-created_at", "-id")

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # what was written stays as written here

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class DealNoteInline(NoteInline):
    fk_name = "deal"


class CompanyNoteInline(NoteInline):
    fk_name = "company"


class ContactNoteInline(NoteInline):
    fk_name = "contact"


@admin.register(Note)
class NoteAdmin(AccountScopedAdmin):
    # A laptop's width: the note over its kind, day and author; what it is about; the account.
    list_display = ["note_cell", "about", "account"]
    list_display_links = None  # the first cell links to the note
    list_filter = ["kind", "account"]
    search_fields = ["body"]
    list_select_related = ["account", "author", "deal", "placement__lender", "placement__deal", "company",
                           "contact"]
    fields = ["account", "kind", "body", "deal", "placement", "company", "contact", "author", "created_at",
              "updated_at"]
    readonly_fields = ["account", "deal", "placement", "company", "contact", "author", "created_at", "updated_at"]
    date_hierarchy = "created_at"

    class Media:
        css = ADMIN_CSS

    def has_add_permission(self, request) -> bool:
        return False  # notes are added on their deal's, company's or contact's page

    @admin.display(description="Note", ordering="created_at")
    def note_cell(self, note: Note) -> str:
        author = note.author.get_username() if note.author_id else ""
        line = " · ".join(part for part in (note.get_kind_display(), formatting.day(note.created_at), author) if part)
        return two_lines(self.short_body(note), line, change_url(note))

    @admin.display(description="About")
    def about(self, note: Note) -> str:
        return str(note.placement or note.deal or note.contact or note.company or formatting.EMPTY)

    @admin.display(description="Note")
    def short_body(self, note: Note) -> str:
        return note.body if len(note.body) <= 80 else note.body[:79] + "…"


CompanyAdmin.inlines = [*CompanyAdmin.inlines, CompanyNoteInline]
ContactAdmin.inlines = [*ContactAdmin.inlines, ContactNoteInline]
