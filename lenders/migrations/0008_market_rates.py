# Market rates with a dated history (lenders.rates): replaces deals.BaseRate (deals 0015 copies its rows).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('lenders', '0007_searches_moved_to_deals'),
    ]

    operations = [
        migrations.CreateModel(
            name='MarketRate',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('index', models.CharField(choices=[('sofr', 'SOFR'), ('term_sofr_1m', '1-month Term SOFR'), ('term_sofr_3m', '3-month Term SOFR'), ('treasury_5y', '5-year Treasury'), ('treasury_7y', '7-year Treasury'), ('treasury_10y', '10-year Treasury'), ('prime', 'Prime')], max_length=16)),
                ('on', models.DateField(help_text='The date the rate is of.')),
                ('rate', models.DecimalField(decimal_places=3, help_text='Percent per year.', max_digits=6)),
                ('source', models.CharField(blank=True, default='admin', help_text='Where it came from: "admin", "csv <file name>", "demo".', max_length=100)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'ordering': ['index', '-on'],
                'indexes': [models.Index(fields=['index', '-on'], name='market_rate_latest')],
                'constraints': [models.UniqueConstraint(fields=('index', 'on'), name='market_rate_index_on')],
            },
        ),
    ]
