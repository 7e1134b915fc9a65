"""A history import run as a background job (deals.history.jobs): the uploaded file, kept on a private
storage (STORAGES["history_imports"], never served), what the run read and wrote, and how far it got.

Imported by `deals.models`, so a model of the `deals` app. The figures (rows_read ... term_sheets_created)
are the final ones; while the job runs its progress is published outside the import's one transaction
(`deals.history.jobs.progress_of`), as the rows it writes are invisible to anyone else until it commits.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


def _private_storage():
    from django.core.files.storage import storages

    return storages["history_imports"]


def _upload_to(job: HistoryImport, filename: str) -> str:
    # The account's folder and a random name: the user's file name is kept in `file_name` only.
    import uuid

    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    return f"{job.account_id}/{uuid.uuid4().hex}" + (f".{suffix[:8]}" if suffix.isalnum() else "")


class HistoryImport(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        REFUSED = "refused", "Refused"
        FAILED = "failed", "Failed"

    account = models.ForeignKey("accounts.Account", on_delete=models.CASCADE, related_name="history_imports")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # When the job was last handed to the broker (null: it could not be; the sweep queues it).
    queued_at = models.DateTimeField(null=True, blank=True)

    file_name = models.CharField(max_length=255)
    # Empty once the file is deleted (after an apply finished, or past LEV_HISTORY_FILE_RETENTION_SECONDS).
    file = models.FileField(storage=_private_storage, upload_to=_upload_to, max_length=255, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    dry_run = models.BooleanField(default=False)
    mapping = models.JSONField(default=dict, blank=True)  # {name in the file: lender id}
    new_lenders = models.JSONField(default=list, blank=True)  # names to add as the account's own lenders

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Set by each run that claims the job; a run that lost it (stale heartbeat, re-run) writes nothing.
    run_token = models.CharField(max_length=32, blank=True, default="", editable=False)

    rows_read = models.PositiveIntegerField(default=0)
    rows_refused = models.PositiveIntegerField(default=0)
    deals_created = models.PositiveIntegerField(default=0)
    placements_created = models.PositiveIntegerField(default=0)
    term_sheets_created = models.PositiveIntegerField(default=0)

    summary = models.JSONField(default=dict, blank=True)
    problems = models.JSONField(default=list, blank=True)  # [{line, column, message}], the first 200
    plan = models.JSONField(default=list, blank=True)  # a dry run's first 500 plan lines
    message = models.TextField(blank=True, default="")  # a plain sentence for refused / failed

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["account", "-created_at"])]

    def __str__(self) -> str:
        kind = "Preview" if self.dry_run else "Import"
        return f"{kind} of {self.file_name} ({self.get_status_display().lower()})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.REFUSED, self.Status.FAILED)
