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

    from lev.idempotency.models import IdempotencyRecord
    from lev.idempotency.tasks import purge_idempotency_records

    assert api.post("/api/v1/deals/", {"title": "a"}, format="json", HTTP_IDEMPOTENCY_KEY="old").status_code == 201
    assert api.post("/api/v1/deals/", {"title": "b"}, format="json", HTTP_IDEMPOTENCY_KEY="new").status_code == 201
    IdempotencyRecord.objects.filter(key="old").update(created_at=timezone.now() - dt.timedelta(hours=25))
    assert purge_idempotency_records() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]
    # An expired key is a new key: the same key may now create again.
    assert api.post("/api/v1/deals/", {"title": "c"}, format="json", HTTP_IDEMPOTENCY_KEY="old").status_code == 201


def test_a_rate_limited_request_costs_one_redis_round_trip_and_its_window_expires(api, account, settings,
                                                                                 frozen_window):
    from django.conf import settings as django_settings
    from django.core.cache import cache

    from tests.redis_round_trips import redis_round_trips

    if not django_settings.REDIS_URL:
        pytest.skip("counting in Redis needs REDIS_URL")
    settings.LEV_RATE_LIMIT_READS = "3/day"
    deal = DealFactory(account=account)
    api.get(f"/api/v1/deals/{deal.id}/")  # credentials checked and cached: what is left is the count
    with redis_round_trips() as sent:
        assert api.get(f"/api/v1/deals/{deal.id}/").status_code == 200
    assert len(sent) == 1 and b"INCR" in sent[0] and b"EXPIRE" in sent[0]
    keys = list(cache._cache.get_client(write=True).scan_iter(match=cache.make_key("throttle:user_read:*")))
    assert len(keys) == 1
    assert 0 < cache._cache.get_client().ttl(keys[0]) <= DAY + 1
    assert api.get(f"/api/v1/deals/{deal.id}/").status_code == 200
    assert api.get(f"/api/v1/deals/{deal.id}/").status_code == 429  # the 4th read of the day
