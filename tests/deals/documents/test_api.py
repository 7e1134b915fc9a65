"""A deal's documents through REST: upload, list, read, download and remove; versions (a new rent roll
replaces the old, which stays); hostile files and names; limits; tenancy (another account: 404 on every
door); scopes. Real files on a real file-system storage (conftest), the bytes checked on disk."""

from __future__ import annotations

import hashlib
import io
from urllib.parse import unquote

import pytest
from django.core.files.storage import storages

from deals.documents.models import Document, DocumentVersion
from lev.accounts.services import api_key_create
from tests.conftest import client_with_key
from tests.deals.documents.helpers import (
    CSV_BYTES,
    EXE_BYTES,
    PDF_BYTES,
    PDF_WITH_JS,
    xlsx_bytes,
    xml_bomb_xlsx,
    zip_bomb_xlsx,
)
from tests.deals.test_api import assert_error
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db


def docs_url(deal) -> str:
    return f"/api/v1/deals/{deal.pk}/documents/"


def post_file(client, deal, file_name: str, data: bytes, **fields):
    part = io.BytesIO(data)
    part.name = file_name
    return client.post(docs_url(deal), {"file": part, **fields}, format="multipart")


def uploaded(client, deal, file_name: str, data: bytes, **fields) -> dict:
    response = post_file(client, deal, file_name, data, **fields)
    assert response.status_code == 201, response.content
    return response.json()


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.fixture
def deal(account):
    return DealFactory(account=account)


# --- upload, list, read, download, versions --------------------------------------------------------------
def test_upload_list_read_download_and_versions(api, deal, user, documents_dir):
    om = uploaded(api, deal, "Harbor OM.pdf", PDF_BYTES, kind="offering_memorandum")
    assert (om["kind"], om["name"], om["versions_count"], om["created_by"]) == (
        "offering_memorandum", "Harbor OM.pdf", 1, "alice")
    current = om["current"]
    assert (current["number"], current["file_name"], current["size"], current["content_type"],
            current["sha256"], current["uploaded_by_id"]) == (
        1, "Harbor OM.pdf", len(PDF_BYTES), "application/pdf", hashlib.sha256(PDF_BYTES).hexdigest(), user.pk)
    # Kept on the storage under a random name in the account's and deal's folder, the bytes as sent.
    version = DocumentVersion.objects.get(document_id=om["id"])
    assert version.file.name.startswith(f"{deal.account_id}/{deal.pk}/") and "Harbor" not in version.file.name
    assert (documents_dir / version.file.name).read_bytes() == PDF_BYTES

    rr1 = uploaded(api, deal, "rent roll jan.csv", CSV_BYTES, kind="rent_roll")
    rr2 = uploaded(api, deal, "rent roll feb.csv", CSV_BYTES + b"103,Lee,1500\n", kind="rent_roll")
    # A rent roll is single-valued: the second is version 2 of the same document; the first stays.
    assert rr2["id"] == rr1["id"] and rr2["versions_count"] == 2
    assert [v["number"] for v in rr2["versions"]] == [2, 1]
    assert [v["file_name"] for v in rr2["versions"]] == ["rent roll feb.csv", "rent roll jan.csv"]
    assert rr2["versions"][0]["content_type"] == "text/csv"
    # Photos are many: each a document of its own; an explicit document_id adds a version to it.
    photo = uploaded(api, deal, "front.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, kind="photo")
    other_photo = uploaded(api, deal, "back.png", b"\x89PNG\r\n\x1a\n" + b"\x01" * 64, kind="photo")
    assert photo["id"] != other_photo["id"]
    again = uploaded(api, deal, "front-2.png", b"\x89PNG\r\n\x1a\n" + b"\x02" * 64,
                     document_id=photo["id"], name="Front elevation")
    assert (again["id"], again["versions_count"], again["name"]) == (photo["id"], 2, "Front elevation")

    listed = api.get(docs_url(deal)).json()
    assert listed["count"] == 4 and {d["id"] for d in listed["results"]} == {
        om["id"], rr1["id"], photo["id"], other_photo["id"]}
    assert [d["id"] for d in api.get(docs_url(deal), {"kind": "rent_roll"}).json()["results"]] == [rr1["id"]]
    paged = api.get(docs_url(deal), {"page_size": 3}).json()
    assert len(paged["results"]) == 3 and paged["next"]

    detail = api.get(f"/api/v1/documents/{rr1['id']}/").json()
    assert [v["number"] for v in detail["versions"]] == [2, 1] and detail["versions"][0]["extracted"] is None

    latest = api.get(f"/api/v1/documents/{rr1['id']}/download/")
    assert latest.status_code == 200 and body_of(latest) == CSV_BYTES + b"103,Lee,1500\n"
    first = api.get(f"/api/v1/documents/{rr1['id']}/download/", {"version": 1})
    assert body_of(first) == CSV_BYTES and "rent%20roll%20jan.csv" in first["Content-Disposition"]
    assert_error(api.get(f"/api/v1/documents/{rr1['id']}/download/", {"version": 3}), 404, "NOT_FOUND", "Document")
    assert_error(api.get(f"/api/v1/documents/{rr1['id']}/download/", {"version": "x"}), 400, "VALIDATION_ERROR",
                 "Validation failed: version")


def test_a_pdf_with_javascript_is_stored_and_only_ever_downloaded_as_an_attachment(api, deal):
    doc = uploaded(api, deal, "term sheet.pdf", PDF_WITH_JS, kind="term_sheet")
    response = api.get(f"/api/v1/documents/{doc['id']}/download/")
    assert response.status_code == 200 and body_of(response) == PDF_WITH_JS  # kept as sent
    assert response["Content-Disposition"].startswith("attachment;")
    assert "inline" not in response["Content-Disposition"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"].startswith("sandbox")
    assert response["Content-Type"] == "application/pdf"
    assert "no-store" in response["Cache-Control"]


def test_remove_is_soft_and_takes_the_document_off_every_door(api, deal):
    doc = uploaded(api, deal, "om.pdf", PDF_BYTES, kind="offering_memorandum")
    assert api.delete(f"/api/v1/documents/{doc['id']}/").status_code == 204
    assert api.get(docs_url(deal)).json()["count"] == 0
    assert_error(api.get(f"/api/v1/documents/{doc['id']}/"), 404, "NOT_FOUND", "Document not found")
    assert_error(api.get(f"/api/v1/documents/{doc['id']}/download/"), 404, "NOT_FOUND", "Document not found")
    kept = Document.objects.get(pk=doc["id"])
    assert kept.deleted_at is not None and kept.versions.count() == 1  # its files stay
    # A new OM after the removal starts a new document (the removed one is not the deal's OM any more).
    fresh = uploaded(api, deal, "om2.pdf", PDF_BYTES, kind="offering_memorandum")
    assert fresh["id"] != doc["id"] and fresh["versions_count"] == 1
    assert_error(post_file(api, deal, "x.pdf", PDF_BYTES, document_id=doc["id"]), 404, "NOT_FOUND", "Document")


# --- hostile files -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "data", "says"), [
    ("invoice.pdf", EXE_BYTES, "is refused: it is an executable program"),
    ("setup.exe", EXE_BYTES, "is refused: it is an executable program"),
    ("rent roll.xlsx", b"Unit,Rent\n101,1450\n", "is not an Excel workbook (XLSX): its content is plain text"),
    ("rent roll.xlsx", b"PK\x03\x04 not really a zip", "is not an Excel workbook (XLSX): it is not a readable zip"),
    ("om.pdf", b"\x89PNG\r\n\x1a\n" + b"\x00" * 32, "is not a PDF: its content is image/png"),
    ("t12.csv", b"\x00\x01\x02\x03binary", "is not a CSV text file"),
    ("report.docx", xlsx_bytes(), "is not a Word document: its content is an Excel workbook"),
    ("empty.pdf", b"", "The submitted file is empty"),
])
def test_a_file_whose_bytes_contradict_its_name_is_refused_and_nothing_is_kept(api, deal, documents_dir, name,
                                                                               data, says):
    body = assert_error(post_file(api, deal, name, data), 400, "VALIDATION_ERROR", "Validation failed: file")
    assert says in body["details"]["fields"]["file"][0], body
    assert not Document.objects.exists() and not DocumentVersion.objects.exists()
    assert not documents_dir.exists() or not any(p.is_file() for p in documents_dir.rglob("*"))


def test_a_zip_bomb_and_an_xml_bomb_posing_as_xlsx_are_refused_without_extracting(api, deal, settings):
    bomb = zip_bomb_xlsx()
    assert len(bomb) < 200_000  # 64 MB of zeros in under 200 kB
    body = assert_error(post_file(api, deal, "rent roll.xlsx", bomb), 400, "VALIDATION_ERROR",
                        "Validation failed: file is refused: it is a zip bomb")
    assert "inflates more than 100 times" in body["message"]
    settings.LEV_DOCUMENT_UNZIPPED_MAX_BYTES = 1024 * 1024  # many parts each under the ratio, too much in all
    parts = {f"xl/media/p{i}.bin": bytes(range(256)) * 2048 for i in range(4)}
    assert_error(post_file(api, deal, "rent roll.xlsx", xlsx_bytes(extra=parts)), 400, "VALIDATION_ERROR",
                 "Validation failed: file is refused: its contents would inflate to more than 1048576 bytes")
    assert_error(post_file(api, deal, "t12.xlsx", xml_bomb_xlsx()), 400, "VALIDATION_ERROR",
                 "Validation failed: file is refused: one of its XML parts declares a DTD")
    assert not Document.objects.exists()
    # A real workbook passes, typed from its parts.
    doc = uploaded(api, deal, "rent roll.xlsx", xlsx_bytes(), kind="rent_roll")
    assert doc["current"]["content_type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@pytest.mark.parametrize(("sent", "kept"), [
    ("../../etc/passwd.pdf", "passwd.pdf"),
    ("..\\..\\windows\\om.pdf", "om.pdf"),
    ("om\x00.exe.pdf", "om.exe.pdf"),
    ("invoice\u202efdp.exe.pdf", "invoicefdp.exe.pdf"),
    ("....pdf", "document.pdf"),
    ("Q3 rent roll — Tour Eiffel.pdf", "Q3 rent roll — Tour Eiffel.pdf"),
    ("x" * 400 + ".pdf", "x" * 196 + ".pdf"),
])
def test_file_names_through_rest_are_kept_safe(api, deal, sent, kept, documents_dir):
    doc = uploaded(api, deal, sent, PDF_BYTES)
    assert doc["current"]["file_name"] == kept and doc["name"] == kept
    stored = DocumentVersion.objects.get(document_id=doc["id"]).file.name
    assert stored.startswith(f"{deal.account_id}/{deal.pk}/") and ".." not in stored
    assert (documents_dir / stored).resolve().is_relative_to(documents_dir.resolve())
    response = api.get(f"/api/v1/documents/{doc['id']}/download/")
    disposition = response["Content-Disposition"]
    assert "\r" not in disposition and "\n" not in disposition and "\u202e" not in disposition
    assert unquote(disposition.split("filename*=UTF-8''", 1)[1]) == kept


@pytest.mark.parametrize(("sent", "kept"), [
    # What a multipart header cannot carry as it is (CR/LF end the header line; ".." is dropped by the
    # parser) reaches the service from an email's attachment or the admin: the same rules apply.
    ("om\r\nSet-Cookie: x=1.pdf", "om Set-Cookie x=1.pdf"),
    ("..", "document"),
    ("/", "document"),
    ("", "document"),
    (None, "document"),
    ("\u202e\u2066\u200f.pdf", "document.pdf"),
    ("rent roll.xlsx.", "rent roll.xlsx"),
    (".htaccess", "document.htaccess"),
    ('a<b>c:"d"|e?f*.csv', "abcdef.csv"),
    ("C:\\Users\\me\\Desktop\\T-12 2025.xlsx", "T-12 2025.xlsx"),
])
def test_safe_file_name(sent, kept):
    from deals.documents.files import safe_file_name

    assert safe_file_name(sent) == kept


def test_a_crlf_name_from_another_door_is_stored_safe(deal, user):
    from deals.documents import services
    from tests.deals.documents.helpers import upload

    version = services.document_add(deal=deal, upload=upload("om\r\nX-Evil: 1.pdf", PDF_BYTES), user=user,
                                    kind="offering_memorandum", source="email")
    assert (version.file_name, version.document.name, version.source) == ("om X-Evil 1.pdf", "om X-Evil 1.pdf",
                                                                          "email")


# --- limits ------------------------------------------------------------------------------------------------
class Unreadable(io.RawIOBase):
    """A request body that fails the test if anything reads it."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        raise AssertionError("the body was read")


def test_a_2gb_upload_is_refused_from_its_content_length_before_it_is_read(client, deal, api_key):
    response = client.generic("POST", docs_url(deal), b"", content_type="multipart/form-data; boundary=x",
                              CONTENT_LENGTH=str(2 * 1024**3), HTTP_AUTHORIZATION=f"Bearer {api_key}",
                              **{"wsgi.input": Unreadable()})
    body = assert_error(response, 413, "VALIDATION_ERROR", "Validation failed: file is too large")
    assert "at most 209715200 bytes (200 MB)" in body["message"]
    # Even without a credential: nothing is read, nothing is said about the deal.
    anonymous = client.generic("POST", docs_url(deal), b"", content_type="multipart/form-data; boundary=x",
                               CONTENT_LENGTH=str(2 * 1024**3), **{"wsgi.input": Unreadable()})
    assert anonymous.status_code == 413


def test_a_file_past_the_bound_is_stopped_by_the_upload_handler_while_it_streams(api, deal, settings,
                                                                                documents_dir):
    # The body's length is within the bound and its form (a lying client could send that much and more):
    # the handler counts the file's bytes and stops at the bound itself.
    settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES = 100_000
    response = post_file(api, deal, "big.pdf", PDF_BYTES + b"0" * 100_000)
    assert_error(response, 413, "VALIDATION_ERROR", "Validation failed: file is too large: a document may be at "
                                                    "most 100000 bytes")
    assert not DocumentVersion.objects.exists()
    assert uploaded(api, deal, "small.pdf", PDF_BYTES + b"0" * 90_000)["current"]["size"] == len(PDF_BYTES) + 90_000


def test_the_body_bound_lets_the_document_upload_path_through_and_no_other(settings):
    from lev.wsgi import body_limit

    settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES = 200 * 1024 * 1024
    assert body_limit("/api/v1/deals/12/documents/") == 200 * 1024 * 1024 + 64 * 1024
    assert body_limit("/admin/deals/deal/12/documents/upload/") == 200 * 1024 * 1024 + 64 * 1024
    for other in ("/api/v1/deals/12/", "/api/v1/deals/12/documents/x/", "/api/v1/documents/3/",
                  "/api/v1/deals/x/documents/", "/api/v1/deals/12/documents/?", "/api/v1/notes/",
                  "/xapi/v1/deals/12/documents/"):
        assert body_limit(other) == settings.DATA_UPLOAD_MAX_MEMORY_SIZE, other


def test_bad_form_fields_are_400(api, deal):
    assert_error(post_file(api, deal, "om.pdf", PDF_BYTES, kind="lease"), 400, "VALIDATION_ERROR",
                 "Validation failed: kind")
    assert_error(post_file(api, deal, "om.pdf", PDF_BYTES, colour="red"), 400, "VALIDATION_ERROR",
                 "Validation failed: colour is not a known field")
    assert_error(api.post(docs_url(deal), {"kind": "other"}, format="multipart"), 400, "VALIDATION_ERROR",
                 "Validation failed: file")
    assert_error(api.post(docs_url(deal), {"file": "text"}, format="json"), 400, "VALIDATION_ERROR",
                 "Validation failed: file")
    rr = uploaded(api, deal, "rr.csv", CSV_BYTES, kind="rent_roll")
    assert_error(post_file(api, deal, "rr.csv", CSV_BYTES, kind="t12", document_id=rr["id"]), 400,
                 "VALIDATION_ERROR", "Validation failed: kind must be the document's kind (rent_roll)")
    assert_error(api.get(docs_url(deal), {"kind": "lease"}), 400, "VALIDATION_ERROR", "Validation failed: kind")


# --- tenancy and scopes ------------------------------------------------------------------------------------
def test_another_account_gets_404_on_every_door(api, other_api, deal, other_account, documents_dir):
    doc = uploaded(api, deal, "om.pdf", PDF_BYTES, kind="offering_memorandum")
    for response in (other_api.get(docs_url(deal)), other_api.get(f"/api/v1/documents/{doc['id']}/"),
                     other_api.get(f"/api/v1/documents/{doc['id']}/download/"),
                     other_api.get(f"/api/v1/documents/{doc['id']}/download/", {"version": 1}),
                     other_api.delete(f"/api/v1/documents/{doc['id']}/"),
                     post_file(other_api, deal, "mine.pdf", PDF_BYTES)):
        body = assert_error(response, 404, "NOT_FOUND", "")
        assert "om.pdf" not in response.content.decode()
        assert body["details"]["resource"] in ("deal", "document")
    # Their own deal cannot take our document as a version.
    theirs = DealFactory(account=other_account)
    assert_error(post_file(other_api, theirs, "x.pdf", PDF_BYTES, document_id=doc["id"]), 404, "NOT_FOUND",
                 "Document not found")
    # Nor can our deal take a document of our other deal.
    second = DealFactory(account=deal.account)
    assert_error(post_file(api, second, "x.pdf", PDF_BYTES, document_id=doc["id"]), 404, "NOT_FOUND",
                 "Document not found")
    assert Document.objects.get(pk=doc["id"]).versions_count == 1 and Document.objects.count() == 1
    assert_error(api.get("/api/v1/documents/99999999999999999999/"), 404, "NOT_FOUND", "")


def test_a_key_without_deals_write_reads_but_never_uploads_or_removes(api, deal, user, account):
    doc = uploaded(api, deal, "om.pdf", PDF_BYTES)
    _key, raw = api_key_create(user=user, account=account, name="reader", scopes=frozenset({"deals:read"}))
    reader = client_with_key(raw)
    assert reader.get(docs_url(deal)).status_code == 200
    assert body_of(reader.get(f"/api/v1/documents/{doc['id']}/download/")) == PDF_BYTES
    assert_error(post_file(reader, deal, "x.pdf", PDF_BYTES), 403, "FORBIDDEN", "Forbidden")
    assert_error(reader.delete(f"/api/v1/documents/{doc['id']}/"), 403, "FORBIDDEN", "Forbidden")
    _key, raw = api_key_create(user=user, account=account, name="placer", scopes=frozenset({"placements:read"}))
    assert_error(client_with_key(raw).get(docs_url(deal)), 403, "FORBIDDEN", "Forbidden")
    assert Document.objects.count() == 1


def test_the_storage_gone_is_a_503_and_nothing_is_recorded(api, deal, settings, tmp_path):
    blocked = tmp_path / "not-a-directory"
    blocked.write_bytes(b"a file where the storage's directory should be")
    settings.STORAGES = {**settings.STORAGES, "deal_documents": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(blocked)}}}
    assert storages["deal_documents"].location == str(blocked)
    body = assert_error(post_file(api, deal, "om.pdf", PDF_BYTES), 503, "UPSTREAM_UNAVAILABLE", "Service unavailable")
    assert str(blocked) not in body["message"]
    assert not Document.objects.exists()


def test_a_repeated_upload_with_its_idempotency_key_adds_no_version(api, deal, documents_dir):
    """A client that lost the answer sends the same upload again with the same key: the first answer comes
    back (marked replayed) and the deal has one version; the same key with another file is refused."""
    first = api.post(docs_url(deal), {"file": _named(PDF_BYTES, "OM.pdf"), "kind": "offering_memorandum"},
                     format="multipart", HTTP_IDEMPOTENCY_KEY="om-upload-1")
    again = api.post(docs_url(deal), {"file": _named(PDF_BYTES, "OM.pdf"), "kind": "offering_memorandum"},
                     format="multipart", HTTP_IDEMPOTENCY_KEY="om-upload-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert DocumentVersion.objects.filter(document__deal=deal).count() == 1
    # Another file under the same name and key: not the same request, so not replayed.
    other = api.post(docs_url(deal), {"file": _named(PDF_BYTES + b"% v2\n", "OM.pdf"), "kind": "offering_memorandum"},
                     format="multipart", HTTP_IDEMPOTENCY_KEY="om-upload-1")
    assert_error(other, 409, "CONFLICT", "Conflict: this Idempotency-Key was already used")
    assert DocumentVersion.objects.filter(document__deal=deal).count() == 1
    assert len([p for p in documents_dir.rglob("*") if p.is_file()]) == 1  # one file kept, none orphaned


def _named(data: bytes, name: str) -> io.BytesIO:
    part = io.BytesIO(data)
    part.name = name
    return part


def test_the_detail_lists_the_latest_versions_and_counts_them_all(api, deal, documents_dir):
    from lev.limits import DOCUMENT_VERSIONS_SHOWN

    for n in range(DOCUMENT_VERSIONS_SHOWN + 2):
        body = uploaded(api, deal, f"rent roll {n}.csv", CSV_BYTES + f"{200 + n},Tenant {n},1500\n".encode(),
                        kind="rent_roll")
    detail = api.get(f"/api/v1/documents/{body['id']}/").json()
    assert detail["versions_count"] == DOCUMENT_VERSIONS_SHOWN + 2
    assert [v["number"] for v in detail["versions"]] == list(range(DOCUMENT_VERSIONS_SHOWN + 2, 2, -1))
    oldest = api.get(f"/api/v1/documents/{body['id']}/download/?version=1")
    assert oldest.status_code == 200 and body_of(oldest).startswith(CSV_BYTES)
