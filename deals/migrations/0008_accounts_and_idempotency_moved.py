"""Accounts (now `accounts`, its 0001) and idempotency records (now `idempotency`, its 0001) left this app's
state there: later migrations of this app come after both."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('deals', '0007_searches_and_accounts_state'),
        ('idempotency', '0001_initial'),
    ]

    operations = []
