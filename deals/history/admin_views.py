"""The admin's "Import history" pages for a deal team (issue 38): the template to download, an upload that
starts a preview (a dry run of the import job, deals.history.jobs), the preview when it is done (what would
be written, the plan line by line, the rows refused with their report, the lender names to map), "Apply",
the import's progress and summary, and the account's past imports.

The pages hang under the deal list's admin (`DealAdmin.get_urls` adds `urls(...)`; a link on the deal list
leads here): importing history writes deals. HistoryImport has no ModelAdmin of its own, so the admin's
generic change, delete and history pages never apply to a job.

Who: a staff user who is a member of an account above viewer (member or owner) imports into that account
and sees its imports; a superuser, every account's (as in the admin's lists). Anyone else is refused (403);
another account's job, or one that does not exist, is a 404. Lender names are never guessed here either:
each name to map is a choice among its candidates or "add it as your own lender", made by the person.

Uploads are bounded before they are read: `BoundedUpload` writes the file to a temporary file and skips it
past `HISTORY_FILE_MAX_BYTES` (the rest of the body is read and dropped, never kept), so a 200 MB upload
costs neither memory nor disk, and the form says how big a file may be. The file's kind and header are
then checked by the import's own reader (`deals.history.reader`), so a file that is not a spreadsheet, or
lacks a required column, is a form error at once, not a job that fails.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.core.files.uploadhandler import SkipFile, TemporaryFileUploadHandler
from django.core.paginator import Paginator
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from deals.history import jobs
from deals.history.columns import read_header
from deals.history.errors import HistoryRefused, ImportBusy
from deals.history.models import HistoryImport
from deals.history.reader import TableError, read_table
from lev import limits
from lev.accounts.admin_bases import staff_roles
from lev.accounts.models import Account, Membership
from lev.errors import ApplicationError

PAGE_SIZE = 20  # past imports per page
REFRESH_SECONDS = 2  # how often a running job's page fetches its progress (deals/static/lev_admin/history_import.js)
EXAMPLES = Path(settings.BASE_DIR) / "docs" / "examples"
DOWNLOADS = {"template": "history-template.csv", "example": "history-example.csv"}
NEW_LENDER = "new"  # the choice "add it as our own lender" in a name's select
MAX_MB = limits.HISTORY_FILE_MAX_BYTES // 2**20
TOO_BIG = f"The file is larger than {MAX_MB} MB; split it (by year, say) and import each part."


# --- who may import where ---------------------------------------------------------------------------
def importer_account_ids(request: HttpRequest) -> list[int] | None:
    """The accounts the signed-in user imports into and whose imports it sees: every account (None) for a
    superuser, else those where its role is above viewer."""
    if request.user.is_superuser:
        return None
    return [pk for pk, role in staff_roles(request).items() if role != Membership.Role.VIEWER]


def importer_accounts(request: HttpRequest):
    ids = importer_account_ids(request)
    accounts = Account.objects.order_by("name")
    return accounts if ids is None else accounts.filter(pk__in=ids)


def check_may_import(request: HttpRequest) -> None:
    """403 unless the user holds the admin's permission to add deals and imports into some account (a
    viewer of its accounts, or a member of none, is refused)."""
    if not request.user.has_perm("deals.add_deal"):
        raise PermissionDenied
    ids = importer_account_ids(request)
    if ids is not None and not ids:
        raise PermissionDenied


def job_or_404(request: HttpRequest, job_id: int) -> HistoryImport:
    """The job, if it is one of the user's accounts' imports; else 404 — another account's job and a
    missing one get the same answer."""
    jobs_seen = HistoryImport.objects.select_related("account", "created_by")
    ids = importer_account_ids(request)
    if ids is not None:
        jobs_seen = jobs_seen.filter(account_id__in=ids)
    job = jobs_seen.filter(pk=job_id).first()
    if job is None:
        raise Http404("No such import.")
    return job


# --- the upload -------------------------------------------------------------------------------------
class BoundedUpload(TemporaryFileUploadHandler):
    """Django's temporary-file upload handler, refusing a file past `HISTORY_FILE_MAX_BYTES`: its bytes
    past the bound are skipped (read and dropped), `too_big` says so. Every file goes to a temporary file,
    so the reader opens it by path whatever its size."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.too_big = False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if start + len(raw_data) > limits.HISTORY_FILE_MAX_BYTES:
            self.too_big = True
            raise SkipFile
        return super().receive_data_chunk(raw_data, start)


def _file_problem(file_path: Path) -> str | None:
    """Why the import's reader refuses the file before its rows (its kind, encoding, size, header), or
    None. The rows themselves are the preview's to check."""
    try:
        table = read_table(file_path)
        try:
            read_header(table.header)
        finally:
            table.rows.close()
    except TableError as exc:
        return str(exc)
    return None


class UploadForm(forms.Form):
    account = forms.ModelChoiceField(queryset=Account.objects.none(), label="Account", empty_label=None,
                                     help_text="The account whose history this is.")
    file = forms.FileField(
        label="History file", allow_empty_file=False,
        widget=forms.ClearableFileInput(attrs={
            "accept": ".csv,.xlsx,.txt,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            # history_import.js says a file is too big before sending it (the server says it too, unread).
            "data-max-bytes": limits.HISTORY_FILE_MAX_BYTES, "data-too-big": TOO_BIG}),
        help_text=f"CSV (UTF-8 or Excel's Windows-1252, any common delimiter) or XLSX, at most {MAX_MB} MB, "
                  "in the template's columns.",
        error_messages={"required": "Choose the history file to upload.",
                        "empty": "The file is empty: it holds no header and no rows."})

    def __init__(self, *args, accounts, too_big: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.too_big = too_big
        self.fields["account"].queryset = accounts
        # One account: nothing to choose (the page names it).
        self.single_account = accounts.first() if len(accounts[:2]) == 1 else None
        if self.single_account is not None:
            del self.fields["account"]

    def target(self) -> Account:
        """The account the file is imported into (after is_valid())."""
        return self.single_account or self.cleaned_data["account"]

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        if upload is None:
            return upload
        problem = _file_problem(Path(upload.temporary_file_path()))
        if problem:
            raise forms.ValidationError(f"{upload.name}: {problem}. Nothing was imported.")
        return upload

    def full_clean(self) -> None:
        # A file skipped for its size is missing from the upload: say why, not "choose a file".
        super().full_clean()
        if self.too_big and "file" in self.errors:
            self.errors["file"] = self.error_class([TOO_BIG])


# --- the preview: what a job says, in the deal team's words -------------------------------------------
def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def figures(job: HistoryImport) -> list[tuple[str, int]]:
    """The job's counts as the page lists them: while it runs, what its run published so far."""
    now = jobs.progress_of(job)
    rows = [("Rows read", now["rows_read"]), ("Rows refused", now["rows_refused"])]
    if job.dry_run and job.finished:  # a preview writes nothing: what it would write is its preview
        return rows
    return [*rows, ("Deals", now["deals_created"]), ("Placements", now["placements_created"]),
            ("Quotes", now["term_sheets_created"])]


def preview(job: HistoryImport) -> dict[str, Any]:
    """What the finished job would write (a preview) or wrote (an import): the figures of its summary."""
    s = job.summary or {}
    created = [
        _count(s.get("deals", job.deals_created), "new deal"),
        _count(s.get("properties", 0), "property", "properties"),
        _count(s.get("placements", job.placements_created), "placement"),
        _count(s.get("term_sheets", job.term_sheets_created), "quote"),
        _count(s.get("won", 0), "won deal"),
    ]
    skipped = s.get("deals_existing", 0)
    return {
        "created": created, "rows": s.get("rows", job.rows_read),
        "existing": (f"{_count(skipped, 'deal')} already in the account ({_count(s.get('rows_skipped', 0), 'row')} "
                     "skipped: importing a file again creates nothing twice)") if skipped else "",
        "new_lenders": s.get("new_lenders", []) or job.new_lenders,
        "encoding": s.get("encoding", ""),
    }


def unresolved(job: HistoryImport) -> list[dict[str, Any]]:
    """The lender names to map, each with its choices: its candidates (directory or own lenders), then
    "add it as our own lender". No choice is preselected."""
    names = []
    for index, item in enumerate((job.summary or {}).get("unresolved", [])):
        candidates = [(str(c["id"]), c["name"]) for c in item.get("candidates", [])]
        names.append({"field": f"name-{index}", "name": item["name"], "first_line": item.get("first_line"),
                      "rows": item.get("rows", 0), "candidates": candidates})
    return names


def _chosen(request: HttpRequest, job: HistoryImport) -> tuple[dict[str, int], list[str], list[str]]:
    """The mapping and the new lenders the form posted for the job's names, and the names left unchosen
    (or given a choice that is none of theirs)."""
    mapping, new, missing = dict(job.mapping or {}), list(job.new_lenders or []), []
    for item in unresolved(job):
        choice = request.POST.get(item["field"], "")
        if choice == NEW_LENDER:
            new.append(item["name"])
        elif choice in {pk for pk, _name in item["candidates"]}:
            mapping[item["name"]] = int(choice)
        else:
            missing.append(item["name"])
    return mapping, new, missing


# --- the pages --------------------------------------------------------------------------------------
def _context(model_admin: admin.ModelAdmin, request: HttpRequest, **extra) -> dict[str, Any]:
    return {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, "media": model_admin.media,
            "import_url": reverse("admin:deals_history_import"), **extra}


def _relay(request: HttpRequest, call: Callable[[], HistoryImport]) -> HistoryImport | None:
    """Start a job, or tell the person why not (a message): never a 500 for a refusal."""
    try:
        return call()
    except (TableError, HistoryRefused) as exc:
        messages.error(request, f"{exc}. Nothing was imported.")
    except ImportBusy:
        messages.error(request, "Another history import of this account is running; start this one when it "
                                "has finished.")
    except ApplicationError as exc:
        messages.error(request, exc.message)
    return None


def index_view(model_admin: admin.ModelAdmin, request: HttpRequest, form: UploadForm | None = None,
               status: int = 200) -> HttpResponse:
    """The "Import history" page: the template, the upload form, the past imports (newest first)."""
    check_may_import(request)
    accounts = importer_accounts(request)
    if form is None:
        form = UploadForm(accounts=accounts)
    past = HistoryImport.objects.select_related("account", "created_by")
    ids = importer_account_ids(request)
    if ids is not None:
        past = past.filter(account_id__in=ids)
    page = Paginator(past.order_by("-created_at", "-id"), PAGE_SIZE).get_page(request.GET.get("page"))
    context = _context(model_admin, request, title="Import history", form=form, page=page,
                       several_accounts=form.single_account is None, single_account=form.single_account, max_mb=MAX_MB,
                       upload_url=reverse("admin:deals_history_import_upload"),
                       template_url=reverse("admin:deals_history_import_download", args=["template"]),
                       example_url=reverse("admin:deals_history_import_download", args=["example"]))
    return TemplateResponse(request, "admin/deals/history/import.html", context, status=status)


def upload_view(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    """POST: the file, checked and stored, a preview (dry run) started; then its page. A bad file is a form
    error on the import page (400)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    check_may_import(request)
    handler = BoundedUpload(request)
    request.upload_handlers = [handler]  # before the body is read: CSRF's check below reads it
    return csrf_protect(_upload)(request, model_admin, handler)


def _upload(request: HttpRequest, model_admin: admin.ModelAdmin, handler: BoundedUpload) -> HttpResponse:
    form = UploadForm(request.POST, request.FILES, accounts=importer_accounts(request), too_big=handler.too_big)
    if not form.is_valid():
        return index_view(model_admin, request, form, status=400)
    job = _relay(request, lambda: jobs.import_start(account=form.target(), user=request.user,
                                                    upload=form.cleaned_data["file"], dry_run=True))
    if job is None:
        return HttpResponseRedirect(reverse("admin:deals_history_import"))
    return HttpResponseRedirect(reverse("admin:deals_history_import_job", args=[job.pk]))


def job_view(model_admin: admin.ModelAdmin, request: HttpRequest, job_id: int) -> HttpResponse:
    """A job's page: its progress while it runs; its preview (and "Apply") or its summary when done."""
    check_may_import(request)
    job = job_or_404(request, job_id)
    names = unresolved(job) if job.status == HistoryImport.Status.REFUSED else []
    context = _context(
        model_admin, request, title=("Preview of " if job.dry_run else "Import of ") + job.file_name, job=job,
        figures=figures(job), preview=preview(job) if job.status == HistoryImport.Status.DONE else None,
        names=names, new_lender=NEW_LENDER,
        # Names can be mapped on a preview refused for its names alone; bad rows need a corrected file.
        can_map=bool(names) and not job.problems and bool(job.file),
        can_apply=job.dry_run and job.status == HistoryImport.Status.DONE and bool(job.file),
        file_gone=job.dry_run and job.finished and not job.file,
        refresh_seconds=REFRESH_SECONDS,
        apply_url=reverse("admin:deals_history_import_apply", args=[job.pk]),
        report_url=reverse("admin:deals_history_import_refused", args=[job.pk]),
        deals_url=imported_deals_url(job),
    )
    return TemplateResponse(request, "admin/deals/history/job.html", context)


def imported_deals_url(job: HistoryImport) -> str:
    """The deal list narrowed to the deals an applied import created (its account, created while it ran)."""
    if job.dry_run or job.status != HistoryImport.Status.DONE or job.started_at is None:
        return ""
    query = {"account__id__exact": job.account_id, "archived": "all",
             "created_at__gte": job.started_at.isoformat(),
             "created_at__lte": (job.finished_at or job.started_at + dt.timedelta(days=1)).isoformat()}
    return reverse("admin:deals_deal_changelist") + "?" + urlencode(query)


def apply_view(model_admin: admin.ModelAdmin, request: HttpRequest, job_id: int) -> HttpResponse:
    """POST from a job's page: "Apply" (the import, with the preview's choices and the names mapped on the
    page) or "Preview again" with the names mapped. A name left unchosen is asked for again."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    check_may_import(request)
    job = job_or_404(request, job_id)
    back = reverse("admin:deals_history_import_job", args=[job.pk])
    mapping, new_lenders, missing = _chosen(request, job)
    if missing:
        messages.error(request, "Choose a lender, or “add as our own lender”, for: " + ", ".join(missing) + ".")
        return HttpResponseRedirect(back + "#names")
    dry_run = request.POST.get("then") == "preview"
    if not job.dry_run:
        messages.error(request, "This import has run; to import the file again, upload it again.")
        return HttpResponseRedirect(back)
    if not (job.status == HistoryImport.Status.DONE or (job.status == HistoryImport.Status.REFUSED
                                                        and not job.problems)):
        messages.error(request, "This file has rows to correct: upload the corrected file.")
        return HttpResponseRedirect(back)
    started = _relay(request, lambda: jobs.import_again(job=job, user=request.user, dry_run=dry_run,
                                                        mapping=mapping, new_lenders=new_lenders))
    if started is None:
        return HttpResponseRedirect(back)
    return HttpResponseRedirect(reverse("admin:deals_history_import_job", args=[started.pk]))


def refused_rows_view(model_admin: admin.ModelAdmin, request: HttpRequest, job_id: int) -> HttpResponse:
    """The refused rows' report of a job, as CSV (line, column, message, and the row as read)."""
    check_may_import(request)
    job = job_or_404(request, job_id)
    response = HttpResponse(jobs.refused_rows_csv(job), content_type="text/csv; charset=utf-8")
    stem = Path(job.file_name).stem or "history"
    response["Content-Disposition"] = f'attachment; filename="{_safe_name(stem)}-refused-rows.csv"'
    return response


def _safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:80] or "history"


def download_view(model_admin: admin.ModelAdmin, request: HttpRequest, which: str) -> HttpResponse:
    """The template (a header row) or the example file of docs/examples, as the docs show them."""
    check_may_import(request)
    if which not in DOWNLOADS:
        raise Http404("No such file.")
    name = DOWNLOADS[which]
    return FileResponse((EXAMPLES / name).open("rb"), as_attachment=True, filename=name,
                        content_type="text/csv; charset=utf-8")


def urls(model_admin: admin.ModelAdmin) -> list:
    """The pages, under the deal list's admin (its `get_urls` puts them before its own)."""
    site = model_admin.admin_site

    def page(view):
        def bound(request, *args, **kwargs):
            return view(model_admin, request, *args, **kwargs)
        return bound

    upload = page(upload_view)
    # CSRF is checked inside, once the upload's handler is in place (Django reads the body for the check).
    upload = csrf_exempt(upload)
    return [
        path("import-history/", site.admin_view(page(index_view)), name="deals_history_import"),
        path("import-history/upload/", site.admin_view(upload), name="deals_history_import_upload"),
        path("import-history/<str:which>.csv", site.admin_view(page(download_view)),
             name="deals_history_import_download"),
        path("import-history/<int:job_id>/", site.admin_view(page(job_view)), name="deals_history_import_job"),
        path("import-history/<int:job_id>/apply/", site.admin_view(page(apply_view)),
             name="deals_history_import_apply"),
        path("import-history/<int:job_id>/refused-rows.csv", site.admin_view(page(refused_rows_view)),
             name="deals_history_import_refused"),
    ]

