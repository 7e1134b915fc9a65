"""The documents' MCP tools over /mcp (Django's test client through the whole endpoint, the tools' in-process
REST hop): list_deal_documents and get_deal_document list and read what REST uploaded, with the figures
read from a rent roll; read-only annotations; another account's deal or document is NOT_FOUND with its
hint; bad arguments are VALIDATION_ERROR; paging."""

from __future__ import annotations

import pytest

from deals.documents import services
from mcp_tools.registry import TOOLS
from tests.deals.documents.helpers import CSV_BYTES, PDF_BYTES, upload
from tests.factories import DealFactory
from tests.mcp_tools.test_toolsets import called, listed, rpc

pytestmark = pytest.mark.django_db


def structured(result: dict) -> dict:
    assert not result.get("isError"), result
    return result["structuredContent"]


def failure(result: dict) -> dict:
    assert result.get("isError"), result
    return result["structuredContent"]


def test_the_tools_are_listed_read_only_in_their_toolset(api_key):
    for name in ("list_deal_documents", "get_deal_document"):
        hints = TOOLS[name].annotations
        assert (hints.readOnlyHint, hints.destructiveHint, hints.openWorldHint) == (True, False, False)
    assert {"list_deal_documents", "get_deal_document"} <= set(listed(api_key, "/mcp/readonly"))
    assert listed(api_key, "/mcp/x/documents") == ["get_deal_document", "list_deal_documents"]
    tools = {t["name"]: t for t in rpc(api_key, "tools/list").json()["result"]["tools"]}
    assert tools["list_deal_documents"]["inputSchema"]["required"] == ["deal_id"]
    assert "rent_roll" in str(tools["list_deal_documents"]["inputSchema"]["properties"]["kind"])


def test_list_and_get_a_deals_documents_with_versions_and_extracted_figures(api_key, account, user):
    deal = DealFactory(account=account)
    om = services.document_add(deal=deal, upload=upload("om.pdf", PDF_BYTES), kind="offering_memorandum", user=user)
    services.document_add(deal=deal, upload=upload("rr-jan.csv", CSV_BYTES), kind="rent_roll", user=user)
    rr = services.document_add(deal=deal, upload=upload("rr-feb.csv", CSV_BYTES + b"103,Lee,1500\n"),
                               kind="rent_roll", user=user)
    rr.extracted = {"figures": {"units": 3, "occupied_units": 2}, "problems": [{"row": 3, "message": "no rent"}],
                    "layout": "hand-made"}
    rr.save(update_fields=["extracted"])

    listed_ = structured(called(api_key, "list_deal_documents", {"deal_id": deal.pk}))
    assert listed_["total"] == 2 and listed_["has_more"] is False
    by_kind = {d["kind"]: d for d in listed_["documents"]}
    assert by_kind["rent_roll"]["versions_count"] == 2
    assert by_kind["rent_roll"]["current"]["file_name"] == "rr-feb.csv"
    assert by_kind["offering_memorandum"]["current"]["content_type"] == "application/pdf"
    only = structured(called(api_key, "list_deal_documents", {"deal_id": deal.pk, "kind": "offering_memorandum"}))
    assert [d["id"] for d in only["documents"]] == [om.document_id]
    first = structured(called(api_key, "list_deal_documents", {"deal_id": deal.pk, "limit": 1}))
    assert len(first["documents"]) == 1 and first["has_more"] and first["next_cursor"]
    second = structured(called(api_key, "list_deal_documents", {"deal_id": deal.pk, "limit": 1,
                                                                "cursor": first["next_cursor"]}))
    assert {first["documents"][0]["id"], second["documents"][0]["id"]} == {om.document_id, rr.document_id}

    got = structured(called(api_key, "get_deal_document", {"document_id": rr.document_id}))["document"]
    assert [v["number"] for v in got["versions"]] == [2, 1]
    assert got["versions"][0]["extracted"]["figures"] == {"units": 3, "occupied_units": 2}
    assert got["versions"][1]["extracted"] is None and got["versions"][0]["uploaded_by"] == "alice"


def test_another_accounts_deal_or_document_is_not_found(api_key, account, other_account, user):
    theirs = DealFactory(account=other_account)
    doc = services.document_add(deal=theirs, upload=upload("their-om.pdf", PDF_BYTES), kind="offering_memorandum")
    for name, arguments, resource in (("list_deal_documents", {"deal_id": theirs.pk}, "deal"),
                                      ("get_deal_document", {"document_id": doc.document_id}, "document")):
        error = failure(called(api_key, name, arguments))
        assert error["code"] == "NOT_FOUND", error
        assert "their-om" not in str(error)
        if resource == "document":
            assert "list_deal_documents(deal_id)" in str(error)


def test_bad_arguments_are_validation_errors(api_key, account):
    deal = DealFactory(account=account)
    for name, arguments in (("list_deal_documents", {"deal_id": deal.pk, "kind": "lease"}),
                            ("list_deal_documents", {"deal_id": 0}),
                            ("list_deal_documents", {"deal_id": deal.pk, "cursor": "nope"}),
                            ("get_deal_document", {"document_id": "x"})):
        assert failure(called(api_key, name, arguments))["code"] == "VALIDATION_ERROR", (name, arguments)
