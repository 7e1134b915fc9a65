"""Ranking correctness on hand-made directories: hard filters, score order, insights, writes."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from deals.models import DealFinancials
from deals.searches import services
from deals.searches.models import LenderMatch, LenderSearch
from deals.searches.ranking import runner
from deals.searches.selectors import lender_match_page
from tests.deals.searches.factories import (
    LenderActivityFactory,
    LenderFactory,
    LenderProgramFactory,
    lender_with,
    make_deal,
)

pytestmark = pytest.mark.django_db


def ranked(search: LenderSearch) -> list[LenderMatch]:
    return list(LenderMatch.objects.filter(search=search).select_related("lender").order_by("rank"))


def line(match: LenderMatch, prefix: str) -> str:
    """The match's insight that starts with `prefix` ("Coverage", "Leverage", ...)."""
    return next(text for text in match.match_insights if text.startswith(prefix + ":"))


def names(search: LenderSearch) -> list[str]:
    return [m.lender.name for m in ranked(search)]


# --- hard filters --------------------------------------------------------------------------------
EXCLUDED = {
    "inactive": {"status": "inactive"},
    "loan below the minimum": {"min_loan_amount": Decimal("10000000.01")},
    "loan above the maximum": {"max_loan_amount": Decimal("9999999.99")},
    "other loan type": {"loan_types": ["construction", "heavy_bridge"]},
    "state not covered": {"sponsor_states": ["FL", "GA"]},
    "other asset type": {"asset_types": ["office", "retail"]},
    "junior position only": {"positions": ["mezzanine", "preferred_equity"]},
}
INCLUDED = {
    "nationwide": {"sponsor_states": []},
    "covers the state": {"sponsor_states": ["OK", "TX"]},
    "open loan range": {"min_loan_amount": None, "max_loan_amount": None},
    "loan exactly at both ends": {"min_loan_amount": Decimal("10000000"), "max_loan_amount": Decimal("10000000")},
    "several loan types": {"loan_types": ["light_bridge", "permanent"]},
}


@pytest.mark.parametrize("reason", EXCLUDED)
def test_each_hard_filter_excludes_what_it_must(account, rank, reason):
    lender_with("Control Bank")
    lender_with("Excluded Bank", **EXCLUDED[reason])
    search = rank(make_deal(account))
    assert search.status == "completed"
    assert names(search) == ["Control Bank"]
    assert search.total_candidates == 1 and search.total_matches == 1


@pytest.mark.parametrize("reason", INCLUDED)
def test_programs_that_pass_every_hard_filter_are_ranked(account, rank, reason):
    lender_with("Included Bank", **INCLUDED[reason])
    assert names(rank(make_deal(account))) == ["Included Bank"]


def test_every_property_must_be_covered_by_state_and_asset_type(account, rank):
    lender_with("Texas Only", sponsor_states=["TX"], asset_types=["multifamily", "retail"])
    lender_with("Multifamily Only", sponsor_states=[], asset_types=["multifamily"])
    lender_with("Both States", sponsor_states=["OK", "TX"], asset_types=["multifamily", "retail"])
    lender_with("Nationwide", sponsor_states=[], asset_types=["industrial", "multifamily", "retail"])
    deal = make_deal(account, states=("TX", "OK"), asset_types=("multifamily", "retail"))
    assert sorted(names(rank(deal))) == ["Both States", "Nationwide"]


def test_a_deal_whose_loan_type_is_tbd_is_not_filtered_by_loan_type(account, rank):
    lender_with("Construction Lender", loan_types=["construction"])
    lender_with("Permanent Lender", loan_types=["permanent"])
    assert sorted(names(rank(make_deal(account, loan_type="tbd")))) == ["Construction Lender", "Permanent Lender"]


def test_no_matching_lender_completes_with_an_empty_list(account, rank):
    lender_with("Office Only", asset_types=["office"])
    search = rank(make_deal(account))
    assert search.status == "completed" and search.progress == 100
    assert search.total_matches == 0 and ranked(search) == []


# --- score order -----------------------------------------------------------------------------------
def test_score_order_follows_how_centrally_the_loan_sits_in_the_range(account, rank):
    # The deal asks for $10M; the log-scale middle of each range is where the fit is best.
    lender_with("Centred", min_loan_amount=Decimal("1000000"), max_loan_amount=Decimal("100000000"))
    lender_with("Off Centre", min_loan_amount=Decimal("4000000"), max_loan_amount=Decimal("100000000"))
    lender_with("At The Edge", min_loan_amount=Decimal("10000000"), max_loan_amount=Decimal("100000000"))
    search = rank(make_deal(account))
    matches = ranked(search)
    assert [m.lender.name for m in matches] == ["Centred", "Off Centre", "At The Edge"]
    assert matches[0].score > matches[1].score > matches[2].score
    assert [m.rank for m in matches] == [1, 2, 3]
    assert all(0 <= m.score <= 100 for m in matches)


def test_leverage_headroom_ranks_the_more_comfortable_program_first(account, rank):
    deal = make_deal(account)
    DealFinancials.objects.create(deal=deal, estimated_value=Decimal("16000000"), in_place_noi=Decimal("1000000"),
                                  interest_rate=Decimal("6"))  # LTV 62.5 %, DSCR 1.39
    lender_with("Tight", max_ltv=Decimal("60"), min_dscr=Decimal("1.45"))
    lender_with("Roomy", max_ltv=Decimal("75"), min_dscr=Decimal("1.15"))
    matches = ranked(rank(deal))
    assert [m.lender.name for m in matches] == ["Roomy", "Tight"]  # over a limit lowers, never excludes
    assert [line(matches[1], "Leverage"), line(matches[1], "Coverage")] == [
        "Leverage: 62.5% LTV, 10% debt yield, over this program's 60% max (scores lower)",
        "Coverage: 1.39x DSCR, below this program's 1.45x min (scores lower)"]
    assert [line(matches[0], "Leverage"), line(matches[0], "Coverage")] == [
        "Leverage: 62.5% LTV, 10% debt yield, within this program's 75% max",
        "Coverage: 1.39x DSCR, above this program's 1.15x min"]


# --- interest-only periods (issue 22) ---------------------------------------------------------------------
def io_deal(account, loan_type: str, interest_only_months: int):
    """$10M at 7.25 % over 25 years with $900,000 of NOI: $867,368.24 a year amortizing (DSCR 1.04),
    $725,000 interest only (DSCR 1.24); debt yield 9 %; no value (LTV not assessed)."""
    deal = make_deal(account, loan_type=loan_type)
    DealFinancials.objects.create(deal=deal, in_place_noi=Decimal("900000"), interest_rate=Decimal("7.25"),
                                  amortization_years=25, interest_only_months=interest_only_months)
    return deal


def test_a_bridge_loan_with_an_interest_only_period_is_scored_on_its_interest_only_coverage(account, rank):
    # The issue: a bridge loan with an IO period was scored as if it amortized, so every lender read
    # "coverage below min". Its lenders underwrite the IO payment; the amortizing figure stays beside it.
    lender_with("Bridge Lender", loan_types=["light_bridge", "permanent"], min_dscr=Decimal("1.20"))
    bridge = ranked(rank(io_deal(account, "light_bridge", 24)))[0]
    assert [line(bridge, "Leverage"), line(bridge, "Coverage")] == [
        "Leverage: 9% debt yield; add the deal's value or price for LTV",
        "Coverage: 1.24x IO DSCR (1.04x amortizing), above this program's 1.20x min"]
    # Without the IO period, the same loan is below the minimum, and scores lower for it.
    amortizing = ranked(rank(io_deal(account, "light_bridge", 0)))[0]
    assert line(amortizing, "Coverage") == "Coverage: 1.04x DSCR, below this program's 1.20x min (scores lower)"
    assert bridge.score > amortizing.score


def test_a_permanent_loan_with_an_interest_only_period_is_scored_amortizing_with_the_io_figure_beside(
        account, rank):
    lender_with("Perm Lender", loan_types=["permanent"], min_dscr=Decimal("1.20"))
    perm = ranked(rank(io_deal(account, "permanent", 24)))[0]
    assert line(perm, "Coverage") == "Coverage: 1.04x amortizing DSCR (1.24x IO), below this program's 1.20x min"
    search = perm.search
    assert (search.criteria["dscr"], search.criteria["dscr_basis"], search.criteria["dscr_interest_only"],
            search.criteria["debt_yield"]) == (1.04, "amortizing", 1.24, 9.0)


def test_capital_source_must_suit_the_business_plan(account, rank):
    lender_with("Debt Fund", capital_source_type="fund")
    lender_with("Balance Sheet Bank", capital_source_type="balance_sheet")
    assert names(rank(make_deal(account, business_plan="stabilized"))) == ["Balance Sheet Bank", "Debt Fund"]
    assert names(rank(make_deal(account, business_plan="value_add"))) == ["Debt Fund", "Balance Sheet Bank"]


def test_one_match_per_lender_with_its_best_programs_first_capped(account, rank, settings):
    settings.LEV_SEARCH_PROGRAMS_PER_MATCH = 3
    lender = LenderFactory(name="Many Programs")
    lows = [Decimal("9000000"), Decimal("1000000"), Decimal("5000000"), Decimal("2000000"), Decimal("8000000")]
    programs = [LenderProgramFactory(lender=lender, min_loan_amount=low, max_loan_amount=Decimal("100000000"),
                                     title=f"P{low}") for low in lows]
    LenderProgramFactory(lender=lender, status="inactive")
    (match,) = ranked(rank(make_deal(account)))
    assert match.program_count == 5
    assert [p["id"] for p in match.programs] == [programs[1].pk, programs[3].pk, programs[2].pk]
    assert match.programs[0] == {
        "id": programs[1].pk, "title": programs[1].title, "loan_types": ["permanent"],
        "min_loan_amount": 1000000, "max_loan_amount": 100000000, "max_ltv": 75.0, "min_dscr": 1.2,
    }
    # What separates lenders first (the sizing; the account's record when there is one), what every row
    # shares last.
    assert match.match_insights[0].startswith("Sizes to ")
    assert [text.split(":")[0] for text in match.match_insights[1:]] == [
        "Coverage", "Leverage", "Capital", "Loan size", "Asset type", "Geography"]


# --- the run itself ---------------------------------------------------------------------------------
def test_large_results_are_written_in_chunks_and_readable_as_partial(account, rank, settings, monkeypatch):
    settings.LEV_SEARCH_WRITE_CHUNK = 2
    for n in range(5):
        lender_with(f"Lender {n}")
    seen = []
    original = runner.write_matches

    def spy(rows):
        original(rows)  # what a reader sees once this chunk's transaction commits
        search = LenderSearch.objects.get(pk=rows[0][0])
        pages = [lender_match_page(search=search, page=n, size=2).ready for n in (1, 2, 3)]
        seen.append((search.status, LenderMatch.objects.filter(search=search).count(), pages))

    monkeypatch.setattr(runner, "write_matches", spy)
    search = rank(make_deal(account))
    assert search.status == "completed" and search.total_matches == 5
    # Partial from the first chunk on; a page is served once all of its ranks are written.
    assert seen == [("partial", 2, [True, False, False]), ("partial", 4, [True, True, False]),
                    ("partial", 5, [True, True, True])]
    assert [m.rank for m in ranked(search)] == [1, 2, 3, 4, 5]


def test_the_ranking_runs_a_fixed_number_of_queries_whatever_the_directory_size(account, rank):
    def queries_for(lenders: int) -> int:
        for n in range(lenders):
            lender = lender_with(f"L{lenders}-{n}").lender
            LenderActivityFactory(lender=lender)
        search, _ = services.lender_search_start(deal=make_deal(account))
        with CaptureQueriesContext(connection) as ctx:
            services.lender_search_run(search_id=search.pk)
        assert LenderSearch.objects.get(pk=search.pk).total_matches >= lenders
        return len(ctx.captured_queries)

    assert queries_for(3) == queries_for(30)
