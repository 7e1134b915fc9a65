"""Operations for migrations that move a model from one app to another without touching its table
(SeparateDatabaseAndState): the table keeps its name, and its content type follows the model, so the
permissions granted on it and the admin's history of its rows stay attached."""

from __future__ import annotations

from django.db import migrations


def move_content_types(old_label: str, new_label: str, *models: str) -> migrations.RunPython:
    """Relabel the content types of `models` (lower-case model names) from `old_label` to `new_label`
    (and back on reverse). A fresh database has none yet (post_migrate makes them): nothing to do."""

    def relabel(source: str, target: str):
        def run(apps, schema_editor) -> None:
            content_types = apps.get_model("contenttypes", "ContentType").objects.using(schema_editor.connection.alias)
            for model in models:
                if content_types.filter(app_label=source, model=model).exists():
                    # A type made under the new label in between holds nothing the old one does not.
                    content_types.filter(app_label=target, model=model).delete()
                    content_types.filter(app_label=source, model=model).update(app_label=target)
        return run

    return migrations.RunPython(relabel(old_label, new_label), relabel(new_label, old_label), elidable=False)
