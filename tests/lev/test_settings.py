"""The production profile refuses unsafe settings and passes Django's deployment checks."""

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
