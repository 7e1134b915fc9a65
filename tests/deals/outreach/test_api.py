"""Outreach's REST doors: POST /deals/{id}/outreach/ (202 and the send's id), GET /outreach/{id}/ (progress),
GET /placements/{id}/emails/, POST /packages/{id}/revoke/, the templates; bad input is a 400 in the error
contract, and another account's deal, placement, send, package or document is a 404 everywhere."""

from __future__ import annotations

import logging

import pytest

from deals.outreach.models import OutboundEmail, PackageLink
from tests.deals.outreach.helpers import document, outreach_deal, placed

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def mail_to_smtp(smtp, settings, tmp_path):
    settings.LEV_DOCUMENTS_DIR = str(tmp_path)
    logging.getLogger("mail.log").setLevel(logging.WARNING)


def post_send(api, deal_id, body, capture):
    with capture(execute=True):
        return api.post(f"/api/v1/deals/{deal_id}/outreach/", body, format="json")


def test_send_all_drafts_then_read_the_progress(account, api, smtp, django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    placements = placed(deal)
    om = document(deal)
    started = post_send(api, deal.pk, {"all_drafts": True, "document_ids": [om.pk]}, django_capture_on_commit_callbacks)
    assert started.status_code == 202, started.content
    body = started.json()
    assert body["queued"] == 3 and body["skipped"] == [] and body["message"].startswith("3 emails queued.")
    assert len(smtp.messages) == 3

    progress = api.get(f"/api/v1/outreach/{body['send_id']}/")
    assert progress.status_code == 200
    data = progress.json()
    assert data["status"] == "done" and data["total"] == 3 and data["kind"] == "teaser"
    assert data["counts"] == {"queued": 0, "sending": 0, "sent": 3, "retrying": 0, "refused": 0}
    assert [e["lender_name"] for e in data["emails"]] == ["Granite Bank", "Harbor Life", "Summit Credit Union"]
    assert data["emails"][0]["package"]["document_ids"] == [om.pk]
    assert "body" not in data["emails"][0] and "reply_tag" not in data["emails"][0]

    emails = api.get(f"/api/v1/placements/{placements[0].pk}/emails/")
    assert emails.status_code == 200
    [email] = emails.json()
    assert email["to_address"] == "granite@example.com" and email["status"] == "sent" and email["attempts"] == 1

    # Again, by id: nobody emailed twice, each placement said why.
    again = post_send(api, deal.pk, {"placement_ids": [p.pk for p in placements]}, django_capture_on_commit_callbacks)
    assert again.status_code == 202
    assert [s["code"] for s in again.json()["skipped"]] == ["CONFLICT"] * 3 and again.json()["queued"] == 0
    assert len(smtp.messages) == 3


@pytest.mark.parametrize("body, field", [
    ({}, "placement_ids"),
    ({"placement_ids": [1], "all_drafts": True}, "all_drafts"),
    ({"placement_ids": []}, "placement_ids"),
    ({"placement_ids": ["x"]}, "placement_ids"),
    ({"all_drafts": True, "kind": "spam"}, "kind"),
    ({"all_drafts": True, "expires_in_days": 0}, "expires_in_days"),
    ({"all_drafts": True, "bcc": "all@evil.example"}, "bcc"),
])
def test_bad_input_is_a_400(account, api, body, field, django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    answer = post_send(api, deal.pk, body, django_capture_on_commit_callbacks)
    assert answer.status_code == 400, answer.content
    fields = answer.json()["details"]["fields"]
    assert answer.json()["code"] == "VALIDATION_ERROR" and any(name.split(".")[0] == field for name in fields)


def test_another_account_gets_404_everywhere(account, api, other_api, other_account, smtp,
                                            django_capture_on_commit_callbacks):
    deal = outreach_deal(account)
    placements = placed(deal)
    om = document(deal)
    started = post_send(api, deal.pk, {"all_drafts": True, "document_ids": [om.pk]}, django_capture_on_commit_callbacks)
    send_id = started.json()["send_id"]
    package = PackageLink.objects.filter(placement=placements[0]).first()
    for answer in (
        post_send(other_api, deal.pk, {"all_drafts": True}, django_capture_on_commit_callbacks),
        other_api.get(f"/api/v1/outreach/{send_id}/"),
        other_api.get(f"/api/v1/placements/{placements[0].pk}/emails/"),
        other_api.post(f"/api/v1/packages/{package.pk}/revoke/"),
    ):
        assert answer.status_code == 404, answer.content
        assert answer.json()["code"] == "NOT_FOUND"
        assert "Granite" not in answer.content.decode()
    assert PackageLink.objects.get(pk=package.pk).revoked_at is None

    # Their own deal, naming this account's placements or documents: not found, nothing sent.
    theirs = outreach_deal(other_account, title="Rival deal")
    sent_before = len(smtp.messages)
    for body in ({"placement_ids": [placements[0].pk]}, {"all_drafts": True, "document_ids": [om.pk]}):
        answer = post_send(other_api, theirs.pk, body, django_capture_on_commit_callbacks)
        assert answer.status_code == 404 and answer.json()["code"] == "NOT_FOUND", answer.content
    assert len(smtp.messages) == sent_before
    assert OutboundEmail.objects.filter(account=other_account).count() == 0
    assert other_api.get("/api/v1/outreach/999999999999/").status_code == 404


def test_templates_read_and_saved(account, api, other_api):
    listed = api.get("/api/v1/outreach-templates/")
    assert listed.status_code == 200
    assert [(t["kind"], t["saved"]) for t in listed.json()] == [("teaser", False), ("follow_up", False)]
    assert "package_link" in listed.json()[0]["placeholders"]

    saved = api.put("/api/v1/outreach-templates/teaser/", {"subject": "$deal_title", "body": "See $package_link"},
                    format="json")
    assert saved.status_code == 200 and saved.json()["saved"] is True
    assert api.get("/api/v1/outreach-templates/teaser/").json()["body"] == "See $package_link"
    assert other_api.get("/api/v1/outreach-templates/teaser/").json()["saved"] is False  # theirs is their own

    injected = api.put("/api/v1/outreach-templates/teaser/", {"subject": "Hi\r\nBcc: all@evil.example", "body": "x"},
                       format="json")
    assert injected.status_code == 400
    assert injected.json()["details"]["fields"]["subject"] == ["must be one line (no line breaks)"]
    unknown = api.put("/api/v1/outreach-templates/follow_up/", {"subject": "Hi", "body": "{{ request.user }}"},
                      format="json")
    assert unknown.status_code == 400
    assert unknown.json()["message"].startswith("Validation failed: body uses unknown placeholders: $request.user")
    assert api.get("/api/v1/outreach-templates/spam/").status_code == 404
    assert api.get("/api/v1/outreach-templates/teaser/").json()["body"] == "See $package_link"
