"""Every deal has a stage now (0011): the column becomes required."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("deals", "0011_pipeline_defaults")]
    operations = [
        migrations.AlterField(
            model_name="deal", name="stage",
            field=models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name="deals",
                                    to="deals.stage"),
        ),
    ]
