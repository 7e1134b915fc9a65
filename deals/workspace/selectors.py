"""Reads of the home page, kept to the accounts given (the accounts the person is a member of) and to
their active deals (deals.pipeline.models.active_deals: not archived, in an open stage — a closed or
dead deal is no one's work today). Each list is a page of at most `limits.HOME_PANEL_ROWS` rows with its total, so
the page reads a bounded number of rows in a bounded number of queries whatever the number of deals
(two per list, one per account for the pipeline)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from deals.models import Deal
from deals.pipeline.models import active_deals
from deals.pipeline.selectors import Pipeline, pipeline_get
from deals.placements.models import Placement
from deals.placements.selectors import live_term_sheets
from deals.placements.workflow import STATES
from deals.searches.models import LenderSearch
from lev import limits
from lev.accounts.models import Account

# A quote still in play: its placement has not been declined, lost or filed away.
IN_PLAY = tuple(value for value, state in STATES.items() if state.open or value == "won")


@dataclass(frozen=True)
class Rows:
    rows: list[Any]  # at most limits.HOME_PANEL_ROWS
    total: int

    @property
    def more(self) -> int:
        return self.total - len(self.rows)


def _page(queryset: QuerySet) -> Rows:
    rows = list(queryset[: limits.HOME_PANEL_ROWS])
    total = len(rows) if len(rows) < limits.HOME_PANEL_ROWS else queryset.order_by().count()
    return Rows(rows, total)


def home_accounts(*, user) -> list[Account]:
    """The accounts the person is a member of, by name (a superuser's too: the home page is a team's)."""
    return list(Account.objects.filter(memberships__user=user).order_by("name", "pk"))


def account_pipelines(*, accounts: Sequence[Account]) -> list[tuple[Account, Pipeline]]:
    """Each account's stages with their deals counted and totalled, and its active deals' totals
    (pipeline_get: one query each)."""
    return [(account, pipeline_get(account=account)) for account in accounts]


def deals_owned(*, accounts: Sequence[Account], user) -> Rows:
    """The person's own active deals, the latest changed first."""
    return _page(Deal.objects.active().filter(account__in=accounts, owner=user)
                 .select_related("stage").order_by("-updated_at", "-pk"))


def placements_waiting(*, accounts: Sequence[Account], now: dt.datetime) -> Rows:
    """Placements sent at least HOME_WAITING_DAYS ago that the lender has not answered, longest first."""
    sent_before = now - dt.timedelta(days=limits.HOME_WAITING_DAYS)
    return _page(Placement.objects.filter(active_deals("deal__"), deal__account__in=accounts,
                                          status=Placement.Status.SENT, first_response_at=None,
                                          sent_at__lte=sent_before)
                 .select_related("deal", "lender").order_by("sent_at", "pk"))


def quotes_received(*, accounts: Sequence[Account], now: dt.datetime) -> Rows:
    """Live quotes received in the last HOME_QUOTES_DAYS days, the newest first."""
    since = now - dt.timedelta(days=limits.HOME_QUOTES_DAYS)
    return _page(live_term_sheets().filter(active_deals("deal__"), deal__account__in=accounts, received_at__gte=since)
                 .select_related("deal").order_by("-received_at", "-pk"))


def term_sheets_expiring(*, accounts: Sequence[Account], today: dt.date) -> Rows:
    """Live quotes still in play that expire today or within HOME_EXPIRING_DAYS days, soonest first."""
    until = today + dt.timedelta(days=limits.HOME_EXPIRING_DAYS)
    return _page(live_term_sheets().filter(active_deals("deal__"), deal__account__in=accounts,
                                           placement__status__in=IN_PLAY, expires_on__gte=today,
                                           expires_on__lte=until)
                 .select_related("deal").order_by("expires_on", "pk"))


def searches_running(*, accounts: Sequence[Account]) -> Rows:
    """Lender searches waiting to run or running, the oldest first."""
    return _page(LenderSearch.objects.filter(active_deals("deal__"), account__in=accounts,
                                             status__in=[LenderSearch.Status.PENDING, LenderSearch.Status.RUNNING])
                 .select_related("deal").order_by("created_at", "pk"))
