from django.db import migrations

# Stable slugs (see lev.enums.ASSET_TYPES); names are for people.
ASSET_TYPES = [
    ("multifamily", "Multifamily"), ("office", "Office"), ("retail", "Retail"),
    ("industrial", "Industrial"), ("hospitality", "Hospitality"), ("self_storage", "Self Storage"),
    ("mixed_use", "Mixed Use"), ("senior_housing", "Senior Housing"),
    ("student_housing", "Student Housing"), ("manufactured_housing", "Manufactured Housing"),
    ("healthcare", "Healthcare"), ("land", "Land"),
]


def create(apps, schema_editor):
    AssetType = apps.get_model("lenders", "AssetType")
    for slug, name in ASSET_TYPES:
        AssetType.objects.update_or_create(slug=slug, defaults={"name": name})


class Migration(migrations.Migration):
    dependencies = [("lenders", "0001_initial")]
    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
