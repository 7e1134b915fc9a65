"""Idempotency records move here from `deals`: state only, the table keeps its name (deals_idempotencyrecord)."""
from django.db import migrations

from lev.migration_ops import move_models


class Migration(migrations.Migration):
    initial = True
    dependencies = [("accounts", "0001_initial"), ("deals", "0006_list_keyset_indexes")]
    operations = move_models("deals", "idempotency", "IdempotencyRecord")
