"""Accounts, memberships and API keys move here from `deals`: state only, the tables keep their names."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from lev.migration_ops import move_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('deals', '0006_list_keyset_indexes'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Account',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200)),
                        ('slug', models.SlugField(max_length=80, unique=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'deals_account',
                    },
                ),
                migrations.CreateModel(
                    name='ApiKey',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100)),
                        ('prefix', models.CharField(help_text='First characters of the key, to recognise it.', max_length=16)),
                        ('key_hash', models.CharField(editable=False, max_length=64, unique=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('expires_at', models.DateTimeField(blank=True, null=True)),
                        ('revoked_at', models.DateTimeField(blank=True, null=True)),
                        ('last_used_at', models.DateTimeField(blank=True, null=True)),
                        ('scopes', models.CharField(default='deals:read deals:write lenders:read searches:write placements:read placements:write', help_text='Space-separated scopes: deals:read, deals:write, lenders:read, searches:write, placements:read, placements:write.', max_length=200)),
                        ('account', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_keys', to='accounts.account')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_keys', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'API key',
                        'db_table': 'deals_apikey',
                    },
                ),
                migrations.CreateModel(
                    name='Membership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('owner', 'Owner'), ('member', 'Member'), ('viewer', 'Viewer')], default='member', max_length=16)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('account', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='accounts.account')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'deals_membership',
                        'constraints': [models.UniqueConstraint(fields=('account', 'user'), name='uniq_membership')],
                    },
                ),
            ],
            database_operations=[],  # the tables exist, under their old names (db_table)
        ),
        move_content_types("deals", "accounts", "account", "membership", "apikey"),
    ]
