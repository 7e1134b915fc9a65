"""The production profile refuses unsafe settings and passes Django's deployment checks."""

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k" * 20 + "-production-test-key-" + "z" * 30


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "LEV_ENV")}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env},
                          capture_output=True, text=True, timeout=120)


def test_production_refuses_missing_secret_debug_and_hosts():
    result = run_manage("check", LEV_ENV="production", DEBUG="true")
    assert result.returncode != 0
    for problem in ("SECRET_KEY must be set", "DEBUG must be off", "ALLOWED_HOSTS must list"):
        assert problem in result.stderr


def test_production_profile_passes_check_deploy():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", LEV_ENV="production",
                        SECRET_KEY=STRONG_KEY, ALLOWED_HOSTS="lev.example.com")
    assert result.returncode == 0, result.stdout + result.stderr


def _environment_reads(path: Path) -> list[str]:
    """Lines of `path` that read the process environment: os.environ / os.getenv / `from os import
    environ, getenv`. Pointing Django at its settings module (os.environ.setdefault of
    DJANGO_SETTINGS_MODULE, what wsgi.py, asgi.py and celery_app.py do) is not a read."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pointing = {id(node.func.value) for node in ast.walk(tree)
                if isinstance(node, ast.Call) and ast.unparse(node.func) == "os.environ.setdefault"
                and [ast.unparse(arg) for arg in node.args[:1]] == ["'DJANGO_SETTINGS_MODULE'"]}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and ast.unparse(node) in ("os.environ", "os.getenv", "os.environb") \
                and id(node) not in pointing:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        if isinstance(node, ast.ImportFrom) and node.module == "os" \
                and {alias.name for alias in node.names} & {"environ", "getenv", "environb"}:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_environment_is_read_in_lev_settings_only():
    """Every environment variable is read once, in lev/settings.py, through its env_* helpers; the
    rest of the code reads django.conf.settings (so override_settings reaches it too)."""
    reads = [line for package in ("lev", "deals", "lenders", "mcp_tools")
             for path in sorted((ROOT / package).rglob("*.py")) if path != ROOT / "lev" / "settings.py"
             for line in _environment_reads(path)]
    assert reads == []
    assert _environment_reads(ROOT / "lev" / "settings.py")  # the check does see a read
