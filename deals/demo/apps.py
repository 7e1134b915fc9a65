from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo's seeders and its `seed_demo` command (deals/demo/__init__.py). No models: installing
    it or not changes no table, only whether the demo's commands exist."""

    name = "deals.demo"
    label = "demo"
    verbose_name = "Demo data"
