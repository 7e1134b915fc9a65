"""manage.py refresh_lender_signals: recompute the lender signals the ranking learns from, now."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from deals.searches.ranking.evidence import refresh_lender_signals
from lev.outages import is_dependency_outage


class Command(BaseCommand):
    help = ("Recompute every account's lender signals (quote, decline and no-answer rates by deal feature, "
            "time-decayed) and the pooled ones (3+ accounts) from placements, replacing the stored ones in one "
            "transaction; on failure the previous signals stay in place. The Celery beat task does the same "
            "every LEV_SIGNALS_REFRESH_SECONDS and soon after new outcomes (docs/ranking.md).")

    def handle(self, *args, **options):
        try:
            stats = refresh_lender_signals()
        except Exception as exc:
            if is_dependency_outage(exc):
                raise CommandError("The database is unavailable; the previous signals stay in place. "
                                   "Try again when it answers.") from None
            raise
        self.stdout.write(f"Lender signals refreshed: {stats.placements:,} placements with an outcome, "
                          f"{stats.rows:,} signal rows, in {stats.seconds:.1f} s.")
