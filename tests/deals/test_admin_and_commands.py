"""Admin pages, management commands and the OpenAPI description."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.http import HttpRequest
from django.urls import reverse
from rest_framework.test import APIClient

from deals.models import Company, Contact, Deal, DealFinancials, DealProperty
from lenders.models import Lender, LenderActivity, LenderProgram
from lenders.rates.models import MarketRate
from lev.accounts.models import ApiKey

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded():
    out = StringIO()
    call_command("seed_demo", "--lenders", "60", "--print-credentials", stdout=out)
    return out.getvalue()


def counts():
    return (Lender.objects.count(), LenderProgram.objects.count(), LenderActivity.objects.count(),
            Deal.objects.count(), DealProperty.objects.count(), DealFinancials.objects.count(),
            MarketRate.objects.count())


def test_seed_demo_is_idempotent_and_deterministic(seeded):
    first = counts()
    assert first[0] == 60 and 60 <= first[1] <= 240
    assert first[-1] > 2000 and "Market rates: " in seeded  # ~18 months of every index
    # Its active deals: the demo deals; its market history's past deals are archived.
    assert Deal.objects.filter(account__slug="demo-capital", archived=False).count() == 6
    names = list(Lender.objects.order_by("website").values_list("name", flat=True))
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    assert counts() == first
    Lender.objects.all().delete()
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    assert list(Lender.objects.order_by("website").values_list("name", flat=True)) == names
    program = LenderProgram.objects.exclude(asset_types=[]).first()
    assert program.asset_type_mask and program.min_loan_amount < program.max_loan_amount


def test_seed_demo_gives_the_demo_account_companies_people_and_lender_contacts(seeded):
    def snapshot():
        return (sorted(Company.objects.filter(account__slug="demo-capital").values_list("kind", "name")),
                sorted(Contact.objects.filter(account__slug="demo-capital").values_list("name", "company__name",
                                                                                          "lender__name")))

    companies, contacts = first = snapshot()
    assert {kind for kind, _ in companies} == {"sponsor", "borrower", "broker"}
    riverside = Deal.objects.get(account__slug="demo-capital", title="Riverside Apartments Refinance")
    assert (riverside.sponsor.name, riverside.borrower.name) == ("Bluebonnet Residential Partners",
                                                                 "Riverside Apartments Owner LLC")
    placements = list(riverside.placements.select_related("contact"))
    assert placements and all(p.contact and p.contact.lender_id == p.lender_id
                              and p.contact_name == p.contact.name for p in placements)
    assert sum(1 for _name, company, _lender in contacts if company) == 4
    call_command("seed_demo", "--lenders", "60", stdout=StringIO())
    assert snapshot() == first


def test_seed_demo_prints_a_working_login_and_api_key(seeded, client):
    password = seeded.split("password '")[1].split("'")[0]
    key = seeded.split("API key:")[1].split()[0]
    # django-axes needs the request to count the attempt (its documented way to log in in tests).
    assert client.login(request=HttpRequest(), username="admin", password=password)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    body = api.get("/api/v1/deals/").json()
    assert body["count"] == 5  # the active demo deals: not the dead one (issue 39)
    call_command("seed_demo", "--lenders", "60", "--print-credentials", stdout=StringIO())
    assert api.get("/api/v1/deals/").status_code == 200  # the same demo key on every run (test_demo_key.py)


def test_admin_changelists_and_forms_load(seeded, client):
    admin = get_user_model().objects.get(username="admin")
    client.force_login(admin)
    deal = Deal.objects.first()
    lender = Lender.objects.first()
    for name in ("deals_deal", "deals_dealproperty", "accounts_account", "accounts_apikey", "lenders_lender",
                 "lenders_lenderprogram", "lenders_lenderactivity", "deals_lendersearch", "lenders_assettype",
                 "deals_company", "deals_contact"):
        assert client.get(reverse(f"admin:{name}_changelist")).status_code == 200, name
    assert client.get(reverse("admin:deals_deal_change", args=[deal.pk])).status_code == 200
    assert client.get(reverse("admin:lenders_lender_change", args=[lender.pk])).status_code == 200
    filtered = {"deals_deal": "?loan_type__exact=permanent&q=River",
                "lenders_lender": "?lender_type=bank&state__exact=TX"}
    for name, query in filtered.items():
        assert client.get(reverse(f"admin:{name}_changelist") + query).status_code == 200, name


def test_create_api_key_command(seeded):
    out = StringIO()
    call_command("create_api_key", "admin", "--name", "ci", "--expires-in-days", "7", stdout=out)
    raw = out.getvalue().strip()
    assert raw.startswith("lev_sk_")
    key = ApiKey.objects.get(name="ci")
    assert key.expires_at is not None and raw not in key.key_hash
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api.get("/api/v1/deals/").status_code == 200


def test_openapi_schema_and_docs_are_served(db):
    client = APIClient()
    schema = client.get("/api/v1/schema/?format=json")
    assert schema.status_code == 200
    spec = schema.json()
    assert spec["openapi"].startswith("3.")
    assert "/api/v1/deals/" in spec["paths"] and "/api/v1/lenders/{lender_id}/" in spec["paths"]
    assert spec["components"]["securitySchemes"]["ApiKeyAuth"]["scheme"] == "bearer"
    assert client.get("/api/v1/docs/").status_code == 200
