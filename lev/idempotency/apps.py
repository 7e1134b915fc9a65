from django.apps import AppConfig


class IdempotencyConfig(AppConfig):
    """Idempotent creates: the stored first response to an `Idempotency-Key` (lev.idempotency.services)."""

    name = "lev.idempotency"
    label = "idempotency"
    verbose_name = "Idempotency records"
    default_auto_field = "django.db.models.BigAutoField"
