"""`make run`'s demo API key is the same on every run on this machine (issue #11): a client set up
yesterday still connects. It is kept in a local file (LEV_DEMO_KEY_FILE), never in the repository."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from deals.demo.key import read_key_file
from lev.accounts.models import Account, ApiKey
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def key_file(settings, tmp_path) -> Path:
    settings.LEV_DEMO_KEY_FILE = str(tmp_path / "keys" / "demo-api-key")
    return Path(settings.LEV_DEMO_KEY_FILE)


def seed_and_print(*extra: str) -> tuple[str, str]:
    """(the printed API key, the whole output) of `seed_demo --print-credentials`."""
    out = StringIO()
    call_command("seed_demo", "--lenders", "5", "--print-credentials", *extra, stdout=out)
    text = out.getvalue()
    return text.split("API key:")[1].split()[0], text


def authenticates(key: str) -> bool:
    status = client_with_key(key).get("/api/v1/deals/").status_code
    assert status in (200, 401), status
    return status == 200


def test_the_demo_key_is_the_same_on_every_run_and_the_first_still_authenticates(key_file):
    first, _ = seed_and_print()
    second, text = seed_and_print()
    assert second == first and authenticates(first)
    assert read_key_file(key_file) == first
    assert ApiKey.objects.filter(name="demo", revoked_at=None).count() == 1
    assert f"(the same as before: kept in {key_file}; dana's key)" in text


def test_the_key_file_is_private_to_its_owner(key_file):
    seed_and_print()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_a_new_database_gets_the_kept_key_registered(key_file):
    first, _ = seed_and_print()
    ApiKey.objects.all().delete()  # as a new SQLite file (or another DATABASE_URL) would be
    assert not authenticates(first)
    again, _ = seed_and_print()
    assert again == first and authenticates(first)


def test_a_key_revoked_in_the_admin_is_replaced_not_brought_back(key_file):
    first, _ = seed_and_print()
    ApiKey.objects.filter(name="demo").update(revoked_at=timezone.now())
    second, text = seed_and_print()
    assert second != first and authenticates(second) and not authenticates(first)
    assert read_key_file(key_file) == second and f"(new: kept in {key_file}, so every next run" in text


def test_a_file_that_holds_no_key_gets_a_new_one(key_file):
    key_file.parent.mkdir(parents=True)
    key_file.write_text("not a key\n")
    key, _ = seed_and_print()
    assert key.startswith("lev_sk_") and read_key_file(key_file) == key and authenticates(key)


def test_earlier_demo_keys_are_revoked_so_one_is_live(key_file):
    call_command("seed_demo", "--lenders", "0", stdout=StringIO())
    admin = get_user_model().objects.get(username="admin")
    _old, old_raw = api_key_create(user=admin, account=Account.objects.get(slug="demo-capital"),
                                            name="demo")  # as the earlier `make run` issued one per run
    assert authenticates(old_raw)
    key, _ = seed_and_print()
    assert authenticates(key) and not authenticates(old_raw)


def test_printed_commands_carry_the_real_key_and_the_address(key_file):
    key, text = seed_and_print("--base-url", "http://127.0.0.1:8123/")
    auth = f'--header "Authorization: Bearer {key}"'
    assert f"claude mcp add --transport http lev http://127.0.0.1:8123/mcp {auth}" in text
    assert (f"npx @modelcontextprotocol/inspector --cli http://127.0.0.1:8123/mcp --transport http {auth} "
            "--method tools/list") in text
    assert f'curl -H "Authorization: Bearer {key}" http://127.0.0.1:8123/api/v1/deals/' in text
    assert "lev_sk_…" not in text and "<API key>" not in text


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="runs in the embedded (SQLite) run")
def test_two_runs_of_the_real_commands_on_one_sqlite_file_keep_the_key(tmp_path):
    """As `make run` twice: separate processes, one SQLite file, one key file."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
           "LEV_DEMO_KEY_FILE": str(tmp_path / ".demo-api-key")}
    env.pop("REDIS_URL", None)
    env.pop("CELERY_BROKER_URL", None)

    def manage(*args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    manage("migrate", "--noinput")
    first = manage("seed_demo", "--lenders", "5", "--print-credentials").split("API key:")[1].split()[0]
    second = manage("seed_demo", "--lenders", "5", "--print-credentials").split("API key:")[1].split()[0]
    assert second == first
    status = manage("shell", "-c", (
        "from rest_framework.test import APIClient; c = APIClient(); "
        f"c.credentials(HTTP_AUTHORIZATION='Bearer {first}'); print(c.get('/api/v1/deals/').status_code)"))
    assert status.split()[-1] == "200"


def test_the_demo_key_and_the_seeded_work_are_the_deal_teams(key_file):
    # Issue 39: the demo key was the superuser's, so an agent's actions were credited to "admin" and a deal it
    # created never showed in the deal team's "Your deals"; the seeded notes, moves and search were admin's too.
    from deals.models import Deal, Placement
    from deals.notes.models import Note
    from deals.pipeline.models import StageChange
    from deals.searches.models import LenderSearch

    key, text = seed_and_print("--lenders", "120")
    owner = ApiKey.objects.get(name="demo", revoked_at=None).user
    assert owner.username == "dana" and "log in as 'dana'" in text and "; dana's key)" in text
    client = client_with_key(key)
    made = client.post("/api/v1/deals/", {"title": "Agent-made deal"}, format="json")
    assert made.status_code == 201, made.json()
    deal = Deal.objects.get(pk=made.json()["id"])
    assert deal.created_by == owner and deal.owner == owner  # in dana's "Your deals"
    demo = Deal.objects.filter(account__slug="demo-capital", archived=False).exclude(pk=deal.pk)
    assert set(demo.values_list("created_by__username", "owner__username")) == {("dana", "dana")}
    assert set(Note.objects.filter(deal__in=demo).values_list("author__username", flat=True)) == {"dana"}
    assert set(StageChange.objects.filter(deal__in=demo).values_list("by__username", flat=True)) <= {"dana", None}
    assert set(LenderSearch.objects.filter(deal__in=demo).values_list("created_by__username", flat=True)) == {"dana"}
    assert set(Placement.objects.filter(deal__in=demo).values_list("created_by__username", flat=True)) == {"dana"}


def test_the_readmes_first_screen_is_what_make_run_prints(key_file):
    """Issue 39: the README's copy of `make run`'s output says what the code prints, line for line, with the
    secrets and the checkout's path written as the README writes them."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    block = readme.split("`make run` prints something like")[1].split("```")[1].strip("\n").splitlines()
    seed_and_print()  # the first run issues the key; the README shows a later run's line
    _key, text = seed_and_print()
    printed = text[text.index("Admin login:"):].strip("\n").splitlines()

    def same_words(line: str) -> str:
        line = re.sub(r"password '[^']*'", "password '…'", line)
        line = re.sub(r"lev_sk_[A-Za-z0-9_-]+", "lev_sk_…", line)
        line = re.sub(r"kept in \S+?(;|\))", r"kept in /path/to/checkout/.demo-api-key\1", line)
        return re.sub(r"(REST API|docs|health) http://127\.0\.0\.1:8000", r"\1 …", line)

    assert [same_words(line) for line in printed] == block
