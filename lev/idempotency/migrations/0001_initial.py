"""Idempotency records move here from `deals`: state only, the table keeps its name (deals_idempotencyrecord)."""
from django.db import migrations

from lev.migration_ops import MoveModelState, move_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0001_initial'),
        ('deals', '0006_list_keyset_indexes'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                MoveModelState("IdempotencyRecord", "deals", "idempotency"),
            ],
            database_operations=[],  # the tables stay, under their names
        ),
        move_content_types("deals", "idempotency", "idempotencyrecord"),
    ]
