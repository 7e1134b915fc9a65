"""Accounts, memberships and API keys move here from `deals`: state only, the tables keep their names
(deals_account, deals_membership, deals_apikey); every relation to them follows, their content types too."""
from django.db import migrations

from lev.migration_ops import move_models


class Migration(migrations.Migration):
    initial = True
    dependencies = [("deals", "0006_list_keyset_indexes"), ("lenders", "0006_ranking_top_n"),
                    ("oauth", "0002_authorization_code_checksum"), ("contenttypes", "0002_remove_content_type_name")]
    operations = move_models("deals", "accounts", "Account", "Membership", "ApiKey")
