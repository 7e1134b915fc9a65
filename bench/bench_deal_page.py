"""Benchmark: the admin's deal page against the size of its search and placements.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<scratch db> .venv/bin/python bench/bench_deal_page.py
    .venv/bin/python bench/bench_deal_page.py            # its own SQLite file under bench/results/

Seeds one account in the database it is given (migrated here; use a scratch database) with two deals
(deterministic: the same rows every run): a small one, a completed search of 10 ranked lenders and 3
placements (2 quoted), and a large one, a completed search of 1,000 ranked lenders (LenderMatch rows as
the ranking writes them) and 200 placements of its top 200 (every other one quoted with a term sheet,
fixed and floating alternating; the rest sent, reviewing, declined or lost), written with their history
as the services write it. Then reads `/admin/deals/deal/<id>/change/` of each as the account's member,
interleaved call by call, through the whole middleware stack in-process: the median and p95 of --calls
calls in ms, the response's bytes, the SQL queries of one page, and the large deal over the small one
("x")."""

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

setup(sqlite_file="deal_page.sqlite3")


from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Permission  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402
from django.utils import timezone  # noqa: E402
from simple_history.utils import bulk_create_with_history  # noqa: E402

from deals.models import Deal, Placement, Stage, TermSheet  # noqa: E402
from deals.searches.models import LenderMatch, LenderSearch  # noqa: E402
from lenders.models import Lender  # noqa: E402
from lev.accounts.models import Account, Membership  # noqa: E402
from lev.accounts.services import account_create  # noqa: E402

# (ranked lenders, placements) of the small and the large deal.
SIZES = ((10, 3), (1_000, 200))
SLUG = "deal-page-bench"
# The statuses of the placements that are not quoted, in turn.
UNQUOTED = ("sent", "reviewing", "declined", "lost")


def seed_deal(account: Account, person, stage: Stage, ranked: int, placed: int) -> Deal:
    now, today = timezone.now(), timezone.localdate()
    deal = Deal.objects.create(account=account, title=f"Bench deal of {ranked:,} ranked lenders",
                               loan_amount=Decimal("25000000"), stage=stage, owner=person, created_by=person)
    lenders = Lender.objects.bulk_create(
        Lender(name=f"Bench lender {ranked:05d}-{n:05d}", city="Austin", state="TX") for n in range(ranked))
    search = LenderSearch.objects.create(
        account=account, deal=deal, deal_version=deal.version, status="completed", progress=100,
        total_candidates=ranked * 2, total_matches=ranked, ranked_matches=ranked, created_by=person,
        started_at=now - dt.timedelta(days=12), finished_at=now - dt.timedelta(days=12))
    LenderMatch.objects.bulk_create(
        [LenderMatch(search=search, rank=n + 1, lender=lender, score=max(1, 99 - n // 12),
                     match_insights=[f"Lends in TX ({n + 1})", "Loan size within range", "LTV within 75%"],
                     programs=[{"id": n, "title": f"Program {n + 1}", "loan_types": ["permanent"],
                                "min_loan_amount": 1_000_000, "max_loan_amount": 50_000_000, "max_ltv": 75.0,
                                "min_dscr": 1.25}],
                     program_count=1 + n % 3)
         for n, lender in enumerate(lenders)], batch_size=2000)
    placements = []
    for n, lender in enumerate(lenders[:placed]):
        quoted = n % 2 == 0
        status = "quoted" if quoted else UNQUOTED[(n // 2) % len(UNQUOTED)]
        sent = now - dt.timedelta(days=10, minutes=n)
        placements.append(Placement(
            deal=deal, lender=lender, status=status, source_search=search, source_rank=n + 1,
            contact_name=f"Contact {n + 1}", contact_email=f"contact{n + 1}@lender{n + 1}.example",
            sent_at=sent, first_response_at=None if status == "sent" else sent + dt.timedelta(days=3),
            decided_at=sent + dt.timedelta(days=5) if status in ("declined", "lost") else None,
            created_by=person, created_at=sent))
    bulk_create_with_history(placements, Placement, batch_size=500, default_user=person)
    placements = list(Placement.objects.filter(deal=deal, status="quoted").order_by("source_rank"))
    sheets = []
    for n, placement in enumerate(placements):
        fixed = n % 2 == 0
        sheets.append(TermSheet(
            placement=placement, deal=deal, loan_amount=Decimal(20_000_000 + n * 10_000),
            rate_type="fixed" if fixed else "floating",
            fixed_rate=Decimal("6.25") + Decimal(n % 50) / 100 if fixed else None,
            rate_index="" if fixed else "sofr", spread_bps=None if fixed else 250 + n % 100,
            term_months=120, amortization_months=360, max_ltv=Decimal("70"), min_dscr=Decimal("1.25"),
            recourse="non_recourse", origination_fee_percent=Decimal("1"), prepayment="yield maintenance",
            expires_on=today + dt.timedelta(days=20 + n % 30), notes=f"Quote {n + 1}" if n % 3 == 0 else "",
            received_at=now - dt.timedelta(days=4, minutes=n), created_by=person))
    bulk_create_with_history(sheets, TermSheet, batch_size=500, default_user=person)
    return deal


def seed():
    User = get_user_model()
    person, _ = User.objects.get_or_create(username="dealpagebench", defaults={"is_staff": True})
    # A deal team's member, not a superuser: the permissions of the models the page shows and changes.
    person.user_permissions.set(Permission.objects.filter(content_type__app_label__in=("deals", "lenders")))
    account = Account.objects.filter(slug=SLUG).first()
    expected = [f"Bench deal of {ranked:,} ranked lenders" for ranked, _ in SIZES]
    if account is not None:
        deals = {d.title: d for d in Deal.objects.filter(account=account)}
        if sorted(deals) == sorted(expected):
            return person, [deals[title] for title in expected]
        Lender.objects.filter(name__startswith="Bench lender ").delete()
        account.delete()
    account = account_create(name="Deal page bench")
    Account.objects.filter(pk=account.pk).update(slug=SLUG)
    Membership.objects.get_or_create(account=account, user=person, defaults={"role": "member"})
    stage = Stage.objects.filter(account=account).order_by("position").first()
    return person, [seed_deal(account, person, stage, ranked, placed) for ranked, placed in SIZES]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    person, deals = seed()
    client = Client()
    client.force_login(person)
    urls = [reverse("admin:deals_deal_change", args=[deal.pk]) for deal in deals]
    sizes = {}
    for url in urls:
        response = client.get(url)  # warm
        assert response.status_code == 200, (url, response.status_code)
        sizes[url] = len(response.content)
    times: dict[str, list[float]] = {url: [] for url in urls}
    for _ in range(args.calls):
        for url in urls:
            start = time.perf_counter()
            client.get(url)
            times[url].append((time.perf_counter() - start) * 1000)
    queries = {}
    for url in urls:
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        queries[url] = len(captured)
    print(f"deal page ({connection.vendor}), {args.calls} calls each, interleaved:")
    print(f"  {'ranked':>6} {'placed':>6} {'quotes':>6} {'median ms':>10} {'p95 ms':>8} {'queries':>8} {'bytes':>9}")
    for (ranked, placed), deal, url in zip(SIZES, deals, urls, strict=True):
        quotes = TermSheet.objects.filter(deal=deal).count()
        print(f"  {ranked:>6,} {placed:>6} {quotes:>6} {statistics.median(times[url]):>10.1f} "
              f"{p95(times[url]):>8.1f} {queries[url]:>8} {sizes[url]:>9,}")
    small, large = (statistics.median(times[url]) for url in urls)
    print(f"  x {large / small:.2f} (median), queries {queries[urls[0]]} -> {queries[urls[1]]}")


if __name__ == "__main__":
    main()
