"""The demo is one app on top of the product (deals/demo/, issue 40): no product module imports it, and
only development, tests and a trial stack that asks for it (LEV_DEMO=true) install it — production's
`manage.py` has no `seed_demo`.

The imports are read from the source, as tests/architecture/test_layers.py reads them (in functions too)."""

from __future__ import annotations

import os
import subprocess
import sys

from django.apps import apps

from tests.architecture.test_layers import GRAPH, MODULES, ROOT

DEMO = "deals.demo"


def _in_demo(module: str) -> bool:
    return module == DEMO or module.startswith(DEMO + ".")


def test_the_reader_sees_the_demo_and_its_own_imports():
    # The graph must hold the demo's modules and their imports of one another for the check below to mean
    # anything: seed_demo imports the directory, the history and the key.
    assert {"deals.demo.directory", "deals.demo.history", "deals.demo.key"} <= set(MODULES)
    seed = {target for target, _ in GRAPH["deals.demo.management.commands.seed_demo"]}
    assert {"deals.demo.directory", "deals.demo.history", "deals.demo.key"} <= seed


def test_no_product_module_imports_the_demo():
    reaching = [f"{module} (line {line}) imports {target}" for module, targets in GRAPH.items()
                if not _in_demo(module) for target, line in targets if _in_demo(target)]
    assert reaching == []


def test_the_seeders_live_in_the_demo_app_alone():
    """No demo seeder left in a product room (lenders/demo.py, deals/notes/demo.py, …)."""
    strays = [name for name in MODULES if not _in_demo(name) and "demo" in name.split(".")[-1]]
    assert strays == []


def test_tests_and_make_run_have_the_demo_installed():
    assert apps.is_installed(DEMO)


def _installed_in(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "LEV_ENV", "LEV_DEMO")}
    code = ("import django; django.setup(); from django.apps import apps; "
            "from django.core.management import get_commands; "
            f"print(apps.is_installed({DEMO!r}), 'seed_demo' in get_commands())")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**clean, "DJANGO_SETTINGS_MODULE": "lev.settings", **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_production_installs_the_demo_only_when_a_trial_stack_asks():
    production = {"LEV_ENV": "production", "SECRET_KEY": "k" * 60, "ALLOWED_HOSTS": "lev.example.com"}
    assert _installed_in(**production) == "False False"
    assert _installed_in(**production, LEV_DEMO="true") == "True True"
