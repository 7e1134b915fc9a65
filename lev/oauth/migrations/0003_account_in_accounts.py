"""Accounts now live in `accounts`; its 0001 points the grant's account there (state only). Later
migrations of this app come after it."""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("oauth", "0002_authorization_code_checksum"), ("accounts", "0001_initial")]
    operations = []
