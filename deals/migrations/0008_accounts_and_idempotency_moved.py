"""Accounts, memberships, API keys (now `accounts`) and idempotency records (now `idempotency`) leave
this app's state once nothing points at them here any more; their tables stay."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('deals', '0007_searches_and_accounts_state'),
        ('lenders', '0007_searches_moved_to_deals'),
        ('oauth', '0003_account_in_accounts'),
        ('idempotency', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='IdempotencyRecord'),
                migrations.DeleteModel(name='ApiKey'),
                migrations.DeleteModel(name='Membership'),
                migrations.DeleteModel(name='Account'),
            ],
            database_operations=[],
        ),
    ]
