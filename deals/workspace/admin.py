"""The admin's home page for a deal team (the admin index): the reads of `selectors` in a deal team's
words — names, money as money, dates — each row linking to its page. Hooked into the site by
`DealsConfig.ready()` through lev.admin_site's seam, with the deal team's sections of the app list.

Whose work it shows: the accounts the person is a member of, for a superuser too. A superuser in
operations works across accounts in the lists (which show every account to it); its home page is a
team's day, so it shows the teams it belongs to and says where every account's deals are. An account
nobody is a member of is on no one's home page; archived deals (the demo's market history) are on no list
of active work."""

from __future__ import annotations

from django.urls import reverse
from django.utils import timezone

from deals.outreach import chase
from deals.workspace import selectors
from lev import formatting, limits

TEMPLATE = "admin/deals/workspace/home.html"

# The deal team's sections of the app list, first to last (lev.admin_site.register_sections).
SECTIONS = [
    ("Deals", ["deals.Deal", "deals.LenderSearch", "deals.DealProperty"]),
    ("Companies & contacts", ["deals.Company", "deals.Contact"]),
    ("Pipeline stages", ["deals.Stage"]),
    ("Placements & term sheets", ["deals.Placement", "deals.TermSheet"]),
    ("Outreach", ["deals.OutboundEmail", "deals.InboundEmail", "deals.OutreachTemplate", "deals.AccountMailbox"]),
    ("Lenders", ["lenders.Lender", "lenders.LenderProgram", "lenders.LenderActivity", "lenders.AssetType"]),
    ("Market rates", ["lenders.MarketRate"]),
    ("Notes", ["deals.Note"]),
]


def _url(name: str, *args) -> str:
    return reverse(f"admin:{name}", args=args)


def _deal(deal) -> dict:
    return {"title": deal.title, "url": _url("deals_deal_change", deal.pk)}


def _pipeline(account, pipeline) -> dict:
    changelist = _url("deals_deal_changelist")
    return {"account": account.name, "deal_count": pipeline.deal_count,
            "loan_total": formatting.money(pipeline.loan_total),
            "stages": [{"name": stage.name, "deal_count": stage.deal_count,
                        "loan_total": formatting.money(stage.loan_total), "active": stage.kind == "open",
                        "url": f"{changelist}?stage__id__exact={stage.pk}"} for stage in pipeline.stages],
            "ended": [stage.name for stage in pipeline.stages if stage.kind != "open"]}


def _panel(found: selectors.Rows, row, more_url: str) -> dict:
    return {"rows": [row(item) for item in found.rows], "total": found.total, "more": found.more,
            "more_url": more_url}


def home(request) -> dict:
    """The home page's context (lev.admin_site.register_home)."""
    user, now = request.user, timezone.now()
    today = timezone.localdate(now)
    accounts = selectors.home_accounts(user=user)
    placements, termsheets = _url("deals_placement_changelist"), _url("deals_termsheet_changelist")

    def placement(p):
        return {"deal": _deal(p.deal), "lender": p.lender.name, "url": _url("deals_placement_change", p.pk),
                "sent_at": p.sent_at, "days": (now - p.sent_at).days}

    def quote(t):
        lender = t.placement.lender.name
        return {"deal": _deal(t.deal), "lender": lender, "url": _url("deals_termsheet_change", t.pk),
                "loan_amount": formatting.money(t.loan_amount), "kind": formatting.label(t.quote_type),
                "received_at": t.received_at, "expires_on": t.expires_on,
                "days_left": (t.expires_on - today).days if t.expires_on else None}

    def owned(d):
        return {**_deal(d), "stage": d.stage.name, "loan_amount": formatting.money(d.loan_amount),
                "close": d.estimated_close_date}

    def search(s):
        return {"deal": _deal(s.deal), "url": _url("deals_lendersearch_change", s.pk),
                "status": s.get_status_display(), "progress": s.progress, "since": s.started_at or s.created_at}

    return {
        "title": "Your deals today",
        "lev_home": True,
        "accounts": [account.name for account in accounts],
        "is_superuser": user.is_superuser,
        "all_deals_url": _url("deals_deal_changelist"),
        "pipelines": [_pipeline(a, p) for a, p in selectors.account_pipelines(accounts=accounts)],
        "owned": _panel(selectors.deals_owned(accounts=accounts, user=user), owned,
                        _url("deals_deal_changelist")),
        "waiting": _panel(selectors.placements_waiting(accounts=accounts, now=now), placement,
                          f"{placements}?status__exact=sent"),
        # Emailed and silent, per account: opened the package and no answer, or not opened (deals.outreach.chase).
        "chasing": [{"account": row["account"].name, "opened": row["opened"], "not_opened": row["not_opened"],
                     "opened_url": f'{_url("deals_outreach_chase", "opened")}?account={row["account"].pk}',
                     "not_opened_url": f'{_url("deals_outreach_chase", "not_opened")}?account={row["account"].pk}'}
                    for row in chase.chase_counts(accounts=accounts)],
        "quotes": _panel(selectors.quotes_received(accounts=accounts, now=now), quote, termsheets),
        "expiring": _panel(selectors.term_sheets_expiring(accounts=accounts, today=today), quote, termsheets),
        "searches": _panel(selectors.searches_running(accounts=accounts), search,
                           _url("deals_lendersearch_changelist")),
        "waiting_days": limits.HOME_WAITING_DAYS,
        "expiring_days": limits.HOME_EXPIRING_DAYS,
        "quotes_days": limits.HOME_QUOTES_DAYS,
    }
