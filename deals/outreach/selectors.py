"""Reads of outreach, tenant-scoped by their arguments: another account's send, email or package is
NotFound, exactly like a missing one."""

from __future__ import annotations

from django.db.models import Count, Prefetch, QuerySet

from deals.models import Deal
from deals.outreach.models import OutboundEmail, OutreachSend, PackageLink
from deals.placements.models import Placement
from lev.accounts.models import Account
from lev.errors import NotFound
from lev.limits import MAX_ID

STATUSES = tuple(OutboundEmail.Status.values)


def emails_shown() -> QuerySet[OutboundEmail]:
    """Emails with what their answers name: the lender, the package and its documents (no query per email)."""
    return (OutboundEmail.objects.select_related("placement__lender", "package")
            .prefetch_related(Prefetch("package__documents")).order_by("id"))


def send_get(*, account: Account, send_id: int) -> OutreachSend:
    """The account's send with `counts` (emails by status) and `emails` (each, oldest first)."""
    if not 0 < send_id <= MAX_ID:
        raise NotFound("Outreach send", send_id)
    send = OutreachSend.objects.filter(account=account, pk=send_id).first()
    if send is None:
        raise NotFound("Outreach send", send_id)
    counts = dict.fromkeys(STATUSES, 0)
    counts.update(dict(OutboundEmail.objects.filter(send=send).values("status").annotate(n=Count("id"))
                       .values_list("status", "n")))
    send.counts = counts
    send.emails_list = list(emails_shown().filter(send=send, account=account))
    return send


def placement_emails(*, placement: Placement) -> list[OutboundEmail]:
    """The placement's emails (teaser, follow-ups), oldest first (the placement is the caller's)."""
    return list(emails_shown().filter(placement=placement, account_id=placement.deal.account_id))


def package_get(*, account: Account, package_id: int) -> PackageLink:
    if not 0 < package_id <= MAX_ID:
        raise NotFound("Package", package_id)
    package = (PackageLink.objects.filter(account=account, pk=package_id, placement__deal__account=account)
               .select_related("placement__deal").first())
    if package is None:
        raise NotFound("Package", package_id)
    return package


def draft_placements(*, deal: Deal) -> list[Placement]:
    return list(Placement.objects.filter(deal=deal, status="draft").order_by("id"))


def deal_placements(*, deal: Deal, placement_ids: list[int]) -> list[Placement]:
    """The deal's placements of `placement_ids`, in that order; one that is not the deal's is NotFound."""
    found = {p.pk: p for p in Placement.objects.filter(deal=deal, pk__in=placement_ids)}
    for placement_id in placement_ids:
        if placement_id not in found:
            raise NotFound("Placement", placement_id)
    return [found[i] for i in dict.fromkeys(placement_ids)]
