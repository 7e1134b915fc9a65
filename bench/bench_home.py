"""Benchmark: the admin's home page (deals/workspace) against the number of deals.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<scratch db> .venv/bin/python bench/bench_home.py
    .venv/bin/python bench/bench_home.py            # its own SQLite file under bench/results/

Seeds two accounts in the database it is given (migrated here; use a scratch database): one with 100
deals and one with 10,000 (bulk inserts; every fifth deal placed with a lender that has not answered
for ten days, every tenth with a quote received yesterday that expires next week, every hundredth
with a search running), each with a member who owns its deals. Then reads `/admin/` as each member,
interleaved call by call, through the whole middleware stack in-process: the median of --calls calls
in ms, the SQL queries of one page, and the large account over the small one ("x")."""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import setup

setup(sqlite_file="home.sqlite3")


from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from deals.models import Deal, Placement, Stage, TermSheet  # noqa: E402
from deals.searches.models import LenderSearch  # noqa: E402
from lenders.models import Lender  # noqa: E402
from lev.accounts.models import Account, Membership  # noqa: E402
from lev.accounts.services import account_create  # noqa: E402

SIZES = (100, 10_000)


def seed(size: int):
    slug = f"home-bench-{size}"
    User = get_user_model()
    person, _ = User.objects.get_or_create(username=f"bench{size}", defaults={"is_staff": True})
    account = Account.objects.filter(slug=slug).first()
    if account is not None and Deal.objects.filter(account=account).count() == size:
        return person
    if account is not None:
        account.delete()
    account = account_create(name=f"Home bench {size}")
    Account.objects.filter(pk=account.pk).update(slug=slug)
    Membership.objects.get_or_create(account=account, user=person, defaults={"role": "member"})
    stages = list(Stage.objects.filter(account=account).order_by("position"))
    now, today = timezone.now(), timezone.localdate()
    Deal.objects.bulk_create([
        Deal(account=account, title=f"Bench deal {i:05d}", loan_amount=Decimal(1_000_000 + i * 1000),
             stage=stages[i % len(stages)], owner=person, created_by=person) for i in range(size)], batch_size=2000)
    deals = list(Deal.objects.filter(account=account).order_by("pk"))
    lenders = list(Lender.objects.order_by("pk")[:2]) or [Lender.objects.create(name="Bench lender A"),
                                                          Lender.objects.create(name="Bench lender B")]
    waiting = [Placement(deal=d, lender=lenders[0], status="sent", sent_at=now - dt.timedelta(days=10))
               for d in deals[::5]]
    quoted = [Placement(deal=d, lender=lenders[1], status="quoted", sent_at=now - dt.timedelta(days=9),
                        first_response_at=now - dt.timedelta(days=2)) for d in deals[::10]]
    Placement.objects.bulk_create(waiting + quoted, batch_size=2000)
    TermSheet.objects.bulk_create([
        TermSheet(placement=p, deal=p.deal, loan_amount=Decimal("1000000"), rate_type="fixed",
                  fixed_rate=Decimal("6.5"), received_at=now - dt.timedelta(days=1),
                  expires_on=today + dt.timedelta(days=7)) for p in quoted], batch_size=2000)
    LenderSearch.objects.bulk_create([
        LenderSearch(account=account, deal=d, deal_version=1, status="running", progress=50, started_at=now)
        for d in deals[::100]])
    return person


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    people = {size: seed(size) for size in SIZES}
    clients = {}
    for size, person in people.items():
        clients[size] = Client()
        clients[size].force_login(person)
        assert clients[size].get("/admin/").status_code == 200  # warm
    times: dict[int, list[float]] = {size: [] for size in SIZES}
    for _ in range(args.calls):
        for size in SIZES:
            start = time.perf_counter()
            clients[size].get("/admin/")
            times[size].append((time.perf_counter() - start) * 1000)
    queries = {}
    for size in SIZES:
        with CaptureQueriesContext(connection) as captured:
            clients[size].get("/admin/")
        queries[size] = len(captured)
    small, large = (statistics.median(times[size]) for size in SIZES)
    print(f"home page ({connection.vendor}), median of {args.calls} calls:")
    for size in SIZES:
        print(f"  {size:>6,} deals: {statistics.median(times[size]):7.1f} ms, {queries[size]} queries")
    print(f"  x {large / small:.2f}")


if __name__ == "__main__":
    main()
