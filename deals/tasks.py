"""The deals app's Celery tasks. Celery's autodiscovery imports each installed app's `tasks` module;
the rooms' tasks live beside their services and are made known here."""

from deals.history.tasks import run_history_import, sweep_history_imports
from deals.outreach.imap import poll_inbound_mailbox
from deals.outreach.tasks import deliver_due_outreach, deliver_outreach
from deals.placements.tasks import refresh_lender_activity
from deals.searches.tasks import (
    purge_superseded_matches,
    refresh_lender_signals,
    run_lender_search,
    sweep_stale_searches,
)

__all__ = ["deliver_due_outreach", "deliver_outreach", "poll_inbound_mailbox", "purge_superseded_matches",
           "refresh_lender_activity", "refresh_lender_signals", "run_history_import", "run_lender_search",
           "sweep_history_imports", "sweep_stale_searches"]
