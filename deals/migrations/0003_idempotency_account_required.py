"""Every idempotency record has an account (0002 filled them in); keys are unique per
(account, user). A separate migration, so the schema change runs in its own transaction after
the backfill's row updates."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("deals", "0002_idempotency_account")]

    operations = [
        migrations.RemoveConstraint(model_name="idempotencyrecord", name="uniq_idempotency_key"),
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="account",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="deals.account"),
        ),
        migrations.AddConstraint(
            model_name="idempotencyrecord",
            constraint=models.UniqueConstraint(
                fields=("account", "user", "key"), name="uniq_idempotency_account_user_key"
            ),
        ),
    ]
