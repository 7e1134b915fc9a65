"""The deal page's Documents panel in the admin, through the Django test client: the list (kind, name,
version, size, who, when, version history), uploads of several files (a plain multipart form: what the
drop zone posts, and what works without scripts) through the same service as REST, a refused file as a
message, a file too large refused before its body is read, CSRF checked once the bounded handler is in
place, downloads as attachments, and tenancy: another account's deal or document is the admin's "not
found", a viewer uploads nothing."""

from __future__ import annotations

import io

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from deals.documents import services
from deals.models import Document, DocumentVersion
from lev.accounts.models import Membership
from tests.admin_helpers import admin_client, staff_user
from tests.deals.documents.helpers import CSV_BYTES, EXE_BYTES, PDF_BYTES, upload
from tests.factories import AccountFactory, DealFactory, MembershipFactory

pytestmark = pytest.mark.django_db

DEAL_PERMISSIONS = ("view_deal", "change_deal")


@pytest.fixture
def member(account):
    user = staff_user("member", *DEAL_PERMISSIONS)
    MembershipFactory(account=account, user=user)
    return user


@pytest.fixture
def deal(account):
    return DealFactory(account=account, title="Harbor Flats")


def page(deal) -> str:
    return reverse("admin:deals_deal_change", args=[deal.pk])


def upload_url(deal) -> str:
    return reverse("admin:deals_deal_documents_upload", args=[deal.pk])


def download_url(deal, document_id) -> str:
    return reverse("admin:deals_deal_document_download", args=[deal.pk, document_id])


def named(name: str, data: bytes) -> io.BytesIO:
    part = io.BytesIO(data)
    part.name = name
    return part


def messages_of(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_panel_lists_documents_with_their_history_and_an_accessible_upload_form(member, deal):
    services.document_add(deal=deal, upload=upload("rr-jan.csv", CSV_BYTES), kind="rent_roll", user=member)
    services.document_add(deal=deal, upload=upload("rr-feb.csv", CSV_BYTES + b"1\n"), kind="rent_roll", user=member)
    html = admin_client(member).get(page(deal)).content.decode()
    panel = html.split('id="documents"', 1)[1].split("</section>", 1)[0]
    assert "Rent roll" in panel and "rr-feb.csv" in panel and "member" in panel
    assert "Version history (2 versions)" in panel and "?version=1" in panel and "rr-jan.csv" in panel
    # Labelled controls: the file input (multiple), the kind, the version target; a plain form posting them.
    for control in ('<label for="lev-documents-files">', 'id="lev-documents-files" name="files" multiple',
                    '<label for="lev-documents-kind">', '<label for="lev-documents-version-of">',
                    'enctype="multipart/form-data"', "csrfmiddlewaretoken"):
        assert control in panel, control
    assert "lev_admin/documents.js" in html


def test_uploads_of_several_files_through_the_form_and_a_refused_one_said(member, deal):
    client = admin_client(member)
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 9
    response = client.post(upload_url(deal), {"kind": "photo", "files": [named("front.png", png),
                                                                        named("back.pdf", EXE_BYTES)]})
    assert response.status_code == 302 and response["Location"] == page(deal) + "#documents"
    said = messages_of(response)
    assert said[0].startswith("front.png kept as front.png, version 1")
    assert said[1].startswith("back.pdf: file is refused: it is an executable program")
    assert list(Document.objects.values_list("kind", "name")) == [("photo", "front.png")]
    # A rent roll twice: one document, two versions; then an explicit new version of the photo.
    client.post(upload_url(deal), {"kind": "rent_roll", "files": [named("rr1.csv", CSV_BYTES)]})
    client.post(upload_url(deal), {"kind": "rent_roll", "files": [named("rr2.csv", CSV_BYTES + b"2\n")]})
    rent_roll = Document.objects.get(kind="rent_roll")
    assert rent_roll.versions_count == 2 and rent_roll.current.file_name == "rr2.csv"
    photo = Document.objects.get(kind="photo")
    client.post(upload_url(deal), {"kind": "other", "document_id": str(photo.pk),
                                   "files": [named("front-2.png", b"\x89PNG\r\n\x1a\n" + b"1" * 9)]})
    photo.refresh_from_db()
    assert photo.versions_count == 2 and photo.kind == "photo"
    # Nothing chosen, a bad kind, another deal's document: messages, nothing kept.
    assert messages_of(client.post(upload_url(deal), {"kind": "photo"}))[-1:] == [
        "Choose or drop one or more files to upload."]
    assert messages_of(client.post(upload_url(deal), {"kind": "lease", "files": [named("a.pdf", PDF_BYTES)]}))[-1:] == [
        "Choose a kind from the list."]
    other_deal = DealFactory(account=deal.account)
    theirs = services.document_add(deal=other_deal, upload=upload("x.pdf", PDF_BYTES)).document
    assert messages_of(client.post(upload_url(deal), {"document_id": str(theirs.pk),
                                                      "files": [named("a.pdf", PDF_BYTES)]}))[-1:] == [
        "That document is not one of this deal's."]
    assert DocumentVersion.objects.count() == 5


def test_a_file_too_large_is_refused_unread_or_stopped_while_it_streams(member, deal, settings):
    settings.LEV_DOCUMENT_UPLOAD_MAX_BYTES = 50_000
    client = admin_client(member)
    response = client.post(upload_url(deal), {"files": [named("big.pdf", PDF_BYTES + b"0" * 60_000)]})
    assert messages_of(response) == ["The upload is too large: a document may be at most 0 MB. Nothing was kept."]
    assert not DocumentVersion.objects.exists()
    # From its Content-Length alone (the body is never read).
    response = client.generic("POST", upload_url(deal), b"", content_type="multipart/form-data; boundary=x",
                              CONTENT_LENGTH=str(2 * 1024**3))
    assert response.status_code == 302
    assert len(messages_of(response)) == 2 and messages_of(response)[-1].startswith("The upload is too large")


def test_csrf_is_checked_on_the_upload(member, deal):
    client = Client(enforce_csrf_checks=True)
    client.force_login(member)
    response = client.post(upload_url(deal), {"files": [named("a.pdf", PDF_BYTES)]})
    assert response.status_code == 403 and not DocumentVersion.objects.exists()


def test_download_is_an_attachment_of_the_version_asked(member, deal):
    services.document_add(deal=deal, upload=upload("t12 jan.csv", CSV_BYTES), kind="t12", user=member)
    version = services.document_add(deal=deal, upload=upload("t12 feb.csv", CSV_BYTES + b"x\n"), kind="t12")
    client = admin_client(member)
    response = client.get(download_url(deal, version.document_id))
    assert response.status_code == 200 and b"".join(response.streaming_content) == CSV_BYTES + b"x\n"
    assert response["Content-Disposition"].startswith("attachment;") and response["X-Content-Type-Options"] == "nosniff"
    first = client.get(download_url(deal, version.document_id) + "?version=1")
    assert b"".join(first.streaming_content) == CSV_BYTES
    assert client.get(download_url(deal, version.document_id) + "?version=9").status_code == 404


def test_another_accounts_deal_and_documents_are_not_found_and_a_viewer_uploads_nothing(member, deal, account):
    theirs = DealFactory(account=AccountFactory(slug="rival"))
    their_doc = services.document_add(deal=theirs, upload=upload("their.pdf", PDF_BYTES)).document
    ours = services.document_add(deal=deal, upload=upload("ours.pdf", PDF_BYTES)).document
    client = admin_client(member)
    assert client.get(download_url(theirs, their_doc.pk)).status_code == 404
    assert client.get(download_url(deal, their_doc.pk)).status_code == 404  # not a document of our deal
    response = client.post(upload_url(theirs), {"files": [named("x.pdf", PDF_BYTES)]})
    assert response.status_code == 404
    assert Document.objects.filter(deal=theirs).count() == 1 and DocumentVersion.objects.count() == 2
    assert client.get(download_url(deal, ours.pk)).status_code == 200

    viewer = staff_user("viewer", *DEAL_PERMISSIONS)
    MembershipFactory(account=account, user=viewer, role=Membership.Role.VIEWER)
    viewing = admin_client(viewer)
    assert 'name="files"' not in viewing.get(page(deal)).content.decode()
    response = viewing.post(upload_url(deal), {"files": [named("x.pdf", PDF_BYTES)]})
    assert messages_of(response) == ["x.pdf: Forbidden: viewers of an account cannot change its deals."]
    assert DocumentVersion.objects.count() == 2
