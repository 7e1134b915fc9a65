"""get_import and list_imports through the real /mcp endpoint (official client, live server): a refused
import's problems, names to map with candidates and report URL; another account's import is the
not-found error whose hint names a tool that exists."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from deals.history import jobs
from mcp_tools.registry import TOOLS
from tests.deals.history.helpers import rows_ab, write_csv
from tests.factories import AccountFactory, LenderFactory, MembershipFactory, UserFactory
from tests.mcp_helpers import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def mcp(live_server, api_key):
    return McpCaller(live_server.url, api_key)


@pytest.fixture
def other_mcp(live_server):
    from lev.accounts.services import api_key_create

    account = AccountFactory(slug="rival", name="Rival Holdings")
    member = MembershipFactory(account=account, user=UserFactory(username="mallory"))
    _key, raw = api_key_create(user=member.user, account=account, name="test")
    return McpCaller(live_server.url, raw)


def refused_job(account, tmp_path):
    for name in ("JPMorgan Chase Bank, N.A.", "Wells Fargo Bank", "Arbor Realty Trust", "Chase Capital Partners"):
        LenderFactory(name=name)
    rows = rows_ab()
    rows[0]["outcome"] = "ghosted"
    rows[3]["lender"] = "Chase"
    data = write_csv(tmp_path / "history.csv", rows).read_bytes()
    return jobs.import_start(account=account, user=None, upload=SimpleUploadedFile("history.csv", data))


def test_get_import_says_the_problems_the_names_to_map_and_the_report(mcp, account, tmp_path, eager_jobs):
    job = refused_job(account, tmp_path)

    got = mcp.ok("get_import", {"import_id": job.pk})["import"]

    assert got["status"] == "refused" and got["id"] == job.pk
    assert got["problems"] == [{"line": 2, "column": "outcome", "message": got["problems"][0]["message"]}]
    assert "ghosted" in got["problems"][0]["message"] and got["problems_total"] == 1
    [name] = got["names_to_map"]
    assert name["name"] == "Chase" and name["first_line"] == 5 and len(name["candidates"]) >= 2
    assert got["report_url"] == f"/api/v1/history-imports/{job.pk}/report.csv"
    assert f"/api/v1/history-imports/{job.pk}/apply/" in got["next_step"]
    assert got["progress"]["rows_read"] == 5
    listed = mcp.ok("list_imports", {})
    assert listed["total"] == 1 and listed["imports"][0]["id"] == job.pk
    assert TOOLS["get_import"].annotations.readOnlyHint is True


def test_another_accounts_import_is_not_found_with_a_hint_naming_list_imports(mcp, other_mcp, account, tmp_path,
                                                                             eager_jobs):
    job = refused_job(account, tmp_path)

    error = other_mcp.error("get_import", {"import_id": job.pk})

    assert error["code"] == "NOT_FOUND" and error["message"] == f"History import not found: {job.pk}"
    assert "list_imports" in error["hint"] and "list_imports" in TOOLS
    assert other_mcp.ok("list_imports", {})["total"] == 0
    assert mcp.error("get_import", {"import_id": job.pk + 1000})["code"] == "NOT_FOUND"
