"""Figures through REST and the services, with files really stored on the deal documents' storage: the
preview beside the deal's values, apply (all, chosen, refused whole), each applied figure's source in the
financials and cited by the summary, a later apply replacing it, a hand edit dropping it; another
account's document is a 404; bad input and unreadable files are 400s in the error contract, never a 500."""

from __future__ import annotations

from decimal import Decimal

import pytest

from deals.models import DealFinancials, DealProperty, FigureSource
from deals.services import deal_archive
from tests.deals.documents import figures_files as files
from tests.deals.documents.figures_files import stored
from tests.deals.searches.factories import make_deal
from tests.deals.test_api import assert_error
from tests.factories import DealFinancialsFactory

pytestmark = pytest.mark.django_db
API = "/api/v1"


@pytest.fixture
def deal(account):
    deal = make_deal(account)
    DealFinancialsFactory(deal=deal, estimated_value=Decimal("16000000"), in_place_noi=Decimal("900000"),
                          stabilized_noi=None)
    return deal


@pytest.fixture(autouse=True)
def _remove_files():
    yield
    from deals.documents.models import DocumentVersion

    for version in DocumentVersion.objects.all():
        version.file.delete(save=False)


def figures(api, of, **body):
    return api.post(f"{API}/documents/{of.document_id}/figures/", body, format="json")


def apply(api, of, **body):
    return api.post(f"{API}/documents/{of.document_id}/figures/apply/", body, format="json")


def test_a_t12_previews_beside_the_deals_values_and_applies_with_its_source(api, deal, user):
    version = stored(deal, files.yardi_t12()[0], "T12 Nov 2026.xlsx", kind="t12")
    preview = figures(api, version)
    assert preview.status_code == 200, preview.content
    body = preview.json()
    assert (body["kind"], body["layout"], body["version"], body["deal_id"]) == ("t12", "yardi", 1, deal.pk)
    by_name = {f["name"]: f for f in body["figures"]}
    assert by_name["noi"] == {"name": "noi", "value": "644400.00", "field": "in_place_noi", "current": "900000.00",
                              "source": None}
    assert by_name["months"]["field"] is None and body["problems"] == []
    version.refresh_from_db()
    assert version.extracted["figures"]["effective_gross_income"] == "1146000.00"  # stored on the version
    assert DealFinancials.objects.get(deal=deal).in_place_noi == Decimal("900000")  # the preview changes nothing

    before = type(deal).objects.get(pk=deal.pk).version
    applied = apply(api, version)
    assert applied.status_code == 200, applied.content
    result = applied.json()
    assert {a["field"]: a["value"] for a in result["applied"]} == {
        "in_place_noi": "644400.00", "effective_gross_income": "1146000.00", "operating_expenses": "501600.00"}
    fin = result["financials"]
    assert (fin["in_place_noi"], fin["effective_gross_income"], fin["operating_expenses"]) == (644400.0, 1146000.0,
                                                                                              501600.0)
    assert set(fin["sources"]) == {"in_place_noi", "effective_gross_income", "operating_expenses"}
    assert {k: v for k, v in fin["sources"]["in_place_noi"].items() if k != "applied_at"} == {
        "document_id": version.document_id, "version": 1, "file_name": "T12 Nov 2026.xlsx"}
    assert type(deal).objects.get(pk=deal.pk).version == before + 1  # a search of the old NOI is stale
    source = FigureSource.objects.get(deal=deal, field="in_place_noi")
    assert (source.value, source.document_version_id, source.applied_by_id) == (Decimal("644400"), version.pk, user.pk)
    # The financials' own answer shows the source too, and the preview now shows it beside the value.
    assert api.get(f"{API}/deals/{deal.pk}/financials/").json()["sources"] == fin["sources"]
    again = {f["name"]: f for f in figures(api, version).json()["figures"]}
    assert again["noi"]["current"] == "644400.00" and again["noi"]["source"]["version"] == 1


def test_a_rent_roll_applies_occupancy_rent_and_the_one_propertys_units(api, deal):
    version = stored(deal, files.realpage_rent_roll()[0], "rent roll.xlsx")
    result = apply(api, version).json()
    assert {a["field"] for a in result["applied"]} == {"occupancy", "in_place_rent", "units"}
    assert (result["financials"]["occupancy"], result["financials"]["in_place_rent"]) == (50.0, 67800.0)
    assert DealProperty.objects.get(deal=deal).units == 8
    assert result["financials"]["in_place_noi"] == 900000.0  # untouched: not a rent roll's figure


def test_chosen_fields_only_and_a_later_apply_replaces_the_source(api, deal):
    first = stored(deal, files.yardi_t12()[0], "t12 v1.xlsx", kind="t12")
    assert apply(api, first, fields=["in_place_noi"]).json()["financials"]["effective_gross_income"] is None
    second = stored(deal, files.appfolio_t12()[0], "t12 v2.csv", document=first.document)
    response = apply(api, second, fields=["in_place_noi"])
    assert response.status_code == 200
    assert response.json()["financials"]["sources"]["in_place_noi"]["version"] == 2
    assert FigureSource.objects.filter(deal=deal).count() == 1
    # An older version still reads and applies when named.
    assert apply(api, second, version=1, fields=["in_place_noi"]).json()["version"] == 1
    assert FigureSource.objects.get(deal=deal).document_version_id == first.pk


def test_a_figure_changed_by_hand_no_longer_cites_the_document(api, deal):
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    apply(api, version)
    response = api.patch(f"{API}/deals/{deal.pk}/financials/", {"in_place_noi": 700000}, format="json")
    assert set(response.json()["sources"]) == {"effective_gross_income", "operating_expenses"}
    prop = DealProperty.objects.get(deal=deal)
    rent_roll = stored(deal, files.realpage_rent_roll()[0], "rr.xlsx")
    apply(api, rent_roll, fields=["units"])
    api.patch(f"{API}/deals/{deal.pk}/properties/{prop.pk}/", {"units": 9}, format="json")
    assert not FigureSource.objects.filter(deal=deal, field="units").exists()


def test_the_summary_cites_the_document_of_each_applied_figure(api, deal):
    t12 = stored(deal, files.yardi_t12()[0], "Harbor T12.xlsx", kind="t12")
    rent_roll = stored(deal, files.realpage_rent_roll()[0], "Harbor rent roll.xlsx")
    apply(api, t12)
    apply(api, rent_roll)
    body = api.get(f"{API}/deals/{deal.pk}/summary/", {"detail": "memo"}).json()
    text = body["text"]
    assert "in-place NOI $644,400 [" in text and "(from Harbor T12.xlsx, version 1 [" in text
    assert "occupancy 50% [" in text and "(from Harbor rent roll.xlsx, version 1 [" in text
    assert "8 units [" in text
    cited = [s for s in body["sources"] if s["field"].startswith("sources.")]
    assert {s["field"] for s in cited} == {"sources.in_place_noi", "sources.effective_gross_income",
                                           "sources.operating_expenses", "sources.occupancy", "sources.in_place_rent",
                                           "sources.units"}
    noi = next(s for s in cited if s["field"] == "sources.in_place_noi")
    # The value is what the path serves at that field.
    served = api.get(f"{API}{noi['path']}").json()["sources"]["in_place_noi"]
    assert noi["value"] == served and noi["record"] == "deal_financials"
    for source in cited:
        assert f"[{source['ref']}]" in text


def test_the_summarys_query_count_holds_with_sources(api, deal, django_assert_max_num_queries):
    apply(api, stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12"))
    api.get(f"{API}/deals/{deal.pk}/summary/")
    with django_assert_max_num_queries(15):
        api.get(f"{API}/deals/{deal.pk}/summary/", {"detail": "memo"})


def test_units_are_refused_when_named_and_skipped_and_said_without_one_property(api, account):
    deal = make_deal(account, states=("TX", "OK"), asset_types=("multifamily", "multifamily"))
    version = stored(deal, files.realpage_rent_roll()[0], "rr.xlsx")
    refused = apply(api, version, fields=["occupancy", "units"])
    body = assert_error(refused, 400, "VALIDATION_ERROR", "Validation failed: fields")
    assert body["details"]["fields"]["fields"] == ["units: the deal has several properties; set each one's units "
                                                   "on the property"]
    # All or nothing: the occupancy asked beside it was not written either.
    assert not DealFinancials.objects.filter(deal=deal, occupancy__isnull=False).exists()
    assert not FigureSource.objects.exists()
    result = apply(api, version).json()
    assert result["skipped"] == [{"field": "units", "reason": "units: the deal has several properties; set each "
                                                              "one's units on the property"}]
    assert {a["field"] for a in result["applied"]} == {"occupancy", "in_place_rent"}
    assert list(DealProperty.objects.filter(deal=deal).values_list("units", flat=True)) != [8, 8]


# --- tenancy and bad input ------------------------------------------------------------------------------
def test_another_accounts_document_is_a_404_like_a_missing_one(api, other_api, deal):
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    for tail in ("figures/", "figures/apply/"):
        assert_error(other_api.post(f"{API}/documents/{version.document_id}/{tail}", {}, format="json"), 404,
                     "NOT_FOUND", f"Document not found: {version.document_id}")
        assert_error(api.post(f"{API}/documents/999999/{tail}", {}, format="json"), 404, "NOT_FOUND",
                     "Document not found: 999999")
    assert not FigureSource.objects.exists()
    version.refresh_from_db()
    assert version.extracted is None


def test_a_removed_document_and_a_missing_version_are_404s(api, deal):
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    assert_error(figures(api, version, version=7), 404, "NOT_FOUND", "Document version not found")
    type(version.document).objects.filter(pk=version.document_id).update(deleted_at="2026-01-01T00:00:00Z")
    assert_error(figures(api, version), 404, "NOT_FOUND", "Document not found")


@pytest.mark.parametrize(("kind", "data", "says"), [
    ("photo", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "figures are read from a rent roll or a T-12 (XLSX or CSV); this "
                                              "document is a photo"),
    ("offering_memorandum", b"%PDF-1.7\n", "this document is an offering memorandum"),
    ("rent_roll", b"%PDF-1.7\n1 0 obj", "the file is not a spreadsheet"),
    ("rent_roll", b"Name,Email\nAda,ada@example.com\n", "no header was recognised"),
    ("t12", b"Unit,Rent\n1,100\n", "a T-12's header: a row of at least six month columns"),
    ("other", b"Name,Email\nAda,a@b.co\n", "or a T-12's header"),
])
def test_a_file_that_is_no_rent_roll_or_t12_is_a_clear_400(api, deal, kind, data, says):
    version = stored(deal, data, "file.bin", kind=kind)
    for response in (figures(api, version), apply(api, version)):
        body = assert_error(response, 400, "VALIDATION_ERROR", "Validation failed: file")
        assert says in body["details"]["fields"]["file"][0]
    assert not FigureSource.objects.exists()


def test_a_bomb_through_rest_is_a_400(api, deal):
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/workbook.xml", b"<workbook/>")
        archive.writestr("xl/worksheets/sheet1.xml", b"\0" * (40 * 2**20))
    version = stored(deal, out.getvalue(), "roll.xlsx")
    body = assert_error(figures(api, version), 400, "VALIDATION_ERROR", "Validation failed: file")
    assert "zip bomb" in body["details"]["fields"]["file"][0]


@pytest.mark.parametrize("body", [
    {"fields": ["noi"]}, {"fields": []}, {"fields": "in_place_noi"}, {"fields": [None]}, {"version": 0},
    {"version": "x"}, {"colour": "blue"}, {"version": 2**40}, {"fields": [{"a": 1}]},
])
def test_bad_apply_bodies_are_400s(api, deal, body):
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    assert_error(apply(api, version, **body), 400, "VALIDATION_ERROR", "Validation failed")


def test_a_field_the_file_does_not_give_is_refused_naming_what_it_gives(api, deal):
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    body = assert_error(apply(api, version, fields=["occupancy"]), 400, "VALIDATION_ERROR", "Validation failed")
    assert body["details"]["fields"]["fields"] == [
        "occupancy: not a figure of this T-12; it gives in_place_noi, effective_gross_income, operating_expenses"]


def test_a_non_object_body_and_a_huge_id_are_not_500s(api, deal):
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    response = api.post(f"{API}/documents/{version.document_id}/figures/", [1, 2], format="json")
    assert_error(response, 400, "VALIDATION_ERROR", "Validation failed")
    assert_error(api.post(f"{API}/documents/{2**63}/figures/", {}, format="json"), 404, "NOT_FOUND",
                 "Document not found")


def test_an_archived_deal_previews_but_does_not_apply(api, deal):
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    deal_archive(deal=deal)
    assert figures(api, version).status_code == 200
    response = apply(api, version)
    assert response.status_code in (400, 409, 422) and response.json()["code"] in ("BUSINESS_RULE", "CONFLICT")
    assert not FigureSource.objects.exists()


def test_a_file_gone_from_the_storage_is_a_400_not_a_500(api, deal):
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    version.file.storage.delete(version.file.name)
    body = assert_error(figures(api, version), 400, "VALIDATION_ERROR", "Validation failed: file")
    assert body["details"]["fields"]["file"] == ["the document's file cannot be read from the storage"]


def test_the_read_only_key_reads_but_does_not_apply(account, user, deal):
    from lev.accounts.services import api_key_create
    from tests.conftest import client_with_key

    _, raw = api_key_create(account=account, user=user, name="reader", scopes=frozenset({"deals:read"}))
    reader = client_with_key(raw)
    version = stored(deal, files.yardi_t12()[0], "t12.xlsx", kind="t12")
    assert figures(reader, version).status_code == 200
    assert_error(apply(reader, version), 403, "FORBIDDEN", "Forbidden")


def test_a_rent_roll_without_units_previews_its_problem_and_applies_nothing(api, deal):
    version = stored(deal, b"Unit,Tenant,Rent\nTotal,,0\n", "empty roll.csv")
    body = figures(api, version).json()
    assert body["figures"] == [] and body["problems"][0]["message"].startswith("No unit rows were found")
    refused = assert_error(apply(api, version), 400, "VALIDATION_ERROR", "Validation failed: file")
    assert refused["details"]["fields"]["file"] == ["no figures were read from this version; its preview says why"]
    assert DealFinancials.objects.get(deal=deal).occupancy is None
