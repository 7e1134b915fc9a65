"""Lender searches and their matches move here from `lenders`: state only, the tables keep their names
(lenders_lendersearch, lenders_lendermatch); placements' source_search follows, their content types too."""
from django.db import migrations

from lev.migration_ops import move_models


class Migration(migrations.Migration):
    dependencies = [("deals", "0006_list_keyset_indexes"), ("lenders", "0006_ranking_top_n"), ("accounts", "0001_initial")]
    operations = move_models("lenders", "deals", "LenderSearch", "LenderMatch")
