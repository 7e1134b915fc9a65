"""Issue 41 end to end, over real parts: a live server, the official MCP clients (1.x for the reads and
writes, 2.x where the send asks the person to confirm), a real SMTP server
(aiosmtpd) the mail crosses, the lender's browser-less HTTP client on the deal package, and a signed
MIME reply sent over SMTP to the inbound relay, which posts it signed to the inbound endpoint.

Documents are uploaded (REST multipart), a rent roll's figures applied to the financials, a lender
search run, three lenders placed and emailed through MCP; one lender opens its package and downloads
the OM, another replies by email with a term-sheet PDF attached; the reply lands on its placement, the
attachment among the deal's documents, and the timeline tells it all."""

from __future__ import annotations

import importlib.util
import json
import re
import smtplib
import subprocess
import time
from decimal import Decimal
from email.message import EmailMessage
from email.utils import make_msgid

import pytest
import requests

from deals.companies.models import Contact
from deals.models import Placement
from tests.deals.documents.figures_files import hand_made_rent_roll
from tests.deals.documents.helpers import PDF_BYTES
from tests.deals.fixtures import eager_jobs
from tests.deals.outreach.smtp import free_port, smtp
from tests.deals.searches.factories import lender_with, make_deal
from tests.mcp_helpers import McpCaller
from tests.mcp_tools.test_sdk2_client import ROOT, sdk2_python

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
__all__ = ["eager_jobs", "smtp"]

SECRET = "e2e-inbound-secret-0123456789abcdef"
LENDERS = ("Granite Bank", "Harbor Life", "Summit Credit Union")
LINK = re.compile(r"(https?://\S+/p/[A-Za-z0-9_-]+/)")
_spec = importlib.util.spec_from_file_location("inbound_relay", ROOT / "deploy" / "inbound_relay.py")
inbound_relay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inbound_relay)


def upload(base: str, key: str, deal_id: int, name: str, data: bytes, kind: str) -> dict:
    answer = requests.post(f"{base}/api/v1/deals/{deal_id}/documents/", headers={"Authorization": f"Bearer {key}"},
                           files={"file": (name, data)}, data={"kind": kind}, timeout=30)
    assert answer.status_code == 201, answer.text[:500]
    return answer.json()


def reply_from(to_tag: str, subject: str, sender: str) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = f"Lev <reply+{to_tag}@replies.e2e.test>"
    message["Subject"] = f"Re: {subject}"
    message["Message-ID"] = make_msgid(domain="harborlife.example")
    message.set_content("Thanks for the package. Our term sheet is attached: 6.1% fixed, 10 years, 65% LTV.")
    message.add_attachment(PDF_BYTES, maintype="application", subtype="pdf", filename="Harbor Life term sheet.pdf")
    return message.as_bytes()


def test_a_deal_goes_to_market_and_the_lenders_answers_come_back(live_server, api_key, account, settings, smtp,
                                                                 eager_jobs):
    settings.LEV_PUBLIC_BASE_URL = live_server.url
    settings.LEV_REPLY_DOMAIN = "replies.e2e.test"
    settings.LEV_INBOUND_EMAIL_SECRET = SECRET
    settings.LEV_RATE_LIMIT_READS = settings.LEV_RATE_LIMIT_WRITES = "100000/min"
    base, mcp = live_server.url, McpCaller(live_server.url, api_key)
    deal = make_deal(account, title="Harbor Point Apartments", loan_amount=Decimal("12500000"))
    for name in LENDERS:
        program = lender_with(name)
        Contact.objects.create(account=account, lender=program.lender, name=f"Pat of {name}",
                               email=f"pat@{name.split()[0].lower()}.example")

    # Documents in (REST multipart), and the rent roll's figures applied to the financials.
    om = upload(base, api_key, deal.pk, "Harbor Point OM.pdf", PDF_BYTES, "offering_memorandum")
    rent_roll_bytes, expected = hand_made_rent_roll()
    rent_roll = upload(base, api_key, deal.pk, "Rent roll.xlsx", rent_roll_bytes, "rent_roll")
    headers = {"Authorization": f"Bearer {api_key}"}
    preview = requests.post(f"{base}/api/v1/documents/{rent_roll['id']}/figures/", headers=headers, timeout=30)
    assert preview.status_code == 200, preview.text[:500]
    applied = requests.post(f"{base}/api/v1/documents/{rent_roll['id']}/figures/apply/", headers=headers, json={},
                            timeout=30)
    assert applied.status_code == 200, applied.text[:500]
    financials = mcp.ok("get_deal_financials", {"deal_id": deal.pk})["financials"]
    assert Decimal(str(financials["occupancy"])) == Decimal(expected["occupancy"]), financials
    assert financials["sources"], financials  # each applied figure cites the rent roll
    assert {source["document_id"] for source in financials["sources"].values()} == {rent_roll["id"]}
    documents = mcp.ok("list_deal_documents", {"deal_id": deal.pk})
    assert len(documents["documents"]) == 2, documents

    # A search, the three lenders placed from it, and the deal emailed to them with the OM shared.
    search = mcp.ok("search_lenders_for_deal", {"deal_id": deal.pk})
    results = mcp.ok("get_lender_search_results", {"search_id": search["search_id"]})
    assert results["status"] == "completed"
    assert {r["lender_name"] for r in results["results"]} >= set(LENDERS)
    contacts = list(Contact.objects.filter(account=account).values_list("pk", flat=True))
    placed = mcp.ok("create_placements", {"deal_id": deal.pk, "search_id": search["search_id"], "top_n": 3,
                                          "contact_ids": contacts})
    placement_ids = [p["id"] for p in placed["placements"]]
    assert len(placement_ids) == 3
    # Sent through the official 2.x client: the server asks the person first, naming the lenders and the
    # OM; the person accepts and the client retries the call with the answer.
    done = subprocess.run(
        [str(sdk2_python()), str(ROOT / "tests" / "mcp_tools" / "sdk2_call_client.py"), f"{base}/mcp", api_key,
         "send_placements_email", json.dumps({"deal_id": deal.pk, "placement_ids": placement_ids,
                                              "document_ids": [om["id"]]}), "accept"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["protocol_version"] == "2026-07-28" and len(report["asked"]) == 1, report
    question = report["asked"][0]["message"]
    assert all(name in question for name in LENDERS) and "Harbor Point OM.pdf" in question, question
    assert report["isError"] is False, report
    sent = report["structuredContent"]
    deadline = time.monotonic() + 30
    while len(smtp.messages) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sorted(m.rcpt_tos[0] for m in smtp.messages) == sorted(
        f"pat@{name.split()[0].lower()}.example" for name in LENDERS)
    progress = mcp.ok("get_outreach_progress", {"send_id": sent["send_id"]})
    assert progress["counts"].get("sent") == 3, progress

    # Granite Bank opens its package and downloads the OM; nothing else is reachable through its link.
    granite = smtp.to("pat@granite.example")[0]
    link = LINK.search(granite.text).group(1)
    page = requests.get(link, timeout=30)
    assert page.status_code == 200 and "Harbor Point" in page.text
    download = re.search(r'href="(/p/[^"]+/documents/\d+/)"', page.text).group(1)
    got = requests.get(base + download, timeout=30)
    assert got.status_code == 200 and got.content == PDF_BYTES
    assert got.headers["Content-Disposition"].startswith("attachment")

    # Harbor Life replies by email with its term sheet attached: the reply crosses the inbound relay
    # (deploy/inbound_relay.py on aiosmtpd, SMTP in, a signed POST of the raw MIME to the endpoint out).
    harbor = smtp.to("pat@harbor.example")[0]
    reply_to = re.search(r"reply\+[^@]+@[\w.]+", harbor["Reply-To"]).group(0)
    tag = reply_to.split("+", 1)[1].split("@", 1)[0]
    raw = reply_from(tag, harbor["Subject"], "Pat of Harbor Life <pat@harbor.example>")
    relay = inbound_relay.relay_controller(url=f"{base}/api/v1/inbound-email/", secret=SECRET, port=free_port())
    relay.start()
    try:
        with smtplib.SMTP(relay.hostname, relay.port, timeout=30) as client:
            refused = client.sendmail("pat@harbor.example", [reply_to], raw)
    finally:
        relay.stop()
    assert refused == {}

    # The answers are on the placements, the documents and the timeline.
    by_lender = {p.lender.name: p for p in Placement.objects.filter(deal=deal).select_related("lender")}
    assert by_lender["Harbor Life"].status == "reviewing" and by_lender["Harbor Life"].first_response_at
    assert by_lender["Granite Bank"].status == "sent" and by_lender["Summit Credit Union"].status == "sent"
    documents = mcp.ok("list_deal_documents", {"deal_id": deal.pk})["documents"]
    term_sheets = [d for d in documents if d["kind"] == "term_sheet"]
    assert len(term_sheets) == 1, documents
    timeline = mcp.ok("get_deal_timeline", {"deal_id": deal.pk})
    texts = " | ".join(entry["text"] for entry in timeline["entries"])
    assert "Granite Bank opened the package" in texts, texts
    assert "Granite Bank downloaded" in texts, texts
    assert "Harbor Life replied" in texts, texts
