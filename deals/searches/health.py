"""What lender searches tell /health (lev.health): how many wait for a worker. Registered by DealsConfig.ready()."""

from __future__ import annotations

from deals.searches.selectors import lender_searches_pending_stale
from deals.searches.signals import freshness
from lev.health import register_database_read


def _stale(counts: dict[str, int] | None) -> bool:
    return bool(counts) and counts.get("pending_stale", 0) > 0


def register() -> None:
    """{"lender_searches": {"pending_stale": N, "not_queued": M} | null} on /health; any search pending
    past LEV_SEARCH_PENDING_WARN_SECONDS makes the site degraded."""
    register_database_read("lender_searches", lender_searches_pending_stale, degraded_when=_stale)
    # {"lender_signals": {"status": fresh|stale|failed|never, "refreshed_at", "age_seconds", "last_failure"}}:
    # a search still ranks on the previous signals, so their age informs operators without degrading the site.
    register_database_read("lender_signals", freshness)
