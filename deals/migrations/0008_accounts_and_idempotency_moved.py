"""Accounts and idempotency records left this app's state in accounts 0001 and idempotency 0001: later
migrations of this app come after both."""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("deals", "0007_searches_and_accounts_state"), ("idempotency", "0001_initial")]
    operations = []
