"""A deal team's panels on a lender's page (the directory's page, `lenders.admin`): its people at the
lender and its history with it — placements by status, quotes received, wins and the win rate, the
latest placements. Registered on `lenders.admin` from `DealsConfig.ready()` (the directory never
imports `deals`).

Whose: the accounts the person is a member of, a superuser's too (like the home page: a team's view,
never another account's contacts or placements; an account nobody is a member of is on no one's page;
the demo account's market history, archived past deals, counts here as its record with the lender).
Seven queries at most, whatever the number of placements."""

from __future__ import annotations

from django.db.models import Count
from django.urls import reverse

from deals.companies.models import Contact
from deals.placements.activity import lender_response_time
from deals.placements.models import Placement
from deals.placements.selectors import live_term_sheets
from deals.placements.workflow import DECIDED_STATUSES, STATES, STATUSES
from lenders.models import Lender
from lev import formatting, limits
from lev.accounts.admin_bases import staff_roles

TEMPLATE = "admin/deals/workspace/_lender_history.html"


def _placements_url(lender: Lender) -> str:
    return f"{reverse('admin:deals_placement_changelist')}?lender__id__exact={lender.pk}"


def lender_history(request, lender: Lender) -> dict:
    """The panel's context (lenders.admin.register_profile_panel)."""
    account_ids = list(staff_roles(request))
    if not account_ids:
        return {"member": False}
    contacts = list(Contact.objects.filter(account_id__in=account_ids, lender=lender)
                    .select_related("account").order_by("name", "pk")[: limits.LENDER_PROFILE_CONTACTS_SHOWN + 1])
    placements = Placement.objects.filter(deal__account_id__in=account_ids, lender=lender)
    by_status = dict(placements.order_by().values_list("status").annotate(n=Count("pk")))
    total = sum(by_status.values())
    latest = list(placements.select_related("deal").order_by("-created_at", "-pk")
                  [: limits.LENDER_PROFILE_PLACEMENTS_SHOWN]) if total else []
    quotes = live_term_sheets().filter(placement__lender=lender, deal__account_id__in=account_ids).count() \
        if total else 0
    wins = by_status.get("won", 0)
    decided = sum(by_status.get(status, 0) for status in DECIDED_STATUSES)
    many_accounts = len(account_ids) > 1
    return {
        "member": True,
        "contacts": [{"name": c.name, "title": c.title, "email": c.email, "phone": c.phone,
                      "account": c.account.name if many_accounts else "",
                      "url": reverse("admin:deals_contact_change", args=[c.pk])}
                     for c in contacts[: limits.LENDER_PROFILE_CONTACTS_SHOWN]],
        "more_contacts": len(contacts) > limits.LENDER_PROFILE_CONTACTS_SHOWN,
        "add_contact_url": f"{reverse('admin:deals_contact_add')}?lender={lender.pk}",
        "placement_count": total,
        "by_status": [{"label": STATES[status].label, "status": status, "count": by_status[status]}
                      for status in STATUSES if by_status.get(status)],
        "quotes": quotes,
        "wins": wins,
        "decided": decided,
        "win_rate": formatting.percent(100 * wins / decided, 0) if decided else formatting.EMPTY,
        "last_placed": formatting.day(latest[0].sent_at or latest[0].created_at) if latest else formatting.EMPTY,
        "latest": [{"deal": p.deal.title, "status": p.status, "status_label": STATES[p.status].label,
                    "when": formatting.day(p.sent_at or p.created_at),
                    "url": reverse("admin:deals_placement_change", args=[p.pk]),
                    "deal_url": reverse("admin:deals_deal_change", args=[p.deal_id])} for p in latest],
        "placements_url": _placements_url(lender),
        # The lender's one answer-time figure, with the span it covers (said nowhere else on the page).
        "answer_time": (answered.in_words() if total and (answered := lender_response_time(
            lender_id=lender.pk, account_ids=account_ids)) else ""),
    }
