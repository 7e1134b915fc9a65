"""Idempotency records get the account they were made in (they were per user only, so one user's
key sent for two accounts replayed the first account's deal).

Existing rows take the account of the deal they created or changed (from the path, or the
response of a deal create), else the user's first membership; a row of a user with no membership
can be replayed to no one and is dropped. Rows live 24 h, so this touches a day of creates.
"""

import re

import django.db.models.deletion
from django.db import migrations, models

_DEAL_PATH = re.compile(r"^/api/v1/deals/(\d{1,18})/")
_DEALS_PATH = "/api/v1/deals/"


def _deal_id(record) -> int | None:
    match = _DEAL_PATH.match(record.path)
    if match:
        return int(match.group(1))
    body = record.response_body
    if record.path == _DEALS_PATH and isinstance(body, dict):
        deal_id = body.get("id")
        if isinstance(deal_id, int) and not isinstance(deal_id, bool) and 0 < deal_id < 2**63:
            return deal_id
    return None


def backfill_accounts(apps, schema_editor):
    Record = apps.get_model("deals", "IdempotencyRecord")
    Deal = apps.get_model("deals", "Deal")
    Membership = apps.get_model("deals", "Membership")
    for record in Record.objects.filter(account__isnull=True).iterator():
        deal_id = _deal_id(record)
        account_id = (
            Deal.objects.filter(pk=deal_id).values_list("account_id", flat=True).first()
            if deal_id is not None else None
        )
        if account_id is None:
            account_id = (
                Membership.objects.filter(user_id=record.user_id).order_by("id")
                .values_list("account_id", flat=True).first()
            )
        if account_id is None:
            record.delete()
        else:
            Record.objects.filter(pk=record.pk).update(account_id=account_id)


class Migration(migrations.Migration):
    dependencies = [("deals", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="idempotencyrecord",
            name="account",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="deals.account"
            ),
        ),
        migrations.RunPython(backfill_accounts, migrations.RunPython.noop),
    ]
