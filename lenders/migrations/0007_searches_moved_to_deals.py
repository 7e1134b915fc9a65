"""Lender searches left this app in deals 0007 (which changes this app's state): later migrations of
this app come after it."""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("lenders", "0006_ranking_top_n"), ("deals", "0007_searches_and_accounts_state")]
    operations = []
