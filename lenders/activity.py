"""Lender activity signals as data: a lender's activity score in one market, as a Python formula
(`activity_score`, the demo directory's and the tests') and as the same formula over a LenderActivity
row in the database (`activity_score_expression`, the recompute's). The lender page and the admin's
activity list show it (per account); the ranking learns from the placements themselves
(deals.searches.ranking.evidence). The counts come from placements (deals.placements.activity).
"""

from __future__ import annotations

from django.db.models import Case, F, FloatField, Value, When
from django.db.models.functions import Cast, Greatest, Least

# Activity: full marks at these 90-day counts; response time scored from 4 h (best) to 96 h.
QUOTES_FULL = 20.0
CLOSINGS_FULL = 6.0
RESPONSE_BEST_HOURS = 4.0
RESPONSE_WORST_HOURS = 96.0
ACTIVITY_WEIGHTS = {"quotes": 0.35, "closings": 0.40, "response": 0.25}


def activity_score(quotes_90d: int, closings_90d: int, avg_response_hours: float | None) -> float:
    """A lender's activity in one market: recent quotes, closings and how fast it answers."""
    quotes = min(1.0, quotes_90d / QUOTES_FULL)
    closings = min(1.0, closings_90d / CLOSINGS_FULL)
    if avg_response_hours is None:
        response = 0.5
    else:
        span = RESPONSE_WORST_HOURS - RESPONSE_BEST_HOURS
        response = min(1.0, max(0.0, (RESPONSE_WORST_HOURS - avg_response_hours) / span))
    return (ACTIVITY_WEIGHTS["quotes"] * quotes + ACTIVITY_WEIGHTS["closings"] * closings
            + ACTIVITY_WEIGHTS["response"] * response)


def activity_score_expression():
    """`activity_score` as a database expression over a LenderActivity row's counts (the
    activity recompute compiles the same expression for the rows it inserts)."""
    def ratio(name: str, full: float):
        return Least(Cast(name, FloatField()) / Value(full), Value(1.0))

    span = RESPONSE_WORST_HOURS - RESPONSE_BEST_HOURS
    response = Case(
        When(avg_response_hours__isnull=True, then=Value(0.5)),
        default=Greatest(Least((Value(RESPONSE_WORST_HOURS) - F("avg_response_hours")) / Value(span),
                               Value(1.0)), Value(0.0)),
        output_field=FloatField(),
    )
    weights = ACTIVITY_WEIGHTS
    return (Value(weights["quotes"]) * ratio("quotes_90d", QUOTES_FULL)
            + Value(weights["closings"]) * ratio("closings_90d", CLOSINGS_FULL)
            + Value(weights["response"]) * response)
