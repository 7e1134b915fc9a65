"""REST API for deals: tenancy, validation, filters, pagination, error bodies."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from deals.errors import ARCHIVED_CUSTOMER_MESSAGE
from deals.models import Deal
from lev.accounts.models import ApiKey, Membership
from lev.accounts.services import api_key_create, api_key_revoke
from tests.conftest import client_with_key
from tests.factories import DealFactory, DealFinancialsFactory, DealPropertyFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def assert_error(response, status: int, code: str, message_prefix: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == code
    assert body["message"].startswith(message_prefix), body["message"]
    assert "Traceback" not in response.content.decode()
    return body


# --- tenancy -------------------------------------------------------------------------------------
@pytest.fixture
def rival_deal(other_account):
    return DealFactory(account=other_account, title="Rival secret deal")


def test_list_shows_only_own_account_deals(api, account, rival_deal):
    mine = DealFactory(account=account)
    body = api.get("/api/v1/deals/").json()
    assert [d["id"] for d in body["results"]] == [mine.id]
    assert body["count"] == 1


@pytest.mark.parametrize(
    ("method", "path", "data"),
    [
        ("get", "/api/v1/deals/{id}/", None),
        # `include=` reads the deal by another query (with its relations): it is scoped as well.
        ("get", "/api/v1/deals/{id}/?include=financials,properties", None),
        ("get", "/api/v1/deals/{id}/?include=financials", None),
        ("get", "/api/v1/deals/{id}/?include=properties", None),
        ("patch", "/api/v1/deals/{id}/", {"title": "Stolen"}),
        ("post", "/api/v1/deals/{id}/archive/", None),
        ("get", "/api/v1/deals/{id}/properties/", None),
        ("post", "/api/v1/deals/{id}/properties/", {"name": "X"}),
        ("get", "/api/v1/deals/{id}/financials/", None),
        ("patch", "/api/v1/deals/{id}/financials/", {"purchase_price": 5}),
    ],
)
def test_other_accounts_deal_answers_exactly_like_a_missing_one(api, rival_deal, method, path, data):
    missing_id = rival_deal.id + 1000
    rival = getattr(api, method)(path.format(id=rival_deal.id), data, format="json")
    missing = getattr(api, method)(path.format(id=missing_id), data, format="json")
    body = assert_error(rival, 404, "NOT_FOUND", f"Deal not found: {rival_deal.id}")
    assert missing.status_code == 404
    assert missing.json()["message"] == f"Deal not found: {missing_id}"
    assert body["details"] == {"resource": "deal", "id": str(rival_deal.id)}
    rival_deal.refresh_from_db()
    assert rival_deal.title == "Rival secret deal" and not rival_deal.archived
    assert not rival_deal.properties.exists()


def test_viewer_may_read_but_not_write(account):
    viewer = MembershipFactory(account=account, user=UserFactory(username="victor"), role=Membership.Role.VIEWER)
    _key, raw = api_key_create(user=viewer.user, account=account, name="t")
    client = client_with_key(raw)
    deal = DealFactory(account=account)
    assert client.get(f"/api/v1/deals/{deal.id}/").status_code == 200
    body = assert_error(client.patch(f"/api/v1/deals/{deal.id}/", {"title": "x"}, format="json"),
                        403, "FORBIDDEN", "Forbidden: ")
    assert "viewers" in body["message"]


def test_key_of_a_user_who_left_the_account_is_forbidden(api, user, account):
    Membership.objects.filter(user=user, account=account).delete()
    assert_error(api.get("/api/v1/deals/"), 403, "FORBIDDEN", "Forbidden: ")


# --- API keys ------------------------------------------------------------------------------------
def test_missing_key_is_401_with_bearer_challenge(db):
    response = APIClient().get("/api/v1/deals/")
    assert_error(response, 401, "AUTH_ERROR", "Unauthorized: ")
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("header", ["Bearer lev_sk_not-a-real-key", "Bearer nope", "Bearer a b", "Token abc"])
def test_bad_keys_are_401(db, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert_error(client.get("/api/v1/deals/"), 401, "AUTH_ERROR", "Unauthorized: ")


def test_expired_key_says_session_expired(api, api_key):
    ApiKey.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    body = assert_error(api.get("/api/v1/deals/"), 401, "AUTH_ERROR", "Unauthorized: ")
    assert body["message"] == "Unauthorized: your session has expired. Please sign in again."


def test_revoked_key_is_refused(api):
    api_key_revoke(key=ApiKey.objects.get())
    body = assert_error(api.get("/api/v1/deals/"), 401, "AUTH_ERROR", "Unauthorized: ")
    assert "revoked" in body["message"]


def test_key_is_stored_hashed_and_works(api, api_key):
    stored = ApiKey.objects.get()
    assert api_key not in (stored.key_hash, stored.prefix) and stored.prefix == api_key[:12]
    assert api.get("/api/v1/deals/").status_code == 200


def test_key_in_query_string_is_not_accepted(db, api_key):
    assert APIClient().get(f"/api/v1/deals/?api_key={api_key}").status_code == 401


# --- create, validation ---------------------------------------------------------------------------
def test_create_with_properties_then_retrieve_with_includes(api):
    response = api.post("/api/v1/deals/", {
        "title": "Oak Street", "loan_amount": 2500000, "loan_type": "Permanent", "transaction_type": "ACQUISITION",
        "business_plan": "value_add", "estimated_close_date": "2027-01-15",
        "properties": [{"name": "Oak 1", "state": "tx", "asset_type": "multifamily", "units": 24, "zip": "78701"}],
    }, format="json")
    assert response.status_code == 201, response.json()
    deal = response.json()
    assert deal["loan_type"] == "permanent" and deal["transaction_type"] == "acquisition"
    assert deal["properties"][0]["state"] == "TX"
    got = api.get(f"/api/v1/deals/{deal['id']}/?include=properties,financials").json()
    assert got["loan_amount"] == 2500000 and len(got["properties"]) == 1
    assert got["financials"]["purchase_price"] is None and got["financials"]["ltv"] is None
    assert "properties" not in api.get(f"/api/v1/deals/{deal['id']}/").json()


@pytest.mark.parametrize(
    ("payload", "field", "message"),
    [
        ({}, "title", "title is required"),
        ({"title": ""}, "title", "title may not be blank"),
        ({"title": "x" * 201}, "title", "title must be at most 200 characters"),
        ({"title": "x", "loan_amount": 0}, "loan_amount", "loan_amount must be greater than 0"),
        ({"title": "x", "loan_amount": -5}, "loan_amount", "loan_amount must be greater than 0"),
        ({"title": "x", "loan_amount": "lots"}, "loan_amount", "loan_amount must be a number"),
        ({"title": "x", "loan_type": "mezz"}, "loan_type", "loan_type must be one of: construction"),
        ({"title": "x", "transaction_type": "sale"}, "transaction_type", "transaction_type must be one of: tbd"),
        ({"title": "x", "business_plan": "flip"}, "business_plan", "business_plan must be one of: stabilized"),
        ({"title": "x", "description": "d" * 5001}, "description", "description must be at most 5000"),
        ({"title": "x", "estimated_close_date": "soon"}, "estimated_close_date",
         "estimated_close_date must be a date in YYYY-MM-DD format"),
        ({"title": "x", "colour": "red"}, "colour", "colour is not a known field"),
        ({"title": "x", "properties": [{}]}, "properties.0.name", "properties.0.name is required"),
        ({"title": "x", "properties": [{"name": "p", "state": "ZZ"}]}, "properties.0.state",
         "properties.0.state must be one of: AL"),
        ({"title": "x", "properties": [{"name": "p", "zip": "1234"}]}, "properties.0.zip",
         "properties.0.zip must be a 5-digit ZIP"),
        ({"title": "x", "properties": [{"name": "p", "asset_type": "castle"}]}, "properties.0.asset_type",
         "properties.0.asset_type must be one of: multifamily"),
        ({"title": "x", "properties": [{"name": "p", "units": -1}]}, "properties.0.units",
         "properties.0.units must be at least 0"),
        ({"title": "x", "properties": [{"name": "p", "year_built": 1500}]}, "properties.0.year_built",
         "properties.0.year_built must be at least 1700"),
    ],
)
def test_validation_names_the_field(api, payload, field, message):
    body = assert_error(api.post("/api/v1/deals/", payload, format="json"), 400, "VALIDATION_ERROR",
                        f"Validation failed: {message}")
    assert field in body["details"]["fields"]
    assert not Deal.objects.exists()


def test_malformed_json_is_a_validation_error(api):
    response = api.generic("POST", "/api/v1/deals/", "{not json", content_type="application/json")
    assert_error(response, 400, "VALIDATION_ERROR", "Validation failed: ")


# --- update, archive, properties, financials -----------------------------------------------------
def test_partial_update_changes_only_given_fields(api, account):
    deal = DealFactory(account=account, title="Old", loan_amount=Decimal("5000000"))
    body = api.patch(f"/api/v1/deals/{deal.id}/", {"title": "New"}, format="json").json()
    assert body["title"] == "New" and body["loan_amount"] == 5000000
    assert_error(api.patch(f"/api/v1/deals/{deal.id}/", {"loan_amount": 0}, format="json"),
                 400, "VALIDATION_ERROR", "Validation failed: loan_amount must be greater than 0")


def test_archive_is_soft_and_blocks_changes(api, account):
    deal = DealFactory(account=account)
    body = api.post(f"/api/v1/deals/{deal.id}/archive/").json()
    assert body["archived"] is True and body["archived_at"]
    assert api.post(f"/api/v1/deals/{deal.id}/archive/").status_code == 200  # repeat is harmless
    assert api.get("/api/v1/deals/").json()["count"] == 0
    assert api.get("/api/v1/deals/?archived=true").json()["count"] == 1
    body = assert_error(api.patch(f"/api/v1/deals/{deal.id}/", {"title": "x"}, format="json"),
                        409, "BUSINESS_RULE", "Not allowed: ")
    assert body["details"]["customer_message"] == ARCHIVED_CUSTOMER_MESSAGE
    assert_error(api.post(f"/api/v1/deals/{deal.id}/properties/", {"name": "p"}, format="json"),
                 409, "BUSINESS_RULE", "Not allowed: ")


def test_properties_and_financials(api, account):
    deal = DealFactory(account=account, loan_amount=Decimal("12000000"))
    version = deal.version
    prop = api.post(f"/api/v1/deals/{deal.id}/properties/", {"name": "Elm", "state": "CA"}, format="json")
    assert prop.status_code == 201
    prop_id = prop.json()["id"]
    updated = api.patch(f"/api/v1/deals/{deal.id}/properties/{prop_id}/", {"units": 40}, format="json").json()
    assert updated["units"] == 40 and updated["state"] == "CA"
    assert [p["id"] for p in api.get(f"/api/v1/deals/{deal.id}/properties/").json()["results"]] == [prop_id]
    empty = api.get(f"/api/v1/deals/{deal.id}/financials/").json()
    assert empty["purchase_price"] is None and empty["ltv"] is None and empty["amortization_years"] == 30
    fin = api.patch(f"/api/v1/deals/{deal.id}/financials/", {
        "estimated_value": 16000000, "in_place_noi": 1100000, "interest_rate": 6.5,
    }, format="json").json()
    assert fin["ltv"] == 75.0 and fin["dscr"] is not None and fin["dscr"] > 1
    deal.refresh_from_db()
    assert deal.version == version + 3  # every change to the deal's data moves its version
    assert_error(api.get(f"/api/v1/deals/{deal.id}/properties/999999/"), 404, "NOT_FOUND",
                 "Property not found: 999999")


# --- filters, sorting, pagination ---------------------------------------------------------------
def test_filters_sorting_and_pagination(api, account, django_assert_max_num_queries):
    for i in range(25):
        deal = DealFactory(account=account, title=f"D{i:02d}", loan_amount=Decimal(1_000_000 * (i + 1)),
                           loan_type="construction" if i % 2 else "permanent")
        DealPropertyFactory(deal=deal)
    with django_assert_max_num_queries(8):  # no N+1 however many deals are on the page
        page1 = api.get("/api/v1/deals/?page_size=10&ordering=loan_amount").json()
    assert page1["count"] == 25 and len(page1["results"]) == 10 and page1["next"]
    assert [d["loan_amount"] for d in page1["results"]] == [1_000_000 * (i + 1) for i in range(10)]
    assert page1["results"][0]["property_count"] == 1
    page3 = api.get("/api/v1/deals/?page_size=10&page=3&ordering=loan_amount").json()
    assert len(page3["results"]) == 5 and page3["next"] is None
    filtered = api.get("/api/v1/deals/?loan_type=construction&min_loan_amount=10000000"
                       "&max_loan_amount=20000000").json()
    assert {d["loan_type"] for d in filtered["results"]} == {"construction"}
    assert all(10_000_000 <= d["loan_amount"] <= 20_000_000 for d in filtered["results"])
    assert filtered["count"] == 6  # 10, 12, ... 20 million
    assert api.get("/api/v1/deals/?loan_type=land").json() == {
        "count": 0, "next": None, "previous": None, "results": []}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("loan_type=mezz", "loan_type"),
        ("min_loan_amount=abc", "min_loan_amount"),
        ("min_loan_amount=5&max_loan_amount=1", "min_loan_amount"),
        ("ordering=password", "ordering"),
        ("page_size=1000", "page_size"),
        ("archived=maybe", "archived"),
        ("bogus=1", "bogus"),
    ],
)
def test_bad_filters_are_validation_errors(api, query, field):
    body = assert_error(api.get(f"/api/v1/deals/?{query}"), 400, "VALIDATION_ERROR", f"Validation failed: {field}")
    assert field in body["details"]["fields"]


def test_page_past_the_end_is_404_json(api, account):
    DealFactory(account=account)
    assert_error(api.get("/api/v1/deals/?page=9"), 404, "NOT_FOUND", "")


# --- error body for every status ------------------------------------------------------------------
def test_405_is_json(api):
    assert_error(api.put("/api/v1/deals/", {}, format="json"), 405, "METHOD_NOT_ALLOWED", "Method not allowed")


def test_unknown_api_route_is_json_404(api):
    assert_error(api.get("/api/v1/nothing-here/"), 404, "NOT_FOUND", "")


def test_unexpected_crash_is_a_generic_500_without_internals(api, monkeypatch):
    def explode(**kwargs):
        raise RuntimeError("password=hunter2 at line 42")

    monkeypatch.setattr("deals.selectors.deal_list", explode)
    body = assert_error(api.get("/api/v1/deals/"), 500, "INTERNAL_ERROR", "Internal error: ")
    assert "hunter2" not in str(body)


def test_financials_derive_ltv_and_dscr(account):
    fin = DealFinancialsFactory(deal=DealFactory(account=account, loan_amount=Decimal("12000000")),
                                estimated_value=Decimal("16000000"), in_place_noi=Decimal("1000000"),
                                interest_rate=Decimal("6.0"))
    assert fin.ltv == Decimal("75.00")
    assert fin.dscr == Decimal("1.16")  # 12M at 6 %, 30 years: debt service 863,353 a year


@pytest.mark.parametrize("field, value", [("description", -5.795884152146792e16), ("title", 42), ("title", True)])
def test_text_is_a_json_string_not_a_number_made_text(api, field, value):
    # The schema says string; DRF alone would store the number as its text (the REST fuzzer found it).
    body = {"title": "Numbers", field: value}
    response = api.post("/api/v1/deals/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["message"] == f"Validation failed: {field} must be text"
