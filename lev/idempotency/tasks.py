from celery import shared_task

from lev.idempotency.services import idempotency_purge


# The name it had under deals.tasks: the beat schedule and jobs already queued keep reaching it.
@shared_task(name="deals.tasks.purge_idempotency_records", ignore_result=True, acks_late=True)
def purge_idempotency_records() -> int:
    """Forget Idempotency-Key records past their 24 h (settings.LEV_IDEMPOTENCY_TTL_HOURS)."""
    return idempotency_purge()
