"""Builders for outreach's tests: a deal with figures, lenders with the account's contacts, draft
placements, and a document with a file on the deal's storage."""

from __future__ import annotations

import hashlib
from decimal import Decimal

from django.core.files.base import ContentFile

from deals.companies.models import Contact
from deals.documents.models import Document, DocumentVersion
from deals.models import Deal, Placement
from deals.placements import services as placement_services
from tests.factories import DealFactory, DealFinancialsFactory, DealPropertyFactory, LenderFactory

NAMES = ("Granite Bank", "Harbor Life", "Summit Credit Union")


def outreach_deal(account, title: str = "Harbor Point Apartments") -> Deal:
    deal = DealFactory(account=account, title=title, loan_amount=Decimal("12500000"), loan_type="permanent")
    DealPropertyFactory(deal=deal, city="Austin", state="TX", asset_type="multifamily", units=180)
    DealFinancialsFactory(deal=deal, estimated_value=Decimal("20000000"), in_place_noi=Decimal("1150000"))
    return deal


def placed(deal: Deal, names=NAMES, *, emails: dict[str, str] | None = None) -> list[Placement]:
    """Draft placements of `deal` with new lenders named `names`, each with the account's contact there
    (address `<first word>@example.com` unless `emails` says otherwise; "" for none)."""
    out = []
    for name in names:
        lender = LenderFactory(name=name)
        address = (emails or {}).get(name, f"{name.split()[0].lower()}@example.com")
        contact = Contact.objects.create(account_id=deal.account_id, lender=lender, name=f"Pat of {name}",
                                         email=address)
        batch = placement_services.placements_create(deal=deal, lender_ids=[lender.pk], contact_ids=[contact.pk])
        out.append(batch.created[0])
    return out


def document(deal: Deal, *, name: str = "Offering memorandum", kind: str = "offering_memorandum",
             file_name: str = "Offering memorandum.pdf", content: bytes = b"%PDF-1.7\n% the OM\n") -> Document:
    doc = Document.objects.create(account_id=deal.account_id, deal=deal, kind=kind, name=name)
    version = DocumentVersion(document=doc, number=1, file_name=file_name, size=len(content),
                              sha256=hashlib.sha256(content).hexdigest(), content_type="application/pdf")
    version.file.save(file_name, ContentFile(content), save=False)
    version.save()
    doc.current, doc.versions_count = version, 1
    doc.save(update_fields=["current", "versions_count"])
    return doc
