"""The history import as a background job: the upload stored, a HistoryImport row, a Celery task that
runs `deals.history.services.history_import` (stub: being built)."""

from __future__ import annotations

from deals.history.models import HistoryImport


def import_start(*, account, user, upload, dry_run: bool = False, mapping: dict[str, int] | None = None,
                 new_lenders: list[str] | None = None) -> HistoryImport:
    raise NotImplementedError


def import_again(*, job: HistoryImport, user, dry_run: bool = False, mapping: dict[str, int] | None = None,
                 new_lenders: list[str] | None = None) -> HistoryImport:
    raise NotImplementedError


def import_run(*, job_id: int, owner: str | None = None) -> None:
    raise NotImplementedError


def refused_rows_csv(job: HistoryImport) -> str:
    raise NotImplementedError
