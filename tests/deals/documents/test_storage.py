"""The same storage tests on each storage a deal's documents can live on: the local file system (the
embedded default) and S3-compatible object storage through django-storages, against a REAL S3 HTTP server
the test starts: moto's server mode (`moto[server]`), which stands in for MinIO where no MinIO runs (this
machine, CI). With LEV_TEST_S3_ENDPOINT_URL (and LEV_TEST_S3_BUCKET, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY in the environment) the same tests also run against that server, e.g. the MinIO of
docker-compose.yml: `LEV_TEST_S3_ENDPOINT_URL=http://127.0.0.1:9000 LEV_TEST_S3_BUCKET=lev-documents ...`.

Each: upload through REST, the bytes on the storage, versions, download (streamed from the file system;
on S3 a 302 to a signed, short-lived URL whose answer is an attachment), a removed document's file kept,
private objects, and the storage gone (a closed port, a path that is a file): 503, nothing recorded."""

from __future__ import annotations

import hashlib
import io
import os
import socket
import uuid
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
import requests

from deals.documents.models import Document, DocumentVersion
from lev.settings import documents_s3_storage
from tests.deals.documents.helpers import CSV_BYTES, PDF_BYTES
from tests.deals.test_api import assert_error
from tests.factories import DealFactory

pytestmark = pytest.mark.django_db

MINIO = os.environ.get("LEV_TEST_S3_ENDPOINT_URL")
STORAGE_KINDS = ["filesystem", "s3-moto"] + (["s3-minio"] if MINIO else [])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def moto_endpoint():
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


class Place:
    """Where this run's files go, and how the test reads them back from there."""

    def __init__(self, kind: str, *, root=None, endpoint: str | None = None, bucket: str | None = None):
        self.kind, self.root, self.endpoint, self.bucket = kind, root, endpoint, bucket

    @property
    def s3(self) -> bool:
        return self.kind.startswith("s3")

    def client(self):
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1")

    def read(self, name: str) -> bytes:
        if self.s3:
            return self.client().get_object(Bucket=self.bucket, Key=name)["Body"].read()
        return (self.root / name).read_bytes()


@pytest.fixture(params=STORAGE_KINDS)
def place(request, settings, tmp_path, monkeypatch):
    settings.LEV_DOCUMENTS_URL_SECONDS = 300
    if request.param == "filesystem":
        settings.STORAGES = {**settings.STORAGES, "deal_documents": {
            "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}}}
        return Place("filesystem", root=tmp_path)
    if request.param == "s3-moto":
        endpoint, bucket = request.getfixturevalue("moto_endpoint"), f"lev-documents-{uuid.uuid4().hex[:12]}"
        for name, value in (("AWS_ACCESS_KEY_ID", "moto"), ("AWS_SECRET_ACCESS_KEY", "moto-secret")):
            monkeypatch.setenv(name, value)
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket=bucket)
    else:
        endpoint, bucket = MINIO, os.environ.get("LEV_TEST_S3_BUCKET", "lev-documents")
    settings.STORAGES = {**settings.STORAGES, "deal_documents": documents_s3_storage(
        bucket=bucket, endpoint_url=endpoint, region="us-east-1", url_seconds=settings.LEV_DOCUMENTS_URL_SECONDS)}
    return Place(request.param, endpoint=endpoint, bucket=bucket)


def post_file(client, deal, file_name: str, data: bytes, **fields):
    part = io.BytesIO(data)
    part.name = file_name
    return client.post(f"/api/v1/deals/{deal.pk}/documents/", {"file": part, **fields}, format="multipart")


def downloaded(client, place: Place, path: str, **query) -> tuple[bytes, str]:
    """(the bytes, their Content-Disposition) as a browser gets them: on S3 by following the redirect."""
    response = client.get(path, query)
    if not place.s3:
        assert response.status_code == 200, response.content
        return b"".join(response.streaming_content), response["Content-Disposition"]
    assert response.status_code == 302, response.content
    signed = response["Location"]
    fetched = requests.get(signed, timeout=10)
    assert fetched.status_code == 200, fetched.text[:300]
    return fetched.content, fetched.headers["Content-Disposition"]


def test_upload_versions_and_download_on_each_storage(api, account, place):
    deal = DealFactory(account=account)
    first = post_file(api, deal, "rent roll jan.csv", CSV_BYTES, kind="rent_roll").json()
    second = post_file(api, deal, "rent roll — feb.csv", CSV_BYTES + b"103,Lee,1500\n", kind="rent_roll").json()
    assert second["id"] == first["id"] and second["versions_count"] == 2
    versions = {v.number: v for v in DocumentVersion.objects.filter(document_id=first["id"])}
    assert place.read(versions[1].file.name) == CSV_BYTES
    assert place.read(versions[2].file.name) == CSV_BYTES + b"103,Lee,1500\n"
    assert versions[1].file.name.startswith(f"{account.pk}/{deal.pk}/") and "rent" not in versions[1].file.name
    assert versions[2].sha256 == hashlib.sha256(CSV_BYTES + b"103,Lee,1500\n").hexdigest()

    data, disposition = downloaded(api, place, f"/api/v1/documents/{first['id']}/download/")
    assert data == CSV_BYTES + b"103,Lee,1500\n"
    assert disposition.startswith("attachment;") and "filename*=UTF-8''rent%20roll%20%E2%80%94%20feb.csv" in disposition
    data, _ = downloaded(api, place, f"/api/v1/documents/{first['id']}/download/", version=1)
    assert data == CSV_BYTES

    # Removed from the deal's list, its files stay where they are.
    assert api.delete(f"/api/v1/documents/{first['id']}/").status_code == 204
    assert place.read(versions[1].file.name) == CSV_BYTES


def test_on_s3_the_download_is_a_signed_short_lived_url_and_the_objects_are_private(api, account, place, settings):
    if not place.s3:
        pytest.skip("the file system serves the file itself (test_upload_versions_and_download_on_each_storage)")
    deal = DealFactory(account=account)
    doc = post_file(api, deal, "om.pdf", PDF_BYTES, kind="offering_memorandum").json()
    response = api.get(f"/api/v1/documents/{doc['id']}/download/")
    assert response.status_code == 302 and response["Cache-Control"] == "private, no-store"
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["X-Amz-Expires"] == ["300"] and query["X-Amz-Signature"][0]
    assert query["response-content-disposition"][0].startswith("attachment;")
    assert query["response-content-type"] == ["application/pdf"]
    fetched = requests.get(response["Location"], timeout=10)
    assert fetched.headers["Content-Type"] == "application/pdf" and fetched.content == PDF_BYTES
    version = DocumentVersion.objects.get(document_id=doc["id"])
    grants = place.client().get_object_acl(Bucket=place.bucket, Key=version.file.name)["Grants"]
    assert not [g for g in grants if "AllUsers" in str(g) or "AuthenticatedUsers" in str(g)]
    settings.LEV_DOCUMENTS_URL_SECONDS = 60  # read on each download
    again = api.get(f"/api/v1/documents/{doc['id']}/download/")
    assert parse_qs(urlsplit(again["Location"]).query)["X-Amz-Expires"] == ["60"]
    if place.kind == "s3-minio":  # a real MinIO checks what moto does not: no signature, no object
        unsigned = response["Location"].split("?", 1)[0]
        assert requests.get(unsigned, timeout=10).status_code == 403


def test_the_storage_gone_is_a_503_and_nothing_is_recorded(api, account, place, settings, tmp_path):
    deal = DealFactory(account=account)
    if place.s3:
        settings.STORAGES = {**settings.STORAGES, "deal_documents": documents_s3_storage(
            bucket="lev-documents", endpoint_url=f"http://127.0.0.1:{free_port()}", region="us-east-1",
            url_seconds=300)}  # nothing listens there
    else:
        blocked = tmp_path / "a-file-not-a-directory"
        blocked.write_bytes(b"x")
        settings.STORAGES = {**settings.STORAGES, "deal_documents": {
            "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(blocked)}}}
    body = assert_error(post_file(api, deal, "om.pdf", PDF_BYTES), 503, "UPSTREAM_UNAVAILABLE",
                        "Service unavailable: the documents' storage could not keep the file")
    assert "127.0.0.1" not in body["message"] and str(tmp_path) not in body["message"]
    assert not Document.objects.exists() and not DocumentVersion.objects.exists()
