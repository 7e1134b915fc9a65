from celery import shared_task

from lev.idempotency import idempotency_purge


@shared_task(ignore_result=True, acks_late=True)
def purge_idempotency_records() -> int:
    """Forget Idempotency-Key records past their 24 h (settings.LEV_IDEMPOTENCY_TTL_HOURS)."""
    return idempotency_purge()
