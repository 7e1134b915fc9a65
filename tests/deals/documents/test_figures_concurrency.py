"""Applying figures takes the deal's row lock like every deal write (PostgreSQL, two real connections): an
apply waiting on another writer keeps its version bump, and the source recorded is the value written, so
two applies of different T-12s at once leave the financials and their source in step."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import transaction

from deals import services as deal_services
from deals.documents.figures import services
from deals.documents.models import DocumentVersion
from deals.models import Deal, DealFinancials, FigureSource
from tests.deals.documents import figures_files as files
from tests.deals.documents.figures_files import stored
from tests.deals.searches.factories import make_deal
from tests.lev.concurrency import Worker, postgres_only, wait_for_lock_waiters

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _remove_files():
    yield
    for version in DocumentVersion.objects.all():
        version.file.delete(save=False)


def test_an_apply_waiting_on_another_write_keeps_its_bump_and_its_source(account, user):
    deal = make_deal(account)
    first = stored(deal, files.yardi_t12()[0], "t12 a.xlsx", kind="t12")
    second = stored(deal, files.hand_made_t12()[0], "t12 b.csv", document=first.document)
    for version in (first, second):
        services.figures_read(version=version)
    start = Deal.objects.get(pk=deal.pk).version
    stale = Deal.objects.get(pk=deal.pk)

    # A applies the first T-12 and holds the deal's row lock, uncommitted, while B applies the second.
    with transaction.atomic():
        services.figures_apply(deal=Deal.objects.get(pk=deal.pk), version=first, fields=["in_place_noi"], user=user)
        b = Worker(lambda: services.figures_apply(deal=stale, version=DocumentVersion.objects.get(pk=second.pk),
                                                  fields=["in_place_noi"], user=user))
        b.start()
        wait_for_lock_waiters(1)  # B is queued behind A's lock
    b.outcome()

    assert Deal.objects.get(pk=deal.pk).version == start + 2
    source = FigureSource.objects.get(deal=deal, field="in_place_noi")
    assert source.document_version_id == second.pk
    assert DealFinancials.objects.get(deal=deal).in_place_noi == source.value == Decimal("93820")


def test_an_apply_waiting_on_the_archive_changes_nothing(account, user):
    deal = make_deal(account)
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    services.figures_read(version=version)
    stale = Deal.objects.get(pk=deal.pk)
    with transaction.atomic():
        deal_services.deal_archive(deal=Deal.objects.get(pk=deal.pk))
        b = Worker(lambda: services.figures_apply(deal=stale, version=version, fields=None, user=user))
        b.start()
        wait_for_lock_waiters(1)
    with pytest.raises(Exception) as refused:
        b.outcome()
    assert "archived" in str(refused.value).lower()
    assert not FigureSource.objects.filter(deal=deal).exists()
    assert not DealFinancials.objects.filter(deal=deal, in_place_noi__isnull=False).exists()
