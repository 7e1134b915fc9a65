"""Idempotency records move here from `deals`: state only, the table keeps its name."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from lev.migration_ops import move_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0001_initial'),
        ('deals', '0006_list_keyset_indexes'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='IdempotencyRecord',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.CharField(max_length=255)),
                        ('method', models.CharField(max_length=8)),
                        ('path', models.CharField(max_length=255)),
                        ('request_hash', models.CharField(max_length=64)),
                        ('status_code', models.PositiveSmallIntegerField(null=True)),
                        ('response_body', models.JSONField(null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('account', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='accounts.account')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'deals_idempotencyrecord',
                        'indexes': [models.Index(fields=['created_at'], name='deals_idemp_created_a97333_idx')],
                        'constraints': [models.UniqueConstraint(fields=('account', 'user', 'key'), name='uniq_idempotency_account_user_key')],
                    },
                ),
            ],
            database_operations=[],  # the tables exist, under their old names (db_table)
        ),
        move_content_types("deals", "idempotency", "idempotencyrecord"),
    ]
