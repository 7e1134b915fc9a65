"""The lender ranking engine.

* `criteria` — what a deal asks for (`DealCriteria`), captured from the deal when a search starts;
* `filters` — the hard filters, run in SQL;
* `scoring` — pure fit and activity scoring functions (no database);
* `insights` — the short reasons shown with each match;
* `runner` — one ranking run: fetch candidates, score, write ranked matches in chunks.
"""

from lenders.ranking.criteria import DealCriteria, criteria_from_deal, missing_for_search

__all__ = ["DealCriteria", "criteria_from_deal", "missing_for_search"]
