"""REST of market rates on the real database: rates as of a date (default today), an index's dated
history a page at a time (newest first), the deprecated /base-rates/ in its old shape, and bad input as
VALIDATION_ERROR (400), never a 500. Read with lenders:read by any account's credential."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from lenders.rates.services import market_rate_set
from lev.accounts.scopes import LENDERS_READ, PLACEMENTS_READ
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key
from tests.deals.test_api import assert_error

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 10, 1)


@pytest.fixture
def rates():
    for n in range(30):
        market_rate_set(index="sofr", on=DAY + dt.timedelta(days=n), rate=Decimal("4.300") + Decimal(n) / 100)
    market_rate_set(index="prime", on=DAY + dt.timedelta(days=10), rate=Decimal("7.5"), source="demo")


def by_index(body):
    return {r["index"]: r for r in body["results"]}


def test_rates_as_of_a_date_each_with_its_date(api, rates):
    body = api.get("/api/v1/market-rates/", {"as_of": "2026-10-05"}).json()
    assert body["as_of"] == "2026-10-05" and len(body["results"]) == 7
    rows = by_index(body)
    assert rows["sofr"] == {"index": "sofr", "name": "SOFR", "rate": 4.34, "date": "2026-10-05", "days_old": 0}
    assert rows["prime"] == {"index": "prime", "name": "Prime", "rate": None, "date": None, "days_old": None}
    later = by_index(api.get("/api/v1/market-rates/", {"as_of": "2026-12-01"}).json())
    assert (later["sofr"]["date"], later["sofr"]["days_old"], later["prime"]["rate"]) == ("2026-10-30", 32, 7.5)
    one = api.get("/api/v1/market-rates/", {"as_of": "2026-10-05", "index": "Term-SOFR-3M"}).json()
    assert [(r["index"], r["rate"]) for r in one["results"]] == [("term_sofr_3m", None)]
    today = api.get("/api/v1/market-rates/").json()
    assert today["as_of"] == timezone.localdate().isoformat()


def test_history_pages_newest_first_between_dates(api, rates):
    first = api.get("/api/v1/market-rates/sofr/history/", {"since": "2026-10-03", "until": "2026-10-20",
                                                            "page_size": 5}).json()
    assert first["count"] == 18 and first["next"] and first["previous"] is None
    assert [r["date"] for r in first["results"]] == ["2026-10-20", "2026-10-19", "2026-10-18", "2026-10-17",
                                                     "2026-10-16"]
    assert first["results"][0] == {"date": "2026-10-20", "rate": 4.49, "source": "admin"}
    last = api.get("/api/v1/market-rates/sofr/history/", {"since": "2026-10-03", "until": "2026-10-20",
                                                           "page_size": 5, "page": 4}).json()
    assert [r["date"] for r in last["results"]] == ["2026-10-05", "2026-10-04", "2026-10-03"] and last["next"] is None
    by_name = api.get("/api/v1/market-rates/Prime/history/").json()  # a display name or any case
    assert by_name["count"] == 1 and by_name["results"][0]["source"] == "demo"
    assert api.get("/api/v1/market-rates/treasury_10y/history/").json()["count"] == 0


@pytest.mark.parametrize(("path", "params", "message"), [
    ("/api/v1/market-rates/", {"as_of": "2026-13-01"}, "Validation failed: as_of must be a date in YYYY-MM-DD"),
    ("/api/v1/market-rates/", {"as_of": "yesterday"}, "Validation failed: as_of must be a date"),
    ("/api/v1/market-rates/", {"date": "2026-10-01"}, "Validation failed: date"),
    ("/api/v1/market-rates/", {"index": "libor"}, "Validation failed: index"),
    ("/api/v1/market-rates/libor/history/", {}, 'Validation failed: index "libor" is not a rate index; the indexes '
                                                "are: sofr (SOFR)"),
    ("/api/v1/market-rates/sofr/history/", {"since": "2026-10-05", "until": "2026-10-01"},
     "Validation failed: since must be on or before until"),
    ("/api/v1/market-rates/sofr/history/", {"until": "0000-01-01"}, "Validation failed: until must be a date"),
    ("/api/v1/market-rates/sofr/history/", {"page_size": "1000"}, "Validation failed: page_size"),
])
def test_bad_input_is_a_validation_error(api, rates, path, params, message):
    assert_error(api.get(path, params), 400, "VALIDATION_ERROR", message)


def test_base_rates_keep_their_shape_from_the_latest_market_rates(api, rates):
    body = api.get("/api/v1/base-rates/").json()
    assert [(r["index"], r["rate"], r["as_of"]) for r in body["results"]] == [
        ("sofr", 4.59, "2026-10-30"), ("prime", 7.5, "2026-10-11")]
    assert set(body["results"][0]) == {"index", "rate", "as_of", "updated_at"}
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    assert schema["paths"]["/api/v1/base-rates/"]["get"]["deprecated"] is True
    assert "/api/v1/market-rates/{index}/history/" in schema["paths"]


def test_any_account_with_lenders_read_reads_the_same_rates(rates, account, user, other_api):
    _key, raw = api_key_create(user=user, account=account, name="read", scopes=frozenset({LENDERS_READ}))
    mine = client_with_key(raw).get("/api/v1/market-rates/", {"as_of": "2026-10-12"}).json()
    assert mine == other_api.get("/api/v1/market-rates/", {"as_of": "2026-10-12"}).json()
    _key, raw = api_key_create(user=user, account=account, name="placements", scopes=frozenset({PLACEMENTS_READ}))
    no_lenders = client_with_key(raw)
    assert no_lenders.get("/api/v1/market-rates/").status_code == 403
    assert no_lenders.get("/api/v1/base-rates/").status_code == 200
