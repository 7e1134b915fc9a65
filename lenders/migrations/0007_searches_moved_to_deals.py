"""Lender searches and their matches now belong to `deals` (deals 0007): they leave this app's state;
their tables stay."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('lenders', '0006_ranking_top_n'),
        ('deals', '0007_searches_and_accounts_state'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='LenderMatch'),
                migrations.DeleteModel(name='LenderSearch'),
            ],
            database_operations=[],
        ),
    ]
