"""Operations for migrations that move a model from one app to another without touching its table:
`SeparateDatabaseAndState(state_operations=[MoveModelState(...)])` moves the model's state (the table
keeps its name, no SQL runs), and `move_content_types` makes its content type follow, so the
permissions granted on it and the admin's history of its rows stay attached."""

from __future__ import annotations

from django.db import migrations
from django.db.migrations.operations.base import Operation


def _label(model) -> str:
    return model.lower() if isinstance(model, str) else model._meta.label_lower


class MoveModelState(Operation):
    """The state of `from_app.name` becomes `to_app.name`, with the same fields and options and its old
    table name; every relation that pointed at it points at the new label. Built from the state as it
    stands, so the migration does not restate the model's fields (Django's own CreateModel, AlterField
    and DeleteModel do the state changes). No SQL either way: wrap it in SeparateDatabaseAndState."""

    reversible = True
    reduces_to_sql = False

    def __init__(self, name: str, from_app: str, to_app: str) -> None:
        self.name, self.from_app, self.to_app = name, from_app, to_app

    def deconstruct(self):
        return self.__class__.__qualname__, [self.name, self.from_app, self.to_app], {}

    def describe(self) -> str:
        return f"Move the state of {self.from_app}.{self.name} to {self.to_app} (the table stays)"

    @property
    def migration_name_fragment(self) -> str:
        return f"move_{self.name.lower()}_to_{self.to_app}"

    def state_forwards(self, app_label, state) -> None:
        model = self.name.lower()
        old = state.models[self.from_app, model]
        options = {**old.options, "db_table": old.options.get("db_table") or f"{self.from_app}_{model}"}
        migrations.CreateModel(
            old.name, fields=[(name, field.clone()) for name, field in old.fields.items()], options=options,
            bases=old.bases, managers=old.managers,
        ).state_forwards(self.to_app, state)
        old_label, new_label = f"{self.from_app}.{model}", f"{self.to_app}.{model}"
        for (app, other), other_state in list(state.models.items()):
            for name, field in list(other_state.fields.items()):
                remote = getattr(field, "remote_field", None)
                if remote is not None and _label(remote.model) == old_label:
                    _name, _path, args, kwargs = field.deconstruct()
                    retargeted = field.__class__(*args, **{**kwargs, "to": new_label})
                    migrations.AlterField(other, name, retargeted).state_forwards(app, state)
        migrations.DeleteModel(old.name).state_forwards(self.from_app, state)

    def database_forwards(self, app_label, schema_editor, from_state, to_state) -> None:
        pass  # the table stays where it is

    def database_backwards(self, app_label, schema_editor, from_state, to_state) -> None:
        pass


def move_models(from_app: str, to_app: str, *names: str) -> list[Operation]:
    """A migration's operations for moving `names` from `from_app` to `to_app`: their state (no SQL),
    then their content types."""
    return [
        migrations.SeparateDatabaseAndState(
            state_operations=[MoveModelState(name, from_app, to_app) for name in names],
            database_operations=[],  # the tables stay, under their names
        ),
        move_content_types(from_app, to_app, *(name.lower() for name in names)),
    ]


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
