"""The lender ranking engine.

* `criteria` — what a deal asks for (`DealCriteria`), captured from the deal when a search starts;
* `filters` — the hard filters, run in SQL;
* `scoring` — pure fit and activity scoring functions (no database), the reference formulas;
* `sql_scoring` — the same formulas as database expressions: every candidate scored in one
  statement that returns the top N lenders and the count of all eligible ones;
* `insights` — the short reasons shown with each stored match;
* `runner` — one ranking run: score in SQL, describe the top N, write them in chunks.
"""

from deals.searches.ranking.criteria import DealCriteria, criteria_from_deal, missing_for_search

__all__ = ["DealCriteria", "criteria_from_deal", "missing_for_search"]
