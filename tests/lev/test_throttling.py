"""Per-user rate limits in the API (in the shared cache: Redis when REDIS_URL is set)."""

import pytest

from tests.conftest import DAY
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db


def test_writes_and_reads_are_limited_apart_per_user(api, other_api, account, settings, frozen_window):
    settings.LEV_RATE_LIMIT_WRITES = "2/day"
    settings.LEV_RATE_LIMIT_READS = "3/day"
    deal = DealFactory(account=account)
    for title in ("a", "b"):
        assert api.patch(f"/api/v1/deals/{deal.id}/", {"title": title}, format="json").status_code == 200
    limited = api.patch(f"/api/v1/deals/{deal.id}/", {"title": "c"}, format="json")
    assert limited.status_code == 429
    body = limited.json()
    assert body["code"] == "RATE_LIMITED" and body["message"].startswith("Rate limit exceeded: ")
    assert int(limited["Retry-After"]) == DAY // 2  # the rest of the (frozen) window
    # Reads have their own budget, and other users theirs.
    assert api.get("/api/v1/deals/").status_code == 200
    assert other_api.post("/api/v1/deals/", {"title": "x"}, format="json").status_code == 201
    deal.refresh_from_db()
    assert deal.title == "b"
    for _ in range(2):
        assert api.get("/api/v1/deals/").status_code == 200
    assert api.get("/api/v1/deals/").status_code == 429


def test_idempotency_records_expire_after_their_ttl(api, settings):
    import datetime as dt

    from django.utils import timezone

    from deals.models import IdempotencyRecord
    from deals.tasks import purge_idempotency_records

    assert api.post("/api/v1/deals/", {"title": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="old").status_code == 201
    assert api.post("/api/v1/deals/", {"title": "b"}, format="json", HTTP_IDEMPOTENCY_KEY="new").status_code == 201
    IdempotencyRecord.objects.filter(key="old").update(created_at=timezone.now() - dt.timedelta(hours=25))
    assert purge_idempotency_records() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]
    # An expired key is a new key: the same key may now create again.
    assert api.post("/api/v1/deals/", {"title": "c"}, format="json", HTTP_IDEMPOTENCY_KEY="old").status_code == 201
