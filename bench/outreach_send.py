"""Benchmark: one deal sent to 50 lenders (issue 41) — queued in under 1 s, delivered to a local SMTP
server in under 30 s.

    .venv/bin/python bench/outreach_send.py                 # SQLite file under bench/results/
    DATABASE_URL=postgres://... .venv/bin/python bench/outreach_send.py   # PostgreSQL (a fresh database!)

A fresh SQLite file (or the DATABASE_URL database, migrated here) holds one account, one deal with its
figures, 50 lenders each with the account's contact, 50 draft placements and a shared document. A real
SMTP server (aiosmtpd) listens on a free port of 127.0.0.1 and keeps what it receives. Timed: the send
queued (`outreach_send`: the outbox rows, package links, placements moved to sent; its transaction's
commit included, delivery not) and the delivery (`deliver_due`: every email over one SMTP connection,
each outcome recorded). The run fails (exit 1) past either bound, or if the server did not get exactly 50
messages.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for `python bench/<this>.py`
from bench._django import RESULTS, setup

LENDERS = 50
QUEUE_BOUND_S, DELIVERY_BOUND_S = 1.0, 30.0
DB_FILE = "outreach_send.sqlite3"


def main() -> int:
    if not os.environ.get("DATABASE_URL"):
        (RESULTS / DB_FILE).unlink(missing_ok=True)
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "false"  # the delivery is timed on its own, below
    setup(sqlite_file=DB_FILE)
    from aiosmtpd.controller import Controller
    from django.conf import settings
    from django.core.management import call_command
    from django.db import transaction

    from deals.companies.models import Contact
    from deals.outreach import mail, services
    from deals.outreach.models import OutboundEmail
    from deals.placements.services import placements_create
    from tests.deals.outreach.smtp import Handler, free_port
    from tests.factories import (
        AccountFactory,
        DealFactory,
        DealFinancialsFactory,
        DealPropertyFactory,
        LenderFactory,
        MembershipFactory,
        UserFactory,
    )

    call_command("migrate", verbosity=0)
    account = AccountFactory(name="Bench Capital", slug=f"bench-{int(time.time())}")
    user = MembershipFactory(account=account, user=UserFactory()).user
    deal = DealFactory(account=account, title="Harbor Point Apartments", loan_amount=12_500_000)
    DealPropertyFactory(deal=deal, city="Austin", state="TX", asset_type="multifamily", units=180)
    DealFinancialsFactory(deal=deal, estimated_value=20_000_000, in_place_noi=1_150_000)
    lenders = [LenderFactory(name=f"Bench Lender {n:02d}") for n in range(LENDERS)]
    contacts = Contact.objects.bulk_create(
        Contact(account=account, lender=lender, name=f"Pat {n}", email=f"pat{n}@lender{n}.example.com")
        for n, lender in enumerate(lenders))
    placements = placements_create(deal=deal, lender_ids=[x.pk for x in lenders],
                                   contact_ids=[c.pk for c in contacts]).created

    handler = Handler()
    port = free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 10
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    try:
        started = time.perf_counter()
        with transaction.atomic():
            result = services.outreach_send(deal=deal, placements=placements, user=user)
        queued_s = time.perf_counter() - started
        started = time.perf_counter()
        mail.deliver_due(send_id=result.send.pk)
        delivered_s = time.perf_counter() - started
    finally:
        controller.stop()
    sent = OutboundEmail.objects.filter(send=result.send, status="sent").count()
    print(f"{settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}: {LENDERS} lenders queued in "
          f"{queued_s * 1000:.0f} ms (bound {QUEUE_BOUND_S * 1000:.0f} ms), delivered to aiosmtpd in "
          f"{delivered_s:.2f} s (bound {DELIVERY_BOUND_S:.0f} s): {sent} sent, {len(handler.messages)} received")
    ok = (queued_s < QUEUE_BOUND_S and delivered_s < DELIVERY_BOUND_S and sent == LENDERS
          and len(handler.messages) == LENDERS and len(result.queued) == LENDERS)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
