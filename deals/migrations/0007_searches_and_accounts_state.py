"""Lender searches and their matches move here from `lenders`, and deals (and placements) now point
at `accounts.Account` and `deals.LenderSearch`: state only, no table changes (each keeps its name)."""
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from lev.migration_ops import move_content_types


class Migration(migrations.Migration):

    dependencies = [
        ('deals', '0006_list_keyset_indexes'),
        ('lenders', '0006_ranking_top_n'),
        ('accounts', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='deal',
                    name='account',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='deals',
                                            to='accounts.account'),
                ),
                migrations.CreateModel(
                    name='LenderSearch',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('deal_version', models.PositiveIntegerField()),
                        ('status', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('partial', 'Partial'), ('completed', 'Completed'), ('failed', 'Failed')], db_index=True, default='pending', max_length=10)),
                        ('progress', models.PositiveSmallIntegerField(default=0, help_text='Percent done.')),
                        ('total_candidates', models.PositiveIntegerField(default=0)),
                        ('total_matches', models.PositiveIntegerField(default=0)),
                        ('ranked_matches', models.PositiveIntegerField(default=0, help_text='Matches stored (the top LEV_RANKING_TOP_N of total_matches), ranks 1..this.')),
                        ('matches_purged_at', models.DateTimeField(blank=True, null=True)),
                        ('attempts', models.PositiveSmallIntegerField(default=0)),
                        ('error_code', models.CharField(blank=True, default='', max_length=40)),
                        ('error_message', models.CharField(blank=True, default='', max_length=500)),
                        ('criteria', models.JSONField(blank=True, default=dict)),
                        ('run_token', models.CharField(blank=True, default='', editable=False, max_length=32)),
                        ('queued_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('account', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lender_searches', to='accounts.account')),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('deal', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lender_searches', to='deals.deal')),
                    ],
                    options={
                        'verbose_name_plural': 'lender searches',
                        'db_table': 'lenders_lendersearch',
                        'ordering': ['-created_at', '-id'],
                        'indexes': [models.Index(fields=['deal', 'deal_version', '-created_at'],
                                                 name='lenders_len_deal_id_5daf8b_idx')],
                    },
                ),
                migrations.CreateModel(
                    name='LenderMatch',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('rank', models.PositiveIntegerField()),
                        ('score', models.PositiveSmallIntegerField()),
                        ('match_insights', models.JSONField(default=list)),
                        ('programs', models.JSONField(default=list, help_text='Compact matching programs, best first (capped).')),
                        ('program_count', models.PositiveIntegerField(default=0, help_text='Programs of the lender that matched.')),
                        ('lender', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='lenders.lender')),
                        ('search', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='matches', to='deals.lendersearch')),
                    ],
                    options={
                        'verbose_name_plural': 'lender matches',
                        'db_table': 'lenders_lendermatch',
                        'ordering': ['search', 'rank'],
                        'constraints': [models.UniqueConstraint(fields=('search', 'rank'), name='uniq_match_rank'),
                                        models.UniqueConstraint(fields=('search', 'lender'), name='uniq_match_lender')],
                    },
                ),
                migrations.AlterField(
                    model_name='placement',
                    name='source_search',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                            related_name='+', to='deals.lendersearch'),
                ),
            ],
            database_operations=[],
        ),
        move_content_types("lenders", "deals", "lendersearch", "lendermatch"),
    ]
