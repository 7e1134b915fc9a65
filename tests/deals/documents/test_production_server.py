"""A document's upload and download through the production server (the Dockerfile's CMD: gunicorn's ASGI
worker running lev.asgi), over real sockets: a multi-megabyte upload under the bound is kept whole (its body
spooled to a temporary file by BodyGuard), downloaded back as an attachment (the streamed response sent in
pieces), a Content-Length past the bound is refused 413 unread, a chunked body past it 413 as soon as it
passes, and another path keeps the small bound. PostgreSQL only: the server is a second process."""

from __future__ import annotations

import hashlib
import os

import httpx
import pytest

from tests.deploy.production_server import HOST, member_key, raw_request, running
from tests.factories import DealFactory

pytestmark = pytest.mark.slow

LIMIT = 8 * 1024 * 1024


@pytest.fixture
def server(transactional_db, tmp_path):
    with running(tmp_path, LEV_DOCUMENT_UPLOAD_MAX_BYTES=str(LIMIT), LEV_DOCUMENTS_DIR=str(tmp_path / "documents"),
                 LEV_REQUEST_BODY_TIMEOUT_SECONDS="20") as running_server:
        yield running_server


def test_upload_and_download_through_the_production_server(server):
    account, key = member_key("uploader")
    deal = DealFactory(account=account)
    auth = {"Authorization": f"Bearer {key}"}
    data = b"%PDF-1.7\n" + os.urandom(6 * 1024 * 1024)  # past DATA_UPLOAD_MAX_MEMORY_SIZE, under the bound
    url = f"{server.url}/api/v1/deals/{deal.pk}/documents/"
    answer = httpx.post(url, headers=auth, files={"file": ("om.pdf", data, "application/pdf")},
                        data={"kind": "offering_memorandum"}, timeout=60)
    assert answer.status_code == 201, answer.text[:500]
    document = answer.json()
    assert document["current"]["sha256"] == hashlib.sha256(data).hexdigest()

    download = httpx.get(f"{server.url}/api/v1/documents/{document['id']}/download/", headers=auth, timeout=60)
    assert download.status_code == 200 and download.content == data
    assert download.headers["content-disposition"].startswith("attachment;")
    assert download.headers["x-content-type-options"] == "nosniff"

    # A Content-Length past the bound: 413 at once, nothing read.
    status, _headers, body = raw_request(server.port, (
        f"POST /api/v1/deals/{deal.pk}/documents/ HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: {2 * 1024 ** 3}\r\n\r\n").encode())
    assert status == 413 and b"VALIDATION_ERROR" in body
    # A chunked body that passes the bound: 413 as soon as it does.
    piece = b"x" * (1024 * 1024)
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(10)) + b"0\r\n\r\n"
    status, _headers, body = raw_request(server.port, (
        f"POST /api/v1/deals/{deal.pk}/documents/ HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: multipart/form-data; boundary=x\r\nTransfer-Encoding: chunked\r\n\r\n").encode() + chunks)
    assert status == 413 and b"must be at most" in body
    # Another path keeps the small bound.
    status, _headers, _body = raw_request(server.port, (
        f"POST /api/v1/deals/{deal.pk}/ HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {4 * 1024 * 1024}\r\n\r\n").encode())
    assert status == 413
