"""The admin's "Import history" pages (deals/history/admin_views.py), driven through Django's test client as a
deal team would: the template downloaded, a file uploaded for a preview, a lender name mapped, the preview
applied; a refused file's rows and report; bad uploads as form errors; tenancy and roles.

The jobs run in-process (eagerly, as the embedded default runs them; `eager_jobs` keeps it so when REDIS_URL is
set for the run), the last test on a real Celery worker with PostgreSQL and Redis (skipped without them).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from deals.history.models import HistoryImport
from deals.models import Deal, Placement, TermSheet
from lenders.models import Lender
from lev import limits
from lev.accounts.models import Membership
from tests.deals.history.helpers import HEADER, rows_ab, write_csv
from tests.deals.searches.worker_process import celery_worker, wait_for
from tests.factories import AccountFactory, LenderFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

INDEX = "admin:deals_history_import"
UNKNOWN = {"deal_external_id": "CRM-3", "deal_title": "Pine Ridge Storage", "loan_amount": "$4M",
           "loan_type": "light_bridge", "transaction_type": "acquisition", "state": "GA", "asset_type": "self_storage",
           "lender": "Peachtree Community Lenders", "sent_on": "2025-04-01", "outcome": "no answer"}
TEAM_PERMISSIONS = ("view_deal", "add_deal", "change_deal")


@pytest.fixture
def lenders():
    return {"jpm": LenderFactory(name="JPMorgan Chase Bank, N.A."), "wells": LenderFactory(name="Wells Fargo Bank"),
            "arbor": LenderFactory(name="Arbor Realty Trust"), "chase": LenderFactory(name="Chase Capital Partners")}


def team_member(account, username: str, role: str = Membership.Role.MEMBER):
    user = UserFactory(username=username, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="deals",
                                                        codename__in=TEAM_PERMISSIONS))
    MembershipFactory(account=account, user=user, role=role)
    return user


@pytest.fixture
def team():
    account = AccountFactory(name="Northwind Capital")
    user = team_member(account, "dana")
    client = Client()
    client.force_login(user)
    return {"account": account, "user": user, "client": client}


def upload(client: Client, path: Path | None, **extra):
    data = dict(extra)
    if path is not None:
        data["file"] = SimpleUploadedFile(path.name, path.read_bytes())
    return client.post(reverse("admin:deals_history_import_upload"), data)


def job_page(client: Client, response) -> tuple[HistoryImport, object]:
    """The job a POST redirected to, and its page."""
    assert response.status_code == 302, response.content[:2000]
    match = re.search(r"/import-history/(\d+)/$", response["Location"])
    assert match, response["Location"]
    job = HistoryImport.objects.get(pk=int(match.group(1)))
    page = client.get(response["Location"])
    assert page.status_code == 200
    return job, page


def text_of(page) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode()))


# --- the page ----------------------------------------------------------------------------------------
def test_the_template_and_the_example_download_as_the_docs_ship_them(team):
    docs = Path(django_settings.BASE_DIR) / "docs" / "examples"
    for which, name in (("template", "history-template.csv"), ("example", "history-example.csv")):
        answer = team["client"].get(reverse("admin:deals_history_import_download", args=[which]))
        assert answer.status_code == 200
        assert b"".join(answer.streaming_content) == (docs / name).read_bytes()
        assert answer["Content-Disposition"] == f'attachment; filename="{name}"'
    assert team["client"].get(reverse("admin:deals_history_import_download", args=["secrets"])).status_code == 404


def test_the_page_offers_the_template_the_upload_and_its_accounts_past_imports_only(team):
    other = AccountFactory(name="Other Team")
    HistoryImport.objects.create(account=team["account"], created_by=team["user"], file_name="our-2024.csv",
                                 dry_run=True, status=HistoryImport.Status.DONE,
                                 summary={"deals": 4, "placements": 9, "term_sheets": 1})
    HistoryImport.objects.create(account=other, file_name="their-secret.csv", status=HistoryImport.Status.DONE)

    page = team["client"].get(reverse(INDEX))

    assert page.status_code == 200
    html = page.content.decode()
    assert reverse("admin:deals_history_import_download", args=["template"]) in html
    assert 'enctype="multipart/form-data"' in html and 'name="file"' in html
    assert "our-2024.csv" in html and "would create 4 deals, 9 placements, 1 quote" in text_of(page)
    assert "their-secret.csv" not in html
    # One account: nothing to choose, the form carries it.
    assert 'name="account"' not in html and '<strong id="import-account">Northwind Capital</strong>' in html
    # The deal list leads here.
    deals = team["client"].get(reverse("admin:deals_deal_changelist"))
    assert reverse(INDEX) in deals.content.decode()


def test_a_member_of_several_accounts_chooses_one_and_only_among_its_own(team, lenders, tmp_path,
                                                                       django_capture_on_commit_callbacks):
    second = AccountFactory(name="Second Fund")
    MembershipFactory(account=second, user=team["user"], role=Membership.Role.OWNER)
    viewer_only = AccountFactory(name="Read Only LP")
    MembershipFactory(account=viewer_only, user=team["user"], role=Membership.Role.VIEWER)
    stranger = AccountFactory(name="Stranger Co")

    page = team["client"].get(reverse(INDEX))
    choices = {str(a) for a in page.context["form"].fields["account"].queryset}
    assert choices == {"Northwind Capital", "Second Fund"}

    path = write_csv(tmp_path / "history.csv", rows_ab())
    for foreign in (stranger, viewer_only):
        refused = upload(team["client"], path, account=foreign.pk)
        assert refused.status_code == 400 and "account" in refused.context["form"].errors
    assert not HistoryImport.objects.exists()
    with django_capture_on_commit_callbacks(execute=False):  # stored and queued, not run: the choice is the point
        started = upload(team["client"], path, account=second.pk)
    assert started.status_code == 302
    assert HistoryImport.objects.get().account == second


@pytest.mark.parametrize(("name", "content", "says"), [
    ("history.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "not a spreadsheet"),
    ("history.csv", b"deal_title,lender\nOak,JP Morgan\n", "lacks the column"),
    ("history.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, "Excel 97-2003"),
    ("history.xlsx", b"PK\x03\x04 not really a workbook", "not an XLSX workbook"),
])
def test_a_file_that_cannot_be_imported_is_a_form_error_and_no_job(team, name, content, says):
    answer = team["client"].post(reverse("admin:deals_history_import_upload"),
                                 {"file": SimpleUploadedFile(name, content)})

    assert answer.status_code == 400
    errors = " ".join(answer.context["form"].errors["file"])
    assert says in errors and name in errors
    assert 'role="alert"' in answer.content.decode()
    assert not HistoryImport.objects.exists()


def test_no_file_and_an_empty_file_are_form_errors(team):
    missing = team["client"].post(reverse("admin:deals_history_import_upload"), {})
    assert missing.status_code == 400
    assert missing.context["form"].errors["file"] == ["Choose the history file to upload."]
    empty = team["client"].post(reverse("admin:deals_history_import_upload"),
                                {"file": SimpleUploadedFile("history.csv", b"")})
    assert empty.status_code == 400 and "empty" in empty.context["form"].errors["file"][0]
    assert not HistoryImport.objects.exists()


def test_a_file_over_the_bound_is_refused_unread_as_a_form_error(team, tmp_path):
    big = tmp_path / "huge.csv"
    with big.open("wb") as file:
        file.write((",".join(HEADER) + "\n").encode())
        file.truncate(limits.HISTORY_FILE_MAX_BYTES + 1)

    with big.open("rb") as file:
        answer = team["client"].post(reverse("admin:deals_history_import_upload"), {"file": file})

    assert answer.status_code == 400
    assert answer.context["form"].errors["file"] == [
        f"The file is larger than {limits.HISTORY_FILE_MAX_BYTES // 2**20} MB; split it (by year, say) and import "
        "each part."]
    assert not HistoryImport.objects.exists()


# --- the flow ----------------------------------------------------------------------------------------
def test_upload_preview_map_a_name_apply_and_the_deals_are_there(team, lenders, tmp_path, eager_jobs,
                                                                 django_capture_on_commit_callbacks):
    client = team["client"]
    path = write_csv(tmp_path / "crm-export.csv", [*rows_ab(), UNKNOWN])

    # The upload starts a preview; the name no lender matches refuses it, listed with its choices.
    with django_capture_on_commit_callbacks(execute=True):
        sent = upload(client, path)
    job, page = job_page(client, sent)
    job.refresh_from_db()
    assert job.dry_run and job.status == HistoryImport.Status.REFUSED
    html = page.content.decode()
    assert "Lender names to match" in html and "Peachtree Community Lenders" in html
    assert '<option value="">Choose…</option>' in html and "selected" not in html.split('id="names-form"')[1]
    assert "Add “Peachtree Community Lenders” as our own lender" in html
    assert Deal.objects.filter(account=team["account"]).count() == 0

    # Unchosen: asked again, nothing started.
    again = client.post(reverse("admin:deals_history_import_apply", args=[job.pk]), {"then": "apply"})
    assert again.status_code == 302 and HistoryImport.objects.count() == 1

    # Mapped (added as the team's own lender), previewed again: the preview says what it would create.
    field = page.context["names"][0]["field"]
    with django_capture_on_commit_callbacks(execute=True):
        sent = client.post(reverse("admin:deals_history_import_apply", args=[job.pk]),
                           {field: "new", "then": "preview"})
    preview, page = job_page(client, sent)
    preview.refresh_from_db()
    assert preview.dry_run and preview.status == HistoryImport.Status.DONE, preview.message
    assert preview.new_lenders == ["Peachtree Community Lenders"]
    shown = text_of(page)
    assert "the import will create: 3 new deals" in shown
    assert "6 placements" in shown and "3 quotes" in shown and "1 won deal" in shown
    assert "Will add as your own lender: Peachtree Community Lenders" in shown
    assert "line 2: deal CRM-1" in shown  # the plan, row by row
    assert 'id="apply"' in page.content.decode()
    assert Deal.objects.filter(account=team["account"]).count() == 0  # a preview writes nothing
    assert not Lender.objects.filter(name="Peachtree Community Lenders").exists()

    # Applied: the deals, placements and quotes are there, with the team's own new lender.
    with django_capture_on_commit_callbacks(execute=True):
        sent = client.post(reverse("admin:deals_history_import_apply", args=[preview.pk]), {"then": "apply"})
    applied, page = job_page(client, sent)
    applied.refresh_from_db()
    assert not applied.dry_run and applied.status == HistoryImport.Status.DONE, applied.message
    assert Deal.objects.filter(account=team["account"]).count() == 3
    assert Placement.objects.filter(deal__account=team["account"]).count() == 6
    assert TermSheet.objects.filter(deal__account=team["account"]).count() == 3
    own = Lender.objects.get(name="Peachtree Community Lenders")
    assert own.account_id == team["account"].pk
    assert Placement.objects.filter(lender=own, deal__external_id="CRM-3").exists()
    shown = text_of(page)
    assert "The history is imported" in shown and "the import created: 3 new deals" in shown
    # Its link lists the imported deals.
    deals_url = page.context["deals_url"]
    listed = client.get(deals_url)
    assert listed.status_code == 200
    assert {d.external_id for d in listed.context["cl"].result_list} == {"CRM-1", "CRM-2", "CRM-3"}
    past = text_of(client.get(reverse(INDEX)))
    assert "created 3 deals, 6 placements, 3 quotes" in past and "would create 3 deals, 6 placements" in past

    # The same file again: nothing twice.
    with django_capture_on_commit_callbacks(execute=True):
        sent = upload(client, path)
    twice, page = job_page(client, sent)
    twice.refresh_from_db()
    assert twice.status == HistoryImport.Status.DONE and twice.deals_created == 0
    assert "3 deals already in the account" in text_of(page)


def test_a_refused_file_shows_its_rows_and_the_report_downloads(team, lenders, tmp_path, eager_jobs,
                                                                 django_capture_on_commit_callbacks):
    rows = rows_ab()
    rows[1]["outcome"] = "maybe later"
    rows[3]["sent_on"] = "2999-01-01"
    path = write_csv(tmp_path / "bad.csv", rows)

    with django_capture_on_commit_callbacks(execute=True):
        sent = upload(team["client"], path)
    job, page = job_page(team["client"], sent)
    job.refresh_from_db()

    assert job.status == HistoryImport.Status.REFUSED and job.problems
    html = page.content.decode()
    assert "Rows to correct" in html and "maybe later" in html
    lines = {p["line"] for p in job.problems}
    assert {3, 5} <= lines
    assert 'id="apply"' not in html and 'id="names-form"' not in html
    report = team["client"].get(reverse("admin:deals_history_import_refused", args=[job.pk]))
    assert report.status_code == 200 and report["Content-Type"].startswith("text/csv")
    assert report["Content-Disposition"] == 'attachment; filename="bad-refused-rows.csv"'
    table = list(csv.reader(io.StringIO(report.content.decode())))
    assert table[0] == ["line", "column", "reason"]
    assert {row[0] for row in table[1:]} >= {"3", "5"}
    assert Deal.objects.filter(account=team["account"]).count() == 0


def test_a_running_job_shows_its_progress_and_how_the_page_refreshes(team):
    job = HistoryImport.objects.create(account=team["account"], created_by=team["user"], file_name="big.csv",
                                       dry_run=True, status=HistoryImport.Status.RUNNING, rows_read=1200)
    page = team["client"].get(reverse("admin:deals_history_import_job", args=[job.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'role="status"' in html and "Reading and checking the file" in html
    assert "lev_admin/history_import.js" in html and 'data-finished="false"' in html
    assert "Refresh now" in html and "http-equiv" not in html  # no timed meta refresh (WCAG 2.2.1)
    done = HistoryImport.objects.create(account=team["account"], file_name="small.csv", dry_run=True,
                                        status=HistoryImport.Status.DONE)
    finished = team["client"].get(reverse("admin:deals_history_import_job", args=[done.pk])).content.decode()
    assert "history_import.js" not in finished and 'data-finished="true"' in finished


def test_apply_is_offered_only_on_a_preview_whose_file_is_still_kept(team):
    gone = HistoryImport.objects.create(account=team["account"], file_name="old.csv", dry_run=True,
                                        status=HistoryImport.Status.DONE)  # its file deleted past retention
    page = team["client"].get(reverse("admin:deals_history_import_job", args=[gone.pk])).content.decode()
    assert 'id="apply"' not in page and 'id="file-gone"' in page
    ran = HistoryImport.objects.create(account=team["account"], file_name="ran.csv", dry_run=False,
                                       status=HistoryImport.Status.DONE)
    answer = team["client"].post(reverse("admin:deals_history_import_apply", args=[ran.pk]), {"then": "apply"},
                                 follow=True)
    assert "This import has run" in answer.content.decode()
    assert HistoryImport.objects.count() == 2


# --- who ---------------------------------------------------------------------------------------------
def test_another_accounts_job_is_not_found_on_every_page(team, tmp_path):
    other = AccountFactory()
    theirs = HistoryImport.objects.create(account=other, file_name="theirs.csv", dry_run=True,
                                          status=HistoryImport.Status.DONE,
                                          problems=[{"line": 2, "column": "lender", "message": "secret"}])
    client = team["client"]
    assert client.get(reverse("admin:deals_history_import_job", args=[theirs.pk])).status_code == 404
    assert client.get(reverse("admin:deals_history_import_refused", args=[theirs.pk])).status_code == 404
    assert client.post(reverse("admin:deals_history_import_apply", args=[theirs.pk]),
                       {"then": "apply"}).status_code == 404
    assert client.get(reverse("admin:deals_history_import_job", args=[987654321])).status_code == 404
    assert HistoryImport.objects.count() == 1


@pytest.mark.parametrize("who", ["viewer", "non-member", "no permission"])
def test_a_viewer_a_non_member_and_a_user_without_the_permission_are_refused(team, who, tmp_path):
    if who == "viewer":
        user = team_member(team["account"], "vic", Membership.Role.VIEWER)
    elif who == "non-member":
        user = team_member(AccountFactory(), "nora")
        user.memberships.all().delete()
    else:
        user = UserFactory(username="pat", is_staff=True)
        MembershipFactory(account=team["account"], user=user)
    job = HistoryImport.objects.create(account=team["account"], file_name="ours.csv", dry_run=True,
                                       status=HistoryImport.Status.DONE)
    client = Client()
    client.force_login(user)
    path = write_csv(tmp_path / "history.csv", rows_ab())

    assert client.get(reverse(INDEX)).status_code == 403
    assert upload(client, path).status_code == 403
    assert client.get(reverse("admin:deals_history_import_download", args=["template"])).status_code == 403
    assert client.get(reverse("admin:deals_history_import_job", args=[job.pk])).status_code == 403
    assert client.post(reverse("admin:deals_history_import_apply", args=[job.pk]), {"then": "apply"}).status_code == 403
    assert HistoryImport.objects.count() == 1


def test_the_pages_answer_only_their_methods(team):
    assert team["client"].get(reverse("admin:deals_history_import_upload")).status_code == 405
    job = HistoryImport.objects.create(account=team["account"], file_name="ours.csv", dry_run=True,
                                       status=HistoryImport.Status.DONE)
    assert team["client"].get(reverse("admin:deals_history_import_apply", args=[job.pk])).status_code == 405


def test_an_upload_without_the_csrf_token_is_refused(team, tmp_path):
    client = Client(enforce_csrf_checks=True)
    client.force_login(team["user"])
    answer = upload(client, write_csv(tmp_path / "history.csv", rows_ab()))
    assert answer.status_code == 403
    assert not HistoryImport.objects.exists()


# --- on PostgreSQL, a real worker ----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_real_worker_runs_the_preview_the_mapped_preview_and_the_import(tmp_path):
    """The admin's flow where production runs it: the request commits, the job goes through Redis to a
    Celery worker process on the same PostgreSQL database, and the page follows it until it has finished."""
    lenders = {name: LenderFactory(name=name) for name in
               ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust", "Chase Capital Partners")}
    account = AccountFactory(name="Northwind Capital")
    client = Client()
    client.force_login(team_member(account, "dana"))
    path = write_csv(tmp_path / "crm-export.csv", [*rows_ab(), {**UNKNOWN, "lender": "Chase"}])

    with celery_worker() as worker:  # (the stored file on the one private storage both processes use)
        def finished(response):
            match = re.search(r"/import-history/(\d+)/$", response["Location"])
            job = HistoryImport.objects.get(pk=int(match.group(1)))
            wait_for(lambda: client.get(response["Location"]).context["job"].finished, f"job {job.pk}", worker)
            job.refresh_from_db()
            return job, client.get(response["Location"])

        # "Chase" is two lenders equally well: refused, both offered, neither chosen for the team.
        job, page = finished(upload(client, path))
        assert job.status == HistoryImport.Status.REFUSED and not job.problems
        (name,) = page.context["names"]
        assert name["name"] == "Chase"
        assert {label for _pk, label in name["candidates"]} >= {"JPMorgan Chase Bank, N.A.", "Chase Capital Partners"}

        chosen = str(lenders["Chase Capital Partners"].pk)
        preview, page = finished(client.post(reverse("admin:deals_history_import_apply", args=[job.pk]),
                                             {name["field"]: chosen, "then": "preview"}))
        assert preview.status == HistoryImport.Status.DONE and preview.mapping == {"Chase": int(chosen)}
        assert Deal.objects.filter(account=account).count() == 0

        applied, page = finished(client.post(reverse("admin:deals_history_import_apply", args=[preview.pk]),
                                             {"then": "apply"}))
        assert applied.status == HistoryImport.Status.DONE and not applied.dry_run, applied.message

    assert Deal.objects.filter(account=account).count() == 3
    assert Placement.objects.get(deal__external_id="CRM-3", deal__account=account).lender_id == int(chosen)
    assert "the import created: 3 new deals" in text_of(page)
