"""Small writes every room's services share."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import models

Record = TypeVar("Record", bound=models.Model)


def save_changes(record: Record, values: dict[str, Any]) -> Record:
    """Write the values that differ from the record's (and its updated_at); nothing when none does."""
    changes = {k: v for k, v in values.items() if getattr(record, k) != v}
    for name, value in changes.items():
        setattr(record, name, value)
    if changes:
        record.save(update_fields=[*changes, "updated_at"])
    return record
