"""Lender searches and their matches move here from `lenders`: state only, the tables keep their names
(lenders_lendersearch, lenders_lendermatch); placements' source_search follows, their content types too."""
from django.db import migrations

from lev.migration_ops import MoveModelState, move_content_types


class Migration(migrations.Migration):

    dependencies = [
        ('deals', '0006_list_keyset_indexes'),
        ('lenders', '0006_ranking_top_n'),
        ('accounts', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                MoveModelState("LenderSearch", "lenders", "deals"),
                MoveModelState("LenderMatch", "lenders", "deals"),
            ],
            database_operations=[],  # the tables stay, under their names
        ),
        move_content_types("lenders", "deals", "lendersearch", "lendermatch"),
    ]
