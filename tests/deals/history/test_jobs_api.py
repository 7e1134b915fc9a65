"""The history import as a job through its REST door: upload → job → done with its counts, a preview
then its apply on the same stored file, a refused file with its problems and report, names to map then
applied, tenancy, the upload bound (413), and the error contract. Jobs run in-process (eager), as in the
embedded setup; the real worker's tests are in test_jobs_worker.py."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from deals.history.models import HistoryImport
from deals.models import Deal
from tests.deals.history.helpers import counts, rows_ab, write_csv
from tests.factories import LenderFactory

# Real commits: the job is queued when the upload's transaction commits, as in production.
pytestmark = pytest.mark.django_db(transaction=True)
URL = "/api/v1/history-imports/"


def stored(job_id: int) -> bool:
    """Whether the job's uploaded file is on the private storage."""
    job = HistoryImport.objects.get(pk=job_id)
    return bool(job.file) and job.file.storage.exists(job.file.name)


@pytest.fixture
def lenders():
    return {name: LenderFactory(name=name) for name in (
        "JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust", "Chase Capital Partners")}


def csv_bytes(tmp_path, rows, name="history.csv") -> bytes:
    return write_csv(tmp_path / name, rows).read_bytes()


def upload(api, data: bytes, name="history.csv", **fields):
    return api.post(URL, {"file": SimpleUploadedFile(name, data, content_type="text/csv"), **fields},
                    format="multipart")


def test_an_upload_is_imported_as_a_job_and_done_with_its_counts(api, account, tmp_path, lenders, eager_jobs):
    answer = upload(api, csv_bytes(tmp_path, rows_ab()))

    assert answer.status_code == 202, answer.content
    job = answer.json()
    assert job["status"] == "done" and job["dry_run"] is False and job["file_name"] == "history.csv"
    assert job["progress"] == {"rows_read": 5, "rows_refused": 0, "deals_created": 2, "placements_created": 5,
                               "term_sheets_created": 3}
    assert job["summary"]["deals"] == 2 and job["summary"]["won"] == 1 and job["summary"]["unresolved"] == []
    assert job["links"]["self"] == f"{URL}{job['id']}/" and job["links"]["report"] == f"{URL}{job['id']}/report.csv"
    assert counts(account) == (2, 5, 3)
    # The imported deals' notes name the user's file, not the stored copy's name.
    assert "history.csv" in Deal.objects.get(account=account, external_id="CRM-1").notes.get().body
    # An applied import's file is deleted once it is done.
    name = HistoryImport.objects.get(pk=job["id"]).file.name
    assert job["file_kept"] is False and name == "" and not stored(job["id"])
    listed = api.get(URL).json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == job["id"]
    assert api.get(job["links"]["self"]).json()["status"] == "done"


def test_a_preview_writes_nothing_then_its_apply_imports_the_same_stored_file(api, account, tmp_path, lenders,
                                                                              eager_jobs):
    preview = upload(api, csv_bytes(tmp_path, rows_ab()), dry_run="true").json()

    assert preview["status"] == "done" and preview["dry_run"] is True
    assert counts(account) == (0, 0, 0)
    assert preview["progress"]["rows_read"] == 5 and preview["progress"]["deals_created"] == 0
    assert len(preview["plan"]) == 5 and preview["plan"][0].startswith("line 2: deal CRM-1")
    assert preview["file_kept"] is True and stored(preview["id"])
    kept = HistoryImport.objects.get(pk=preview["id"]).file
    assert kept.path.startswith(str(settings.BASE_DIR / "private")) and not kept.name.endswith("history.csv")

    applied = api.post(preview["links"]["apply"], {}, format="json")

    assert applied.status_code == 202, applied.content
    body = applied.json()
    assert body["id"] != preview["id"] and body["status"] == "done" and body["dry_run"] is False
    assert body["progress"]["deals_created"] == 2 and counts(account) == (2, 5, 3)
    assert not kept.storage.exists(kept.name) and not stored(preview["id"])
    # The file is gone: applying the preview again is refused in the contract, not a 500.
    again = api.post(preview["links"]["apply"], {}, format="json")
    assert again.status_code == 400 and again.json()["code"] == "VALIDATION_ERROR"
    assert again.json()["message"].startswith("Validation failed: ")


def test_a_refused_file_is_refused_with_its_problems_and_a_report(api, account, tmp_path, lenders, eager_jobs):
    rows = rows_ab()
    rows[0]["outcome"] = "ghosted"
    rows[3]["sent_on"] = "=HYPERLINK(\"http://x\")"
    job = upload(api, csv_bytes(tmp_path, rows)).json()

    assert job["status"] == "refused" and counts(account) == (0, 0, 0)
    assert job["message"].startswith("The file was refused, nothing was imported: 2 problem(s) in 2 row(s)")
    assert [(p["line"], p["column"]) for p in job["problems"]] == [(2, "outcome"), (5, "sent_on")]
    assert job["progress"]["rows_read"] == 5 and job["progress"]["rows_refused"] == 2

    report = api.get(job["links"]["report"])

    assert report.status_code == 200 and report["Content-Type"].startswith("text/csv")
    lines = list(csv.reader(io.StringIO(report.content.decode())))
    assert lines[0] == ["line", "column", "reason"]
    assert lines[1][:2] == ["2", "outcome"] and "ghosted" in lines[1][2]
    assert lines[2][:2] == ["5", "sent_on"]
    assert not any(cell.startswith(("=", "+", "-", "@")) for line in lines for cell in line)  # inert


def test_names_to_map_are_listed_with_candidates_then_mapped_and_applied(api, account, tmp_path, lenders,
                                                                         eager_jobs):
    rows = rows_ab()
    rows[3]["lender"] = "Chase"  # two Chases: a name to map
    job = upload(api, csv_bytes(tmp_path, rows)).json()

    assert job["status"] == "refused" and job["problems"] == []
    [name] = job["summary"]["unresolved"]
    assert name["name"] == "Chase" and name["first_line"] == 5 and name["rows"] == 1
    wells = lenders["Wells Fargo Bank"]
    report = api.get(job["links"]["report"]).content.decode()
    assert '5,lender,"the lender name ""Chase"" matches no lender' in report

    mapped = api.post(job["links"]["apply"], {"mapping": {"Chase": wells.pk}}, format="json").json()

    assert mapped["status"] == "done" and mapped["mapping"] == {"Chase": wells.pk}
    assert counts(account) == (2, 5, 3)


def test_a_mapping_as_repeated_form_values_and_new_lenders_are_read(api, account, tmp_path, lenders, eager_jobs):
    rows = rows_ab()
    rows[3]["lender"] = "Chase"
    rows[4]["lender"] = "Brand New Debt Fund"
    wells = lenders["Wells Fargo Bank"]
    job = upload(api, csv_bytes(tmp_path, rows), mapping=[f"Chase={wells.pk}"],
                 new_lenders=["Brand New Debt Fund"]).json()

    assert job["status"] == "done", job
    assert job["summary"]["new_lenders"] == ["Brand New Debt Fund"]
    assert counts(account) == (2, 5, 3)


@pytest.mark.parametrize(("fields", "field"), [
    ({"mapping": "Chase=abc"}, "mapping"),
    ({"mapping": "{not json"}, "mapping"),
    ({"new_lenders": json.dumps(["x" * 300])}, "new_lenders"),
])
def test_bad_fields_are_a_validation_error(api, account, tmp_path, lenders, eager_jobs, fields, field):
    answer = upload(api, csv_bytes(tmp_path, rows_ab()), **fields)
    assert answer.status_code == 400
    assert answer.json()["code"] == "VALIDATION_ERROR" and field in answer.json()["details"]["fields"]
    assert not HistoryImport.objects.exists()


def test_no_file_or_an_empty_one_is_a_validation_error(api, account, eager_jobs):
    assert api.post(URL, {"dry_run": "true"}, format="multipart").json()["details"]["fields"]["file"]
    answer = upload(api, b"")
    assert answer.status_code == 400 and "file" in answer.json()["details"]["fields"]


@override_settings(LEV_HISTORY_UPLOAD_MAX_BYTES=1000)
def test_an_upload_over_the_bound_is_413_before_it_is_read(api, account, tmp_path, lenders, eager_jobs):
    answer = upload(api, csv_bytes(tmp_path, rows_ab() * 5))
    assert answer.status_code == 413
    body = answer.json()
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"] == "Validation failed: file must be at most 1000 bytes"
    assert not HistoryImport.objects.exists()


def test_another_accounts_import_is_not_found(api, other_api, account, tmp_path, lenders, eager_jobs):
    job = upload(api, csv_bytes(tmp_path, rows_ab()), dry_run="true").json()
    for answer in (other_api.get(f"{URL}{job['id']}/"), other_api.get(f"{URL}{job['id']}/report.csv"),
                   other_api.post(f"{URL}{job['id']}/apply/", {}, format="json")):
        assert answer.status_code == 404
        assert answer.json() == {"code": "NOT_FOUND", "message": f"History import not found: {job['id']}",
                                 "details": {"resource": "history_import", "id": str(job["id"])}}
    assert other_api.get(URL).json()["count"] == 0
    assert counts(account) == (0, 0, 0)


def test_a_200_mb_upload_is_413_from_its_length_never_read(api, account, eager_jobs):
    """The view refuses it from Content-Length, before the body is read (this one has a few bytes only)."""
    answer = api.generic("POST", URL, b"--x--\r\n", content_type="multipart/form-data; boundary=x",
                         CONTENT_LENGTH=str(200 * 1024 * 1024))
    assert answer.status_code == 413
    assert answer.json()["message"] == f"Validation failed: file must be at most {64 * 1024 * 1024} bytes"
    assert not HistoryImport.objects.exists()


def test_the_servers_body_bound_lets_this_path_alone_carry_an_upload(settings):
    """lev.asgi's BodyGuard and lev.wsgi read the bound of a path from body_limit: 413 from the
    Content-Length of a 200 MB upload, before any of it is received."""
    import asyncio

    from lev.asgi import BodyGuard
    from lev.wsgi import body_limit

    assert body_limit(URL) == settings.LEV_HISTORY_UPLOAD_MAX_BYTES == 64 * 1024 * 1024
    assert body_limit("/api/v1/deals/") == settings.DATA_UPLOAD_MAX_MEMORY_SIZE

    sent: list[dict] = []

    async def app(scope, receive, send):  # never reached
        raise AssertionError("the application ran")

    async def receive():
        raise AssertionError("the body was read")

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "path": URL, "method": "POST",
             "headers": [(b"content-length", str(200 * 1024 * 1024).encode())]}
    asyncio.run(BodyGuard(app)(scope, receive, send))
    assert sent[0]["status"] == 413
    body = json.loads(sent[1]["body"])
    assert body["code"] == "VALIDATION_ERROR" and body["message"].startswith("Validation failed: ")


def test_an_unknown_field_is_refused_not_ignored(api, account, tmp_path, lenders, eager_jobs):
    answer = upload(api, csv_bytes(tmp_path, rows_ab()), dryrun="true")
    assert answer.status_code == 400 and answer.json()["details"]["fields"] == {"dryrun": ["is not a known field"]}
    assert not HistoryImport.objects.exists()
