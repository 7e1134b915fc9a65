"""Two uploads to one deal at once take turns on the deal's row lock (PostgreSQL): two first rent rolls make
one document with versions 1 and 2, never two documents or two versions numbered alike."""

from __future__ import annotations

import pytest
from django.db import transaction

from deals.documents import services
from deals.models import Deal, Document
from tests.deals.documents.helpers import CSV_BYTES, upload
from tests.factories import DealFactory
from tests.lev.concurrency import Worker, postgres_only, wait_for_lock_waiters


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_two_first_rent_rolls_at_once_make_one_document_with_two_versions(account, documents_dir):
    deal = DealFactory(account=account)
    stale = Deal.objects.get(pk=deal.pk)  # what the second request's view holds
    with transaction.atomic():
        first = services.document_add(deal=Deal.objects.get(pk=deal.pk), upload=upload("a.csv", CSV_BYTES),
                                      kind="rent_roll")
        second = Worker(lambda: services.document_add(deal=stale, upload=upload("b.csv", CSV_BYTES + b"1\n"),
                                                      kind="rent_roll"))
        second.start()
        wait_for_lock_waiters(1)  # the second is queued behind the first's lock, uncommitted
    later = second.outcome()
    document = Document.objects.get(deal=deal)
    assert (first.number, later.number, later.document_id, document.versions_count) == (1, 2, document.pk, 2)
    assert document.current_id == later.pk
