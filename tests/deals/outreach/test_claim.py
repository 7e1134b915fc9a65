"""Two deliveries at once never send one email twice: on PostgreSQL an email another worker holds (its row
locked, as a worker in the middle of claiming holds it) is skipped (SKIP LOCKED), and sent by whoever holds
it. A real second connection holds the lock from another thread."""

from __future__ import annotations

import logging
import threading

import pytest
from django.db import connection, connections, transaction

from deals.outreach import mail, services
from deals.outreach.models import OutboundEmail
from tests.deals.outreach.helpers import outreach_deal, placed

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_email_locked_by_another_worker_is_skipped_not_sent_twice(account, user, smtp):
    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL")
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    deal = outreach_deal(account)
    placements = placed(deal)
    smtp.stop()  # queue without delivering: the send's task finds the server down and leaves them retrying
    with transaction.atomic():
        result = services.outreach_send(deal=deal, placements=placements, user=user)
    OutboundEmail.objects.filter(send=result.send).update(status="queued", attempts=0, next_attempt_at=None)
    smtp.start()
    held = OutboundEmail.objects.filter(send=result.send).order_by("id").first()
    locked, release = threading.Event(), threading.Event()

    def other_worker() -> None:
        try:
            with transaction.atomic():
                OutboundEmail.objects.select_for_update().get(pk=held.pk)
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_worker)
    thread.start()
    assert locked.wait(10)
    try:
        assert mail.deliver_due(send_id=result.send.pk) == 2  # the two not held
    finally:
        release.set()
        thread.join(10)
    assert OutboundEmail.objects.get(pk=held.pk).status == "queued"
    assert mail.deliver_due(send_id=result.send.pk) == 1  # released: now it goes, once
    assert sorted(m.rcpt_tos[0] for m in smtp.messages) == ["granite@example.com", "harbor@example.com",
                                                            "summit@example.com"]
