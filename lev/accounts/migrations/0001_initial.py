"""Accounts, memberships and API keys move here from `deals`: state only, the tables keep their names
(deals_account, deals_membership, deals_apikey); every relation to them follows, their content types too."""
from django.db import migrations

from lev.migration_ops import MoveModelState, move_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('deals', '0006_list_keyset_indexes'),
        ('lenders', '0006_ranking_top_n'),
        ('oauth', '0002_authorization_code_checksum'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                MoveModelState("Account", "deals", "accounts"),
                MoveModelState("Membership", "deals", "accounts"),
                MoveModelState("ApiKey", "deals", "accounts"),
            ],
            database_operations=[],  # the tables stay, under their names
        ),
        move_content_types("deals", "accounts", "account", "membership", "apikey"),
    ]
