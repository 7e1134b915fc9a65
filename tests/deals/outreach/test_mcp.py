"""send_placements_email over MCP: real external email, so a 2026-07-28 client that can show a form is asked
first (mcp_tools.confirmations), the question naming the lenders, their addresses and the documents shared;
accept sends (through the REST door, across the real SMTP server), decline sends nothing. Older clients get
the tool as it is, its description asking the agent to confirm with the person. get_outreach_progress reads
the send."""

from __future__ import annotations

import logging

import pytest

from deals.outreach.models import OutboundEmail
from lev.accounts.services import api_key_create
from tests.deals.outreach.helpers import document, outreach_deal, placed
from tests.factories import AccountFactory, MembershipFactory, UserFactory
from tests.mcp_tools.test_confirmations import answer, asked, call, result_of
from tests.mcp_tools.test_modern_era import META, legacy

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def setup(smtp, settings, tmp_path):
    settings.LEV_DOCUMENTS_DIR = str(tmp_path)
    logging.getLogger("mail.log").setLevel(logging.WARNING)


@pytest.fixture
def world(account):
    deal = outreach_deal(account)
    placements = placed(deal, emails={"Summit Credit Union": ""})
    return deal, placements, document(deal)


def test_sending_asks_first_naming_the_lenders_and_documents_then_sends_on_accept(
        api_key, world, smtp, django_capture_on_commit_callbacks):
    deal, _placements, om = world
    arguments = {"deal_id": deal.pk, "all_drafts": True, "document_ids": [om.pk]}
    message, state = asked(call(api_key, "send_placements_email", arguments))
    assert "Harbor Point Apartments" in message
    assert "Granite Bank (granite@example.com)" in message and "Harbor Life (harbor@example.com)" in message
    assert "Offering memorandum (Offering memorandum.pdf)" in message
    assert "1 placement(s) will not be emailed" in message and "cannot be unsent" in message
    assert not OutboundEmail.objects.exists() and smtp.messages == []  # asking sends nothing

    with django_capture_on_commit_callbacks(execute=True):
        done = result_of(call(api_key, "send_placements_email", arguments, inputResponses=answer("accept", True),
                              requestState=state))
    assert done["isError"] is False, done
    payload = done["structuredContent"]
    assert payload["queued"] == 2 and [s["lender_name"] for s in payload["skipped"]] == ["Summit Credit Union"]
    assert sorted(m.rcpt_tos[0] for m in smtp.messages) == ["granite@example.com", "harbor@example.com"]

    progress = result_of(call(api_key, "get_outreach_progress", {"send_id": payload["send_id"]}, meta=META))
    assert progress["isError"] is False
    read = progress["structuredContent"]
    assert read["status"] == "done" and read["counts"]["sent"] == 2
    assert {e["lender_name"]: e["status"] for e in read["emails"]} == {"Granite Bank": "sent", "Harbor Life": "sent"}


def test_a_declined_confirmation_sends_nothing(api_key, world, smtp, django_capture_on_commit_callbacks):
    deal, _placements, _om = world
    arguments = {"deal_id": deal.pk, "all_drafts": True}
    message, state = asked(call(api_key, "send_placements_email", arguments))
    assert "sharing no documents" in message
    with django_capture_on_commit_callbacks(execute=True):
        done = result_of(call(api_key, "send_placements_email", arguments, inputResponses=answer("decline"),
                              requestState=state))
    assert done["structuredContent"]["changed"] is False
    assert done["structuredContent"]["message"].startswith(
        "Nothing changed: the person declined the confirmation to email the lenders.")
    assert not OutboundEmail.objects.exists() and smtp.messages == []


def test_another_accounts_deal_is_not_found_before_anything_is_asked(world):
    deal, _placements, _om = world
    rival = MembershipFactory(account=AccountFactory(name="Rival", slug="rival2"), user=UserFactory(username="eve"))
    _key, raw = api_key_create(user=rival.user, account=rival.account, name="k")
    answer_ = result_of(call(raw, "send_placements_email", {"deal_id": deal.pk, "all_drafts": True}))
    assert answer_["isError"] is True and answer_["structuredContent"]["code"] == "NOT_FOUND"
    assert "Granite" not in str(answer_)


def test_older_clients_get_the_tool_with_a_description_asking_to_confirm(api_key, world, smtp,
                                                                       django_capture_on_commit_callbacks):
    deal, placements, _om = world
    listed = legacy(api_key, "tools/list").json()["result"]["tools"]
    tool = next(t for t in listed if t["name"] == "send_placements_email")
    assert "confirm the lenders and documents with the user first" in tool["description"]
    assert tool["annotations"]["destructiveHint"] is True and tool["annotations"]["idempotentHint"] is False
    with django_capture_on_commit_callbacks(execute=True):
        ran = legacy(api_key, "tools/call", {"name": "send_placements_email",
                                             "arguments": {"deal_id": deal.pk, "placement_ids": [placements[0].pk]}})
    assert ran.status_code == 200 and ran.json()["result"]["isError"] is False
    assert [m.rcpt_tos for m in smtp.messages] == [["granite@example.com"]]


def test_a_contact_name_with_a_line_break_is_refused_over_mcp_in_words(api_key, world, smtp):
    """The name goes into the To header; the tool's schema lets text with line breaks through (notes may
    have them), and the API it calls refuses this one in words an agent can act on."""
    _deal, placements, _om = world
    got = result_of(call(api_key, "update_placement", {"placement_id": placements[0].pk,
                                                        "contact_name": "Pat\r\nBcc: spy@evil.example"}, meta=META))
    assert got["isError"] is True
    error = got["structuredContent"]
    assert error["code"] == "VALIDATION_ERROR" and error["errorCategory"] == "validation"
    assert "contact_name" in error["message"] and "one line" in error["message"], error
    placements[0].refresh_from_db()
    assert "\n" not in placements[0].contact_name
    assert not smtp.messages
