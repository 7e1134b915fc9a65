# BaseRate (one current rate per index) is replaced by lenders.MarketRate (dated rates): each BaseRate
# row is copied as that index's rate on its as_of date, source "admin", then the model is deleted.
# Going back makes BaseRate again from each index's latest market rate.

from django.db import migrations

from lev.enums import RATE_INDEXES


def copy_base_rates(apps, schema_editor):
    BaseRate = apps.get_model("deals", "BaseRate")
    MarketRate = apps.get_model("lenders", "MarketRate")
    for base in BaseRate.objects.all():
        MarketRate.objects.update_or_create(index=base.index, on=base.as_of,
                                            defaults={"rate": base.rate, "source": "admin"})


def latest_market_rates(apps, schema_editor):
    BaseRate = apps.get_model("deals", "BaseRate")
    MarketRate = apps.get_model("lenders", "MarketRate")
    for index in RATE_INDEXES:
        latest = MarketRate.objects.filter(index=index).order_by("-on").first()
        if latest is not None:
            BaseRate.objects.update_or_create(index=index, defaults={"rate": latest.rate, "as_of": latest.on})


class Migration(migrations.Migration):

    dependencies = [
        ("deals", "0014_notes"),
        ("lenders", "0008_market_rates"),
    ]

    operations = [
        migrations.RunPython(copy_base_rates, latest_market_rates),
        migrations.DeleteModel(name="BaseRate"),
    ]
